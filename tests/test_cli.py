"""``arbitro referee`` as other programs use it: JSON lines on stdout, one-line errors and exit 2 on bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "fixtures" / "logs" / "three_cushion_demo.jsonl"


def arbitro(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "device", *args], input=stdin, capture_output=True, text=True,
                          cwd=ROOT, timeout=60)


def test_referee_prints_one_verdict_per_shot_then_the_match():
    run = arbitro("referee", "--discipline", "three_cushion", "--distance", "15", str(DEMO))
    assert run.returncode == 0, run.stderr
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    shots = sum(1 for line in DEMO.read_text().splitlines() if line.strip())
    assert len(lines) == shots + 1
    assert [v["shot"] for v in lines[:-1]] == list(range(1, shots + 1))
    match = lines[-1]["match"]
    assert match["score"] == lines[-2]["score"] and match["game_over"] and match["winner"] in ("A", "B", "draw")
    for v in lines[:-1]:
        assert set(v) >= {"shot", "shooter", "points", "foul", "turn", "score", "respot", "announce", "game_over",
                          "reason"}
    assert run.stderr == ""


def test_referee_reads_standard_input():
    run = arbitro("referee", "--discipline", "three_cushion", "--distance", "15", "-", stdin=DEMO.read_text())
    assert run.returncode == 0 and run.stdout.splitlines()[-1].startswith('{"match"')


@pytest.mark.parametrize("args, stdin, words", [
    (["referee", "--discipline", "three_cushion", "missing.jsonl"], None, "no such log file"),
    (["referee", "--discipline", "snooker", "-"], "", "invalid choice"),
    (["referee", "--discipline", "three_cushion", "--option", "reds", "-"], "", "KEY=VALUE"),
    (["referee", "--discipline", "three_cushion", "--option", "reds=15", "-"], "", "not an option"),
    (["referee", "--discipline", "three_cushion", "--table", "round", "-"], "", "unknown table preset"),
    (["referee", "--discipline", "three_cushion", "--distance", "0", "-"], "", "positive"),
    (["referee", "--discipline", "three_cushion", "-"], "{not json\n", "line 1: not valid JSON"),
    (["referee", "--discipline", "three_cushion", "-"], '{"control": "undo"}\n', "no shot to undo"),
    (["referee", "--discipline", "three_cushion", "-"], '{"cue_ball": "cue", "t_start": 0, "t_end": 1, '
     '"start": {}, "events": [], "end": {}}\n', "field 'cue_ball': unknown ball id 'cue'"),
])
def test_bad_input_is_one_line_on_stderr_and_exit_2(args, stdin, words):
    run = arbitro(*args, stdin=stdin)
    assert run.returncode == 2
    assert words in run.stderr and len(run.stderr.strip().splitlines()) == 1
    assert "Traceback" not in run.stderr and run.stdout == ""


def test_verdicts_before_a_bad_record_are_still_printed():
    good = DEMO.read_text().splitlines()[:3]
    run = arbitro("referee", "--discipline", "three_cushion", "-", stdin="\n".join(good + ["[1, 2]"]) + "\n")
    assert run.returncode == 2 and len(run.stdout.splitlines()) == 3
    assert "line 4: a record must be a JSON object" in run.stderr


def test_replay_takes_the_spot_balls_look_for_the_detector_and_not_the_referee(tmp_path):
    clip = Path(__file__).resolve().parent.parent / "fixtures" / "clips" / "ball_off_the_table.mp4"
    report = tmp_path / "r.json"
    done = arbitro("replay", str(clip), "--discipline", "three_cushion", "--spot", "dots", "--quiet",
                   "--report", str(report))
    assert done.returncode == 0, done.stderr
    assert json.loads(report.read_text())["shots"]
    refused = arbitro("replay", str(clip), "--discipline", "three_cushion", "--spot", "striped")
    assert refused.returncode == 2 and "--spot" in refused.stderr
