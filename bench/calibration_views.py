"""A minimal renderer of an empty table, kept for ``tests/test_calibration_auto.py`` alone: the benchmark and the
other calibration tests render through ``sim.render`` (the virtual table itself), and so should those tests.

Ray-cast per pixel through ``CameraModel`` (vectorised, 2x2 supersampled so edges are anti-aliased): the cloth on
z = 0 inside the play area; the cushion's inner face (a shadowed vertical strip from the cloth up to the nose); the
cushion top and the wooden rail at the nose height, with mother-of-pearl diamonds on the rail's centre line; the floor
far below. Uneven light is a smooth gain over the table, a person is a dark blob over one rail edge reaching a little
over the cloth, and the picture gets a lens blur and sensor noise.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from calibration.camera import CameraModel
from rules.tables import TableSpec

CLOTHS = {"green": (40, 140, 30), "blue": (170, 95, 20), "grey": (120, 118, 112), "tournament_blue": (150, 70, 10)}


@dataclass(frozen=True)
class Scene:
    table: TableSpec
    cloth_bgr: tuple[int, int, int] = CLOTHS["green"]
    nose_height: float = 37.0
    cushion_width: float = 50.0
    rail_width: float = 120.0
    light_gain: float = 0.0  # 0: even; 0.3: 30 % darker at the far corner from the light centre
    light_centre: tuple[float, float] = (0.5, 0.5)  # fractions of W, L
    person: tuple[float, float, float] | None = None  # (x, y, radius) mm of a dark blob on the rail edge
    noise: float = 2.0
    spots: bool = True
    extra: dict = field(default_factory=dict)


def render(camera: CameraModel, scene: Scene, seed: int = 0, supersample: int = 2) -> np.ndarray:
    w, h = camera.image_size
    s = supersample
    u, v = np.meshgrid((np.arange(w * s) + 0.5) / s - 0.5, (np.arange(h * s) + 0.5) / s - 0.5)
    rays = camera.rays(np.stack([u, v], axis=-1))
    c = camera.camera_centre
    t = scene.table
    W, L, hn = t.width, t.length, scene.nose_height

    def hit(z: float) -> np.ndarray:
        k = (z - c[2]) / rays[..., 2]
        return c[:2] + k[..., None] * rays[..., :2]

    p0 = hit(0.0)
    ph = hit(hn)
    inside0 = (p0[..., 0] >= 0) & (p0[..., 0] <= W) & (p0[..., 1] >= 0) & (p0[..., 1] <= L)
    insideh = (ph[..., 0] >= 0) & (ph[..., 0] <= W) & (ph[..., 1] >= 0) & (ph[..., 1] <= L)
    # Distance outside the play area at the nose height (0 on the nose line).
    dx = np.maximum(np.maximum(-ph[..., 0], ph[..., 0] - W), 0)
    dy = np.maximum(np.maximum(-ph[..., 1], ph[..., 1] - L), 0)
    d_out = np.maximum(dx, dy)
    cloth = np.asarray(scene.cloth_bgr, dtype=np.float32)
    img = np.empty(rays.shape[:2] + (3,), dtype=np.float32)
    img[:] = (60, 75, 70)  # floor
    rail_out = scene.cushion_width + scene.rail_width
    top = ~insideh & (d_out <= rail_out)
    img[top & (d_out <= scene.cushion_width)] = cloth * 0.82
    img[top & (d_out > scene.cushion_width)] = (40, 70, 110)  # wood
    # Diamonds on the rail centre line, 7 mm discs.
    mid = scene.cushion_width + scene.rail_width / 2
    dpos = []
    for (x, y) in t.diamonds:
        if x == 0:
            dpos.append((-mid, y))
        elif x == W:
            dpos.append((W + mid, y))
        elif y == 0:
            dpos.append((x, -mid))
        else:
            dpos.append((x, L + mid))
    for (x, y) in dpos:
        near = top & ((ph[..., 0] - x) ** 2 + (ph[..., 1] - y) ** 2 < 7.0 ** 2)
        img[near] = (215, 225, 230)
    face = ~inside0 & insideh
    img[face] = cloth * 0.35
    img[inside0] = cloth
    if scene.spots:
        for (x, y) in t.spots.values():
            near = inside0 & ((p0[..., 0] - x) ** 2 + (p0[..., 1] - y) ** 2 < 5.0 ** 2)
            img[near] = (235, 235, 235)
    if scene.light_gain:
        lx, ly = scene.light_centre[0] * W, scene.light_centre[1] * L
        r2 = ((p0[..., 0] - lx) / L) ** 2 + ((p0[..., 1] - ly) / L) ** 2
        gain = 1.0 - scene.light_gain * np.clip(r2 / 0.5, 0, 1.5)
        img *= gain[..., None]
    for pocket in t.pockets:
        # A pocket: a dark hole through cushion and rail around its drop point, of its mouth's size.
        px_, py_ = pocket.drop
        hole = ((ph[..., 0] - px_) ** 2 + (ph[..., 1] - py_) ** 2 < (0.6 * pocket.mouth) ** 2) & ~inside0
        img[hole] = (12, 12, 12)
    if scene.person is not None:
        px, py, pr = scene.person
        body = (ph[..., 0] - px) ** 2 + (ph[..., 1] - py) ** 2 < pr ** 2
        img[body] = (50, 45, 60)
    img = cv2.resize(img, (w, h), interpolation=cv2.INTER_AREA)
    img = cv2.GaussianBlur(img, (0, 0), 0.6)
    rng = np.random.default_rng(seed)
    img += rng.normal(0, scene.noise, img.shape).astype(np.float32)
    return np.clip(img, 0, 255).astype(np.uint8)
