"""The pinhole camera with lens distortion that sees the table: table millimetres <-> image pixels at any height.

Frames (DESIGN.md section 2): the table frame has x across the cloth from the left cushion, y along it from the
bottom cushion, z up towards the camera, origin at the bottom-left cushion-nose corner on the cloth. ``rvec`` and
``tvec`` take a table point into the OpenCV camera frame (x right in the image, y down, z along the view), as
``cv2.projectPoints`` expects.

Two lens models. ``pinhole`` (the default): ``dist_coeffs`` is OpenCV's (k1, k2, p1, p2, k3), a polynomial in the
radius of the ideal image point. ``fisheye``: the equidistant model of ``cv2.fisheye`` (Kannala-Brandt), ``dist_coeffs``
(k1, k2, k3, k4), the image radius f * theta * (1 + k1 theta^2 + k2 theta^4 + k3 theta^6 + k4 theta^8) of a ray at
angle theta off the axis. A wide M12 lens is close to equidistant: a polynomial in tan(theta) cannot follow it into the
picture's corners (it bends a straight cushion into a pocket), a polynomial in theta does with a few small terms.

A ball's pixel centre maps to its cloth point through the ball-centre plane: ``image_to_table(px, z=R)``. Going
through the cloth plane instead (a plain homography) is off by d * R / (H - R) at a distance d from the point under
the camera, about 20 mm near the far cushion from 2 m up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import cv2
import numpy as np

from rules.tables import TableSpec

ArrayLike = Any  # anything np.asarray accepts

CALIB_VERSION = 1
LENS_MODELS = {"pinhole": 5, "fisheye": 4}  # lens model -> number of distortion coefficients

_PROJECT_SLICE = 16384  # points per cv2.projectPoints call (see CameraModel.project)


def _rotation_matrix(rvec: np.ndarray) -> np.ndarray:
    r, _ = cv2.Rodrigues(np.asarray(rvec, dtype=np.float64).reshape(3, 1))
    return r


@dataclass(frozen=True, eq=False)
class CameraModel:
    """Intrinsics, distortion and pose over the table. Every method is vectorised over points (last axis 2 or 3)."""

    image_size: tuple[int, int]  # (width, height) in pixels
    camera_matrix: np.ndarray  # 3x3
    dist_coeffs: np.ndarray  # pinhole: (k1, k2, p1, p2, k3); fisheye: (k1, k2, k3, k4)
    rvec: np.ndarray  # table -> camera rotation (Rodrigues vector)
    tvec: np.ndarray  # table -> camera translation (mm)
    lens_model: str = "pinhole"  # "pinhole" or "fisheye" (module docstring)

    def __post_init__(self) -> None:
        k = np.asarray(self.camera_matrix, dtype=np.float64)
        d = np.asarray(self.dist_coeffs, dtype=np.float64).ravel()
        r = np.asarray(self.rvec, dtype=np.float64).ravel()
        t = np.asarray(self.tvec, dtype=np.float64).ravel()
        if k.shape != (3, 3):
            raise ValueError(f"camera_matrix must be 3x3, got shape {k.shape}")
        if self.lens_model not in LENS_MODELS:
            raise ValueError(f"unknown lens model {self.lens_model!r} (known: {', '.join(LENS_MODELS)})")
        if d.shape != (LENS_MODELS[self.lens_model],):
            names = "(k1, k2, p1, p2, k3)" if self.lens_model == "pinhole" else "(k1, k2, k3, k4)"
            raise ValueError(f"dist_coeffs of the {self.lens_model} model must be {names}, got {d.size} values")
        if r.shape != (3,) or t.shape != (3,):
            raise ValueError("rvec and tvec must have 3 values each")
        w, h = self.image_size
        object.__setattr__(self, "image_size", (int(w), int(h)))
        for name, value in (("camera_matrix", k), ("dist_coeffs", d), ("rvec", r), ("tvec", t)):
            value.setflags(write=False)
            object.__setattr__(self, name, value)
        rot = _rotation_matrix(r)
        rot.setflags(write=False)
        object.__setattr__(self, "_rot", rot)

    # --- geometry ---------------------------------------------------------------------------------------------

    @property
    def rotation(self) -> np.ndarray:
        """The 3x3 table -> camera rotation."""
        return self._rot  # type: ignore[attr-defined]

    @property
    def camera_centre(self) -> np.ndarray:
        """The optical centre in table millimetres (x, y, z)."""
        return -self.rotation.T @ self.tvec

    @property
    def focal(self) -> float:
        return float(0.5 * (self.camera_matrix[0, 0] + self.camera_matrix[1, 1]))

    def to_camera(self, points_xyz: ArrayLike) -> np.ndarray:
        """Table points (..., 3) in the camera frame (..., 3): z is the depth along the optical axis."""
        p = np.asarray(points_xyz, dtype=np.float64)
        return p @ self.rotation.T + self.tvec

    def project(self, points_xyz: ArrayLike) -> np.ndarray:
        """Table points (..., 3) to distorted pixel coordinates (..., 2)."""
        p = np.asarray(points_xyz, dtype=np.float64)
        shape = p.shape[:-1]
        if p.size == 0:
            return np.zeros(shape + (2,))
        if self.lens_model == "fisheye":
            return self._project_fisheye(p.reshape(-1, 3)).reshape(shape + (2,))
        flat = p.reshape(-1, 1, 3)
        # cv2.projectPoints always returns its 2N x 15 Jacobian too (240 bytes a point): in slices, so building the
        # detector's per-pixel tables (600,000 points) takes a few MB and not 150.
        px = np.concatenate([
            cv2.projectPoints(flat[i:i + _PROJECT_SLICE], self.rvec, self.tvec, self.camera_matrix,
                              self.dist_coeffs)[0] for i in range(0, len(flat), _PROJECT_SLICE)])
        return px.reshape(shape + (2,))

    def _project_fisheye(self, p: np.ndarray) -> np.ndarray:
        """cv2.fisheye's projection, vectorised in numpy: theta from atan2, so a ray far off the axis stays exact."""
        c = p @ self.rotation.T + self.tvec
        r = np.hypot(c[:, 0], c[:, 1])
        theta = np.arctan2(r, c[:, 2])
        t2 = theta * theta
        k1, k2, k3, k4 = self.dist_coeffs
        theta_d = theta * (1 + t2 * (k1 + t2 * (k2 + t2 * (k3 + t2 * k4))))
        safe = r > 1e-12
        s = np.where(safe, theta_d / np.where(safe, r, 1.0), 1.0 / c[:, 2])  # on the axis: the pinhole limit
        x, y = c[:, 0] * s, c[:, 1] * s
        k = self.camera_matrix
        return np.stack([k[0, 0] * x + k[0, 1] * y + k[0, 2], k[1, 1] * y + k[1, 2]], axis=-1)

    def _undistort_fisheye(self, xd: np.ndarray, yd: np.ndarray) -> np.ndarray:
        """theta from theta_d by Newton steps on the odd polynomial (monotone over the lens's field), then the
        ideal point tan(theta) along the same direction."""
        k1, k2, k3, k4 = self.dist_coeffs
        td = np.hypot(xd, yd)
        theta = td.copy()
        for _ in range(30):
            t2 = theta * theta
            f = theta * (1 + t2 * (k1 + t2 * (k2 + t2 * (k3 + t2 * k4)))) - td
            df = 1 + t2 * (3 * k1 + t2 * (5 * k2 + t2 * (7 * k3 + t2 * 9 * k4)))
            step = f / np.where(np.abs(df) > 1e-9, df, 1e-9)
            theta = np.clip(theta - step, 0.0, 0.5 * math.pi - 1e-6)
            if np.all(np.abs(step) < 1e-15):
                break
        safe = td > 1e-12
        s = np.where(safe, np.tan(theta) / np.where(safe, td, 1.0), 1.0)
        return np.stack([xd * s, yd * s], axis=-1)

    def table_to_image(self, xy: ArrayLike, z: float | ArrayLike = 0.0) -> np.ndarray:
        """Cloth points (..., 2) at height ``z`` above the cloth to pixels (..., 2)."""
        xy = np.asarray(xy, dtype=np.float64)
        zz = np.broadcast_to(np.asarray(z, dtype=np.float64), xy.shape[:-1])
        return self.project(np.concatenate([xy, zz[..., None]], axis=-1))

    def undistort(self, px: ArrayLike) -> np.ndarray:
        """Distorted pixels (..., 2) to normalised image coordinates (x/z, y/z) (..., 2).

        Fixed-point iteration then Newton steps on the forward model, so the inverse is exact to ~1e-12 instead of
        the few 1e-4 px that a short fixed-point iteration leaves near the corners of a wide lens."""
        px = np.asarray(px, dtype=np.float64)
        k = self.camera_matrix
        xd = (px[..., 0] - k[0, 2] - k[0, 1] * (px[..., 1] - k[1, 2]) / k[1, 1]) / k[0, 0]
        yd = (px[..., 1] - k[1, 2]) / k[1, 1]
        if self.lens_model == "fisheye":
            return self._undistort_fisheye(xd, yd)
        k1, k2, p1, p2, k3 = self.dist_coeffs
        x, y = xd.copy(), yd.copy()
        for _ in range(8):
            r2 = x * x + y * y
            radial = 1 + r2 * (k1 + r2 * (k2 + r2 * k3))
            dx = 2 * p1 * x * y + p2 * (r2 + 2 * x * x)
            dy = p1 * (r2 + 2 * y * y) + 2 * p2 * x * y
            x = (xd - dx) / radial
            y = (yd - dy) / radial
        for _ in range(4):
            fx, fy, j = self._distort_with_jacobian(x, y)
            ex, ey = fx - xd, fy - yd
            det = j[0] * j[3] - j[1] * j[2]
            x = x - (j[3] * ex - j[1] * ey) / det
            y = y - (-j[2] * ex + j[0] * ey) / det
        return np.stack([x, y], axis=-1)

    def _distort_with_jacobian(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, tuple]:
        k1, k2, p1, p2, k3 = self.dist_coeffs
        r2 = x * x + y * y
        radial = 1 + r2 * (k1 + r2 * (k2 + r2 * k3))
        d_radial = k1 + r2 * (2 * k2 + 3 * k3 * r2)  # d radial / d r2
        fx = x * radial + 2 * p1 * x * y + p2 * (r2 + 2 * x * x)
        fy = y * radial + p1 * (r2 + 2 * y * y) + 2 * p2 * x * y
        dfx_dx = radial + x * d_radial * 2 * x + 2 * p1 * y + p2 * 6 * x
        dfx_dy = x * d_radial * 2 * y + 2 * p1 * x + p2 * 2 * y
        dfy_dx = y * d_radial * 2 * x + p1 * 2 * x + 2 * p2 * y
        dfy_dy = radial + y * d_radial * 2 * y + p1 * 6 * y + 2 * p2 * x
        return fx, fy, (dfx_dx, dfx_dy, dfy_dx, dfy_dy)

    def rays(self, px: ArrayLike) -> np.ndarray:
        """Unit view directions (..., 3) in the table frame through distorted pixels (..., 2)."""
        n = self.undistort(px)
        d_cam = np.concatenate([n, np.ones(n.shape[:-1] + (1,))], axis=-1)
        d = d_cam @ self.rotation  # R^T applied to row vectors
        return d / np.linalg.norm(d, axis=-1, keepdims=True)

    def image_to_table(self, px: ArrayLike, z: float | ArrayLike = 0.0) -> np.ndarray:
        """Pixels (..., 2) to the table point (..., 2) where the view ray meets the plane at height ``z``.

        For a ball, pass z = R: its pixel centre is the image of its centre, which is R above its cloth point."""
        d = self.rays(px)
        c = self.camera_centre
        zz = np.asarray(z, dtype=np.float64)
        s = (zz - c[2]) / d[..., 2]
        return c[:2] + s[..., None] * d[..., :2]

    def sphere_outline(self, centre_xyz: ArrayLike, radius: float, n: int = 64) -> np.ndarray:
        """The image outline (n, 2) of a sphere: the projection of the circle where the view rays graze it."""
        c = np.asarray(centre_xyz, dtype=np.float64)
        o = self.camera_centre
        u = o - c
        d = float(np.linalg.norm(u))
        u /= d
        # Tangent circle: centre R^2/D towards the camera, radius R sqrt(1 - R^2/D^2).
        centre = c + (radius * radius / d) * u
        rho = radius * math.sqrt(max(0.0, 1.0 - (radius / d) ** 2))
        a = np.cross(u, [0.0, 0.0, 1.0] if abs(u[2]) < 0.9 else [1.0, 0.0, 0.0])
        a /= np.linalg.norm(a)
        b = np.cross(u, a)
        phi = np.linspace(0.0, 2 * math.pi, n, endpoint=False)
        pts = centre + rho * (np.cos(phi)[:, None] * a + np.sin(phi)[:, None] * b)
        return self.project(pts)

    def sphere_image_centre(self, centre_xyz: ArrayLike, radius: float) -> np.ndarray:
        """Where the centroid of a sphere's image falls (2,). Not quite the projection of its centre: perspective
        stretches the outline away from the principal point, by about f a^2 tan(t) / cos^2(t) for a sphere seen at
        angle t off the axis under an angular radius a (0.2 px at a carom table's corner from 2 m, 0.4 mm)."""
        poly = self.sphere_outline(centre_xyz, radius, 128)
        x, y = poly[:, 0], poly[:, 1]
        xn, yn = np.roll(x, -1), np.roll(y, -1)
        cross = x * yn - xn * y
        area = cross.sum() / 2.0
        return np.array([((x + xn) * cross).sum() / (6 * area), ((y + yn) * cross).sum() / (6 * area)])

    def pixels_per_mm(self, xy: ArrayLike, z: float = 0.0) -> np.ndarray:
        """Local scale (pixels per table mm) at cloth points (..., 2), from the depth: f / depth. For the fisheye model
        times theta_d / tan(theta), the equidistant lens's own scale across the ray (as f / depth is the pinhole's):
        a ball near the picture's edge is that much smaller than a pinhole would show it."""
        xy = np.asarray(xy, dtype=np.float64)
        p = np.concatenate([xy, np.full(xy.shape[:-1] + (1,), float(z))], axis=-1)
        c = self.to_camera(p)
        ppm = self.focal / c[..., 2]
        if self.lens_model == "fisheye":
            theta = np.arctan2(np.hypot(c[..., 0], c[..., 1]), c[..., 2])
            t2 = theta * theta
            k1, k2, k3, k4 = self.dist_coeffs
            theta_d = theta * (1 + t2 * (k1 + t2 * (k2 + t2 * (k3 + t2 * k4))))
            ppm = ppm * np.where(theta > 1e-9, theta_d / np.tan(np.maximum(theta, 1e-9)), 1.0)
        return ppm

    # --- construction -----------------------------------------------------------------------------------------

    @classmethod
    def look_at(cls, eye: Sequence[float], target: Sequence[float], image_right: Sequence[float],
                image_size: tuple[int, int], focal_px: float,
                dist: Sequence[float] = (0.0, 0.0, 0.0, 0.0, 0.0), lens_model: str = "pinhole") -> "CameraModel":
        """A camera at ``eye`` (table mm) looking at ``target``, the image x axis as close to ``image_right`` as the
        view direction allows, principal point at the image centre."""
        eye_v = np.asarray(eye, dtype=np.float64)
        fwd = np.asarray(target, dtype=np.float64) - eye_v
        fwd /= np.linalg.norm(fwd)
        right = np.asarray(image_right, dtype=np.float64)
        right = right - fwd * (right @ fwd)
        right /= np.linalg.norm(right)
        down = np.cross(fwd, right)  # camera y = z x x keeps the frame right-handed
        rot = np.stack([right, down, fwd])  # rows: camera axes in table coordinates
        rvec, _ = cv2.Rodrigues(rot)
        tvec = -rot @ eye_v
        w, h = image_size
        k = np.array([[focal_px, 0.0, (w - 1) / 2.0], [0.0, focal_px, (h - 1) / 2.0], [0.0, 0.0, 1.0]])
        return cls((w, h), k, np.asarray(dist, dtype=np.float64), rvec.ravel(), tvec, lens_model)

    @classmethod
    def overhead(cls, table: TableSpec, image_size: tuple[int, int], height_mm: float = 2000.0,
                 tilt_deg: float = 0.0, focal_px: float | None = None, hfov_deg: float | None = None,
                 dist: Sequence[float] = (0.0, 0.0, 0.0, 0.0, 0.0), margin_mm: float = 180.0,
                 lens_model: str = "pinhole") -> "CameraModel":
        """A camera ``height_mm`` above the cloth looking at the table centre, the table's length along the image
        width (the bottom cushion on the left of the image, the left cushion at the top).

        ``tilt_deg`` moves the camera towards the bottom cushion along a circle about the centre, so the optical
        axis leans by that angle. Without ``focal_px`` or ``hfov_deg`` the focal length fits the table plus
        ``margin_mm`` (rails) into the image."""
        w, h = image_size
        cx, cy = table.width / 2.0, table.length / 2.0
        tilt = math.radians(tilt_deg)
        eye = (cx, cy - height_mm * math.sin(tilt), height_mm * math.cos(tilt))
        if focal_px is None:
            if hfov_deg is not None:
                focal_px = (w / 2.0) / math.tan(math.radians(hfov_deg) / 2.0)
            else:
                # The near rail edge is at the camera height minus the rail height; fit with the cloth depth, a
                # little generous, since the margin already covers the rails.
                depth = height_mm
                focal_px = min(w * depth / (table.length + 2 * margin_mm), h * depth / (table.width + 2 * margin_mm))
        return cls.look_at(eye, (cx, cy, 0.0), (0.0, 1.0, 0.0), image_size, focal_px, dist, lens_model)

    def moved(self, d_rvec: Sequence[float] = (0.0, 0.0, 0.0), d_tvec: Sequence[float] = (0.0, 0.0, 0.0)) -> "CameraModel":
        """The same camera nudged: a small extra rotation (camera frame) and translation (camera frame, mm)."""
        rot = _rotation_matrix(np.asarray(d_rvec, dtype=np.float64)) @ self.rotation
        rvec, _ = cv2.Rodrigues(rot)
        tvec = _rotation_matrix(np.asarray(d_rvec, dtype=np.float64)) @ self.tvec + np.asarray(d_tvec, dtype=float)
        return CameraModel(self.image_size, self.camera_matrix.copy(), self.dist_coeffs.copy(), rvec.ravel(), tvec,
                           self.lens_model)

    def scaled(self, image_size: tuple[int, int]) -> "CameraModel":
        """The same lens and pose on a sensor mode of another size (binning or scaling keeps the field of view)."""
        sx = image_size[0] / self.image_size[0]
        sy = image_size[1] / self.image_size[1]
        k = self.camera_matrix.copy()
        k[0, :] *= sx
        k[1, :] *= sy
        k[0, 2] = (self.camera_matrix[0, 2] + 0.5) * sx - 0.5
        k[1, 2] = (self.camera_matrix[1, 2] + 0.5) * sy - 0.5
        return CameraModel(image_size, k, self.dist_coeffs.copy(), self.rvec.copy(), self.tvec.copy(), self.lens_model)

    # --- calibration file fields (DESIGN.md section 6) --------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The file's camera fields; ``lens_model`` only for a fisheye, so a pinhole file reads as it always did."""
        d: dict[str, Any] = {
            "version": CALIB_VERSION,
            "image_size": list(self.image_size),
            "camera_matrix": self.camera_matrix.tolist(),
            "dist_coeffs": self.dist_coeffs.tolist(),
            "rvec": self.rvec.tolist(),
            "tvec": self.tvec.tolist(),
        }
        if self.lens_model != "pinhole":
            d["lens_model"] = self.lens_model
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "CameraModel":
        if d.get("version") != CALIB_VERSION:
            raise ValueError(f"unknown calibration version {d.get('version')!r} (expected {CALIB_VERSION})")
        size = d.get("image_size")
        if not isinstance(size, (list, tuple)) or len(size) != 2:
            raise ValueError("image_size must be [width, height]")
        return cls(tuple(size), np.asarray(d["camera_matrix"], dtype=float),  # type: ignore[arg-type]
                   np.asarray(d["dist_coeffs"], dtype=float), np.asarray(d["rvec"], dtype=float),
                   np.asarray(d["tvec"], dtype=float), str(d.get("lens_model", "pinhole")))
