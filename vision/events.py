"""From a shot's ball paths to its events (DESIGN.md section 4), timed to a fraction of a frame.

A contact is never read off one frame's proximity. Geometry proposes it (two balls near 2R apart, a ball near a
cushion nose) and the paths confirm it: the motion before and after must differ. The time comes from the fitted
paths, not from the frame:
- ball-ball: each ball's motion fitted on the frames before the contact and carried forward until the centres are
  one diameter apart (a slow ball stopping dead at 2R of a resting one that it nudges a mm or two, too little
  for a kink or a start: where its fits before and after meet);
- cushion: the distance to the cushion line fitted going in and coming out; the two lines meet at the contact
  (no need to know how far the nose is from the centre at impact);
- a ball setting off from rest: its distance from the resting point fitted over the first moving frames and
  carried back to zero. A ball setting off with no contact to explain it was struck by the cue (the first one) or
  touched (any other). Two exceptions: a ball that stops dead with no contact to stop it was carried (a hand slid
  it there: touched, never a strike, since a free ball rolls to a stop); and a ball a side may strike (a
  ``striker``: the carom whites, Chapó's 1 and 2) setting off unexplained while the first struck ball still rolls
  was struck too: the next shot starting early (``moving_at`` lists what still moved);
- a pin (Chapó) seen down for a few frames running fell: knocked by the ball whose fitted path brought its
  centre within R + the pin's base radius of the pin's spot just before (timed where the path reaches that
  distance), or by something else (``by: other``) when no ball came near;
- a ball seen inside a hole (Chapó: within half the mouth of its drop point) that is never again seen on the
  open cloth was potted there, when it crossed into the hole; what is seen of it after (a ball lying in a
  Chapó hole, a ghost in another pocket) is dropped from its path, so it makes no cushion and no pocket of its
  own. The ball must then be gone by the window's end, or lie in a hole (a ball cannot rest over a hole);
- a ball that vanishes by a pocket was potted; one that vanishes at a cushion going outwards left the table;
  one that vanishes anywhere else was hidden (a cue, an arm) and is not an event.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from rules.events import Event, EventType
from rules.tables import TableSpec

from .paths import LineFit, Paths, PinStates, fit, fit_with_error, window


@dataclass(frozen=True)
class EventConfig:
    rest_mm: float = 2.0  # a ball this far from where it rested has set off ...
    rest_noise_factor: float = 4.0  # ... or this many times its still readings' median distance from their median
    kink_mm_s: float = 80.0  # the least change of velocity that confirms a contact
    kink_ratio: float = 0.08  # ... or this fraction of the speed, whichever is larger
    # At a kiss the impulse acts along the line of centres: one ball's change of velocity at least (the struck
    # ball's) lies along it, to within this cosine. A kink across it is a merged blob or noise (two balls
    # passing 2 mm apart at 500 mm/s, read as one for a frame).
    kink_along_min: float = 0.55
    contact_slack_mm: float = 8.0  # fitted distance at contact may miss 2R (or the cushion) by this much
    fit_frames: int = 4  # frames on each side of a contact used by the fits
    vanish_frames: int = 3  # a ball unseen this many frames at the end of a shot has gone (pocket / off table)
    rest_s: float = 0.25  # still this long, a ball is at rest (and may set off again: a touch)
    start_clear_mm: float = 8.0  # ... and this far within 8 frames of setting off, or it did not set off
    slow_start_frames: int = 4  # a slow ball's start is looked for up to this many frames before it is 2 mm off
    # ... in those frames it must be read off its resting point the way it went, by more than this: a reading at
    # the resting point itself (the detector holds a settled ball at one reading) is at rest. (Not more: a ball
    # kissed to creep reads a few hundredths of a mm along its way in its first frames, bilhar seed 128's 6.)
    on_way_mm: float = 1e-3
    creep_s: float = 1.0  # ... or, rested a while before, clear within this long and staying clear (kissed softly)
    creep_clear_mm: float = 4.0  # ... by this much (a pool ball kissed at 30 mm/s rests again 6 mm on)
    moving_mm_s: float = 40.0  # faster than this a ball is moving (position noise alone stays well under it)
    bridge_frames: int = 3  # gaps this short in a ball's path are bridged when looking for its contacts
    pocket_rim_mm: float = 6.0  # a ball's centre read this far beyond a pocket's mouth may already be going in
    # A ball gone at a shot's end was potted only if it could reach the drop line (a hole's rim) from its last
    # sighting: rolling resistance (``roll_decel_mm_s2``, the longest run for its speed) carries it that far, with
    # this much slack for a speed read a little low.
    pocket_reach_slack_mm: float = 15.0
    pin_down_frames: int = 3  # a pin seen down this many frames running (or to the window's end) has fallen
    pin_search_frames: int = 8  # ... and the ball that knocked it passed its spot this many frames before, at most
    carried_mm_s: float = 200.0  # a ball going this fast in the frames before it is still again was carried
    # A slow ball meets a cushion with a small change of its normal speed (in at 40 mm/s, out at 10): under the
    # kink it is a contact when it came in at least this fast and its fitted path reaches the nose within
    # ``nose_mm``, its normal speed changing by half the kink; it cannot go on into the cushion.
    slow_in_mm_s: float = 25.0
    nose_mm: float = 3.0
    # A slower one still (20-40 mm/s towards the cushion, stopping dead or turned along it: sinuca seeds 108
    # and 125, bilhar 123, Chapó 102) shows neither a 2 mm approach over four frames nor that change, but its
    # centre comes to R from the nose line, which it can do only by touching it (positions are read to about
    # half a mm: one stopping 2 mm short is read 2 mm short).
    # When its nearest frame is within ``touch_nose_mm`` of R, its approach is looked for over twice the frames
    # and the contact is the bend of one fit over them (its slowing by rolling resistance allowed for), at the
    # nose (within ``touch_nose_mm`` of R) and not going on in.
    touch_nose_mm: float = 1.0
    # ... and its normal speed there, in, is at least this: a ball rolling to a stop short of the nose, its
    # slowing allowed for, reaches its stop at none (eight frames of half-mm readings: about 5 mm/s of noise).
    touch_in_mm_s: float = 20.0
    # A ball running along a cushion at a few degrees grazes it (sinuca and bilhar balls at 150-600 mm/s turned
    # 4-15 degrees): its normal speed, 10-40 mm/s, turns from in to out at the nose, a change too small for the
    # kink and an approach of under a mm over four frames. Its nearest frame within ``touch_nose_mm`` of R, it
    # met the cushion when the gap's fits over ``graze_frames`` a side turn from in to out, each at
    # ``graze_mm_s`` or more and each ``graze_t`` standard errors clear of nought: a straight path cannot turn
    # away from a cushion it did not touch.
    graze_frames: int = 12
    graze_mm_s: float = 5.0
    graze_t: float = 4.0
    off_cushion_mm: float = 3.0  # a second contact with the same cushion (or ball) only after parting this far
    # A ball setting off with nothing seen to explain it, while another that was running is unseen (sinuca seed
    # 123: the green, nearly the cloth's colour, lost for ten frames as it came off a cushion into a red), was
    # met by that one if it could have got there: its last sighting within ``hidden_reach_s`` before, and no
    # farther from the point 2R behind the one set off than its speed then carries it, with ``hidden_slack_mm``.
    # Calling a touch is calling a foul, on a ball whose every neighbour was not seen.
    hidden_reach_s: float = 0.5
    hidden_slack_mm: float = 30.0
    slow_mm_s: float = 200.0  # under this a ball moves under 3.5 mm a frame: its lone misread frames are smoothed
    # Up to ``spike_frames`` readings running this far from where a ball was read the frame before them and the
    # frame after, those two within ``spike_ends_mm`` of each other, are not the ball (see ``_despiked``).
    spike_mm: float = 8.0
    spike_ends_mm: float = 3.0
    spike_frames: int = 6
    # A ball set off from rest with no contact found for it met a ball whose path passed within this of the point
    # 2R behind it (against the way it left), within this many frames of its onset (see ``_met_passing``).
    passing_mm: float = 12.0
    passing_frames: int = 3
    slow_pass_mm_s: float = 300.0  # a passing ball slower than this: the contact it made is timed by the onset
    passing_late_s: float = 0.15  # ... or up to this long after it (a ball is read setting off early, never late)
    reached_pass_mm_s: float = 150.0  # a pass this fast whose fits reach 2R just before the ball sets off met it then
    approach_clear_mm: float = 2.5  # ... and by its approach, fitted over its frames this far off 2R (``_arrival``)
    # A slow ball kissing a resting one that barely moves (see ``dead_stops``): it comes within ``touch_mm`` of 2R
    # of it (read positions: a mm or two of error), stops along the line of centres far short of where rolling
    # resistance alone (about 0.01 g: ``roll_decel_mm_s2``) would carry it, and the resting ball is then read
    # ``nudge_mm`` or more off its resting point, away from it.
    touch_mm: float = 2.0
    roll_decel_mm_s2: float = 100.0
    nudge_mm: float = 1.0
    # ... or, for a mover that goes on (a thin kiss: its path runs into the resting ball's place, see
    # ``_dead_stop``), this much: the balkline fixture clip's red, nudged 1.4 mm at 640x480, read 0.7-1.4 mm off.
    # A resting ball is held at one reading (a few hundredths of a mm of spread), and twice that spread still
    # counts: a ball merely passed is read back where it rested.
    thin_nudge_mm: float = 0.6
    # A soft kiss between two slow balls, neither at rest (``_softly_pushed_apart``): both under ``soft_mm_s``,
    # their velocities fitted over ``soft_frames`` a side, each pushed apart along the line of centres by at least
    # ``soft_push_mm_s`` and ``soft_push_t`` standard errors, the two pushes within ``soft_push_ratio``.
    soft_mm_s: float = 200.0
    soft_creep_mm_s: float = 5.0  # ... and both going before it, faster than this (and 4 standard errors)
    soft_frames: int = 10
    soft_push_mm_s: float = 15.0
    soft_push_t: float = 4.0
    soft_push_ratio: float = 2.5


@dataclass(frozen=True)
class ShotEvents:
    events: tuple[Event, ...]
    moving_at_strike: tuple[str, ...] = ()
    hidden: tuple[str, ...] = ()  # balls lost from view during the shot that came back
    notes: tuple[str, ...] = field(default_factory=tuple)
    # Every strike's time -> the balls still moving when it came (the first one's is ``moving_at_strike``); more
    # than one strike means the next shot started before this one's balls stopped.
    moving_at: dict[float, tuple[str, ...]] = field(default_factory=dict)


def find_events(paths: Paths, table: TableSpec, config: EventConfig = EventConfig(),
                strikers: tuple[str, ...] = (), pins: PinStates | None = None) -> ShotEvents:
    """The events of one shot's paths. ``strikers``: the balls a side may strike (see the module's note);
    ``pins``: the Chapó pins' states over the same frames."""
    finder = _Finder(paths, table, config, strikers, pins)
    return finder.run()


class _Finder:
    def __init__(self, paths: Paths, table: TableSpec, config: EventConfig, strikers: tuple[str, ...] = (),
                 pins: PinStates | None = None) -> None:
        self.table = table
        self.c = config
        self.r = table.ball_radius
        self.dt = paths.frame_dt
        self.potted: dict[int, Event] = {}
        self._clear_t: dict[tuple[str, float], float] = {}  # onset -> when the ball was first well clear of rest
        # Each ball's starts from rest: (onset time, first frame off the resting point, the resting point). A fit
        # must not reach back over a start (the resting frames are not on the line the ball then runs along).
        self._starts: dict[int, list[tuple[float, int, np.ndarray]]] = {}
        self._bounces: dict[int, list[float]] = {}  # each ball's cushion contacts: a kiss's fit starts after them
        self.p = _despiked(self._into_pockets(paths), config.spike_mm, config.spike_ends_mm, config.spike_frames)
        self.strikers = strikers
        self.pins = pins
        self.seen = self.p.seen
        self.speed = _speeds(self.p)  # (B, M) mm/s, used by every stage: computed once

    # --- the whole shot -----------------------------------------------------------------------------------------

    def run(self) -> ShotEvents:
        onsets = self.onsets()  # first: the contacts' fits start where a ball set off
        cushions = self.cushions()  # ... and, for the kisses' fits, where it came off a cushion
        for e in cushions:
            self._bounces.setdefault(self.p.index(e.ball), []).append(e.t)
        kisses = self.ball_ball()
        kisses += self.dead_stops(kisses)
        cushions += self.jaws(cushions)
        contacts = kisses + _dedupe(cushions + self.pushed_into_cushions(kisses), self.dt)
        gone, hidden = self.vanished()
        events: list[Event] = list(contacts) + list(gone) + self.pin_downs()
        strike_t = None
        struck = None
        moving_at: dict[float, tuple[str, ...]] = {}
        set_off: dict[str, list[float]] = {}
        for t, ball in onsets:
            set_off.setdefault(ball, []).append(t)
        # Onsets set off by a ball going past, their contacts not seen by the pair's fits: found first, so each
        # such contact is there for every later test (a struck ball stopping dead at one was not carried).
        # Such a contact explains only the ball it set off (the other was going already), so it is kept apart
        # from the contacts ``_explained`` reads.
        met_by: set[tuple[float, str]] = set()
        met_unseen: list[str] = []
        passing: list[Event] = []
        for t, ball in sorted(onsets):
            if self._explained(ball, t, contacts, set_off):
                continue
            met = self._met_passing(ball, t, contacts + passing)
            if met is not None:
                met_by.add((t, ball))
                if met not in contacts and met not in passing:
                    passing.append(met)
                    events.append(met)
        for t, ball in sorted(onsets):
            if (t, ball) in met_by or self._explained(ball, t, contacts, set_off):
                continue
            if self._carried(ball, t, contacts + passing):
                events.append(Event(t, EventType.TOUCHED, ball=ball))
            elif strike_t is not None and (unseen := self._met_unseen(ball, t)) is not None:
                events.append(Event(t, EventType.BALL_BALL, balls=(unseen, ball)))
                met_unseen.append(f"{ball} set off at {t:.3f} s with {unseen} unseen nearby: their contact inferred")
            elif strike_t is None:
                strike_t, struck = t, ball
                events.append(Event(t, EventType.STRIKE, ball=ball))
                moving_at[t] = self.moving_at(t, exclude=ball)
            elif ball in self.strikers and ball != struck and self._rolling(struck, t):
                events.append(Event(t, EventType.STRIKE, ball=ball))
                moving_at[t] = self.moving_at(t, exclude=ball)
            else:
                events.append(Event(t, EventType.TOUCHED, ball=ball))
        moving = moving_at.get(strike_t, ()) if strike_t is not None else ()
        events.sort(key=lambda e: e.t)
        if strike_t is not None:
            # Nothing of this shot happens before the cue strikes (a contact fitted a hair early is the strike's).
            events = [e if e.t >= strike_t or e.type is EventType.STRIKE else _at(e, strike_t) for e in events]
            events.sort(key=lambda e: (e.t, e.type is not EventType.STRIKE))
        notes = tuple(f"{b} hidden during the shot" for b in hidden) + tuple(met_unseen)
        return ShotEvents(tuple(events), moving, hidden, notes, moving_at)

    def _met_unseen(self, ball: str, t_on: float) -> str | None:
        """The one ball that, running and then unseen when ``ball`` set off unexplained at ``t_on``, could have
        met it (see ``hidden_reach_s``); None if none or more than one could."""
        b = self.p.index(ball)
        way = self._way_left(b, t_on)
        if way is None:
            return None
        rest, d = way
        behind = rest - 2 * self.r * d  # where the other's centre was at the contact
        t = self.p.t
        k0 = min(int(np.searchsorted(t, t_on)), len(t) - 1)
        found = []
        for o, other in enumerate(self.p.balls):
            if o == b or self.seen[o, max(k0 - 1, 0):k0 + 1].any():
                continue
            before = np.nonzero(self.seen[o, :k0])[0]
            if not len(before):
                continue
            ka = int(before[-1])
            late = t_on - t[ka]
            pace = float(np.nanmax(self.speed[o, max(ka - 2, 0):ka + 1], initial=0.0))
            if late > self.c.hidden_reach_s or pace < self.c.moving_mm_s:
                continue
            if float(np.linalg.norm(self.p.xy[o, ka] - behind)) <= pace * late + self.c.hidden_slack_mm:
                found.append(other)
        return found[0] if len(found) == 1 else None

    def _rolling(self, ball: str | None, t: float) -> bool:
        """Whether ``ball`` is still moving at ``t``."""
        if ball is None:
            return False
        k = min(max(int(np.searchsorted(self.p.t, t)) - 1, 0), len(self.p.t) - 1)
        return bool(self.speed[self.p.index(ball), k] > self.c.moving_mm_s)

    def _carried(self, ball: str, t_on: float, contacts: list[Event]) -> bool:
        """A ball that is going at a hand's pace one or two frames before it is still again, with no contact
        there to stop it, was carried and put down: a free ball decelerates to a stop over a second or more."""
        b = self.p.index(ball)
        xy, t = self.p.xy[b], self.p.t
        k0 = int(np.searchsorted(t, t_on))
        kr = self._next_rest(b, k0)
        if kr >= len(t) or kr < 3:
            return False
        # The way made good over the last three (and four) frames, not the largest step: one misread frame (a
        # blob at a corner, a passing ball's edge) is two 4 mm "steps" at 250 mm/s, there and back; a hand slides
        # the ball over all of them.
        pace = [float(np.linalg.norm(xy[kr] - xy[kr - n])) / (t[kr] - t[kr - n]) for n in (3, 4) if kr >= n]
        pace = [p for p in pace if not np.isnan(p)]
        if not (pace and min(pace) > self.c.carried_mm_s):
            return False
        lo, hi = t[kr - 4] if kr >= 4 else t[0], t[kr] + self.dt
        return not any(e.involves(ball) and lo <= e.t <= hi for e in contacts)

    def _explained(self, ball: str, t: float, contacts: list[Event], set_off: dict[str, list[float]]) -> bool:
        """A ball setting off within two frames of a contact of its own was set off by that contact; so was one
        hit before it got well clear of its resting point (the striking ball's blob merging with it a few frames
        before the contact drags its read position: an "onset" too early). Not one the other ball of the contact
        was still resting at, setting off only later, at the contact: this one was struck and ran a frame or two
        into it (``set_off``: each ball's onsets)."""
        until = max(t + 2 * self.dt, self._clear_t.get((ball, t), t))
        for e in contacts:
            if not (e.involves(ball) and t - 2 * self.dt <= e.t <= until):
                continue
            # A cushion sets no resting ball off: one met after the ball set off is where it ran to (a ball
            # resting 60 mm from a cushion, kissed, is there two frames later); one met as it set off is the
            # push of a ball resting against it, whose kiss explains the start.
            if e.type is EventType.CUSHION and e.t > t + self.dt / 2:
                continue
            other = e.other(ball)
            if other is not None and any(t + self.dt / 2 < t_o <= e.t + 2 * self.dt for t_o in set_off.get(other, ())):
                continue
            # Both set off within a frame or so (a ball struck into one a few mm away): the one that left towards
            # the other was struck.
            if other is not None and e.type is EventType.BALL_BALL and \
                    any(t - self.dt <= t_o <= e.t + 2 * self.dt for t_o in set_off.get(other, ())) and \
                    self._ran_into(self.p.index(ball), t, other, e.t):
                continue
            return True
        return False

    def _way_left(self, b: int, t_on: float) -> tuple[np.ndarray, np.ndarray] | None:
        """(resting point, unit direction) of ball ``b``'s start from rest at ``t_on``: the way it left, to its first
        sighting well clear of rest (a mis-read frame or two at 2 mm gives no direction), within the first few
        frames (before a cushion turns it)."""
        start = next((st for st in self._starts.get(b, ()) if st[0] == t_on), None)
        if start is None:
            return None
        _, first, rest = start
        d = self._leaving(b, first, rest)
        return None if d is None else (rest, d)

    def _leaving(self, b: int, first: int, rest: np.ndarray) -> np.ndarray | None:
        """The unit direction ball ``b`` leaves ``rest`` in from frame ``first`` on: to its first sighting well
        clear of rest within the first ``fit_frames``; a slow ball (not clear by then) to its first sighting
        clear within ``creep_s``, else the farthest of them. A ball kissed to 30 mm/s moves 2 mm in four frames,
        and a direction read off 2 mm of half-mm noise is 15-25 degrees out: the point 2R behind it, where the
        ball that kissed it was, comes out 15 mm off (sinuca seed 200's red, touched for want of its kiss)."""
        big_m = len(self.p.t)
        for horizon in (self.c.fit_frames, int(np.ceil(self.c.creep_s / self.dt))):
            ahead = self.p.xy[b, window(first, first + horizon, big_m)]
            ahead = ahead[~np.isnan(ahead[:, 0])]
            if not len(ahead):
                return None
            off = np.linalg.norm(ahead - rest, axis=1)
            clear = np.nonzero(off > self.c.start_clear_mm)[0]
            if len(clear):
                break
        if len(clear):
            p = ahead[clear[0]]
        else:
            # Never clear: it crept off and rested again within ``creep_s``. Where it came to rest, the median
            # of its last ``rest_s`` of sightings, not its farthest one (a lone misread frame 1-2 mm out).
            p = np.median(ahead[-max(int(np.ceil(self.c.rest_s / self.dt)), 1):], axis=0)
        return (p - rest) / max(float(np.linalg.norm(p - rest)), 1e-9)

    def _ran_into(self, b: int, t_on: float, other: str, t_contact: float) -> bool:
        """Ball ``b``, set off at ``t_on``, did not leave away from ``other`` (where it was at the contact): it was
        struck and ran into it, not set off by it. A ball kissed leaves straight away from the ball that kissed it
        (the line of centres: -1); a struck one that cut another a few mm away runs on across the line of centres
        or beyond it (0 or more), its first frames already past the contact."""
        way = self._way_left(b, t_on)
        if way is None:
            return False
        rest, d = way
        o = self.p.index(other)
        k = int(np.clip(np.searchsorted(self.p.t, t_contact), 0, len(self.p.t) - 1))
        seen = np.nonzero(~np.isnan(self.p.xy[o, :k + 1, 0]))[0]
        if not len(seen):
            return False
        to_other = self.p.xy[o, seen[-1]] - rest
        return float(to_other @ d) > 0.0

    def _met_passing(self, ball: str, t_on: float, contacts: list[Event]) -> Event | None:
        """The contact that set ``ball`` off from rest at ``t_on`` when the pair's fits did not find it: a ball
        set off by another leaves along the line of centres, so at the contact the other's centre was 2R behind
        its resting point, against the way it left. Met when another ball's path, moving towards it, passes
        within ``passing_mm`` of that point within ``passing_frames`` of the onset: geometry and the ball's
        change of state, not one frame's proximity. (A contact a frame after a strike or a cushion, whose
        fitted paths bend between the frames; a thin kiss or a soft touch, the ball slow at first and its
        onset run back a frame or two early.) Timed where the passing path comes closest to that point; a
        contact of the same pair already found about then is returned instead of a second one. The other ball
        must have been going already when this one set off."""
        b = self.p.index(ball)
        way = self._way_left(b, t_on)
        if way is None:
            return None
        rest, d = way
        t, xy = self.p.t, self.p.xy
        big_m = len(t)
        centre = rest - 2 * self.r * d  # where the other ball's centre was at the contact
        k0 = int(np.searchsorted(t, t_on))
        # A ball is read setting off early, never late (a merging blob drags it; a slow start is run back along
        # a line): the contact may come up to ``passing_late_s`` after the onset, a few frames before it.
        # ... and, unseen in the frames just before its first sighting on the move (the two balls one blob at the
        # kiss), it may have set off in any of them (sinuca seed 198: the black hidden for four frames as a red
        # kissed it, its onset read at the last of them, the red's pass three frames and a half before).
        hidden = 0
        while k0 - 1 - hidden >= 0 and not self.seen[b, k0 - 1 - hidden] and hidden < self.c.bridge_frames + 1:
            hidden += 1
        early = (self.c.passing_frames + hidden + 0.5) * self.dt
        late = max(early, self.c.passing_late_s)
        span = window(k0 - self.c.passing_frames - hidden - 1, k0 + int(np.ceil(late / self.dt)) + 1, big_m)
        xy_b = _bridged(xy, self.c.bridge_frames)
        best: tuple[float, float, int, float] | None = None  # (distance, time, ball, its speed)
        for o, other in enumerate(self.p.balls):
            if o == b:
                continue
            # The other ball was already going when this one set off: not one setting off with it (two labels
            # exchanged at a strike read as both balls jumping off at once), unless it set off first running into
            # this one (struck a few mm from it, the kiss within the strike's frame).
            if any(st[0] >= t_on - self.dt / 4 and st[0] <= t_on + (self.c.passing_frames + 1) * self.dt
                   and not (st[0] < t_on and self._ran_into(o, st[0], ball, t_on))
                   for st in self._starts.get(o, ())):
                continue
            q, tq = xy_b[o, span], t[span]
            # Its path: the chords between frames, and each chord carried on for a frame (the way it came in: at
            # the contact it turns, and the chord across that frame cuts the corner).
            a = np.concatenate([q[:-1], q[1:]])
            seg = np.concatenate([q[1:] - q[:-1]] * 2)
            ta = np.concatenate([tq[:-1], tq[1:]])
            span_t = np.concatenate([np.diff(tq)] * 2)
            length = np.linalg.norm(seg, axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                u = np.clip(np.einsum("ij,ij->i", centre - a, seg) / length ** 2, 0.0, 1.0)
                dist = np.linalg.norm(a + u[:, None] * seg - centre, axis=1)
                towards = np.einsum("ij,j->i", seg, d) / length
                speed = length / span_t
            tc = ta + u * span_t
            ok = (speed > self.c.moving_mm_s) & (towards > 0.05) & (dist <= self.c.passing_mm)
            ok &= (tc >= t_on - early) & (tc <= t_on + late)
            for k in np.nonzero(ok)[0]:
                if best is None or dist[k] < best[0]:
                    best = (float(dist[k]), float(tc[k]), o, float(speed[k]))
        if best is None:
            struck = self._struck_into(ball, t_on, centre)
            if struck is None:
                return None
            best = struck
        _, tc, o, pass_speed = best
        # A ball is read setting off early, never late: the contact is not before its onset. A slow pass's closest
        # approach is loosely timed (the way the ball left, read off its first few mm, is a few degrees out: at
        # 90 mm/s, 10 mm along the path is 0.1 s): its contact is the onset, to a frame or two.
        # (The onset of a ball unseen before it was seen moving is only known to lie in those hidden frames.)
        # Where that slow pass first comes to 2R of the resting point is timed well though, when that is after the
        # onset: it does not hang on the way the ball left, and an onset run back through the kissed ball's first,
        # slow frames can be early (merged with the kisser's, its blob lags the truth by a mm there: sinuca seed
        # 117, a red kissed at 99 mm/s read setting off 29 ms early). Looked for over the pass's own span up to the
        # ball's first frame off its resting point (it is not seen off before it is kissed); a first arrival
        # before the onset leaves the onset (the two blobs merging read the gap short: it is early then).
        if pass_speed < self.c.slow_pass_mm_s:
            first = next(st[1] for st in self._starts[b] if st[0] == t_on)
            reached = None if hidden else self._reaches(xy_b[o], rest, 2 * self.r, t_on - early, float(t[first]))
            tc = t_on if reached is None or reached <= t_on else reached
            # A third time: where the pass's approach, read while still clear of the ball it kisses (not yet one
            # blob with it), reaches 2R (``_arrival``). Each of the three fails on its own: the onset comes late
            # where a ball kissed to 30 mm/s is read off its resting point only frames after the kiss (bilhar seed
            # 128's 6, 35 ms), and early as above; the pass's first arrival late where the blobs, merging, read the
            # gap long (bilhar seeds 195 and 232, 38 and 24 ms); the approach's fit, extrapolated a few mm, is
            # 10-20 ms out either way at these speeds. With all three, their median: of the seven such kisses traced
            # (bilhar seeds 106, 108, 117, 128, 195 and 232, sinuca 117), within 16 ms of the truth in all, where
            # the onset alone was up to 35 ms off and the first arrival up to 38.
            # ... unless the approach comes over a frame before both: the onset and the first arrival are both read
            # off the frames the two blobs merge in, and the merge had delayed both (sinuca seed 250: each 26 ms
            # late, the approach 8 ms early).
            arrival = None if hidden or reached is None else self._arrival(o, rest, t_on - early, float(t[first]))
            if arrival is not None:
                merged_late = arrival < min(t_on, reached) - self.dt
                tc = arrival if merged_late else float(np.median([t_on, reached, arrival]))
        else:
            tc = max(tc, t_on - hidden * self.dt)
        pair = tuple(self.p.balls[i] for i in sorted((b, o)))
        for e in contacts:
            if e.type is EventType.BALL_BALL and set(e.balls or ()) == set(pair) and \
                    abs(e.t - tc) <= early:
                return e
        return Event(tc, EventType.BALL_BALL, balls=pair)

    def _arrival(self, o: int, point: np.ndarray, t0: float, t1: float) -> float | None:
        """The time in [t0, t1] ball ``o``'s approach reaches 2R of ``point`` (a resting ball's centre), fitted over
        up to ``2 fit_frames`` sightings before it first comes within ``approach_clear_mm`` of that (closer, the two
        blobs merge and each is read into the other); not across a cushion or a start. None without such an
        approach, or if the fit does not reach 2R in [t0, t1]."""
        t, xy = self.p.t, self.p.xy[o]
        big_m = len(t)
        k0, k1 = int(np.searchsorted(t, t0)), min(int(np.searchsorted(t, t1, side="right")), big_m)
        with np.errstate(invalid="ignore"):
            close = np.nonzero(np.linalg.norm(xy[k0:k1] - point, axis=1) - 2 * self.r <= self.c.approach_clear_mm)[0]
        if not len(close):
            return None
        k_in = k0 + int(close[0])
        fitted = self._fit_window(o, k_in - 2 * self.c.fit_frames, k_in)
        if fitted is None:
            return None
        f = fitted[0]
        ts = np.linspace(max(t0, float(t[max(k_in - 1, 0)])), t1, 241)
        inside = np.nonzero(np.linalg.norm(f.at(ts) - point, axis=1) <= 2 * self.r)[0]
        if not len(inside) or inside[0] == 0:
            return None
        return float(ts[inside[0]])

    def _reaches(self, q: np.ndarray, point: np.ndarray, dist: float, t0: float, t1: float) -> float | None:
        """The first time in [t0, t1] path ``q`` (M, 2) comes within ``dist`` of ``point``, along its chords
        between frames; None if it does not (or is there already at ``t0``)."""
        t = self.p.t
        k0 = max(int(np.searchsorted(t, t0)) - 1, 0)
        k1 = min(int(np.searchsorted(t, t1)) + 1, len(t) - 1)
        u = np.linspace(0.0, 1.0, 65)
        for k in range(k0, k1):
            a, z = q[k], q[k + 1]
            if np.isnan(a[0]) or np.isnan(z[0]):
                continue
            ts = t[k] + u * (t[k + 1] - t[k])
            inside = (np.linalg.norm(a + u[:, None] * (z - a) - point, axis=1) <= dist) & (ts >= t0)
            if inside.any():
                first = int(np.argmax(inside))
                if ts[first] <= t0 + 1e-9 or ts[first] > t1:
                    return None
                return float(ts[first])
        return None

    def _struck_into(self, ball: str, t_on: float, centre: np.ndarray) -> tuple[float, float, int, float] | None:
        """A ball struck from rest into ``ball`` within the strike's frame (3 cm off, the kiss 9 ms after the
        strike): no chord of its path comes near ``centre`` (where its centre was at the kiss), for the path
        bends at the kiss inside the frame. Its two legs, resting point to ``centre`` and ``centre`` to its first
        sighting, fit its start if run at about its speed after (at least that, at most three times: a cut
        slows it) and ``ball`` sets off when the first leg ends (within a frame). (distance 0, contact time,
        ball, speed) as ``_met_passing``'s candidates, or None."""
        t, xy = self.p.t, self.p.xy
        for o, other in enumerate(self.p.balls):
            for t_o, first_o, rest_o in self._starts.get(o, ()):
                if not (t_on - 2 * self.dt <= t_o < t_on) or not self._ran_into(o, t_o, ball, t_on):
                    continue
                leg1 = float(np.linalg.norm(centre - rest_o))
                # Its first sighting past the kiss (the frame the strike falls in may show it a few mm on).
                span = np.arange(first_o, min(first_o + 3, len(t) - 1))
                past = [k for k in span if np.linalg.norm(xy[o, k] - rest_o) > leg1]
                if not past:
                    continue
                k = past[0]
                nxt, after = xy[o, k], xy[o, k + 1]
                if np.isnan(after[0]):
                    continue
                leg2 = float(np.linalg.norm(nxt - centre))
                v_after = float(np.linalg.norm(after - nxt)) / self.dt
                v_pre = (leg1 + leg2) / max(float(t[k] - t_o), 1e-6)
                if not (v_after > self.c.moving_mm_s and v_after <= v_pre <= 3.0 * v_after):
                    continue
                tc = t_o + leg1 / v_pre
                if abs(tc - t_on) <= self.dt:
                    return 0.0, tc, o, v_pre
        return None

    # --- ball-ball ----------------------------------------------------------------------------------------------

    def ball_ball(self) -> list[Event]:
        # Two balls meeting are often one blob to the detector for the frame of the contact (small balls, a low
        # resolution): one of them is unseen there, and the other's sample is off. Candidates are looked for on
        # the paths bridged over such short gaps; the contact itself is timed from the real samples either side.
        xy = _bridged(self.p.xy, self.c.bridge_frames)
        d_ball = 2 * self.r
        out: list[Event] = []
        n = len(self.p.balls)
        speed = self.speed
        for i in range(n):
            for j in range(i + 1, n):
                dist = np.linalg.norm(xy[i] - xy[j], axis=1)  # NaN where either is unseen
                reach = d_ball + self.c.contact_slack_mm + (speed[i] + speed[j]) * self.dt * 0.6
                last = -1  # the frame of this pair's last contact
                thin: list[float] = []  # the times of kisses seen only as a push apart
                for m in _local_minima(dist):
                    if not dist[m] <= reach[m]:
                        continue
                    # Two balls rolling on together after a kiss (a cluster, a follow-through), a mm or two
                    # apart and read nearer or farther frame to frame, meet again only once they have parted.
                    if last >= 0 and not np.nanmax(dist[last:m], initial=-np.inf) - dist[m] > self.c.off_cushion_mm:
                        continue
                    found = self._pair_contact_time(i, j, m)
                    if found is None:
                        continue
                    tc, kinked = found
                    if not kinked:
                        thin.append(tc)
                        continue
                    out.append(Event(tc, EventType.BALL_BALL, balls=(self.p.balls[i], self.p.balls[j])))
                    last = m
                # A push apart stands for a kiss only where the kink saw none about it: the kink's time is the
                # better one (a frame of noise next to a real kiss can look like a push too).
                kissed = [e.t for e in out if e.balls == (self.p.balls[i], self.p.balls[j])]
                for tc in thin:
                    if all(abs(tc - tk) > 2 * self.c.fit_frames * self.dt for tk in kissed):
                        out.append(Event(tc, EventType.BALL_BALL, balls=(self.p.balls[i], self.p.balls[j])))
                        kissed.append(tc)
        return _dedupe(out, self.dt)

    def _pair_contact_time(self, i: int, j: int, m: int) -> tuple[float, bool] | None:
        """The time the pair met about frame ``m``, and whether a path kinked there (False: seen only as the two
        pushed apart, ``_pushed_apart``); None if they did not meet."""
        t, xy, k = self.p.t, self.p.xy, self.c.fit_frames
        big_m = len(t)
        before = window(m - k, m, big_m)  # frames up to m-1: before the contact whichever side of it m lies
        after = window(m + 1, m + 1 + k, big_m)
        fi, fj = self._fit_since_start(i, before), self._fit_since_start(j, before)
        if fi is None or fj is None:
            return None
        t_lo = t[max(m - 1, 0)]
        t_hi = t[min(m + 1, big_m - 1)]
        ts = np.linspace(t_lo, t_hi, 241)
        gap = np.linalg.norm(fi.at(ts) - fj.at(ts), axis=1) - 2 * self.r
        crossing = np.nonzero(gap <= 0)[0]
        if len(crossing):
            tc = float(ts[crossing[0]])
            if crossing[0] > 0:  # refine linearly between the two samples around the crossing
                g0, g1 = gap[crossing[0] - 1], gap[crossing[0]]
                tc = float(ts[crossing[0] - 1] + (ts[crossing[0]] - ts[crossing[0] - 1]) * g0 / (g0 - g1))
        elif gap.min() <= self.c.contact_slack_mm:
            # A graze: the fitted paths come near 2R without reaching it. Not with a ball at rest that stays
            # there (a ball at rest that is touched sets off; one passed 8 mm clear, the other's path bending a
            # little on its own, does not).
            if any(self._resting(x, m) and not self._starts_near(x, m) for x in (i, j)):
                return None
            tc = float(ts[int(np.argmin(gap))])
        else:
            return None
        # The paths must change at the contact: at least one ball's velocity differs before and after, or, where
        # the fitted paths do reach 2R, both were pushed apart along their line of centres by about as much.
        ai, aj = fit(t[after], xy[i, after]), fit(t[after], xy[j, after])
        kinked = self._kinked(fi, ai, tc) or self._kinked(fj, aj, tc)
        if kinked and not self._along_centres(fi, ai, fj, aj, tc):
            # Across the line of centres: no kiss, unless either ball meets a cushion within the fits after (its
            # change of velocity is the cushion's too: three-cushion seed 289, the spot 9 mm from the rail,
            # kissed into it 5 ms later).
            t_after = t[after.stop - 1] if after.stop > after.start else tc
            kinked = any(tc <= tb <= t_after for x in (i, j) for tb in self._bounces.get(x, ()))
        if not kinked:
            if len(crossing) and self._pushed_apart(fi, ai, fj, aj, tc):
                # So thin a kiss closes the gap slowly (50 mm/s along the line of centres): a mm of error in the
                # positions is 20 ms in the time the fits reach 2R. Where each ball's fits before and after meet
                # (its kink) does not move with such an error.
                tc = _where_fits_meet(((fi, ai), (fj, aj)), t[max(m - 3, 0)], t_hi)
            elif (soft := self._softly_pushed_apart(i, j, m, tc)) is not None:
                # Timed where the long fits meet, as above: the 4-frame fits' crossing of 2R was 36 ms late where
                # the two, a mm apart, were read apart (Chapó seed 250); the long fits' kinks were 9-13 ms off.
                # Also where the short fits only graze 2R: bilhar seed 100's 6 at 113 mm/s into the 14 creeping
                # at 29, the two read 2.6 mm apart at the nearest (one blob, then the 6 read long), each ball's
                # change of velocity (91 and 82 mm/s) read under the kink's 80 by its four frames a side.
                tc = _where_fits_meet(soft, t[max(m - 3, 0)], t_hi)
            elif len(crossing) and self._sets_off_as_reached(i, j, m, tc):
                kinked = True  # the resting ball's start is the change of path
            else:
                return None
        # Two balls touching at rest (frozen, a rack) jitter in the detector by a frame's worth of "kink": they
        # met only if one of them was moving, or one truly sets off there (the break running through the rack).
        if self._resting(i, m) and self._resting(j, m) and not (self._sets_off(i, m) or self._sets_off(j, m)):
            return None
        # ... and, seen half the frames or misread by a merged blob now and then, they did not "rest" by that
        # test: still, one of them must go somewhere about the contact.
        if not (self._travels(i, m) or self._travels(j, m)):
            return None
        # Two balls a few mm apart, one struck into the other: the fits' nearest approach is a frame of the noise
        # while both still rest. The contact is where the second of them sets off (the one kissed starts then).
        later = [min((st[0] for st in self._starts.get(x, ()) if tc < st[0] <= tc + 2 * k * self.dt), default=None)
                 for x in (i, j)]
        if later[0] is not None and later[1] is not None:
            return max(later[0], later[1]), kinked
        # A soft kiss (the striker under ``slow_pass_mm_s``) that the pair's fits only graze: their nearest approach
        # comes a frame or three late, as the two roll on together; the kissed ball's start from rest just before
        # is the contact (a ball is read setting off early, never late). Not where the fits reach 2R: that crossing
        # is the contact (bilhar and sinuca, 200 shots each: within 20 ms of the truth in all 94 such kisses, a
        # median 1-2 ms; the kissed ball's start in 87, a median 3.5-5.5 ms: read setting off early as the two
        # blobs merged, or set off by a strike before the kiss).
        for x, y in ((i, j), (j, i)) if not len(crossing) else ():
            start = max((st[0] for st in self._starts.get(x, ()) if tc - 3.5 * self.dt <= st[0] < tc), default=None)
            if start is not None and self.c.moving_mm_s < self.speed[y, m] < self.c.slow_pass_mm_s and \
                    not any(tc - 3.5 * self.dt <= st[0] <= tc for st in self._starts.get(y, ())):
                return start, kinked
        return tc, kinked

    def dead_stops(self, kisses: list[Event]) -> list[Event]:
        """Kisses of a slow ball into a resting one that barely moves (a mm or two: sinuca seed 116, a red at
        34 mm/s kissing the resting yellow, which creeps 1.5 mm): no kink (the kisser's change of velocity is
        under the kink's 80 mm/s) and no start (the kissed ball never gets 4-8 mm clear). Met when all of these
        hold at once: the moving ball's centre comes within ``touch_mm`` of 2R of the resting ball's; along their
        line of centres it then gets less than half as far, and at least ``start_clear_mm`` / 2 short of, what
        rolling resistance alone would let it roll (a ball at 30-60 mm/s rolls 5-18 mm on before it stops: it
        stopped dead on the other); and the resting ball, still before, is read displaced away from it along
        that line by ``nudge_mm`` or more (and twice its own noise), consistently over the frames that follow.
        (Chapó seed 117 too: the mingo at 69 mm/s kissing the resting 2 off its line, to 20 mm/s.) Timed where
        the mover's fits before and after meet.

        Or a thin kiss, the mover going on: its fitted path runs into 2R of the resting point, and the resting ball
        is read displaced by ``thin_nudge_mm`` (the balkline fixture clip's spot past the red); timed where that
        path reaches 2R."""
        xy = _bridged(self.p.xy, self.c.bridge_frames)
        n_rest = int(np.ceil(self.c.rest_s / self.dt))
        k_fit = 2 * self.c.fit_frames  # a slow ball's frames are a mm apart: the fit needs more of them
        d_ball = 2 * self.r
        out: list[Event] = []
        found = list(kisses)
        # Every pair's gap at once (B, B, M), and where one ball first comes within touch of another.
        gaps = np.linalg.norm(xy[:, None, :, :] - xy[None, :, :, :], axis=3) - d_ball
        near = gaps <= self.c.touch_mm
        entries = near[..., 1:] & ~near[..., :-1] & ~np.isnan(gaps[..., :-1])
        for a, b, m in zip(*np.nonzero(entries)):
            if a == b:
                continue
            e = self._dead_stop(int(a), int(b), int(m) + 1, gaps[a, b], n_rest, k_fit, found)
            if e is not None:
                out.append(e)
                found.append(e)
        return out

    def _dead_stop(self, a: int, b: int, m0: int, gap: np.ndarray, n_rest: int, k_fit: int,
                   found: list[Event]) -> Event | None:
        """``dead_stops``' test for mover ``a`` coming within touch of resting ``b`` at frame ``m0``."""
        t, xy = self.p.t, self.p.xy
        big_m = len(t)
        if m0 < k_fit + n_rest or m0 + n_rest + self.c.fit_frames >= big_m:
            return None
        # The resting ball: still over the ``rest_s`` before the approach (its last few frames left out: the
        # mover's blob merging with it drags its reading a fraction of a mm towards it), and not setting off
        # about then (a start is met by ``_met_passing``).
        pre = xy[b, window(m0 - self.c.fit_frames - n_rest, m0 - self.c.fit_frames, big_m)]
        pre = pre[~np.isnan(pre[:, 0])]
        if len(pre) < n_rest // 2:
            return None
        rest = np.median(pre, axis=0)
        spread = np.linalg.norm(pre - rest, axis=1)
        if float(spread.max()) > self.c.rest_mm:
            return None
        # (A start before those resting frames is over: the ball came to rest again, bilhar seed 118's 7, kissed
        # 0.7 s before by the 14.)
        t_pre = t[max(m0 - self.c.fit_frames - n_rest, 0)]
        if any(t_pre <= st[0] <= t[m0] + self.c.creep_s for st in self._starts.get(b, ())):
            return None
        # The mover, fitted over the frames before it came within touch.
        f = self._fit_since_start(a, window(m0 - k_fit, m0, big_m))
        if f is None:
            return None
        # The contact: where the fit reaches 2R of the resting point, up to the frame after the closest read.
        m1 = m0
        while m1 + 1 < big_m and not np.isnan(gap[m1 + 1]) and gap[m1 + 1] <= self.c.touch_mm:
            m1 += 1
        span = slice(m0, m1 + 1)
        k_min = m0 + int(np.nanargmin(gap[span]))
        ts = np.linspace(t[m0 - 1], t[min(k_min + 1, big_m - 1)], 241)
        dist = np.linalg.norm(f.at(ts) - rest, axis=1)
        inside = np.nonzero(dist <= 2 * self.r)[0]
        tc = float(ts[inside[0]]) if len(inside) else float(ts[int(np.argmin(dist))])
        if not len(inside) and float(dist.min()) > 2 * self.r + self.c.touch_mm:
            return None
        at = f.at(tc)
        n = rest - at
        n = n / max(float(np.linalg.norm(n)), 1e-9)  # line of centres, mover to resting ball
        u0 = float(f.velocity(tc) @ n)
        # A thin kiss: the mover's path runs into the resting ball's place and it goes on, barely turned (a turn
        # over the kink is ``ball_ball``'s, already in ``found``), the kissed one moving a mm or two. Going in
        # fast enough to nudge it the least distance read below, against rolling resistance alone.
        least_push = float(np.sqrt(2 * self.c.roll_decel_mm_s2 * self.c.thin_nudge_mm))
        thin = len(inside) > 0 and u0 >= least_push
        if u0 < self.c.slow_in_mm_s and not thin:
            return None  # not going into it (or too slowly to nudge it a mm)
        # The mover stops dead along the line of centres: over ``rest_s`` after the contact rolling resistance
        # would carry it at least u0 tau - d tau^2 / 2 (or u0^2 / 2d, stopping) further along that line.
        kc = int(np.searchsorted(t, tc))
        tau = self.c.rest_s
        free = u0 * tau - 0.5 * self.c.roll_decel_mm_s2 * tau ** 2 if u0 > self.c.roll_decel_mm_s2 * tau \
            else u0 ** 2 / (2 * self.c.roll_decel_mm_s2)
        later = xy[a, window(kc + n_rest - self.c.fit_frames, kc + n_rest, big_m)]
        later = later[~np.isnan(later[:, 0])]
        if not len(later):
            return None
        went = float((np.median(later, axis=0) - at) @ n)
        stopped = went <= free / 2 and free - went >= self.c.start_clear_mm / 2
        if not (stopped or thin):
            return None
        # The resting ball, read displaced away from the mover along the line of centres over the ``rest_s``
        # from a few frames after the contact (a ball kissed to 15-20 mm/s needs that long to move a mm).
        post = xy[b, window(kc + self.c.fit_frames, kc + self.c.fit_frames + n_rest, big_m)]
        post = post[~np.isnan(post[:, 0])]
        if len(post) < n_rest // 2:
            return None
        along = (post - rest) @ n
        across = np.abs((post - rest) @ np.array([-n[1], n[0]]))
        nudge = self.c.nudge_mm if stopped else self.c.thin_nudge_mm
        least = max(nudge, 2.0 * float(np.median(spread)))
        if not (np.median(along) >= least and np.mean(along >= least / 2) >= 0.75
                and np.median(across) <= np.median(along)):
            return None
        # Timed where the mover's fits before and after meet (its kink): the fit's 2R from the resting point
        # hangs on a mm of blob drag in either reading, a few tens of ms at these speeds; the kink does not.
        # (Not a thin kiss's mover: it goes on nearly straight, and two nearly parallel fits meet anywhere.)
        if stopped:
            after = fit(t[window(kc + 1, kc + 1 + k_fit, big_m)], xy[a, window(kc + 1, kc + 1 + k_fit, big_m)])
            if after is not None:
                tc = _where_fits_meet(((f, after),), t[m0 - 1], t[min(k_min + 1, big_m - 1)])
        pair = tuple(sorted((self.p.balls[a], self.p.balls[b]), key=self.p.index))
        if any(e.type is EventType.BALL_BALL and set(e.balls or ()) == set(pair) and abs(e.t - tc) <= self.c.rest_s
               for e in found):
            return None
        return Event(tc, EventType.BALL_BALL, balls=pair)

    def pushed_into_cushions(self, kisses: list[Event]) -> list[Event]:
        """A ball resting a few mm off a cushion and hit towards it meets the cushion within the same frame: no
        frame sees it come in. Set off from rest it must go along the line of centres, into the cushion; seen
        going away from it in its first frames (the same way along it), it met the cushion: timed where the
        ball, going along the line of centres, reaches the nose. (Not a mirror of that line: the cushion takes
        most of a slow normal speed, and the striker may still push.)"""
        t, xy = self.p.t, self.p.xy
        w, l = self.table.width, self.table.length
        out: list[Event] = []
        for e in kisses:
            for ball in e.balls or ():
                o, s = self.p.index(ball), self.p.index(e.other(ball) or ball)
                start = next((st for st in self._starts.get(o, ()) if abs(st[0] - e.t) <= 2 * self.dt), None)
                if start is None:
                    continue
                t_on, first, rest = start
                k = int(np.searchsorted(t, e.t))
                striker = self._fit_since_start(s, window(k - self.c.fit_frames, k, len(t)))
                leave = fit(t[window(first, first + 3, len(t))], xy[o, window(first, first + 3, len(t))])
                if striker is None or leave is None or np.linalg.norm(leave.v) < self.c.moving_mm_s:
                    continue
                n = rest - striker.at(e.t)
                if np.linalg.norm(n) < 1e-6:
                    continue
                n, d = n / np.linalg.norm(n), leave.v / np.linalg.norm(leave.v)
                # Hit fast, a ball 10-20 mm off the nose is there and back within the frame too (carom seed 289:
                # the spot 9 mm off the left cushion, back out at 1.7 m/s): half a frame's way out is allowed.
                reach = self.c.contact_slack_mm + 0.5 * float(np.linalg.norm(leave.v)) * self.dt
                for name, (axis, sign) in _OUTWARD.items():
                    gap = _GAPS[name](rest, w, l) - self.r
                    into = sign * n[axis]
                    if gap > reach or into < 0.2:
                        continue
                    along = 1 - axis
                    same_way = abs(n[along]) < 0.2 or n[along] * d[along] > 0
                    if sign * d[axis] < -0.1 and same_way:
                        speed = float(np.linalg.norm(leave.v))
                        out.append(Event(e.t + max(gap, 0.0) / (speed * into), EventType.CUSHION, ball=ball,
                                         cushion=name))
        return out

    def _left_from_rest(self, b: int, m: int) -> bool:
        """Ball ``b``, at rest until frame ``m - 1``, runs off after frame ``m`` along a line through its resting
        point (within half the contact slack): it went straight from rest, meeting nothing on the way."""
        t, xy = self.p.t, self.p.xy[b]
        big_m = len(t)
        still = xy[window(m - 5, m, big_m)]
        still = still[~np.isnan(still[:, 0])]
        f = fit(t[window(m + 1, m + 1 + self.c.fit_frames, big_m)], xy[window(m + 1, m + 1 + self.c.fit_frames,
                                                                             big_m)])
        if not len(still) or f is None:
            return True  # cannot tell: the old rule (a resting ball never came in)
        speed = float(np.linalg.norm(f.v))
        if speed < 1e-6:
            return True
        off = still.mean(axis=0) - f.p0
        across = abs(float(off[0] * f.v[1] - off[1] * f.v[0])) / speed
        if across > self.c.contact_slack_mm / 2:
            return False
        # On that line, but passing its resting point well after it set off: it went into the cushion and
        # straight back (carom seeds 269, 296: a ball kissed hard from 25-85 mm off a cushion, back 30-70 ms
        # later). One struck away passes its resting point as it sets off.
        t_pass = f.t0 + float(off @ f.v) / speed ** 2
        onsets = [t_on for t_on, first, _ in self._starts.get(b, ()) if abs(first - m) <= self.c.fit_frames]
        return not onsets or t_pass - max(onsets) <= 1.5 * self.dt

    def _fit_since_start(self, b: int, frames: slice) -> LineFit | None:
        """Ball ``b``'s motion fitted over ``frames``, from its last start from rest among them on: those frames
        and its resting point at the onset time (a ball struck, or hit, a frame or two before a contact has only
        those frames of its new motion; the resting frames before them would drag the fit)."""
        t, xy = self.p.t, self.p.xy[b]
        lo, hi = frames.start, frames.stop
        # Nor over a cushion it came off (the red off the rail and back into the spot 60 ms later): the frames
        # before the bounce are on another line. Kept when too few frames are left after it for a fit.
        bounced = [tb for tb in self._bounces.get(b, ()) if t[lo] < tb < t[hi - 1]] if hi > lo else []
        if bounced:
            after = int(np.searchsorted(t, max(bounced), side="right"))
            if np.count_nonzero(~np.isnan(xy[after:hi, 0])) >= 2:
                lo = after
                frames = slice(lo, hi)
        starts = [s for s in self._starts.get(b, ()) if lo <= s[1] < hi]
        if not starts:
            return fit(t[frames], xy[frames])
        t_on, first, rest = starts[-1]
        return fit(np.concatenate([[t_on], t[first:hi]]), np.concatenate([rest[None], xy[first:hi]]))

    def _starts_near(self, b: int, m: int) -> bool:
        """Ball ``b`` sets off from rest within ``fit_frames`` of frame ``m``."""
        return any(abs(first - m) <= self.c.fit_frames for _, first, _ in self._starts.get(b, ()))

    def _travels(self, b: int, m: int) -> bool:
        """Ball ``b`` goes somewhere over the ``rest_s`` either side of frame ``m``: its sightings after ``m`` are
        a median of more than half ``start_clear_mm`` from the nearest sighting before (a ball merging with the
        one it rests against is read at the pair's middle in any share of the frames, each such reading next to
        an earlier one; a ball rolling at 40 mm/s is a median 5 mm beyond its last frame before)."""
        span = max(4, int(round(self.c.rest_s / self.dt)))
        halves = (self.p.xy[b, max(m - span, 0):m], self.p.xy[b, m:m + span + 1])
        halves = [h[~np.isnan(h[:, 0])] for h in halves]
        if not len(halves[0]) or not len(halves[1]):
            return True  # cannot tell: keep the contact
        nearest = np.linalg.norm(halves[1][:, None, :] - halves[0][None, :, :], axis=2).min(axis=1)
        return float(np.median(nearest)) > self.c.start_clear_mm / 2

    def _resting(self, b: int, m: int) -> bool:
        """Ball ``b`` stayed put (within ``rest_s``' worth of frames, noise aside) up to frame ``m``."""
        span = max(4, int(round(self.c.rest_s / self.dt)))
        block = self.p.xy[b, max(m - span, 0):m]
        block = block[~np.isnan(block[:, 0])]
        if len(block) < 3:
            return False
        return float(np.max(np.linalg.norm(block - block.mean(axis=0), axis=1))) <= self.c.start_clear_mm / 2

    def _sets_off(self, b: int, m: int) -> bool:
        """Ball ``b`` gets well clear of where it rested within eight frames of ``m``."""
        span = max(4, int(round(self.c.rest_s / self.dt)))
        rest = self.p.xy[b, max(m - span, 0):m]
        ahead = self.p.xy[b, m:m + 8]
        if (~np.isnan(rest[:, 0])).sum() == 0 or (~np.isnan(ahead[:, 0])).sum() == 0:
            return True  # cannot tell: keep the contact
        home = np.nanmean(rest, axis=0)
        return float(np.nanmax(np.linalg.norm(ahead - home, axis=1))) > 2 * self.c.start_clear_mm

    def _pushed_apart(self, fi: LineFit, ai: LineFit | None, fj: LineFit, aj: LineFit | None, tc: float) -> bool:
        """Whether a kiss too thin for the kink shows as two rolling balls' equal and opposite push: each ball's
        velocity changes by at least half the kink along the line of centres, away from the other, the two
        changes within a factor two of each other (equal masses take equal impulses). Noise and a ball's own
        curve (spin) change one path, or both, but not both apart along that line at once. (Three-cushion seed
        113: white 388 mm/s turned 11 degrees, the spot 160 mm/s turned 26; their fits change by 59 and 55 mm/s,
        under the 80 of the kink, 47 and 52 of it along the line of centres.)"""
        if ai is None or aj is None:
            return False
        # Both rolling into it: a ball at rest set off by a kiss is met by its start (``_met_passing``), timed
        # better than by any push.
        if min(np.linalg.norm(fi.velocity(tc)), np.linalg.norm(fj.velocity(tc))) < self.c.moving_mm_s:
            return False
        n = _line_of_centres(fi, fj, tc)
        push_i = float((ai.velocity(tc) - fi.velocity(tc)) @ n)
        push_j = -float((aj.velocity(tc) - fj.velocity(tc)) @ n)
        least = 0.5 * self.c.kink_mm_s
        return push_i >= least and push_j >= least and max(push_i, push_j) <= 2.0 * min(push_i, push_j)

    def _softly_pushed_apart(self, i: int, j: int, m: int, tc: float
                             ) -> tuple[tuple[LineFit, LineFit], tuple[LineFit, LineFit]] | None:
        """Whether a soft kiss between two slow balls, neither at rest before it, shows as their push apart over
        longer fits: each ball's velocity fitted over up to ``soft_frames`` frames before and after the contact (not
        across a cushion or a start) changes along the line of centres, away from the other, by at least
        ``soft_push_mm_s`` and ``soft_push_t`` standard errors of the change (from the fits' own residuals), the
        two within ``soft_push_ratio`` of each other. Four frames a side read a slow ball's velocity to 13 mm/s
        or so, too coarse for a kiss that changes it by 30-50 (bilhar seed 127: the cue at 76 mm/s into the 1
        creeping at 7, the 1 sent off at 45); ten read it to about 4. The two balls' fits (before, after) if so,
        else None."""
        if max(self.speed[i, m], self.speed[j, m]) > self.c.soft_mm_s:
            return None
        if self._starts_near(i, m) or self._starts_near(j, m):
            return None  # a ball set off from rest by a kiss is met by its start (``_met_passing``)
        k = self.c.soft_frames
        fits = []
        for b in (i, j):
            before = self._fit_window(b, m - k, m)
            after = self._fit_window(b, m + 1, m + 1 + k)
            if before is None or after is None:
                return None
            speed, err = float(np.linalg.norm(before[0].v)), before[1]
            if speed < max(self.c.soft_creep_mm_s, self.c.soft_push_t * err):
                return None  # at rest: a kiss that sets it off is its start's, or a dead stop's (``dead_stops``)
            fits.append((before, after))
        (fi, si), (ai, sai) = fits[0]
        (fj, sj), (aj, saj) = fits[1]
        n = _line_of_centres(fi, fj, tc)
        push_i = float((ai.velocity(tc) - fi.velocity(tc)) @ n)
        push_j = -float((aj.velocity(tc) - fj.velocity(tc)) @ n)
        for push, err in ((push_i, np.hypot(si, sai)), (push_j, np.hypot(sj, saj))):
            if push < max(self.c.soft_push_mm_s, self.c.soft_push_t * err):
                return None
        if max(push_i, push_j) > self.c.soft_push_ratio * min(push_i, push_j):
            return None
        return (fi, ai), (fj, aj)

    def _sets_off_as_reached(self, i: int, j: int, m: int, tc: float) -> bool:
        """Whether one of the pair, at rest, sets off within ``passing_frames`` after ``tc``, when the other, going
        faster than ``reached_pass_mm_s``, reached 2R of it. Sinuca seed 147: the cue ball at 224 mm/s kisses a
        resting red away at 33 mm/s; neither change of velocity is near the kink's 80, the red's onset is read 43 ms
        late, and the two blobs, merged for three frames, part with a kink of their own 39 ms late. The fits reach
        2R 4.5 ms early: that time. (Not where the onset comes first: the fits reached 2R late there, bilhar seeds
        120 and 232 by 18 and 17 ms, the onsets within 8; ``_met_passing`` times those.)"""
        for x, y in ((i, j), (j, i)):
            if not self._resting(x, m) or self.speed[y, m] < self.c.reached_pass_mm_s:
                continue
            if any(tc <= st[0] <= tc + self.c.passing_frames * self.dt for st in self._starts.get(x, ())):
                return True
        return False

    def _fit_window(self, b: int, lo: int, hi: int) -> tuple[LineFit, float] | None:
        """Ball ``b``'s straight fit over frames [lo, hi) cut short at any start from rest or cushion contact
        inside them (the frames on the other side of one are on another line), and the standard error (mm/s) of
        its velocity along any one direction, from its residuals; None with under ``soft_frames`` // 2 frames."""
        t, xy = self.p.t, self.p.xy[b]
        lo, hi = max(lo, 0), min(hi, len(t))
        if hi <= lo:
            return None
        breaks = list(self._bounces.get(b, ())) + [st[0] for st in self._starts.get(b, ())]
        for tb in breaks:
            if t[lo] < tb < t[hi - 1]:
                at = int(np.searchsorted(t, tb))
                if at <= (lo + hi) // 2:  # the window before a contact keeps its end, the one after its start
                    lo = max(lo, at)
                else:
                    hi = min(hi, at)
        if np.count_nonzero(~np.isnan(xy[lo:hi, 0])) < self.c.soft_frames // 2:
            return None
        return fit_with_error(t[lo:hi], xy[lo:hi])

    def _along_centres(self, fi: LineFit, ai: LineFit | None, fj: LineFit, aj: LineFit | None, tc: float) -> bool:
        """Whether either ball's change of velocity at ``tc`` lies along the line of centres (``kink_along_min``).
        Over 200 bilhar and 200 sinuca shots, of the 1183 kisses found that the truth has, 99 % had a cosine of
        0.89 or more and all but two 0.6 or more; of the 24 found that it has not, six were under 0.55."""
        n = _line_of_centres(fi, fj, tc)
        best = 0.0
        for before, after in ((fi, ai), (fj, aj)):
            if after is None:
                continue
            dv = after.velocity(tc) - before.velocity(tc)
            size = float(np.linalg.norm(dv))
            if size > 0:
                best = max(best, abs(float(dv @ n)) / size)
        return best >= self.c.kink_along_min

    def _kinked(self, before: LineFit | None, after: LineFit | None, tc: float) -> bool:
        if before is None or after is None:
            return False
        v0, v1 = before.velocity(tc), after.velocity(tc)
        change = float(np.linalg.norm(v1 - v0))
        return change >= max(self.c.kink_mm_s, self.c.kink_ratio * float(max(np.linalg.norm(v0),
                                                                              np.linalg.norm(v1))))

    # --- cushions -----------------------------------------------------------------------------------------------

    def cushions(self) -> list[Event]:
        xy = self.p.xy
        w, l = self.table.width, self.table.length
        speed = self.speed
        out: list[Event] = []
        for b, ball in enumerate(self.p.balls):
            x, y = xy[b, :, 0], xy[b, :, 1]
            for name, gap in (("left", x), ("right", w - x), ("bottom", y), ("top", l - y)):
                gap_of = _GAPS[name]
                last = -1  # the frame of this ball's last contact with this cushion
                # A slow ball's candidates and approach are read off the gap with each lone misread frame taken
                # out (rolling by a cushion, read 3 mm nearer for one frame, it has a "minimum" the fits kink
                # at); a fast one's minimum is one frame (the median would fill it in).
                # (The speed is the largest about the frame: a ball coming straight back off a cushion is
                # where it was two frames before, its speed from the frames either side near nothing.)
                near = np.max(np.stack([np.roll(speed[b], s) for s in (-2, -1, 0, 1, 2)]), axis=0)
                # How far off the nose the nearest frame may be: what the ball travels in most of a frame, at
                # that largest speed (at the minimum frame's own speed, a ball turned back there would have to
                # be seen within a few mm of the nose: at 2 m/s and 50 Hz it is up to 20 mm off it).
                reach = self.r + self.c.contact_slack_mm + near * self.dt * 0.6
                smooth = np.where(near < self.c.slow_mm_s, _median3(gap), gap)
                for m in _local_minima(smooth):
                    if not smooth[m] <= reach[m]:
                        continue
                    # A ball resting near a cushion and struck away from it never came in: the cushion is met
                    # only by a ball that approached it over the frames before. One still until the frame before
                    # (the cue's tip merging with it at the strike drags it a frame towards the rail, by up to
                    # 15 mm) met it only if it did not leave along a line through its resting point (a ball hit
                    # into the cushion it rests by comes off it along the mirrored line).
                    came = self._came_in(smooth, m, self.c.fit_frames)
                    # A ball read at the nose came in if it did over twice the frames (see ``touch_nose_mm``).
                    # One that came in only over those is timed by ``_touch_time`` alone: over so slow an
                    # approach the split fits of ``_cushion_time`` meet a frame or two early (sinuca seed 125:
                    # 27 ms, where the bend of one fit is 12 ms early).
                    touching = smooth[m] - self.r <= self.c.touch_nose_mm and speed[b, m] < self.c.slow_mm_s
                    crept = touching and self._came_in(smooth, m, 2 * self.c.fit_frames)
                    grazing = not (came or crept) and smooth[m] - self.r <= self.c.touch_nose_mm and \
                        speed[b, m] >= self.c.moving_mm_s
                    if not (came or crept or grazing):
                        continue
                    if self._resting(b, m - 1) and self._left_from_rest(b, m):
                        continue
                    if last >= 0:
                        # A ball rolling along the cushion it met, read a mm nearer or farther frame to frame,
                        # meets it again only once it has come off it.
                        since = smooth[last:m]
                        if not np.nanmax(since, initial=-np.inf) - smooth[m] > self.c.off_cushion_mm:
                            continue
                    tc = None
                    if came:
                        tc = self._cushion_time(b, gap, m, lambda p: gap_of(p, w, l))
                        if tc is None and speed[b, m] < self.c.slow_mm_s:
                            tc = self._cushion_time(b, gap, m, lambda p: gap_of(p, w, l), wide=True)
                    if tc is None and touching:
                        tc = self._touch_time(b, gap, m, name)
                    if tc is None and grazing:
                        tc = self._graze_time(b, gap, m)
                    if tc is not None:
                        out.append(Event(tc, EventType.CUSHION, ball=ball, cushion=name))
                        last = m
        return _dedupe(out, self.dt)

    def jaws(self, cushions: list[Event]) -> list[Event]:
        """A ball in a pocket's mouth, past the line of the cushion's nose, meets the jaw: its knuckle or the
        facing behind it, R from them, not from the line (the snooker red into the top-right pocket's knuckle,
        15 mm past the line, sinuca seeds 110 and 113; a pool ball rattling between a corner pocket's facings,
        bilhar seed 131). Reported on the jaw's cushion, as the rules count it. The distance to a point has a V at
        every pass, touching or not, so the contact is told by the path's own kink, timed where the fits before
        and after meet, there R (within the slack) from the jaw and heading into it."""
        out: list[Event] = []
        w, l = self.table.width, self.table.length
        k = self.c.fit_frames
        t, big_m = self.p.t, len(self.p.t)
        for a, z, name in _jaws(self.table):
            gap_of = _GAPS[name]
            for b, ball in enumerate(self.p.balls):
                xy = self.p.xy[b]
                dist = _to_segment(xy, a, z)
                reach = self.r + self.c.contact_slack_mm + self.speed[b] * self.dt * 0.6
                for m in _local_minima(dist):
                    if not dist[m] <= reach[m] or not gap_of(xy[m], w, l) < self.r:
                        continue  # not at the jaw, or still short of the nose line (the cushion's own test)
                    later = window(m + 1, m + 1 + k, big_m)
                    if np.count_nonzero(~np.isnan(xy[later, 0])) < k - 1:
                        continue  # gone down the pocket: its last sightings, sinking, are no path off the jaw
                    before = self._fit_since_start(b, window(m - k, m, big_m))
                    after = fit(t[later], xy[later])
                    if before is None or after is None:
                        continue
                    tc = _where_fits_meet(((before, after),), t[max(m - 2, 0)], t[min(m + 1, big_m - 1)])
                    at = before.at(np.array([tc]))
                    gap_now = float(_to_segment(at, a, z)[0])
                    towards = float(_to_segment(at + before.velocity(tc) * self.dt, a, z)[0]) < gap_now
                    near = abs(gap_now - self.r) <= self.c.contact_slack_mm
                    if not (towards and near and self._kinked(before, after, tc)):
                        continue
                    if any(e.ball == ball and e.cushion == name and abs(e.t - tc) < 2 * self.dt
                           for e in cushions + out):
                        continue  # the nose line's contact, found already
                    out.append(Event(tc, EventType.CUSHION, ball=ball, cushion=name))
        return out

    def _cushion_time(self, b: int, gap: np.ndarray, m: int, gap_of, wide: bool = False) -> float | None:
        """Where the incoming and outgoing fits of the distance to the cushion line meet (the incoming one from
        the ball's start on, when it set off over those frames: see ``_fit_since_start``).

        ``wide``: for a slow ball whose four frames a side showed no contact: one in at 40 mm/s and out at 10
        moves under a mm a frame by the nose, its noisy minimum a few frames off the contact, and four frames a
        side show no approach (carom seed 116). Then twice the frames, the split searched about the minimum.
        (Not always: over eight frames a ball's curve and slowing move the meeting point off the contact.)"""
        t, k = self.p.t, self.c.fit_frames
        big_m = len(t)
        best = None
        # The minimum frame belongs to one side of the contact: try both and keep the better pair of fits.
        splits = tuple(range(m - 3, m + 4)) if wide else (m, m + 1)
        if wide:
            k = 2 * k
        for split in splits:
            inc, out = window(split - k, split, big_m), window(split, split + k, big_m)
            starts = [s for s in self._starts.get(b, ()) if inc.start <= s[1] < inc.stop]
            if starts:
                t_on, first, rest = starts[-1]
                t_in = np.concatenate([[t_on], t[first:inc.stop]])
                g_in = np.concatenate([[gap_of(rest)], gap[first:inc.stop]])
                inc = slice(first, inc.stop)
            else:
                t_in, g_in = t[inc], gap[inc]
            # Two sightings a side at least: one alone "fits" a ball standing still, and a ball seen once past the
            # nose line before it went down a pocket read as one that came in and stopped at the cushion (bilhar,
            # 200 shots: 6 such cushions, none in the truth).
            if np.count_nonzero(~np.isnan(g_in)) < 2 or np.count_nonzero(~np.isnan(gap[out])) < 2:
                continue
            fin = fit(t_in, np.stack([g_in, np.zeros(len(g_in))], axis=1))
            fout = fit(t[out], np.stack([gap[out], np.zeros(len(gap[out]))], axis=1))
            if fin is None or fout is None:
                continue
            v_in, v_out = float(fin.v[0]), float(fout.v[0])
            bounced = v_in < -self.c.kink_mm_s * 0.5 and v_out > 0 and v_out - v_in >= self.c.kink_mm_s
            slow = v_in < -self.c.slow_in_mm_s and v_out > -self.c.slow_in_mm_s * 0.2 and \
                v_out - v_in >= self.c.kink_mm_s * 0.5
            if not (bounced or slow) or v_in >= v_out:
                continue
            # fin.p0 + v_in (t - fin.t0) == fout.p0 + v_out (t - fout.t0)
            tc = (float(fout.p0[0]) - float(fin.p0[0]) + v_in * fin.t0 - v_out * fout.t0) / (v_in - v_out)
            g = float(fin.p0[0]) + v_in * (tc - fin.t0)
            lo, hi = t[max(split - 2, 0)], t[min(split + 1, big_m - 1)]
            if not (lo <= tc <= hi) or abs(g - self.r) > self.c.contact_slack_mm + 2.0:
                continue
            if not bounced and (abs(g - self.r) > self.c.nose_mm or gap[m] - self.r > self.c.nose_mm):
                continue
            residual = _residual(t_in, g_in, fin) + _residual(t[out], gap[out], fout)
            if best is None or residual < best[0]:
                best = (residual, tc)
        return None if best is None else best[1]

    def _came_in(self, smooth: np.ndarray, m: int, frames: int) -> bool:
        """Whether the (smoothed) gap fell by more than ``rest_mm`` to frame ``m`` over the ``frames`` before it."""
        came = smooth[max(m - frames, 0):m]
        came = came[~np.isnan(came)]
        return bool(len(came)) and float(np.max(came)) - smooth[m] > self.c.rest_mm

    def _touch_time(self, b: int, gap: np.ndarray, m: int, name: str) -> float | None:
        """A slow ball's contact with the cushion at whose nose it is read (see ``touch_nose_mm``): the bend of
        one fit of the gap over twice ``fit_frames`` each side, two lines meeting at the contact (the fits of
        ``_cushion_time`` each side, apart, take the noise of four frames at under a mm a frame for a bend, and
        meet where they will). The incoming line is bent by the rolling resistance along the normal: in at
        40 mm/s, a ball slows by 13 mm/s over eight frames, and a straight fit over them meets the outgoing one
        a frame or two early. None unless it meets the nose at ``touch_in_mm_s`` or more, bends there and does
        not go on into the cushion."""
        t, k = self.p.t, 2 * self.c.fit_frames
        big_m = len(t)
        frames = self._frames_about(b, gap, m, max(m - k, 0), min(m + k, big_m))
        if np.count_nonzero(frames < m) < self.c.fit_frames or np.count_nonzero(frames >= m) < self.c.fit_frames:
            return None
        incoming = frames[frames < m]
        way = self.p.xy[b, incoming[-1]] - self.p.xy[b, incoming[0]]
        along = float(np.linalg.norm(way))
        decel = self.c.roll_decel_mm_s2 * (abs(float(way[_OUTWARD[name][0]])) / along if along > 0 else 1.0)
        tcs = np.linspace(t[max(m - self.c.fit_frames, 0)], t[min(m + 2, big_m - 1)], 97)
        _, tc, (g_c, v_in, v_out), _ = _bent_fit(t[frames], gap[frames], tcs, decel)
        if not (v_in < -self.c.touch_in_mm_s and v_out > -self.c.slow_in_mm_s * 0.2):
            return None
        if not -self.c.nose_mm <= g_c - self.r <= self.c.touch_nose_mm:
            return None
        return tc

    def _frames_about(self, b: int, gap: np.ndarray, m: int, lo: int, hi: int) -> np.ndarray:
        """The frames in [lo, hi) where ball ``b``'s gap was read, not back over a start from rest before frame
        ``m`` (the resting frames are not on the line it came in along)."""
        firsts = [s[1] for s in self._starts.get(b, ()) if lo < s[1] <= m]
        if firsts:
            lo = max(firsts)
        frames = np.arange(lo, hi)
        return frames[~np.isnan(gap[lo:hi])]

    def _graze_time(self, b: int, gap: np.ndarray, m: int) -> float | None:
        """A ball running along the cushion at whose nose it is read (see ``graze_frames``): the bend of one fit
        of the gap over ``graze_frames`` each side, two lines meeting at the contact, searched within two frames
        of the nearest one. None unless the normal speed turns from in to out there, each side plainly so, at the
        nose."""
        t, k = self.p.t, self.c.graze_frames
        big_m = len(t)
        frames = self._frames_about(b, gap, m, max(m - k, 0), min(m + k + 1, big_m))
        if np.count_nonzero(frames < m) < k // 2 or np.count_nonzero(frames > m) < k // 2:
            return None
        tcs = np.linspace(t[max(m - 2, 0)], t[min(m + 2, big_m - 1)], 33)
        residual, tc, (g_c, v_in, v_out), a = _bent_fit(t[frames], gap[frames], tcs)
        noise = residual / max(len(frames) - 3, 1)
        se = np.sqrt(np.maximum(np.diag(np.linalg.pinv(a.T @ a)) * noise, 1e-12))
        if not (v_in <= -self.c.graze_mm_s and v_out >= self.c.graze_mm_s and
                -v_in >= self.c.graze_t * se[1] and v_out >= self.c.graze_t * se[2]):
            return None
        if not -self.c.nose_mm <= g_c - self.r <= self.c.touch_nose_mm:
            return None
        return tc

    # --- setting off from rest ----------------------------------------------------------------------------------

    def onsets(self) -> list[tuple[float, str]]:
        """(time, ball) of every start of motion from rest, the time carried back to the resting point."""
        t, xy = self.p.t, self.p.xy
        out = []
        big_m = len(t)
        for b, ball in enumerate(self.p.balls):
            off_by = self._off_rest_mm(b)
            # A ball already rolling when the window opens did not set off in it (it is moving at the strike).
            k = 0 if self._still_from(b, _first_seen(self.seen[b], 0) or 0) else self._next_rest(b, 0, brief=True)
            # Where the ball rested before its reading shifted by a few mm without it setting off (an arm over
            # it, a shadow): the ball is still there, so its reading going back there is no start. (Carom seed
            # 215: the spot read 8 mm off while the player's arm hung over it for half a second, then back.)
            shifted_from: np.ndarray | None = None
            while k < big_m:
                rest_idx = _first_seen(self.seen[b], k)
                if rest_idx is None:
                    break
                rest = xy[b, rest_idx]
                moved = np.linalg.norm(xy[b, rest_idx:] - rest, axis=1) > off_by
                hits = np.nonzero(moved)[0]
                if not len(hits):
                    break
                first = rest_idx + int(hits[0])
                # One frame misread (a glint, a blob merged with a passing one's), back at the resting point in the
                # next ones: no start (sinuca seed 257: the brown read 9.8 mm off for one frame, a touch).
                # (Back where it was read just before: a ball coming to rest creeps on a mm or two from the first
                # frame taken for its resting point.)
                next_few = xy[b, window(first + 1, first + 4, big_m)]
                next_few = next_few[~np.isnan(next_few[:, 0])]
                # (Its last sightings before, not its last frames: a red unseen for five frames under the cue's
                # arm, read 77 mm off for one frame (another blob taken for it) and back, had none in those and
                # was the ball struck, sinuca seed 236.)
                just_before = xy[b, _last_sightings(self.seen[b], first, 4, 12)]
                if len(next_few) >= 2 and len(just_before) and float(np.median(np.linalg.norm(
                        next_few - just_before.mean(axis=0), axis=1))) <= off_by / 2:
                    k = first + 1
                    continue
                # A real start goes somewhere: the ball must get well clear of its resting point within a few
                # frames. A ball creeping to a stop, or a detection shifting by a couple of mm, is not a start.
                ahead = window(first, first + 8, big_m)
                clear = np.nanmax(np.linalg.norm(xy[b, ahead] - rest, axis=1), initial=0.0)
                back_home = shifted_from is not None and self._back_at(b, ahead, shifted_from)
                if back_home or not clear > self.c.start_clear_mm and not self._creeps_off(b, first, rest):
                    if shifted_from is None:
                        shifted_from = rest
                    k = first + 1
                    continue
                shifted_from = None
                # Refine the resting point with the still frames just before the move. A slow ball (a soft kiss,
                # under 2 mm a frame) was already going for a frame or more before it was 2 mm off: its start
                # may lie that many frames before ``first``, and those frames are not still.
                back = 0
                for _ in range(2):
                    still = xy[b, window(first - back - 4, first - back, big_m)]
                    if (~np.isnan(still[:, 0])).any():
                        rest = np.nanmean(still, axis=0)
                    line = self._onset_line(b, first, rest)
                    if line is None or line[0] <= 0:
                        break
                    back = min(self.c.slow_start_frames,
                               int(np.ceil(self.c.rest_mm / (line[0] * self.dt))) - 1)
                    back = self._moving_back(b, first, rest, back)
                    if back <= 0:
                        break
                if line is not None:
                    slope, intercept = line
                    t_on = -intercept / slope if slope > 0 else t[first - 1]
                    t_on = float(np.clip(t_on, t[max(first - 1 - max(back, 0), 0)], t[first]))
                    out.append((t_on, ball))
                    self._starts.setdefault(b, []).append((t_on, first, rest))
                    far = np.nonzero(np.linalg.norm(xy[b, ahead] - rest, axis=1) > self.c.start_clear_mm)[0]
                    self._clear_t[(ball, t_on)] = float(t[ahead][far[0]]) if len(far) else t_on
                k = self._next_rest(b, first)
        return out

    def _off_rest_mm(self, b: int) -> float:
        """How far ball ``b``'s reading must be from its resting point to have left it: ``rest_mm``, or more for
        a ball read with more noise than that allows for (snooker's green on green cloth, its fit about a mm off
        its place, seen every other frame: sinuca seed 169, read 2-3 mm off as the cue ball came, touched before
        it was kissed). Its noise is the median distance of its readings from their own median over runs of ten
        sightings in which it kept still (all within 6 mm: a rolling ball's run is longer)."""
        seen = np.nonzero(self.seen[b])[0]
        runs = len(seen) // 10
        if runs == 0:
            return self.c.rest_mm
        blocks = self.p.xy[b, seen[:runs * 10]].reshape(runs, 10, 2)
        still = np.linalg.norm(blocks - np.median(blocks, axis=1, keepdims=True), axis=2).max(axis=1) < 6.0
        if not still.any():
            return self.c.rest_mm
        # Off a straight line through each run (a ball rolling slowly to a stop moves a few mm over ten frames).
        tt = self.p.t[seen[:runs * 10]].reshape(runs, 10)[still]
        tt = tt - tt.mean(axis=1, keepdims=True)
        pts = blocks[still] - blocks[still].mean(axis=1, keepdims=True)
        slope = (tt[..., None] * pts).sum(axis=1) / np.maximum((tt * tt).sum(axis=1), 1e-12)[:, None]
        off = np.linalg.norm(pts - tt[..., None] * slope[:, None, :], axis=2)
        return max(self.c.rest_mm, self.c.rest_noise_factor * float(np.median(off)))

    def _back_at(self, b: int, frames: slice, point: np.ndarray) -> bool:
        """Whether the ball reads back at ``point`` over ``frames`` (half of them within ``rest_mm`` of it)."""
        d = np.linalg.norm(self.p.xy[b, frames] - point, axis=1)
        d = d[~np.isnan(d)]
        return bool(len(d)) and float(np.median(d)) <= self.c.rest_mm

    def _moving_back(self, b: int, first: int, rest: np.ndarray, back: int) -> int:
        """How many of the ``back`` frames before ``first`` the ball was already on its way: off its resting point
        the way it then went. A ball whose blob merges with an approaching one's is read a mm or two towards it
        before the kiss, against the way the kiss then sends it: those frames are not its start."""
        way = self._leaving(b, first, rest) if back > 0 else None
        if way is None:
            return 0
        xy = self.p.xy[b]
        n = 0
        for k in range(first - 1, max(first - 1 - back, -1), -1):
            off = xy[k] - rest
            # Over ``on_way_mm`` along the way: a frame read at the resting point itself is at rest (a ball held
            # by the detector reads there exactly, and an offset of nought was "on its way": sinuca seed 173's
            # red set off four frames before the cue ball reached it, and read as touched).
            if np.isnan(off[0]) or float(off @ way) <= max(0.5 * float(np.linalg.norm(off)), self.c.on_way_mm):
                break
            n += 1
        return n

    def _creeps_off(self, b: int, first: int, rest: np.ndarray) -> bool:
        """A ball kissed softly (the cue ball dying onto it at a few cm/s) creeps off, clear of its resting point
        only after many frames: it set off if it had rested there a while before, went faster after than before
        (a ball crawling to a stop, a few mm a second, slows down), and gets clear within ``creep_s`` and is
        still clear at its end (a misread frame, a merging blob's drag, comes back)."""
        xy, big_m = self.p.xy[b], len(self.p.t)
        n_rest = int(np.ceil(self.c.rest_s / self.dt))
        before = xy[window(first - n_rest, first, big_m)]
        before = before[~np.isnan(before[:, 0])]
        if len(before) < n_rest // 2 or np.max(np.linalg.norm(before - rest, axis=1)) > self.c.rest_mm:
            return False
        soon = xy[window(first, first + n_rest, big_m)]
        soon = soon[~np.isnan(soon[:, 0])]
        # How far it crawled while resting, over the frames before the last few (there the blob of a ball coming
        # to kiss it merges with it and drags its reading a mm towards it: bilhar seed 124's 12, 1.3 mm).
        early = before[:max(len(before) - self.c.fit_frames, 2)]
        crawled = float(np.linalg.norm(early[-1] - early[0]))
        if not len(soon) or float(np.linalg.norm(soon[-1] - before[-1])) < 3.0 * crawled + self.c.rest_mm:
            return False
        after = xy[window(first, first + int(np.ceil(self.c.creep_s / self.dt)), big_m)]
        after = after[~np.isnan(after[:, 0])]
        off = np.linalg.norm(after - rest, axis=1)
        if not (len(off) >= 4 and np.min(off[-3:]) > self.c.creep_clear_mm):
            return False
        # A creeping ball goes on away from where it rested: one read back there before it is clear had not set
        # off (sinuca seed 151: the green, read 2-3 mm off while the cue ball passed 10-25 mm from it, back at
        # its place 0.2 s later, then really struck; taken for a creep, it was touched before it was kissed).
        home = np.median(before, axis=0)
        to_clear = np.linalg.norm(after - home, axis=1)
        clear_at = int(np.argmax(to_clear > self.c.creep_clear_mm))
        if np.any(to_clear[1:clear_at] <= self.c.rest_mm / 2):
            return False
        if np.min(off[-3:]) > self.c.start_clear_mm:
            return True
        # Nudged only a few mm: a start only with another ball at it then (what else moves a ball so little is
        # a reading shifted for a while, and a start no contact explains would be a strike or a touch).
        near = window(first - n_rest, first + self.c.fit_frames, big_m)  # it is 2 mm off well after the kiss
        gaps = np.linalg.norm(self.p.xy[:, near] - rest, axis=2)
        gaps[b] = np.inf
        return bool(np.nanmin(gaps, initial=np.inf) <= 2 * self.r + self.c.passing_mm)

    def _onset_line(self, b: int, first: int, rest: np.ndarray) -> tuple[float, float] | None:
        """(slope, intercept) of the distance from the resting point over the first moving frames: as many of
        the first ``fit_frames`` as lie on one line (within 2 mm); a ball struck straight into another a frame or
        two away stops or turns within them, and a line through those frames would start it a frame early."""
        t, big_m = self.p.t, len(self.p.t)
        for n in range(self.c.fit_frames, 1, -1):
            span = window(first, first + n, big_m)
            s = np.linalg.norm(self.p.xy[b, span] - rest, axis=1)
            ok = ~np.isnan(s)
            if ok.sum() < 2:
                continue
            slope, intercept = np.polyfit(t[span][ok], s[ok], 1)
            if ok.sum() == 2 or np.max(np.abs(slope * t[span][ok] + intercept - s[ok])) <= 2.0:
                return float(slope), float(intercept)
        return None

    def _still_from(self, b: int, k: int) -> bool:
        block = self.p.xy[b, k:k + 4]
        block = block[~np.isnan(block[:, 0])]
        return len(block) < 2 or float(np.max(np.linalg.norm(block - block[0], axis=1))) <= self.c.rest_mm * 0.5

    def _next_rest(self, b: int, start: int, brief: bool = False) -> int:
        """The first frame after ``start`` from which the ball stays still for ``rest_s`` (a ball rolling slowly
        to a stop pauses for a frame or two in the noise: that is not a rest it could set off from again).
        ``brief``: at the window's opening (a cue sliding in may hide the ball), four still frames will do."""
        xy, t = self.p.xy[b], self.p.t
        big_m = len(t)
        span = 4 if brief else max(4, int(np.ceil(self.c.rest_s / self.dt)) + 1)
        for k in range(start + 1, big_m - span + 1):
            block = xy[k:k + span]
            if np.isnan(block[:, 0]).any():
                continue
            if np.max(np.linalg.norm(block - block[0], axis=1)) <= self.c.rest_mm:
                return k
        return big_m

    def moving_at(self, t_strike: float, exclude: str | None) -> tuple[str, ...]:
        """The balls moving when the cue struck: faster than ``moving_mm_s`` from frame to frame, and along the
        line fitted through the frames of the ``rest_s`` before (a poorly seen ball at rest jitters a few mm
        from frame to frame, which is that speed; the line through its positions does not move)."""
        t = self.p.t
        k = min(max(int(np.searchsorted(t, t_strike)), 0), len(t) - 1)
        span = window(k - max(4, int(round(self.c.rest_s / self.dt))), k, len(t))
        out = []
        for b, ball in enumerate(self.p.balls):
            if ball == exclude or not self.speed[b, max(k - 1, 0)] > self.c.moving_mm_s:
                continue
            f = fit(t[span], self.p.xy[b, span])
            if f is None or float(np.linalg.norm(f.v)) > self.c.moving_mm_s:
                out.append(ball)
        return tuple(out)

    # --- pins ---------------------------------------------------------------------------------------------------

    def pin_downs(self) -> list[Event]:
        if self.pins is None:
            return []
        t, xy = self.p.t, self.p.xy
        big_m = len(t)
        reach = self.r + self.table.pin_base_diameter / 2
        out: list[Event] = []
        for k, pin in enumerate(self.pins.pins):
            down = self.pins.down[k]
            if not len(down) or down[0]:
                continue  # down when the window opened: it fell before this shot
            kd = _first_run(down, self.c.pin_down_frames)
            if kd is None:
                continue
            lo = max(kd - self.c.pin_search_frames, 0)
            spot = self.pins.spots[k]
            best = None
            for b, ball in enumerate(self.p.balls):
                tc = _entry_time(t, xy[b], spot, reach, lo, min(kd + 1, big_m - 1), self.c.contact_slack_mm)
                if tc is not None and (best is None or tc > best):
                    best = tc  # the last ball to reach the pin before it was seen down knocked it
            if best is not None:
                out.append(Event(best, EventType.PIN_DOWN, pin=pin, by="ball"))
            else:
                out.append(Event(float(0.5 * (t[kd - 1] + t[kd])), EventType.PIN_DOWN, pin=pin, by="other"))
        return out

    # --- pockets ------------------------------------------------------------------------------------------------

    def _into_pockets(self, paths: Paths) -> Paths:
        """The paths without what is seen of a ball once it has gone into a pocket (``potted`` gets its event)."""
        pockets = self.table.pockets
        if not pockets:
            return paths
        drops = np.array([pk.drop for pk in pockets], dtype=np.float64)
        radius = np.array([pk.mouth / 2 for pk in pockets])
        holes = np.array([pk.is_hole for pk in pockets])
        xy = paths.xy.copy()
        t = paths.t
        big_m = len(t)
        d = np.linalg.norm(xy[:, :, None, :] - drops[None, None], axis=3)  # (B, M, K), NaN unseen
        # A ball half over the rim is seen by its part still on the cloth: its centre reads a few mm outwards.
        zone_r = radius + self.c.pocket_rim_mm
        inside = np.nan_to_num(d, nan=np.inf) <= zone_r[None, None]
        zone = np.where(inside.any(axis=2), np.argmax(inside, axis=2), -1)
        for b in range(len(paths.balls)):
            seen = np.nonzero(~np.isnan(xy[b, :, 0]))[0]
            if not len(seen):
                continue
            out = seen[zone[b, seen] < 0]
            last_out = int(out[-1]) if len(out) else -1
            run = seen[seen > last_out]
            if not len(run):
                continue
            k_in = int(run[0])
            z = int(zone[b, k_in])
            if not holes[z]:
                continue  # a pocket's channel: the ball may still meet a jaw in its mouth (see vanished)
            gone_at_end = big_m - 1 - int(run[-1]) >= self.c.vanish_frames
            # Still seen at the end: potted only if its centre is over the hole itself (sunk, seen in the net);
            # one within the rim's allowance rests on the cloth at the hole's edge (Chapó seed 123: the 2 crept
            # into the corner and stopped 55 mm from the drop point of a 52.5 mm hole).
            last_z = int(zone[b, run[-1]])
            in_hole = bool(holes[last_z]) and float(d[b, run[-1], last_z]) <= radius[last_z]
            if not (gone_at_end or in_hole):
                continue  # at rest in a pocket's jaws or on a hole's rim, on the cloth: not potted
            tp = float(t[k_in])
            if last_out >= 0:  # when the centre crossed into the mouth, between the two sightings
                d0, d1 = d[b, last_out, z], d[b, k_in, z]
                w = float(np.clip((d0 - radius[z]) / (d0 - d1), 0.0, 1.0)) if d0 > d1 else 1.0
                tp = float(t[last_out] + w * (t[k_in] - t[last_out]))
            self.potted[b] = Event(tp, EventType.POCKET, ball=paths.balls[b], pocket=pockets[z].name)
            xy[b, k_in:] = np.nan
        return Paths(paths.balls, t, xy) if self.potted else paths

    # --- vanishing: pockets, off the table, hidden --------------------------------------------------------------

    def vanished(self) -> tuple[list[Event], tuple[str, ...]]:
        t, xy = self.p.t, self.p.xy
        big_m = len(t)
        events: list[Event] = []
        hidden: list[str] = []
        for b, ball in enumerate(self.p.balls):
            seen = np.nonzero(self.seen[b])[0]
            if b in self.potted:
                events.append(self.potted[b])
                if len(seen) and np.any(~self.seen[b, seen[0]:seen[-1] + 1]):
                    hidden.append(ball)
                continue
            if not len(seen):
                continue
            last = int(seen[-1])
            if np.any(~self.seen[b, seen[0]:last + 1]):
                hidden.append(ball)
            if big_m - 1 - last < self.c.vanish_frames:
                continue
            # Its pace from its last few sightings, not its last few frames: a fast ball seen one frame in four
            # as it ran for a pocket (bilhar seed 292's blue) had one sighting in them, and no pace at all.
            tail = _last_sightings(self.seen[b], last + 1, self.c.fit_frames, 3 * self.c.fit_frames)
            f = fit(t[tail], xy[b, tail])
            p_last = xy[b, last]
            v = f.v if f is not None else np.zeros(2)
            event = self._gone_event(ball, p_last, v, float(t[last]))
            if event is not None:
                events.append(event)
            elif ball not in hidden:
                hidden.append(ball)
        return events, tuple(hidden)

    def _gone_event(self, ball: str, p: np.ndarray, v: np.ndarray, t_last: float) -> Event | None:
        reach = float(np.linalg.norm(v)) * self.dt * 1.5 + self.r
        for pocket in self.table.pockets:
            drop = np.asarray(pocket.drop)
            if np.linalg.norm(p - drop) <= pocket.mouth + reach + self.r and self._can_fall(pocket, p, v):
                # Potted when the centre passes the drop point's distance: carried forward from the last frame.
                speed = float(np.linalg.norm(v))
                tp = t_last + (max(np.linalg.norm(p - drop) - self.r, 0.0) / speed if speed > 1 else 0.0)
                return Event(min(tp, t_last + 3 * self.dt), EventType.POCKET, ball=ball, pocket=pocket.name)
        w, l = self.table.width, self.table.length
        gaps = {"left": (p[0], -v[0]), "right": (w - p[0], v[0]), "bottom": (p[1], -v[1]), "top": (l - p[1], v[1])}
        for gap, outward in gaps.values():
            if gap <= reach + self.c.contact_slack_mm and outward > 0:
                return Event(t_last + self.dt / 2, EventType.OFF_TABLE, ball=ball)
        return None

    def _can_fall(self, pocket, p: np.ndarray, v: np.ndarray) -> bool:
        """Whether a ball last seen at ``p`` going at ``v`` could still have reached the point where it falls: a
        channel's drop line (across its axis through the drop point) or a hole's rim. A blue resting 140 mm from a
        corner's drop point, or at rest in its channel 40 mm short of the line, and read only now and then against
        the pocket's dark (bilhar seeds 240 and 199), is hidden, not potted."""
        drop = np.asarray(pocket.drop, dtype=np.float64)
        if pocket.is_hole:
            short = float(np.linalg.norm(p - drop)) - pocket.mouth / 2
        else:
            short = float(np.dot(drop - p, pocket.axis(self.table.width, self.table.length)))
        speed = float(np.linalg.norm(v))
        return short <= speed * speed / (2 * self.c.roll_decel_mm_s2) + self.c.pocket_reach_slack_mm

    # --- helpers ------------------------------------------------------------------------------------------------


# Each cushion's distance from a point (x, y) on a table of width w and length l.
_GAPS = {"left": lambda p, w, l: float(p[0]), "right": lambda p, w, l: float(w - p[0]),
         "bottom": lambda p, w, l: float(p[1]), "top": lambda p, w, l: float(l - p[1])}


def _jaws(table: TableSpec) -> list[tuple[np.ndarray, np.ndarray, str]]:
    """Every pocket's jaws as segments (a, b) with the cushion each belongs to: the knuckle where the cushion's
    nose ends (a) and, for a channel pocket (snooker, pool), its facing running from there along the pocket's
    axis as deep as the drop point (b; a Chapó tronera's jaw is the knuckle alone, b = a)."""
    w, l = table.width, table.length
    out = []
    for pocket in table.pockets:
        jaws = np.asarray(pocket.jaws, dtype=np.float64)
        drop = np.asarray(pocket.drop, dtype=np.float64)
        axis = np.asarray(pocket.axis(w, l), dtype=np.float64)
        for a in jaws:
            x, y = a
            name = ("left" if abs(x) < 1e-6 else "right" if abs(x - w) < 1e-6 else
                    "bottom" if abs(y) < 1e-6 else "top" if abs(y - l) < 1e-6 else None)
            if name is None:
                continue
            depth = 0.0 if pocket.is_hole else max(float((drop - a) @ axis), 0.0)
            out.append((a, a + axis * depth, name))
    return out


def _where_fits_meet(fits: tuple[tuple[LineFit, LineFit], ...], t0: float, t1: float) -> float:
    """The time in [t0, t1] where each ball's fit before a contact comes nearest its fit after (summed over the
    balls): its kink, which a constant error in the positions does not move."""
    ts = np.linspace(t0, t1, 241)
    bend = sum(np.sum((before.at(ts) - after.at(ts)) ** 2, axis=1) for before, after in fits)
    return float(ts[int(np.argmin(bend))])


def _line_of_centres(fi: LineFit, fj: LineFit, tc: float) -> np.ndarray:
    """The unit vector from ball j's fitted centre to ball i's at ``tc``."""
    n = fi.at(np.array([tc]))[0] - fj.at(np.array([tc]))[0]
    return n / max(float(np.linalg.norm(n)), 1e-9)


def _to_segment(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distances (M,) from points ``p`` (M, 2) to the segment a-b (a point when a == b); NaN rows stay NaN."""
    d = b - a
    length2 = float(d @ d)
    u = np.zeros(len(p)) if length2 < 1e-12 else np.clip((p - a) @ d / length2, 0.0, 1.0)
    return np.linalg.norm(p - (a + u[:, None] * d), axis=1)


# Each cushion's outward direction: (axis, sign).
_OUTWARD = {"left": (0, -1), "right": (0, 1), "bottom": (1, -1), "top": (1, 1)}


def _speeds(paths: Paths) -> np.ndarray:
    """(B, M) speed in mm/s from neighbouring frames (0 where unknown)."""
    xy, t = paths.xy, paths.t
    v = np.zeros(xy.shape[:2])
    if len(t) > 2:
        v[:, 1:-1] = np.linalg.norm(xy[:, 2:] - xy[:, :-2], axis=2) / (t[2:] - t[:-2])
        v[:, 0], v[:, -1] = v[:, 1], v[:, -2]
    return np.nan_to_num(v)


def _despiked(paths: Paths, spike_mm: float, ends_mm: float, max_frames: int) -> Paths:
    """The paths without the short runs of readings that are not their ball: up to ``max_frames`` frames read over
    ``spike_mm`` from the midpoint of the frames either side of the run, which lie within ``ends_mm`` of each
    other. No ball goes 8 mm away and comes back within a few frames (a ball at rest struck is 16 mm further on
    the frame after). A resting ball's track takes the one detection a ball passing 1-3 mm from it makes of the
    two while the other is unseen, half way between them: sinuca seed 183's blue, read 20 mm off in three lone
    frames of six as the black went by, three kisses; three-cushion seed 165's red in a corner, 29 mm off for five
    frames as the white crawled up to it, touched (a foul) before it was kissed."""
    xy = paths.xy
    big_m = xy.shape[1]
    out = None
    # Five frames a side (NaN where there are none), so that the frames either side of a run can be told still.
    side_n = 5
    padded = np.pad(xy, ((0, 0), (side_n - 1, side_n - 1), (0, 0)), constant_values=np.nan)
    for run in range(1, max_frames + 1):
        if big_m < run + 2:
            break
        before, after = xy[:, :big_m - run - 1], xy[:, run + 1:]
        mid = 0.5 * (before + after)
        n = big_m - run - 1
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN sides: not still
            ends = np.linalg.norm(before - after, axis=2) <= ends_mm  # (B, M - run - 1), False where unseen
            # ... and the ball still on both sides, most of five frames each within ``ends_mm`` of there, as a
            # resting ball is: one struck into another that rebounds off a cushion into it comes back by where it
            # was and goes on (three-cushion's spot, a test here), one rattling in a corner's jaws passes the same
            # point every few frames (sinuca seed 299's yellow).
            sides = [padded[:, j:j + n] for j in range(side_n)] + \
                [padded[:, run + side_n + j:run + side_n + j + n] for j in range(side_n)]
            for side in (sides[:side_n], sides[side_n:]):
                spread = np.nanmedian(np.stack([np.linalg.norm(q - mid, axis=2) for q in side]), axis=0)
                ends &= spread <= ends_mm
            off = np.ones_like(ends)
            seen_in = np.zeros_like(ends)
            for k in range(1, run + 1):  # every reading in the run far off (unseen ones allowed), one at least
                inside = xy[:, k:big_m - run - 1 + k]
                d = np.linalg.norm(inside - mid, axis=2)
                off &= np.isnan(d) | (d > spike_mm)
                seen_in |= ~np.isnan(d)
        spike = ends & off & seen_in
        if not spike.any():
            continue
        out = xy.copy() if out is None else out
        for b, k in zip(*np.nonzero(spike)):
            out[b, k + 1:k + 1 + run] = np.nan
    return paths if out is None else Paths(paths.balls, paths.t, out)


def _median3(d: np.ndarray) -> np.ndarray:
    """Each sample the median of itself and its two neighbours (NaN neighbours ignored; the ends kept)."""
    if len(d) < 3:
        return d.copy()
    stack = np.stack([d[:-2], d[1:-1], d[2:]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all three unseen: stays NaN
        mid = np.nanmedian(stack, axis=0)
    out = d.copy()
    out[1:-1] = np.where(np.isnan(d[1:-1]), np.nan, mid)
    return out


def _local_minima(d: np.ndarray) -> list[int]:
    """Indices of local minima of a sampled distance (plateaus give their first frame; NaN never a minimum)."""
    padded = np.concatenate([[np.inf], d, [np.inf]])
    padded = np.where(np.isnan(padded), np.inf, padded)  # an unseen neighbour does not stop a minimum
    with np.errstate(invalid="ignore"):
        minimum = (d < padded[:-2]) & (d <= padded[2:])  # NaN compares False: never a minimum
    return np.nonzero(minimum)[0].tolist()


def _bridged(xy: np.ndarray, max_gap: int) -> np.ndarray:
    """(B, M, 2) paths with each run of at most ``max_gap`` unseen frames between two sightings filled in
    linearly (frame-index time: the gaps are short)."""
    out = xy.copy()
    seen = ~np.isnan(xy[..., 0])
    for b in range(xy.shape[0]):
        idx = np.nonzero(seen[b])[0]
        if len(idx) < 2:
            continue
        gaps = np.nonzero((np.diff(idx) > 1) & (np.diff(idx) <= max_gap + 1))[0]
        for g in gaps:
            a, c = idx[g], idx[g + 1]
            w = ((np.arange(a + 1, c) - a) / (c - a))[:, None]
            out[b, a + 1:c] = xy[b, a] + w * (xy[b, c] - xy[b, a])
    return out


def _first_run(flags: np.ndarray, n: int) -> int | None:
    """The first index from which ``flags`` hold ``n`` times running (or to the end)."""
    m = len(flags)
    for k in np.nonzero(flags)[0]:
        if flags[k:min(k + n, m)].all():
            return int(k)
    return None


def _entry_time(t: np.ndarray, xy: np.ndarray, spot: np.ndarray, reach: float, lo: int, hi: int,
                slack: float) -> float | None:
    """When a ball's path (line fits over the frames either side) first brings its centre within ``reach`` of
    ``spot`` between frames ``lo`` and ``hi``; a pass that only grazes (within ``slack`` beyond) counts at its
    closest point. None when the ball stays clear."""
    d = np.linalg.norm(xy[lo:hi + 1] - spot, axis=1)
    if not (~np.isnan(d)).any() or np.nanmin(d) > reach + slack + 1e-9:
        return None
    for k in range(lo, hi):
        f = fit(t[max(k - 1, 0):k + 3], xy[max(k - 1, 0):k + 3])
        if f is None:
            continue
        ts = np.linspace(t[k], t[k + 1], 65)
        gap = np.linalg.norm(f.at(ts) - spot, axis=1) - reach
        inside = np.nonzero(gap <= 0)[0]
        if len(inside):
            return float(ts[inside[0]])
    return float(t[lo + int(np.nanargmin(d))])  # a graze: at its closest frame


def _last_sightings(seen: np.ndarray, end: int, n: int, within: int) -> np.ndarray:
    """The frames of a ball's last ``n`` sightings before frame ``end``, among the ``within`` frames before it."""
    lo = max(end - within, 0)
    return lo + np.nonzero(seen[lo:end])[0][-n:]


def _first_seen(seen: np.ndarray, start: int) -> int | None:
    idx = np.nonzero(seen[start:])[0]
    return None if not len(idx) else start + int(idx[0])


def _bent_fit(tt: np.ndarray, g: np.ndarray, bends: np.ndarray, decel: float = 0.0
              ) -> tuple[float, float, np.ndarray, np.ndarray]:
    """One line bent once, fitted to a gap ``g`` read at ``tt``: g = g_c + v_in d + decel d^2 / 2 before the bend
    (d = t - t_c < 0), g_c + v_out d after, the bend t_c the best of ``bends``. Returns (squared residual, t_c,
    (g_c, v_in, v_out), the design matrix at t_c)."""
    best = None
    for tc in bends:
        d = tt - tc
        y = g - np.where(d < 0, 0.5 * decel * d * d, 0.0)
        a = np.stack([np.ones_like(d), np.minimum(d, 0.0), np.maximum(d, 0.0)], axis=1)
        coef, *_ = np.linalg.lstsq(a, y, rcond=None)
        residual = float(np.sum((a @ coef - y) ** 2))
        if best is None or residual < best[0]:
            best = (residual, float(tc), coef, a)
    return best


def _residual(t: np.ndarray, g: np.ndarray, f: LineFit) -> float:
    ok = ~np.isnan(g)
    return float(np.mean((f.at(t[ok])[:, 0] - g[ok]) ** 2)) if ok.any() else np.inf


def _dedupe(events: list[Event], dt: float) -> list[Event]:
    """One contact is one event: the same contact found twice within half a frame is kept once."""
    events = sorted(events, key=lambda e: e.t)
    out: list[Event] = []
    for e in events:
        if any(o.type == e.type and o.ball == e.ball and o.balls == e.balls and o.cushion == e.cushion
               and abs(o.t - e.t) < dt / 2 for o in out):
            continue
        out.append(e)
    return out


def _at(e: Event, t: float) -> Event:
    from dataclasses import replace
    return replace(e, t=t)
