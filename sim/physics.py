"""Ball physics on the virtual table: sliding and rolling on the cloth, spin, collisions, cushions, pockets, pins.

Finely stepped (``PhysicsParams.dt``, 0.5 ms) and vectorised over the balls. Within a step each ball's motion is
integrated in closed form (a sliding ball's contact slip decays linearly until it rolls; a rolling ball decelerates
at mu_roll * g until it stops), and the earliest contact inside the step is found by solving for the time the
straight chord of each path meets it. The simulation is advanced exactly to that time, the contact resolved, and
the rest of the step carried on: so every event's time is exact to well under a microsecond, not rounded to a
step. Deterministic: there is no randomness in here at all (scenarios make their own seeded choices).

Units: table millimetres, seconds, radians; masses are per unit ball mass (all balls weigh the same).
Spin: omega (N, 3) in rad/s in the table frame; the cloth contact point is at -R z.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

import numpy as np

from rules import events as ev
from rules.events import Event
from rules.tables import TableSpec

from .actions import Action, HandMove, KnockPin, LeaveTable, Strike, Touch, unit
from .geometry import TableGeometry, build_geometry
from .params import G, PhysicsParams
from .trajectory import OFF_TABLE, ON_TABLE, POTTED, PinRecord, StrikeRecord, Trajectory

_SLIP_EPS = 1e-3  # mm/s: below this the contact point is taken as not slipping (the ball rolls)
_SPEED_EPS = 1e-6  # mm/s: below this a rolling ball is at rest
_PENETRATION_TOL = 1.0  # mm: a ball this far inside a contact and approaching still collides (at once)
_SAME_TIME = 1e-9  # s: contacts this close together are resolved as simultaneous (a corner: two cushions)
_MAX_CONTACTS_PER_STEP = 2000  # a hard break into a tight rack needs hundreds in its first step
_FLIGHT_S = 0.5  # a ball that jumped the cushion is followed this long, then stops (on the floor, out of view)
_PIN_RESTITUTION = 0.5
_SAME_CONTACT_S = 0.005  # s: a pair touching again this soon after its last touch has not parted: one contact


@dataclass
class _Drive:
    """A ball held to a velocity by something with a lot more mass than it: a pushing cue, a hand."""

    ball: int
    velocity: np.ndarray
    t_end: float
    target: np.ndarray | None = None


@dataclass(order=True)
class _Pending:
    t: float
    order: int
    action: object = field(compare=False)


class Simulator:
    """One table, its balls (and Chapó pins), a list of actions; ``run()`` gives the exact ``Trajectory``."""

    def __init__(self, table: TableSpec, layout: Mapping[str, Sequence[float]], *,
                 pins: Iterable[str] = (), params: PhysicsParams | None = None) -> None:
        self.table = table
        self.params = params or PhysicsParams()
        self.geometry: TableGeometry = build_geometry(table)
        self._geo = self.geometry.arrays()
        self._mouths = np.array([table.pocket(pk.name).mouth for pk in self.geometry.pockets])
        self.ids = tuple(layout)
        self.R = table.ball_radius
        n = len(self.ids)
        self.p = np.array([layout[b] for b in self.ids], dtype=float).reshape(n, 2)
        self.v = np.zeros((n, 2))
        self.w = np.zeros((n, 3))
        self.q = np.tile(np.array([1.0, 0.0, 0.0, 0.0]), (n, 1))
        self.status = np.full(n, ON_TABLE, dtype=np.int8)
        self.flight_end = np.full(n, np.inf)
        self.leave_armed = np.zeros(n, dtype=bool)
        self.pin_ids = tuple(pins)
        self.pin_spots = np.array([table.spots[p] for p in self.pin_ids], dtype=float).reshape(-1, 2)
        self.pin_up = np.ones(len(self.pin_ids), dtype=bool)
        self.pin_down_t: list[float | None] = [None] * len(self.pin_ids)
        self.pin_dir = np.zeros((len(self.pin_ids), 2))
        self.pin_by: list[str | None] = [None] * len(self.pin_ids)
        self.t = 0.0
        self.events: list[Event] = []
        self.strikes: list[StrikeRecord] = []
        self.drives: list[_Drive] = []
        self.rest_times: list[float] = []
        self.shot_starts: list[tuple[float, str | None]] = []
        self._samples: list[tuple] = []
        self._pending: list[_Pending] = []
        self._order = 0
        self._pair_contact: dict[tuple[int, int], float] = {}

    # --- public ---------------------------------------------------------------------------------------------

    def schedule(self, actions: Iterable[Action]) -> None:
        for a in actions:
            self._push(a.t, a)

    def run(self, until: float | None = None, settle: bool = True) -> Trajectory:
        """Carry out every scheduled action; stop when all is at rest after the last one (``settle``) or at
        ``until``. The trajectory's last sample is at the stop time."""
        self._sample()
        limit = math.inf if until is None else until
        while True:
            moving = self._any_moving()
            if not moving:
                if not self._pending:
                    break
                nxt = self._pending[0].t
                if nxt > limit:
                    break
                if nxt > self.t:
                    self.t = nxt
                    self._sample()
            if self.t >= limit:
                break
            nxt = self._pending[0].t if self._pending else math.inf
            h = min(self._step_size(), nxt - self.t, limit - self.t)
            if h > 0:
                self._step(h)
            while self._pending and self._pending[0].t <= self.t + 1e-12:
                self._apply(self._pending.pop(0).action)
            if moving and not self._any_moving():
                self.rest_times.append(self.t)
                self._sample()
        if until is not None and self.t < until:
            self.t = until
            self._sample()
        return self._trajectory()

    # --- state queries --------------------------------------------------------------------------------------

    def _slip(self) -> np.ndarray:
        return self.v + self.R * np.stack([-self.w[:, 1], self.w[:, 0]], axis=1)

    def _moving_mask(self) -> np.ndarray:
        on = self.status == ON_TABLE
        speed = np.linalg.norm(self.v, axis=1)
        slip = np.linalg.norm(self._slip(), axis=1)
        flying = (self.status == OFF_TABLE) & (self.flight_end > self.t)
        m = (on & ((speed > _SPEED_EPS) | (slip > _SLIP_EPS))) | flying
        for d in self.drives:
            m[d.ball] = True
        return m

    def _step_size(self) -> float:
        """The fine step while any ball slides (its path curves), a longer one while all roll in straight lines:
        a chord of a straight path is the path, so contacts stay exact; only the sampling gets coarser."""
        on = self.status == ON_TABLE
        slip = np.linalg.norm(self._slip(), axis=1)
        if (on & (slip > _SLIP_EPS)).any() or self.drives:
            return self.params.dt
        return self.params.dt_rolling

    def _any_moving(self) -> bool:
        return bool(self._moving_mask().any())

    def energy(self) -> float:
        """Kinetic energy per unit ball mass of the balls on the cloth: v^2/2 + (2/5) R^2 |w|^2 / 2."""
        on = self.status == ON_TABLE
        lin = 0.5 * (self.v[on] ** 2).sum()
        rot = 0.5 * 0.4 * self.R ** 2 * (self.w[on] ** 2).sum()
        return float(lin + rot)

    # --- the step ---------------------------------------------------------------------------------------------

    def _step(self, h: float) -> None:
        for d in self.drives:
            self._hold(d)
        remaining = h
        skip: set[tuple] = set()
        for _ in range(_MAX_CONTACTS_PER_STEP):
            p0 = self.p.copy()
            end = self._free_motion(remaining)
            tau, hits = self._earliest_contact(p0, end[0] - p0, remaining, skip)
            if not hits:
                self._commit(end, remaining)
                break
            h_hit = self._refine(hits[0], tau * remaining, remaining)
            self._commit(self._free_motion(h_hit), h_hit)
            acted = [self._resolve(hit) for hit in hits]
            if h_hit <= 0:
                # The chord said "closing in" but the velocity at the contact already separates (a curving
                # sliding ball): nothing to resolve; leave that contact out for the rest of this step.
                skip.update(hit for hit, did in zip(hits, acted) if not did)
            if any(acted):
                self._sample()
            remaining -= h_hit
            if remaining <= 1e-12:
                break
        else:
            self._commit(self._free_motion(remaining), remaining)
        self._sample()

    def _commit(self, state: tuple[np.ndarray, np.ndarray, np.ndarray], h: float) -> None:
        p, v, w = state
        # Orientation: rotate by the mean angular velocity over the interval (exact for constant spin).
        self.q = _rotate_quaternions(self.q, 0.5 * (self.w + w) * h)
        self.p, self.v, self.w = p, v, w
        self.t += h
        flown = (self.status == OFF_TABLE) & (self.flight_end <= self.t)
        self.v[flown] = 0.0
        self.w[flown] = 0.0

    def _free_motion(self, h: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Closed-form motion over ``h`` with no contacts: slide (slip decays at 7/2 mu_s g) then roll."""
        prm, R = self.params, self.R
        p, v, w = self.p.copy(), self.v.copy(), self.w.copy()
        on = self.status == ON_TABLE
        fly = (self.status == OFF_TABLE) & (self.flight_end > self.t)
        p[fly] += v[fly] * h  # jumped the cushion: no cloth under it
        if h <= 0:
            return p, v, w
        a_s = prm.mu_slide * G
        u = v + R * np.stack([-w[:, 1], w[:, 0]], axis=1)
        us = np.linalg.norm(u, axis=1)
        sliding = on & (us > _SLIP_EPS)
        uhat = np.where(sliding[:, None], u / np.where(us > 0, us, 1.0)[:, None], 0.0)
        t_roll = us / (3.5 * a_s)
        h1 = np.where(sliding, np.minimum(h, t_roll), 0.0)
        p += v * h1[:, None] - 0.5 * a_s * uhat * (h1 ** 2)[:, None]
        v -= a_s * uhat * h1[:, None]
        w[:, 0] -= 2.5 * a_s * uhat[:, 1] / R * h1
        w[:, 1] += 2.5 * a_s * uhat[:, 0] / R * h1
        # Rolling for what is left of the interval (all of it for a ball that was already rolling).
        rolling = on & (~sliding | (t_roll <= h))
        h2 = np.where(rolling, h - h1, 0.0)
        speed = np.linalg.norm(v, axis=1)
        vhat = v / np.where(speed > 0, speed, 1.0)[:, None]
        b = prm.mu_roll * G
        h2c = np.minimum(h2, speed / b)
        travel = speed * h2c - 0.5 * b * h2c ** 2
        p += np.where(rolling[:, None], vhat * travel[:, None], 0.0)
        new_speed = np.where(rolling, np.maximum(0.0, speed - b * h2c), speed)
        new_speed = np.where(rolling & (new_speed < _SPEED_EPS), 0.0, new_speed)
        v = np.where(rolling[:, None], vhat * new_speed[:, None], v)
        # A rolling ball's spin about the horizontal follows its velocity exactly (no slip).
        w[:, 0] = np.where(rolling, -v[:, 1] / R, w[:, 0])
        w[:, 1] = np.where(rolling, v[:, 0] / R, w[:, 1])
        # Side spin (about z) drills into the cloth and decays at a constant rate.
        wz = w[:, 2]
        w[:, 2] = np.where(on, np.sign(wz) * np.maximum(0.0, np.abs(wz) - prm.spin_decel * h), wz)
        return p, v, w

    # --- contacts ---------------------------------------------------------------------------------------------

    def _earliest_contact(self, p0: np.ndarray, disp: np.ndarray, h: float,
                          skip: set[tuple] = frozenset()) -> tuple[float, list[tuple]]:  # type: ignore[assignment]
        """The first contact along the chords p0 + tau * disp, tau in [0, 1], and every contact at that time."""
        R = self.R
        g = self._geo
        on = self.status == ON_TABLE
        cands: list[tuple[float, tuple]] = []
        moving = on & (np.abs(disp).sum(axis=1) > 0)
        if not moving.any():
            return 1.0, []
        idx_on = np.flatnonzero(on)
        # Ball-ball: |dp + tau dd| = 2R, approaching.
        if len(idx_on) > 1:
            i, j = np.triu_indices(len(idx_on), 1)
            i, j = idx_on[i], idx_on[j]
            keep = moving[i] | moving[j]
            i, j = i[keep], j[keep]
            tau = _sphere_toi(p0[j] - p0[i], disp[j] - disp[i], 2 * R)
            for k in np.flatnonzero(tau <= 1.0):
                cands.append((tau[k], ("ball", int(i[k]), int(j[k]))))
        mi = np.flatnonzero(moving)
        pm, dm = p0[mi], disp[mi]
        # Cushion lines: signed clearance s(tau) = (p - a).n - R reaches 0 while approaching, within the segment.
        if len(g["seg_a"]):
            rel = pm[:, None, :] - g["seg_a"][None]
            s0 = (rel * g["seg_n"][None]).sum(-1) - R
            ds = (dm[:, None, :] * g["seg_n"][None]).sum(-1)
            with np.errstate(divide="ignore", invalid="ignore"):
                tau = np.where((ds < 0) & (s0 >= -_PENETRATION_TOL), np.maximum(0.0, -s0 / ds), np.inf)
            tau_f = np.where(np.isfinite(tau), tau, 0.0)
            along = ((rel + tau_f[..., None] * dm[:, None, :]) * g["seg_t"][None]).sum(-1)
            tau = np.where((along >= 0) & (along <= g["seg_len"][None]), tau, np.inf)
            for a, k in zip(*np.nonzero(tau <= 1.0)):
                cands.append((tau[a, k], ("line", int(mi[a]), int(k))))
        # Round jaw points.
        if len(g["pts"]):
            tau = _sphere_toi((g["pts"][None] - pm[:, None, :]).reshape(-1, 2),
                              np.repeat(-dm, len(g["pts"]), axis=0), R).reshape(len(mi), -1)
            for a, k in zip(*np.nonzero(tau <= 1.0)):
                cands.append((tau[a, k], ("point", int(mi[a]), int(k))))
        # Pockets: a channel's drop line crossed outwards near the drop point, or a hole's rim entered.
        if len(g["pocket_drop"]):
            rel = pm[:, None, :] - g["pocket_drop"][None]
            f0 = (rel * g["pocket_axis"][None]).sum(-1)
            df = (dm[:, None, :] * g["pocket_axis"][None]).sum(-1)
            with np.errstate(divide="ignore", invalid="ignore"):
                tau_line = np.where((df > 0) & (f0 <= 0), -f0 / df, np.inf)
            cross = rel + np.where(np.isfinite(tau_line), tau_line, 0.0)[..., None] * dm[:, None, :]
            lateral = np.abs(cross[..., 0] * g["pocket_axis"][None, :, 1] - cross[..., 1] * g["pocket_axis"][None, :, 0])
            mouth = self._mouths
            tau_line = np.where(lateral <= mouth[None] / 2 + R, tau_line, np.inf)
            hole = g["pocket_hole"]
            tau_hole = _disc_entry((rel).reshape(-1, 2), np.repeat(dm, len(hole), axis=0),
                                   np.tile(hole, len(mi))).reshape(len(mi), -1)
            tau = np.where(hole[None] > 0, tau_hole, tau_line)
            for a, k in zip(*np.nonzero(tau <= 1.0)):
                cands.append((tau[a, k], ("pocket", int(mi[a]), int(k))))
        # Standing pins: the ball's surface meets the pin's base cylinder.
        if self.pin_up.any():
            up = np.flatnonzero(self.pin_up)
            reach = R + self.table.pin_base_diameter / 2
            tau = _sphere_toi((self.pin_spots[up][None] - pm[:, None, :]).reshape(-1, 2),
                              np.repeat(-dm, len(up), axis=0), reach).reshape(len(mi), -1)
            for a, k in zip(*np.nonzero(tau <= 1.0)):
                cands.append((tau[a, k], ("pin", int(mi[a]), int(up[k]))))
        if skip:
            cands = [c for c in cands if c[1] not in skip]
        if not cands:
            return 1.0, []
        t_min = min(c[0] for c in cands)
        same = [c[1] for c in cands if (c[0] - t_min) * h <= _SAME_TIME]
        return float(t_min), same

    def _gap(self, hit: tuple, p: np.ndarray) -> float:
        """Signed clearance of a contact at positions ``p``: zero at the contact, positive before it."""
        kind, b = hit[0], hit[1]
        R = self.R
        if kind == "ball":
            return float(np.linalg.norm(p[hit[2]] - p[b])) - 2 * R
        if kind == "line":
            seg = self.geometry.segments[hit[2]]
            return float((p[b] - np.array(seg.a)) @ np.array(seg.normal)) - R
        if kind == "point":
            return float(np.linalg.norm(p[b] - np.array(self.geometry.points[hit[2]][0]))) - R
        if kind == "pocket":
            pk = self.geometry.pockets[hit[2]]
            rel = p[b] - np.array(pk.drop)
            if pk.hole_radius > 0:
                return float(np.linalg.norm(rel)) - pk.hole_radius
            return -float(rel @ np.array(pk.axis))
        return float(np.linalg.norm(p[b] - self.pin_spots[hit[2]])) - (R + self.table.pin_base_diameter / 2)

    def _refine(self, hit: tuple, t0: float, h: float) -> float:
        """Correct a contact time found on the chords to the true motion (a decelerating ball's position is
        quadratic in time, so the chord's linear timing is off by ~ b h^2 / 8v): secant steps on the clearance."""
        if t0 <= 0.0:
            return 0.0
        g0 = self._gap(hit, self._free_motion(t0)[0])
        if abs(g0) < 1e-9:
            return t0
        t1 = t0 * (1 - 1e-3) if g0 < 0 else min(h, t0 * (1 + 1e-3) + 1e-9)
        g1 = self._gap(hit, self._free_motion(t1)[0])
        for _ in range(6):
            if g1 == g0:
                break
            t2 = min(h, max(0.0, t1 - g1 * (t1 - t0) / (g1 - g0)))
            t0, g0 = t1, g1
            t1 = t2
            g1 = self._gap(hit, self._free_motion(t1)[0])
            if abs(g1) < 1e-9:
                break
        # Never step past the contact: a hair early leaves a hair of gap, which the next search finds at once.
        return t1 if g1 >= -1e-6 else t0 if g0 >= -1e-6 else t1

    def _resolve(self, hit: tuple) -> bool:
        """Carry out one contact; False when there was nothing to do (already separating, already gone)."""
        kind = hit[0]
        if kind == "ball":
            return self._ball_ball(hit[1], hit[2])
        if kind == "line":
            seg = self.geometry.segments[hit[2]]
            return self._cushion(hit[1], np.array(seg.normal), seg.cushion)
        if kind == "point":
            q, name = self.geometry.points[hit[2]]
            n = self.p[hit[1]] - np.array(q)
            return self._cushion(hit[1], n / np.linalg.norm(n), name)
        if kind == "pocket":
            b = hit[1]
            if self.status[b] != ON_TABLE:
                return False
            self.status[b] = POTTED
            self.v[b] = 0.0
            self.w[b] = 0.0
            self.events.append(ev.pocket(self.t, self.ids[b], self.geometry.pockets[hit[2]].name))
            return True
        return self._ball_pin(hit[1], hit[2])

    def _ball_ball(self, i: int, j: int) -> bool:
        """Equal masses: the normal impulse with restitution, then cloth-free ball-ball friction (throw)."""
        if self.status[i] != ON_TABLE or self.status[j] != ON_TABLE:
            return False
        prm, R = self.params, self.R
        n = self.p[j] - self.p[i]
        n /= np.linalg.norm(n)
        vn = float((self.v[i] - self.v[j]) @ n)
        if vn <= 0:
            return False
        jn = 0.5 * (1 + prm.e_ball) * vn
        self.v[i] -= jn * n
        self.v[j] += jn * n
        n3 = np.array([n[0], n[1], 0.0])
        vi = np.array([*self.v[i], 0.0]) + np.cross(self.w[i], R * n3)
        vj = np.array([*self.v[j], 0.0]) + np.cross(self.w[j], -R * n3)
        slip = vi - vj
        slip -= (slip @ n3) * n3
        s = float(np.linalg.norm(slip))
        if s > 1e-9:
            # Each ball's contact point answers an impulse J by 3.5 J (1 + R^2 m / I); together 7 J stops the slip.
            jt = min(prm.mu_ball * jn, s / 7.0) * slip / s
            self.v[i] -= jt[:2]
            self.v[j] += jt[:2]
            self.w[i] += np.cross(R * n3, -jt) / (0.4 * R * R)
            self.w[j] += np.cross(-R * n3, jt) / (0.4 * R * R)
        # One contact is one event: a pair still pressed together (a ball pushing the one ahead of it, the chatter
        # of a tight rack) re-collides every step; those re-contacts are the same contact.
        last = self._pair_contact.get((i, j))
        self._pair_contact[(i, j)] = self.t
        if last is None or self.t - last > _SAME_CONTACT_S:
            self.events.append(ev.ball_ball(self.t, self.ids[i], self.ids[j]))
        return True

    def _cushion(self, b: int, n: np.ndarray, name: str) -> bool:
        """Rebound off a cushion whose inward normal is ``n``; friction at the nose turns side spin into angle."""
        prm, R = self.params, self.R
        vn = float(self.v[b] @ n)
        if vn >= 0 or self.status[b] != ON_TABLE:
            return False
        if self.leave_armed[b]:
            self.leave_armed[b] = False
            self.status[b] = OFF_TABLE
            self.flight_end[b] = self.t + _FLIGHT_S
            self.events.append(ev.off_table(self.t, self.ids[b]))
            return True
        jn = (1 + prm.e_cushion) * -vn
        self.v[b] += jn * n
        # The nose touches above the centre: contact point r = R(-n cos(theta) + z sin(theta)).
        sin_t = min(0.9, max(0.0, 2 * prm.cushion_nose_height - 1.0))
        cos_t = math.sqrt(1 - sin_t * sin_t)
        r = R * np.array([-n[0] * cos_t, -n[1] * cos_t, sin_t])
        t_dir = np.array([-n[1], n[0], 0.0])  # horizontal tangent along the rail
        vc = np.array([*self.v[b], 0.0]) + np.cross(self.w[b], r)
        slip = float(vc @ t_dir)
        if abs(slip) > 1e-9:
            jt = -math.copysign(min(prm.mu_cushion * jn, abs(slip) / 3.5), slip)
            self.v[b] += jt * t_dir[:2]
            self.w[b] += np.cross(r, jt * t_dir) / (0.4 * R * R)
        self.events.append(ev.cushion(self.t, self.ids[b], name))
        return True

    def _ball_pin(self, b: int, k: int) -> bool:
        n = self.pin_spots[k] - self.p[b]
        n /= np.linalg.norm(n)
        vn = float(self.v[b] @ n)
        if vn <= 0 or not self.pin_up[k] or self.status[b] != ON_TABLE:
            return False
        mu = self.params.pin_mass_ratio
        self.v[b] -= (1 + _PIN_RESTITUTION) * mu / (1 + mu) * vn * n
        self._pin_falls(k, n, "ball")
        return True

    def _pin_falls(self, k: int, direction: np.ndarray, by: str) -> None:
        self.pin_up[k] = False
        self.pin_down_t[k] = self.t
        self.pin_dir[k] = direction
        self.pin_by[k] = by
        self.events.append(ev.pin_down(self.t, self.pin_ids[k], by))

    # --- scripted actions -------------------------------------------------------------------------------------

    def _push(self, t: float, action: object) -> None:
        self._pending.append(_Pending(t, self._order, action))
        self._order += 1
        self._pending.sort()

    def _apply(self, a: object) -> None:
        if isinstance(a, Strike):
            self._strike(a)
        elif isinstance(a, Touch):
            b = self.ids.index(a.ball)
            if not self._any_moving():
                self.shot_starts.append((self.t, None))
            self.v[b] = np.asarray(a.velocity, dtype=float)
            self.events.append(ev.touched(self.t, a.ball))
        elif isinstance(a, HandMove):
            b = self.ids.index(a.ball)
            if not self._any_moving():
                self.shot_starts.append((self.t, None))
            target = np.asarray(a.to, dtype=float)
            vel = (target - self.p[b]) / a.duration
            self.drives.append(_Drive(b, vel, self.t + a.duration, target))
            self._push(self.t + a.duration, ("release", b))
            self.events.append(ev.touched(self.t, a.ball))
        elif isinstance(a, LeaveTable):
            self.leave_armed[self.ids.index(a.ball)] = True
        elif isinstance(a, KnockPin):
            k = self.pin_ids.index(a.pin)
            if self.pin_up[k]:
                self._pin_falls(k, np.array(unit(a.direction_deg)), "other")
        elif isinstance(a, tuple) and a[0] == "release":
            for d in [d for d in self.drives if d.ball == a[1]]:
                self.drives.remove(d)
                if d.target is not None:  # a hand puts the ball down where it meant to, at rest
                    self.p[d.ball] = d.target
                    self.v[d.ball] = 0.0
                    self.w[d.ball] = 0.0
        self._sample()

    def _strike(self, a: Strike) -> None:
        b = self.ids.index(a.ball)
        moving = self._moving_mask()
        others = tuple(self.ids[k] for k in np.flatnonzero(moving) if k != b)
        d = np.array(unit(a.direction_deg))
        side, height = a.tip
        # A level cue through the point (side, height) R of the centre: the angular impulse r x J over I gives
        # w_z = 5 v side / 2R and a horizontal spin 5 v height / 2R about z x d (height 0.4 is natural roll).
        k = 2.5 * a.speed / self.R
        self.v[b] = a.speed * d
        self.w[b] = np.array([-d[1] * k * height, d[0] * k * height, k * side])
        self.strikes.append(StrikeRecord(self.t, a.ball, (float(d[0]), float(d[1])), a.speed, others, a.shooter,
                                         a.push_s))
        self.shot_starts.append((self.t, a.ball))
        self.events.append(ev.strike(self.t, a.ball))
        if a.push_s > 0:
            self.drives.append(_Drive(b, a.speed * d, self.t + a.push_s))
            self._push(self.t + a.push_s, ("release", b))

    def _hold(self, d: _Drive) -> None:
        self.v[d.ball] = d.velocity
        self.w[d.ball, :2] = (-d.velocity[1] / self.R, d.velocity[0] / self.R)

    # --- recording --------------------------------------------------------------------------------------------

    def _sample(self) -> None:
        moving = self._moving_mask()
        if self._samples and self._samples[-1][0] == self.t:
            self._samples.pop()
        self._samples.append((self.t, self.p.copy(), self.status.copy(), self.q.copy(), moving, self.energy()))

    def _trajectory(self) -> Trajectory:
        s = self._samples
        pins = [PinRecord(name, (float(self.pin_spots[k, 0]), float(self.pin_spots[k, 1])), self.pin_down_t[k],
                          (float(self.pin_dir[k, 0]), float(self.pin_dir[k, 1])), self.pin_by[k])
                for k, name in enumerate(self.pin_ids)]
        events = sorted(self.events, key=lambda e: e.t)
        return Trajectory(
            ball_ids=self.ids, radius=self.R,
            times=np.array([x[0] for x in s]), positions=np.array([x[1] for x in s]),
            status=np.array([x[2] for x in s]), orientations=np.array([x[3] for x in s]),
            moving=np.array([x[4] for x in s]), energy=np.array([x[5] for x in s]),
            events=events, strikes=list(self.strikes), pins=pins, rest_times=list(self.rest_times),
            shot_starts=list(self.shot_starts),
        )


# --- closed-form helpers ------------------------------------------------------------------------------------------

def _sphere_toi(dp: np.ndarray, dd: np.ndarray, dist: float) -> np.ndarray:
    """First tau in [0, inf) at which |dp + tau dd| = dist while closing in; inf if never. 0 if already inside
    and closing in (a contact the previous step left a hair's breadth overlapping)."""
    a = (dd * dd).sum(-1)
    b = 2 * (dp * dd).sum(-1)
    c = (dp * dp).sum(-1) - dist * dist
    disc = b * b - 4 * a * c
    closing = b < 0
    with np.errstate(divide="ignore", invalid="ignore"):
        # The stable root 2c / (-b + sqrt(disc)) avoids cancelling two nearly equal numbers.
        tau = np.where(closing & (disc >= 0), 2 * c / (-b + np.sqrt(np.maximum(disc, 0.0))), np.inf)
    tau = np.where(closing & (c <= 0), 0.0, tau)
    return np.where(tau >= 0, tau, np.inf)


def _disc_entry(rel: np.ndarray, d: np.ndarray, radius: np.ndarray) -> np.ndarray:
    """First tau at which a point rel + tau d, outside a disc of ``radius`` round the origin, enters it."""
    a = (d * d).sum(-1)
    b = 2 * (rel * d).sum(-1)
    c = (rel * rel).sum(-1) - radius * radius
    disc = b * b - 4 * a * c
    ok = (radius > 0) & (b < 0) & (disc >= 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = np.where(ok, 2 * c / (-b + np.sqrt(np.maximum(disc, 0.0))), np.inf)
    tau = np.where(ok & (c <= 0), 0.0, tau)
    return np.where(tau >= 0, tau, np.inf)


def _rotate_quaternions(q: np.ndarray, rotvec: np.ndarray) -> np.ndarray:
    """Left-multiply unit quaternions (N, 4) by the rotations of table-frame rotation vectors (N, 3)."""
    angle = np.linalg.norm(rotvec, axis=1)
    half = 0.5 * angle
    s = np.where(angle > 1e-12, np.sin(half) / np.where(angle > 1e-12, angle, 1.0), 0.5)
    dw = np.cos(half)
    dx, dy, dz = (rotvec * s[:, None]).T
    w0, x0, y0, z0 = q.T
    out = np.stack([
        dw * w0 - dx * x0 - dy * y0 - dz * z0,
        dw * x0 + dx * w0 + dy * z0 - dz * y0,
        dw * y0 - dx * z0 + dy * w0 + dz * x0,
        dw * z0 + dx * y0 - dy * x0 + dz * w0,
    ], axis=1)
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def simulate(table: TableSpec, layout: Mapping[str, Sequence[float]], actions: Iterable[Action], *,
             pins: Iterable[str] = (), params: PhysicsParams | None = None, until: float | None = None) -> Trajectory:
    """Convenience: one simulator, its actions, run to rest (or to ``until``)."""
    sim = Simulator(table, layout, pins=pins, params=params)
    sim.schedule(actions)
    return sim.run(until=until)
