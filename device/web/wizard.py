"""The calibration wizard's work: a still from the operator's source, the automatic calibration, and saving the
calibration from four corners a person dragged on the page.

The source (a video file, a picture, a camera spec) is given when the app starts, never by a request; everything
written goes into the app's data folder under fixed names.
"""

from __future__ import annotations

import argparse
import math
import threading
from pathlib import Path
from typing import Any

from rules.errors import LogError

CALIB_FILE = "table.calib.json"  # what the wizard saves, for ``arbitro run --calib``
AUTO_FILE = "wizard_auto.calib.json"  # the automatic result, kept apart until a person saves


class WizardError(ValueError):
    """What to tell the page in one line."""


def _args(source: str, out: Path, *, table: str | None, lens: str | None, corners: str | None = None,
          overlay: Path | None = None) -> argparse.Namespace:
    # The same namespace ``arbitro calibrate`` parses, so the wizard and the command cannot drift apart.
    return argparse.Namespace(source=source, out=str(out), table=table, discipline=None, lens=lens,
                              intrinsics=None, corners=corners, overlay=None if overlay is None else str(overlay),
                              frames=9)


class Wizard:
    def __init__(self, source: str, data_dir: Path, *, table: str | None = None, lens: str | None = None) -> None:
        self.source, self.data_dir, self.table, self.lens = source, Path(data_dir), table, lens
        self._lock = threading.Lock()  # one calibration at a time: each takes a core for a second or two
        self._still: bytes | None = None
        self._size: tuple[int, int] | None = None
        self._auto: dict[str, Any] | None = None

    def still_png(self) -> bytes:
        import cv2

        from ..calibrate_command import CalibrateError, read_view

        with self._lock:
            if self._still is None:
                try:
                    img = read_view(self.source)
                except CalibrateError as exc:
                    raise WizardError(str(exc)) from None
                ok, buf = cv2.imencode(".png", img)
                if not ok:
                    raise WizardError("the still cannot be encoded")
                self._still, self._size = buf.tobytes(), (int(img.shape[1]), int(img.shape[0]))
            return self._still

    def overlay_png(self) -> bytes | None:
        path = self.data_dir / "wizard_overlay.png"
        return path.read_bytes() if path.is_file() else None

    def auto(self) -> dict[str, Any]:
        """The automatic calibration (run once, then remembered): corners in pixels, the table, the quality."""
        from ..calibrate_command import CalibrateError, run_calibrate

        self.still_png()
        with self._lock:
            if self._auto is None:
                try:
                    result = run_calibrate(_args(self.source, self.data_dir / AUTO_FILE, table=self.table,
                                                 lens=self.lens, overlay=self.data_dir / "wizard_overlay.png"))
                    self._auto = {"found": True, **_public(result)}
                except CalibrateError as exc:
                    self._auto = {"found": False, "error": str(exc), "corners_px": None}
            assert self._size is not None
            return {"width": self._size[0], "height": self._size[1], **self._auto}

    def save(self, body: Any) -> dict[str, Any]:
        """Calibrate from the four corners given (bottom-left, bottom-right, top-right, top-left) and save."""
        from ..calibrate_command import CalibrateError, run_calibrate

        corners = body.get("corners") if isinstance(body, dict) else None
        if not (isinstance(corners, list) and len(corners) == 4 and all(
                isinstance(c, list) and len(c) == 2 and all(
                    isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in c)
                for c in corners)):
            raise LogError("wizard", "corners", "four [x, y] pixel pairs: bottom-left, bottom-right, top-right, "
                           "top-left")
        self.still_png()
        assert self._size is not None
        w, h = self._size
        if not all(-w <= x <= 2 * w and -h <= y <= 2 * h for x, y in corners):
            raise LogError("wizard", "corners", "a corner lies far outside the picture")
        text = ",".join(f"{float(v):.2f}" for c in corners for v in c)
        table = self.table or (self._auto or {}).get("table") or "carom_match"
        with self._lock:
            try:
                result = run_calibrate(_args(self.source, self.data_dir / CALIB_FILE, table=table, lens=self.lens,
                                             corners=text, overlay=self.data_dir / "wizard_overlay.png"))
            except CalibrateError as exc:
                raise WizardError(str(exc)) from None
            self._auto = {"found": True, **_public(result)}
        return {"saved": CALIB_FILE, **_public(result)}


def _public(result: dict[str, Any]) -> dict[str, Any]:
    """The calibration's result without the server's file paths (the page needs no paths)."""
    return {k: result[k] for k in ("table", "corners_px", "quality", "camera_height_mm") if k in result}
