"""Real three-cushion paths (erdo100's tracked match in ../shared/real, never copied here) through vision's later
stages: shot segmentation, events and the referee, against what the match itself says (a player goes on while he
scores).

The thresholds are what ``python -m bench.bench_real_paths`` measured over the whole match (182 of 182 shots
closed as one Shot, 168 of 173 verdicts as the match went), less a margin: events that fired on one frame's
proximity, cushions misplaced by a radius, or a segmenter that split shots at every slow roll fail them. Skipped,
saying why, when the data is absent.
"""

from __future__ import annotations

import statistics

import numpy as np
import pytest

from bench.bench_real_paths import (DATA, BALLS, kissed_at, load_shots, on_clock, replay_paths, score,
                                    scored_by_the_match, without_repeats)
from rules.events import EventType
from rules.tables import preset


@pytest.fixture(scope="module")
def match():
    if not DATA.exists():
        pytest.skip(f"{DATA} is absent (the real footage lives in ../shared/real beside the repository)")
    shots = load_shots()
    return shots, scored_by_the_match(shots)


def test_the_match_data_is_read_as_the_tracker_wrote_it(match) -> None:
    shots, truth = match
    assert len(shots) == 182 and {s.first_mover for s in shots} == {"white", "spot"}  # the red is never struck
    table = preset("carom_match")
    for s in shots:
        for b in BALLS:
            xy = s.samples[b][:, 1:]
            assert np.all((xy > 0) & (xy < (table.width, table.length)))  # x across the 1.42 m, y along
    assert 20 < sum(truth.values()) < 100  # a real match: points, and more misses


def test_the_real_match_gives_one_shot_each_and_the_matchs_own_verdicts(match) -> None:
    shots, truth = match
    sc = score(shots, truth, preset("carom_match"))
    assert sc.one_shot >= 178
    assert sc.right_ball >= sc.one_shot - 3
    assert sc.judged >= 165 and sc.points >= 30 and sc.agree >= 0.95 * sc.judged
    # Contacts sit where the geometry says: two centres 2R apart, a centre R from the nose.
    assert abs(statistics.median(sc.pair_mm)) < 4.0 and abs(statistics.median(sc.cushion_mm)) < 2.0
    assert np.percentile(np.abs(sc.pair_mm), 90) < 12.0
    assert 3 <= statistics.median(sc.cue_cushions) <= 5


def test_a_ball_holds_its_place_until_its_first_move_then_follows_its_samples() -> None:
    samples = np.array([[0.0, 100.0, 100.0], [1.0, 110.0, 100.0], [1.02, 120.0, 100.0], [1.5, 130.0, 100.0]])
    t = np.array([0.5, 0.97, 0.99, 1.01, 1.26, 2.0])
    xy = on_clock(samples, t)
    assert xy[:2, 0].tolist() == [100.0, 100.0]  # at rest until the move begins about one interval before 1.0 s
    # (a hair less: a rolling ball slows, so it covered the first 10 mm a little faster than the next 10)
    assert xy[2, 0] == pytest.approx(105.0, abs=0.01) and xy[3, 0] == pytest.approx(115.0)
    assert xy[4, 0] == pytest.approx(125.0) and xy[5, 0] == 130.0


def test_a_ball_that_creeps_to_a_stop_is_not_run_back_at_its_creeping_speed() -> None:
    """Kissed softly, a ball is logged 27 mm on, then 6 mm farther at the end: run back at the 9 mm/s between
    those two it would have set off 3 s early; a ball that stops within 6 mm was going at least 35 mm/s."""
    samples = np.array([[0.0, 777.4, 2770.1], [13.3425, 783.4, 2796.8], [14.0, 784.3, 2802.5]])
    t = np.arange(10.0, 13.34, 0.02)
    moved = np.linalg.norm(on_clock(samples, t) - samples[0, 1:], axis=1) > 0.5
    assert 12.5 < t[np.argmax(moved)] < 13.2
    # Told when it was reached, it starts there.
    moved = np.linalg.norm(on_clock(samples, t, start=12.96) - samples[0, 1:], axis=1) > 0.5
    assert abs(t[np.argmax(moved)] - 12.98) < 0.03


def test_a_ball_logged_once_on_the_move_at_the_logs_end_is_not_spread_over_the_whole_shot() -> None:
    """Shot 545750: the red, kissed at the very end, is logged at rest and once 16 mm on, 10.6 s later."""
    samples = np.array([[0.0, 1042.8, 2049.6], [10.634, 1040.7, 2034.0]])
    t = np.arange(0.0, 10.634, 0.02)
    moved = np.linalg.norm(on_clock(samples, t) - samples[0, 1:], axis=1) > 0.5
    assert 9.9 < t[np.argmax(moved)] < 10.6  # a ball that stops within 16 mm took under a second to get there


def test_a_ball_kissed_softly_starts_when_the_other_reaches_it(match) -> None:
    """Shot 545660: the spot rolls by the red at 0.1 m/s, 2R from it at about 7.55 s; the red is logged moving
    only at 8.05 s."""
    shots, _ = match
    shot = next(s for s in shots if s.shot_id == 545660)
    r = preset("carom_match").ball_radius
    assert 7.4 < kissed_at(shot, "red", r) < 7.6
    assert kissed_at(shot, "spot", r) is None  # the struck ball: nothing reached it
    events = replay_paths(shot, preset("carom_match"), 50.0)[0].events
    kisses = [e for e in events if e.type is EventType.BALL_BALL and set(e.balls) == {"spot", "red"}]
    assert len(kisses) == 1 and not any(e.type is EventType.TOUCHED for e in events), events


def test_a_kiss_just_after_a_cushion_is_found_when_the_kissed_ball_meets_a_cushion_itself_next(match) -> None:
    """Shot 545701: the spot comes off the top cushion into the white resting 62 mm from the right cushion; the
    white is at that cushion two frames later. Its start is the kiss's, not explained by its own cushion."""
    shots, _ = match
    shot = next(s for s in shots if s.shot_id == 545701)
    events = replay_paths(shot, preset("carom_match"), 50.0)[0].events
    kisses = [e.t for e in events if e.type is EventType.BALL_BALL and set(e.balls) == {"spot", "white"}]
    assert len(kisses) == 1 and 0.56 < kisses[0] < 0.59, events


def test_a_stale_repeat_of_an_earlier_place_is_dropped_but_a_ball_at_rest_is_kept() -> None:
    s = np.array([[0.0, 10.0, 10.0], [0.02, 20.0, 10.0], [0.04, 30.0, 10.0], [0.06, 10.0, 10.0],
                  [0.08, 50.0, 10.0], [0.1, 50.0, 10.0]])
    assert without_repeats(s)[:, 0].tolist() == [0.0, 0.02, 0.04, 0.08, 0.1]
