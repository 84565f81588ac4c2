"""``arbitro run``: one clear line for every bad input, the vision pipeline's absence said plainly, and, with a
scripted processor standing in for vision, the whole wiring on a real clip: store, display, figures."""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from calibration.camera import CameraModel
from calibration.file import Calibration, write_calibration
from rules.log import read_log
from rules.registry import referee_for
from rules.tables import preset
from device import run_command as rc
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
