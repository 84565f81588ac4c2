"""Ball and pin ids of each discipline (DESIGN.md section 2)."""

from __future__ import annotations

CAROM_DISCIPLINES = (
    "free_game", "balkline_47_2", "balkline_47_1", "balkline_71_2", "balkline_71_1", "one_cushion", "three_cushion",
)
DISCIPLINES = CAROM_DISCIPLINES + ("sinuca", "bilhar", "chapo")

CAROM_BALLS = ("white", "spot", "red")
SNOOKER_COLOURS = ("yellow", "green", "brown", "blue", "pink", "black")
SNOOKER_VALUES = {"yellow": 2, "green": 3, "brown": 4, "blue": 5, "pink": 6, "black": 7}
MAX_REDS = 15
BILHAR_LOW = tuple(str(n) for n in range(1, 8))
BILHAR_HIGH = tuple(str(n) for n in range(9, 16))
CHAPO_BALLS = ("1", "2", "mingo")
CHAPO_PINS = ("king", "lat_top", "lat_bottom", "lat_left", "lat_right")


def snooker_reds(n: int = MAX_REDS) -> tuple[str, ...]:
    return tuple(f"red{i}" for i in range(1, n + 1))


def ball_ids(discipline: str) -> frozenset[str]:
    """Every ball id a record of this discipline may name (snooker: up to 15 reds, whatever the option)."""
    if discipline in CAROM_DISCIPLINES:
        return frozenset(CAROM_BALLS)
    if discipline == "sinuca":
        return frozenset(("cue",) + snooker_reds() + SNOOKER_COLOURS)
    if discipline == "bilhar":
        return frozenset(("cue",) + BILHAR_LOW + BILHAR_HIGH)
    if discipline == "chapo":
        return frozenset(CHAPO_BALLS)
    raise KeyError(discipline)


def pin_ids(discipline: str) -> frozenset[str]:
    return frozenset(CHAPO_PINS) if discipline == "chapo" else frozenset()
