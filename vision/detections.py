"""Detections of one frame as arrays, one per field, shape-checked on creation: the type from detector to tracker.

A detection is one ball seen in one frame: where it is (pixels and table millimetres at the ball-centre plane),
how sure the detector is, and how much it looks like each ball id of the discipline (``class_probs``, rows summing
to 1 over ``classes``). Identity is settled later by the tracker, which adds continuity: the two carom whites, for
instance, can only be told apart by it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True, eq=False)
class Detections:
    t: float  # the frame's time (s): the middle of its exposure
    xy: np.ndarray  # (N, 2) cloth point under each ball centre, table mm
    px: np.ndarray  # (N, 2) pixel centre in the (distorted) image
    radius_px: np.ndarray  # (N,) apparent radius in pixels
    score: np.ndarray  # (N,) detection confidence in [0, 1]
    classes: tuple[str, ...] = ()  # the ball ids the columns of class_probs stand for
    class_probs: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))  # (N, K)
    blurred: np.ndarray | None = None  # (N,) True where the blob was a motion smear (position = mid-exposure)

    def __post_init__(self) -> None:
        xy = np.asarray(self.xy, dtype=np.float64).reshape(-1, 2)
        n = len(xy)
        px = np.asarray(self.px, dtype=np.float64).reshape(-1, 2)
        radius = np.asarray(self.radius_px, dtype=np.float64).reshape(-1)
        score = np.asarray(self.score, dtype=np.float64).reshape(-1)
        probs = np.asarray(self.class_probs, dtype=np.float64)
        if probs.size == 0:
            probs = np.zeros((n, len(self.classes)))
        if px.shape != (n, 2) or radius.shape != (n,) or score.shape != (n,):
            raise ValueError(f"detections: xy has {n} rows but px {px.shape}, radius {radius.shape}, "
                             f"score {score.shape}")
        if probs.shape != (n, len(self.classes)):
            raise ValueError(f"detections: class_probs must be ({n}, {len(self.classes)}), got {probs.shape}")
        blurred = None if self.blurred is None else np.asarray(self.blurred, dtype=bool).reshape(-1)
        if blurred is not None and blurred.shape != (n,):
            raise ValueError(f"detections: blurred must have {n} values")
        for name, value in (("xy", xy), ("px", px), ("radius_px", radius), ("score", score),
                            ("class_probs", probs), ("blurred", blurred)):
            if value is not None:
                value.setflags(write=False)
            object.__setattr__(self, name, value)

    def __len__(self) -> int:
        return len(self.xy)

    @classmethod
    def empty(cls, t: float, classes: tuple[str, ...] = ()) -> "Detections":
        return cls(t, np.zeros((0, 2)), np.zeros((0, 2)), np.zeros(0), np.zeros(0), classes,
                   np.zeros((0, len(classes))))

    @classmethod
    def _checked(cls, t: float, xy: np.ndarray, px: np.ndarray, radius_px: np.ndarray, score: np.ndarray,
                 classes: tuple[str, ...], class_probs: np.ndarray, blurred: np.ndarray | None) -> "Detections":
        """A new instance from arrays cut or joined from checked ones (already float64 or bool, of matching
        lengths): only made read-only, not checked again (the checks are most of a small subset's cost, and the
        detector cuts and joins several times a frame)."""
        out = object.__new__(cls)
        for name, value in (("t", t), ("xy", xy), ("px", px), ("radius_px", radius_px), ("score", score),
                            ("classes", classes), ("class_probs", class_probs), ("blurred", blurred)):
            if isinstance(value, np.ndarray):
                value.setflags(write=False)
            object.__setattr__(out, name, value)
        return out

    def subset(self, mask: np.ndarray) -> "Detections":
        return Detections._checked(self.t, self.xy[mask], self.px[mask], self.radius_px[mask], self.score[mask],
                                   self.classes, self.class_probs[mask],
                                   None if self.blurred is None else self.blurred[mask])

    def moved(self, mask: np.ndarray, px: np.ndarray, xy: np.ndarray) -> "Detections":
        """The same detections with those under ``mask`` (N,) bool put at ``px`` and ``xy`` (each (mask.sum(), 2),
        pixels and table mm), the rest as they were."""
        new_px, new_xy = self.px.copy(), self.xy.copy()
        new_px[mask], new_xy[mask] = px, xy
        return Detections._checked(self.t, new_xy, new_px, self.radius_px, self.score, self.classes,
                                   self.class_probs, self.blurred)

    @classmethod
    def concat(cls, t: float, parts: "list[Detections]", classes: tuple[str, ...] = ()) -> "Detections":
        """One frame's detections from several parts (found in different parts of the frame, or kept from the
        frame before), all at time ``t``; the parts must share ``classes`` unless they are empty."""
        parts = [p for p in parts if len(p)]
        if not parts:
            return cls.empty(t, classes)
        classes = parts[0].classes
        if any(p.classes != classes for p in parts):
            raise ValueError("detections: cannot join parts identified against different ball ids")
        blurred = np.concatenate([p.blurred if p.blurred is not None else np.zeros(len(p), bool) for p in parts])
        return cls._checked(float(t), np.concatenate([p.xy for p in parts]), np.concatenate([p.px for p in parts]),
                            np.concatenate([p.radius_px for p in parts]), np.concatenate([p.score for p in parts]),
                            classes, np.concatenate([p.class_probs for p in parts]), blurred)


@dataclass(frozen=True, eq=False)
class PinObservation:
    """Chapó pins in one frame: for each pin id, standing (and where) or down (and where it lies)."""

    t: float
    standing: dict[str, tuple[float, float]]  # pin id -> cloth point of its base
    down: dict[str, tuple[float, float]]  # pin id -> cloth point of the fallen pin's centre
    # The pins down whose place was not seen (no blob of their own: under a ball, against another pin): their
    # place in ``down`` is their spot, a stand-in.
    unplaced: frozenset[str] = frozenset()
