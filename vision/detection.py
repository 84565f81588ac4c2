"""Balls in one frame: where each is, in pixels and in table millimetres, and how sure the detector is.

The stages, each cheap because it works where it must and no finer:

1. At a reduced resolution (the frame area-averaged by ``scale``, so a ball keeps a radius of 5 px or more), only
   inside the play area seen at the ball-centre plane: the soft difference from the empty table
   (``vision.background``), smoothed by a Gaussian of 0.3 expected ball radii. Its local maxima are the ball
   candidates: a narrow Gaussian (not a box) keeps one peak per ball, at its centre, even for balls touching each
   other or a cushion, and three balls in a triangle do not merge into one peak at the triangle's centre (a wider
   one, half a radius, does exactly that).
2. Connected blobs of the mask sort the candidates: a blob that is one convex, elongated smear no longer than a
   fast ball travels in one exposure is a moving ball (``blurred``); its position is the centroid of the smear,
   which for a constant speed is the ball at mid-exposure.
3. At full resolution, around each resting candidate only: the edge along 48 rays (``vision.ray_fit``), first
   where the soft mask drops for good, then moved to the steepest fall of the colour difference nearby, and a
   least-squares circle that ignores the rays into a touching ball, an arm or a cue. The score is the share of
   rays that found the ball's edge, those towards a touching neighbour not counted against it; a ray fit that is
   elongated (more than 0.12 radii) flags a short smear.
4. Through the camera model (``vision.ball_geometry``): the silhouette centre to the cloth point under the ball,
   through the ball-centre plane, with the sphere's off-axis silhouette offset removed.

Person, cue and hands outside the cushions never count: nothing outside the play area is searched.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Sequence

import cv2
import numpy as np

from calibration.camera import CameraModel
from calibration.pose import nose_height_mm
from rules.tables import TableSpec
from vision.arrays import clamp, distances, shrink
from vision.background import BackgroundModel, DifferenceParams, soft_difference
from vision.chalk_lines import chalk_lines, painted_keeping_lines
from vision.ball_geometry import BallGeometry
from vision.detections import Detections
from vision.ray_fit import N_RAYS, RayFit, fit_balls

_MAX_SHADOWED = 8  # local maxima hidden by a neighbour's slope kept as candidates per searched part, at most
Rect = tuple[int, int, int, int]  # y0, y1, x0, x1 of a part of the search window at the reduced resolution


@dataclass(frozen=True)
class DetectorConfig:
    """Tuning of the ball detector; the defaults suit 1456 x 1088 frames of a full table from about 2 m."""

    scale: int | None = None  # reduced-resolution divisor; None: the largest power of two keeping radius >= min
    min_radius_px: float = 5.0  # a ball's radius at the reduced resolution, at least
    difference: DifferenceParams = field(default_factory=DifferenceParams)
    peak_threshold: float = 0.3  # smoothed fill at a candidate centre (a whole ball gives about 1)
    min_score: float = 0.4  # detections scoring lower are dropped (a ball half under a cue scores about 0.5)
    max_smear_mm: float = 160.0  # the longest smear taken for a ball (6 m/s over a 1/40 s exposure)
    smear_ratio: float = 1.12  # blob axis ratio above which a single-ball blob is a smear
    # A blob whose two ends' mean colours (thirds of its length, reduced resolution) differ by more than this in a
    # channel is two balls: the pink onto the black 139-150, a white cue ball's smear at 1.7 m/s 52.
    smear_end_levels: float = 100.0
    blur_elongation: float = 0.12  # ray-fit elongation (fraction of the radius) that flags a short smear (a ball
    # at rest shows up to 0.08 from noise and its shading; 0.12 is a travel of about 0.45 radii in the exposure)
    play_margin_mm: float = 4.0  # ball centres accepted this far outside the cushion noses (calibration slack)
    max_candidates: int = 64  # the strongest peaks kept: an arm across the table must not cost a fit per pixel

    def __post_init__(self) -> None:
        if self.scale is not None and self.scale < 1:
            raise ValueError("scale must be >= 1")
        if not 0.0 < self.peak_threshold < 1.0 or not 0.0 <= self.min_score <= 1.0:
            raise ValueError("thresholds must be in (0, 1)")


class StageClock:
    """Adds the CPU time since the last lap to ``timings[stage]``; does nothing without a dict. CPU time, not wall
    time: on a shared machine it is what the stage costs, not what the others cost it."""

    def __init__(self, timings: dict[str, float] | None) -> None:
        self.timings = timings
        self.last = time.process_time() if timings is not None else 0.0

    def restart(self) -> None:
        """Start the next lap now (the time since the last went to a stage timed elsewhere)."""
        if self.timings is not None:
            self.last = time.process_time()

    def lap(self, stage: str) -> None:
        if self.timings is not None:
            now = time.process_time()
            self.timings[stage] = self.timings.get(stage, 0.0) + now - self.last
            self.last = now


class BallDetector:
    """Detects the balls of one table seen by one calibrated camera. Build once at start-up: it precomputes the
    expected ball radius and the silhouette offset per pixel, and the search masks."""

    def __init__(self, camera: CameraModel, table: TableSpec, config: DetectorConfig | None = None) -> None:
        self.camera = camera
        self.table = table
        self.config = config or DetectorConfig()
        self.geometry = BallGeometry.build(camera, table)
        r_full = float(self.geometry.radius_grid.min())
        # Powers of two only: OpenCV's area resize is fast for them (0.5 ms for a table at 1/2), five times slower
        # at 1/3.
        scale = self.config.scale or 1
        while self.config.scale is None and r_full / (2 * scale) >= self.config.min_radius_px:
            scale *= 2
        self.scale = scale
        w, h = camera.image_size
        # The window of the frame that holds the play area and the balls' outlines, aligned to the scale.
        outline = self.geometry.play_area_polygon(-self.table.ball_radius * 1.6, z=self.table.ball_radius)
        x0 = max(0, int(np.floor(outline[:, 0].min())) // scale * scale)
        y0 = max(0, int(np.floor(outline[:, 1].min())) // scale * scale)
        x1 = min(w // scale * scale, int(np.ceil(outline[:, 0].max() / scale)) * scale)
        y1 = min(h // scale * scale, int(np.ceil(outline[:, 1].max() / scale)) * scale)
        self.window = (slice(y0, y1), slice(x0, x1))
        self._origin = np.array([x0, y0], dtype=np.float64)
        lw, lh = (x1 - x0) // scale, (y1 - y0) // scale
        self._low_window = (slice(y0 // scale, y0 // scale + lh), slice(x0 // scale, x0 // scale + lw))
        self._low_size = (lw, lh)
        # Where a ball's outline can be (searched), and where its centre can be (candidates).
        self._search = self._polygon_mask(outline).astype(np.float32)
        centres = self.geometry.play_area_polygon(-self.config.play_margin_mm, z=self.table.ball_radius)
        self._centre_ok = self._polygon_mask(centres)
        self.radius_low = float(np.median(self.geometry.radius_grid)) / scale
        self._sigma = 0.3 * self.radius_low
        k = 2 * int(round(0.9 * self.radius_low)) + 1
        self._nms_kernel = np.ones((k, k), np.uint8)  # square: OpenCV dilates it separably, fast
        self._local_kernel = np.ones((3, 3), np.uint8)
        self._radius_ratio: tuple[float, ...] | None = None  # the ray fit's in the last whole-frame detection
        # The sampling patterns of the per-candidate tests, made once (at the reduced resolution).
        r = self.radius_low
        ring = np.linspace(0, 2 * np.pi, 8, endpoint=False)
        self._ring = 1.4 * r * np.stack([np.cos(ring), np.sin(ring)], 1)  # (8, 2)
        four = np.radians([0.0, 45.0, 90.0, 135.0])
        four = np.stack([np.cos(four), np.sin(four)], 1)  # (4, 2)
        steps = np.linspace(-1.6 * r, 1.6 * r, 33)
        self._across = steps[None, :, None] * four[:, None, :]  # (4, S, 2) lines through a candidate
        self._across_step = (steps[1] - steps[0]) / r
        self._spokes = four * 0.8 * r  # (4, 2)
        self._ppm_low = float(np.median(self.geometry.radius_grid)) / self.table.ball_radius / scale

    def _polygon_mask(self, poly_px: np.ndarray) -> np.ndarray:
        """A (lh, lw) bool mask at the reduced resolution of a polygon given in full-resolution pixels."""
        lw, lh = self._low_size
        low = (poly_px - self._origin + 0.5) / self.scale - 0.5
        m = np.zeros((lh, lw), np.uint8)
        cv2.fillPoly(m, [np.round(low * 16).astype(np.int32)], 1, lineType=cv2.LINE_8, shift=4)
        return m.astype(bool)

    # --- the background ---------------------------------------------------------------------------------------

    def background_from_frames(self, frames: list[np.ndarray]) -> BackgroundModel:
        """The empty-table model from still frames of the empty table."""
        return BackgroundModel.from_frames(frames, self.scale)

    def background_without_empty_table(self, frame: np.ndarray, rounds: int = 4,
                                       around_candidates: bool = True) -> BackgroundModel:
        """An empty-table model from a frame with balls on it. The cloth is first estimated by a wide median
        (a ball is small against it); whatever differs from it is painted over from the surrounding cloth; and
        again against the result, since a tight cluster of balls (a rack) survives the median and is uncovered
        from its edge inwards, one round at a time.

        ``around_candidates``: paint only discs round ball candidates (best on the real frames, whose projector
        halo rings must stay). False: paint everything that differs wherever a ball's outline can be: a cue or
        a hand on the cloth in the first frames, and each ball's soft shadow, are painted out too, so they leave
        no ghost when they move (the replay of a clip that starts with its balls on the table); not the chalk
        lines, which differ from the median as much and stay, carried through where a ball stood on one
        (``vision.chalk_lines``)."""
        small = cv2.resize(frame, (frame.shape[1] // self.scale, frame.shape[0] // self.scale),
                           interpolation=cv2.INTER_AREA)
        k = 2 * int(3 * self.radius_low) + 1
        rough = cv2.resize(cv2.medianBlur(small, k), (frame.shape[1], frame.shape[0]),
                           interpolation=cv2.INTER_LINEAR)
        rough_model = model = BackgroundModel(rough, self.scale)
        lw, lh = self._low_size
        y0, x0 = self.window[0].start, self.window[1].start

        def add_low(full_mask: np.ndarray, low: np.ndarray) -> None:
            """OR a reduced-resolution mask of the search window into a frame-sized one (in place)."""
            up = cv2.resize(low, (lw * self.scale, lh * self.scale), interpolation=cv2.INTER_NEAREST)
            full_mask[y0:y0 + up.shape[0], x0:x0 + up.shape[1]] |= up

        grow = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * int(0.5 * self.radius_low) + 1,) * 2)
        painted = np.zeros(frame.shape[:2], np.uint8)
        # Only where a ball's outline can be: painting over the cushions would bleed the rails' colour in.
        outlines = self._polygon_mask(self.geometry.play_area_polygon(-self.table.ball_radius,
                                                                      z=self.table.ball_radius)).astype(np.uint8)
        # The strip under the cushions' noses (between the nose's footprint on the cloth and the nose itself, seen
        # from above): dark, and a few pixels wide, so the wide median has cloth there and every round below
        # differs from it all along; painted over, the model had a lighter strip than every frame (carom seed
        # 118: 129 grey levels against 69), and a ball rolling up to the cushion was read 4.7 mm into it. It is
        # left out of the painting of whatever differs; a ball against the cushion is still covered, by its blob's
        # growth and by the discs of the balls found at the end. (Not at a pocket's mouth: what differs there is
        # the hole, and a ball dropping in was read against it as meeting the cushion beside it.)
        under_noses = (self._polygon_mask(self.geometry.play_area_polygon(-3.0, z=nose_height_mm(self.table)))
                       & ~self._polygon_mask(self.geometry.play_area_polygon(3.0, z=0.0))).astype(np.uint8)
        # The chalk lines (the baulk line and its D, Chapó's lines, a balkline's) are kept in the model as the
        # frame has them (``vision.chalk_lines``), wherever a ball's outline can be (long, thin edges along a
        # cushion's nose too: kept, not painted and grown, Chapó 200's rest p99 1.83 -> 1.42 mm against a ball's
        # radius clear of the cushions), but not at the pockets' mouths: the edges of a jaw and a pocket's hole are
        # long and thin too, and kept as lines they left the paint round a ball dropping into a corner without
        # their colours (the Chapó fixture clip's Mingo then read meeting both jaws).
        where_lines = outlines.copy()
        for pocket in self.table.pockets:
            mouth = np.mean(np.array(pocket.jaws + (pocket.drop,)), axis=0)
            low = self.to_low(self.camera.table_to_image(mouth[None], 0.0))[0]
            reach = (pocket.mouth / 2 + 2 * self.table.ball_radius) * self._ppm_low
            for m in (under_noses, where_lines):
                cv2.circle(m, (int(round(low[0])), int(round(low[1]))), int(np.ceil(reach)), 0, -1)
        lines = np.zeros(frame.shape[:2], np.uint8)
        for _ in range(rounds):
            fg = self.foreground(frame, model)
            if not around_candidates:
                differs = (fg > 0.35).astype(np.uint8)
                line = chalk_lines(differs) & where_lines
                add_low(painted, cv2.dilate(differs & (1 - under_noses) & (1 - line), grow) & outlines)
                add_low(lines, line)
                model = BackgroundModel(painted_keeping_lines(frame, painted, lines), self.scale)
                continue
            # Only around ball candidates, a little beyond their edge: painting every pixel that differs from the
            # rough estimate would also paint the cushions' faces by the pockets, bleeding the rails' colour into
            # the cloth there; and a wider disc takes its paint from whatever lies round the ball (on the real
            # frames, a projector's halo ring).
            pts, _, _ = self.candidates(fg)
            low = np.zeros(fg.shape, np.uint8)
            for x, y in pts:
                cv2.circle(low, (int(x), int(y)), int(np.ceil(1.35 * self.radius_low)), 1, -1)
            add_low(painted, low & cv2.dilate((fg > 0.35).astype(np.uint8), grow))
            model = BackgroundModel(cv2.inpaint(frame, painted, 5, cv2.INPAINT_TELEA), self.scale)
        if not around_candidates:
            # A ball nearly the cloth's colour (snooker's green on green cloth) stays under the cut above over its
            # shaded half: painted in part, the rest of it stayed in the model, and its fit was pulled a few mm
            # off (38 mm when it rested there again). Every ball found against the model is painted out whole.
            found = self.detect(frame, 0.0, model)
            model.drop_full()  # (30 MB: made again if this model is the one kept; start-up's peak memory)
            # ... and so is every ball found against the rough estimate: one nearly the cloth's colour that no cut
            # reached at all stayed in the model whole and was never seen at rest (sinuca seed 123: the green, by
            # a red, first seen when it ran, so never placed, and the red it kissed read as touched).
            rough_found = self.detect(frame, 0.0, rough_model)
            # ... and so is every candidate against the rough estimate that no fit confirmed, more widely: the
            # green on its cloth, whose fit there scored under the detector's minimum (sinuca seed 109: its shaded
            # half stayed in the model, and against it the green was never found again, all shot long). Its
            # candidate lies up to half a radius towards its shaded side, hence the wider disc; painting a
            # stretch of bare cloth with the cloth round it changes nothing.
            # Only a lone blob, cloth all round it at 1.4 radii as round a ball: not a line (a chalk line erased
            # from the model would differ in every frame), nor the faint edge of a hand or a cue lying over the
            # cloth (painted out, it showed as foreground and its knuckles as balls: FedericoPivotto's overhead
            # frames, two false balls on the player's hand).
            rough_fg = self.foreground(frame, rough_model)
            pts, vals, resp = self.candidates(rough_fg)
            lone = (self._ring_contrast(resp, pts, vals) > 0.6 * vals) & ~self._too_thin(rough_fg, pts, vals)
            loose = self.to_full(pts[lone])
            if len(loose) and len(found) + len(rough_found):
                fitted = np.concatenate([found.px, rough_found.px])
                loose = loose[distances(loose, fitted).min(axis=1) > self.radius_low * self.scale]
            del rough_model, rough
            discs = np.zeros_like(painted)
            centres = np.concatenate([found.px, rough_found.px, loose])
            reach = np.concatenate([1.3 * found.radius_px, 1.3 * rough_found.radius_px,
                                    np.full(len(loose), 1.8 * self.radius_low * self.scale)])
            # Under the balls themselves the cloth, not a chalk line carried through: a ball on a line then differs
            # from the model as from the cloth, not from the line across it (sinuca seed 138's green on the baulk
            # line, a stripe of line with a faint disc round it, was never found).
            under_balls = np.zeros_like(painted)
            silhouettes = np.concatenate([found.radius_px, rough_found.radius_px,
                                          np.full(len(loose), self.radius_low * self.scale)]) + 1.0
            for (x, y), r, s in zip(centres, reach, silhouettes):
                cv2.circle(discs, (int(round(x)), int(round(y))), int(np.ceil(r)), 1, -1)
                cv2.circle(under_balls, (int(round(x)), int(round(y))), int(np.ceil(s)), 1, -1)
            full_outlines = cv2.resize(outlines, (lw * self.scale, lh * self.scale), interpolation=cv2.INTER_NEAREST)
            discs[y0:y0 + full_outlines.shape[0], x0:x0 + full_outlines.shape[1]] &= full_outlines
            if (discs > painted).any() or lines.any():
                model = BackgroundModel(painted_keeping_lines(frame, painted | discs, lines, under_balls), self.scale)
        return model

    # --- detection --------------------------------------------------------------------------------------------

    def low_res(self, frame: np.ndarray) -> np.ndarray:
        """The search window of ``frame`` at the reduced resolution (lh, lw, 3): area-averaged, so that noise
        averages out and a ball keeps its outline."""
        return shrink(frame[self.window], self.scale)

    @property
    def low_size(self) -> tuple[int, int]:
        """(width, height) of the reduced-resolution search window."""
        return self._low_size

    def foreground(self, frame: np.ndarray, background: BackgroundModel, rect: Rect | None = None,
                   small: np.ndarray | None = None) -> np.ndarray:
        """The reduced-resolution soft mask (lh, lw) of what is not the empty table, inside the search area; only
        over ``rect`` (y0, y1, x0, x1 at the reduced resolution) when given. ``small``: ``low_res(frame)`` when the
        caller has it already."""
        if small is None:
            small = self.low_res(frame)
        lh, lw = small.shape[:2]
        y0, y1, x0, x1 = rect if rect is not None else (0, lh, 0, lw)
        win = self._low_window
        low_unit = background.low.unit[win][y0:y1, x0:x1]
        low_norm = background.low.norm[win][y0:y1, x0:x1]
        fg = soft_difference(np.ascontiguousarray(small[y0:y1, x0:x1]), low_unit, low_norm, self.config.difference)
        return cv2.multiply(fg, np.ascontiguousarray(self._search[y0:y1, x0:x1]))

    def candidates(self, fg: np.ndarray, rect: Rect | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Candidate centres (N, 2) at the reduced resolution, their smoothed fill (N,), and the smoothed map; for
        a mask of ``rect`` only, the centres are in the rectangle's own coordinates."""
        resp = cv2.GaussianBlur(fg, (0, 0), self._sigma)
        centre_ok = self._centre_ok if rect is None else self._centre_ok[rect[0]:rect[1], rect[2]:rect[3]]
        above = (resp > self.config.peak_threshold) & centre_ok
        peaks = (resp >= cv2.dilate(resp, self._nms_kernel)) & above
        ys, xs = np.nonzero(peaks)
        pts = np.stack([xs, ys], axis=1).astype(np.float64)
        vals = resp[ys, xs]
        if len(pts) > 4 * self.config.max_candidates:
            # A large blob (an arm, a sleeve over the cloth) is one flat plateau of maxima, thousands of them: keep
            # those that look most like a ball, cloth all round at 1.4 radii, before any pairwise work.
            keep = np.argsort(-self._ring_contrast(resp, pts, vals))[:4 * self.config.max_candidates]
            pts, vals = pts[keep], vals[keep]
        if len(pts) > 1:  # plateaus give neighbouring equal maxima: keep the higher of each close pair
            order = np.argsort(-vals)
            pts, vals = pts[order], vals[order]
            d = np.hypot(*(pts[:, None, :] - pts[None, :, :]).transpose(2, 0, 1))
            keep = np.ones(len(pts), bool)
            for i, j in zip(*np.nonzero(np.triu(d < 0.6 * self.radius_low, 1))):
                if keep[i]:
                    keep[j] = False
            pts, vals = pts[keep], vals[keep]
        if len(pts) > self.config.max_candidates:
            order = np.argsort(-self._ring_contrast(resp, pts, vals))[:self.config.max_candidates]
            pts, vals = pts[order], vals[order]
        return (*self._with_shadowed_peaks(resp, above & ~peaks, pts, vals), resp)

    def _with_shadowed_peaks(self, resp: np.ndarray, above: np.ndarray, pts: np.ndarray,
                             vals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The candidates ``pts`` (N, 2), ``vals`` (N,) and the local maxima (3 x 3) of ``resp`` within ``above``
        (over the threshold, not a square peak) that the square non-maximum suppression hid: a ball of weak
        contrast (snooker's green on green cloth, smoothed fill about 0.5) next to a strong one (2.4 radii apart)
        is lower than the strong one's slope within the square's corner, and vanished. A hidden maximum is kept
        where it is at least 1.6 radii from every square peak: two balls' centres are 2 radii apart at least, and
        closer ones are the plateau of one ball."""
        local = above & (resp >= cv2.dilate(resp, self._local_kernel))
        ys, xs = np.nonzero(local)
        if len(xs) == 0:
            return pts, vals
        extra = np.stack([xs, ys], axis=1).astype(np.float64)
        if len(pts):
            d2 = ((extra[:, None, :] - pts[None, :, :]) ** 2).sum(axis=2).min(axis=1)
            far = d2 >= (1.6 * self.radius_low) ** 2
            extra, ys, xs = extra[far], ys[far], xs[far]
        if len(extra) == 0:
            return pts, vals
        extra_vals = resp[ys, xs]
        # A few at most, the most ball-like, after the square peaks' own cap: on a busy frame (the real snooker
        # frames' plateaus) extras taken before it pushed real balls of lower ring contrast out of the list.
        keep = np.argsort(-self._ring_contrast(resp, extra, extra_vals))[:_MAX_SHADOWED]
        extra, extra_vals = extra[keep], extra_vals[keep]
        # Plateaus give neighbouring equal maxima: one per 0.6 radii.
        d = np.hypot(*(extra[:, None, :] - extra[None, :, :]).transpose(2, 0, 1))
        lone = ~np.triu(d < 0.6 * self.radius_low, 1).any(axis=0)
        return np.concatenate([pts, extra[lone]]), np.concatenate([vals, extra_vals[lone]])

    def _ring_contrast(self, resp: np.ndarray, pts: np.ndarray, vals: np.ndarray) -> np.ndarray:
        """A peak's value less the mean smoothed fill on a ring at 1.4 radii: high for a ball on cloth (or
        touching one or two others), low inside a large blob."""
        h, w = resp.shape
        q = clamp(np.round(pts[:, None, :] + self._ring[None]).astype(int), 0, [w - 1, h - 1])
        return vals - resp[q[..., 1], q[..., 0]].mean(axis=1)

    def to_full(self, low_px: np.ndarray) -> np.ndarray:
        """Reduced-resolution search-window pixels (N, 2) to full-resolution ones (``to_low``'s inverse)."""
        return (low_px + 0.5) * self.scale - 0.5 + self._origin

    def to_low(self, px: np.ndarray) -> np.ndarray:
        """Full-resolution pixels (N, 2) to the reduced-resolution search window's (x, y)."""
        return (np.asarray(px, dtype=np.float64).reshape(-1, 2) - self._origin + 0.5) / self.scale - 0.5

    def search_mask(self) -> np.ndarray:
        """Where a ball's outline can be, at the reduced resolution (lh, lw) bool."""
        return self._search > 0

    def detect(self, frame: np.ndarray, t: float, background: BackgroundModel, min_score: float | None = None,
               timings: dict[str, float] | None = None, rects: Sequence[Rect] | None = None,
               small: np.ndarray | None = None, guesses: np.ndarray | None = None,
               neighbours: np.ndarray | None = None) -> Detections:
        """Every ball in ``frame`` (uint8 BGR, the calibration's image size); with ``rects`` (y0, y1, x0, x1 at
        the reduced resolution, not overlapping), every ball whose centre lies in those parts of the search window
        (what ``vision.incremental`` asks for where the frame changed). ``small``: ``low_res(frame)`` if already
        made. ``timings``, when given, gathers the seconds spent in each stage (for the benchmark).

        ``guesses``: full-resolution centres (N, 2) of balls to measure again where they are, fitted from there
        with the candidates (no search for them: ``vision.frame_detector`` knows where a resting ball it looks at
        again lies). ``neighbours``: centres (M, 2) of balls found before and not searched now, so that a ball's
        rays towards one touching it are not counted against it (as those towards a ball of the batch are not)."""
        if frame.shape[:2] != (self.camera.image_size[1], self.camera.image_size[0]):
            raise ValueError(f"frame is {frame.shape[1]}x{frame.shape[0]}, the camera model "
                             f"{self.camera.image_size[0]}x{self.camera.image_size[1]}")
        clock = StageClock(timings)
        min_score = self.config.min_score if min_score is None else min_score
        if small is None:
            small = self.low_res(frame)
        resting_low: list[np.ndarray] = []
        smears: list[tuple[np.ndarray, np.ndarray]] = []
        for rect in (None,) if rects is None else rects:
            fg = self.foreground(frame, background, rect, small)
            clock.lap("foreground")
            pts, vals, resp = self.candidates(fg, rect)
            if rect is not None and len(pts):
                inner = self._away_from_cut(pts, rect)
                pts, vals = pts[inner], vals[inner]
            clock.lap("candidates")
            if len(pts) == 0:
                continue
            colour = small if rect is None else small[rect[0]:rect[1], rect[2]:rect[3]]
            part_smears, resting = self._split_smears(fg, colour, resp, pts, vals)
            resting = resting[~self._too_thin(fg, pts[resting], vals[resting])]
            # From the rectangle's coordinates to the search window's.
            oy, ox = (rect[0], rect[2]) if rect is not None else (0, 0)
            resting_low.append(pts[resting] + [ox, oy])
            smears += [(ys + oy, xs + ox) for ys, xs in part_smears]
            clock.lap("smears")
        resting_pts = np.concatenate(resting_low) if resting_low else np.zeros((0, 2))
        out_px, out_r, out_score, out_blur = [], [], [], []
        centres = self.to_full(resting_pts)
        if guesses is not None and len(guesses):
            centres = np.concatenate([centres, np.asarray(guesses, dtype=np.float64).reshape(-1, 2)])
        if len(centres):  # one batched fit for the whole frame: each call has a fixed cost
            radii = self.geometry.radius_at(centres)
            # Searched in parts, the held radius ratio is the last whole frame's: the same fit as there.
            fit = fit_balls(frame, background.full, self.config.difference, centres, radii,
                            radius_ratio=None if rects is None else self._radius_ratio)
            if rects is None:
                self._radius_ratio = fit.radius_ratio
            score = self._ray_scores(fit, radii, neighbours)
            fit_ok = np.abs(fit.radius / radii - 1.0) < 0.25
            score = np.where(fit_ok, score, score * 0.3)
            out_px.append(fit.centre)
            out_r.append(np.where(fit_ok, fit.radius, radii))
            out_score.append(score)
            out_blur.append(fit.elongation > self.config.blur_elongation * radii)
        for label_pixels in smears:
            c, r = self._smear_centre(frame, background, label_pixels)
            out_px.append(c[None])
            out_r.append(np.array([r]))
            out_score.append(np.array([0.9]))
            out_blur.append(np.array([True]))
        if not out_px:  # every candidate was too thin for a ball
            return Detections.empty(t)
        px = np.concatenate(out_px)
        radius = np.concatenate(out_r)
        score = clamp(np.concatenate(out_score), 0.0, 1.0)
        blurred = np.concatenate(out_blur)
        keep = score >= min_score
        px, radius, score, blurred = px[keep], radius[keep], score[keep], blurred[keep]
        keep = self._dedupe(px, score, radius)
        px, radius, score, blurred = px[keep], radius[keep], score[keep], blurred[keep]
        clock.lap("fit")
        xy = self.geometry.to_table(px)
        clock.lap("to_table")
        return Detections(t, xy, px, radius, score, blurred=blurred)

    # --- the parts --------------------------------------------------------------------------------------------

    def _split_smears(self, fg: np.ndarray, colour: np.ndarray, resp: np.ndarray, pts: np.ndarray,
                      vals: np.ndarray) -> tuple[list[tuple[np.ndarray, np.ndarray]], np.ndarray]:
        """Which candidates are one moving ball's smear. Returns each smear's blob pixels (ys, xs at the reduced
        resolution) and the indices of the other (resting) candidates. ``colour``: the reduced-resolution frame
        under ``fg``.

        Only candidates that look elongated are examined (most of a frame's balls are still): peaks on one
        ridge, or a single peak whose smoothed fill falls off more slowly in one direction."""
        n = len(pts)
        r = self.radius_low
        group = np.arange(n)
        if n > 1:
            d = np.hypot(*(pts[:, None, :] - pts[None, :, :]).transpose(2, 0, 1))
            for i, j in zip(*np.nonzero(np.triu(d < 2.6 * r, 1))):
                if self._one_ridge(fg, pts[i], pts[j]):
                    group[group == group[j]] = group[i]
        elongated = self._anisotropic(resp, pts)
        resting = np.ones(n, bool)
        smears: list[tuple[np.ndarray, np.ndarray]] = []
        for g in np.unique(group):
            members = np.nonzero(group == g)[0]
            if len(members) == 1 and not elongated[members[0]]:
                continue
            others = np.delete(pts, members, axis=0)
            blob = self._smear_blob(fg, colour, pts[members].mean(axis=0), others)
            if blob is not None:
                smears.append(blob)
                resting[members] = False
        return smears, np.nonzero(resting)[0]

    def _away_from_cut(self, pts: np.ndarray, rect: Rect) -> np.ndarray:
        """Candidates (rectangle coordinates) not too near an edge where the rectangle cuts the search window: the
        smoothing and the peak search see a cut-off mask there, and a slope running out of the rectangle makes a
        false peak on its edge. (The caller's rectangles reach well past what it asks about.)"""
        y0, y1, x0, x1 = rect
        lw, lh = self._low_size
        e = 0.7 * self.radius_low
        x, y = pts[:, 0], pts[:, 1]
        return (((x >= e) | (x0 == 0)) & ((x <= x1 - x0 - 1 - e) | (x1 >= lw))
                & ((y >= e) | (y0 == 0)) & ((y <= y1 - y0 - 1 - e) | (y1 >= lh)))

    def _too_thin(self, fg: np.ndarray, pts: np.ndarray, vals: np.ndarray) -> np.ndarray:
        """Whether the mask through each candidate is a line rather than a ball: a chalk line (narrower than a
        ball every way but one), a cue's shaft or its ferrule (narrow across, long along). A ball is 2 radii
        across every way; one touching others is wider, never narrower; half under a cue it is still a ball's
        width across the cue. Widths are the share of the mask's samples along a line through the centre, not a
        run from it: a black ball's rim mirrors the dark cloth, so its mask has holes that would cut a run short
        (the real snooker frames' black is 1.5-1.7 radii across at the stricter level, a cue 1.1-1.3).

        The levels are relative to the candidate's smoothed fill ``vals`` (down to half of them): a ball of weak
        contrast (snooker's green on green cloth, a fill of 0.2-0.3 but for its highlight) is a ball's width across
        only at its own level; at the absolute ones only its highlight shows, and it read as a chalk mark. (Down
        to 0.4: the green shaded by a cushion, fill 0.43, is 1.1-1.6 radii across at 0.4 of the levels, 0.9-1.1
        at half; the bare cloth's mask is 0.02 at its median, 0.05 at its 90th percentile.)"""
        if len(pts) == 0:
            return np.zeros(0, bool)
        q = pts[:, None, None, :] + self._across[None]  # (N, 4, S, 2)
        h, w = fg.shape
        qi = clamp(np.round(q).astype(int), 0, [w - 1, h - 1])
        v = fg[qi[..., 1], qi[..., 0]]
        level = clamp(vals, 0.4, 1.0)[:, None, None]
        step = self._across_step
        loose = (v > 0.35 * level).sum(axis=2) * step  # (N, 4) widths in radii
        strict = (v > 0.5 * level).sum(axis=2) * step
        chalk = loose.min(axis=1) < 1.0
        cue = (strict.min(axis=1) < 1.4) & (strict.max(axis=1) >= 3.0)
        return chalk | cue

    def _anisotropic(self, resp: np.ndarray, pts: np.ndarray) -> np.ndarray:
        """Whether the smoothed fill around each peak drops at least twice as slowly along one direction as
        along the slowest-perpendicular one: the mark of a smear (a resting ball is round)."""
        u = self._spokes  # (4, 2)
        h, w = resp.shape
        def at(q: np.ndarray) -> np.ndarray:
            qi = clamp(np.round(q).astype(int), 0, [w - 1, h - 1])
            return resp[qi[..., 1], qi[..., 0]]
        centre = at(pts)
        drop = centre[:, None] - 0.5 * (at(pts[:, None, :] + u[None]) + at(pts[:, None, :] - u[None]))  # (N, 4)
        slow = drop.argmin(axis=1)
        across = drop[np.arange(len(pts)), (slow + 2) % 4]
        return drop.min(axis=1) < 0.5 * across

    def _one_ridge(self, fg: np.ndarray, a: np.ndarray, b: np.ndarray) -> bool:
        """Whether two peaks lie on one smear rather than on two touching balls: the blob's width across the
        line joining them is as wide midway as at the peaks (touching balls meet at a point)."""
        r = self.radius_low
        v = (b - a) / max(float(np.hypot(*(b - a))), 1e-9)
        nrm = np.array([-v[1], v[0]])
        offs = np.linspace(-1.2 * r, 1.2 * r, 13)
        h, w = fg.shape
        def width(p: np.ndarray) -> float:
            q = p[None, :] + offs[:, None] * nrm[None, :]
            qi = clamp(np.round(q).astype(int), 0, [w - 1, h - 1])
            return float(fg[qi[:, 1], qi[:, 0]].sum())
        mid = width(0.5 * (a + b))
        return mid >= 0.7 * min(width(a), width(b))

    def _smear_blob(self, fg: np.ndarray, colour: np.ndarray, centre: np.ndarray,
                    others: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """The blob of the mask around ``centre`` if it is a plausible smear of one ball: about a ball wide,
        elongated, convex, no longer than the fastest ball travels in one exposure, holding no other candidate
        (``others``: a touching ball makes the blob elongated too), and of one colour end to end."""
        r = self.radius_low
        max_len = 2 * r + self.config.max_smear_mm * self._ppm_low
        half = int(np.ceil(max_len / 2 + 3))
        h, w = fg.shape
        cx, cy = int(round(centre[0])), int(round(centre[1]))
        x0, y0 = max(cx - half, 0), max(cy - half, 0)
        x1, y1 = min(cx + half + 1, w), min(cy + half + 1, h)
        binary = (fg[y0:y1, x0:x1] > 0.5).astype(np.uint8)
        _, labels, stats, _ = cv2.connectedComponentsWithStats(binary, connectivity=8)
        label = labels[min(cy - y0, labels.shape[0] - 1), min(cx - x0, labels.shape[1] - 1)]
        if label == 0:
            return None
        bx, by, bw, bh, area = stats[label]
        if bx == 0 or by == 0 or bx + bw == binary.shape[1] or by + bh == binary.shape[0]:
            return None  # runs out of the window: longer than any smear (an arm, a cue, a row of balls)
        if area < 0.5 * np.pi * r * r:
            return None
        inside = np.round(others).astype(int) - [x0, y0]
        inside = inside[(inside[:, 0] >= 0) & (inside[:, 1] >= 0) & (inside[:, 0] < labels.shape[1])
                        & (inside[:, 1] < labels.shape[0])]
        if np.any(labels[inside[:, 1], inside[:, 0]] == label):
            return None
        sub = (labels[by:by + bh, bx:bx + bw] == label).astype(np.uint8)
        m = cv2.moments(sub, binaryImage=True)
        cov = np.array([[m["mu20"], m["mu11"]], [m["mu11"], m["mu02"]]]) / max(m["m00"], 1.0)
        ev = np.linalg.eigvalsh(cov)
        ratio = np.sqrt(ev[1] / max(ev[0], 1e-9))
        minor = 2.0 * np.sqrt(ev[0])  # a disc of radius r has 2 sqrt(var) = r
        if ratio < self.config.smear_ratio or not 0.7 * r < minor < 1.3 * r:
            return None
        cnts, _ = cv2.findContours(sub, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        hull_area = cv2.contourArea(cv2.convexHull(max(cnts, key=cv2.contourArea)))
        if hull_area > 0 and area / hull_area < 0.9:
            return None  # waists: touching balls, not a smear
        ys, xs = np.nonzero(sub)
        ys, xs = ys + by + y0, xs + bx + x0
        if self._two_colours(colour, ys, xs, cov):
            return None
        return ys, xs

    def _two_colours(self, colour: np.ndarray, ys: np.ndarray, xs: np.ndarray, cov: np.ndarray) -> bool:
        """Whether a blob's two ends differ in colour: two balls touching (sinuca seed 218: the pink rolling
        onto the black, one blob for nine frames, read as one ball's smear between them, the black's label on
        it). A smear is one ball swept along its path: its two ends are alike (each the ball over the cloth
        for part of the exposure)."""
        _, vecs = np.linalg.eigh(cov)
        along = (xs - xs.mean()) * vecs[0, 1] + (ys - ys.mean()) * vecs[1, 1]
        third = (along.max() - along.min()) / 3.0
        lo, hi = along < along.min() + third, along > along.max() - third
        if not lo.any() or not hi.any():
            return False
        px = colour[ys, xs].astype(np.float32)
        gap = np.abs(px[lo].mean(axis=0) - px[hi].mean(axis=0)).max()
        return bool(gap > self.config.smear_end_levels)

    def _smear_centre(self, frame: np.ndarray, background: BackgroundModel,
                      blob: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, float]:
        """The centroid of a smear at full resolution: the soft mask over the blob (grown by a pixel at the reduced
        resolution, to take its soft ends) weighs each pixel by how much of the exposure the ball covered it."""
        ys, xs = blob
        s = self.scale
        x0 = max(int(xs.min() - 2) * s + int(self._origin[0]), 0)
        y0 = max(int(ys.min() - 2) * s + int(self._origin[1]), 0)
        x1 = min(int(xs.max() + 3) * s + int(self._origin[0]), frame.shape[1])
        y1 = min(int(ys.max() + 3) * s + int(self._origin[1]), frame.shape[0])
        win = (slice(y0, y1), slice(x0, x1))
        m = soft_difference(np.ascontiguousarray(frame[win]), background.full.unit[win],
                            background.full.norm[win], self.config.difference)
        blob_low = np.zeros((int(ys.max() - ys.min()) + 5, int(xs.max() - xs.min()) + 5), np.uint8)
        blob_low[ys - ys.min() + 2, xs - xs.min() + 2] = 1
        blob_low = cv2.dilate(blob_low, np.ones((3, 3), np.uint8))
        lx0 = (x0 - int(self._origin[0])) / s - (xs.min() - 2)
        ly0 = (y0 - int(self._origin[1])) / s - (ys.min() - 2)
        gy, gx = np.mgrid[0:m.shape[0], 0:m.shape[1]]
        by = clamp(((gy + 0.5) / s + ly0).astype(int), 0, blob_low.shape[0] - 1)
        bx = clamp(((gx + 0.5) / s + lx0).astype(int), 0, blob_low.shape[1] - 1)
        w = m * blob_low[by, bx]
        total = max(float(w.sum()), 1e-9)
        c = np.array([(w * gx).sum() / total + x0, (w * gy).sum() / total + y0])
        return c, float(self.geometry.radius_at(c[None])[0])

    def _ray_scores(self, fit: RayFit, radii: np.ndarray, neighbours: np.ndarray | None = None) -> np.ndarray:
        """Share of rays that found the edge, not counting those towards a touching neighbour: another ball of the
        batch, or one of ``neighbours`` (M, 2) (balls not searched now; one within a radius is the ball itself)."""
        n = len(fit.centre)
        blocked = np.zeros((n, N_RAYS), bool)
        others = fit.centre
        if neighbours is not None and len(neighbours):
            neighbours = np.asarray(neighbours, dtype=np.float64)
            far = distances(neighbours, fit.centre).min(axis=1) >= radii.min()  # (fitted: never empty)
            others = np.concatenate([fit.centre, neighbours[far]])
        if len(others) > 1:
            d = others[None, :, :] - fit.centre[:, None, :]  # (i, j, 2): i towards j
            dist = np.hypot(d[..., 0], d[..., 1])
            ii, jj = np.nonzero((dist < 2.6 * radii[:, None]) & (dist > 0))
            if len(ii):
                ang = np.arctan2(d[ii, jj, 1], d[ii, jj, 0])
                diff = np.abs((fit.angles[None, :] - ang[:, None] + np.pi) % (2 * np.pi) - np.pi)
                np.logical_or.at(blocked, ii, diff < np.radians(40))
        counted = np.maximum((~blocked).sum(axis=1), N_RAYS // 4)
        return (fit.valid & ~blocked).sum(axis=1) / counted

    def _dedupe(self, px: np.ndarray, score: np.ndarray, radius: np.ndarray) -> np.ndarray:
        """Two detections closer than a radius are one ball found twice (a plateau, a smear's end): keep the
        better one."""
        n = len(px)
        if n < 2:
            return np.ones(n, bool)
        d = np.hypot(*(px[:, None, :] - px[None, :, :]).transpose(2, 0, 1))
        clash = np.triu(d < radius[:, None], 1)
        keep = np.ones(n, bool)
        for i, j in zip(*np.nonzero(clash)):
            if keep[i] and keep[j]:
                keep[j if score[i] >= score[j] else i] = False
        return keep

    def disc_mask(self, detections: Detections, grow: float = 1.4) -> np.ndarray:
        """A full-resolution uint8 mask of the detected balls' discs (for the background update's keep-out)."""
        w, h = self.camera.image_size
        m = np.zeros((h, w), np.uint8)
        for (x, y), r in zip(detections.px, detections.radius_px):
            cv2.circle(m, (int(round(x)), int(round(y))), int(np.ceil(r * grow)), 1, -1)
        return m


__all__ = ["BallDetector", "DetectorConfig", "StageClock"]
