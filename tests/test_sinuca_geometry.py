"""Snookers on hand-built layouts (sinuca Art. 9, 10), the D (Art. 17.3) and the re-spot search (Art. 27-29)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.snooker_geometry import (
    NONE, PARTIAL, TOTAL, Obstacle, ball_obstacles, in_d, knuckles, reach_target, respot_point, snooker_call,
)
from tests.sinuca_builders import BAULK, D_RADIUS, SPOT, Game, L, R, T, W

CUE = (700.0, 500.0)
TARGET = (700.0, 1500.0)


def balls(**pos) -> tuple[Obstacle, ...]:
    return ball_obstacles(pos, R)


def edge_path(cue, target, side: int):
    """The straight path of the cue ball centre to graze one extreme edge of ``target``: start, unit vector, length."""
    dx, dy = target[0] - cue[0], target[1] - cue[1]
    d = math.hypot(dx, dy)
    a = math.atan2(dy, dx) + side * math.asin(2 * R / d)
    return (math.cos(a), math.sin(a)), math.sqrt(d * d - 4 * R * R)


def beside_edge(cue, target, side: int, clearance: float, along: float = 0.5):
    """A ball ``clearance`` mm outside the path that grazes the ``side`` edge (centre at 2R + clearance from it)."""
    u, s = edge_path(cue, target, side)
    n = (-u[1], u[0]) if side > 0 else (u[1], -u[0])  # the normal pointing away from the target
    off = 2 * R + clearance
    return (cue[0] + along * s * u[0] + off * n[0], cue[1] + along * s * u[1] + off * n[1])


def test_art_9_a_clear_ball_on_is_no_snooker():
    assert reach_target(CUE, TARGET, (), R).kind == NONE
    assert reach_target(CUE, TARGET, balls(blue=(300.0, 1000.0)), R).kind == NONE


def test_art_9_1_a_total_snooker_a_ball_square_in_front():
    call = reach_target(CUE, TARGET, balls(blue=(700.0, 1000.0)), R)
    assert call.kind == TOTAL and call.first_obstacles == {"blue"}


def test_art_9_1_b_a_partial_snooker_one_edge_hidden():
    call = reach_target(CUE, TARGET, balls(blue=(740.0, 1000.0)), R)
    assert call.kind == PARTIAL and "blue" in call.first_obstacles


@pytest.mark.parametrize("side", [1, -1])
def test_art_9_a_near_miss_half_a_millimetre_outside_the_edge_path_is_not_a_snooker(side):
    near = beside_edge(CUE, TARGET, side, 0.5)
    assert reach_target(CUE, TARGET, balls(pink=near), R).kind == NONE
    closer = beside_edge(CUE, TARGET, side, -0.5)
    assert reach_target(CUE, TARGET, balls(pink=closer), R).kind == PARTIAL


def test_art_9_an_obstacle_beyond_the_ball_on_is_no_obstacle():
    assert reach_target(CUE, TARGET, balls(blue=(700.0, 1560.0)), R).kind == NONE


def test_art_9_two_balls_with_a_gap_narrower_than_a_ball_make_a_total_snooker():
    gap = balls(blue=(700.0 - R - 10.0, 1000.0), pink=(700.0 + R + 10.0, 1000.0))
    assert reach_target(CUE, TARGET, gap, R).kind == TOTAL
    wide = balls(blue=(700.0 - 2 * R - 5.0, 1000.0), pink=(700.0 + 2 * R + 5.0, 1000.0))
    assert reach_target(CUE, TARGET, wide, R).kind == PARTIAL  # through the middle, not both edges


def test_art_9_a_ball_touching_the_cue_ball_blocks_only_the_way_through_it():
    frozen = balls(brown=(700.0, 500.0 + 2 * R))
    assert reach_target(CUE, TARGET, frozen, R).kind == TOTAL
    behind = balls(brown=(700.0, 500.0 - 2 * R))
    assert reach_target(CUE, TARGET, behind, R).kind == NONE


def test_art_9_4_the_first_obstacle_is_the_nearer_ball():
    call = reach_target(CUE, TARGET, balls(blue=(700.0, 800.0), pink=(700.0, 1200.0)), R)
    assert call.kind == TOTAL and call.first_obstacles == {"blue"}


KNUCKLES = knuckles(T)
JAWS = (20.0, 20.0)  # the cue ball in the mouth of the bottom-left pocket


def test_art_9_the_cushion_knuckle_is_an_obstacle_total():
    assert reach_target(JAWS, (40.0, 800.0), KNUCKLES, R).kind == TOTAL


def test_art_9_the_cushion_knuckle_partial_and_clear():
    t = (20.0 + 780.0 * math.tan(math.radians(9.0)), 800.0)
    call = reach_target(JAWS, t, KNUCKLES, R)
    assert call.kind == PARTIAL and call.first_obstacles == {"knuckle:bottom_left:1"}
    assert reach_target(JAWS, (300.0, 800.0), KNUCKLES, R).kind == NONE


def test_art_10_the_cushion_itself_is_no_obstacle():
    """A ball on against the left cushion, the cue ball along the same cushion: both edges can be hit."""
    assert reach_target((R, 300.0), (R, 1200.0), KNUCKLES, R).kind == NONE


def test_art_9_several_balls_on_a_snooker_only_if_every_one_is_hidden():
    obstacles = lambda name: balls(blue=(700.0, 1000.0))  # noqa: E731
    assert snooker_call(CUE, {"red1": TARGET, "red2": (300.0, 1500.0)}, obstacles, R).kind == NONE
    assert snooker_call(CUE, {"red1": TARGET, "red2": (740.0, 1600.0)}, obstacles, R).kind in (PARTIAL, TOTAL)
    assert snooker_call(CUE, {"red1": TARGET}, obstacles, R).kind == TOTAL


def test_art_9_through_the_referee_a_knuckle_snooker_after_a_foul_gives_a_free_ball():
    lay = {c: SPOT[c] for c in ("yellow", "green", "brown", "blue", "pink", "black")}
    lay.update({"red1": (40.0, 800.0), "cue": (700.0, 1200.0)})
    v = Game(lay).shot("green", cue_to=JAWS)
    assert v["foul"]["penalty"] == 4 and v["snooker"] == "total" and v["free_ball_offered"]


def test_art_9_through_the_referee_a_near_miss_is_no_snooker():
    cue_end = (300.0, 1000.0)
    red = (300.0, 2000.0)
    near = beside_edge(cue_end, red, 1, 0.5)
    lay = {c: SPOT[c] for c in ("yellow", "green", "brown", "pink", "black")}
    lay.update({"red1": red, "blue": near, "cue": (300.0, 700.0)})
    v = Game(lay).shot("red1", cue_to=cue_end)  # a fair shot
    assert v["foul"] is None and v["snooker"] is None
    lay["blue"] = beside_edge(cue_end, red, 1, -0.5)
    v = Game(lay).shot("red1", cue_to=cue_end)
    assert v["snooker"] == "partial"


def _sampled(cue, target, obstacles, n=4000):
    """Brute force: sample the fan of directions; True where the cue ball reaches the ball on first."""
    dx, dy = target[0] - cue[0], target[1] - cue[1]
    d = math.hypot(dx, dy)
    phi, alpha = math.atan2(dy, dx), math.asin(2 * R / d)
    out = []
    for i in range(1, n):
        a = phi - alpha + 2 * alpha * i / n
        u = (math.cos(a), math.sin(a))
        b = u[0] * dx + u[1] * dy
        s_t = b - math.sqrt(max(0.0, b * b - d * d + 4 * R * R))
        clear = True
        for ob in obstacles:
            wx, wy = ob.at[0] - cue[0], ob.at[1] - cue[1]
            bb = u[0] * wx + u[1] * wy
            cc = wx * wx + wy * wy - ob.reach ** 2
            disc = bb * bb - cc
            if bb > 0 and disc > 0 and bb - math.sqrt(disc) < s_t:
                clear = False
                break
        out.append(clear)
    return out


coord = st.floats(min_value=-250.0, max_value=250.0, allow_nan=False)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(coord, st.floats(min_value=100.0, max_value=900.0)), min_size=1, max_size=3))
def test_art_9_exact_call_agrees_with_sampling(offsets):
    obs = balls(**{f"o{i}": (700.0 + dx, 500.0 + dy) for i, (dx, dy) in enumerate(offsets)
                   if math.hypot(dx, 1000.0 - dy) > 2 * R and math.hypot(dx, dy) > 2 * R})
    call = reach_target(CUE, TARGET, obs, R)
    samples = _sampled(CUE, TARGET, obs)
    if any(samples):
        assert call.kind in (NONE, PARTIAL)
    if call.kind == TOTAL:
        assert not any(samples)
    if call.kind == NONE:
        assert samples[0] or samples[-1]  # near both edges the path is clear


@settings(max_examples=100, deadline=None)
@given(coord, st.floats(min_value=100.0, max_value=900.0))
def test_art_9_removing_an_obstacle_never_worsens_the_snooker(dx, dy):
    rank = {NONE: 0, PARTIAL: 1, TOTAL: 2}
    one = balls(blue=(700.0 + dx, 500.0 + dy))
    two = one + balls(pink=(700.0 - dx / 2, 500.0 + dy / 2 + 60.0))
    if any(math.dist(o.at, CUE) <= 2 * R or math.dist(o.at, TARGET) <= 2 * R for o in two):
        return
    assert rank[reach_target(CUE, TARGET, one, R).kind] <= rank[reach_target(CUE, TARGET, two, R).kind]


# --- the D (Art. 17.3) and the re-spot search (Art. 27-29) ----------------------------------------------------------

def test_art_17_3_the_d_and_its_line():
    assert in_d(T, (W / 2, BAULK - 10.0))
    assert in_d(T, (W / 2 - D_RADIUS, BAULK))  # on the line
    assert not in_d(T, (W / 2, BAULK + 5.0))
    assert not in_d(T, (W / 2 + D_RADIUS, BAULK - 60.0))
    assert in_d(T, (W / 2, BAULK + 1.0), margin=1.5)


def test_art_27_the_own_spot_when_free():
    assert respot_point("blue", T, [(100.0, 100.0)]) == SPOT["blue"]


def test_art_27_a_spot_touched_by_a_ball_is_taken_and_a_ball_just_clear_leaves_it_free():
    near = (SPOT["black"][0] + 2 * R - 0.5, SPOT["black"][1])
    assert respot_point("black", T, [near]) == SPOT["pink"]
    clear = (SPOT["black"][0] + 2 * R + 0.5, SPOT["black"][1])
    assert respot_point("black", T, [clear]) == SPOT["black"]


def test_art_28_the_nearest_point_upwards_with_a_row_of_balls():
    others = [SPOT[c] for c in SPOT] + [(W / 2, SPOT["black"][1] + 2 * R + 10.0)]
    p = respot_point("black", T, others, higher_only=False)
    # Every spot taken (a ball on each): up the long axis from the black's spot, past the ball on it and the one
    # 2R + 10 above it, to the first point touching neither.
    assert p[0] == W / 2 and p[1] == pytest.approx(SPOT["black"][1] + 4 * R + 10.0)
    assert all(math.dist(p, o) >= 2 * R - 1e-6 for o in others)
    assert p[1] <= L - R
