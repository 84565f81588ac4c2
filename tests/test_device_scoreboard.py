"""The scoreboard renderer: every family at both panel sizes, what it shows, and what it does with little."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rules.tables import preset
from device import scoreboard_demo
from device.scoreboard import (
    ACCENT, BACKGROUND, BoardView, ascii_text, centre_stats, draw_table, render, respot_lines, side_stats,
    verdict_lines, view_for,
)

VIEWS = {
    "carom": scoreboard_demo.carom_view,
    "sinuca": scoreboard_demo.sinuca_view,
    "bilhar": scoreboard_demo.bilhar_view,
    "chapo": scoreboard_demo.chapo_view,
}


@pytest.mark.parametrize("family", list(VIEWS))
@pytest.mark.parametrize("size", [(800, 480), (1024, 600)])
def test_every_family_renders_at_the_display_size(family: str, size: tuple[int, int]) -> None:
    img = render(VIEWS[family](), size)
    assert img.shape == (size[1], size[0], 3) and img.dtype == np.uint8
    assert (img != BACKGROUND).any(axis=2).mean() > 0.3  # panels and text, not an empty board


def test_names_are_transliterated_not_question_marks() -> None:
    assert ascii_text("José Águas") == "Jose Aguas"
    assert ascii_text("Conceição Güell Íñigo") == "Conceicao Guell Inigo"
    assert ascii_text("Straße Øre Łukasz") == "Strasse Ore Lukasz"
    assert ascii_text("张伟") == "??"


def test_carom_shows_innings_run_high_run_and_average_and_the_calls() -> None:
    view = VIEWS["carom"]()
    a, b = (dict(side_stats(view, s)) for s in "AB")
    assert a == {"INNINGS": "26", "RUN": "-", "HIGH RUN": "3", "AVERAGE": "0.577"}
    assert b["RUN"] == "0" and b["INNINGS"] == "25"  # B is playing the equalising inning
    assert ("TO", "15") in centre_stats(view)
    texts = [t for t, _ in verdict_lines(view)]
    assert texts[0] == "José Águas  +1"
    assert "equalising inning" in texts
    assert any("igualar entradas" in t and "por 1" in t for t in texts)
    assert respot_lines(view) == ["red: top spot", "spot: bottom spot", "white: start right spot"]


def test_sinuca_shows_ball_on_remaining_and_lead_and_the_foul_with_its_article() -> None:
    view = VIEWS["sinuca"]()  # judged by the sinuca referee: a red, then a red hit with a colour on
    v = dict(view.verdict or {})
    info = v["table"]
    expected = [("ON", str(v["ball_on"]).upper()), ("REMAINING", str(info["remaining"])),
                ("LEAD", str(info["lead"]))] + ([("", "FREE BALL")] if v.get("free_ball_offered") else [])
    assert centre_stats(view) == expected
    foul = v["foul"]
    lines = [t for t, _ in verdict_lines(view)]
    assert lines[0] == f"FOUL {foul['code'].replace('_', ' ')}  {foul['article']}"
    assert lines[1] == f"penalty {foul['penalty']} to Beto Araújo"
    stats = dict(side_stats(view, "A"))
    assert list(stats) == ["FRAMES", "BREAK", "HIGH BREAK", "FOULS"] and stats["BREAK"] == "-"
    # a made-up layout of fields, to pin the formatting down independently of the referee's evolution
    made_up = {"shooter": "A", "points": {"A": 0, "B": 4}, "foul": {"code": "wrong_ball", "article": "41.14",
               "penalty": 4, "to": "B"}, "ball_on": "yellow", "table": {"remaining": 27, "lead": 3},
               "free_ball_offered": True, "respot": [{"ball": "brown", "at": list(view.table.spots["brown"])},
                                                     {"ball": "red1", "at": [100.0, 200.0]}]}
    again = view_for("sinuca", view.players, {"score": {"A": 30, "B": 33}}, made_up, view.table)
    assert centre_stats(again) == [("ON", "YELLOW"), ("REMAINING", "27"), ("LEAD", "3"), ("", "FREE BALL")]
    assert [t for t, _ in verdict_lines(again)][:2] == ["FOUL wrong ball  Art. 41.14", "penalty 4 to Beto Araújo"]
    assert respot_lines(again) == ["brown: own spot", "red1: 100, 200 mm"]


def test_bilhar_shows_groups_balls_left_the_clock_and_the_ball_to_remove() -> None:
    view = VIEWS["bilhar"]()
    assert dict(side_stats(view, "A"))["GROUP"] == "1-7" and dict(side_stats(view, "B"))["GROUP"] == "9-15"
    assert dict(centre_stats(view))["CLOCK"] == "14:54"
    assert "Zé Maria removes ball 9" in [t for t, _ in verdict_lines(view)]


def test_chapo_shows_games_and_the_pins_down() -> None:
    view = VIEWS["chapo"]()
    assert dict(side_stats(view, "A"))["GAMES"] == "1"
    assert "pins down: king, left" in [t for t, _ in verdict_lines(view)]


def test_a_bare_verdict_from_a_new_referee_renders_what_is_there() -> None:
    bare = {"shot": 1, "shooter": "A", "points": {"A": 0, "B": 0}, "foul": None, "turn": "passes",
            "score": {"A": 0, "B": 0}, "respot": [], "announce": [], "game_over": False, "reason": None,
            "something_new": {"x": [1, 2]}}
    for discipline, table in (("sinuca", "sinuca_br"), ("chapo", "chapo"), ("bilhar", "pool_9ft")):
        view = view_for(discipline, ("Ana", "Rui"), {}, bare, preset(table))
        img = render(view)
        assert img.shape == (480, 800, 3)
        assert verdict_lines(view)[0][0] == "Ana  no score"
    empty = view_for("three_cushion", ("Ana", "Rui"), {"score": {"A": 0, "B": 0}}, None, preset("carom_match"))
    assert verdict_lines(empty)[0][0] == "Waiting for the first shot"
    render(empty, (1024, 600))


def test_the_shooter_panel_is_lit() -> None:
    view = VIEWS["carom"]()  # B to play
    img = render(view)
    bar_a = img[60:64, 20:380].reshape(-1, 3)
    bar_b = img[60:64, 420:780].reshape(-1, 3)
    assert (bar_b == ACCENT).all(axis=1).mean() > 0.9
    assert (bar_a == ACCENT).all(axis=1).mean() < 0.1


def test_a_very_long_name_is_shrunk_to_its_panel() -> None:
    view = view_for("three_cushion", ("Maximiliano Bartolomeu de Albuquerque e Vasconcelos", "Rui"),
                    {"score": {"A": 3, "B": 4}}, None, preset("carom_match"))
    img = render(view)
    gutter = img[60:300, 397:403]  # between the two panels
    assert (gutter == BACKGROUND).all()


def test_the_table_is_drawn_to_scale() -> None:
    for name in ("carom_match", "pool_9ft", "chapo", "snooker_full"):
        table = preset(name)
        img = np.zeros((300, 600, 3), np.uint8)
        view = view_for("three_cushion", ("a", "b"), {}, None, table)
        draw_table(img, (0, 0, 600, 300), view)
        cloth = np.all(img == img[100, 330], axis=2)  # the cloth colour, away from spots and pins
        rows, cols = np.nonzero(cloth)
        length_px, width_px = cols.max() - cols.min(), rows.max() - rows.min()
        assert length_px / width_px == pytest.approx(table.length / table.width, rel=0.03), name


def test_banners_for_a_lost_camera_and_a_pending_confirmation() -> None:
    base = VIEWS["carom"]()
    lost = BoardView(**{**base.__dict__, "status": "CAMERA LOST"})
    assert not np.array_equal(render(lost), render(base))
    verdict = dict(base.verdict or {}, confirm=True)
    asking = view_for(base.discipline, base.players, base.summary, verdict, base.table)
    assert asking.confirm_pending
    assert not view_for(base.discipline, base.players, base.summary, verdict, base.table,
                        acknowledged=True).confirm_pending


def test_the_demo_writes_one_png_per_family(tmp_path: Path) -> None:
    assert scoreboard_demo.main(["--out", str(tmp_path)]) == 0
    names = sorted(p.name for p in tmp_path.glob("*.png"))
    assert {"carom_800x480.png", "sinuca_800x480.png", "bilhar_800x480.png", "chapo_800x480.png"} <= set(names)


def test_many_calls_wrap_and_say_how_many_did_not_fit_rather_than_shrinking() -> None:
    base = VIEWS["carom"]()
    calls = ["fim da partida", "dentro", "a cavalo", "por 2", "igualar entradas", "uma chamada muito comprida"]
    verdict = dict(base.verdict or {}, announce=calls, game_over=True)
    view = view_for(base.discipline, base.players, base.summary, verdict, base.table)

    def fits(text: str) -> bool:
        return len(text) <= 24  # a stand-in for "legible at full line height"

    lines = [t for t, _ in verdict_lines(view, fits)]
    assert len(lines) == 4 and lines[-1].startswith("GAME OVER")
    shown = lines[2].split("  (+")[0].split("  -  ")
    hidden = int(lines[2].split("(+")[1].rstrip(")"))
    assert len(shown) + hidden == len(verdict["announce"])
    roomy = [t for t, _ in verdict_lines(view, lambda text: True)]
    assert roomy[2] == "  -  ".join(calls)  # all on one line when it fits
    render(view)
