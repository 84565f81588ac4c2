"""Which ball is which, from colour: class probabilities for each detection.

Per ball, from the pixels within 0.75 of its radius (the rim is shaded and mixed with the cloth), in CIE Lab:

- ``white_frac``: the share of white pixels (low chroma, bright): 1 for a cue ball, about half for a pool stripe,
  a few hundredths for a solid (its number circle);
- ``dot_frac``: the share of strongly coloured pixels: the red dots on a carom spot white (a plain white has none);
- ``rim_frac``: the same share in the ring from 0.75 to 0.92 radii: a stripe lying with a white cap towards the
  camera shows its band only there, where a cue ball stays white;
- the body colour: the median L, a, b of the pixels that are not white (of all of them for a white ball).

Each kind of the discipline (``vision.ball_colours``) is a diagonal Gaussian over these six features, with a term
on the hue (the angle of a*, b*) between plainly coloured balls and kinds, which the light moves least. The default
means come from the true colours (a lit ball's median is close to its colour under the lamp); ``fit`` replaces
them by what this camera sees, from balls whose ids are known (the opening layout puts each ball on its spot).
Probabilities are spread evenly over the ids a kind stands for (the reds), which the tracker then tells apart.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Sequence

import cv2
import numpy as np

from rules.balls import MAX_REDS
from vision.ball_colours import Kind, kinds_for
from vision.detections import Detections

if TYPE_CHECKING:
    from vision.crop_classifier import CropClassifier

FEATURES = ("L", "a", "b", "white_frac", "dot_frac", "rim_frac")
_WHITE_CHROMA = 14.0  # Lab chroma below which a pixel is white or grey
_WHITE_L = 55.0  # ... and lightness above which it is white, not a shaded grey or black
_DOT_CHROMA = 30.0
_INNER = 0.75  # body colour and dots: away from the shaded rim
_WHOLE = 0.92  # white share
# A strongly coloured ball's hue (the angle of its a*, b*) barely moves with the light, where its chroma and L* do: a
# red in a dim corner of the virtual table (L* 22, a* 36, b* 22) is nearer the brown's Gaussian than the red's, yet
# its hue is the red's (31 degrees; the brown's 61). So the likelihood adds a hue term, only between a kind and a
# ball both plainly coloured (a kind's mean chroma over 20, the ball's over 40: a real green is 30, its hue spread
# by the cloth).
_HUE_SIGMA = 20.0  # degrees
_HUE_KIND_CHROMA = 20.0
_HUE_BALL_CHROMA = 40.0


def _lab(bgr: tuple[int, int, int]) -> np.ndarray:
    px = np.array([[bgr]], np.float32) / 255.0
    return cv2.cvtColor(px, cv2.COLOR_BGR2Lab)[0, 0].astype(np.float64)


def ball_crops(frame: np.ndarray, px: np.ndarray, radius: np.ndarray, scale: float = 1.0) -> tuple[np.ndarray,
                                                                                                    np.ndarray]:
    """Square crops (N, S, S, 3) uint8 around each ball and the disc masks (N, S, S) of the inner pixels."""
    n = len(px)
    half = int(np.ceil(float(np.max(radius)) * scale)) + 1 if n else 1
    size = 2 * half + 1
    h, w = frame.shape[:2]
    origin = np.round(px).astype(int) - half
    origin[:, 0] = np.clip(origin[:, 0], 0, w - size)
    origin[:, 1] = np.clip(origin[:, 1], 0, h - size)
    crops = np.empty((n, size, size, 3), np.uint8)
    for i, (x, y) in enumerate(origin):
        crops[i] = frame[y:y + size, x:x + size]
    g = np.arange(size, dtype=np.float64)
    dx = g[None, None, :] + origin[:, 0, None, None] - px[:, 0, None, None]
    dy = g[None, :, None] + origin[:, 1, None, None] - px[:, 1, None, None]
    inner = dx * dx + dy * dy <= (radius[:, None, None] * scale) ** 2
    return crops, inner


def _disc(px: np.ndarray, radius: np.ndarray, size: int, origin: np.ndarray, shape: tuple) -> np.ndarray:
    h, w = shape[:2]
    origin = origin.copy()
    origin[:, 0] = np.clip(origin[:, 0], 0, w - size)
    origin[:, 1] = np.clip(origin[:, 1], 0, h - size)
    g = np.arange(size, dtype=np.float64)
    dx = g[None, None, :] + origin[:, 0, None, None] - px[:, 0, None, None]
    dy = g[None, :, None] + origin[:, 1, None, None] - px[:, 1, None, None]
    return dx * dx + dy * dy <= (radius[:, None, None]) ** 2


def ball_features(frame: np.ndarray, px: np.ndarray, radius: np.ndarray) -> np.ndarray:
    """The colour features (N, 6) of balls seen at ``px`` (N, 2) with silhouette radii ``radius`` (N,)."""
    px = np.asarray(px, dtype=np.float64).reshape(-1, 2)
    radius = np.asarray(radius, dtype=np.float64).reshape(-1)
    n = len(px)
    if n == 0:
        return np.zeros((0, len(FEATURES)))
    crops, whole = ball_crops(frame, px, radius, _WHOLE)
    size = crops.shape[1]
    inner = _disc(px, radius * _INNER, whole.shape[1], np.round(px).astype(int) - size // 2, frame.shape)
    lab = cv2.cvtColor(crops.reshape(n * size, size, 3).astype(np.float32) * (1 / 255.0),
                       cv2.COLOR_BGR2Lab).reshape(n, size, size, 3)
    chroma = np.hypot(lab[..., 1], lab[..., 2])
    whitish = (chroma < _WHITE_CHROMA) & (lab[..., 0] > _WHITE_L)
    # The white share over nearly the whole disc: a stripe turned with its band up shows its white caps only
    # near the rim. The rim's mix with the cloth is coloured, never white, so it does not count as white.
    white_frac = (whitish & whole).sum(axis=(1, 2)) / np.maximum(whole.sum(axis=(1, 2)), 1)
    count = np.maximum(inner.sum(axis=(1, 2)), 1)
    coloured = chroma > _DOT_CHROMA
    dot_frac = (coloured & inner).sum(axis=(1, 2)) / count
    # The ring between the two: a stripe lying with a white cap up shows its band only there.
    ring = whole & ~inner
    rim_frac = (coloured & ring).sum(axis=(1, 2)) / np.maximum(ring.sum(axis=(1, 2)), 1)
    # The body colour: the coloured part of the inner disc (lit, away from the shaded rim); failing that of the
    # whole disc (a stripe with a cap up shows its band only at the rim); a ball with almost no colour (a white,
    # whose dots are a few percent) keeps its white.
    def enough(m: np.ndarray, of: np.ndarray) -> np.ndarray:
        return m.sum(axis=(1, 2)) >= 0.08 * np.maximum(of.sum(axis=(1, 2)), 1)

    body_inner = inner & ~whitish
    body_whole = whole & ~whitish
    body = np.where(enough(body_inner, inner)[:, None, None], body_inner,
                    np.where(enough(body_whole, whole)[:, None, None], body_whole, inner))
    vals = np.where(body[..., None], lab, np.nan).reshape(n, -1, 3)
    return np.column_stack([masked_median(vals), white_frac, dot_frac, rim_frac])


def masked_median(vals: np.ndarray) -> np.ndarray:
    """``np.nanmedian(vals, axis=1)`` of a float (N, M, C) array, NaN where a row has no value, without its cost:
    nanmedian goes row by row (it was most of a table's identity read at 1456x1088); here every row is sorted at
    once (NaNs sort last) and the middle taken at each row's own count, the two middle values averaged in the
    array's dtype as nanmedian does, so the result is the same to the bit."""
    vals = np.asarray(vals)
    n, m, c = vals.shape
    if m == 0:
        return np.full((n, c), np.nan, dtype=vals.dtype)
    ordered = np.sort(vals.transpose(0, 2, 1), axis=2)  # (N, C, M): each row contiguous, a faster sort
    count = np.count_nonzero(~np.isnan(ordered), axis=2)
    a = np.take_along_axis(ordered, np.maximum((count - 1) // 2, 0)[..., None], axis=2)[..., 0]
    b = np.take_along_axis(ordered, np.minimum(count // 2, m - 1)[..., None], axis=2)[..., 0]
    return np.where(count > 0, (a + b) / vals.dtype.type(2), np.nan)


@dataclass(frozen=True)
class KindModel:
    kind: Kind
    mean: np.ndarray  # (5,)
    sigma: np.ndarray  # (5,)


def _default_model(kind: Kind) -> KindModel:
    """A kind's Gaussian from its true colour and pattern. The white share of a pattern depends on how the ball
    lies: a solid shows 0 to 0.3 of white (its number circle up or not), a stripe anything from its band alone
    (0.2) to a white cap filling the view (1.0, the band then only a ring at the rim)."""
    lab = _lab(kind.bgr)
    colourful = float(np.hypot(lab[1], lab[2]) > _DOT_CHROMA)
    is_white = kind.bgr[0] > 200 and kind.bgr[1] > 200 and kind.bgr[2] > 200
    if is_white:
        white, s_white = (0.97, 0.08) if kind.pattern == "plain" else (0.9, 0.1)
        dot, s_dot = (0.0, 0.025) if kind.pattern == "plain" else (0.05, 0.03)
        rim, s_rim = 0.02, 0.08
    elif kind.pattern == "stripe":
        white, s_white, dot, s_dot, rim, s_rim = 0.6, 0.35, 0.4, 0.4, 0.7, 0.3
    elif kind.pattern == "solid":
        white, s_white, dot, s_dot, rim, s_rim = 0.1, 0.15, 0.85 * colourful, 0.3, 0.95 * colourful, 0.25
    else:
        # A plain coloured ball's shares of strongly coloured pixels say little its L*a*b* does not, and they swing
        # with the light: a dim brown (true chroma 37) falls under the 30 of ``_DOT_CHROMA`` (0.06-0.85 of it over
        # the sinuca clips at 1456x1088), and the shaded ring shows less than the middle (the rim's share 0.76 for
        # a red, 0.16 for a brown). At 0.95 +- 0.3 the dim browns read as the black (11 of 26). Half, +- 0.4, is
        # what is known; the black, never coloured, keeps 0 at the same spread (no kind favoured by a narrower one).
        white, s_white, dot, s_dot, rim, s_rim = 0.02, 0.08, 0.5 * colourful, 0.4, 0.5 * colourful, 0.4
    return KindModel(kind, np.array([lab[0], lab[1], lab[2], white, dot, rim]),
                     np.array([14.0, 12.0, 12.0, s_white, s_dot, s_rim]))


class ColourModel:
    """Per-kind Gaussian colour model of one discipline's balls; ``identify`` fills ``class_probs``."""

    def __init__(self, discipline: str, reds: int = MAX_REDS, spot: str = "dots",
                 models: Sequence[KindModel] | None = None, temperature: float = 1.0) -> None:
        self.discipline = discipline
        self.kinds = kinds_for(discipline, reds, spot)
        self.models = tuple(models) if models is not None else tuple(_default_model(k) for k in self.kinds)
        if [m.kind.name for m in self.models] != [k.name for k in self.kinds]:
            raise ValueError("models must follow the discipline's kinds in order")
        self.temperature = float(temperature)
        self.classes: tuple[str, ...] = tuple(i for k in self.kinds for i in k.ids)
        # classes x kinds: how a kind's probability is shared among its ids.
        share = np.zeros((len(self.classes), len(self.kinds)))
        col = 0
        for j, k in enumerate(self.kinds):
            share[col:col + len(k.ids), j] = 1.0 / len(k.ids)
            col += len(k.ids)
        self._share = share
        self._kind_index = {k.name: j for j, k in enumerate(self.kinds)}

    @property
    def kind_names(self) -> tuple[str, ...]:
        return tuple(k.name for k in self.kinds)

    def kind_log_likelihood(self, features: np.ndarray) -> np.ndarray:
        """(N, n_kinds) log-likelihoods of feature rows (N, 6): the diagonal Gaussian, and the hue term between
        plainly coloured balls and kinds (``_HUE_SIGMA``)."""
        mean = np.stack([m.mean for m in self.models])
        sigma = np.stack([m.sigma for m in self.models])
        z = (features[:, None, :] - mean[None]) / sigma[None]
        ll = -0.5 * np.sum(z * z, axis=2) - np.log(sigma).sum(axis=1)[None]
        coloured = ((np.hypot(features[:, 1], features[:, 2]) > _HUE_BALL_CHROMA)[:, None]
                    & (np.hypot(mean[:, 1], mean[:, 2]) > _HUE_KIND_CHROMA)[None])
        if coloured.any():
            turn = np.arctan2(features[:, 2], features[:, 1])[:, None] - np.arctan2(mean[:, 2], mean[:, 1])[None]
            turn = np.degrees(np.angle(np.exp(1j * turn)))  # wrapped to (-180, 180]
            ll = ll - 0.5 * np.where(coloured, (turn / _HUE_SIGMA) ** 2, 0.0)
        return ll

    def kind_probs(self, features: np.ndarray) -> np.ndarray:
        """(N, n_kinds) posterior over kinds, with a prior uniform over ball ids: a snooker ball is a red more
        often than a brown, fifteen times more at the break."""
        prior = np.log([len(k.ids) for k in self.kinds])
        ll = self.kind_log_likelihood(features) / self.temperature + prior[None]
        ll -= ll.max(axis=1, keepdims=True)
        p = np.exp(ll)
        return p / p.sum(axis=1, keepdims=True)

    def class_probs(self, features: np.ndarray) -> np.ndarray:
        """(N, n_classes) probabilities over the discipline's ball ids, rows summing to 1."""
        return self.kind_probs(features) @ self._share.T

    def identify(self, frame: np.ndarray, detections: Detections) -> Detections:
        """The detections with ``classes`` and ``class_probs`` filled in from the frame's colours."""
        feats = ball_features(frame, detections.px, detections.radius_px)
        probs = self.class_probs(feats) if len(detections) else np.zeros((0, len(self.classes)))
        return replace(detections, classes=self.classes, class_probs=probs)

    def fit(self, features: np.ndarray, kinds: Sequence[str],
            min_sigma: Sequence[float] = (3.0, 3.0, 3.0, 0.04, 0.01, 0.03)) -> "ColourModel":
        """A model whose kinds seen in ``kinds`` (one name per feature row) take the observed means and spreads
        (never tighter than ``min_sigma``); unseen kinds keep their defaults, shifted by the average offset of the
        seen ones in L, a, b (the camera's white balance and exposure move every colour alike)."""
        features = np.asarray(features, dtype=np.float64)
        kinds = list(kinds)
        floor = np.asarray(min_sigma, dtype=np.float64)
        offsets = []
        fitted: dict[str, KindModel] = {}
        for m in self.models:
            rows = features[[k == m.kind.name for k in kinds]]
            if len(rows) == 0:
                continue
            mean = rows.mean(axis=0)
            spread = rows.std(axis=0) if len(rows) > 1 else np.zeros(len(FEATURES))
            sigma = np.maximum(np.maximum(spread * 1.2, floor), m.sigma * 0.2)
            fitted[m.kind.name] = KindModel(m.kind, mean, sigma)
            offsets.append(mean[:3] - m.mean[:3])
        shift = np.mean(offsets, axis=0) if offsets else np.zeros(3)
        models = []
        for m in self.models:
            if m.kind.name in fitted:
                models.append(fitted[m.kind.name])
            else:
                models.append(KindModel(m.kind, np.concatenate([m.mean[:3] + shift, m.mean[3:]]), m.sigma))
        out = ColourModel.__new__(ColourModel)
        out.__dict__.update(self.__dict__)
        out.models = tuple(models)
        return out


class BallIdentifier:
    """Colour model and, where the discipline has one, the ball-patch classifier, combined as independent
    evidence: the product of their kind probabilities, the colour model's to the power ``colour_weight`` and the
    classifier's to the power ``weight`` (2). Pool reads the classifier alone (``colour_weight`` 0: see there)."""

    def __init__(self, colour: ColourModel, classifier: "CropClassifier | None" = None, weight: float = 2.0,
                 one_of_each: float = 0.0, colour_weight: float = 1.0) -> None:
        self.colour = colour
        self.classifier = classifier
        self.weight = float(weight)
        # How much the colour model's own log-probabilities count beside the classifier's (1: as independent
        # evidence). Pool's is 0: its default colours, never fitted to the camera, read 0.23 of the resting balls
        # right at 728x544 and only pulled the classifier down (bench_vision's bilhar clips, seeds 100-109, at rest:
        # 0.73 of the balls right with them at 1, 0.91 at 0.5, 1.00 at 0; 8 still layouts at 1456x1088, every ball
        # turned at random: 0.97, 0.975, 0.99).
        self.colour_weight = float(colour_weight)
        # Pool: every ball its own kind, so a frame's balls are one of each. The best one-to-one match of the
        # frame's balls to kinds adds this many nats to each ball's matched kind: at 728x544 two stripes lying
        # cap-up both read as the cue, and the tracker, placing balls by these readings, left the second unplaced.
        self.one_of_each = float(one_of_each)
        # The median radius of the last read with three balls or more: the change-gated detector reads afresh only
        # the few balls of a changed region, whose own radii would let a cap-up stripe's patch shrink (patch_radius).
        self.typical_radius: float | None = None
        self.classes = colour.classes
        if classifier is not None:
            missing = set(classifier.kinds) - set(colour.kind_names)
            if missing:
                raise ValueError(f"the classifier knows kinds the discipline has not: {sorted(missing)}")
            self._columns = [classifier.kinds.index(k) if k in classifier.kinds else -1 for k in colour.kind_names]

    @classmethod
    def for_discipline(cls, discipline: str, reds: int = MAX_REDS, spot: str = "dots") -> "BallIdentifier":
        """The colour model with the committed classifier of the discipline's family, if any (pool; carom with a
        dotted spot white)."""
        from rules.balls import CAROM_DISCIPLINES
        from vision.crop_classifier import CropClassifier

        family = {"bilhar": "bilhar"}.get(discipline, "carom" if discipline in CAROM_DISCIPLINES and spot == "dots"
                                          else None)
        classifier = CropClassifier.for_discipline(family) if family else None
        pool = discipline == "bilhar"
        return cls(ColourModel(discipline, reds, spot), classifier, one_of_each=2.0 if pool else 0.0,
                   colour_weight=0.0 if pool else 1.0)

    def fit(self, frame: np.ndarray, detections: Detections, kinds: Sequence[str]) -> "BallIdentifier":
        """A copy whose colour model has learned this camera from balls of known kind (one name per detection):
        the opening layout, where each ball stands on its spot."""
        feats = ball_features(frame, detections.px, detections.radius_px)
        return BallIdentifier(self.colour.fit(feats, kinds), self.classifier, self.weight, self.one_of_each,
                              self.colour_weight)

    def recentred(self, features: np.ndarray, kinds: Sequence[str]) -> "BallIdentifier":
        """A copy whose colour model has each named kind's mean moved to the features seen (one row per name),
        its spread kept: the camera's white balance and light (a broadcast's white is cream, its yellow orange)
        move the means, and one frame says nothing about the spread."""
        seen = dict(zip(kinds, np.asarray(features, dtype=np.float64)))
        models = [KindModel(m.kind, seen[m.kind.name], m.sigma) if m.kind.name in seen else m
                  for m in self.colour.models]
        colour = ColourModel.__new__(ColourModel)
        colour.__dict__.update(self.colour.__dict__)
        colour.models = tuple(models)
        return BallIdentifier(colour, self.classifier, self.weight, self.one_of_each, self.colour_weight)

    def kind_probs(self, frame: np.ndarray, detections: Detections) -> np.ndarray:
        """(N, n_kinds) posterior over the discipline's kinds."""
        if self.classifier is not None and self.colour_weight == 0.0:
            log_p = np.zeros((len(detections), len(self.colour.kinds)))  # the classifier alone: no colour read
        else:
            feats = ball_features(frame, detections.px, detections.radius_px)
            log_p = np.log(np.maximum(self.colour.kind_probs(feats), 1e-12))
            if self.classifier is not None:
                log_p = self.colour_weight * log_p
        if self.classifier is not None and len(detections):
            radius = np.asarray(detections.radius_px, dtype=np.float64).reshape(-1)
            if len(radius) >= 3:
                self.typical_radius = float(np.median(radius))
            cnn = self.classifier.kind_probs(frame, detections.px, patch_radius(radius, self.typical_radius))
            cols = np.array(self._columns)
            extra = np.where(cols[None, :] >= 0, np.log(np.maximum(cnn[:, np.maximum(cols, 0)], 1e-12)), 0.0)
            log_p = log_p + self.weight * extra
        if self.one_of_each > 0 and len(detections) > 1:
            n, k = log_p.shape
            match = best_assignment(log_p) if n <= k else None
            if match is not None:
                log_p[np.arange(n), match] += self.one_of_each
            else:  # more blobs than kinds (a stray blob): each kind picks its likeliest blob
                log_p[best_assignment(log_p.T), np.arange(k)] += self.one_of_each
        log_p -= log_p.max(axis=1, keepdims=True)
        p = np.exp(log_p)
        return p / p.sum(axis=1, keepdims=True)

    def identify(self, frame: np.ndarray, detections: Detections) -> Detections:
        """The detections with ``classes`` and ``class_probs`` filled in."""
        if len(detections) == 0:
            return replace(detections, classes=self.classes, class_probs=np.zeros((0, len(self.classes))))
        probs = self.kind_probs(frame, detections) @ self.colour._share.T
        return replace(detections, classes=self.classes, class_probs=probs)


def patch_radius(radius: np.ndarray, typical: float | None = None) -> np.ndarray:
    """The radius the classifier's patches are cut at: the median of the frame's balls (every ball is the same size,
    and perspective and the lens change it by a few percent across the table) once there are three, else each
    ball's own. A pool stripe lying cap-up on the blue cloth, its dark band at the rim, is found a tenth smaller
    than it is (6.0-6.3 px against 6.7 at 728x544), so a patch cut at its own radius leaves the band out and the
    net sees the cue ball: on bench_vision's bilhar clips at 728x544 (seeds 100-109, balls at rest) the net alone
    read 0.79 of the balls right at their own radii, 0.97 at the median. Fewer than three balls take ``typical``
    (an earlier frame's median) when it is known."""
    radius = np.asarray(radius, dtype=np.float64).reshape(-1)
    if len(radius) >= 3:
        return np.full_like(radius, np.median(radius))
    return radius if typical is None else np.full_like(radius, typical)


LAB_TOLERANCE = 20.0  # L*, a*, b* spread of a ball's colour across cameras and lights, for the one-of-each match


def match_one_of_each(colour: ColourModel, features: np.ndarray) -> tuple[tuple[str, ...], float, float]:
    """For balls of which each kind has exactly one (carom, Chapó), seen all at once: the kind of each feature
    row by the best one-to-one match on colour alone (L*, a*, b*, with a tolerance wide enough for any camera),
    its log-likelihood, and how much better it is than the best match that differs from it. Colour alone, not the
    white share or the dots: those depend on the light's level and on the resolution, which is what the match is
    there to learn."""
    from itertools import permutations

    names = colour.kind_names
    if len(features) != len(names):
        raise ValueError(f"one of each: {len(features)} balls for {len(names)} kinds")
    mean = np.stack([m.mean[:3] for m in colour.models])
    z = (np.asarray(features, dtype=np.float64)[:, None, :3] - mean[None]) / LAB_TOLERANCE
    ll = -0.5 * np.sum(z * z, axis=2)  # (N, kinds)
    scored = sorted(((float(sum(ll[i, j] for i, j in enumerate(order))), order)
                     for order in permutations(range(len(names)))), reverse=True)
    best, order = scored[0]
    margin = best - scored[1][0] if len(scored) > 1 else float("inf")
    return tuple(names[j] for j in order), best, margin


_DOT_A = 12.0  # Lab a* above which a pixel on a white ball is one of the spot's red dots
_DOT_INNER = 0.8  # the dots are looked for away from the rim, where the cloth's colour bleeds in


def dot_pixels(frame: np.ndarray, px: np.ndarray, radius: np.ndarray) -> np.ndarray:
    """(N,) how many pixels of each ball's disc (within 0.8 of its radius) are red like the carom spot's dots:
    Lab a* over 12 and b* over -5 (the blue or green cloth bleeding in at the rim is neither). A plain white shows
    none; the spot, with a dot towards the camera, several at 1456x1088 (a dot is ~3 px across) and a few, its
    colour washed out, at 728x544. On the virtual table, over 6 layouts x 78 still frames at each size, no white
    showed one (thresholds 10 to 18); at 18 a dot facing the camera in a dim corner showed none."""
    px = np.asarray(px, dtype=np.float64).reshape(-1, 2)
    radius = np.asarray(radius, dtype=np.float64).reshape(-1)
    if len(px) == 0:
        return np.zeros(0)
    crops, disc = ball_crops(frame, px, radius, _DOT_INNER)
    n, size = crops.shape[:2]
    lab = cv2.cvtColor(crops.reshape(n * size, size, 3).astype(np.float32) * (1 / 255.0),
                       cv2.COLOR_BGR2Lab).reshape(n, size, size, 3)
    red = (lab[..., 1] > _DOT_A) & (lab[..., 2] > -5.0) & disc
    return red.sum(axis=(1, 2)).astype(np.float64)


def best_assignment(score: np.ndarray) -> np.ndarray:
    """The one-to-one assignment of rows to columns (rows <= columns) with the largest total ``score``: for each
    row the column it takes. The Hungarian method with potentials (O(n^2 m), the inner step vectorised over the
    columns); at most 22 balls, so well under a millisecond."""
    cost = -np.asarray(score, dtype=np.float64)
    n, m = cost.shape
    if n > m:
        raise ValueError(f"an assignment needs rows <= columns, got {n} x {m}")
    a = np.zeros((n + 1, m + 1))
    a[1:, 1:] = cost
    u, v = np.zeros(n + 1), np.zeros(m + 1)
    p = np.zeros(m + 1, dtype=int)  # p[j]: the row holding column j (0: none)
    way = np.zeros(m + 1, dtype=int)
    for i in range(1, n + 1):
        p[0] = i
        j0 = 0
        minv = np.full(m + 1, np.inf)
        used = np.zeros(m + 1, dtype=bool)
        while True:
            used[j0] = True
            i0 = p[j0]
            free = ~used
            free[0] = False
            cur = a[i0] - u[i0] - v
            better = free & (cur < minv)
            minv[better] = cur[better]
            way[better] = j0
            j1 = int(np.argmin(np.where(free, minv, np.inf)))
            delta = minv[j1]
            u[p[used]] += delta
            v[used] -= delta
            minv[~used] -= delta
            j0 = j1
            if p[j0] == 0:
                break
        while j0:
            j1 = way[j0]
            p[j0] = p[j1]
            j0 = j1
    out = np.full(n, -1)
    for j in range(1, m + 1):
        if p[j]:
            out[p[j] - 1] = j - 1
    return out
