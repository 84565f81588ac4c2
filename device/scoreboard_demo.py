"""Writes one scoreboard PNG per discipline family (and the carom one at 1024x600) to docs/scoreboard/.

    python -m device.scoreboard_demo [--out DIR]

Carom, sinuca and bilhar are judged by their real referees from small logs; Chapó uses a verdict shaped like its
referee's (a valid Chapó position takes more set-up than a demo needs).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import cv2

from rules.log import read_log
from rules.match import Match
from rules.registry import referee_for
from rules.shot import Shot
from rules.sinuca import rack
from rules.tables import preset

from .scoreboard import BoardView, render, view_for

ROOT = Path(__file__).resolve().parents[1]


def carom_view() -> BoardView:
    referee = referee_for("three_cushion", distance=15)
    match = Match(referee)
    lines = (ROOT / "fixtures" / "logs" / "three_cushion_demo.jsonl").read_text().splitlines()
    verdict = None
    for label, record in read_log(lines[:79], "three_cushion", referee.table):
        verdict = match.feed(record, label) or verdict
    assert verdict is not None
    return view_for("three_cushion", ("José Águas", "Rui Conceição"), match.summary(), verdict.to_dict(),
                    referee.table)


def bilhar_view() -> BoardView:
    referee = referee_for("bilhar", options={"minutes": "20"})
    table = referee.table
    rack = {"cue": [635.0, 400.0], "1": [635.0, 1905.0], "3": [600.0, 1965.0], "9": [670.0, 1965.0],
            "10": [570.0, 2025.0], "12": [700.0, 2025.0], "5": [400.0, 1200.0], "14": [900.0, 800.0]}
    shots = [
        # the break pots the 1: the breaker (A) takes the low group and plays on
        {"cue_ball": "cue", "t_start": 0.0, "t_end": 6.0, "start": rack,
         "events": [{"t": 0.1, "type": "strike", "ball": "cue"},
                    {"t": 0.6, "type": "ball_ball", "balls": ["cue", "1"]},
                    {"t": 1.4, "type": "pocket", "ball": "1", "pocket": "top_left"}],
         "end": {k: v for k, v in rack.items() if k != "1"} | {"cue": [640.0, 1500.0]}},
        # A hits the 9 first: a ball of the other group (Art. 9): B removes its lowest ball
        {"cue_ball": "cue", "t_start": 300.0, "t_end": 306.0,
         "start": {k: v for k, v in rack.items() if k != "1"} | {"cue": [640.0, 1500.0]},
         "events": [{"t": 300.1, "type": "strike", "ball": "cue"},
                    {"t": 300.5, "type": "ball_ball", "balls": ["cue", "9"]}],
         "end": {k: v for k, v in rack.items() if k != "1"} | {"cue": [300.0, 1000.0], "9": [660.0, 2300.0]}},
    ]
    match = Match(referee)
    verdict = None
    for i, d in enumerate(shots):
        verdict = match.feed(Shot.from_dict(d, discipline="bilhar", table=table, record=f"shot {i + 1}"))
    assert verdict is not None
    return view_for("bilhar", ("Ana Lúcia", "Zé Maria"), match.summary(), verdict.to_dict(), table)


def sinuca_view() -> BoardView:
    referee = referee_for("sinuca")
    table = referee.table
    layout = {ball: list(at) for ball, at in rack(table, 15).items()}
    layout["cue"] = [table.width / 2 + 40, table.lines["baulk_line_y"] - 80]
    after_pot = {k: v for k, v in layout.items() if k != "red3"} | {"cue": [700.0, 1500.0]}
    shots = [
        # A pots a red
        {"cue_ball": "cue", "t_start": 0.0, "t_end": 5.0, "start": layout,
         "events": [{"t": 0.1, "type": "strike", "ball": "cue"},
                    {"t": 0.5, "type": "ball_ball", "balls": ["cue", "red3"]},
                    {"t": 1.0, "type": "pocket", "ball": "red3", "pocket": "top_left"}],
         "end": after_pot},
        # then, a colour on and none nominated, hits a red first: a foul (and a free ball for B)
        {"cue_ball": "cue", "t_start": 10.0, "t_end": 15.0, "start": after_pot,
         "events": [{"t": 10.1, "type": "strike", "ball": "cue"},
                    {"t": 10.5, "type": "ball_ball", "balls": ["cue", "red5"]}],
         "end": after_pot | {"cue": [300.0, 900.0]}},
    ]
    match = Match(referee)
    verdict = None
    for i, d in enumerate(shots):
        verdict = match.feed(Shot.from_dict(d, discipline="sinuca", table=table, record=f"shot {i + 1}"))
    assert verdict is not None
    return view_for("sinuca", ("Ronaldo", "Beto Araújo"), match.summary(), verdict.to_dict(), table)


def chapo_view() -> BoardView:
    table = preset("chapo")
    verdict = {
        "shot": 17, "shooter": "A", "points": {"A": 6, "B": 0}, "foul": None, "turn": "passes",
        "score": {"A": 24, "B": 19}, "respot": [{"ball": "mingo", "at": list(table.spots["mingo"])}],
        "announce": ["rey: 4", "2 palos"], "game_over": False, "reason": None,
        "pins_down": ["king", "lat_left"], "knocked": ["king", "lat_left"], "game": 3, "games": {"A": 1, "B": 1},
        "ball_in_hand": None, "match_over": False, "winner": None,
    }
    summary = {"score": {"A": 24, "B": 19}, "games": {"A": 1, "B": 1}, "game": 3, "games_to_play": 3,
               "fouls": {"A": 0, "B": 2}, "shots": 17, "game_over": False, "match_over": False, "winner": None}
    return view_for("chapo", ("Íñigo Peña", "Ramón Güell"), summary, verdict, table)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m device.scoreboard_demo")
    parser.add_argument("--out", default=str(ROOT / "docs" / "scoreboard"), help="folder for the PNGs")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    boards = {"carom": carom_view(), "sinuca": sinuca_view(), "bilhar": bilhar_view(), "chapo": chapo_view()}
    for name, view in boards.items():
        cv2.imwrite(str(out / f"{name}_800x480.png"), render(view, (800, 480)))
    cv2.imwrite(str(out / "carom_1024x600.png"), render(boards["carom"], (1024, 600)))
    lost = BoardView(**{**boards["carom"].__dict__, "status": "CAMERA LOST - NOT REFEREEING"})
    cv2.imwrite(str(out / "camera_lost_800x480.png"), render(lost, (800, 480)))
    print(f"wrote {len(boards) + 2} scoreboards to {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
