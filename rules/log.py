"""Reading a match log: JSON lines of Shot records and control records, each validated and labelled."""

from __future__ import annotations

import json
from typing import Iterable, Iterator

from .controls import Control
from .errors import LogError
from .match import Record
from .shot import Shot
from .tables import TableSpec


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number")


def parse_record(line: str, label: str, discipline: str, table: TableSpec) -> Record:
    try:
        obj = json.loads(line, parse_constant=_reject_constant)
    except ValueError as exc:
        raise LogError(label, None, f"not valid JSON ({exc})") from None
    if not isinstance(obj, dict):
        raise LogError(label, None, "a record must be a JSON object")
    if "control" in obj:
        return Control.from_dict(obj, discipline=discipline, table=table, record=label)
    return Shot.from_dict(obj, discipline=discipline, table=table, record=label)


def read_log(lines: Iterable[str], discipline: str, table: TableSpec, source: str = "log"
             ) -> Iterator[tuple[str, Record]]:
    """Yield ``(label, record)`` for each non-blank line; the label names the source and line for errors."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        label = f"{source} line {number}"
        yield label, parse_record(line, label, discipline, table)


def write_log(records: Iterable[Record]) -> str:
    return "".join(json.dumps(r.to_dict(), separators=(",", ":")) + "\n" for r in records)
