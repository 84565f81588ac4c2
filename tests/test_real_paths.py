"""Real three-cushion paths (erdo100's tracked match in ../shared/real, never copied here) through vision's later
stages: shot segmentation, events and the referee, against what the match itself says (a player goes on while he
scores).

The thresholds are what ``python -m bench.bench_real_paths`` measured over the whole match (168 of 182 shots
closed as one Shot, 148 of 159 verdicts as the match went), less a margin: events that fired on one frame's proximity, cushions misplaced by a radius, or a segmenter that split
shots at every slow roll fail them. Skipped, saying why, when the data is absent.
"""

from __future__ import annotations

import statistics

import numpy as np
import pytest

from bench.bench_real_paths import DATA, BALLS, load_shots, on_clock, score, scored_by_the_match, without_repeats
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
    assert sc.one_shot >= 160
    assert sc.right_ball >= sc.one_shot - 3
    assert sc.judged >= 150 and sc.points >= 25 and sc.agree >= 0.9 * sc.judged
    # Contacts sit where the geometry says: two centres 2R apart, a centre R from the nose.
    assert abs(statistics.median(sc.pair_mm)) < 4.0 and abs(statistics.median(sc.cushion_mm)) < 2.0
    assert np.percentile(np.abs(sc.pair_mm), 90) < 12.0
    assert 3 <= statistics.median(sc.cue_cushions) <= 5


def test_a_ball_holds_its_place_until_its_first_move_then_follows_its_samples() -> None:
    samples = np.array([[0.0, 100.0, 100.0], [1.0, 110.0, 100.0], [1.02, 120.0, 100.0], [1.5, 130.0, 100.0]])
    t = np.array([0.5, 0.97, 0.99, 1.01, 1.26, 2.0])
    xy = on_clock(samples, t)
    assert xy[:2, 0].tolist() == [100.0, 100.0]  # at rest until the move begins one interval before 1.0 s
    assert xy[2, 0] == pytest.approx(105.0) and xy[3, 0] == pytest.approx(115.0)
    assert xy[4, 0] == pytest.approx(125.0) and xy[5, 0] == 130.0


def test_a_stale_repeat_of_an_earlier_place_is_dropped_but_a_ball_at_rest_is_kept() -> None:
    s = np.array([[0.0, 10.0, 10.0], [0.02, 20.0, 10.0], [0.04, 30.0, 10.0], [0.06, 10.0, 10.0],
                  [0.08, 50.0, 10.0], [0.1, 50.0, 10.0]])
    assert without_repeats(s)[:, 0].tolist() == [0.0, 0.02, 0.04, 0.08, 0.1]
