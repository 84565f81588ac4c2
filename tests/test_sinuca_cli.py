"""``arbitro referee --discipline sinuca`` end to end: JSON lines out, one-line errors and exit 2 on bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.sinuca_builders import Game

ROOT = Path(__file__).resolve().parent.parent
OPEN_CUE = (400.0, 900.0)


def arbitro(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "device", "referee", "--discipline", "sinuca", *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)


def write_log(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def three_shots() -> list[dict]:
    """A red, the black nominated (sinuca Art. 12.1, 13.1), then the cue ball potted (Art. 41.1)."""
    g = Game()
    out = []
    for kw in ({"first": "red1", "pots": "red1"}, {"first": "black", "pots": "black", "nominated": "black"},
               {"first": "red2", "pots": "cue"}):
        s = g.make(kw.pop("first"), kw.pop("pots"), cue_to=OPEN_CUE, **kw)
        g.play(s)
        out.append(s.to_dict())
    return out


def test_cli_prints_one_verdict_per_shot_and_the_match(tmp_path):
    records = three_shots()
    records.insert(2, {"control": "nominate", "ball": "red2"})
    log = write_log(tmp_path / "frame.jsonl", records)
    run = arbitro(str(log), "--option", "reds=15", "--option", "frames=1")
    assert run.returncode == 0, run.stderr
    lines = [json.loads(x) for x in run.stdout.splitlines()]
    assert len(lines) == 4 and [v["shot"] for v in lines[:3]] == [1, 2, 3]
    assert [v["points"] for v in lines[:3]] == [{"A": 1, "B": 0}, {"A": 7, "B": 0}, {"A": 0, "B": 4}]
    assert lines[1]["respot"][0]["ball"] == "black" and lines[2]["foul"]["article"] == "sinuca Art. 41.1"
    assert lines[2]["turn"] == "passes" and lines[2]["cue_in_hand"] and lines[2]["score"] == {"A": 8, "B": 4}
    match = lines[-1]["match"]
    assert match["score"] == {"A": 8, "B": 4} and match["fouls"] == {"A": 1, "B": 0}
    assert match["high_break"]["A"] == 8 and match["winner"] is None and not match["match_over"]


def test_cli_a_free_ball_nobody_was_offered_is_one_line_and_exit_2(tmp_path):
    records = three_shots()[:1] + [{"control": "free_ball", "ball": "green"}]
    log = write_log(tmp_path / "bad.jsonl", records)
    run = arbitro(str(log))
    assert run.returncode == 2
    err = run.stderr.strip().splitlines()
    assert len(err) == 1 and "line 2" in err[0] and "free ball" in err[0]


def test_cli_an_unknown_option_is_exit_2(tmp_path):
    log = write_log(tmp_path / "ok.jsonl", three_shots()[:1])
    run = arbitro(str(log), "--option", "reds=7")
    assert run.returncode == 2 and "reds" in run.stderr and run.stdout == ""
