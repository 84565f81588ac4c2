"""Display sinks: the framebuffer on a temp file standing in for /dev/fb0, PNG, window, and the spec."""

from __future__ import annotations

import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from device.display import (
    DisplayError, FramebufferSink, NullSink, PngSink, WindowSink, open_display, to_rgb565, window_available,
)


def fake_fb(tmp_path: Path, width: int, height: int, bpp: int, stride: int | None = None,
            modes: str | None = None, virtual: tuple[int, int] | None = None) -> tuple[Path, Path]:
    sysfs = tmp_path / "sys_fb0"
    sysfs.mkdir()
    vw, vh = virtual or (width, height)
    (sysfs / "virtual_size").write_text(f"{vw},{vh}\n")
    (sysfs / "bits_per_pixel").write_text(f"{bpp}\n")
    stride = stride or width * bpp // 8
    (sysfs / "stride").write_text(f"{stride}\n")
    if modes:
        (sysfs / "modes").write_text(modes + "\n")
    dev = tmp_path / "fb0"
    dev.write_bytes(b"\x11" * (stride * vh))
    return dev, sysfs


def solid(w: int, h: int, bgr: tuple[int, int, int]) -> np.ndarray:
    return np.full((h, w, 3), bgr, np.uint8)


def test_rgb565_packs_five_six_five_bits() -> None:
    px = np.array([[[0, 0, 255], [0, 255, 0], [255, 0, 0], [255, 255, 255]]], np.uint8)  # red, green, blue, white
    assert to_rgb565(px).tolist() == [[0xF800, 0x07E0, 0x001F, 0xFFFF]]


def test_16_bit_framebuffer_gets_little_endian_rgb565(tmp_path: Path) -> None:
    dev, sysfs = fake_fb(tmp_path, 8, 4, 16)
    with FramebufferSink(dev, sysfs) as fb:
        assert fb.size == (8, 4)
        fb.show(solid(8, 4, (0, 0, 255)))
    data = np.fromfile(dev, np.uint8).reshape(4, 16)
    assert (data[:, 0::2] == 0x00).all() and (data[:, 1::2] == 0xF8).all()


def test_32_bit_framebuffer_gets_bgrx_and_padding_is_left_alone(tmp_path: Path) -> None:
    dev, sysfs = fake_fb(tmp_path, 4, 3, 32, stride=20)  # 4 bytes of padding per line
    with FramebufferSink(dev, sysfs) as fb:
        fb.show(solid(4, 3, (10, 20, 30)))
    data = np.fromfile(dev, np.uint8).reshape(3, 20)
    assert data[:, :16].reshape(3, 4, 4).tolist() == [[[10, 20, 30, 255]] * 4] * 3
    assert (data[:, 16:] == 0x11).all()


def test_a_board_of_another_size_is_scaled_to_the_framebuffer(tmp_path: Path) -> None:
    dev, sysfs = fake_fb(tmp_path, 10, 6, 32)
    with FramebufferSink(dev, sysfs) as fb:
        fb.show(solid(800, 480, (0, 255, 0)))
    data = np.fromfile(dev, np.uint8).reshape(6, 10, 4)
    assert (data[..., :3] == [0, 255, 0]).all()


def test_the_visible_mode_wins_over_a_double_buffered_virtual_size(tmp_path: Path) -> None:
    dev, sysfs = fake_fb(tmp_path, 8, 4, 16, modes="U:8x4p-60", virtual=(8, 8))
    fb = FramebufferSink(dev, sysfs)
    assert fb.size == (8, 4)


@pytest.mark.parametrize("bpp, message", [(24, "24-bit framebuffers are not supported"), (None, "no framebuffer")])
def test_unusable_framebuffers_are_one_line(tmp_path: Path, bpp: int | None, message: str) -> None:
    if bpp is None:
        with pytest.raises(DisplayError, match=message):
            FramebufferSink(tmp_path / "fb9", tmp_path / "nothing")
        return
    dev, sysfs = fake_fb(tmp_path, 8, 4, bpp)
    with pytest.raises(DisplayError, match=message):
        FramebufferSink(dev, sysfs)


def test_png_sink_replaces_the_file_atomically(tmp_path: Path) -> None:
    path = tmp_path / "board.png"
    img = np.random.default_rng(1).integers(0, 255, (48, 80, 3), np.uint8)
    with PngSink(path) as sink:
        sink.show(solid(80, 48, (1, 2, 3)))
        sink.show(img)
    assert np.array_equal(cv2.imread(str(path)), img)
    assert [p.name for p in tmp_path.iterdir()] == ["board.png"]
    with pytest.raises(DisplayError, match="no such folder"):
        PngSink(tmp_path / "missing" / "board.png")


def test_window_without_a_desktop_is_one_clear_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert not window_available()
    with pytest.raises(DisplayError, match="no desktop here"):
        WindowSink()


@pytest.mark.skipif(not window_available(), reason="no desktop (DISPLAY) on this machine")
def test_window_shows_a_board() -> None:
    with WindowSink() as w:
        w.show(solid(80, 48, (0, 0, 255)))


def test_display_specs(tmp_path: Path) -> None:
    assert isinstance(open_display("none"), NullSink)
    assert isinstance(open_display(f"png:{tmp_path / 'b.png'}"), PngSink)
    dev, sysfs = fake_fb(tmp_path, 8, 4, 16)
    with pytest.raises(DisplayError, match="no framebuffer information"):
        open_display(f"fb:{dev}")  # its sysfs would be /sys/class/graphics/fb0 of this machine: absent or real
    for bad in ("hdmi", "png:", "fb0"):
        with pytest.raises(DisplayError, match="not a display"):
            open_display(bad)


def test_window_sink_hands_tk_a_ppm_of_the_board(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a desktop here, a stand-in tkinter checks what the sink asks of Tk."""
    import types
    made: dict[str, object] = {}

    class Tk:
        def title(self, t: str) -> None:
            made["title"] = t

        def update(self) -> None:
            made["updates"] = int(made.get("updates", 0)) + 1

        def destroy(self) -> None:
            made["destroyed"] = True

    class Label:
        def __init__(self, root: object, borderwidth: int) -> None:
            pass

        def pack(self) -> None:
            pass

        def configure(self, image: object) -> None:
            made["image"] = image

    def PhotoImage(data: bytes, format: str) -> bytes:
        made["format"] = format
        return data

    fake = types.SimpleNamespace(Tk=Tk, Label=Label, PhotoImage=PhotoImage)
    monkeypatch.setitem(sys.modules, "tkinter", fake)
    monkeypatch.setenv("DISPLAY", ":0")
    with WindowSink("board") as w:
        w.show(solid(4, 2, (255, 0, 0)))  # blue, in BGR
    header = b"P6 4 2 255 "
    assert made["format"] == "PPM" and made["image"][:len(header)] == header
    assert made["image"][len(header):] == bytes([0, 0, 255] * 8)  # RGB order for Tk
    assert made["title"] == "board" and made["updates"] == 1 and made["destroyed"] is True
