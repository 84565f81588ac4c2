"""What the page shows, as JSON: the scoreboard display's own content (device.scoreboard), not a second copy.

The device display and the phones must never disagree, so the lines, tiles and re-spot instructions are those
``device.scoreboard`` computes for its image; only the drawing differs (HTML instead of OpenCV).
"""

from __future__ import annotations

from typing import Any, Mapping

from rules.tables import TableSpec

from .. import scoreboard as sb

# The display's colours, named for CSS classes.
_KINDS = {sb.FOUL: "foul", sb.GOOD: "good", sb.ACCENT: "accent", sb.DIM: "dim", sb.TEXT: "text"}


def board_state(discipline: str, players: tuple[str, str], summary: Mapping[str, Any],
                verdict: Mapping[str, Any] | None, table: TableSpec, *, seq: int, version: int,
                has_diagram: bool, status: str | None = None) -> dict[str, Any]:
    """The page's JSON: the raw summary and verdict, plus the scoreboard's lines ready to print."""
    view = sb.view_for(discipline, players, summary, verdict, table, status=status)
    shooter = sb.next_shooter(view)
    score = summary.get("score") if isinstance(summary.get("score"), Mapping) else {}
    sides = [{"side": side, "name": players[i], "score": score.get(side, 0), "shooting": side == shooter,
              "stats": [[label, value] for label, value in sb.side_stats(view, side)]}
             for i, side in enumerate(sb.SIDES)]
    return {
        "version": version,
        "seq": seq,
        "discipline": discipline,
        "title": sb.TITLES.get(discipline, discipline.replace("_", " ").upper()),
        "status": status,
        "sides": sides,
        "centre": [[label, value] for label, value in sb.centre_stats(view)],
        "lines": [{"text": text, "kind": _KINDS.get(colour, "text")} for text, colour in sb.verdict_lines(view)],
        "respot": sb.respot_lines(view),
        "announce": [str(a) for a in (verdict or {}).get("announce") or []],
        "summary": dict(summary),
        "verdict": None if verdict is None else dict(verdict),
        "has_diagram": has_diagram,
        "match_over": bool(summary.get("match_over")),
    }
