"""``arbitro replay`` on the committed clips of the virtual table: vision's verdicts equal the truth's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from calibration.file import read_calibration
from device.replay import ReplaySettings, run_replay
from device.replay_command import make_detector
from rules.log import read_log
from rules.match import Match
from rules.registry import referee_for

ROOT = Path(__file__).resolve().parent.parent
CLIPS = ROOT / "fixtures" / "clips"
# The clips whose plays vision referees as the truth does today (the pocketed games' racks and Chapó's pins are
# not there yet: see the vision issue's note).
REFEREED = ["three_cushion_point_and_miss", "ball_off_the_table", "arm_over_the_table", "balkline_run_leaving_a_field",
            "strike_while_rolling_and_a_hand", "chapo_king_two_laterals_and_mingo", "snooker_red_then_colour_foul"]
# ... and those whose events vision finds exactly as the truth has them (kinds, balls, cushions, pockets, pins,
# order). (The three-cushion clip at 30 fps misses a cushion of the red that no verdict depends on; in the snooker
# clip red1 meets the top cushion's jaw in the pocket's mouth after its last sighting, 15 ms before it drops.)
EVENTS_EXACT = ["strike_while_rolling_and_a_hand", "chapo_king_two_laterals_and_mingo"]


def verdicts_of_truth(name: str, discipline: str, table) -> list[tuple]:
    match = Match(referee_for(discipline, table=table))
    lines = (CLIPS / f"{name}.shots.jsonl").read_text().splitlines()
    out = []
    for _, r in read_log(lines, discipline, table):
        out.append(_key(match.feed(r)))
    return out


def _key(v) -> tuple:
    return (dict(v.points), v.turn, None if v.foul is None else v.foul.code)


@pytest.mark.parametrize("name", REFEREED)
def test_vision_referees_the_clip_as_the_truth_does(name: str) -> None:
    discipline = json.loads((CLIPS / f"{name}.scenario.json").read_text())["discipline"]
    calib = read_calibration(CLIPS / f"{name}.calib.json")
    result = run_replay(ReplaySettings(str(CLIPS / f"{name}.mp4"), discipline, calib, "fixture"), make_detector,
                        progress=None)
    assert [None if v is None else _key(v) for v in result.verdicts] == \
        verdicts_of_truth(name, discipline, calib.table)
    assert result.unrefereed == [] and result.frames_dropped == 0
    if name not in EVENTS_EXACT:
        return
    truth = [r for _, r in read_log((CLIPS / f"{name}.shots.jsonl").read_text().splitlines(), discipline,
                                    calib.table)]
    # The same events, of the same kinds and balls (cushion, pocket, pin and who knocked it) in the same order;
    # contacts within a few ms of each other (a rack's balls all struck at once) in any order among themselves.
    assert [event_sequence(s) for s in result.shots] == [event_sequence(s) for s in truth]


def event_sequence(shot, tie_s: float = 0.004) -> list:
    groups: list[list] = []
    last_t = None
    for e in shot.events:
        who = tuple(sorted(e.balls)) if e.balls else (e.ball, e.cushion, e.pocket, e.pin, e.by)
        if last_t is None or e.t - last_t > tie_s:
            groups.append([])
        groups[-1].append((e.type.value, who))
        last_t = e.t
    return [sorted(g) for g in groups]


def test_the_replay_command_writes_its_report_log_video_and_diagrams(tmp_path: Path) -> None:
    name = "three_cushion_point_and_miss"
    out = {k: tmp_path / v for k, v in (("report", "r.report.json"), ("log", "m.jsonl"), ("annotated", "a.mp4"),
                                        ("diagrams", "diagrams"))}
    proc = subprocess.run([sys.executable, "-m", "device", "replay", str(CLIPS / f"{name}.mp4"), "--discipline",
                           "three_cushion", "--players", "Ana,Rui", *[f"--{k}={v}" for k, v in out.items()]],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    match = json.loads(proc.stdout)["match"]
    report = json.loads(out["report"].read_text())
    assert set(report) >= {"source", "discipline", "calibration", "fps", "shots", "match", "stats", "quality"}
    assert report["match"] == match and report["players"] == {"A": "Ana", "B": "Rui"}
    assert [s["verdict"]["points"] for s in report["shots"]] == [{"A": 1, "B": 0}, {"A": 0, "B": 0}]
    # The log re-judged by arbitro referee gives the same match: the log is the single truth.
    judged = subprocess.run([sys.executable, "-m", "device", "referee", "--discipline", "three_cushion",
                             str(out["log"])], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert json.loads(judged.stdout.splitlines()[-1])["match"] == match
    assert sorted(p.name for p in out["diagrams"].iterdir()) == ["shot_001.png", "shot_002.png"]
    import cv2
    cap = cv2.VideoCapture(str(out["annotated"]))
    assert int(cap.get(cv2.CAP_PROP_FRAME_COUNT)) == report["quality"]["frames_read"]
    cap.release()


@pytest.mark.parametrize("args, words", [
    (["replay", "nothing.mp4", "--discipline", "three_cushion"], "no such video file"),
    (["replay", str(CLIPS / "three_cushion_point_and_miss.calib.json"), "--discipline", "three_cushion",
      "--calib", str(CLIPS / "three_cushion_point_and_miss.calib.json")], "cannot open the video"),
    (["replay", str(CLIPS / "three_cushion_point_and_miss.mp4"), "--discipline", "three_cushion", "--calib",
      str(CLIPS / "three_cushion_point_and_miss.scenario.json")], "calibration"),
    (["replay", str(CLIPS / "bilhar_break.mp4"), "--discipline", "bilhar", "--calib",
      str(CLIPS / "three_cushion_point_and_miss.calib.json")], "was made at 640x480"),
])
def test_bad_replay_input_is_one_line_and_exit_2(args, words):
    proc = subprocess.run([sys.executable, "-m", "device", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
    assert proc.returncode == 2 and words in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert "Traceback" not in proc.stderr


def test_a_truncated_video_is_one_line_too(tmp_path):
    """A recording cut short (the card pulled out mid-write): FFmpeg's own complaint is not printed beside ours."""
    clip = tmp_path / "cut.mp4"
    clip.write_bytes((CLIPS / "three_cushion_point_and_miss.mp4").read_bytes()[:200_000])
    proc = subprocess.run([sys.executable, "-m", "device", "replay", str(clip), "--discipline", "three_cushion",
                           "--calib", str(CLIPS / "three_cushion_point_and_miss.calib.json")],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 2 and "cannot open the video" in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_a_damaged_stretch_mid_clip_is_read_past_said_in_one_line_and_its_shot_left_unrefereed(tmp_path):
    from tests.test_device_sources import damaged_copy
    clip = damaged_copy(CLIPS / "three_cushion_point_and_miss.mp4", tmp_path / "damaged.mp4")
    report = tmp_path / "r.json"
    proc = subprocess.run([sys.executable, "-m", "device", "replay", str(clip), "--discipline", "three_cushion",
                           "--calib", str(CLIPS / "three_cushion_point_and_miss.calib.json"), "--report",
                           str(report)], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    damaged = [line for line in proc.stderr.splitlines() if "could not be decoded" in line]
    assert len(damaged) == 1 and "Traceback" not in proc.stderr
    quality = json.loads(report.read_text())["quality"]
    assert quality["frames_dropped"] > 0 and quality["frames_read"] > 400
    # The shot the lost frames fall in is not judged on half its frames; the shot after them is.
    assert any("frames lost" in u["why"] for u in quality["unrefereed"])
    shots = json.loads(report.read_text())["shots"]
    assert shots[-1]["verdict"] is not None
