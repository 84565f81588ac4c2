"""The scoreboard: the match as it stands, drawn with OpenCV into an image the size of the display.

Made to be read from across the room: two player panels with the scores as large as the panel allows, the
shooter's panel lit, a few statistics per discipline family, the last verdict (points, the foul with its article,
the reason, the referee's announcements), and the re-spot instructions next to a small diagram of the table drawn
to scale from its preset. It renders what the verdict and the match summary hold: a field a referee does not
provide is simply not shown, so new referees' extra fields appear as they are added to the lists below.

Hershey fonts are ASCII only: names and texts are transliterated (José -> Jose) rather than drawn as '?'.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import cv2
import numpy as np

from rules.balls import CAROM_DISCIPLINES
from rules.tables import TableSpec

FONT = cv2.FONT_HERSHEY_DUPLEX
AA = cv2.LINE_AA

# BGR
BACKGROUND = (18, 18, 18)
PANEL = (48, 44, 40)
PANEL_ACTIVE = (70, 60, 30)
ACCENT = (0, 200, 255)  # amber: the shooter, a pending confirmation
TEXT = (245, 245, 245)
DIM = (175, 175, 175)
FOUL = (70, 70, 255)
GOOD = (100, 230, 100)
CLOTH_CAROM = (140, 90, 20)
CLOTH_POCKET = (60, 120, 20)
RAIL = (30, 50, 90)

SIDES = ("A", "B")


@dataclass(frozen=True)
class BoardView:
    """Everything the scoreboard shows; the verdict and summary are the referee's JSON objects."""

    discipline: str
    players: tuple[str, str]
    summary: Mapping[str, Any]
    verdict: Mapping[str, Any] | None
    table: TableSpec
    status: str | None = None  # a banner: "CAMERA LOST", "NOT REFEREED", ...
    confirm_pending: bool = False  # the verdict asks for confirmation and nobody has given it yet


def family(discipline: str) -> str:
    return "carom" if discipline in CAROM_DISCIPLINES else discipline


TITLES = {
    "free_game": "FREE GAME", "balkline_47_2": "BALKLINE 47/2", "balkline_47_1": "BALKLINE 47/1",
    "balkline_71_2": "BALKLINE 71/2", "balkline_71_1": "BALKLINE 71/1", "one_cushion": "ONE CUSHION",
    "three_cushion": "THREE CUSHION", "sinuca": "SINUCA", "bilhar": "BILHAR", "chapo": "CHAPO",
}

REASONS = {
    "no_carom": "no carom", "cushions": "not enough cushions", "zone": "restricted zone",
    "equalising_inning": "equalising inning", "distance": "distance reached",
}


# --- text -------------------------------------------------------------------------------------------------------

_SPECIAL = {"ß": "ss", "æ": "ae", "Æ": "AE", "ø": "o", "Ø": "O", "œ": "oe", "Œ": "OE", "ł": "l", "Ł": "L",
            "đ": "d", "Đ": "D", "þ": "th", "–": "-", "—": "-", "‘": "'", "’": "'", "“": '"', "”": '"',
            "·": "-", "…": "..."}


def ascii_text(text: str) -> str:
    """Accents dropped (José -> Jose, Conceição -> Conceicao), a few letters spelt out, anything else '?'."""
    out = []
    for ch in unicodedata.normalize("NFKD", str(text)):
        if unicodedata.combining(ch):
            continue
        if ord(ch) < 128:
            out.append(ch)
        else:
            out.append(_SPECIAL.get(ch, "?"))
    return "".join(out)


def _text_size(text: str, scale: float, thickness: int) -> tuple[int, int]:
    (w, h), _ = cv2.getTextSize(text, FONT, scale, thickness)
    return w, h


def fit_scale(text: str, max_w: float, max_h: float, thickness: int = 1) -> float:
    """The largest font scale at which ``text`` fits in the box (cap height ``max_h``)."""
    w, h = _text_size(text or " ", 1.0, thickness)
    return max(0.1, min(max_w / max(w, 1), max_h / max(h, 1)))


def put_text(img: np.ndarray, text: str, box: tuple[float, float, float, float], colour: tuple[int, int, int],
             *, align: str = "left", weight: float = 0.08, max_scale: float | None = None) -> float:
    """Draw ``text`` as large as it fits in ``box`` (x, y, w, h), vertically centred; returns the scale used.

    ``weight`` sets the stroke thickness relative to the cap height: heavy strokes read better from afar.
    """
    text = ascii_text(text)
    x, y, w, h = box
    thickness = max(1, int(round(h * weight)))
    scale = fit_scale(text, w, h, thickness)
    if max_scale is not None:
        scale = min(scale, max_scale)
    tw, th = _text_size(text, scale, thickness)
    if align == "center":
        x = x + (w - tw) / 2
    elif align == "right":
        x = x + w - tw
    baseline_y = y + (h + th) / 2
    cv2.putText(img, text, (int(round(x)), int(round(baseline_y))), FONT, scale, colour, thickness, AA)
    return scale


def _rect(img: np.ndarray, box: tuple[float, float, float, float], colour: tuple[int, int, int],
          thickness: int = -1) -> None:
    x, y, w, h = (int(round(v)) for v in box)
    cv2.rectangle(img, (x, y), (x + w, y + h), colour, thickness, AA)


# --- what each family shows -------------------------------------------------------------------------------------

def _side_value(summary: Mapping[str, Any], verdict: Mapping[str, Any] | None, key: str, side: str) -> Any:
    for source in (summary, verdict or {}):
        v = source.get(key)
        if isinstance(v, Mapping) and side in v:
            return v[side]
    return None


def _first(summary: Mapping[str, Any], verdict: Mapping[str, Any] | None, *keys: str) -> Any:
    """The first of ``keys`` found in the verdict, its ``table`` block (sinuca's remaining/lead), or the summary."""
    v = verdict or {}
    nested = v.get("table") if isinstance(v.get("table"), Mapping) else {}
    for key in keys:
        for source in (v, nested, summary):
            if source.get(key) is not None:
                return source[key]
    return None


def _clock(seconds: float) -> str:
    s = max(0, int(round(seconds)))
    return f"{s // 60}:{s % 60:02d}"


def _group(g: Any) -> str:
    return {"low": "1-7", "high": "9-15"}.get(g, "open") if g is None or isinstance(g, str) else str(g)


def side_stats(view: BoardView, side: str) -> list[tuple[str, str]]:
    """(label, value) tiles under a player's score, only those the referee provides."""
    s, v = view.summary, view.verdict
    fam = family(view.discipline)
    shooting = next_shooter(view) == side
    tiles: list[tuple[str, str]] = []

    def add(label: str, value: Any, fmt: str = "{}") -> None:
        if value is not None:
            tiles.append((label, fmt.format(value)))

    if fam == "carom":
        add("INNINGS", _side_value(s, v, "innings", side))
        # The run belongs to the inning being played: the other side's tile shows a dash, keeping the columns.
        add("RUN", s.get("run", 0) if shooting else "-")
        add("HIGH RUN", _side_value(s, v, "high_run", side))
        avg = _side_value(s, v, "average", side)
        add("AVERAGE", None if avg is None else f"{float(avg):.3f}")
    elif fam == "sinuca":
        add("FRAMES", _side_value(s, v, "frames", side))
        brk = _first(s, v, "break", "run")
        add("BREAK", None if brk is None else brk if shooting else "-")
        add("HIGH BREAK", _side_value(s, v, "high_break", side))
        add("FOULS", _side_value(s, v, "fouls", side))
    elif fam == "bilhar":
        groups = _side_value(s, v, "groups", side)
        add("GROUP", _group(groups) if "groups" in s or (v and "groups" in v) else None)
        add("BALLS LEFT", _side_value(s, v, "balls_left", side))
        add("FOULS", _side_value(s, v, "fouls", side))
    elif fam == "chapo":
        add("GAMES", _side_value(s, v, "games", side))
        add("FOULS", _side_value(s, v, "fouls", side))
    return tiles[:4]


def centre_stats(view: BoardView) -> list[tuple[str, str]]:
    """Match-wide figures shown in the header: the distance, the ball on, the clock, ..."""
    s, v = view.summary, view.verdict
    fam = family(view.discipline)
    out: list[tuple[str, str]] = []
    if fam in ("carom", "chapo") and s.get("distance") is not None:
        out.append(("TO", str(s["distance"])))
    if fam == "chapo" and _first(s, v, "game") is not None and s.get("games_to_play", 1) != 1:
        out.append(("GAME", f"{_first(s, v, 'game')} OF {s.get('games_to_play')}"))
    if fam == "sinuca":
        ball_on = _first(s, v, "ball_on", "on")
        if ball_on is not None:
            out.append(("ON", str(ball_on).upper() if not isinstance(ball_on, list) else " / ".join(ball_on)))
        remaining = _first(s, v, "remaining", "points_remaining")
        if remaining is not None:
            out.append(("REMAINING", str(remaining)))
        lead = _first(s, v, "lead")
        score = s.get("score") or {}
        if lead is None and isinstance(score, Mapping) and set(SIDES) <= set(score):
            lead = abs(int(score["A"]) - int(score["B"]))
        if lead is not None:
            out.append(("LEAD", str(lead)))
        if _first(s, v, "snookers_required"):
            out.append(("SNOOKERS", str(_first(s, v, "snookers_required"))))
        if _first(s, v, "free_ball_offered"):
            out.append(("", "FREE BALL"))
    if fam == "bilhar":
        left = _first(s, v, "time_left")
        if left is not None:
            out.append(("CLOCK", _clock(float(left))))
        if _first(s, v, "sudden_death"):
            out.append(("", "SUDDEN DEATH"))
    return out


def next_shooter(view: BoardView) -> str | None:
    s, v = view.summary, view.verdict
    nxt = s.get("next")
    if isinstance(nxt, Mapping) and nxt.get("shooter") in SIDES:
        return str(nxt["shooter"])
    for source in (v or {}, s):
        for key in ("next_shooter", "to_play", "turn_of", "shooter_next"):
            if source.get(key) in SIDES:
                return str(source[key])
    if v and v.get("shooter") in SIDES:
        return str(v["shooter"]) if v.get("turn") == "keeps" else ("B" if v["shooter"] == "A" else "A")
    return "A"


def _name(view: BoardView, side: str | None) -> str:
    if side not in SIDES:
        return str(side)
    return view.players[SIDES.index(side)]


def verdict_lines(view: BoardView, fits: Callable[[str], bool] | None = None, max_lines: int = 4
                  ) -> list[tuple[str, tuple[int, int, int]]]:
    """The last verdict in at most ``max_lines`` lines: what happened, why, the calls, and the end of the game.

    ``fits`` says whether a line is legible at the board's line size; the calls are then wrapped over as many
    lines as that takes (and as are left), instead of one line shrunk until nobody can read it.
    """
    v = view.verdict
    if not v:
        return [("Waiting for the first shot", DIM)]
    lines: list[tuple[str, tuple[int, int, int]]] = []
    shooter = v.get("shooter")
    foul = v.get("foul")
    points = v.get("points") or {}
    if foul:
        art = foul.get("article")
        text = f"FOUL {str(foul.get('code', '')).replace('_', ' ')}"
        if art:
            text += f"  {art}" if "art" in str(art).lower() else f"  Art. {art}"
        lines.append((text, FOUL))
        if foul.get("penalty"):
            lines.append((f"penalty {foul['penalty']} to {_name(view, foul.get('to'))}", FOUL))
    else:
        won = points.get(shooter, 0) if isinstance(points, Mapping) else 0
        if won:
            lines.append((f"{_name(view, shooter)}  +{won}", GOOD))
        else:
            lines.append((f"{_name(view, shooter)}  no score", TEXT))
    reason = v.get("reason")
    if reason and not (foul and reason == foul.get("code")):
        lines.append((REASONS.get(reason, str(reason).replace("_", " ")), DIM))
    removes = v.get("remove") or []
    if removes:
        by = foul.get("to") if foul else None
        who = f"{_name(view, by)} removes" if by in SIDES else "remove"
        lines.append((f"{who} ball " + ", ".join(map(str, removes)), ACCENT))
    pins = _pins_down(v)
    if pins:
        lines.append(("pins down: " + ", ".join(p.replace("lat_", "") for p in pins), TEXT))
    # A call that repeats the removal line (bilhar's "B removes 9 (...)") is left out.
    announce = [str(a) for a in v.get("announce") or [] if a and not (removes and "remove" in str(a))]
    end: list[tuple[str, tuple[int, int, int]]] = []
    if v.get("game_over"):
        winner = view.summary.get("winner") or v.get("winner") or view.summary.get("frame_winner")
        end.append(("GAME OVER" + (f"  -  {_name(view, winner)} wins" if winner in SIDES else ""), ACCENT))
    room = max(0, max_lines - len(lines) - len(end))
    lines += [(c, ACCENT) for c in _calls(announce, fits, room)]
    return (lines + end)[:max_lines]


SEP = "  -  "


def _calls(items: Sequence[str], fits: Callable[[str], bool] | None, room: int) -> list[str]:
    """The calls on at most ``room`` lines; past that the last line ends with how many more there were."""
    if not items or room <= 0:
        return []
    if fits is None:
        return [SEP.join(items)]
    rows: list[list[str]] = []
    for item in items:
        if rows and fits(SEP.join(rows[-1] + [item])):
            rows[-1].append(item)
        else:
            rows.append([item])
    if len(rows) <= room:
        return [SEP.join(r) for r in rows]
    rest = [item for r in rows[room - 1:] for item in r]
    taken = [rest[0]]  # at least one, shrunk if it must be
    for item in rest[1:]:
        if not fits(SEP.join(taken + [item]) + f"  (+{len(rest) - len(taken) - 1})"):
            break
        taken.append(item)
    more = len(rest) - len(taken)
    return [SEP.join(r) for r in rows[:room - 1]] + [SEP.join(taken) + (f"  (+{more})" if more else "")]


def _spot_name(table: TableSpec, at: Sequence[float]) -> str | None:
    for name, (x, y) in table.spots.items():
        if abs(x - at[0]) <= 1.0 and abs(y - at[1]) <= 1.0:
            return name.replace("_", " ")
    return None


def respot_lines(view: BoardView) -> list[str]:
    """One short instruction per ball to put back: "red: top spot", "brown: own spot", "9: 635, 1905 mm"."""
    out = []
    for r in (view.verdict or {}).get("respot") or []:
        ball, at = str(r.get("ball")), r.get("at") or [0, 0]
        where = _spot_name(view.table, at)
        if where is None:
            out.append(f"{ball}: {at[0]:.0f}, {at[1]:.0f} mm")
        else:
            out.append(f"{ball}: {'own' if where == ball else where} spot")
    return out


# --- the table diagram ------------------------------------------------------------------------------------------

BALL_COLOURS: Mapping[str, tuple[int, int, int]] = {
    "white": (235, 235, 235), "spot": (40, 215, 255), "red": (40, 40, 225), "cue": (235, 235, 235),
    "yellow": (40, 215, 255), "green": (40, 150, 20), "brown": (30, 75, 140), "blue": (200, 90, 20),
    "pink": (190, 130, 255), "black": (25, 25, 25), "mingo": (40, 40, 225), "1": (235, 235, 235),
    "2": (40, 215, 255),
}
POOL_COLOURS = {1: (40, 215, 255), 2: (200, 90, 20), 3: (40, 40, 225), 4: (130, 40, 110), 5: (30, 130, 255),
                6: (40, 150, 20), 7: (30, 30, 130)}


def ball_colour(discipline: str, ball: str) -> tuple[tuple[int, int, int], bool]:
    """The ball's colour and whether it is a stripe (bilhar 9-15)."""
    if discipline == "bilhar" and ball.isdigit():
        n = int(ball)
        return POOL_COLOURS.get(n if n < 8 else n - 8, (200, 200, 200)), n > 8
    if ball.startswith("red"):
        return BALL_COLOURS["red"], False
    return BALL_COLOURS.get(ball, (200, 200, 200)), False


def draw_table(img: np.ndarray, box: tuple[float, float, float, float], view: BoardView) -> None:
    """The table to scale, long axis across the screen (the bottom cushion on the left), with the re-spots."""
    table = view.table
    x0, y0, bw, bh = box
    rail = max(4.0, bh * 0.06)
    scale = min((bw - 2 * rail) / table.length, (bh - 2 * rail) / table.width)
    tw, th = table.length * scale, table.width * scale
    ox, oy = x0 + (bw - tw) / 2, y0 + (bh - th) / 2

    def px(p: Sequence[float]) -> tuple[int, int]:
        # table x (across, left cushion x=0) runs down the screen, y (along) runs right
        return int(round(ox + p[1] * scale)), int(round(oy + p[0] * scale))

    _rect(img, (ox - rail, oy - rail, tw + 2 * rail, th + 2 * rail), RAIL)
    _rect(img, (ox, oy, tw, th), CLOTH_POCKET if table.pockets else CLOTH_CAROM)
    for d in table.diamonds:
        cx, cy = px(d)
        # diamonds sit on the rail, just outside the cushion nose
        cx += int(-rail / 2 if d[1] == 0 else rail / 2 if d[1] == table.length else 0)
        cy += int(-rail / 2 if d[0] == 0 else rail / 2 if d[0] == table.width else 0)
        cv2.circle(img, (cx, cy), max(1, int(rail / 5)), (220, 230, 240), -1, AA)
    for pocket in table.pockets:
        cv2.circle(img, px(pocket.drop), max(3, int(pocket.mouth * scale / 2)), (10, 10, 10), -1, AA)
    for name, spot in table.spots.items():
        if name.startswith("aux_") or name.startswith("mingo_"):
            continue
        cx, cy = px(spot)
        cv2.drawMarker(img, (cx, cy), (200, 200, 200), cv2.MARKER_CROSS, max(4, int(bh * 0.05)), 1, AA)
    if family(view.discipline) == "chapo":
        down = set(_pins_down(view.verdict))
        r_pin = max(2, int(round(scale * 25)))  # drawn larger than the 11.5 mm base, or it would vanish
        for pin in ("king", "lat_top", "lat_bottom", "lat_left", "lat_right"):
            if pin in table.spots:
                c = px(table.spots[pin])
                if pin in down:
                    cv2.drawMarker(img, c, FOUL, cv2.MARKER_TILTED_CROSS, 2 * r_pin + 2, 2, AA)
                else:
                    cv2.circle(img, c, r_pin, (250, 250, 250), -1, AA)
    radius = max(3, int(round(table.ball_radius * scale)))
    for r in (view.verdict or {}).get("respot") or []:
        at = r.get("at")
        if not at:
            continue
        colour, stripe = ball_colour(view.discipline, str(r.get("ball")))
        centre = px(at)
        cv2.circle(img, centre, radius + 2, ACCENT, 2, AA)
        cv2.circle(img, centre, radius, colour, -1, AA)
        if stripe:
            cv2.circle(img, centre, max(1, radius // 2), (235, 235, 235), -1, AA)


def _pins_down(verdict: Mapping[str, Any] | None) -> list[str]:
    if not verdict:
        return []
    for key in ("pins_down", "pins"):
        pins = verdict.get(key)
        if isinstance(pins, list):
            return [str(p) for p in pins]
        if isinstance(pins, Mapping):
            return [str(p) for p, down in pins.items() if down]
    return []


# --- the whole board --------------------------------------------------------------------------------------------

def render(view: BoardView, size: tuple[int, int] = (800, 480)) -> np.ndarray:
    """The scoreboard as a BGR image of ``size`` (width, height)."""
    W, H = size
    img = np.full((H, W, 3), BACKGROUND, np.uint8)
    u = H / 480.0  # layout unit: the design is for 480 lines and scales with the panel
    m = 10 * u

    # Header: the game, the distance or clock, the status.
    header_h = 52 * u
    title = TITLES.get(view.discipline, view.discipline.upper())
    put_text(img, title, (m, m * 0.6, W * 0.42, header_h - m), TEXT, weight=0.09)
    centre = "   ".join(f"{label} {value}".strip() for label, value in centre_stats(view))
    if centre:
        put_text(img, centre, (W * 0.45, m * 0.9, W * 0.55 - m, header_h - 1.6 * m), ACCENT, align="right",
                 weight=0.09)

    # The two players.
    top = header_h + 6 * u
    panel_h = 250 * u
    gap = m
    panel_w = (W - 2 * m - gap) / 2
    shooter = next_shooter(view)
    game_over = bool(view.summary.get("game_over"))
    for i, side in enumerate(SIDES):
        x = m + i * (panel_w + gap)
        active = side == shooter and not game_over
        _rect(img, (x, top, panel_w, panel_h), PANEL_ACTIVE if active else PANEL)
        if active:
            _rect(img, (x, top, panel_w, 7 * u), ACCENT)
            tri = np.array([[x + 14 * u, top + 24 * u], [x + 14 * u, top + 50 * u], [x + 34 * u, top + 37 * u]],
                           np.int32)
            cv2.fillPoly(img, [tri], ACCENT, AA)
        name_x = x + (42 if active else 14) * u
        put_text(img, view.players[i], (name_x, top + 16 * u, x + panel_w - name_x - 12 * u, 42 * u), TEXT,
                 weight=0.09)
        score = _side_value(view.summary, view.verdict, "score", side)
        put_text(img, "-" if score is None else str(score), (x + 10 * u, top + 68 * u, panel_w - 20 * u, 116 * u),
                 TEXT, align="center", weight=0.1)
        tiles = side_stats(view, side)
        if tiles:
            tw = (panel_w - 20 * u) / len(tiles)
            for k, (label, value) in enumerate(tiles):
                tx = x + 10 * u + k * tw
                put_text(img, label, (tx, top + 192 * u, tw - 6 * u, 15 * u), DIM, align="center", weight=0.1)
                put_text(img, value, (tx, top + 212 * u, tw - 6 * u, 30 * u), TEXT, align="center", weight=0.09)

    # The last verdict, and the table with the re-spots.
    by = top + panel_h + m
    bh = H - by - m
    table_w = min(W * 0.42, bh * 2.1)
    vw = W - 3 * m - table_w
    _rect(img, (m, by, vw, bh), PANEL)
    line_h = min(34 * u, (bh - 12 * u) / 4)
    legible = line_h * 0.72  # the cap height a line is drawn at

    def fits(text: str) -> bool:
        thickness = max(1, int(round(legible * 0.09)))
        return fit_scale(ascii_text(text), vw - 24 * u, legible, thickness) >= \
            fit_scale("Mg", 10_000, legible, thickness) * 0.999  # full height: not shrunk to fit the width

    lines = verdict_lines(view, fits)
    respots = respot_lines(view)
    for k, (text, colour) in enumerate(lines):
        put_text(img, text, (m + 12 * u, by + 8 * u + k * line_h, vw - 24 * u, line_h * 0.72), colour,
                 weight=0.09)
    tx = W - m - table_w
    if respots:
        # Two instructions a line under the diagram, which keeps most of the height.
        rows = [" / ".join(respots[i:i + 2]) for i in range(0, len(respots), 2)]
        list_h = min(22 * u, bh * 0.3 / len(rows))
        diag_h = bh - list_h * len(rows) - 2 * u
        draw_table(img, (tx, by, table_w, diag_h), view)
        for k, text in enumerate(rows):
            put_text(img, text, (tx, by + diag_h + 2 * u + k * list_h, table_w, list_h * 0.72), ACCENT,
                     align="center", weight=0.09)
    else:
        draw_table(img, (tx, by, table_w, bh), view)

    # Banners over everything: a pending confirmation, a lost camera.
    if view.confirm_pending and not view.status:
        _banner(img, "CONFIRM THE CALL", ACCENT, (0, 0, 0), u)
    if view.status:
        _banner(img, view.status, FOUL, (255, 255, 255), u)
    return img


def _banner(img: np.ndarray, text: str, colour: tuple[int, int, int], ink: tuple[int, int, int], u: float) -> None:
    H, W = img.shape[:2]
    h = 64 * u
    y = (H - h) / 2 - 60 * u
    _rect(img, (0, y, W, h), colour)
    put_text(img, text, (20 * u, y + 10 * u, W - 40 * u, h - 20 * u), ink, align="center", weight=0.1)


def view_for(discipline: str, players: tuple[str, str], summary: Mapping[str, Any],
             verdict: Mapping[str, Any] | None, table: TableSpec, *, status: str | None = None,
             acknowledged: bool = False) -> BoardView:
    return BoardView(discipline, players, summary, verdict, table, status,
                     confirm_pending=bool(verdict and verdict.get("confirm")) and not acknowledged)
