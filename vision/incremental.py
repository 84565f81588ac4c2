"""Detection only where the frame changed: the balls at rest are not looked for again in every frame.

In a match the balls stand still most of the time, and during a shot one to three of them move while the rest
wait. A whole-frame detection costs 6-8 ms at 1456 x 1088 on one core; the Pi has 16 ms a frame at 60 fps and
a core three to four times slower. So each frame is first compared with a reference picture of the table at a
quarter of the resolution (0.4 ms), and the detector runs only in rectangles round what changed; the detections
elsewhere are those of the frame before, unchanged.

Why the reference is not simply the frame before: a ball creeping to rest moves a fraction of a pixel per frame,
less than any threshold that noise allows. The reference is refreshed only where a change was seen, so a slow
drift adds up against it until it shows, and the ball is found again; a region is also looked at once more on the
frame after it stops changing, so the last detection of a ball that came to rest is made on a still picture. A
whole-frame detection is run every ``refresh_every`` frames all the same, so that nothing missed once (a ball
half under a cue when the cue went away in one frame) stays missed.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from .arrays import clamp
from .detection import BallDetector, Rect


@dataclass(frozen=True)
class ChangeConfig:
    threshold: float = 10.0  # grey levels (the largest of B, G, R) at the change map's resolution; the sensor
    # noise there is about 0.5 (16 pixels averaged), and a white ball's edge moving 0.3 px changes it by ~12
    grow_radii: float = 1.3  # a change is grown by this many ball radii: it marks the centres of balls that moved
    margin_radii: float = 2.0  # rectangles reach this far past the grown change: a ball's whole disc and the
    # smoothing's context (candidates nearer than 0.7 radii to a cut edge are dropped by the detector)
    refresh_every: int = 60  # frames between whole-frame detections
    full_above: float = 0.45  # share of the window changed above which one whole-frame detection is cheaper

    def __post_init__(self) -> None:
        if self.threshold <= 0 or self.grow_radii <= 0 or self.margin_radii < 1.0 or self.refresh_every < 1:
            raise ValueError("change config: threshold and grow_radii must be positive, margin_radii >= 1, "
                             "refresh_every >= 1")


@dataclass(frozen=True)
class ChangePlan:
    """What to detect in one frame: ``full`` (everything), or the ``rects`` (reduced-resolution window
    coordinates) to search and the ``changed`` map (at half the reduced resolution) telling which detections of
    the frame before are stale."""

    full: bool
    rects: tuple[Rect, ...] = ()
    changed: np.ndarray | None = None

    def is_changed(self, low_xy: np.ndarray) -> np.ndarray:
        """For points at the reduced resolution (N, 2): whether each lies where the frame changed."""
        if self.full:
            return np.ones(len(low_xy), bool)
        q = change_cells(low_xy, self.changed.shape)
        return self.changed[q[:, 1], q[:, 0]]


def change_cells(low_xy: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The change map's cells (N, 2 as x, y) holding points given at the reduced resolution (N, 2): the map is
    half that resolution, a cell covering two pixels each way."""
    h, w = shape[:2]
    return clamp(np.floor((np.asarray(low_xy, dtype=np.float64) + 0.5) / 2).astype(int), 0, [w - 1, h - 1])


class ChangeGate:
    """Keeps the reference picture and decides, frame by frame, where the detector must look."""

    def __init__(self, detector: BallDetector, config: ChangeConfig | None = None) -> None:
        self.config = config or ChangeConfig()
        lw, lh = detector.low_size
        self._size = (lw // 2, lh // 2)
        search = detector.search_mask().astype(np.uint8)
        self._search = cv2.resize(search, self._size, interpolation=cv2.INTER_NEAREST)
        self._full_share = self.config.full_above * max(float(self._search.mean()), 1e-9)
        self._quiet = float(np.floor(self.config.threshold))
        self._low_shape = (lh, lw)
        r_tiny = detector.radius_low / 2
        k = 2 * int(np.ceil(self.config.grow_radii * r_tiny)) + 1
        self._grow = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
        self._margin = int(np.ceil(self.config.margin_radii * detector.radius_low))
        self._reference: np.ndarray | None = None
        self._last_changed: np.ndarray | None = None
        self._since_full = 0

    def plan(self, small: np.ndarray, recheck: np.ndarray | None = None,
             remeasured: np.ndarray | None = None) -> ChangePlan:
        """Where to detect in the frame whose reduced-resolution window is ``small`` (``BallDetector.low_res``),
        and the reference brought up to date for it. ``recheck``: points (N, 2) at the reduced resolution to look
        at again whether or not they changed (the places of doubtful detections lost a moment ago: something
        marginal, like the white ferrule of a cue sliding along its own line, changes nothing there yet comes and
        goes). ``remeasured``: points (N, 2) of balls the caller measures again where they are, changed or not:
        no rectangle is searched for them, but the reference follows the frame there as where it changed."""
        w, h = self._size
        # Even sizes only: OpenCV's area resize by exactly 2 has a fast path (0.05 ms here, 1.2 ms otherwise).
        tiny = cv2.resize(small[:2 * h, :2 * w], self._size, interpolation=cv2.INTER_AREA)
        self._since_full += 1
        if self._reference is None or self._since_full >= self.config.refresh_every:
            return self._full(tiny)
        # 0/1 uint8 maps throughout, OpenCV's calls on them (each a few microseconds; numpy's take tens).
        # Quiet: every channel within the threshold; "> threshold" on whole grey levels is "not <= its floor".
        quiet = cv2.inRange(cv2.absdiff(tiny, self._reference), (0, 0, 0), (self._quiet,) * 3)  # 0 / 255
        seen = cv2.bitwise_and(self._search, cv2.bitwise_not(quiet))
        changed = self._grown(seen) if cv2.countNonZero(seen) else seen
        look = cv2.bitwise_or(changed, self._last_changed)  # and once more where it just stopped changing
        self._last_changed = changed
        self._mark(look, recheck)
        followed = self._mark(look.copy(), remeasured) if remeasured is not None and len(remeasured) else look
        n_look = cv2.countNonZero(look)
        if n_look > self._full_share * look.size:
            return self._full(tiny)
        # The reference follows the frame only where the detector looks again: elsewhere a slow drift adds up.
        if n_look or followed is not look:
            cv2.copyTo(tiny, followed, self._reference)
        return ChangePlan(False, self._rects(look) if n_look else (), look.view(bool))

    def _grown(self, seen: np.ndarray) -> np.ndarray:
        """``seen`` dilated by the grow disc, the dilation run only over the box round what it holds and the disc's
        reach (what changed is a ball or two: the whole map's dilation was a quarter of the change stage)."""
        x, y, w, h = cv2.boundingRect(seen)
        reach = self._grow.shape[0] // 2
        y0, y1 = max(y - reach, 0), min(y + h + reach, seen.shape[0])
        x0, x1 = max(x - reach, 0), min(x + w + reach, seen.shape[1])
        out = np.zeros_like(seen)
        out[y0:y1, x0:x1] = cv2.dilate(np.ascontiguousarray(seen[y0:y1, x0:x1]), self._grow)
        return out

    def _mark(self, look: np.ndarray, points: np.ndarray | None) -> np.ndarray:
        """``look`` with a grown change's disc drawn round each of ``points`` (reduced resolution), in place."""
        if points is not None and len(points):
            for x, y in change_cells(points, look.shape):  # a handful of points at most
                cv2.circle(look, (int(x), int(y)), self._grow.shape[0] // 2, 1, -1)
        return look

    def _full(self, tiny: np.ndarray) -> ChangePlan:
        self._reference = tiny.copy()
        self._last_changed = np.zeros(tiny.shape[:2], np.uint8)
        self._since_full = 0
        return ChangePlan(True)

    def _rects(self, look: np.ndarray) -> tuple[Rect, ...]:
        """Rectangles at the reduced resolution round each changed region, grown by the margin, overlapping ones
        merged (a ball in two rectangles would be found twice)."""
        # The outer contours' bounding boxes are the regions' (a region inside another's hole lies in its box
        # anyway), and finding them is 30 times cheaper than labelling every pixel (0.01 ms against 0.4 here).
        contours, _ = cv2.findContours(look, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        lh, lw = self._low_shape
        m = self._margin
        boxes = [[max(2 * x - m, 0), max(2 * y - m, 0), min(2 * (x + w) + m, lw), min(2 * (y + h) + m, lh)]
                 for x, y, w, h in map(cv2.boundingRect, contours)]
        return tuple((y0, y1, x0, x1) for x0, y0, x1, y1 in _merge_overlapping(boxes))


def _merge_overlapping(boxes: list[list[int]]) -> list[list[int]]:
    """Boxes (x0, y0, x1, y1) with every overlapping pair replaced by their union, until none overlap (a union
    may reach a box it did not before, hence the passes)."""
    grew = True
    while grew:
        grew = False
        out: list[list[int]] = []
        for b in boxes:
            for a in out:
                if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]:
                    a[:] = [min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])]
                    grew = True
                    break
            else:
                out.append(b)
        boxes = out
    return boxes


__all__ = ["ChangeConfig", "ChangeGate", "ChangePlan"]
