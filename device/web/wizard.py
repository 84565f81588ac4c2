"""The calibration wizard's work, step by step: the live view (``camera.FrameFeed``), the wait for a still table,
the automatic calibration of that still, and saving the calibration from four corners a person checked or dragged,
with the table preset and the end that is the bottom.

The camera is given when the app starts, never by a request; everything written goes into the app's data folder
under fixed names. The calibrations are made by ``arbitro calibrate`` itself, in a child process (see
``calibrate``), so the wizard and the command cannot drift apart.

Which end is the bottom (DESIGN.md section 2: the starting line, the baulk, the head end, the *cabaña de salida*)
has no field of its own in the calibration file: it is the order of ``corners_px`` (bottom-left, bottom-right,
top-right, top-left), which fixes the table frame's y = 0 and so the pose. The page's "swap ends" turns the corner
order by two; what is saved is the order the person last saw.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

from rules.balls import CAROM_DISCIPLINES, DISCIPLINES
from rules.errors import LogError
from rules.tables import DEFAULT_PRESET, PRESETS

from .camera import FrameFeed, SourceFeeder, StillWatch

CALIB_FILE = "table.calib.json"  # what the wizard saves, for ``arbitro run`` (which reloads it)
AUTO_FILE = "wizard_auto.calib.json"  # the automatic result, kept apart until a person saves
STILL_FILE = "wizard_still.png"  # the still the calibrations are made from
OVERLAY_FILE = "wizard_overlay.png"

# What the bottom end is called, per discipline (DESIGN.md section 2), for the page's label.
BOTTOM_END = {**{d: "starting line" for d in CAROM_DISCIPLINES}, "sinuca": "baulk (the D)",
              "bilhar": "head end (cue-ball mark)", "chapo": "cabaña de salida"}


class WizardError(ValueError):
    """What to tell the page in one line."""


def _args(source: str, out: Path, *, table: str | None, lens: str | None, corners: str | None = None,
          overlay: Path | None = None) -> argparse.Namespace:
    # The same namespace ``arbitro calibrate`` parses (tests compare the wizard with the command through it).
    return argparse.Namespace(source=source, out=str(out), table=table, discipline=None, lens=lens,
                              intrinsics=None, corners=corners, overlay=None if overlay is None else str(overlay),
                              frames=9)


CALIBRATE_TIMEOUT_S = 120.0


def calibrate(source: Path, out: Path, *, table: str | None, lens: str | None, corners: str | None = None,
              overlay: Path | None = None) -> dict[str, Any]:
    """``arbitro calibrate`` in a process of its own; its JSON result, or WizardError with its one-line message.

    Not in-process: the calibration of a full-size still peaks at over 100 MB and the allocator keeps most of it
    (bench_web measured +87 MiB staying after one), far over the web app's budget on top of the live loop; a
    child gives it all back when it exits, and its crash cannot take the referee down.
    """
    import device

    argv = [sys.executable, "-m", "device.calibrate_command", "calibrate", str(source), "--out", str(out)]
    if table:
        argv += ["--table", table]
    if lens:
        argv += ["--lens", lens]
    if corners:
        argv.append(f"--corners={corners}")  # with "=": a negative first number is not read as an option
    if overlay is not None:
        argv += ["--overlay", str(overlay)]
    env = dict(os.environ)
    root = str(Path(device.__file__).resolve().parents[1])  # the child imports this very arbitro
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=CALIBRATE_TIMEOUT_S, env=env)
    except subprocess.TimeoutExpired:
        raise WizardError(f"the calibration took over {CALIBRATE_TIMEOUT_S:.0f} s") from None
    if proc.returncode != 0:
        lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
        message = lines[-1] if lines else f"the calibration failed (exit {proc.returncode})"
        raise WizardError(message.removeprefix("arbitro calibrate: ").removeprefix("arbitro: "))
    try:
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise WizardError("the calibration gave no result") from None


class Wizard:
    """One table's wizard. Phases: ``live`` (the camera view only), ``waiting`` (for the view to stay still),
    ``calibrating`` (the automatic calibration of the still runs), ``ready`` (its result, found or not, is there).

    ``on_saved(path) -> str`` is told of every saved calibration (``arbitro run`` reloads it) and its answer is
    shown to the person; an exception from it is shown as the reason the live loop did not take it.
    """

    def __init__(self, feed: FrameFeed, data_dir: Path, *, table: str | None = None,
                 discipline: str | None = None, lens: str | None = None, feeder: SourceFeeder | None = None,
                 watch: StillWatch | None = None, poll: float = 0.05) -> None:
        if table is not None and table not in PRESETS:
            raise WizardError(f"--table {table}: unknown preset (known: {', '.join(PRESETS)})")
        if discipline is not None and discipline not in DISCIPLINES:
            raise WizardError(f"{discipline}: unknown discipline")
        self.feed, self.data_dir, self.lens, self.feeder = feed, Path(data_dir), lens, feeder
        self.table, self.discipline = table, discipline
        self.watch = watch or StillWatch()
        self.poll = poll
        self.on_saved: Callable[[Path], str] | None = None
        self._lock = threading.Lock()  # guards the fields below
        self._calibrating = threading.Lock()  # one calibration at a time: each takes a core for a second or two
        self._phase = "live"
        self._token = 0  # which still wait is current; an older watcher thread sees it changed and ends
        self._error: str | None = None
        self._auto: dict[str, Any] | None = None
        self._size: tuple[int, int] | None = None
        self._closed = threading.Event()

    @classmethod
    def from_source(cls, source: str, data_dir: Path, **kwargs: Any) -> "Wizard":
        """A wizard with a camera of its own: ``arbitro web --source`` (a picture, a video file, a camera spec)."""
        feed = FrameFeed()
        return cls(feed, data_dir, feeder=SourceFeeder(source, feed).start(), **kwargs)

    def close(self) -> None:
        self._closed.set()
        with self._lock:
            self._token += 1
        if self.feeder is not None:
            self.feeder.close()

    # --- the still ------------------------------------------------------------------------------------------------

    def begin_still(self) -> dict[str, Any]:
        """Start waiting for the view to stay still; the still is taken, and calibrated, when it has."""
        with self._lock:
            if self._phase == "calibrating":
                raise WizardError("the last still is being calibrated; wait a moment")
            self._token += 1
            token = self._token
            self._phase, self._error, self._auto = "waiting", None, None
            self.watch.reset()
        if self.feeder is not None:
            self.feeder.restart()  # a video file plays again from its start: every wait sees the same footage
        threading.Thread(target=self._wait_still, args=(token,), name="arbitro-wizard-still", daemon=True).start()
        return self.status()

    def _current(self, token: int) -> bool:
        with self._lock:
            return token == self._token and not self._closed.is_set()

    def _wait_still(self, token: int) -> None:
        seen = -1
        while self._current(token):
            got = self.feed.latest()
            if got is None or got[0] == seen:
                self._closed.wait(self.poll)
                continue
            seen, image, t = got
            if self.watch.update(image, t).still:
                self._take(image, token)
                return
            self._closed.wait(self.poll)

    def _take(self, image: Any, token: int) -> None:
        import cv2

        with self._calibrating:
            with self._lock:
                if token != self._token:
                    return
                self._phase = "calibrating"
            still = self.data_dir / STILL_FILE
            self.data_dir.mkdir(parents=True, exist_ok=True)
            if not cv2.imwrite(str(still), image):
                auto: dict[str, Any] = {"found": False, "error": "the still cannot be written", "corners_px": None}
            else:
                try:
                    result = calibrate(still, self.data_dir / AUTO_FILE, table=self._default_table(),
                                       lens=self.lens, overlay=self.data_dir / OVERLAY_FILE)
                    auto = {"found": True, **_public(result)}
                except WizardError as exc:
                    auto = {"found": False, "error": str(exc), "corners_px": None}
            with self._lock:
                if token == self._token:
                    self._size = (int(image.shape[1]), int(image.shape[0]))
                    self._auto, self._phase = auto, "ready"

    def _default_table(self) -> str | None:
        """The preset to calibrate with: --table, else the discipline's; None lets the view tell it."""
        return self.table or (DEFAULT_PRESET.get(self.discipline) if self.discipline else None)

    # --- what the page reads --------------------------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        state = self.watch.state
        size = self.feed.size
        with self._lock:
            result = None if self._auto is None or self._size is None else {
                "width": self._size[0], "height": self._size[1], **self._auto}
            return {
                "phase": self._phase,
                "moving": state.moving, "still_for": state.still_for, "hold": self.watch.hold_s,
                "camera": None if size is None else {"width": size[0], "height": size[1]},
                "camera_error": self.feed.error,
                "error": self._error,
                "result": result,
                "defaults": {"table": self._default_table(), "discipline": self.discipline},
                "options": {"tables": list(PRESETS), "disciplines": dict(DEFAULT_PRESET), "bottom": BOTTOM_END},
            }

    def still_png(self) -> bytes | None:
        path = self.data_dir / STILL_FILE
        with self._lock:
            ready = self._phase == "ready"
        return path.read_bytes() if ready and path.is_file() else None

    def overlay_png(self) -> bytes | None:
        path = self.data_dir / OVERLAY_FILE
        with self._lock:
            ready = self._phase == "ready"
        return path.read_bytes() if ready and path.is_file() else None

    # --- saving ---------------------------------------------------------------------------------------------------

    def save(self, body: Any) -> dict[str, Any]:
        """Calibrate the still from the four corners given (bottom-left, bottom-right, top-right, top-left: the
        order says which end is the bottom) on the chosen table preset, and save the calibration file."""
        if not isinstance(body, dict):
            raise LogError("wizard", None, 'must be a JSON object like {"corners": [...], "table": "carom_match"}')
        unknown = sorted(set(body) - {"corners", "table", "discipline"})
        if unknown:
            raise LogError("wizard", unknown[0], "not a field of a saved calibration (corners, table, discipline)")
        corners = body.get("corners")
        if not (isinstance(corners, list) and len(corners) == 4 and all(
                isinstance(c, list) and len(c) == 2 and all(
                    isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in c)
                for c in corners)):
            raise LogError("wizard", "corners", "four [x, y] pixel pairs: bottom-left, bottom-right, top-right, "
                           "top-left")
        discipline = body.get("discipline")
        if discipline is not None and discipline not in DISCIPLINES:
            raise LogError("wizard", "discipline", f"{discipline!r} is not a discipline ({', '.join(DISCIPLINES)})")
        with self._lock:
            auto, size, phase = self._auto, self._size, self._phase
        if phase != "ready" or size is None:
            raise WizardError("take the still of the empty table first")
        table = body.get("table") or (DEFAULT_PRESET.get(discipline) if discipline else None) or \
            (auto or {}).get("table") or "carom_match"
        if table not in PRESETS:
            raise LogError("wizard", "table", f"{table!r} is not a table preset ({', '.join(PRESETS)})")
        w, h = size
        if not all(-w <= x <= 2 * w and -h <= y <= 2 * h for x, y in corners):
            raise LogError("wizard", "corners", "a corner lies far outside the picture")
        text = ",".join(f"{float(v):.2f}" for c in corners for v in c)
        with self._calibrating:
            result = calibrate(self.data_dir / STILL_FILE, self.data_dir / CALIB_FILE, table=table,
                               lens=self.lens, corners=text, overlay=self.data_dir / OVERLAY_FILE)
        with self._lock:
            self._auto = {"found": True, **_public(result)}
            if discipline:
                self.discipline = discipline  # the next still wait calibrates with its preset
            self.table = table
        answer = {"saved": CALIB_FILE, "discipline": discipline, **_public(result), "live": None}
        if self.on_saved is not None:
            try:
                answer["live"] = self.on_saved(self.data_dir / CALIB_FILE)
            except Exception as exc:  # the file is saved; the page says why the live loop did not take it
                answer["live"] = f"saved, but the live loop did not take it: {exc}"
        return answer


def _public(result: dict[str, Any]) -> dict[str, Any]:
    """The calibration's result without the server's file paths (the page needs no paths)."""
    return {k: result[k] for k in ("table", "corners_px", "quality", "camera_height_mm") if k in result}


def wait_ready(wizard: Wizard, timeout: float = 30.0, poll: float = 0.05) -> dict[str, Any]:
    """The wizard's status once its still is calibrated (for tests and the benchmark); TimeoutError otherwise."""
    deadline = time.monotonic() + timeout
    while True:
        status = wizard.status()
        if status["phase"] == "ready":
            return status
        if time.monotonic() > deadline:
            raise TimeoutError(f"the wizard is still {status['phase']} after {timeout} s")
        time.sleep(poll)
