"""Write a scenario as a video clip with its exact truth.

For a clip named N in a folder:
- ``N.mp4``: the frames (cv2.VideoWriter, 'mp4v'), frame i exposed from i / fps;
- ``N.truth.json``: the scenario, fps, the cameras (calibration fields; a nudge adds one, from its time), the
  events, the strikes, the pins, and per frame (``frames[i]``, exposed from ``t_frame`` = i / fps, positions at
  mid-exposure ``t``): ``balls`` {id: [x, y, u, v, occluded]} for each ball on the cloth (cloth mm, the pixel of
  its centre through the frame's camera, 1 when the cue or an arm covers it), ``gone`` {id: "potted" |
  "off_table"}, ``pins_down`` [pin ids], ``camera`` (index into ``cameras``);
- ``N.shots.jsonl``: the exact Shot records, one a line (DESIGN.md section 4);
- ``N.calib.json``: the calibration file a perfect calibration would produce (DESIGN.md section 6).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, replace

import cv2

from calibration.pose import nose_height_mm, table_corners
from rules.errors import LogError
from rules.match import Match
from rules.registry import referee_for
from rules.shot import Shot

from .layouts import cue_ball_for
from .render import Renderer
from .scenario import Scenario
from .shots import build_shots
from .trajectory import Trajectory


@dataclass(frozen=True)
class ClipResult:
    video: str
    truth: str
    shots: str
    calib: str
    frames: int
    shot_records: tuple[Shot, ...]


def shot_records(scenario: Scenario, traj: Trajectory) -> list[Shot]:
    """The exact Shot records of a simulated scenario, with each shot's cue ball (the shooter's own ball in carom,
    the cue ball elsewhere) and any nominated ball filled in."""
    table = scenario.table_spec()
    cue_balls, shooters = {}, {}
    for s in traj.strikes:
        if s.shooter:
            shooters[s.t] = s.shooter
            cue_balls[s.t] = cue_ball_for(scenario.discipline, s.shooter)
    shots = build_shots(traj, table, scenario.discipline, cue_balls=cue_balls, shooters=shooters)
    noms = scenario.nominations(traj)
    shots = [replace(s, nominated=noms[s.t_start]) if s.t_start in noms else s for s in shots]
    return _at_the_table(shots, scenario.discipline, table)


def _at_the_table(shots: list[Shot], discipline: str, table) -> list[Shot]:
    """A record with no strike (a hand moved a ball) names the side to play and that side's cue ball: who is at
    the table follows from the verdicts before it (a miss passes the turn), which only the referee knows.

    The shots are judged in order; a scenario whose strikes do not follow the turns (a random mid-game shot by
    either side) cannot be judged in order, and its no-strike records keep the shooter of the shot before."""
    if all(s.struck_ball is not None for s in shots):
        return shots
    match = Match(referee_for(discipline, table=table))
    out = []
    for shot in shots:
        if shot.struck_ball is None:
            shot = replace(shot, shooter=match.referee.next_shooter(match.state), cue_ball=match.cue_ball())
        try:
            match.feed(shot)
        except LogError:
            return out + shots[len(out):]
        out.append(shot)
    return out


def write_clip(scenario: Scenario, folder: str, *, duration: float | None = None) -> ClipResult:
    os.makedirs(folder, exist_ok=True)
    base = os.path.join(folder, scenario.name)
    traj = scenario.simulate()
    table = scenario.table_spec()
    camera = scenario.camera_model()
    fps = scenario.fps()
    effects = scenario.render_effects()
    renderer = Renderer(table, scenario.discipline, camera, traj, effects, seed=scenario.seed)
    end = duration if duration is not None else traj.t_end
    n = int(math.floor(end * fps)) + 1
    writer = cv2.VideoWriter(base + ".mp4", cv2.VideoWriter_fourcc(*"mp4v"), fps, camera.image_size)
    if not writer.isOpened():
        raise RuntimeError(f"cannot open a video writer for {base}.mp4")
    frames = []
    try:
        for i in range(n):
            img, truth = renderer.render(i / fps)
            writer.write(img)
            d = truth.to_dict()
            d["frame"] = i
            d["t_frame"] = round(i / fps, 6)
            frames.append(d)
    finally:
        writer.release()
    shots = shot_records(scenario, traj)
    with open(base + ".shots.jsonl", "w") as f:
        for s in shots:
            f.write(json.dumps(s.to_dict()) + "\n")
    truth_doc = {
        "scenario": scenario.to_dict(),
        "table": table.name,
        "fps": fps,
        "image_size": list(camera.image_size),
        "cameras": [dict(c.to_dict(), from_t=(0.0 if k == 0 else effects.nudges[k - 1].t))
                    for k, c in enumerate(renderer.cameras)],
        "ball_radius": table.ball_radius,
        "events": [e.to_dict() for e in traj.events],
        "strikes": [{"t": s.t, "ball": s.ball, "speed": s.speed, "direction": list(s.direction),
                     "moving": list(s.moving), "shooter": s.shooter} for s in traj.strikes],
        "pins": [{"pin": p.name, "spot": list(p.spot), "down_t": p.down_t, "direction": list(p.direction),
                  "by": p.by} for p in traj.pins],
        "frames": frames,
    }
    with open(base + ".truth.json", "w") as f:
        json.dump(truth_doc, f, separators=(",", ":"))
    # The corners as a calibration file has them: the cushion-nose corners as seen, at the nose height.
    calib = dict(camera.to_dict(), table=table.name,
                 corners_px=camera.project(table_corners(table, nose_height_mm(table))).round(3).tolist(),
                 quality={"reprojection_px": 0.0, "markings_mm": 0.0})
    with open(base + ".calib.json", "w") as f:
        json.dump(calib, f, indent=1)
    return ClipResult(base + ".mp4", base + ".truth.json", base + ".shots.jsonl", base + ".calib.json", n,
                      tuple(shots))
