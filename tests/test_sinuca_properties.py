"""Properties of whole random frames (hypothesis): what every verdict must satisfy, whatever the play.

Each random shot hits a random ball first (or nothing), pots up to two balls (the cue ball among them or not) and
leaves the cue ball somewhere free on the table; the referee's re-spots become the next shot's start.
"""

from __future__ import annotations

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.sinuca_builders import VALUE, Game, L, R, W

shot_plan = st.tuples(
    st.booleans(),  # aim at a ball on (else at any ball, or at nothing)
    st.integers(min_value=-1, max_value=30),  # which ball is hit first
    st.booleans(),  # the ball hit first drops
    st.lists(st.integers(min_value=0, max_value=30), max_size=1),  # another ball drops
    st.integers(min_value=0, max_value=9),  # 0: the cue ball drops too
    st.floats(min_value=R, max_value=W - R), st.floats(min_value=R, max_value=L - R),  # where the cue ball stops
)


def ball_on_choices(balls, ball_on):
    if ball_on == "red":
        return [b for b in balls if b.startswith("red")]
    if ball_on == "colour":
        return [b for b in balls if b in VALUE]
    return [ball_on] if ball_on in balls else []


def free_spot(layout, x, y):
    """The cue ball's end, moved along the long axis until it overlaps no ball."""
    for k in range(400):
        p = (x, R + (y - R + k * 2.1 * R) % (L - 2 * R))
        if all(math.dist(p, q) >= 2 * R for b, q in layout.items() if b != "cue"):
            return p
    return None


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([3, 6, 15]), st.lists(shot_plan, min_size=1, max_size=25))
def test_every_verdict_keeps_the_rules_invariants(reds, plans):
    g = Game(reds=reds)
    score = {"A": 0, "B": 0}
    ball_on = "red"
    for legal, first_i, first_drops, other_is, cue_drops, x, y in plans:
        balls = sorted(b for b in g.layout if b != "cue")
        if not balls:
            break
        choices = ball_on_choices(balls, ball_on) if legal else balls
        first = None if first_i < 0 or not choices else choices[first_i % len(choices)]
        pots = ([first] if first and first_drops else []) + [balls[i % len(balls)] for i in other_is]
        pots = list(dict.fromkeys(pots)) + (["cue"] if cue_drops == 0 else [])
        nominated = first if ball_on == "colour" and legal else None
        rest = {b: p for b, p in g.layout.items() if b not in pots}
        cue_to = free_spot(rest, x, y)
        if cue_to is None:
            break
        before = dict(g.layout)
        v = g.shot(first, pots, cue_to=cue_to, nominated=nominated)
        ball_on = v["ball_on"]
        shooter, other = v["shooter"], "B" if v["shooter"] == "A" else "A"
        if v["frame"] != 1:
            break
        for s in score:
            score[s] += v["points"][s]
        assert v["score"] == score  # penalties included, nothing lost
        if v["foul"]:
            assert 4 <= v["foul"]["penalty"] <= 7  # Art. 36, 37
            assert v["points"] == {shooter: 0, other: v["foul"]["penalty"]} and v["foul"]["to"] == other
            assert v["turn"] == "passes"
        elif v["points"][shooter] > 0:
            assert v["turn"] == "keeps" or v["game_over"]
        else:
            assert v["turn"] == "passes"
        assert all(not r["ball"].startswith("red") for r in v["respot"])  # Art. 16
        assert {r["ball"] for r in v["respot"]} <= set(VALUE) & set(before)
        if not v["game_over"]:
            placed = [r["at"] for r in v["respot"]]
            on_table = [p for b, p in g.layout.items()]
            for p in placed:  # Art. 27: a re-spotted ball touches no other
                assert sum(1 for q in on_table if math.dist(p, q) < 2 * R - 0.2) == 1
            assert v["ball_on"] in ("red", "colour", *VALUE)
            t = v["table"]
            assert t["lead"] == abs(score["A"] - score["B"]) and t["remaining"] >= 0
        if v["game_over"]:
            break
