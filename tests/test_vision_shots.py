"""Shot segmentation: at rest, moving, at rest again, with placements and lost frames."""

from __future__ import annotations

import numpy as np

from rules.events import EventType
from rules.tables import preset
from tests.synthetic_paths import simulate
from vision.shots import ShotSegmenter

CAROM = preset("carom_match")
LAYOUT = {"spot": (700.0, 600.0), "white": (300.0, 1500.0), "red": (1000.0, 2000.0)}


def run(segmenter, paths, t_offset=0.0, gap=None):
    shots = []
    for k, t in enumerate(paths.t):
        if gap and gap[0] <= k < gap[1]:
            if k == gap[0]:
                segmenter.gap(t + t_offset, paths.t[gap[1]] + t_offset)
            continue
        s = segmenter.feed(t + t_offset, paths.xy[:, k])
        if s:
            shots.append(s)
    return shots


def test_a_shot_is_cut_from_rest_to_rest_with_its_events_and_positions():
    paths, truth = simulate(CAROM, LAYOUT, {"spot": (600.0, 2400.0)}, 6.0, noise_mm=0.3, step=1e-4, decel=0.6)
    seg = ShotSegmenter(paths.balls, CAROM, cue_ball=lambda: "spot")
    shots = run(seg, paths)
    assert len(shots) == 1
    s = shots[0]
    assert s.cue_ball == "spot" and s.struck_ball == "spot" and s.confidence == 1.0
    assert abs(s.events[0].t - 0.1) < 0.003
    assert np.allclose(s.start["white"], LAYOUT["white"], atol=0.5)
    contacts = [e for e in s.events if e.type in (EventType.BALL_BALL, EventType.CUSHION)]
    assert len(contacts) == len([x for x in truth if x[1] in ("ball_ball", "cushion")])
    final = paths.xy[:, -1]
    for b, ball in enumerate(paths.balls):
        assert np.linalg.norm(np.array(s.end[ball]) - final[b]) < 1.0
    moved = {ball for b, ball in enumerate(paths.balls)
             if np.max(np.linalg.norm(paths.xy[b] - paths.xy[b, 0], axis=1)) > 5.0}
    assert set(s.tracks) == moved and "spot" in moved


def test_two_shots_in_a_row_and_the_second_starts_where_the_first_ended():
    first, _ = simulate(CAROM, LAYOUT, {"spot": (600.0, 2400.0)}, 6.0, noise_mm=0.3, step=1e-4, decel=0.6)
    after = {b: tuple(first.xy[i, -1]) for i, b in enumerate(first.balls)}
    second, _ = simulate(CAROM, after, {"white": (-800.0, 1500.0)}, 5.0, noise_mm=0.3, step=1e-4, decel=0.6)
    seg = ShotSegmenter(first.balls, CAROM, cue_ball=lambda: "spot")
    shots = run(seg, first) + run(seg, second, t_offset=first.t[-1] + 1 / 60)
    assert len(shots) == 2
    assert shots[1].struck_ball == "white" and shots[1].t_start >= shots[0].t_end
    for ball in first.balls:
        assert np.linalg.norm(np.subtract(shots[1].start[ball], shots[0].end[ball])) < 1.0


def test_a_ball_rolled_slowly_into_place_by_hand_is_not_a_shot():
    paths, _ = simulate(CAROM, LAYOUT, {"red": (0.0, 150.0)}, 3.0, noise_mm=0.2, step=1e-4, decel=0.05)
    seg = ShotSegmenter(paths.balls, CAROM, cue_ball=lambda: "spot")
    assert run(seg, paths) == [] and seg.placements == 1


def test_a_ball_lifted_and_put_back_elsewhere_moves_its_resting_point_only():
    t = np.arange(0, 3, 1 / 60)
    xy = np.zeros((3, len(t), 2))
    for b, ball in enumerate(("spot", "white", "red")):
        xy[b] = LAYOUT[ball]
    xy[2, 60:120] = np.nan  # the red is lifted ...
    xy[2, 120:] = (710.0, 2130.0)  # ... and put on the top spot
    from vision.paths import Paths
    seg = ShotSegmenter(("spot", "white", "red"), CAROM, cue_ball=lambda: "spot")
    assert run(seg, Paths(("spot", "white", "red"), t, xy)) == []
    assert np.allclose(seg.rest[2], (710.0, 2130.0))


def test_frames_lost_during_a_shot_mark_it_not_refereed():
    paths, _ = simulate(CAROM, LAYOUT, {"spot": (600.0, 2400.0)}, 6.0, noise_mm=0.3, step=1e-4, decel=0.6)
    seg = ShotSegmenter(paths.balls, CAROM, cue_ball=lambda: "spot")
    shots = run(seg, paths, gap=(40, 60))
    assert len(shots) == 1 and shots[0].confidence == 0.0
    assert any("frames lost" in n for n in shots[0].notes)


def test_tracks_are_thinned_within_a_millimetre():
    paths, _ = simulate(CAROM, LAYOUT, {"spot": (600.0, 2400.0)}, 6.0, noise_mm=0.0, step=1e-4, decel=0.6)
    seg = ShotSegmenter(paths.balls, CAROM, cue_ball=lambda: "spot")
    s = run(seg, paths)[0]
    track = np.array(s.tracks["spot"])
    assert len(track) < 0.5 * len(paths.t)
    b = paths.index("spot")
    moving = (paths.t >= track[0, 0]) & (paths.t <= track[-1, 0])
    xs = np.interp(paths.t[moving], track[:, 0], track[:, 1])
    ys = np.interp(paths.t[moving], track[:, 0], track[:, 2])
    err = np.hypot(xs - paths.xy[b, moving, 0], ys - paths.xy[b, moving, 1])
    assert err.max() <= 1.0 + 0.02  # the rounding to 0.01 mm of the kept samples


def test_a_strike_while_the_last_shots_ball_rolls_opens_the_next_shot_there():
    """One window of motion, two shots: A's spot still rolls when B strikes the white. The second record is made
    after the first is handed over (its cue ball is the match's answer once the first has been judged)."""
    from tests.test_vision_events import rolling_path, straight_path
    from vision.paths import Paths
    t = np.arange(0, 8.0, 1 / 30)
    spot = rolling_path(t, (300.0, 400.0), (0.0, 900.0), 0.5)
    white = rolling_path(t, (1100.0, 500.0), (0.0, 1000.0), 2.0)
    red = straight_path(t, (710.0, 2600.0), (0.0, 0.0))
    turn = iter(["spot", "white"])
    seg = ShotSegmenter(("spot", "white", "red"), CAROM, cue_ball=lambda: next(turn), strikers=("white", "spot"))
    shots = run(seg, Paths(("spot", "white", "red"), t, np.stack([spot, white, red])))
    assert [(s.cue_ball, s.struck_ball, s.moving_at_strike) for s in shots] == \
        [("spot", "spot", ()), ("white", "white", ("spot",))]
    first, second = shots
    assert abs(first.t_end - 2.0) < 0.01 and abs(second.t_start - 2.0) < 0.01
    # The spot's position when the white was struck ends the first shot and starts the second.
    assert np.allclose(first.end["spot"], second.start["spot"]) and abs(first.end["spot"][1] - 1412.5) < 2.0
    assert np.allclose(second.start["white"], (1100.0, 500.0), atol=0.5)
    assert "spot" in second.tracks and "white" not in first.tracks


def test_a_ball_slid_by_hand_faster_than_a_placement_is_a_touched_shot():
    from tests.test_vision_events import straight_path
    from vision.paths import Paths
    t = np.arange(0, 3.0, 1 / 30)
    hand = straight_path(t, (710.0, 2130.0), (270.0, 243.0), 0.5)
    hand[t > 1.2] = hand[np.searchsorted(t, 1.2)]
    still = [straight_path(t, (300.0, 400.0), (0.0, 0.0)), straight_path(t, (1100.0, 500.0), (0.0, 0.0))]
    seg = ShotSegmenter(("red", "spot", "white"), CAROM, cue_ball=lambda: "spot", strikers=("white", "spot"))
    shots = run(seg, Paths(("red", "spot", "white"), t, np.stack([hand] + still)))
    assert len(shots) == 1 and [e.type for e in shots[0].events] == [EventType.TOUCHED]
    assert shots[0].struck_ball is None


def test_a_ball_read_unsteadily_at_rest_does_not_hold_a_shot_open():
    """A poorly seen ball (a dark ball on the cloth) jitters 2 mm about its resting point frame to frame: the shot
    still closes once everything else has stopped, and the jittery ball is not moving in it."""
    paths, _ = simulate(CAROM, LAYOUT, {"spot": (600.0, 2400.0)}, 6.0, noise_mm=0.3, step=1e-4, decel=0.6)
    xy = paths.xy.copy()
    rng = np.random.default_rng(3)
    w = paths.index("white")  # never touched in this shot
    xy[w] += rng.normal(0.0, 1.0, xy[w].shape)
    from vision.paths import Paths
    seg = ShotSegmenter(paths.balls, CAROM, cue_ball=lambda: "spot")
    shots = run(seg, Paths(paths.balls, paths.t, xy))
    assert len(shots) == 1 and shots[0].struck_ball == "spot"
    assert not [e for e in shots[0].events if e.involves("white")]


def test_a_strike_right_after_a_placement_closed_is_still_a_shot():
    """The cue's approach jostles the cue ball's blob for two frames (a window opens and closes as a placement);
    the strike comes on the very next frame. The placement's still tail is the new window's preroll: the strike
    is seen and timed from the resting frames before it."""
    from tests.test_vision_events import rolling_path
    balls = ("spot", "white", "red")
    rest = np.array([LAYOUT[b] for b in balls])
    seg = ShotSegmenter(balls, CAROM, cue_ball=lambda: "spot")
    dt = 1 / 60
    k = 0
    while seg.placements == 0:
        xy = rest.copy()
        if k in (10, 11):
            xy[0] += (0.0, 3.0)
        assert seg.feed(k * dt, xy) is None
        k += 1
        assert k < 200
    t0 = k * dt
    t = np.arange(k, k + 300) * dt
    spot = rolling_path(t, LAYOUT["spot"], (-300.0, 1200.0), t0 + 0.5 * dt)
    shots = [s for n, tk in enumerate(t) if (s := seg.feed(tk, np.vstack([spot[n], rest[1:]]))) is not None]
    assert len(shots) == 1 and shots[0].struck_ball == "spot"
    assert abs(shots[0].events[0].t - (t0 + 0.5 * dt)) < 0.004


def test_a_recording_that_ends_while_balls_roll_gives_its_shot_as_a_doubtful_call():
    """A broadcast cut away mid-shot: the strike and the contacts seen are kept, the end is where the picture
    stopped, and the confidence says the referee must confirm."""
    paths, truth = simulate(CAROM, LAYOUT, {"spot": (600.0, 2400.0)}, 6.0, noise_mm=0.3, step=1e-4, decel=0.6)
    cut = len(paths.t) // 3  # well before the balls come to rest
    seg = ShotSegmenter(paths.balls, CAROM, cue_ball=lambda: "spot")
    for k in range(cut):
        assert seg.feed(paths.t[k], paths.xy[:, k]) is None
    shot = seg.flush()
    assert shot is not None and shot.struck_ball == "spot"
    assert 0.0 < shot.confidence <= 0.5 and any("ended before" in n for n in shot.notes)
    seen = [x for x in truth if x[1] in ("ball_ball", "cushion") and x[0] < paths.t[cut - 1] - 0.05]
    assert len([e for e in shot.events if e.type in (EventType.BALL_BALL, EventType.CUSHION)]) >= len(seen)
    assert np.linalg.norm(np.array(shot.end["spot"]) - paths.xy[paths.balls.index("spot"), cut - 1]) < 5.0
    assert seg.flush() is None  # nothing left open


def test_swapping_two_labels_swaps_their_preroll_frames_and_counts_too():
    """Two balls' labels found the wrong way round while they rest: the frames kept before a shot opens (the
    strike's fit reads them) and the counts of frames off rest follow the balls, so the next frames, under the
    right labels, open no shot (the two balls would otherwise seem to jump onto each other)."""
    balls = ("spot", "white", "red")
    rest = np.array([LAYOUT[b] for b in balls])
    seg = ShotSegmenter(balls, CAROM, cue_ball=lambda: "spot")
    dt = 1 / 60
    for k in range(20):
        assert seg.feed(k * dt, rest) is None
    nudged = rest.copy()
    nudged[0] += (0.0, 3.0)  # the first ball (read as "spot") off rest for one frame
    assert seg.feed(20 * dt, nudged) is None
    assert seg.moving_frames.tolist() == [1, 0, 0]
    seg.swap("spot", "white")
    assert seg.moving_frames.tolist() == [0, 1, 0]
    assert all(np.allclose(f.xy[0], rest[1]) and np.allclose(f.xy[1], rest[0], atol=3.0) for f in seg.history)
    swapped = rest[[1, 0, 2]]
    for k in range(21, 60):
        assert seg.feed(k * dt, swapped) is None
    assert seg.open is None and np.allclose(seg.rest, swapped, atol=0.5)


# --- frames lost while the balls rest ----------------------------------------------------------------------------

def _resting(seg, xy, frames, k0=0, dt=1 / 60, noise_mm=0.3, seed=0):
    """Feed ``frames`` frames of balls resting at ``xy`` (read with a little noise) from frame ``k0``; the shots."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(k0, k0 + frames):
        shot = seg.feed(k * dt, xy + rng.normal(0.0, noise_mm, xy.shape))
        if shot is not None:
            out.append(shot)
    return out


def test_balls_found_elsewhere_after_frames_lost_at_rest_are_a_shot_not_seen_for_the_referee_to_confirm():
    """A gap while the balls rest (the live loop behind while the detector is built, a camera hiccup) and the
    balls are somewhere else after it: a shot was played, or balls moved, unseen. One record comes out: it starts
    where the balls rested before the gap and ends where they rest after it, makes up no event across the gap (no
    strike on the wrong ball, no touch), and says it was not seen, at a confidence that makes the referee ask."""
    balls = ("spot", "white", "red")
    before = np.array([LAYOUT[b] for b in balls])
    after = before.copy()
    after[0] = (900.0, 2300.0)  # the spot played up the table ...
    after[2] = (400.0, 2500.0)  # ... and the red hit across it
    seg = ShotSegmenter(balls, CAROM, cue_ball=lambda: "spot")
    assert _resting(seg, before, 60) == []
    seg.gap(59 / 60, 120 / 60)  # frames 60..119 lost: 0.983-2.000 s
    shots = _resting(seg, after, 120, k0=120) + [s for s in [seg.flush()] if s is not None]
    assert len(shots) == 1
    shot = shots[0]
    assert shot.confidence == 0.0 and shot.confidence < 0.8  # carom and sinuca ask to confirm below 0.8
    assert shot.notes == ("frames lost 0.983-2.000 s: the shot's start was not seen",)
    assert shot.events == () and shot.struck_ball is None
    assert abs(shot.t_start - 59 / 60) < 1e-9 and shot.t_end > 2.0
    for b, ball in enumerate(balls):
        assert np.linalg.norm(np.subtract(shot.start[ball], before[b])) < 1.0
        assert np.linalg.norm(np.subtract(shot.end[ball], after[b])) < 1.0
    assert set(shot.tracks) == {"spot", "red"}
    assert np.allclose(seg.rest, after, atol=1.0) and seg.lost == []


def test_a_shot_struck_in_frames_lost_at_rest_and_seen_rolling_after_them_is_marked_not_seen():
    """The strike falls in the gap and the balls still roll after it: the shot's contacts after the gap are kept,
    its start is not seen, so it is marked for the referee to confirm."""
    paths, _ = simulate(CAROM, LAYOUT, {"spot": (600.0, 2400.0)}, 6.0, noise_mm=0.3, step=1e-4, decel=0.6)
    seg = ShotSegmenter(paths.balls, CAROM, cue_ball=lambda: "spot")
    shots = run(seg, paths, gap=(3, 30))  # the strike at 0.1 s, frame 6
    assert len(shots) == 1 and shots[0].confidence == 0.0
    assert any("the shot's start was not seen" in n for n in shots[0].notes)
    assert shots[0].struck_ball is None  # the strike was not seen: none is made up
    assert [e.balls for e in shots[0].events if e.type is EventType.BALL_BALL] == [("spot", "red")]
    assert np.allclose(shots[0].start["spot"], LAYOUT["spot"], atol=1.0)


def test_frames_lost_at_rest_with_every_ball_where_it_was_after_them_change_nothing():
    """Nothing moved in the gap: no record, the gap is forgotten, and the next shot, seen whole, is judged as seen
    (no note, full confidence); a ball first seen again a little later, in its place, also forgets the gap."""
    paths, _ = simulate(CAROM, LAYOUT, {"spot": (600.0, 2400.0)}, 6.0, noise_mm=0.3, step=1e-4, decel=0.6)
    balls = paths.balls
    rest = np.array([LAYOUT[b] for b in balls])
    seg = ShotSegmenter(balls, CAROM, cue_ball=lambda: "spot")
    assert _resting(seg, rest, 60) == []
    seg.gap(59 / 60, 120 / 60)
    hidden = rest.copy()
    hidden[1] = np.nan  # the white under an arm for a few frames after the gap ...
    for k in range(120, 125):
        assert seg.feed(k / 60, hidden) is None
    assert seg.lost  # ... so the gap is not settled yet
    assert _resting(seg, rest, 55, k0=125) == []  # ... and there it is, where it was
    assert seg.lost == [] and seg.open is None and seg.placements == 0
    # Another gap, and a ball read 3 mm off its place for two frames after it (a poor blob) before settling back:
    # a window opens, but every ball rests where it did, so nothing comes of it.
    seg.gap(179 / 60, 200 / 60)
    jolted = rest.copy()
    jolted[2] += (3.0, 0.0)
    assert _resting(seg, jolted, 2, k0=200) == []
    assert _resting(seg, rest, 40, k0=202) == [] and seg.open is None and seg.lost == []
    shots = run(seg, paths, t_offset=4.5)
    assert len(shots) == 1 and shots[0].struck_ball == "spot"
    assert shots[0].confidence == 1.0 and shots[0].notes == ()


def test_a_chapo_shot_played_in_frames_lost_at_rest_starts_with_the_pins_that_stood_before_them():
    """Pins knocked in the gap: the record's pins at the start are those standing before it (read from the window
    after it, the king would seem down before the stroke: the pins not planted, a foul nobody committed)."""
    from rules.tables import chapo_pin_spots
    from vision.detections import PinObservation
    chapo = preset("chapo")
    spots = chapo_pin_spots(chapo)
    pins = ("king", "lat_top", "lat_bottom", "lat_left", "lat_right")
    all_up = PinObservation(0.0, {p: spots[p] for p in pins}, {})
    king_down = PinObservation(0.0, {p: spots[p] for p in pins if p != "king"}, {"king": (700.0, 1300.0)})
    balls = ("1", "2", "mingo")
    before = np.array([(300.0, 400.0), (900.0, 500.0), (635.0, 2300.0)])
    after = np.array([(300.0, 400.0), (1000.0, 1900.0), (400.0, 2000.0)])
    seg = ShotSegmenter(balls, chapo, cue_ball=lambda: "2", strikers=("1", "2"))
    for k in range(40):
        assert seg.feed(k / 60, before, all_up) is None
    seg.gap(39 / 60, 100 / 60)
    shots = [s for k in range(100, 200) if (s := seg.feed(k / 60, after, king_down)) is not None]
    assert len(shots) == 1 and shots[0].confidence == 0.0
    assert set(shots[0].pins_start) == set(pins) and set(shots[0].pins_end) == set(pins) - {"king"}


def test_a_ball_creeping_to_a_stop_as_the_shot_closes_ends_where_it_stops_not_behind():
    """Slow cloth (0.08 m/s2): the struck ball crawls its last millimetres under the 15 mm/s that "still" lets
    through, so the shot closes before it stops. The mean of its last still frames lagged 1.1-1.2 mm behind where
    it stopped in three of these six shots; the line through them reaches it. The balls at rest are not moved."""
    errors = []
    for seed in range(6):
        shot_paths = {}
        for noise in (0.3, 0.0):  # the frames as read, and the same shot's truth
            shot_paths[noise], _ = simulate(CAROM, LAYOUT, {"spot": (300.0, 500.0)}, 8.0, noise_mm=noise,
                                            step=1e-4, decel=0.08, seed=seed)
        read, truth = shot_paths[0.3], shot_paths[0.0]
        shots = run(ShotSegmenter(read.balls, CAROM, cue_ball=lambda: "spot"), read)
        assert len(shots) == 1
        for ball in read.balls:
            errors.append((ball, float(np.hypot(*np.subtract(shots[0].end[ball], truth.xy[read.index(ball), -1])))))
    spot = [e for b, e in errors if b == "spot"]
    assert max(spot) < 0.6 and np.median(spot) < 0.4, spot
    assert max(e for b, e in errors if b != "spot") < 0.3, errors
