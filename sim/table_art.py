"""The static table as the camera sees it: a top-down texture in table millimetres (cloth, cushions, rails,
diamonds, pockets, chalk markings), warped through the ``CameraModel`` into the image, with uneven light.

Cushion tops and rails stand above the cloth: pixels that see outside the cloth are mapped through the plane at
the cushion's height, so the rails show the same parallax as the balls.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from calibration.camera import CameraModel
from rules.balls import CAROM_DISCIPLINES
from rules.tables import TableSpec


CUSHION_W = 50.0  # mm of cushion rubber seen from above, outside the nose line
RAIL_W = 110.0  # mm of wooden rail beyond the cushion
BORDER = CUSHION_W + RAIL_W + 60.0  # texture margin around the cloth (the last 60 mm: the room's floor)
CHALK = (215, 222, 226)

CLOTH_BGR = {"carom": (165, 88, 18), "sinuca": (38, 118, 22), "bilhar": (120, 104, 12), "chapo": (44, 112, 30)}


def family(discipline: str) -> str:
    return "carom" if discipline in CAROM_DISCIPLINES else discipline


@dataclass
class Background:
    image: np.ndarray  # (H, W, 3) uint8, lit
    gain: np.ndarray  # (H, W) float32: the light falling on each pixel's table point (balls are lit by it too)


class TableArt:
    """Draws one table for one discipline; ``background(camera)`` warps it into a camera's image."""

    def __init__(self, table: TableSpec, discipline: str, scale: float = 1.0, seed: int = 7) -> None:
        self.table = table
        self.discipline = discipline
        self.scale = scale  # texture pixels per mm
        self.rng = np.random.default_rng(seed)
        self.nose_height = 0.635 * table.ball_diameter
        self.texture = self._draw()

    # --- top-down texture -------------------------------------------------------------------------------------

    def _px(self, x: float, y: float) -> tuple[int, int]:
        """Texture point of a table point, in 1/16 px (cv2's ``shift=4``)."""
        return (int(round((x + BORDER) * self.scale * 16)), int(round((y + BORDER) * self.scale * 16)))

    def _poly(self, img: np.ndarray, pts, colour) -> None:
        cv2.fillPoly(img, [np.array([self._px(*p) for p in pts], dtype=np.int32)], colour, cv2.LINE_AA, shift=4)

    def _disc(self, img: np.ndarray, centre, radius: float, colour) -> None:
        cv2.circle(img, self._px(*centre), int(round(radius * self.scale * 16)), colour, -1, cv2.LINE_AA, shift=4)

    def _line(self, img: np.ndarray, a, b, colour, width_mm: float = 3.0) -> None:
        cv2.line(img, self._px(*a), self._px(*b), colour, max(1, int(round(width_mm * self.scale))), cv2.LINE_AA,
                 shift=4)

    def _noise(self, h: int, w: int, sigma: float, blur: float) -> np.ndarray:
        n = self.rng.normal(0.0, 1.0, (h, w)).astype(np.float32)
        if blur > 0:
            n = cv2.GaussianBlur(n, (0, 0), blur)
            n /= max(1e-6, float(n.std()))
        return n * sigma

    def _draw(self) -> np.ndarray:
        t, s = self.table, self.scale
        W, L = t.width, t.length
        h = int(math.ceil((L + 2 * BORDER) * s))
        w = int(math.ceil((W + 2 * BORDER) * s))
        cloth = np.array(CLOTH_BGR[family(self.discipline)], dtype=np.float32)
        img = np.empty((h, w, 3), np.uint8)
        img[:] = (40, 44, 48)  # floor
        # Rail: wood with grain along each rail.
        r0 = CUSHION_W + RAIL_W
        self._poly(img, [(-r0, -r0), (W + r0, -r0), (W + r0, L + r0), (-r0, L + r0)], (38, 66, 112))
        # Cushion rubber (cloth-covered): a darker band sloping down to the nose.
        c = tuple(int(v * 0.78) for v in cloth)
        self._poly(img, [(-CUSHION_W, -CUSHION_W), (W + CUSHION_W, -CUSHION_W), (W + CUSHION_W, L + CUSHION_W),
                         (-CUSHION_W, L + CUSHION_W)], c)
        self._pockets_back(img)
        self._poly(img, [(0, 0), (W, 0), (W, L), (0, L)], tuple(int(v) for v in cloth))
        self._pocket_beds(img, tuple(int(v) for v in cloth))
        self._markings(img)
        self._diamonds(img)
        # Texture: fine fibre noise on everything, a slow variation (nap, wear) on top.
        tex = img.astype(np.float32)
        tex += self._noise(h, w, 3.0, 0.6 * s)[..., None]
        # The slow variation is drawn coarse and scaled up: a wide blur at full size costs seconds.
        coarse = self._noise(max(2, h // 32), max(2, w // 32), 0.025, 80.0 * s / 32)
        tex *= (1.0 + cv2.resize(coarse, (w, h), interpolation=cv2.INTER_CUBIC))[..., None]
        return np.clip(tex, 0, 255).astype(np.uint8)

    def _pockets_back(self, img: np.ndarray) -> None:
        """Each pocket's dark opening through cushion and rail."""
        for p in self.table.pockets:
            if p.is_hole:
                continue  # a tronera is only its hole (drawn over the cloth)
            (jx0, jy0), (jx1, jy1) = p.jaws
            mx, my = (jx0 + jx1) / 2, (jy0 + jy1) / 2
            ax, ay = p.drop[0] - mx, p.drop[1] - my
            n = math.hypot(ax, ay)
            if n < 1e-9:
                ax, ay = (p.drop[0] - self.table.width / 2, 0.0)
                n = abs(ax)
            ax, ay = ax / n, ay / n
            depth = CUSHION_W + RAIL_W * 0.6
            self._poly(img, [(jx0, jy0), (jx1, jy1), (jx1 + ax * depth, jy1 + ay * depth),
                             (jx0 + ax * depth, jy0 + ay * depth)], (12, 12, 12))
            self._disc(img, (p.drop[0] + ax * p.mouth * 0.3, p.drop[1] + ay * p.mouth * 0.3), p.mouth * 0.55,
                       (8, 8, 8))

    def _pocket_beds(self, img: np.ndarray, cloth) -> None:
        """The cloth runs into a channel pocket up to its drop line; a Chapó tronera is a hole in the cloth."""
        for p in self.table.pockets:
            (jx0, jy0), (jx1, jy1) = p.jaws
            mid = ((jx0 + jx1) / 2, (jy0 + jy1) / 2)
            if p.is_hole:
                self._disc(img, p.drop, p.mouth / 2, (6, 6, 6))
                continue
            ax, ay = p.drop[0] - mid[0], p.drop[1] - mid[1]
            n = math.hypot(ax, ay)
            if n < 1e-9:
                continue
            ax, ay = ax / n, ay / n
            ends = [(jx + ax * ((p.drop[0] - jx) * ax + (p.drop[1] - jy) * ay),
                     jy + ay * ((p.drop[0] - jx) * ax + (p.drop[1] - jy) * ay)) for jx, jy in p.jaws]
            self._poly(img, [p.jaws[0], ends[0], ends[1], p.jaws[1]], cloth)

    def _markings(self, img: np.ndarray) -> None:
        t, d = self.table, self.discipline
        W, L = t.width, t.length
        fam = family(d)
        spot_r = 4.0
        if fam == "carom":
            for name in ("bottom", "centre", "top", "start_left", "start_right"):
                self._disc(img, t.spots[name], spot_r, CHALK)
            if d.startswith("balkline_47"):
                for x in (473.0, W - 473.0):
                    self._line(img, (x, 0), (x, L), CHALK)
                for y in (473.0, L - 473.0):
                    self._line(img, (0, y), (W, y), CHALK)
            elif d.startswith("balkline_71"):
                self._line(img, (W / 2, 0), (W / 2, L), CHALK)
                for y in (710.0, L - 710.0):
                    self._line(img, (0, y), (W, y), CHALK)
            if d.startswith("balkline"):
                from rules.tables import anchor_boxes
                for box in anchor_boxes(t, 473.0 if "47" in d else 710.0):
                    pts = box.points
                    for i in range(4):
                        a, b = pts[i], pts[(i + 1) % 4]
                        on_cushion = all(q[0] in (0.0, W) for q in (a, b)) or all(q[1] in (0.0, L) for q in (a, b))
                        if not on_cushion:  # the side lying on the cushion nose is the cushion itself
                            self._line(img, a, b, CHALK, 2.0)
        elif fam == "sinuca":
            baulk, r = t.lines["baulk_line_y"], t.lines["d_radius"]
            self._line(img, (0, baulk), (W, baulk), CHALK)
            centre = self._px(W / 2, baulk)
            radius = int(round(r * self.scale * 16))
            cv2.ellipse(img, centre, (radius, radius), 0, 180, 360, CHALK, max(1, int(round(3 * self.scale))),
                        cv2.LINE_AA, shift=4)
            for name in ("yellow", "green", "brown", "blue", "pink", "black"):
                self._disc(img, t.spots[name], spot_r, CHALK)
        elif fam == "bilhar":
            for name in ("head", "foot"):
                self._disc(img, t.spots[name], spot_r, CHALK)
        elif fam == "chapo":
            for y in (t.lines["cabana_salida_y"], t.lines["cabana_mingo_y"]):
                self._line(img, (0, y), (W, y), CHALK)
            for name, p in t.spots.items():
                if name.startswith(("aux", "mingo")):
                    self._disc(img, p, spot_r, CHALK)
                elif name in ("king", "lat_top", "lat_bottom", "lat_left", "lat_right"):
                    self._disc(img, p, t.pin_base_diameter / 2 + 2.0, CHALK)

    def _diamonds(self, img: np.ndarray) -> None:
        t = self.table
        off = CUSHION_W + RAIL_W * 0.45
        for x, y in t.diamonds:
            if any(math.dist((x, y), p.drop) < p.mouth for p in t.pockets):
                continue  # a middle pocket cuts the rail where its diamond would be
            if x <= 0:
                p = (-off, y)
            elif x >= t.width:
                p = (t.width + off, y)
            elif y <= 0:
                p = (x, -off)
            else:
                p = (x, t.length + off)
            self._disc(img, p, 7.0, (200, 222, 232))

    # --- through the camera -----------------------------------------------------------------------------------

    def background(self, camera: CameraModel) -> Background:
        w, h = camera.image_size
        u, v = np.meshgrid(np.arange(w, dtype=np.float64), np.arange(h, dtype=np.float64))
        px = np.stack([u, v], axis=-1)
        d = camera.rays(px)
        c = camera.camera_centre
        t, W, L = self.table, self.table.width, self.table.length

        def hit(z: float) -> np.ndarray:
            s = (z - c[2]) / d[..., 2]
            return c[:2] + s[..., None] * d[..., :2]

        cloth = hit(0.0)
        raised = hit(self.nose_height)
        outside = (raised[..., 0] < 0) | (raised[..., 0] > W) | (raised[..., 1] < 0) | (raised[..., 1] > L)
        inside_cloth = (cloth[..., 0] >= 0) & (cloth[..., 0] <= W) & (cloth[..., 1] >= 0) & (cloth[..., 1] <= L)
        pt = np.where((outside & ~inside_cloth)[..., None], raised, cloth)
        mx = ((pt[..., 0] + BORDER) * self.scale).astype(np.float32)
        my = ((pt[..., 1] + BORDER) * self.scale).astype(np.float32)
        img = cv2.remap(self.texture, mx, my, cv2.INTER_AREA if self.scale > 1.5 else cv2.INTER_LINEAR,
                        borderMode=cv2.BORDER_CONSTANT, borderValue=(40, 44, 48))
        gain = light_gain(t, camera, cloth, d).astype(np.float32)
        lit = np.clip(img.astype(np.float32) * gain[..., None], 0, 255).astype(np.uint8)
        return Background(lit, gain)


def light_gain(table: TableSpec, camera: CameraModel, cloth_xy: np.ndarray, rays: np.ndarray) -> np.ndarray:
    """Uneven light: two lamp pools along the long axis, darker corners, and the lens's cos^4 vignetting."""
    W, L = table.width, table.length
    g = np.full(cloth_xy.shape[:-1], 0.78)
    for ly in (L * 0.3, L * 0.7):
        d2 = ((cloth_xy[..., 0] - W * 0.5) / (0.9 * W)) ** 2 + ((cloth_xy[..., 1] - ly) / (0.45 * L)) ** 2
        g += 0.16 * np.exp(-d2)
    axis = camera.rotation[2]  # optical axis in the table frame
    cos_t = np.clip(rays @ axis, 0.2, 1.0)
    return g * (0.75 + 0.25 * cos_t ** 4) / 0.97
