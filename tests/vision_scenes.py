"""A small exact renderer of still and moving balls on a table, for the detection and identity tests and benchmark.

Test-only (the product never renders). Balls are true spheres ray-cast through the lens model (so the silhouette's
off-axis ellipse and the distortion are real, not assumed), lit by a point lamp with a specular highlight, casting
a soft shadow on the cloth; motion blur averages sub-exposure positions; an arm or a cue is a skin- or wood-coloured
capsule above the cloth; pins are cylinders. Anti-aliasing comes from each ray's miss distance, in pixels.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import cv2
import numpy as np

from calibration.camera import CameraModel
from rules.tables import TableSpec

WHITE = (236, 240, 242)
CLOTH = (120, 150, 40)  # BGR: a carom-blue-green cloth
RAIL = (40, 60, 90)


@dataclass(frozen=True)
class BallSpec:
    xy: tuple[float, float]  # cloth point under the centre at mid-exposure
    bgr: tuple[int, int, int]
    pattern: str = "plain"  # plain | dots | stripe | solid (a white number circle) | number (dotted white pool cue)
    orientation: tuple[float, float, float] = (0.0, 0.0, 0.0)  # Rodrigues vector, body frame -> table frame
    travel: tuple[float, float] = (0.0, 0.0)  # displacement (mm) during the exposure: motion blur


@dataclass(frozen=True)
class Capsule:
    """An occluder (arm, cue) as a thick segment at a height above the cloth, in table mm."""

    a: tuple[float, float]
    b: tuple[float, float]
    radius: float
    z: float
    bgr: tuple[int, int, int] = (120, 150, 200)


@dataclass(frozen=True)
class PinSpec:
    xy: tuple[float, float]  # standing: base centre; down: centre of the lying pin
    down_direction: tuple[float, float] | None = None  # None = standing


@dataclass(frozen=True)
class Scene:
    camera: CameraModel
    table: TableSpec
    balls: tuple[BallSpec, ...] = ()
    occluders: tuple[Capsule, ...] = ()
    pins: tuple[PinSpec, ...] = ()
    light: tuple[float, float, float] | None = None  # lamp position (mm); default above the centre, offset
    light_gain: float = 1.0  # global exposure change (light drift)
    noise: float = 2.0  # grey levels (sigma)
    person_px: tuple[tuple[float, float], ...] = ()  # a polygon in pixels drawn over everything (outside the cloth)
    extra: dict = field(default_factory=dict)


def lamp(table: TableSpec) -> np.ndarray:
    return np.array([table.width * 0.42, table.length * 0.45, 1300.0])


@functools.lru_cache(maxsize=8)
def _cloth_points(camera: CameraModel) -> np.ndarray:
    w, h = camera.image_size
    px = np.stack(np.meshgrid(np.arange(w, dtype=np.float64), np.arange(h, dtype=np.float64)), axis=-1)
    return camera.image_to_table(px, 0.0).astype(np.float32)


_BASES: dict[tuple[int, str], np.ndarray] = {}


def _base_image(camera: CameraModel, table: TableSpec) -> np.ndarray:
    key = (id(camera), table.name)
    if key not in _BASES:
        if len(_BASES) > 8:
            _BASES.clear()
        _BASES[key] = _make_base_image(camera, table)
    return _BASES[key]


def _make_base_image(camera: CameraModel, table: TableSpec) -> np.ndarray:
    """The empty table, unlit by any ball: cloth with a light fall-off and a fixed weave texture, rails outside."""
    q = _cloth_points(camera)
    lp = lamp(table)
    d2 = (q[..., 0] - lp[0]) ** 2 + (q[..., 1] - lp[1]) ** 2 + lp[2] ** 2
    light = (lp[2] ** 2 / d2) ** 0.6  # cosine and distance fall-off, tempered
    rng = np.random.default_rng(7)
    texture = 1.0 + 0.03 * cv2.GaussianBlur(rng.standard_normal(q.shape[:2]).astype(np.float32), (0, 0), 0.8)
    inside = (q[..., 0] >= 0) & (q[..., 0] <= table.width) & (q[..., 1] >= 0) & (q[..., 1] <= table.length)
    cushion = (q[..., 0] >= -50) & (q[..., 0] <= table.width + 50) & (q[..., 1] >= -50) & \
        (q[..., 1] <= table.length + 50)
    img = np.empty(q.shape[:2] + (3,), np.float32)
    img[:] = RAIL
    img[cushion & ~inside] = np.array(CLOTH, np.float32) * 0.75  # cushion rubber covered in cloth, in shade
    img[inside] = CLOTH
    img *= (light * texture)[..., None]
    return img


def _rot(v: tuple[float, float, float]) -> np.ndarray:
    r, _ = cv2.Rodrigues(np.asarray(v, dtype=np.float64).reshape(3, 1))
    return r


_DOTS = np.array([[0, 0, 1], [0, 0, -1], [1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0]], dtype=np.float64)


def _albedo(ball: BallSpec, n_body: np.ndarray) -> np.ndarray:
    """Surface colour (..., 3) at body-frame normals."""
    base = np.array(ball.bgr, np.float64)
    white = np.array(WHITE, np.float64)
    out = np.broadcast_to(base, n_body.shape).copy()
    if ball.pattern == "stripe":
        out[np.abs(n_body[..., 2]) > 0.5] = white
    elif ball.pattern == "solid":
        out[np.abs(n_body[..., 2]) > 0.93] = white
    elif ball.pattern == "dots":
        cosines = n_body @ _DOTS.T
        out[(cosines > 0.985).any(axis=-1)] = (40, 40, 190)  # six red dots, as on a carom spot ball
    return out


def _render_ball(img: np.ndarray, camera: CameraModel, table: TableSpec, ball: BallSpec, lp: np.ndarray,
                 gain: float) -> None:
    r = table.ball_radius
    o = camera.camera_centre
    rot = _rot(ball.orientation)
    steps = 9 if np.hypot(*ball.travel) > 0.5 else 1
    offsets = np.linspace(-0.5, 0.5, steps) if steps > 1 else np.zeros(1)
    centres = [np.array([ball.xy[0] + s * ball.travel[0], ball.xy[1] + s * ball.travel[1], r]) for s in offsets]
    pts = camera.project(np.array(centres))
    ppm = float(camera.pixels_per_mm(ball.xy, r)) * 1.1
    rad = r * ppm + 3
    x0 = int(np.floor(pts[:, 0].min() - rad)); x1 = int(np.ceil(pts[:, 0].max() + rad))
    y0 = int(np.floor(pts[:, 1].min() - rad)); y1 = int(np.ceil(pts[:, 1].max() + rad))
    h, w = img.shape[:2]
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
    if x1 <= x0 or y1 <= y0:
        return
    px = np.stack(np.meshgrid(np.arange(x0, x1, dtype=np.float64), np.arange(y0, y1, dtype=np.float64)), -1)
    d = camera.rays(px)
    acc = np.zeros(px.shape[:2] + (3,))
    cover = np.zeros(px.shape[:2])
    for c in centres:
        oc = o - c
        b = d @ oc
        cc = oc @ oc - r * r
        disc = b * b - cc
        miss = np.sqrt(np.maximum(r * r - disc, 0.0))  # the ray's closest approach to the centre (mm)
        depth = np.maximum(-b, 1.0)
        cov = np.clip((r - miss) * camera.focal / depth + 0.5, 0.0, 1.0)
        t = -b - np.sqrt(np.maximum(disc, 0.0))
        p = o + t[..., None] * d
        n = (p - c) / r
        n /= np.linalg.norm(n, axis=-1, keepdims=True)
        to_light = lp - p
        to_light /= np.linalg.norm(to_light, axis=-1, keepdims=True)
        to_eye = -d
        half = to_light + to_eye
        half /= np.linalg.norm(half, axis=-1, keepdims=True)
        diffuse = np.clip(np.sum(n * to_light, axis=-1), 0.0, 1.0)
        spec = np.clip(np.sum(n * half, axis=-1), 0.0, 1.0) ** 60
        alb = _albedo(ball, n @ rot)
        col = alb * (0.35 + 0.7 * diffuse)[..., None] * gain + 230.0 * spec[..., None]
        acc += cov[..., None] * col
        cover += cov
    acc /= steps
    cover /= steps
    roi = img[y0:y1, x0:x1]
    roi[:] = roi * (1 - cover[..., None]) + acc


def _render_shadow(img: np.ndarray, camera: CameraModel, table: TableSpec, ball: BallSpec, lp: np.ndarray) -> None:
    """Darken the cloth where the lamp is hidden by the ball (soft edge over a few mm of penumbra)."""
    r = table.ball_radius
    q = _cloth_points(camera)
    c = np.array([ball.xy[0], ball.xy[1], r])
    foot = c[:2] + (c[:2] - lp[:2]) * r / (lp[2] - r)  # the shadow's centre on the cloth
    pts = camera.table_to_image(np.array([foot, ball.xy]), 0.0)
    rad = 2.6 * r * float(camera.pixels_per_mm(ball.xy, 0.0)) + 4
    x0, y0 = np.floor(pts.min(axis=0) - rad).astype(int)
    x1, y1 = np.ceil(pts.max(axis=0) + rad).astype(int)
    h, w = img.shape[:2]
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
    if x1 <= x0 or y1 <= y0:
        return
    qq = q[y0:y1, x0:x1].astype(np.float64)
    pq = np.concatenate([qq, np.zeros(qq.shape[:2] + (1,))], -1)
    dirn = lp - pq
    dirn /= np.linalg.norm(dirn, axis=-1, keepdims=True)
    v = c - pq
    along = np.sum(v * dirn, axis=-1)
    miss = np.sqrt(np.maximum(np.sum(v * v, axis=-1) - along ** 2, 0.0))
    shade = np.clip((miss - r) / 6.0 + 0.5, 0.0, 1.0)  # 1 lit, 0 in the umbra
    factor = 0.62 + 0.38 * shade
    img[y0:y1, x0:x1] *= factor[..., None]


def _render_capsule(img: np.ndarray, camera: CameraModel, cap: Capsule) -> None:
    a, b = np.array(cap.a, float), np.array(cap.b, float)
    u = (b - a) / max(np.linalg.norm(b - a), 1e-9)
    nrm = np.array([-u[1], u[0]])
    ang = np.linspace(0, np.pi, 12)
    ends = [a + cap.radius * (np.cos(t) * nrm - np.sin(t) * u) for t in ang]
    ends += [b + cap.radius * (-np.cos(t) * nrm + np.sin(t) * u) for t in ang]
    poly = camera.table_to_image(np.array(ends), cap.z)
    cv2.fillPoly(img, [np.round(poly * 16).astype(np.int32)], cap.bgr, lineType=cv2.LINE_AA, shift=4)


def _render_pin(img: np.ndarray, camera: CameraModel, table: TableSpec, pin: PinSpec) -> None:
    rb = table.pin_base_diameter / 2
    hgt = table.pin_height
    ang = np.linspace(0, 2 * np.pi, 24, endpoint=False)
    ring = np.stack([np.cos(ang), np.sin(ang)], 1)
    if pin.down_direction is None:
        base = np.array(pin.xy) + rb * ring
        top = np.array(pin.xy) + 0.6 * rb * ring
        pts = np.concatenate([camera.table_to_image(base, 0.0), camera.table_to_image(top, hgt)])
        cap_pts = camera.table_to_image(top, hgt)
    else:
        u = np.asarray(pin.down_direction, float)
        u /= np.linalg.norm(u)
        nrm = np.array([-u[1], u[0]])
        cx = np.array(pin.xy)
        segs = []
        for s, rr in ((-hgt / 2, rb), (hgt / 2, 0.6 * rb)):
            for t in ang:
                xy = cx + s * u + rr * np.cos(t) * nrm
                segs.append((xy[0], xy[1], rb + rr * np.sin(t)))
        pts = camera.project(np.array(segs))
        cap_pts = None
    hull = cv2.convexHull(np.round(pts * 16).astype(np.int32))
    cv2.fillConvexPoly(img, hull, (225, 230, 235), lineType=cv2.LINE_AA, shift=4)
    if cap_pts is not None:
        cv2.fillConvexPoly(img, cv2.convexHull(np.round(cap_pts * 16).astype(np.int32)), (40, 40, 200),
                           lineType=cv2.LINE_AA, shift=4)


def render(scene: Scene, rng: np.random.Generator | None = None) -> np.ndarray:
    """The frame (uint8 BGR) a camera sees of ``scene``."""
    rng = rng or np.random.default_rng(0)
    lp = lamp(scene.table) if scene.light is None else np.asarray(scene.light, float)
    img = _base_image(scene.camera, scene.table).copy() * scene.light_gain
    for ball in scene.balls:
        _render_shadow(img, scene.camera, scene.table, ball, lp)
    for pin in scene.pins:
        _render_pin(img, scene.camera, scene.table, pin)
    # Balls far from the camera first, so nearer ones (which can hide them at the edge of the view) are on top.
    order = sorted(scene.balls, key=lambda b: -float(np.linalg.norm(
        np.array([b.xy[0], b.xy[1], scene.table.ball_radius]) - scene.camera.camera_centre)))
    for ball in order:
        _render_ball(img, scene.camera, scene.table, ball, lp, scene.light_gain)
    for cap in scene.occluders:
        _render_capsule(img, scene.camera, cap)
    if scene.person_px:
        cv2.fillPoly(img, [np.round(np.array(scene.person_px) * 16).astype(np.int32)], (60, 80, 110),
                     lineType=cv2.LINE_AA, shift=4)
    if scene.noise > 0:
        img = img + rng.normal(0.0, scene.noise, img.shape)
    return np.clip(np.round(img), 0, 255).astype(np.uint8)


def empty_frame(camera: CameraModel, table: TableSpec, rng: np.random.Generator | None = None,
                noise: float = 2.0) -> np.ndarray:
    return render(Scene(camera, table, noise=noise), rng)


def random_positions(table: TableSpec, n: int, rng: np.random.Generator, min_gap: float = 2.0,
                     margin: float = 0.0) -> list[tuple[float, float]]:
    """``n`` cloth points for balls, none overlapping (gap >= ``min_gap`` mm; 0 allows touching)."""
    r = table.ball_radius
    out: list[tuple[float, float]] = []
    while len(out) < n:
        p = (rng.uniform(r + margin, table.width - r - margin), rng.uniform(r + margin, table.length - r - margin))
        if all(np.hypot(p[0] - q[0], p[1] - q[1]) >= 2 * r + min_gap for q in out):
            out.append(p)
    return out
