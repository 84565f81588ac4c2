"""Chapó pins in one frame: which stand on their spots, and where the fallen ones lie.

A standing pin is seen from above as the outline of its cylinder from base to top, which the camera model gives
at each spot (near the table centre, under the camera, nearly a disc a few pixels across). A pin stands when most
of that outline differs from the empty table, counting only the part no ball covers (a ball resting against a pin
must not hold it up, nor knock it down), and the blob there is no longer than a standing pin looks: a pin knocked
over usually lies across its own spot, filling the outline too, but as long as the pin (its second moment along
its axis, which the standing outline's is far below). A fallen pin is a small elongated blob, about its length by its width,
within reach of the pin cross, that no ball and no standing pin explains; fallen pins are matched to such blobs
nearest to their own spot first. The work is done at full resolution in one window over the pin cross: a pin is
only about 6 px wide at 1456 x 1088.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Mapping

import cv2
import numpy as np

from calibration.camera import CameraModel
from rules.balls import CHAPO_PINS
from rules.tables import TableSpec, chapo_pin_spots
from vision.arrays import shrink
from vision.background import BackgroundModel, DifferenceParams, soft_difference
from vision.detections import Detections, PinObservation


@dataclass(frozen=True)
class PinConfig:
    reach_mm: float = 380.0  # how far from the king's spot a fallen pin is looked for
    standing_fill: float = 0.5  # share of a pin's visible outline that must differ from the cloth
    min_visible: float = 0.3  # below this share of the outline left uncovered by balls, keep the last state
    # ... unless a ball's centre is nearer the spot than a ball's and a pin's radius less this (room for the
    # balls' and the pins' placement errors): no pin can stand there. Only a ball detected this surely (a pin
    # misread as a ball is a poor fit).
    on_spot_margin_mm: float = 5.0
    sure_ball_score: float = 0.75
    on_spot_frames: int = 8
    difference: DifferenceParams = field(default_factory=DifferenceParams)


class PinDetector:
    """Pin states for one camera and one Chapó table. Keeps each pin's last state for frames in which a ball
    hides its spot."""

    def __init__(self, camera: CameraModel, table: TableSpec, config: PinConfig | None = None,
                 spots: Mapping[str, tuple[float, float]] | None = None) -> None:
        self.camera = camera
        self.table = table
        self.config = config or PinConfig()
        all_spots = chapo_pin_spots(table) if spots is None else dict(spots)
        self.spots = {p: all_spots[p] for p in CHAPO_PINS if p in all_spots}
        centre = np.array(self.spots.get("king", (table.width / 2, table.length / 2)))
        reach = self.config.reach_mm
        corners = centre + np.array([[-reach, -reach], [reach, -reach], [reach, reach], [-reach, reach]])
        px = np.concatenate([camera.table_to_image(corners, 0.0), camera.table_to_image(corners, table.pin_height)])
        w, h = camera.image_size
        x0, y0 = np.maximum(np.floor(px.min(axis=0)).astype(int), 0)
        x1, y1 = np.minimum(np.ceil(px.max(axis=0)).astype(int) + 1, [w, h])
        self.window = (slice(y0, y1), slice(x0, x1))
        self._origin = np.array([x0, y0])
        shape = (y1 - y0, x1 - x0)
        # Where the fallen pins may lie (the reach, as seen on the cloth).
        self._reach_mask = np.zeros(shape, np.uint8)
        cv2.fillConvexPoly(self._reach_mask, np.round(camera.table_to_image(corners, 0.0) - self._origin)
                           .astype(np.int32), 1)
        self._outlines = {p: self._outline_mask(xy, shape) for p, xy in self.spots.items()}
        ppm = float(camera.pixels_per_mm(centre, 0.0))
        self._ppm = ppm
        self._lying_area = table.pin_height * table.pin_base_diameter * ppm * ppm
        self._pin_width_px = table.pin_base_diameter * ppm
        # Most of a lying pin's length: a pin lying there. (A blob's length is sqrt(12 x its largest second
        # moment), exact for a thin bar; a standing pin's blob, its soft edge and shadow included, stays near half
        # a lying pin's length: on the virtual table at 640 x 480, 5-7 px standing, 14 lying, the cut at 8.5.)
        pin_px = {p: table.pin_height * float(camera.pixels_per_mm(xy, 0.0)) for p, xy in self.spots.items()}
        self._down_length = {p: max(0.85 * pin_px[p], 1.5 * _length(self._outlines[p])) for p in self.spots}
        # Longer than two lying pins end to end (two fallen together, touching) is no pin: a cue lying over the
        # spot at the stroke, an arm (Chapó seed 125: the cue over two pins read them as down, a foul).
        self._covering_length = {p: 2.5 * pin_px[p] for p in self.spots}
        self._last: dict[str, bool] = {p: True for p in self.spots}
        self._on_spot: dict[str, int] = {p: 0 for p in self.spots}  # frames running a ball has been on the spot

    def _outline_mask(self, xy: tuple[float, float], shape: tuple[int, int]) -> np.ndarray:
        rb = self.table.pin_base_diameter / 2
        ang = np.linspace(0, 2 * np.pi, 16, endpoint=False)
        ring = np.stack([np.cos(ang), np.sin(ang)], 1) * rb * 0.8 + np.asarray(xy)
        pts = np.concatenate([self.camera.table_to_image(ring, 0.0),
                              self.camera.table_to_image(ring, self.table.pin_height)]) - self._origin
        m = np.zeros(shape, np.uint8)
        cv2.fillConvexPoly(m, cv2.convexHull(np.round(pts * 16).astype(np.int32)), 1, shift=4)
        return m.astype(bool)

    def reset(self) -> None:
        """All pins standing again (the pins are set up for a new game)."""
        self._last = {p: True for p in self.spots}
        self._on_spot = {p: 0 for p in self.spots}

    def around(self, obs: PinObservation, margin_mm: float) -> np.ndarray:
        """The window's mask (uint8 0/1) of where a change could alter ``obs``: the outlines of the pins standing
        grown by ``margin_mm`` (a ball reaching a pin covers its outline), and round each pin down a pin's length
        and the margin (it is pushed, or it is the blob being read)."""
        ppm = self._ppm  # at the king's spot
        grow = max(1, int(np.ceil(margin_mm * ppm)))
        out = np.zeros(self._reach_mask.shape, np.uint8)
        for pin in obs.standing:
            out |= self._outlines[pin]
        if out.any():
            out = cv2.dilate(out, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * grow + 1,) * 2))
        reach = int(np.ceil((self.table.pin_height + margin_mm) * ppm))
        for xy in obs.down.values():
            x, y = self.camera.table_to_image(np.asarray([xy], float), 0.0)[0] - self._origin
            cv2.circle(out, (int(round(x)), int(round(y))), reach, 1, -1)
        return out

    def observe(self, frame: np.ndarray, t: float, background: BackgroundModel,
                balls: Detections | None = None) -> PinObservation:
        win = self.window
        fg = soft_difference(np.ascontiguousarray(frame[win]), background.full.unit[win], background.full.norm[win],
                             self.config.difference)
        covered = np.zeros(fg.shape, np.uint8)
        if balls is not None:
            for (x, y), r in zip(balls.px - self._origin, balls.radius_px):
                cv2.circle(covered, (int(round(x)), int(round(y))), int(np.ceil(r * 1.15)) + 1, 1, -1)
        covered_b = covered.astype(bool)
        _, labels = cv2.connectedComponents(((fg > 0.5) & ~covered_b).astype(np.uint8), connectivity=8)
        blob_pixels = _labelled_pixels(labels)
        standing: dict[str, tuple[float, float]] = {}
        fallen: list[str] = []
        on_spot = self._count_balls_on_spots(balls)  # counted every frame, whatever the pins look like
        for pin, outline in self._outlines.items():
            visible = outline & ~covered_b
            share = visible.sum() / max(outline.sum(), 1)
            across = self._across(labels, blob_pixels, visible, pin) if share >= self.config.min_visible else "covered"
            if across == "covered":
                # Hidden: as it was, unless a ball rests where the pin would stand (Chapó seed 120: the mingo
                # crept over the top lateral's spot and stopped 31 mm from it, the pin knocked from under it).
                up = self._last[pin] and pin not in on_spot
            else:
                up = float(fg[visible].mean()) >= self.config.standing_fill and across != "lying"
            self._last[pin] = up
            if up:
                standing[pin] = self.spots[pin]
            else:
                fallen.append(pin)
        down, unplaced = self._place_fallen(fg, covered_b, standing, fallen)
        return PinObservation(t, standing, down, unplaced)

    @property
    def settled(self) -> bool:
        """No ball is being counted onto a spot (``_count_balls_on_spots``): an unchanged frame would read the
        same."""
        return all(n == 0 or n >= self.config.on_spot_frames for n in self._on_spot.values())

    def _count_balls_on_spots(self, balls: Detections | None) -> set[str]:
        """The pins on whose spot a ball surely detected has had its centre for ``config.on_spot_frames`` frames
        running, where a standing pin would be inside it: nearer than a ball's and a pin's radius together, less
        ``config.on_spot_margin_mm``. (For a frame or two, it is the toppling pin itself read as a ball: Chapó
        seed 106, 33 mm from its spot, the fall then read down, down, up, down, timed late and blamed on no
        ball.)"""
        names = list(self.spots)
        on_it = np.zeros(len(names), bool)
        if balls is not None and len(balls):
            sure = balls.xy[balls.score >= self.config.sure_ball_score]
            reach = self.table.ball_radius + self.table.pin_base_diameter / 2 - self.config.on_spot_margin_mm
            spots = np.array([self.spots[p] for p in names])
            if len(sure):
                on_it = (np.linalg.norm(sure[:, None, :] - spots[None], axis=2) < reach).any(axis=0)
        for pin, here in zip(names, on_it):
            self._on_spot[pin] = self._on_spot[pin] + 1 if here else 0
        return {p for p in names if self._on_spot[p] >= self.config.on_spot_frames}

    def _across(self, labels: np.ndarray, blob_pixels: tuple[np.ndarray, np.ndarray, np.ndarray],
                visible: np.ndarray, pin: str) -> str:
        """What lies across a pin's spot: "lying" (a blob as long as a lying pin: the pin itself, knocked over),
        "covered" (one far longer than any pin: a cue or an arm over the spot, which hides whether the pin
        stands) or "clear" (nothing longer than the pin standing). ``blob_pixels``: ``_labelled_pixels(labels)``."""
        under = labels[visible]
        under = under[under > 0]
        if not len(under):
            return "clear"
        xs, ys, ids = blob_pixels
        mine = ids == np.bincount(under).argmax()
        length = _points_length(xs[mine], ys[mine])
        if length > self._covering_length[pin]:
            return "covered"
        return "lying" if length > self._down_length[pin] else "clear"

    def _place_fallen(self, fg: np.ndarray, covered: np.ndarray, standing: Mapping[str, tuple[float, float]],
                      fallen: list[str]) -> tuple[dict[str, tuple[float, float]], frozenset[str]]:
        """Where each fallen pin lies (the blob nearest its spot), and those with no blob of their own (put on
        their spot)."""
        if not fallen:
            return {}, frozenset()
        free = (fg > 0.5) & ~covered & self._reach_mask.astype(bool)
        for pin in standing:
            free &= ~cv2.dilate(self._outlines[pin].astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool)
        n, labels = cv2.connectedComponents(free.astype(np.uint8), connectivity=8)
        # The blobs' pixels listed once (the mask is sparse): OpenCV's component statistics cost ten times the
        # labelling itself, for the many specks of noise.
        all_xs, all_ys, ids = _labelled_pixels(labels)
        areas = np.bincount(ids, minlength=n)
        blobs = []
        for i in np.nonzero((areas >= 0.35 * self._lying_area) & (areas <= 2.5 * self._lying_area))[0]:
            if i == 0:
                continue
            mine = ids == i
            pts = np.stack([all_xs[mine], all_ys[mine]], 1).astype(np.float64)
            ev = np.linalg.eigvalsh(np.cov(pts.T)) if len(pts) > 2 else np.array([1.0, 1.0])
            if ev[1] < 2.0 * ev[0]:
                continue  # round: a chalk cube, a hand's tip, not a lying pin
            c = pts.mean(axis=0) + self._origin
            blobs.append(self.camera.image_to_table(c, self.table.pin_base_diameter / 2))
        out: dict[str, tuple[float, float]] = {}
        # Nearest pairs first: each fallen pin takes the blob closest to its spot.
        pairs = sorted((float(np.hypot(*(b - np.asarray(self.spots[p])))), p, j) for p in fallen
                       for j, b in enumerate(blobs))
        used: set[int] = set()
        for _, p, j in pairs:
            if p in out or j in used:
                continue
            out[p] = (float(blobs[j][0]), float(blobs[j][1]))
            used.add(j)
        # A fallen pin with no blob of its own (under a ball, two pins lying together) lies near its spot.
        unplaced = frozenset(p for p in fallen if p not in out)
        for p in fallen:
            out.setdefault(p, self.spots[p])
        return out, unplaced


def _labelled_pixels(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The x, y and label of every labelled (non-zero) pixel."""
    ys, xs = np.nonzero(labels)
    return xs, ys, labels[ys, xs]


def _length(mask: np.ndarray) -> float:
    """sqrt(12 x the largest second moment) of a mask's pixels: the length of a thin bar, 0.87 of a disc's
    diameter."""
    ys, xs = np.nonzero(mask)
    return _points_length(xs, ys)


def _points_length(xs: np.ndarray, ys: np.ndarray) -> float:
    """``_length`` of the pixels at ``xs``, ``ys``."""
    if len(xs) < 3:
        return float(len(xs))
    ev = np.linalg.eigvalsh(np.cov(np.stack([xs, ys]).astype(np.float64)))
    return float(np.sqrt(12.0 * max(ev[-1], 0.0)))


class FramePins:
    """A PinDetector over a frame detector's empty-table model: the pipeline's pin observer (the model is asked
    for each frame, since the detector follows the light on it).

    The pins are looked at again only when the picture has changed where a pin is since they last were: the full-
    resolution look (a 390 px window's colour difference and its blobs) costs as much as the whole ball detection
    of a Chapó frame, and most frames leave the pins as they were. The window is compared at a quarter of the
    resolution with the one last looked at (not the previous frame: a slow change adds up until it counts), only
    round the standing pins' outlines and the fallen pins' places (``watch_mm`` beyond them): a ball rolling
    through the pin cross's window but clear of every pin changes nothing the look would read, and it was half
    of a Chapó shot's frames (seed 100: 231 looks in 459 frames, 4.6 ms each). The pins are looked at anyway
    every ``refresh_every`` frames (the empty-table model follows the light)."""

    def __init__(self, pins: PinDetector, background: Callable[[], BackgroundModel], change_level: float = 8.0,
                 refresh_every: int = 30, watch_mm: float = 40.0) -> None:
        self.pins = pins
        self.background = background
        # Grey levels a quarter-resolution pixel (16 averaged) must change by: the camera's noise averages to under
        # one there, and a pin tipping over (100 levels or more across its 6 px) or a ball coming in far exceed it.
        self.change_level = change_level
        self.refresh_every = refresh_every
        self._looked_at: np.ndarray | None = None
        self._last: PinObservation | None = None
        self._since = 0
        self.watch_mm = watch_mm
        self._watch: np.ndarray | None = None  # (quarter-resolution) where the last look's pins are

    def observe(self, image: np.ndarray, t: float, balls: Detections) -> PinObservation:
        win = self.pins.window
        crop = image[win]
        small = shrink(crop, 4)
        self._since += 1
        if (self._last is not None and self._since < self.refresh_every and self.pins.settled
                and self._unchanged(small)):
            return replace(self._last, t=t, standing=dict(self._last.standing), down=dict(self._last.down))
        self._last = self.pins.observe(image, t, self.background(), balls)
        self._looked_at, self._since = small, 0
        self._watch = self._watched(self._last, small.shape[:2])
        return self._last

    def _unchanged(self, small: np.ndarray) -> bool:
        """Whether ``small`` (the window at a quarter of the resolution) is as last looked at round the pins."""
        diff = cv2.absdiff(small, self._looked_at).max(axis=2)
        return float(cv2.minMaxLoc(diff, self._watch)[1]) < self.change_level

    def _watched(self, obs: PinObservation, shape: tuple[int, int]) -> np.ndarray:
        """``PinDetector.around`` at a quarter of the resolution (uint8, ``shape``)."""
        full = self.pins.around(obs, self.watch_mm)
        h, w = shape
        return (shrink(full * 255, 4)[:h, :w] > 0).astype(np.uint8)
