"""Properties of the match fold (hypothesis): the match is a pure fold of its log."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rules.balls import CAROM_DISCIPLINES
from rules.controls import Control
from rules.match import Match
from rules.registry import referee_for
from tests.carom_builders import KINDS, log_of_kinds

kinds = st.lists(st.sampled_from(KINDS), min_size=1, max_size=40)
disciplines = st.sampled_from(CAROM_DISCIPLINES)
distances = st.integers(min_value=1, max_value=8)


def fold(discipline, distance, records):
    match = Match(referee_for(discipline, distance=distance))
    for r in records:
        match.feed(r)
    return match


@settings(max_examples=60, deadline=None)
@given(disciplines, distances, kinds)
def test_refolding_a_log_gives_the_same_state(discipline, distance, ks):
    log = log_of_kinds(discipline, ks, distance)
    a, b = fold(discipline, distance, log), fold(discipline, distance, log)
    assert a.state == b.state
    assert [v.to_dict() for v in a.verdicts] == [v.to_dict() for v in b.verdicts]


@settings(max_examples=60, deadline=None)
@given(disciplines, distances, kinds)
def test_undo_equals_the_log_without_its_last_shot(discipline, distance, ks):
    log = log_of_kinds(discipline, ks, distance)
    undone = fold(discipline, distance, log + [Control("undo")])
    shorter = fold(discipline, distance, log[:-1])
    assert undone.state == shorter.state
    assert undone.summary() == shorter.summary()


@settings(max_examples=60, deadline=None)
@given(disciplines, distances, kinds)
def test_the_score_is_the_sum_of_the_verdicts_points(discipline, distance, ks):
    match = fold(discipline, distance, log_of_kinds(discipline, ks, distance))
    for side in ("A", "B"):
        assert match.summary()["score"][side] == sum(v.points[side] for v in match.verdicts)
    assert match.summary()["score"] == match.verdicts[-1].score


@settings(max_examples=30, deadline=None)
@given(disciplines, kinds)
def test_the_high_run_never_exceeds_the_score_and_innings_alternate(discipline, ks):
    match = fold(discipline, 10_000, log_of_kinds(discipline, ks))
    s = match.summary()
    for side in ("A", "B"):
        assert s["high_run"][side] <= s["score"][side]
    assert s["innings"]["A"] - s["innings"]["B"] in (0, 1)
