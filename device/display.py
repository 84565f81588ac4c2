"""Where the scoreboard goes: the Linux framebuffer, a desktop window, a PNG file, or nowhere.

    fb[:/dev/fbN]    the framebuffer (a Pi's HDMI or DSI panel without a desktop), 16-bit RGB565 or 32-bit
    window           a tkinter window, where a desktop exists (opencv-python-headless has no imshow)
    png:PATH         the latest board as a PNG file, replaced atomically (a web page can serve it)
    none             no display

Every sink is a context manager with ``show(image)`` taking a BGR image; ``size`` is the size it wants drawn
(the framebuffer's own), or None to take the configured one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol

import cv2
import numpy as np


class DisplayError(RuntimeError):
    """A display that cannot be used; the message is one line."""


class DisplaySink(Protocol):
    size: tuple[int, int] | None

    def __enter__(self) -> "DisplaySink": ...

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None: ...

    def show(self, image: np.ndarray) -> None: ...


class _Sink:
    size: tuple[int, int] | None = None

    def __enter__(self) -> "_Sink":
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        pass


class NullSink(_Sink):
    def show(self, image: np.ndarray) -> None:
        pass


class PngSink(_Sink):
    """The latest board in one PNG, written to a temporary file and renamed so no reader sees half of it."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not self.path.parent.is_dir():
            raise DisplayError(f"png:{path}: no such folder {self.path.parent}")
        self.frames = 0

    def show(self, image: np.ndarray) -> None:
        ok, data = cv2.imencode(".png", image)
        if not ok:
            raise DisplayError(f"png:{self.path}: cannot encode the image")
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_bytes(data.tobytes())
        os.replace(tmp, self.path)
        self.frames += 1


# --- the framebuffer --------------------------------------------------------------------------------------------

def _read(sysfs: Path, name: str) -> str | None:
    try:
        return (sysfs / name).read_text().strip()
    except OSError:
        return None


@dataclass(frozen=True)
class FramebufferInfo:
    width: int
    height: int
    bits_per_pixel: int
    stride: int  # bytes per line (may exceed width * bytes per pixel)

    @classmethod
    def from_sysfs(cls, sysfs: Path, label: str) -> "FramebufferInfo":
        virtual = _read(sysfs, "virtual_size")
        bpp = _read(sysfs, "bits_per_pixel")
        if virtual is None or bpp is None:
            raise DisplayError(f"{label}: no framebuffer information in {sysfs}")
        try:
            width, height = (int(v) for v in virtual.split(","))
            bits = int(bpp)
        except ValueError:
            raise DisplayError(f"{label}: cannot read the framebuffer size {virtual!r} / depth {bpp!r}") from None
        # virtual_size may be taller than the screen (double buffering): the mode says what is visible.
        mode = (_read(sysfs, "modes") or "").splitlines()
        if mode and ":" in mode[0]:
            try:
                w, h = mode[0].split(":", 1)[1].split("p")[0].split("i")[0].split("x")
                width, height = int(w), int(h)
            except ValueError:
                pass
        if bits not in (16, 32):
            raise DisplayError(f"{label}: {bits}-bit framebuffers are not supported (16 or 32)")
        stride_text = _read(sysfs, "stride")
        stride = int(stride_text) if stride_text and stride_text.isdigit() else width * bits // 8
        return cls(width, height, bits, stride)


def to_rgb565(image: np.ndarray) -> np.ndarray:
    """BGR to little-endian RGB565: 5 bits red, 6 green, 5 blue."""
    b = image[:, :, 0].astype(np.uint16)
    g = image[:, :, 1].astype(np.uint16)
    r = image[:, :, 2].astype(np.uint16)
    return ((r >> 3) << 11) | ((g >> 2) << 5) | (b >> 3)


class FramebufferSink(_Sink):
    """Writes into ``/dev/fbN`` through a memory map; size and depth from ``/sys/class/graphics/fbN``."""

    def __init__(self, device: str | Path = "/dev/fb0", sysfs: str | Path | None = None) -> None:
        self.device = Path(device)
        self.sysfs = Path(sysfs) if sysfs is not None else Path("/sys/class/graphics") / self.device.name
        self.info = FramebufferInfo.from_sysfs(self.sysfs, f"fb:{device}")
        self.size = (self.info.width, self.info.height)
        self._map: np.memmap | None = None

    def __enter__(self) -> "FramebufferSink":
        need = self.info.stride * self.info.height
        try:
            if os.path.getsize(self.device) < need and not self.device.is_char_device():
                raise DisplayError(f"fb:{self.device}: smaller than the {need} bytes the framebuffer needs")
            self._map = np.memmap(self.device, dtype=np.uint8, mode="r+", shape=(self.info.height, self.info.stride))
        except OSError as exc:
            raise DisplayError(f"fb:{self.device}: cannot open ({exc.strerror or exc})") from None
        return self

    def close(self) -> None:
        if self._map is not None:
            self._map.flush()
            self._map = None

    def show(self, image: np.ndarray) -> None:
        if self._map is None:
            raise DisplayError(f"fb:{self.device}: show before the framebuffer was opened")
        w, h = self.size
        if image.shape[1] != w or image.shape[0] != h:
            image = cv2.resize(image, (w, h), interpolation=cv2.INTER_AREA)
        if self.info.bits_per_pixel == 16:
            pixels = to_rgb565(image).astype("<u2").view(np.uint8).reshape(h, w * 2)
        else:
            # 32-bit framebuffers are XRGB8888: in memory B, G, R, X, which is OpenCV's BGRA.
            pixels = cv2.cvtColor(image, cv2.COLOR_BGR2BGRA).reshape(h, w * 4)
        self._map[:, : pixels.shape[1]] = pixels


# --- a desktop window -------------------------------------------------------------------------------------------

def window_available() -> bool:
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        return False
    try:
        import tkinter  # noqa: F401  (absent on some minimal Pythons)
    except ImportError:
        return False
    return True


class WindowSink(_Sink):
    """A tkinter window, created by the thread that first shows an image (Tk lives on one thread)."""

    def __init__(self, title: str = "arbitro") -> None:
        if not window_available():
            raise DisplayError("window: no desktop here (DISPLAY is not set); use --display fb, png:PATH or none")
        self.title = title
        self._root: Any = None
        self._label: Any = None
        self._photo: Any = None

    def show(self, image: np.ndarray) -> None:
        import tkinter

        if self._root is None:
            self._root = tkinter.Tk()
            self._root.title(self.title)
            self._label = tkinter.Label(self._root, borderwidth=0)
            self._label.pack()
        rgb = cv2.cvtColor(image, cv2.COLOR_BGR2RGB)
        h, w = rgb.shape[:2]
        ppm = f"P6 {w} {h} 255 ".encode() + rgb.tobytes()  # Tk reads PPM natively: no Pillow needed
        self._photo = tkinter.PhotoImage(data=ppm, format="PPM")
        self._label.configure(image=self._photo)
        self._root.update()

    def close(self) -> None:
        if self._root is not None:
            try:
                self._root.destroy()
            except Exception:  # the user may have closed the window already
                pass
            self._root = None


# --- the --display spec -----------------------------------------------------------------------------------------

def parse_display_spec(spec: str) -> tuple[str, str | None]:
    """``(kind, argument)`` of a ``--display`` value, checked without opening anything."""
    text = spec.strip()
    if text in ("none", "window", "fb"):
        return text, None
    if text.startswith("fb:") and len(text) > 3:
        return "fb", text[3:]
    if text.startswith("png:") and len(text) > 4:
        return "png", text[4:]
    raise DisplayError(f"--display {spec!r}: not a display (fb, fb:/dev/fbN, window, png:PATH, none)")


def open_display(spec: str, *, framebuffer: str = "/dev/fb0") -> DisplaySink:
    """The sink a ``--display`` value names (not yet entered)."""
    kind, arg = parse_display_spec(spec)
    if kind == "none":
        return NullSink()
    if kind == "fb":
        return FramebufferSink(arg or framebuffer)
    if kind == "window":
        return WindowSink()
    return PngSink(str(arg))
