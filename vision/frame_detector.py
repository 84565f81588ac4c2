"""One frame in, every ball with its identity probabilities out: the detector the pipeline runs.

It joins the stages built separately: the empty-table model (learnt from the first still frames, with the balls
on them painted out, then followed slowly for light changes away from the balls), the ball detector, and the
identity of the discipline's balls (colour, and the ball-patch classifier where colour alone fails). Made once at
start-up; ``detect`` is the per-frame work. By default (``incremental=True``) it looks only where the frame
changed (``vision.incremental``), and again, every frame, at the places of doubtful detections, of those lost a
moment ago and of balls that moved in the last half second; identity is read afresh only where a detection does
not plainly continue one of the frame before. A ball come to rest is then held where the mean of its measurements
over that half second puts it (one measurement held would carry its noise into the resting position). Why it is
the default: it is 1.6-2.6 times cheaper than the whole-frame detector (bench_speed), with bench_vision's contacts,
verdicts and resting positions as good (carom, 10 shots at 1456x1088: recall and precision 1.000, 10/10 verdicts,
rest 0.48 mm median against 0.49 for the whole-frame detector, p99 1.28 against 1.30). ``incremental=False``
detects in the whole frame.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping, Sequence

import cv2
import numpy as np

from calibration.camera import CameraModel
from rules.balls import CAROM_DISCIPLINES
from rules.tables import TableSpec

from .arrays import distances
from .detection import BallDetector, StageClock
from .detections import Detections
from .identity import BallIdentifier, ColourModel, ball_features, match_one_of_each
from .incremental import ChangeConfig, ChangeGate


def _median_frame(frames: Sequence[np.ndarray], band: int = 64) -> np.ndarray:
    """The per-pixel median (uint8) of a few frames, a band of rows at a time: stacked whole, 15 frames at 1456 x
    1088 are 71 MB, and numpy's median copies them and answers in float64 (another 110 MB at the peak)."""
    if len(frames) == 1:
        return frames[0]
    out = np.empty_like(frames[0])
    for y in range(0, out.shape[0], band):
        out[y:y + band] = np.median(np.stack([f[y:y + band] for f in frames]), axis=0)  # exact: truncated as before
    return out


def _made(m: int, n: np.ndarray) -> np.ndarray:
    """(len(n), m) bool: which of a detection's ``m`` measurement slots hold a measurement (the latest ``n``)."""
    return np.arange(m)[None, :] >= m - np.asarray(n)[:, None]


class FrameDetector:
    def __init__(self, camera: CameraModel, table: TableSpec, discipline: str, still_frames: Sequence[np.ndarray],
                 options: Mapping[str, str] | None = None, background_rate: float = 0.02,
                 update_every: int = 30, incremental: bool = True, change: ChangeConfig | None = None) -> None:
        if not still_frames:
            raise ValueError("the detector needs at least one still frame to learn the table")
        options = dict(options or {})
        self.balls = BallDetector(camera, table)
        median = _median_frame(still_frames[:15])
        self.background = self.balls.background_without_empty_table(median, rounds=3, around_candidates=False)
        self.identity = self._identity_for_this_camera(discipline, median, options)
        self.rate = background_rate
        self.update_every = update_every
        self.frames = 0
        self.gate = ChangeGate(self.balls, change) if incremental else None
        self._last: Detections | None = None
        # Detections scoring below this are looked at again every frame: a resting ball scores 0.9 or more, a ball
        # half under a cue or a marginal blob (a cue's ferrule) less, and those come and go from frame to frame.
        self.sure_score = 0.75
        # ... and so are, for this many frames, the places where such a doubtful detection was lost: a marginal
        # ball (a black on dark cloth by the cue) that drops below the detector's threshold for one frame leaves
        # nothing that changes there, and unless its place is looked at again it stays lost until the next
        # whole-frame pass (a whole-frame detection finds it again the frame after), while its track takes a
        # stray blob instead.
        self.recheck_lost_frames = 30
        self._lost = np.zeros((0, 2))  # full-resolution pixels of lost doubtful detections
        self._lost_age = np.zeros(0, int)
        self._radius_px = self.balls.radius_low * self.balls.scale  # a ball's typical radius in the frame
        # Identity is read afresh only for a detection that does not plainly continue one of the frame before: a
        # ball rolling on, alone, keeps the class probabilities read off it (the colour features and the patch
        # classifier are a third of a frame's work). Read afresh at least every ``identity_every`` frames, and
        # whenever another ball is near (a contact, where the two could be taken for each other).
        self.identity_every = 8
        self.same_place_px = 0.5  # ... and a detection this near one of the frame before is that ball, read or not
        self._age = np.zeros(0, int)  # frames since each detection of ``_last`` had its identity read
        # A ball that moved in the last ``recheck_moving_frames`` frames is looked at again every frame, changed
        # or not: a ball rolling slowly to rest (after a cushion, a kiss) changes the reduced picture by less than
        # the threshold from one frame to the next, and held between the frames where its drift shows, its track
        # would go in steps that blur its contacts' times (the whole-frame detector sees it move every frame).
        self.recheck_moving_frames = 30
        # A sure ball measured again where nothing changed and not found there is kept as it was when the fit
        # from its guess still lands within this many radii of it and finds its edge on this share of its rays
        # (see ``_not_refound``).
        self.kept_within_radii = 0.25
        self.kept_min_score = 0.2
        self._still = np.zeros(0, int)  # frames since each detection of ``_last`` last moved (0.3 px or more)
        # A ball that has come to rest is then held, not measured, frame after frame: one measurement's noise
        # (0.1-0.3 mm) would stand for where it lies, where the whole-frame detector's resting position is the
        # segmenter's mean of several. So each detection keeps its last ``rest_mean_frames`` measurements since
        # it last moved (all those of the frames it is looked at again every frame, and each whole-frame pass's
        # after), and once it has been still ``recheck_moving_frames`` frames it is put at their mean, or, where
        # they plainly drift (a ball creeping to rest by under 0.3 px a frame), at the latest point of their line.
        # (On bench_vision's 10 carom shots at 1456x1088, the median error at rest: 16 measurements 0.515 mm, 30
        # 0.485, the whole-frame detector 0.495, one measurement held 0.575; re-measuring a resting ball every 4
        # frames besides gained nothing.)
        self.rest_mean_frames = 30
        self._hist = np.zeros((0, self.rest_mean_frames, 4))  # px and xy of those measurements, latest last
        self._hist_n = np.zeros(0, int)  # how many of them are real (the latest ones)
        self.drift_t = 4.0  # a trend this many standard errors strong is a ball creeping, not noise
        self.still_of_mean_px = 0.5  # a noisy ball this near the mean of its measurements since it moved is still
        # A dict here gathers the CPU seconds of each stage of every frame detected (the speed benchmark's
        # breakdown): change (the change map and the plan), foreground, candidates, smears, fit, to_table (the
        # detector's own), identity, background (the slow update of the empty table).
        self.timings: dict[str, float] | None = None

    def _identity_for_this_camera(self, discipline: str, still: np.ndarray,
                                  options: Mapping[str, str]) -> BallIdentifier:
        """The identifier, fitted to what this camera makes of the balls where that can be done safely: in the
        games with one ball of each kind (carom, Chapó), when the still view shows exactly those balls, the best
        one-to-one match on colour says which is which and, for carom, whether the spot ball is the dotted white
        or a yellow (option ``spot`` = ``dots`` | ``yellow`` says it outright). If the default colours already
        name the balls that way nothing changes; otherwise (a broadcast's cream white and orange yellow) each
        kind's colour is moved to the one seen, except kinds the match cannot tell apart (the two carom whites)."""
        reds = int(options.get("reds", 15))
        carom = discipline in CAROM_DISCIPLINES
        spot = options.get("spot")
        if spot is not None and spot not in ("dots", "yellow"):
            raise ValueError(f"option spot must be 'dots' or 'yellow', got {spot!r}")
        default = BallIdentifier.for_discipline(discipline, reds=reds, spot=spot or "dots")
        if not carom and discipline != "chapo":
            return default
        det = self.balls.detect(still, 0.0, self.background)
        if len(det) != len(default.colour.kinds):
            return default
        feats = ball_features(still, det.px, det.radius_px)
        styles = [spot] if spot or not carom else ["dots", "yellow"]
        kinds, _, margin, style = max((match_one_of_each(ColourModel(discipline, reds, s or "dots"), feats) + (s,)
                                       for s in styles), key=lambda r: r[1])
        identity = BallIdentifier.for_discipline(discipline, reds=reds, spot=style or "dots")
        said = tuple(identity.colour.kind_names[j] for j in identity.kind_probs(still, det).argmax(axis=1))
        alike = {"white", "spot"} if carom and style == "dots" else set()
        if all(a == b or {a, b} <= alike for a, b in zip(said, kinds)):
            return identity
        sure = [(f, k) for f, k in zip(feats, kinds) if k not in alike or margin > 1.0]
        return identity.recentred(np.array([f for f, _ in sure]), [k for _, k in sure]) if sure else identity

    def detect(self, image: np.ndarray, t: float) -> Detections:
        clock = StageClock(self.timings)
        if self.gate is not None:
            det, self._age, self._still, self._hist, self._hist_n, fresh = self._detect_changed(image, t, clock)
            det = self._at_rest_mean(det, fresh)
        else:
            det = self.balls.detect(image, t, self.background, timings=self.timings)
            clock.restart()
            det = self.identity.identify(image, det)
            clock.lap("identity")
        if self.gate is not None:
            self._remember_lost(det)
        self._last = det
        self.frames += 1
        if self.update_every and self.frames % self.update_every == 0 and len(det):
            # Follow slow light changes on the cloth, never learning a ball into the empty table: nor one lost a
            # moment ago (a marginal ball missed in this very frame would fade into the cloth, and be missed more).
            keep_out = self.balls.disc_mask(det)
            for x, y in self._lost:
                cv2.circle(keep_out, (int(round(x)), int(round(y))), int(np.ceil(1.4 * self._radius_px)), 1, -1)
            self.background.update(image, keep_out=keep_out, rate=self.rate)
        clock.lap("background")
        return det

    def _remember_lost(self, det: Detections) -> None:
        """The doubtful detections of the frame before that no detection of this one is near, added to the places
        looked at again; those found again, or older than ``recheck_lost_frames``, dropped."""
        last = self._last
        lost, age = self._lost, self._lost_age + 1
        if last is not None and len(last):
            was = last.px[last.score < self.sure_score]
            lost, age = np.concatenate([lost, was]), np.concatenate([age, np.zeros(len(was), int)])
        if len(lost) and len(det):
            gap = distances(lost, det.px)
            found = (gap < det.radius_px[None, :]).any(axis=1)
            lost, age = lost[~found], age[~found]
        if len(lost) > 1:  # one place per ball: an older one within a radius of a newer one goes
            gap = distances(lost, lost)
            newer = (gap < self._radius_px) & (age[None, :] < age[:, None])
            lost, age = lost[~newer.any(axis=1)], age[~newer.any(axis=1)]
        keep = age < self.recheck_lost_frames
        self._lost, self._lost_age = lost[keep], age[keep]

    def _detect_changed(self, image: np.ndarray, t: float, clock: StageClock
                        ) -> tuple[Detections, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Detections found afresh where the frame changed, kept from the frame before elsewhere; and for each, the
        frames since its identity was read and since it last moved, its measurements since then (``_hist``,
        ``_hist_n``), and whether it was measured in this frame (not kept)."""
        if image.shape[:2] != (self.balls.camera.image_size[1], self.balls.camera.image_size[0]):
            self.balls.detect(image, t, self.background)  # raises the detector's own one-line error
        small = self.balls.low_res(image)
        last = self._last
        # Looked at again every frame, changed or not: the doubtful detections and the places of those lost a
        # moment ago are searched for again (what is there may come and go), the sure balls that moved a moment
        # ago are measured again where they are.
        # A doubtful detection that has stayed put for ``recheck_moving_frames`` is a weak ball at rest (the sinuca
        # green on its cloth, 0.5-0.7): held where its measurements put it until the frame changes there, like a
        # sure one. Searched for every frame, it scored under the detector's minimum one frame in three, and its
        # track came and went.
        doubtful = last.score < self.sure_score if last is not None else np.zeros(0, bool)
        settled = self._still >= self.recheck_moving_frames if last is not None else doubtful
        recent = ~doubtful & ~settled if last is not None else doubtful
        search = np.concatenate([last.px[doubtful & ~settled], self._lost]) if last is not None else self._lost
        plan = self.gate.plan(small, self.balls.to_low(search) if len(search) else None,
                              self.balls.to_low(last.px[recent]) if recent.any() else None)
        clock.lap("change")
        if plan.full or last is None:
            det = self.balls.detect(image, t, self.background, small=small, timings=self.timings)
            clock.restart()
            det = self.identity.identify(image, det)
            clock.lap("identity")
            return (det, np.zeros(len(det), int)) + self._measured(det, last) + (np.ones(len(det), bool),)
        stale = plan.is_changed(self.balls.to_low(last.px))
        # A sure ball that moved a moment ago, where nothing changed now, is fitted afresh from where it was, not
        # searched for: a rectangle's search (the mask, its candidates, smears, thin lines) cost as much again as
        # the fit, for half the rectangles of a pool frame. (Not a doubtful one: a weak ball's fit (snooker's
        # green) depends on where it starts, and started from the last one it lay a few mm further off at rest.)
        remeasure = recent & ~stale
        gone = stale | remeasure
        kept, kept_age, kept_still = last.subset(~gone), self._age[~gone], self._still[~gone] + 1
        kept_hist, kept_n = self._hist[~gone], self._hist_n[~gone]
        # From the reduced-resolution pixel it lies in, as a search's candidate would start: started from its last
        # fit, each fit's own error would carry into the next, and a weak ball (snooker's green) wandered off.
        guesses = self.balls.to_full(np.round(self.balls.to_low(last.px[remeasure])))
        new = self.balls.detect(image, t, self.background, rects=plan.rects, small=small, timings=self.timings,
                                guesses=guesses, neighbours=kept.px) \
            if plan.rects or len(guesses) else Detections.empty(t)
        clock.restart()
        wanted = plan.is_changed(self.balls.to_low(new.px))
        if len(guesses) and len(new):  # ... and what was fitted from those guesses stands wherever it lies
            wanted |= distances(new.px, guesses).min(axis=1) < 1.5 * new.radius_px
        new = new.subset(wanted)
        back = self._not_refound(image, t, small, last, remeasure, guesses, new, kept, clock)
        if back.any():  # still there: kept as they were
            kept = Detections.concat(t, [kept, last.subset(back)], self.identity.classes)
            kept_age = np.concatenate([kept_age, self._age[back]])
            kept_still = np.concatenate([kept_still, self._still[back] + 1])
            kept_hist = np.concatenate([kept_hist, self._hist[back]])
            kept_n = np.concatenate([kept_n, self._hist_n[back]])
        if len(kept) and len(new):  # a ball on the edge of a changed region, found again: the new one stands
            gap = distances(kept.px, new.px)
            far = gap.min(axis=1) > kept.radius_px
            kept, kept_age, kept_still = kept.subset(far), kept_age[far], kept_still[far]
            kept_hist, kept_n = kept_hist[far], kept_n[far]
        new_still, new_hist, new_n = self._measured(new, last)
        new, new_age = self._identify_new(image, new, last)
        det = Detections.concat(t, [kept, new], self.identity.classes)
        clock.lap("identity")
        # (concat drops empty parts, and so must the per-detection counts: they follow the detections' order)
        parts = [p for p, d in ((0, kept), (1, new)) if len(d)]

        def joined(*per_part: np.ndarray) -> np.ndarray:
            return np.concatenate([per_part[p] for p in parts]) if parts else per_part[0][:0]

        return (det, joined(kept_age, new_age), joined(kept_still, new_still), joined(kept_hist, new_hist),
                joined(kept_n, new_n), joined(np.zeros(len(kept), bool), np.ones(len(new), bool)))

    def _not_refound(self, image: np.ndarray, t: float, small: np.ndarray, last: Detections, remeasure: np.ndarray,
                     guesses: np.ndarray, new: Detections, kept: Detections, clock: StageClock) -> np.ndarray:
        """Which detections of the frame before (a mask over ``last``) were measured again from their guesses
        where nothing changed, not found again, and are still there all the same.

        The ray fit depends on where it starts. A pool stripe showing its white cap with a rim of blue, on a cloth
        near the blue, fitted from its own pixel found its edge on 14 rays of 48 (from the search's candidate 2 px
        off, on 47); it fell under the detector's minimum the frame after it was found and was lost until the next
        whole-frame pass (bilhar seed 266's 10, never placed, its pocket missed). It is still there if the fit from
        its guess lands within ``kept_within_radii`` of it on ``kept_min_score`` of its rays: a whole-frame pass's
        phantom between two balls (bilhar seed 235, read as the 9 beside the green 6 it could not see) is found
        on almost none (0.08; real balls 0.25-0.40), and held it would stand for a ball for frames on end."""
        back = np.zeros(len(last), bool)
        if not len(guesses):
            return back
        missed = np.ones(len(guesses), bool)
        if len(new):
            missed = distances(guesses, new.px).min(axis=1) >= last.radius_px[remeasure]
        if not missed.any():
            return back
        was = np.nonzero(remeasure)[0][missed]
        refit = self.balls.detect(image, t, self.background, rects=(), small=small, guesses=guesses[missed],
                                  neighbours=kept.px, min_score=0.0, timings=self.timings)
        clock.restart()  # the second fit went to the detector's own stages
        if len(refit) != len(was):  # two fits landed on one ball: neither is sure to be its own
            return back
        here = np.hypot(*(refit.px - last.px[was]).T) < self.kept_within_radii * last.radius_px[was]
        back[was[here & (refit.score >= self.kept_min_score)]] = True
        return back

    def _measured(self, det: Detections, last: Detections | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For detections measured afresh: the frames since each last moved (one more than the detection of the
        frame before within 0.3 px of it had, else none), and its measurements since then with this one added.

        A ball read with more noise than that (the sinuca green, a ball by a cushion's shadow: 0.3-0.5 px from
        frame to frame) stayed too if it is within ``still_of_mean_px`` of the mean of its measurements since it
        last moved (and within twice that of the last one): else it never counted as still, was looked at again
        in every frame for ever (four or five of a snooker table's 22 balls), and its fit was most of a quiet
        frame's work."""
        n, m = len(det), self.rest_mean_frames
        still, hist, count = np.zeros(n, int), np.zeros((n, m, 4)), np.ones(n, int)
        if last is not None and len(last) and n:
            gap = distances(det.px, last.px)
            j = gap.argmin(axis=1)
            stayed = gap[np.arange(n), j] < 0.3
            n_prev = self._hist_n[j]
            made = _made(m, n_prev)
            mean_px = (made[:, :, None] * self._hist[j, :, :2]).sum(axis=1) / np.maximum(n_prev, 1)[:, None]
            near_mean = np.hypot(*(det.px - mean_px).T) < self.still_of_mean_px
            stayed |= near_mean & (gap[np.arange(n), j] < 2 * self.still_of_mean_px)
            still = np.where(stayed, self._still[j] + 1, 0)
            hist[stayed, :-1] = self._hist[j[stayed], 1:]
            count[stayed] = np.minimum(self._hist_n[j[stayed]] + 1, m)
        hist[:, -1, :2], hist[:, -1, 2:] = det.px, det.xy
        return still, hist, count

    def _at_rest_mean(self, det: Detections, fresh: np.ndarray) -> Detections:
        """The detections of balls still for ``recheck_moving_frames`` frames or more put where their last
        measurements say: their mean, or, if those plainly drift (a ball creeping on by less than 0.3 px a frame:
        the slope of their least-squares line over its standard error above ``drift_t``), the line's latest point
        (the mean would lag the ball by half the window's travel). A held detection's estimate is the same frame
        after frame: it was made when it settled. So it is made only then, and for a settled ball measured again
        in this frame (``fresh``, whose measurements changed); one kept from the frame before stands where it was
        put (the estimate for every settled ball, a dozen numpy calls, was 3 % of a pool frame)."""
        settle = ((self._still >= self.recheck_moving_frames) & (self._hist_n > 2)
                  & (fresh | (self._still == self.recheck_moving_frames)))
        if not settle.any():
            return det
        m, n = self.rest_mean_frames, self._hist_n[settle][:, None]
        hist = self._hist[settle]  # (S, m, 4): px then xy
        w = _made(m, n[:, 0]).astype(float)  # (S, m)
        k = np.arange(m, dtype=float)[None, :]
        k_mean = (w * k).sum(axis=1, keepdims=True) / n
        dk = w * (k - k_mean)  # (S, m), zero where no measurement
        mean = (w[:, :, None] * hist).sum(axis=1) / n  # (S, 4)
        sxx = (dk * dk).sum(axis=1)[:, None]  # (S, 1)
        slope = (dk[:, :, None] * hist).sum(axis=1) / sxx  # (S, 4) per frame of history
        resid = w[:, :, None] * (hist - mean[:, None, :] - slope[:, None, :] * dk[:, :, None])
        se = np.sqrt((resid[..., :2] ** 2).sum(axis=1) / np.maximum(n - 2, 1) / sxx)  # (S, 2), px
        drifting = (np.abs(slope[:, :2]) > self.drift_t * np.maximum(se, 1e-6)).any(axis=1)
        at = np.where(drifting[:, None], mean + slope * (m - 1 - k_mean), mean)
        return det.moved(settle, at[:, :2], at[:, 2:])

    def _identify_new(self, image: np.ndarray, new: Detections, last: Detections) -> tuple[Detections, np.ndarray]:
        """Class probabilities for the detections found afresh: carried over from the detection of the frame
        before that each plainly continues (the only one within 2.5 radii, that no other new detection is near
        either, no other ball within 2 more radii; or one within ``same_place_px``, a ball at rest measured again;
        its identity read fewer than ``identity_every`` frames ago), read from the image for the rest."""
        n = len(new)
        probs = np.zeros((n, len(self.identity.classes)))
        age = np.zeros(n, int)
        carry = np.zeros(n, bool)
        if n and len(last) and last.classes == self.identity.classes:
            r = self._radius_px
            gap = distances(new.px, last.px)  # (new, last)
            j = gap.argmin(axis=1)
            near_last = (gap < 4.5 * r).sum(axis=1)  # the one it continues and nothing else near
            near_new = (gap[:, j] < 4.5 * r).sum(axis=0)  # no other new detection near that one
            if n > 1:
                own = distances(new.px, new.px) + np.eye(n) * 1e9
                alone = own.min(axis=1) > 4.5 * r
            else:
                alone = np.ones(1, bool)
            # ... or that lies where one of the frame before lay (a ball at rest measured again among others: no
            # two balls are that close, so it is the same ball, its neighbours or not).
            same_place = gap[np.arange(n), j] < self.same_place_px
            carry = ((((gap[np.arange(n), j] < 2.5 * r) & (near_last == 1) & (near_new == 1) & alone) | same_place)
                     & (self._age[j] + 1 < self.identity_every))
            probs[carry] = last.class_probs[j[carry]]
            age[carry] = self._age[j[carry]] + 1
        if (~carry).any():
            fresh = self.identity.identify(image, new.subset(~carry))
            probs[~carry] = fresh.class_probs
        return replace(new, classes=self.identity.classes, class_probs=probs), age
