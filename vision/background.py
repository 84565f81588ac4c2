"""The empty table: a per-pixel model of the cloth, cushions and rails, and how far a frame departs from it.

Built while nothing moves (the median of a few still frames), then updated slowly, away from the balls, so it
follows the light as the evening goes. When the table is never seen empty (balls are always on it during a game),
``fill_balls`` paints the cloth in over the detected balls so the model becomes an empty table anyway.

The difference measure is made for billiard light: a shadow darkens the cloth without changing its colour, so a
frame pixel is split into its component along the background colour (brightness ratio ``a``) and the component
across it (chroma difference). Darkening down to ``shadow_floor`` of the cloth's brightness costs nothing; only the
colour change and the brightness outside [shadow_floor, glare_ceiling] count. A black ball is far darker than any
shadow, a white one far brighter than the cloth, and a coloured one differs in chroma.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import cv2
import numpy as np

from .arrays import shrink


@dataclass(frozen=True)
class DifferenceParams:
    """How a frame pixel is compared with the background. Units: 8-bit grey levels (BGR)."""

    shadow_floor: float = 0.45  # brightness ratio frame / cloth above which a darker pixel is taken for a shadow
    glare_ceiling: float = 1.18  # ... and below which a brighter one is taken for a change of the light
    saturation: float = 55.0  # difference at which a pixel is counted fully as "not cloth" (soft mask = 1)

    def __post_init__(self) -> None:
        if not 0.0 < self.shadow_floor < 1.0 < self.glare_ceiling:
            raise ValueError("need 0 < shadow_floor < 1 < glare_ceiling")
        if self.saturation <= 0:
            raise ValueError("saturation must be positive")


class ColourReference:
    """A background image prepared for fast comparison: unit colour direction and brightness per pixel."""

    def __init__(self, image: np.ndarray) -> None:
        # Kept as 8-bit (it is one): a float copy is 18 MB at 1456 x 1088, and only small windows of it are read.
        self.image = np.ascontiguousarray(image, dtype=np.uint8)
        h, w = self.image.shape[:2]
        self.norm = np.empty((h, w), np.float32)
        self.unit = np.empty((h, w, 3), np.float32)
        # Built in bands of rows: done at once, the float copy, its square and the three-channel norm were 60 MB of
        # temporaries at full resolution, the peak of the detector's start-up (it was within 10 MB of the 300 MB
        # limit). OpenCV's element-wise functions, 5x faster than numpy's here: the live loop rebuilds this every
        # second.
        for top in range(0, h, _BAND_ROWS):
            rows = slice(top, min(top + _BAND_ROWS, h))
            b = self.image[rows].astype(np.float32)
            norm = cv2.max(cv2.sqrt(cv2.transform(cv2.multiply(b, b), _SUM3)), 1.0)  # no division by zero on black
            self.norm[rows] = norm
            cv2.divide(b, cv2.merge([norm, norm, norm]), dst=self.unit[rows])

    def difference(self, frame: np.ndarray, params: DifferenceParams,
                   window: tuple[slice, slice] | None = None) -> np.ndarray:
        """Soft "not cloth" mask in [0, 1] (float32) of ``frame`` against this reference (or a window of it)."""
        unit, norm = (self.unit, self.norm) if window is None else (self.unit[window], self.norm[window])
        return soft_difference(frame, unit, norm, params)


def colour_difference(frame: np.ndarray, unit: np.ndarray, norm: np.ndarray, params: DifferenceParams) -> np.ndarray:
    """The shadow-tolerant colour difference (grey levels, float32 (h, w)) of ``frame`` (h, w, 3) against a
    background given as unit colour directions (h, w, 3) and brightness (h, w).

    OpenCV's element-wise functions, not numpy's: they run vectorised without temporaries, about ten times faster
    on the frame sizes here (1.4 ms for 728 x 544 on one core)."""
    f = frame.astype(np.float32)
    along = cv2.transform(cv2.multiply(f, unit), _SUM3)  # frame brightness measured along the cloth colour
    total2 = cv2.transform(cv2.multiply(f, f), _SUM3)
    across2 = cv2.max(cv2.subtract(total2, cv2.multiply(along, along)), 0.0)  # squared chroma difference
    too_dark = cv2.max(cv2.subtract(cv2.multiply(norm, params.shadow_floor), along), 0.0)
    too_bright = cv2.max(cv2.subtract(along, cv2.multiply(norm, params.glare_ceiling)), 0.0)
    excess = cv2.add(too_dark, too_bright)
    return cv2.sqrt(cv2.add(across2, cv2.multiply(excess, excess)))


def brightness_ratio(frame: np.ndarray, unit: np.ndarray, norm: np.ndarray) -> np.ndarray:
    """Each pixel's brightness along the cloth's colour, as a share of the cloth's own there (1: as bright as the
    cloth; a shadow 0.5-0.9; the black about 0.25)."""
    along = cv2.transform(cv2.multiply(frame.astype(np.float32), unit), _SUM3)
    return cv2.divide(along, norm)


def shade_invariant_difference(frame: np.ndarray, unit: np.ndarray, norm: np.ndarray,
                               params: DifferenceParams) -> np.ndarray:
    """``colour_difference`` with the chroma difference divided by the brightness ratio (no lower than the shadow
    floor): the chroma difference of a shaded pixel as it would be lit like the cloth. A ball's chroma offset
    from the cloth shrinks with its shading, so the plain measure of a ball close to the cloth's colour sees only
    its lit half; this one sees the whole ball, and a shadow on the cloth (the cloth's own colour, darker) not at
    all. (Not used for every ball: it lifts the noise of dark pixels by as much.)"""
    f = frame.astype(np.float32)
    along = cv2.transform(cv2.multiply(f, unit), _SUM3)
    total2 = cv2.transform(cv2.multiply(f, f), _SUM3)
    across2 = cv2.max(cv2.subtract(total2, cv2.multiply(along, along)), 0.0)
    ratio = cv2.max(cv2.divide(along, norm), params.shadow_floor)  # brightness_ratio, from the along at hand
    too_dark = cv2.max(cv2.subtract(cv2.multiply(norm, params.shadow_floor), along), 0.0)
    too_bright = cv2.max(cv2.subtract(along, cv2.multiply(norm, params.glare_ceiling)), 0.0)
    excess = cv2.add(too_dark, too_bright)
    return cv2.sqrt(cv2.add(cv2.divide(across2, cv2.multiply(ratio, ratio)), cv2.multiply(excess, excess)))


def soft_difference(frame: np.ndarray, unit: np.ndarray, norm: np.ndarray, params: DifferenceParams) -> np.ndarray:
    """``colour_difference`` mapped to a soft "not cloth" mask in [0, 1] by ``params.saturation``."""
    d = colour_difference(frame, unit, norm, params)
    return cv2.min(cv2.multiply(d, 1.0 / params.saturation), 1.0)


_SUM3 = np.ones((1, 3), np.float32)
_BAND_ROWS = 64  # a band's temporaries are ~1 MB at 1456 px wide


class BackgroundModel:
    """The empty-table image at full resolution and at the detector's working resolution."""

    def __init__(self, image: np.ndarray, scale: int = 1) -> None:
        if image.ndim != 3 or image.shape[2] != 3:
            raise ValueError(f"background must be an (h, w, 3) BGR image, got {image.shape}")
        # The estimate as 8-bit, and its float accumulator only once ``update`` first blends a frame in: the models
        # made on the way to an empty table are never updated, and a float copy is 19 MB at 1456 x 1088 (three or
        # four of them alive at once were most of the start-up's peak memory).
        self._image = np.ascontiguousarray(image, dtype=np.uint8)
        self._acc: np.ndarray | None = None
        self.scale = int(scale)
        self._prepare()

    # --- construction -----------------------------------------------------------------------------------------

    @classmethod
    def from_frames(cls, frames: Sequence[np.ndarray], scale: int = 1) -> "BackgroundModel":
        """The per-pixel median of still frames of the empty table (or of frames where whatever is on the table
        moves: the median keeps what is there most of the time)."""
        if len(frames) == 0:
            raise ValueError("need at least one frame")
        stack = np.stack([np.asarray(f) for f in frames])
        return cls(np.median(stack, axis=0).astype(np.uint8) if len(frames) > 1 else stack[0], scale)

    def _prepare(self) -> None:
        self._full: ColourReference | None = None
        self.low = ColourReference(shrink(self._image, self.scale))

    @property
    def full(self) -> ColourReference:
        """The full-resolution reference, made when first asked for: the models made on the way to an empty table
        (``BallDetector.background_without_empty_table``) are only searched at the reduced resolution, and each
        full one is 40 MB at 1456 x 1088."""
        if self._full is None:
            self._full = ColourReference(self._image)
        return self._full

    def drop_full(self) -> None:
        """Let the full-resolution reference go (it is made again when next asked for): for a model that is done
        with, while the caller still holds it."""
        self._full = None

    @property
    def image(self) -> np.ndarray:
        """The current empty-table estimate (uint8 BGR, full resolution)."""
        return self._image.copy()

    # --- keeping it current -----------------------------------------------------------------------------------

    def update(self, frame: np.ndarray, keep_out: np.ndarray | None = None, rate: float = 0.02) -> None:
        """Blend ``frame`` in at ``rate`` wherever ``keep_out`` (uint8/bool, full resolution) is false: pass the
        balls' discs and anything moving there, so only the bare cloth teaches the model. Call it every second or
        so while the table is still: it follows slow light changes, not a ball that stops for a moment."""
        if not 0.0 < rate <= 1.0:
            raise ValueError("rate must be in (0, 1]")
        mask = None
        if keep_out is not None:
            mask = (~np.asarray(keep_out, dtype=bool)).astype(np.uint8)
        if self._acc is None:
            self._acc = self._image.astype(np.float32)
        # The 8-bit frame blended in as it is, and the blend of 8-bit values read back without a clip (it stays
        # within 0-255): the float copy of the frame and the clipped one were 38 MB of temporaries at 1456 x 1088
        # and four fifths of the update's 12 ms.
        cv2.accumulateWeighted(np.ascontiguousarray(frame, dtype=np.uint8), self._acc, rate, mask)
        self._image = self._acc.astype(np.uint8)
        self._prepare()

    def fill_balls(self, frame: np.ndarray, centres_px: np.ndarray, radii_px: np.ndarray,
                   grow: float = 1.35) -> None:
        """Replace the model by ``frame`` with the cloth painted in over discs at the given balls (each grown by
        ``grow`` to cover its soft edge and its contact shadow): an empty table from a frame with balls on it."""
        mask = np.zeros(frame.shape[:2], np.uint8)
        for (x, y), r in zip(np.asarray(centres_px).reshape(-1, 2), np.asarray(radii_px).reshape(-1)):
            cv2.circle(mask, (int(round(x * 16)), int(round(y * 16))), int(round(r * grow * 16)), 255, -1,
                       lineType=cv2.LINE_8, shift=4)
        self._image = cv2.inpaint(frame, mask, 5, cv2.INPAINT_TELEA)
        self._acc = None
        self._prepare()
