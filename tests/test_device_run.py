"""``arbitro run``: one clear line for every bad input, the vision pipeline's absence said plainly, and, with a
scripted processor standing in for vision, the whole wiring on a real clip: store, display, figures."""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from calibration.camera import CameraModel
from calibration.file import Calibration, read_calibration, write_calibration
from rules.log import read_log
from rules.registry import referee_for
from rules.tables import preset
from device import run_command as rc
from device.sources import Frame
from device.store import MatchStore

ROOT = Path(__file__).parents[1]
LINES = (ROOT / "fixtures" / "logs" / "three_cushion_demo.jsonl").read_text().splitlines()
SHOTS = [r for _, r in read_log(LINES, "three_cushion", referee_for("three_cushion").table)]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="arbitro")
    rc.add_run_parser(p.add_subparsers(dest="command", required=True))
    return p


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    table = preset("carom_match")
    cam = CameraModel.overhead(table, (64, 48))
    corners = cam.table_to_image([[0, 0], [table.width, 0], [table.width, table.length], [0, table.length]])
    calib = tmp_path / "table.calib.json"
    write_calibration(calib, Calibration(cam, table, np.asarray(corners).reshape(4, 2), {"reprojection_px": 0.1}))
    clip = tmp_path / "clip.mp4"
    writer = cv2.VideoWriter(str(clip), cv2.VideoWriter_fourcc(*"mp4v"), 50.0, (64, 48))
    for i in range(10):
        writer.write(np.full((48, 64, 3), 20 * i, np.uint8))
    writer.release()
    return {"calib": calib, "clip": clip, "store": tmp_path / "match.db", "png": tmp_path / "board.png",
            "dir": tmp_path}


def base_args(files: dict[str, Path], *extra: str) -> list[str]:
    return ["run", "--camera", f"file:{files['clip']}", "--calib", str(files["calib"]), "--discipline",
            "three_cushion", "--players", "Ana,Rui", "--store", str(files["store"]), *extra]


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    stderr, sys.stderr = sys.stderr, err
    try:
        code = rc.run_command(parser().parse_args(argv), out)
    finally:
        sys.stderr = stderr
    return code, out.getvalue(), err.getvalue()


def test_without_vision_the_command_says_so_in_one_line_and_opens_nothing(files: dict[str, Path],
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A build whose vision module is missing must not pretend to referee."""
    monkeypatch.setattr(rc, "VISION_MODULE", "vision.not_installed")
    code, out, err = run(base_args(files, "--display", f"png:{files['png']}"))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "the vision pipeline is not available" in err
    assert not files["store"].exists() and not files["png"].exists()


def test_the_real_command_line_prints_no_traceback(files: dict[str, Path]) -> None:
    code = ("import sys, argparse; from device.run_command import add_run_parser, run_command;"
            "p = argparse.ArgumentParser(prog='arbitro'); add_run_parser(p.add_subparsers());"
            "sys.exit(run_command(p.parse_args(sys.argv[1:]), sys.stdout))")
    files["calib"].write_text("this is not a calibration file")
    proc = subprocess.run([sys.executable, "-c", code, *base_args(files)], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1
    assert "calibration" in proc.stderr


@pytest.mark.parametrize("extra, message", [
    (["--players", "Ana"], "two names separated by a comma"),
    (["--players", "Ana,Ana"], "different names"),
    (["--led", "GPIO99"], "a GPIO number 0-27"),
    (["--camera", "webcam"], "not a source"),
    (["--display", "hdmi"], "not a display"),
    (["--option", "bogus=1"], "not an option of three_cushion"),
    (["--distance", "0"], "must be a positive number"),
])
def test_bad_input_is_one_line_and_exit_2(files: dict[str, Path], extra: list[str], message: str) -> None:
    code, out, err = run(base_args(files) + extra)
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err, err
    assert not files["store"].exists()


def test_a_bad_config_file_is_one_line(files: dict[str, Path]) -> None:
    cfg = files["dir"] / "arbitro.toml"
    cfg.write_text("[display]\nwidht = 800\n")
    code, _, err = run(base_args(files, "--config", str(cfg)))
    assert code == 2 and "unknown key display.widht" in err and err.count("\n") == 1


class Scripted:
    """Stands in for vision in the wiring test: a shot at frames 3 and 7."""

    def __init__(self, calibration: Any, match: Any, frame_size: tuple[int, int]) -> None:
        self.frame_size = frame_size
        self.at = {3: [SHOTS[0]], 7: [SHOTS[1]]}

    def process(self, frame: Any) -> list[Any]:
        return self.at.get(frame.index, [])

    def on_gap(self, gap: Any) -> list[Any]:
        return []


def test_with_a_processor_the_whole_run_is_wired(files: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rc, "vision_factory", lambda: Scripted)
    code, out, err = run(base_args(files, "--distance", "15", "--display", f"png:{files['png']}"))
    assert code == 0, err
    result = json.loads(out)
    assert result["live"]["frames_read"] == 10 and result["live"]["verdicts"] == 2
    assert result["match"]["score"] == {"A": 0, "B": 1}
    board = cv2.imread(str(files["png"]))
    assert board.shape == (480, 800, 3)
    with MatchStore(files["store"]) as store:
        live = store.resume()
        assert live is not None and live.seq == 2 and live.info.players == ("Ana", "Rui")
    # Run again: the unfinished match is resumed, not restarted; another pair is refused.
    monkeypatch.setattr(Scripted, "__init__", lambda self, *a: setattr(self, "at", {5: [SHOTS[2]]}))
    code, out, _ = run(base_args(files, "--distance", "15"))
    assert code == 0 and json.loads(out)["match"]["score"] == {"A": 0, "B": 1}
    with MatchStore(files["store"]) as store:
        assert store.resume().seq == 3
    code, _, err = run(base_args(files, "--players", "Bea,Rui"))
    assert code == 2 and "an unfinished three_cushion match of Ana and Rui" in err


def test_a_foreign_store_file_is_one_line(files: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rc, "vision_factory", lambda: Scripted)
    files["store"].write_text("name,score\nAna,3\n")
    code, out, err = run(base_args(files))
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "not an arbitro match store" in err


# --- with --web: the wizard's calibration taken by the running loop, and the phones' new match ---------------------

def write_calib(path: Path, table_field: Any = "carom_match", size: tuple[int, int] = (64, 48),
                height_mm: float = 2000.0) -> Path:
    from calibration.file import table_from_field

    table = table_from_field(table_field)
    cam = CameraModel.overhead(table, size, height_mm=height_mm)
    corners = cam.table_to_image([[0, 0], [table.width, 0], [table.width, table.length], [0, table.length]])
    write_calibration(path, Calibration(cam, table, np.asarray(corners).reshape(4, 2), {"reprojection_px": 0.1},
                                        table_field))
    return path


CLUB = {"name": "club", "preset": "carom_match", "width": 1270.0, "length": 2540.0, "ball_diameter": 61.5}


class Endless:
    """A camera that gives small frames until the loop stops it."""

    def __init__(self) -> None:
        self.stopped = threading.Event()
        self.index = 0

    def __enter__(self) -> "Endless":
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def stop(self) -> None:
        self.stopped.set()

    def read(self) -> Any:
        if self.stopped.wait(0.005):
            return None
        self.index += 1
        return Frame(np.zeros((48, 64, 3), np.uint8), self.index / 200, self.index)


class Idle:
    def __init__(self, calibration: Any, match: Any, frame_size: tuple[int, int]) -> None:
        self.calibration, self.match = calibration, match

    def process(self, frame: Any) -> list[Any]:
        return []

    def on_gap(self, gap: Any) -> list[Any]:
        return []


def test_the_running_loop_takes_a_saved_calibration_and_a_phones_new_match(files: dict[str, Path]) -> None:
    from device.live import LiveLoop
    from device.display import NullSink
    from device.web.server import NewMatch

    store = MatchStore(files["store"])
    first = read_calibration(files["calib"])
    live = store.new_match("three_cushion", ("Ana", "Rui"), distance=15, table=first.table)
    table = rc._Table(store, first, Idle, (64, 48))
    loop = LiveLoop(Endless(), table.processor(live), live, display=NullSink(), new_match=table.next_game)
    table.loop = loop
    runner = threading.Thread(target=loop.run)
    runner.start()
    try:
        # The camera was moved and recalibrated on the same table: the loop's vision takes it between two frames.
        moved = write_calib(files["dir"] / "moved.calib.json", height_mm=2400.0)
        assert table.reload(moved) == "the live loop uses it now"
        assert loop.processor.calibration.camera.camera_centre[2] == pytest.approx(2400.0, abs=1)
        assert loop.processor.match is live and loop.match is live
        # A calibration of another table waits for the next match: this one is refereed on its own table.
        club = write_calib(files["dir"] / "club.calib.json", CLUB)
        assert "the match in progress is on carom_match" in table.reload(club)
        assert loop.processor.calibration.table.name == "carom_match"
        table.start_match(NewMatch(("Bea", "Carl"), 20))
        assert loop.match.info.players == ("Bea", "Carl") and loop.match.referee.table.length == 2540.0
        assert loop.processor.match is loop.match and loop.processor.calibration.table.name == "club"
        assert store.match_info(live.id).ended is not None
        # The device's next-game button: the same players, a new processor for the new match.
        loop.press("next_game")
        deadline = time.monotonic() + 5
        while len(store.matches()) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert [m.players for m in store.matches()][-1] == ("Bea", "Carl") and store.matches()[-1].distance == 20
        # A calibration made at another size is refused, and the loop keeps its own.
        small = write_calib(files["dir"] / "small.calib.json", size=(32, 24))
        with pytest.raises(rc.RunError, match="made at 32x24, the camera gives 64x48"):
            table.reload(small)
    finally:
        loop.stop()
        runner.join(10)
        store.close()
    table.loop = None
    with pytest.raises(rc.RunError, match="not running"):
        table.reload(moved)


def test_a_restart_uses_the_wizards_calibration_when_it_is_the_newer(files: dict[str, Path],
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    import os

    web = files["dir"] / "web"
    web.mkdir()
    saved = write_calib(web / "table.calib.json", height_mm=2400.0)
    os.utime(files["calib"], (1_000_000, 1_000_000))
    assert rc._calibration_path(str(files["calib"]), None, web) == str(files["calib"])  # no --web: no wizard
    assert rc._calibration_path(str(files["calib"]), "127.0.0.1:0", web) == str(saved)
    assert "using the calibration saved by the wizard" in capsys.readouterr().err
    os.utime(files["calib"], None)
    os.utime(saved, (1_000_000, 1_000_000))
    assert rc._calibration_path(str(files["calib"]), "127.0.0.1:0", web) == str(files["calib"])


def test_run_with_web_serves_the_wizard_on_the_loops_own_camera(files: dict[str, Path],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """arbitro run --web: the wizard's live view is the loop's camera (tapped, not opened twice)."""
    from device.web.auth import PinStore
    from tests.test_web_server import request

    clip = files["dir"] / "long.mp4"
    writer = cv2.VideoWriter(str(clip), cv2.VideoWriter_fourcc(*"mp4v"), 50.0, (64, 48))
    for i in range(150):  # 3 s at its own rate
        writer.write(np.full((48, 64, 3), 90, np.uint8))
    writer.release()
    monkeypatch.setattr(rc, "vision_factory", lambda: Idle)
    PinStore(files["dir"] / "web").set("4821")
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    argv = base_args(files, "--web", f"127.0.0.1:{port}", "--web-data", str(files["dir"] / "web"))
    argv[argv.index("--camera") + 1] = f"file:{clip}"
    base = f"http://127.0.0.1:{port}"
    got: list[bytes] = []

    def phone() -> None:  # polls the live view while the run (which needs the main thread's signals) goes on
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not got:
            try:
                status, _, body = request(base, "/wizard/live.jpg")
                if status == 200:
                    got.append(body)
            except OSError:
                pass
            time.sleep(0.05)

    poller = threading.Thread(target=phone)
    poller.start()
    code, out, err = run(argv)
    poller.join(15)
    jpeg = got[0] if got else None
    assert jpeg is not None and jpeg[:2] == b"\xff\xd8"
    view = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
    assert view.shape == (48, 64, 3) and abs(float(view.mean()) - 90) < 3
    assert code == 0, err
    assert "calibration wizard at /wizard" in err and json.loads(out)["live"]["frames_read"] == 150


def test_with_web_a_restart_resumes_the_match_a_phone_started(files: dict[str, Path],
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    calib = read_calibration(files["calib"])
    with MatchStore(files["store"]) as store:
        store.new_match("three_cushion", ("Bea", "Carl"), table=calib.table)
        live = rc._match(store, "three_cushion", ("Ana", "Rui"), None, {}, calib.table, phones=True)
        assert live.info.players == ("Bea", "Carl")
        assert "resuming the unfinished match of Bea and Carl" in capsys.readouterr().err
        with pytest.raises(rc.RunError, match="an unfinished three_cushion match of Bea and Carl"):
            rc._match(store, "three_cushion", ("Ana", "Rui"), None, {}, calib.table)  # without --web: refused
        with pytest.raises(rc.RunError, match="an unfinished three_cushion match"):
            rc._match(store, "free_game", ("Ana", "Rui"), None, {}, calib.table, phones=True)
