"""Render a simulated trajectory through a ``CameraModel``: what the Pi camera would have recorded.

Per frame: the static table (cached per camera and per pin state: the cloth and its chalk from ``table_art``, the
cushions and rails ray-cast as solids by ``table_background``: each cushion's dark face up to the nose, the nose
edge, its lit top, the rail with its diamonds; any cloth colour; uneven light), each ball as a ray-traced sphere with its
shadow at its true 3-D centre (z = R, so parallax is real), integrated over the exposure by averaging sub-frame
renders of the image patches around moving balls (motion blur), the cue and arms on top, then the global light
(flicker, a lighting change), sensor noise and JPEG. Optional rolling shutter (each ball seen at the time its row
is exposed) and camera nudges (the pose changes at a given time; the truth keeps table coordinates). A potted
ball is drawn sinking and darkening for 50 ms after its centre passed the drop point (the truth has it potted from
that instant); a ball that jumped the cushion is drawn a little raised while it is over the rails. The cue, arms
and bystanders leaning on the table are drawn at mid-exposure, without blur or rolling shutter.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import cv2
import numpy as np

from calibration.camera import CameraModel
from calibration.pose import nose_height_mm
from rules.tables import TableSpec

from .ball_art import BallDraw, BallLook, SphereShader, draw_pin
from .layouts import ball_colour
from .occluders import Arm, draw_arm, draw_cue
from .table_art import BORDER, CLOTH_BGR, CUSHION_W, Background, TableArt, family
from .params import G
from .trajectory import OFF_TABLE, ON_TABLE, POTTED, Trajectory

_FLIGHT_RISE = 40.0  # mm: a ball that jumped the cushion is drawn this much higher
_SINK_S = 0.05  # s: a potted ball is drawn falling (and darkening) this long after its centre passed the drop


@dataclass(frozen=True)
class Nudge:
    """Someone bumps the camera at ``t``: an extra rotation (camera frame, rad) and shift (camera frame, mm)."""

    t: float
    d_rvec: tuple[float, float, float] = (0.002, -0.001, 0.0)
    d_tvec: tuple[float, float, float] = (3.0, 0.0, 0.0)


@dataclass(frozen=True)
class LightChange:
    """The room light goes from its level to ``gain`` times it between ``t0`` and ``t1``."""

    t0: float
    t1: float
    gain: float


@dataclass(frozen=True)
class Lighting:
    """The room's light over the table: an ambient level, lamp pools (centres as fractions of W and L, radii as
    fractions of W and L, a strength each) and the lens's cos^4 vignetting. The default is two lamps along the
    long axis."""

    ambient: float = 0.78
    lamps: tuple[tuple[float, float], ...] = ((0.5, 0.3), (0.5, 0.7))
    radius: tuple[float, float] = (0.9, 0.45)
    strength: float = 0.16
    vignetting: float = 0.25


@dataclass(frozen=True)
class Bystander:
    """A person standing at the table's edge and leaning on it: the hands rest at ``hands`` (table mm, on the rail,
    the cushion or the cloth), the body stands at ``at`` outside the rail. From an overhead camera the forearms
    and hands cover part of the rail and cushion; the shoulders and head, close to the camera, are mostly out of
    view."""

    at: tuple[float, float]
    hands: tuple[tuple[float, float], ...]
    shirt: tuple[int, int, int] = (70, 52, 48)


@dataclass(frozen=True)
class Effects:
    motion_blur: bool = True
    exposure_s: float = 1 / 500
    max_subframes: int = 12
    noise_sigma: float = 2.0  # 8-bit grey levels; 0 = off
    jpeg_quality: int | None = 92  # None = no compression
    rolling_readout_s: float = 0.0  # first row to last; 0 = global shutter
    flicker: float = 0.0  # relative amplitude of the mains flicker (0.05 = +-5 %)
    flicker_hz: float = 100.0
    light_changes: tuple[LightChange, ...] = ()
    nudges: tuple[Nudge, ...] = ()
    draw_cue: bool = True
    arms: tuple[Arm, ...] = ()
    bystanders: tuple[Bystander, ...] = ()
    lighting: Lighting = Lighting()
    shading: bool = True  # False: balls flat-coloured, no shadows (geometric tests read coverage off colour)

    @classmethod
    def clean(cls, **changes: object) -> "Effects":
        """No blur, noise, compression or occluders: for geometric tests."""
        base = dict(motion_blur=False, noise_sigma=0.0, jpeg_quality=None, draw_cue=False)
        base.update(changes)
        return cls(**base)  # type: ignore[arg-type]


@dataclass
class FrameTruth:
    t: float  # mid-exposure time
    balls: dict[str, dict]
    pins: dict[str, dict] = field(default_factory=dict)
    camera_index: int = 0

    def to_dict(self) -> dict:
        """Compact for the truth files: ``balls`` maps each ball on the cloth to [x, y, u, v, occluded] (cloth mm,
        pixel of its centre, 0/1); ``gone`` maps the others to "potted" or "off_table"; ``pins_down`` lists the
        pins lying down; ``camera`` indexes the truth file's cameras (it changes when the camera is nudged)."""
        balls, gone = {}, {}
        for b, e in self.balls.items():
            if e["status"] == "on_table":
                balls[b] = [*e["xy"], *e["px"], int(e["occluded"])]
            else:
                gone[b] = e["status"]
        d: dict = {"t": round(self.t, 6), "balls": balls}
        if gone:
            d["gone"] = gone
        if self.pins:
            d["pins_down"] = [p for p, st in self.pins.items() if not st["standing"]]
        d["camera"] = self.camera_index
        return d


class Renderer:
    def __init__(self, table: TableSpec, discipline: str, camera: CameraModel, trajectory: Trajectory,
                 effects: Effects | None = None, seed: int = 0, texture_scale: float | None = None,
                 cloth_bgr: tuple[int, int, int] | None = None) -> None:
        """``cloth_bgr``: the cloth's colour (default: the discipline's usual cloth)."""
        self.table = table
        self.discipline = discipline
        self.traj = trajectory
        self.fx = effects or Effects()
        self.rng = np.random.default_rng(seed)
        ppm = float(camera.pixels_per_mm([table.width / 2, table.length / 2]))
        scale = texture_scale or float(np.clip(2.0 * ppm, 0.25, 1.5))
        self.art = TableArt(table, discipline, scale=scale, seed=seed + 7)
        default_cloth = np.array(CLOTH_BGR[family(discipline)], dtype=np.float32)
        self.cloth_bgr = default_cloth if cloth_bgr is None else np.array(cloth_bgr, dtype=np.float32)
        if cloth_bgr is not None:
            self.art.texture = _recolour_cloth(self.art.texture, default_cloth, self.cloth_bgr)
        self.cameras = [camera]
        for n in self.fx.nudges:
            self.cameras.append(self.cameras[-1].moved(n.d_rvec, n.d_tvec))
        self._bg: dict[int, tuple[Background, np.ndarray]] = {}
        self._pin_bg: dict[tuple, np.ndarray] = {}
        self.looks = {b: BallLook(*ball_colour(b, discipline)) for b in trajectory.ball_ids}
        if discipline == "bilhar":
            self.looks = {b: BallLook(lk.colour, "numbered" if lk.pattern == "plain" and b != "cue" else lk.pattern)
                          for b, lk in self.looks.items()}
        self._noise = self._noise_bank(camera.image_size) if self.fx.noise_sigma > 0 else None
        self._ppm = float(camera.pixels_per_mm([table.width / 2, table.length / 2]))
        self._still_patches: dict[tuple, np.ndarray] = {}
        self._pot_t = {e.ball: e.t for e in trajectory.events if e.type.value == "pocket" and e.ball}

    # --- caches -----------------------------------------------------------------------------------------------

    def camera_index(self, t: float) -> int:
        return sum(1 for n in self.fx.nudges if n.t <= t)

    def _background(self, k: int) -> tuple[Background, np.ndarray]:
        if k not in self._bg:
            cam = self.cameras[k]
            w, h = cam.image_size
            u, v = np.meshgrid(np.arange(w, dtype=np.float64), np.arange(h, dtype=np.float64))
            rays = cam.rays(np.stack([u, v], axis=-1))
            bg = table_background(self.art, cam, rays, self.fx.lighting, self.cloth_bgr)
            self._bg[k] = (bg, rays.astype(np.float32))
        return self._bg[k]

    def _with_pins(self, k: int, t: float) -> np.ndarray:
        bg, _ = self._background(k)
        if not self.traj.pins:
            return bg.image
        states = []
        for p in self.traj.pins:
            f = 0.0 if p.down_t is None or t < p.down_t else min(1.0, (t - p.down_t) / 0.12)
            states.append(round(f, 2))
        key = (k, tuple(states))
        if key not in self._pin_bg:
            img = bg.image.copy()
            for p, f in zip(self.traj.pins, states):
                draw_pin(img, self.cameras[k], p.spot, self.table.pin_base_diameter, self.table.pin_height, f,
                         p.direction)
            if len(self._pin_bg) > 64:
                self._pin_bg.clear()
            self._pin_bg[key] = img
        return self._pin_bg[key]

    def _noise_bank(self, size: tuple[int, int], n: int = 4) -> list[tuple[np.ndarray, np.ndarray]]:
        w, h = size
        bank = []
        for _ in range(n):
            z = self.rng.normal(0.0, self.fx.noise_sigma, (h, w, 3))
            bank.append((np.clip(z, 0, 255).astype(np.uint8), np.clip(-z, 0, 255).astype(np.uint8)))
        return bank

    # --- one frame --------------------------------------------------------------------------------------------

    def table_image(self, t: float = 0.0) -> np.ndarray:
        """The empty table (with the pins as they are at ``t``) as the camera sees it, before exposure effects."""
        return self._with_pins(self.camera_index(t), t).copy()

    def _ball_states(self, t: float, cam: CameraModel) -> list[tuple[str, np.ndarray, np.ndarray, int]]:
        pos, status, quat = self.traj.state_at(t)
        out = []
        R = self.traj.radius
        for k, b in enumerate(self.traj.ball_ids):
            if status[k] == ON_TABLE:
                z = R
            elif status[k] == OFF_TABLE and self._flying(k, t):
                z = R + _FLIGHT_RISE
            elif status[k] == POTTED and b in self._pot_t and t - self._pot_t[b] < _SINK_S:
                # Past the drop point the ball falls into the pocket: seen sinking into the dark for a moment.
                dt = t - self._pot_t[b]
                z = R - 0.5 * G * dt * dt
            else:
                continue
            out.append((b, np.array([pos[k, 0], pos[k, 1], z]), quat[k], int(status[k])))
        return out

    def _flying(self, k: int, t: float) -> bool:
        """An off-table ball is drawn while it is still over the rails (near the table)."""
        pos, _, _ = self.traj.state_at(t)
        x, y = pos[k]
        m = 300.0
        return -m <= x <= self.table.width + m and -m <= y <= self.table.length + m

    def render(self, t: float) -> tuple[np.ndarray, FrameTruth]:
        """The frame whose exposure starts at ``t`` and its truth (ball positions at mid-exposure)."""
        fx = self.fx
        k_cam = self.camera_index(t)
        cam = self.cameras[k_cam]
        bg, rays = self._background(k_cam)
        shader = SphereShader(cam, rays, self.traj.radius, fx.shading)
        w, h = cam.image_size
        exposure = fx.exposure_s if fx.motion_blur else 0.0
        t_mid = t + exposure / 2
        base = self._with_pins(k_cam, t)
        frame = base.copy()
        state_cache: dict[float, dict[str, BallDraw]] = {}

        def states(ts: float) -> dict[str, BallDraw]:
            """Every visible ball at ``ts`` (rolling shutter: as seen when its row is read)."""
            if ts not in state_cache:
                out = {}
                for b, centre, q, _ in self._ball_states(ts, cam):
                    if fx.rolling_readout_s > 0:
                        row = float(cam.project(centre)[1])
                        tr = ts + float(np.clip(row / h, 0, 1)) * fx.rolling_readout_s
                        st = {x[0]: x for x in self._ball_states(tr, cam)}
                        if b not in st:
                            continue
                        centre, q = st[b][1], st[b][2]
                    out[b] = BallDraw(centre, q, self.looks[b])
                state_cache[ts] = out
            return state_cache[ts]

        self._composite(frame, bg, shader, t, exposure, states, id(base))
        # Occluders.
        mask = np.zeros((h, w), np.uint8)
        occluder = False
        if fx.draw_cue:
            for s in self.traj.strikes:
                pos_at = self.traj.state_at(s.t)[0][self.traj.index(s.ball)]
                occluder |= draw_cue(frame, mask, cam, s, (float(pos_at[0]), float(pos_at[1])), self.traj.radius,
                                     t_mid)
        for arm in fx.arms:
            occluder |= draw_arm(frame, mask, cam, arm, t_mid)
        for person in fx.bystanders:
            occluder |= draw_bystander(frame, mask, cam, person, self.table)
        # Global light: flicker integrated over the exposure, scripted changes.
        gain = self._global_gain(t, exposure)
        if abs(gain - 1.0) > 1e-3:
            lut = np.clip(np.arange(256) * gain, 0, 255).astype(np.uint8)
            frame = cv2.LUT(frame, lut)
        if self._noise is not None:
            pos_n, neg_n = self._noise[int(self.rng.integers(len(self._noise)))]
            frame = cv2.subtract(cv2.add(frame, pos_n), neg_n)
        if fx.jpeg_quality is not None:
            ok, buf = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, int(fx.jpeg_quality)])
            frame = cv2.imdecode(buf, cv2.IMREAD_COLOR)
        return frame, self._truth(t_mid, cam, mask if occluder else None, k_cam)

    def _composite(self, frame: np.ndarray, bg: Background, shader: SphereShader, t: float, exposure: float,
                   states, base_id: int) -> None:
        """Draw the balls over ``frame``: each group of overlapping balls in its own patch, averaged over as many
        sub-frame renders as its fastest ball needs (one under a pixel of travel between two), a still group
        rendered once and reused from the previous frame when nothing in it changed."""
        w, h = shader.size
        first, last = states(t), states(t + exposure)
        ppm = self._ppm
        boxes, speed = {}, {}
        for b, d0 in first.items():
            d1 = last.get(b, d0)
            speed[b] = float(np.linalg.norm(d1.centre - d0.centre)) * ppm if b in last else 1e9
            x0 = y0 = math.inf
            x1 = y1 = -math.inf
            for d in (d0, d1):
                c, r = shader.extent(d.centre)
                x0, y0 = min(x0, c[0] - r), min(y0, c[1] - r)
                x1, y1 = max(x1, c[0] + r), max(y1, c[1] + r)
            box = (max(0, int(x0) - 2), max(0, int(y0) - 2), min(w, int(x1) + 3), min(h, int(y1) + 3))
            if box[2] > box[0] and box[3] > box[1]:
                boxes[b] = box
        cache: dict[tuple, np.ndarray] = {}
        for group, box in _merge_boxes(boxes):
            x0, y0, x1, y1 = box
            fastest = max(speed[b] for b in group)
            n_sub = 1 if exposure <= 0 or fastest < 0.05 else int(np.clip(math.ceil(fastest / 0.7) + 1, 2,
                                                                           self.fx.max_subframes))
            key = None
            if n_sub == 1:
                key = (base_id, box) + tuple((b, tuple(np.round(first[b].centre, 4)), tuple(np.round(first[b].quat, 4)))
                                             for b in sorted(group))
                if key in self._still_patches:
                    frame[y0:y1, x0:x1] = cache.setdefault(key, self._still_patches[key])
                    continue
            base = frame[y0:y1, x0:x1].astype(np.float32)
            acc = np.zeros_like(base)
            times = [t + (i + 0.5) / n_sub * exposure for i in range(n_sub)] if n_sub > 1 else [t + exposure / 2]
            for ts in times:
                canvas = base.copy()
                at = states(ts)
                draws = [at.get(b, first[b]) for b in group]
                for d in draws:
                    shader.shadow(canvas, x0, y0, d)
                origin = shader.origin
                for d in sorted(draws, key=lambda d: -float(np.linalg.norm(d.centre - origin))):
                    c = shader.camera.project(d.centre)
                    gx = int(np.clip(c[0], 0, w - 1))
                    gy = int(np.clip(c[1], 0, h - 1))
                    sink = max(0.0, (self.traj.radius - float(d.centre[2])) / self.traj.radius)
                    shader.ball(canvas, x0, y0, d, float(bg.gain[gy, gx]), fade=max(0.0, 1.0 - 1.6 * sink))
                acc += canvas
            patch = np.clip(acc / len(times) + 0.5, 0, 255).astype(np.uint8)
            frame[y0:y1, x0:x1] = patch
            if key is not None:
                cache[key] = patch
        self._still_patches = cache  # only what this frame used: a ball that moves drops out

    def _global_gain(self, t: float, exposure: float) -> float:
        fx = self.fx
        g = 1.0
        if fx.flicker > 0:
            ts = t + np.linspace(0, max(exposure, 1e-4), 8)
            g *= 1.0 + fx.flicker * float(np.mean(np.sin(2 * math.pi * fx.flicker_hz * ts)))
        for c in fx.light_changes:
            g *= 1.0 + (c.gain - 1.0) * min(1.0, max(0.0, (t - c.t0) / max(1e-9, c.t1 - c.t0)))
        return g

    def _truth(self, t: float, cam: CameraModel, mask: np.ndarray | None, k_cam: int) -> FrameTruth:
        pos, status, _ = self.traj.state_at(t)
        names = {ON_TABLE: "on_table", 1: "potted", OFF_TABLE: "off_table"}
        balls = {}
        R = self.traj.radius
        w, h = cam.image_size
        for k, b in enumerate(self.traj.ball_ids):
            entry: dict = {"status": names[int(status[k])]}
            if status[k] == ON_TABLE:
                xy = (float(pos[k, 0]), float(pos[k, 1]))
                px = cam.table_to_image(xy, R)
                entry.update({"xy": [round(xy[0], 2), round(xy[1], 2)],
                              "px": [round(float(px[0]), 2), round(float(px[1]), 2)]})
                occluded = False
                if mask is not None:
                    r = cam.focal * R / float(np.linalg.norm(np.array([*xy, R]) - cam.camera_centre))
                    probes = px + np.array([[0, 0], [0.6, 0], [-0.6, 0], [0, 0.6], [0, -0.6]]) * r
                    inside = [(0 <= u < w and 0 <= v < h) and mask[int(v), int(u)] > 0 for u, v in probes]
                    occluded = bool(sum(inside) >= 3)
                entry["occluded"] = occluded
            balls[b] = entry
        pins = {p.name: {"standing": bool(p.down_t is None or t < p.down_t)} for p in self.traj.pins}
        return FrameTruth(t, balls, pins, k_cam)


def _merge_boxes(boxes: dict[str, tuple[int, int, int, int]]) -> list[tuple[list[str], tuple[int, int, int, int]]]:
    """Group balls whose patches overlap (they must be composited together, nearest last)."""
    groups = [([b], box) for b, box in boxes.items()]
    merged = True
    while merged:
        merged = False
        for i in range(len(groups)):
            for j in range(i + 1, len(groups)):
                a, b = groups[i][1], groups[j][1]
                if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]:
                    box = (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))
                    groups[i] = (groups[i][0] + groups[j][0], box)
                    del groups[j]
                    merged = True
                    break
            if merged:
                break
    return groups


def rest_view(table: TableSpec, discipline: str, camera: CameraModel,
              layout: dict[str, tuple[float, float]] | None = None, effects: Effects | None = None,
              cloth_bgr: tuple[int, int, int] | None = None, seed: int = 0) -> np.ndarray:
    """One frame of the table with the balls at rest (``layout``; default: none), as a calibration sees it."""
    from .physics import simulate

    traj = simulate(table, dict(layout or {}), [])
    fx = effects or Effects(motion_blur=False, draw_cue=False)
    return Renderer(table, discipline, camera, traj, fx, seed=seed, cloth_bgr=cloth_bgr).render(0.0)[0]


# --- the static table: cloth, cushions, rails ------------------------------------------------------------------

RAIL_RISE = 6.0  # mm: the rail's top stands this much above the nose; the cushion's top slopes up to it
_FACE_SHADE = (0.2, 0.12)  # the face's lightness under the nose, at the cloth and just under the nose (the darkest)
_TOP_SHADE = 0.84  # the cushion's top: the same cloth, sloping away from the lamps
_FOOT_SHADE = (0.1, 5.0)  # the cloth darkens along the cushion's foot: by this much, over this many mm
_HOLE_BGR = np.array([10.0, 10.0, 10.0])


def table_background(art: TableArt, camera: CameraModel, rays: np.ndarray, lighting: Lighting,
                     cloth_bgr: np.ndarray) -> Background:
    """The empty table as ``camera`` sees it, each pixel's ray cast into the table's solid shape.

    A cushion's cross-section, outwards from the play area's edge (the nose line): the inner face rises from the
    cloth to the nose at ``nose_height_mm`` (the height the calibration measures the nose at), in the shadow under
    the nose; from the nose the cloth-covered top slopes up to the rail, ``CUSHION_W`` further out and
    ``RAIL_RISE`` higher; the wooden rail with its diamonds, ``RAIL_W`` wide; then the floor. The cushions are
    mitred at the corners (the shape is a function of the distance outside the play area), and a pocket cuts
    through cushion and rail where the table art draws its opening. A pixel seeing an edge is mixed in proportion
    to how far it lies across it (a one-pixel ramp on the edge's own distance field), so every edge is where the
    geometry puts it, to a small fraction of a pixel, without supersampling. Seen from above the table (the usual
    view) a cushion shows, from the cloth out: the dark band of its face ending at the nose, the lit top, the
    rail; seen from behind its own line the top hides the face and the nose is the edge of the cloth.
    """
    table = art.table
    W, L = table.width, table.length
    hn = nose_height_mm(table)
    hr = hn + RAIL_RISE
    c = camera.camera_centre
    d = np.asarray(rays, dtype=np.float64)
    dz = np.where(d[..., 2] < -1e-9, d[..., 2], -1e-9)  # a ray that does not go down sees the floor far away

    def hit(z: float) -> np.ndarray:
        s = (z - c[2]) / dz
        return c[:2] + s[..., None] * d[..., :2]

    def beyond(p: np.ndarray) -> np.ndarray:
        return np.maximum(np.maximum(-p[..., 0], p[..., 0] - W), np.maximum(-p[..., 1], p[..., 1] - L))

    p0, pn, pr = hit(0.0), hit(hn), hit(hr)
    o0, on, orr = beyond(p0), beyond(pn), beyond(pr)
    a_rail = _coverage(orr - CUSHION_W)
    a_nose = np.maximum(_coverage(on), a_rail)  # seen from behind, the top hides everything under it
    a_face = np.maximum(_coverage(o0), a_nose)
    # Colours (before the light): the cloth from the table art (clamped inside the play area: the edge pixels mix
    # it with the face by coverage, not by the texture's own blur), the face and the top the plain cloth colour
    # shaded, the rail and floor from the art at the rail's height.
    eps = 1.5 / art.scale
    pc = np.stack([np.clip(p0[..., 0], eps, W - eps), np.clip(p0[..., 1], eps, L - eps)], axis=-1)
    cloth = _sample(art, art.texture, pc).astype(np.float32)
    cloth *= (1.0 - _FOOT_SHADE[0] * np.exp(np.minimum(o0, 0.0) / _FOOT_SHADE[1])).astype(np.float32)[..., None]
    rail = _sample(art, art.texture, pr).astype(np.float32)
    holes = (art.texture.max(axis=2) < 32).astype(np.float32)
    z_face = np.clip(hn * o0 / np.maximum(o0 - on, 1e-9), 0.0, hn)
    # In the shadow the cloth keeps its hue (what light it gets is bounced off the cloth itself): darkened in
    # lightness, not towards black.
    foot_bgr, under_bgr = (_shadowed(cloth_bgr, f) for f in _FACE_SHADE)
    k = (z_face / hn)[..., None]
    h_face = _sample(art, holes, p0)[..., None]
    face = ((1 - h_face) * (foot_bgr + (under_bgr - foot_bgr) * k) + h_face * _HOLE_BGR).astype(np.float32)
    h_top = _sample(art, holes, pn)[..., None]
    top = ((1 - h_top) * (cloth_bgr * _TOP_SHADE)[None, None] + h_top * _HOLE_BGR).astype(np.float32)
    w_cloth = (1.0 - a_face).astype(np.float32)[..., None]
    w_face = (a_face - a_nose).astype(np.float32)[..., None]
    w_top = (a_nose - a_rail).astype(np.float32)[..., None]
    w_rail = a_rail.astype(np.float32)[..., None]
    img = cloth * w_cloth + face * w_face + top * w_top + rail * w_rail
    gain = room_light(lighting, table, camera, p0, d).astype(np.float32)
    lit = np.clip(img * gain[..., None], 0, 255).astype(np.uint8)  # truncated, as the table art always was
    return Background(lit, gain)


def _shadowed(bgr: np.ndarray, lightness: float) -> np.ndarray:
    """The colour ``bgr`` in shadow: its CIELAB lightness scaled by ``lightness``, its chroma kept (within gamut)."""
    lab = cv2.cvtColor(np.clip(bgr, 0, 255).astype(np.uint8).reshape(1, 1, 3), cv2.COLOR_BGR2LAB).astype(np.float32)
    lab[..., 0] *= lightness
    return cv2.cvtColor(np.clip(lab + 0.5, 0, 255).astype(np.uint8), cv2.COLOR_LAB2BGR).reshape(3).astype(np.float32)


def _coverage(e: np.ndarray) -> np.ndarray:
    """The fraction of each pixel beyond the edge ``e = 0`` of a distance field (mm, positive beyond): a ramp one
    pixel wide across it, symmetric about the edge, so the edge's position is not biased."""
    gy, gx = np.gradient(e)
    g = np.maximum(np.hypot(gx, gy), 1e-9)
    return np.clip(0.5 + e / g, 0.0, 1.0)


def _sample(art: TableArt, texture: np.ndarray, p: np.ndarray) -> np.ndarray:
    """The top-down texture at table points ``p`` (..., 2), as the table art's own warp samples it."""
    mx = ((p[..., 0] + BORDER) * art.scale).astype(np.float32)
    my = ((p[..., 1] + BORDER) * art.scale).astype(np.float32)
    floor = (40, 44, 48) if texture.ndim == 3 else 0
    return cv2.remap(texture, mx, my, cv2.INTER_AREA if art.scale > 1.5 else cv2.INTER_LINEAR,
                     borderMode=cv2.BORDER_CONSTANT, borderValue=floor)


def room_light(lighting: Lighting, table: TableSpec, camera: CameraModel, cloth_xy: np.ndarray,
               rays: np.ndarray) -> np.ndarray:
    """Each pixel's light (a gain on its colour) from its point under the cloth plane: the lamp pools, the
    ambient level and the lens's vignetting (normalised so the default is about 1 under the lamps)."""
    W, L = table.width, table.length
    g = np.full(cloth_xy.shape[:-1], lighting.ambient)
    for lx, ly in lighting.lamps:
        d2 = ((cloth_xy[..., 0] - W * lx) / (lighting.radius[0] * W)) ** 2 \
            + ((cloth_xy[..., 1] - L * ly) / (lighting.radius[1] * L)) ** 2
        g += lighting.strength * np.exp(-d2)
    axis = camera.rotation[2]  # optical axis in the table frame
    cos_t = np.clip(rays @ axis, 0.2, 1.0)
    v = lighting.vignetting
    return g * ((1 - v) + v * cos_t ** 4) / 0.97


def _recolour_cloth(texture: np.ndarray, old: np.ndarray, new: np.ndarray) -> np.ndarray:
    """The table art with another cloth colour: the cloth's pixels (near its colour: the weave noise and the slow
    variation kept, as a brightness ratio) take the new colour; chalk, wood and pockets stay."""
    t = texture.astype(np.float32)
    dist = np.linalg.norm(t - old, axis=-1)
    w = np.clip(2.0 - dist / 20.0, 0.0, 1.0)[..., None]
    ratio = t.mean(axis=-1, keepdims=True) / max(float(old.mean()), 1.0)
    return np.clip(t + w * (new * ratio - t) + 0.5, 0, 255).astype(np.uint8)


def draw_bystander(frame: np.ndarray, mask: np.ndarray, camera: CameraModel, person: Bystander,
                   table: TableSpec) -> bool:
    """The person's arms, hands, shoulders and head as the camera sees them (far parts first)."""
    c = camera.camera_centre
    at = np.array(person.at, dtype=float)
    centre = np.array([table.width / 2, table.length / 2])
    facing = centre - at
    facing /= max(1e-9, float(np.linalg.norm(facing)))
    side = np.array([-facing[1], facing[0]])
    hn = nose_height_mm(table)
    skin = (110, 140, 195)
    parts: list[tuple[str, np.ndarray, float, tuple[int, int, int]]] = []
    # Heights above the cloth (itself some 800 mm above the floor): shoulders of someone leaning on the table
    # about 600 mm, the head 800 mm.
    sh_z = 600.0
    for hand in person.hands:
        h = np.array(hand, dtype=float)
        over = max(-h[0], h[0] - table.width, -h[1], h[1] - table.length)
        hz = 25.0 + (hn + RAIL_RISE if over > 0 else 0.0)
        shoulder = np.array([*(at + side * (190.0 if (h - at) @ side > 0 else -190.0)), sh_z])
        elbow = np.array([*(0.5 * h + 0.5 * shoulder[:2] - facing * 60.0), 0.5 * (hz + sh_z) - 120.0])
        hand3 = np.array([*h, hz])
        parts += [("line", np.stack([hand3, elbow]), 80.0, skin),
                  ("line", np.stack([elbow, shoulder]), 105.0, person.shirt), ("disc", hand3[None], 55.0, skin)]
    parts += [("line", np.array([[*(at + side * 190.0), sh_z], [*(at - side * 190.0), sh_z]]), 230.0, person.shirt),
              ("disc", np.array([[*(at + facing * 60.0), 800.0]]), 100.0, (40, 45, 55))]
    drew = False
    h_img, w_img = frame.shape[:2]
    for kind, pts, width_mm, colour in parts:
        depth = camera.to_camera(pts)[:, 2]
        if (depth < 80.0).any():  # at or behind the lens
            continue
        px = np.clip(camera.project(pts), -4 * max(w_img, h_img), 5 * max(w_img, h_img))
        wpx = [camera.focal * width_mm / float(np.linalg.norm(p - c)) for p in pts]
        p16 = [(int(round(p[0] * 16)), int(round(p[1] * 16))) for p in px]
        if kind == "line":
            th = max(1, int(round(0.5 * (wpx[0] + wpx[1]))))
            cv2.line(frame, p16[0], p16[1], colour, th, cv2.LINE_AA, shift=4)
            cv2.line(mask, p16[0], p16[1], 255, th, cv2.LINE_8, shift=4)
        else:
            r = int(round(wpx[0] * 16))
            cv2.circle(frame, p16[0], r, colour, -1, cv2.LINE_AA, shift=4)
            cv2.circle(mask, p16[0], r, 255, -1, cv2.LINE_8, shift=4)
        drew = True
    return drew
