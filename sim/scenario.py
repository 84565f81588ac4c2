"""Scenarios: a small JSON language for a virtual game (layout, shots, scripted extras, camera, exposure) and a
seeded generator of random legal layouts and shots per discipline.

A scenario as JSON (every field but ``discipline`` optional)::

    {"name": "three_cushion_point", "discipline": "three_cushion", "table": "carom_match", "seed": 1,
     "layout": "opening" | {"white": [710, 710], ...},
     "shots": [{"t": 0.5, "ball": "spot", "shooter": "A", "speed": 2500, "direction": 30,
                "tip": [0.1, 0.3], "push_s": 0.0, "nominated": "black"},
               {"after_rest": 1.5, "ball": "white", "aim": "red", "cut": 0.3, "speed": 2000},
               {"ball": "cue", "pot": ["red3", "top_left"], "speed": 1800}],
     "extras": [{"type": "touch", "t": 3.0, "ball": "red", "velocity": [0, 300]},
                {"type": "hand_move", "t": 9.0, "ball": "red", "to": [700, 2100], "duration": 0.6},
                {"type": "leave_table", "t": 0.0, "ball": "red"},
                {"type": "knock_pin", "t": 4.0, "pin": "king", "direction": 30}],
     "camera": {"sensor": "pi_gs", "size": [640, 480], "height_mm": 2000, "tilt_deg": 0, "dist": [-0.06, 0, 0, 0, 0]},
     "effects": {"noise_sigma": 2, "jpeg_quality": 92, "motion_blur": true, "rolling_shutter": false,
                 "flicker": 0.0, "cue": true, "arms": [{"t0": 1, "t1": 3, "entry": [1570, 700], "hand": [900, 700]}],
                 "light_changes": [{"t0": 2, "t1": 2.5, "gain": 0.8}], "nudges": [{"t": 4.0}]},
     "tail_s": 0.5}

A shot's time is ``t`` (absolute), or ``after_rest`` seconds after the table last came to rest (default 1.6 s,
so the cue's approach is in the clip). Its direction is ``direction`` (degrees, counter-clockwise from +x), or
``aim`` at a ball (``cut`` in [-1, 1] of a ball's width off a full hit, + to the right), or ``pot``: the ghost-ball
line that sends an object ball to a pocket.
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass, field
from typing import Any, Mapping

from rules.tables import TableSpec, preset

from .actions import Action, HandMove, KnockPin, LeaveTable, Strike, Touch
from .layouts import cue_ball_for, opening_layout, pins_for, random_layout, table_for
from .occluders import Arm
from .physics import Simulator
from .render import Effects, LightChange, Nudge
from .sensors import camera_for, sensor
from .trajectory import ON_TABLE, Trajectory

DEFAULT_AFTER_REST = 1.6


@dataclass(frozen=True)
class ShotSpec:
    ball: str
    speed: float
    direction: float | None = None
    aim: str | None = None
    cut: float = 0.0
    pot: tuple[str, str] | None = None
    tip: tuple[float, float] = (0.0, 0.0)
    t: float | None = None
    after_rest: float = DEFAULT_AFTER_REST
    shooter: str | None = None
    push_s: float = 0.0
    nominated: str | None = None


@dataclass(frozen=True)
class Scenario:
    discipline: str
    name: str = "scenario"
    table: str | None = None
    seed: int = 0
    layout: Mapping[str, tuple[float, float]] | None = None  # None: the opening layout
    shots: tuple[ShotSpec, ...] = ()
    extras: tuple[Action, ...] = ()
    camera: Mapping[str, Any] = field(default_factory=dict)
    effects: Mapping[str, Any] = field(default_factory=dict)
    tail_s: float = 0.5

    # --- JSON -----------------------------------------------------------------------------------------------

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Scenario":
        known = {"name", "discipline", "table", "seed", "layout", "shots", "extras", "camera", "effects", "tail_s"}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ValueError(f"scenario: unknown field {unknown[0]!r}")
        if "discipline" not in d:
            raise ValueError("scenario: missing field 'discipline'")
        layout = d.get("layout", "opening")
        return cls(
            discipline=d["discipline"], name=d.get("name", "scenario"), table=d.get("table"),
            seed=int(d.get("seed", 0)),
            layout=None if layout == "opening" else {k: (float(v[0]), float(v[1])) for k, v in layout.items()},
            shots=tuple(_shot_from_dict(s) for s in d.get("shots", ())),
            extras=tuple(_extra_from_dict(e) for e in d.get("extras", ())),
            camera=dict(d.get("camera", {})), effects=dict(d.get("effects", {})), tail_s=float(d.get("tail_s", 0.5)),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "discipline": self.discipline, "table": self.table, "seed": self.seed,
            "layout": "opening" if self.layout is None else {k: list(v) for k, v in self.layout.items()},
            "shots": [_shot_to_dict(s) for s in self.shots],
            "extras": [_extra_to_dict(e) for e in self.extras],
            "camera": dict(self.camera), "effects": _jsonable(self.effects), "tail_s": self.tail_s,
        }

    @classmethod
    def load(cls, path: str) -> "Scenario":
        with open(path) as f:
            return cls.from_dict(json.load(f))

    # --- what it builds -------------------------------------------------------------------------------------

    def table_spec(self) -> TableSpec:
        return preset(self.table) if self.table else table_for(self.discipline)

    def start_layout(self) -> dict[str, tuple[float, float]]:
        return dict(self.layout) if self.layout is not None else opening_layout(self.discipline, self.table_spec())

    def camera_model(self):
        c = self.camera
        mode = sensor(c.get("sensor", "pi_gs"))
        size = tuple(c["size"]) if "size" in c else None
        dist = tuple(c["dist"]) if "dist" in c else None
        return camera_for(self.table_spec(), mode, image_size=size, height_mm=float(c.get("height_mm", 2000.0)),
                          tilt_deg=float(c.get("tilt_deg", 0.0)), dist=dist)  # type: ignore[arg-type]

    def fps(self) -> float:
        return float(self.camera.get("fps", sensor(self.camera.get("sensor", "pi_gs")).fps))

    def render_effects(self) -> Effects:
        e = self.effects
        mode = sensor(self.camera.get("sensor", "pi_gs"))
        return Effects(
            motion_blur=bool(e.get("motion_blur", True)),
            exposure_s=float(e.get("exposure_s", mode.exposure_s)),
            noise_sigma=float(e.get("noise_sigma", mode.noise_sigma)),
            jpeg_quality=e.get("jpeg_quality", 92),
            rolling_readout_s=mode.readout_s if e.get("rolling_shutter", mode.readout_s > 0) else 0.0,
            flicker=float(e.get("flicker", 0.0)),
            light_changes=tuple(LightChange(float(c["t0"]), float(c["t1"]), float(c["gain"]))
                                for c in e.get("light_changes", ())),
            nudges=tuple(Nudge(float(n["t"]), tuple(n.get("d_rvec", (0.002, -0.001, 0.0))),  # type: ignore[arg-type]
                               tuple(n.get("d_tvec", (3.0, 0.0, 0.0)))) for n in e.get("nudges", ())),  # type: ignore[arg-type]
            draw_cue=bool(e.get("cue", True)),
            arms=tuple(Arm(float(a["t0"]), float(a["t1"]), tuple(a["entry"]), tuple(a["hand"]))  # type: ignore[arg-type]
                       for a in e.get("arms", ())),
        )

    def simulate(self) -> Trajectory:
        """Run the physics: shots in order, each timed absolutely or after the table came to rest."""
        table = self.table_spec()
        sim = Simulator(table, self.start_layout(), pins=pins_for(self.discipline))
        sim.schedule(self.extras)
        for spec in self.shots:
            sim.run(until=spec.t) if spec.t is not None else sim.run()
            t = spec.t if spec.t is not None else sim.t + spec.after_rest
            sim.schedule([self._strike(spec, t, sim)])
        sim.run()
        return sim.run(until=sim.t + self.tail_s)

    def _strike(self, spec: ShotSpec, t: float, sim: Simulator) -> Strike:
        positions = {b: (float(sim.p[k, 0]), float(sim.p[k, 1])) for k, b in enumerate(sim.ids)
                     if sim.status[k] == ON_TABLE}
        direction = spec.direction
        if direction is None:
            direction = aim_direction(positions, spec, sim.table)
        shooter = spec.shooter
        return Strike(t, spec.ball, spec.speed, direction, spec.tip, spec.push_s, shooter)

    def nominations(self, traj: Trajectory) -> dict[float, str]:
        """Strike time -> nominated ball, for the shots that name one."""
        out = {}
        for spec, strike in zip(self.shots, traj.strikes):
            if spec.nominated:
                out[strike.t] = spec.nominated
        return out


def aim_direction(positions: Mapping[str, tuple[float, float]], spec: ShotSpec, table: TableSpec) -> float:
    """The cue line: at a ball (full hit, or ``cut`` of a ball's width to the side), or the ghost-ball line that
    pots ``spec.pot[0]`` into pocket ``spec.pot[1]``."""
    cue = positions[spec.ball]
    d = table.ball_diameter
    if spec.pot is not None:
        target = positions[spec.pot[0]]
        pocket = table.pocket(spec.pot[1])
        aim_at = _pocket_aim_point(table, pocket)
        ux, uy = aim_at[0] - target[0], aim_at[1] - target[1]
        n = math.hypot(ux, uy)
        ghost = (target[0] - d * ux / n, target[1] - d * uy / n)
        return math.degrees(math.atan2(ghost[1] - cue[1], ghost[0] - cue[0]))
    if spec.aim is None:
        raise ValueError(f"shot on {spec.ball}: give direction, aim or pot")
    target = positions[spec.aim]
    base = math.atan2(target[1] - cue[1], target[0] - cue[0])
    dist = math.hypot(target[0] - cue[0], target[1] - cue[1])
    # A cut of c: the cue ball's centre passes c * d to the right of the object ball's centre.
    off = max(-0.999, min(0.999, spec.cut)) * d
    return math.degrees(base - math.asin(max(-1.0, min(1.0, off / dist))))


def _pocket_aim_point(table: TableSpec, pocket) -> tuple[float, float]:
    """A point a little inside the pocket's mouth, on its axis (aiming at the drop point over-cuts corners)."""
    (x0, y0), (x1, y1) = pocket.jaws
    return ((x0 + x1) / 2 * 0.6 + pocket.drop[0] * 0.4, (y0 + y1) / 2 * 0.6 + pocket.drop[1] * 0.4)


# --- random scenarios ---------------------------------------------------------------------------------------------

def random_scenario(discipline: str, seed: int, *, camera: Mapping[str, Any] | None = None) -> Scenario:
    """A random legal layout and one plausible shot: the shooter's ball aimed at an object ball with a random
    cut, a speed between a soft and a firm shot, and a tip inside the miscue limit."""
    rng = random.Random(seed)
    table = table_for(discipline)
    layout = random_layout(discipline, rng, table)
    shooter = rng.choice(("A", "B"))
    cue = cue_ball_for(discipline, shooter)
    others = [b for b in layout if b != cue]
    r, a = 0.45 * math.sqrt(rng.random()), rng.uniform(0, 2 * math.pi)
    shot = ShotSpec(
        ball=cue, speed=rng.uniform(1200.0, 4500.0), aim=rng.choice(others), cut=rng.uniform(-0.8, 0.8),
        tip=(round(r * math.cos(a), 3), round(r * math.sin(a), 3)), t=0.5 if camera is None else 1.5,
        shooter=shooter,
    )
    return Scenario(discipline=discipline, name=f"random_{discipline}_{seed}", seed=seed, layout=layout,
                    shots=(shot,), camera=dict(camera or {}))


# --- JSON helpers ---------------------------------------------------------------------------------------------

def _shot_from_dict(s: Mapping[str, Any]) -> ShotSpec:
    known = {"ball", "speed", "direction", "aim", "cut", "pot", "tip", "t", "after_rest", "shooter", "push_s",
             "nominated"}
    unknown = sorted(set(s) - known)
    if unknown:
        raise ValueError(f"scenario shot: unknown field {unknown[0]!r}")
    return ShotSpec(
        ball=s["ball"], speed=float(s["speed"]), direction=None if s.get("direction") is None else float(s["direction"]),
        aim=s.get("aim"), cut=float(s.get("cut", 0.0)), pot=tuple(s["pot"]) if s.get("pot") else None,  # type: ignore[arg-type]
        tip=tuple(s.get("tip", (0.0, 0.0))), t=None if s.get("t") is None else float(s["t"]),  # type: ignore[arg-type]
        after_rest=float(s.get("after_rest", DEFAULT_AFTER_REST)), shooter=s.get("shooter"),
        push_s=float(s.get("push_s", 0.0)), nominated=s.get("nominated"),
    )


def _shot_to_dict(s: ShotSpec) -> dict[str, Any]:
    d: dict[str, Any] = {"ball": s.ball, "speed": s.speed, "tip": list(s.tip)}
    for name in ("direction", "aim", "t", "shooter", "nominated"):
        if getattr(s, name) is not None:
            d[name] = getattr(s, name)
    if s.cut:
        d["cut"] = s.cut
    if s.pot:
        d["pot"] = list(s.pot)
    if s.t is None:
        d["after_rest"] = s.after_rest
    if s.push_s:
        d["push_s"] = s.push_s
    return d


def _extra_from_dict(e: Mapping[str, Any]) -> Action:
    kind = e.get("type")
    t = float(e.get("t", 0.0))
    if kind == "touch":
        return Touch(t, e["ball"], tuple(e["velocity"]))  # type: ignore[arg-type]
    if kind == "hand_move":
        return HandMove(t, e["ball"], tuple(e["to"]), float(e.get("duration", 0.6)))  # type: ignore[arg-type]
    if kind == "leave_table":
        return LeaveTable(t, e["ball"])
    if kind == "knock_pin":
        return KnockPin(t, e["pin"], float(e.get("direction", 0.0)))
    raise ValueError(f"scenario extra: unknown type {kind!r} (touch, hand_move, leave_table, knock_pin)")


def _extra_to_dict(a: Action) -> dict[str, Any]:
    if isinstance(a, Touch):
        return {"type": "touch", "t": a.t, "ball": a.ball, "velocity": list(a.velocity)}
    if isinstance(a, HandMove):
        return {"type": "hand_move", "t": a.t, "ball": a.ball, "to": list(a.to), "duration": a.duration}
    if isinstance(a, LeaveTable):
        return {"type": "leave_table", "t": a.t, "ball": a.ball}
    if isinstance(a, KnockPin):
        return {"type": "knock_pin", "t": a.t, "pin": a.pin, "direction": a.direction_deg}
    raise TypeError(a)


def _jsonable(x: Any) -> Any:
    if isinstance(x, Mapping):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    return x
