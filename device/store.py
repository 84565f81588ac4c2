"""The match store: SQLite in WAL mode with synchronous=FULL, holding matches, players and each match's log.

The log is append-only and is exactly the match log of DESIGN.md section 5: one row per Shot or control record,
in order, the record's JSON as ``write_log`` writes it and, for a shot, its verdict's JSON. Nothing is rewritten
in place (triggers refuse UPDATE and DELETE on the log): an undo or an override is one more control record. A
match's state is never stored; it is the fold of its log, so reopening after a crash or a power cut re-judges the
log with the registry's referee and lands exactly where the last committed record left it.

Every record is committed in its own transaction before ``append`` returns; with synchronous=FULL the commit has
reached the disk (WAL fsync), so what the scoreboard showed is what a restart finds.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Callable, Mapping

from calibration.file import table_from_field, table_to_field
from rules.controls import Control
from rules.errors import LogError
from rules.log import parse_record
from rules.match import Match, Record, Referee
from rules.registry import referee_for
from rules.tables import DEFAULT_PRESET, TableSpec
from rules.verdict import Verdict

APPLICATION_ID = 0x41524249  # "ARBI": marks the file as an arbitro match store (PRAGMA application_id)
SCHEMA_VERSION = 1  # PRAGMA user_version
SQLITE_MAGIC = b"SQLite format 3\x00"

SCHEMA = """
CREATE TABLE players (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE
);
CREATE TABLE matches (
    id INTEGER PRIMARY KEY,
    discipline TEXT NOT NULL,
    table_spec TEXT,                  -- JSON: a preset name, or the measured table as a calibration file gives it
                                      -- ({"width", "length", "ball_diameter", "preset"}); NULL: the default
    distance INTEGER,                 -- NULL: the discipline's default distance
    options TEXT NOT NULL,            -- JSON object of the referee's options, as given
    player_a INTEGER NOT NULL REFERENCES players(id),
    player_b INTEGER NOT NULL REFERENCES players(id),
    started REAL NOT NULL,            -- Unix time
    ended REAL,                       -- NULL while the match is being played
    winner TEXT                       -- "A", "B", "draw" or NULL
);
CREATE TABLE log (
    match_id INTEGER NOT NULL REFERENCES matches(id),
    seq INTEGER NOT NULL,             -- 1, 2, ... in the order the records were decided
    record TEXT NOT NULL,             -- the Shot or control record's JSON, exactly as in the match log
    verdict TEXT,                     -- the verdict's JSON when the record is a shot
    written REAL NOT NULL,            -- Unix time of the commit
    PRIMARY KEY (match_id, seq)
);
CREATE TRIGGER log_append_only_update BEFORE UPDATE ON log
BEGIN SELECT RAISE(ABORT, 'the match log is append-only'); END;
CREATE TRIGGER log_append_only_delete BEFORE DELETE ON log
BEGIN SELECT RAISE(ABORT, 'the match log is append-only'); END;
"""


class StoreError(Exception):
    """The store cannot be used; the message is one line naming the file."""


@dataclass(frozen=True)
class MatchInfo:
    id: int
    discipline: str
    table: Any  # a preset name, a table spec object (the calibration file's "table" field), or None
    distance: int | None
    options: Mapping[str, str]
    players: tuple[str, str]  # sides A and B
    started: float
    ended: float | None
    winner: str | None


def _record_json(record: Record) -> str:
    return json.dumps(record.to_dict(), separators=(",", ":"))


def _verdict_json(verdict: Verdict) -> str:
    return json.dumps(verdict.to_dict(), separators=(",", ":"), ensure_ascii=False)


class MatchStore:
    """One store file. ``resume()`` gives the unfinished match, if any; ``new_match`` starts one."""

    def __init__(self, path: str | Path, *, now: Callable[[], float] = time.time) -> None:
        self.path = Path(path)
        self._now = now
        self._conn = self._open()

    # --- opening and checking the file ----------------------------------------------------------------------------

    def _fail(self, problem: str) -> StoreError:
        return StoreError(f"{self.path}: {problem}")

    def _open(self) -> sqlite3.Connection:
        if self.path.is_dir():
            raise self._fail("is a directory, not a match store")
        if self.path.exists() and self.path.stat().st_size > 0:
            with open(self.path, "rb") as f:
                if f.read(16) != SQLITE_MAGIC:
                    raise self._fail("not an arbitro match store (not an SQLite database)")
        try:
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise self._fail(f"cannot open ({exc})") from None
        try:
            self._prepare(conn)
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise self._fail(f"not a usable match store ({exc})") from None
        except StoreError:
            conn.close()
            raise
        return conn

    def _prepare(self, conn: sqlite3.Connection) -> None:
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        if app_id != APPLICATION_ID:
            if app_id != 0 or tables:
                what = f"application id {app_id:#x}" if app_id else f"tables {', '.join(sorted(tables))}"
                raise self._fail(f"not an arbitro match store (an SQLite database with {what})")
        else:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise self._fail(f"written by a newer arbitro (store version {version}, this one reads "
                                 f"{SCHEMA_VERSION})")
            check = conn.execute("PRAGMA quick_check").fetchone()[0]
            if check != "ok":
                raise self._fail(f"the store is damaged ({check})")
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if mode != "wal":
            raise self._fail(f"cannot use write-ahead logging (journal mode {mode})")
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("PRAGMA foreign_keys = ON")
        if app_id == 0:
            # A new file: the schema and the marks in one transaction, so a half-made file is never taken for a
            # store (executescript would commit an open transaction first, so the script carries its own).
            conn.executescript(f"BEGIN IMMEDIATE;\n{SCHEMA}\nPRAGMA user_version = {SCHEMA_VERSION};\n"
                               f"PRAGMA application_id = {APPLICATION_ID};\nCOMMIT;")

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> "MatchStore":
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # --- matches --------------------------------------------------------------------------------------------------

    def _player(self, name: str) -> int:
        self._conn.execute("INSERT OR IGNORE INTO players (name) VALUES (?)", (name,))
        return int(self._conn.execute("SELECT id FROM players WHERE name = ?", (name,)).fetchone()[0])

    def new_match(self, discipline: str, players: tuple[str, str], *, distance: int | None = None,
                  table: str | TableSpec | None = None, options: Mapping[str, str] | None = None) -> "LiveMatch":
        """Start a match (the referee is built first, so a bad discipline or option stores nothing).

        ``table`` is a preset name or the calibrated table: a measured table is kept whole, so a resumed match is
        refereed on the same table, not on the preset.
        """
        options = dict(options or {})
        referee = referee_for(discipline, table=table, distance=distance, options=options)
        table_json = None if table is None else json.dumps(self._table_field(discipline, table))
        names = tuple(n.strip() for n in players)
        if len(names) != 2 or not all(names):
            raise self._fail("a match needs two player names")
        try:
            with self._transaction():
                a, b = self._player(names[0]), self._player(names[1])
                cur = self._conn.execute(
                    "INSERT INTO matches (discipline, table_spec, distance, options, player_a, player_b, started)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (discipline, table_json, distance, json.dumps(options, sort_keys=True), a, b, self._now()))
        except sqlite3.Error as exc:
            raise self._fail(f"cannot start a match ({exc})") from None
        match_id = int(cur.lastrowid or 0)
        return LiveMatch(self, self.match_info(match_id), referee)

    def _table_field(self, discipline: str, table: str | TableSpec) -> Any:
        """The table as a calibration file would name it; a measured table as its preset scaled to its size."""
        if isinstance(table, str):
            return table
        field = table_to_field(table)
        if isinstance(field, dict) and "preset" not in field:
            field["preset"] = DEFAULT_PRESET[discipline]  # a renamed, measured table of the discipline's kind
        if table_from_field(field) != table:
            raise self._fail(f"table {table.name!r} cannot be stored: it is not a preset scaled to a measured size")
        return field

    def match_info(self, match_id: int) -> MatchInfo:
        row = self._conn.execute(
            "SELECT m.id, m.discipline, m.table_spec, m.distance, m.options, pa.name, pb.name, m.started, m.ended,"
            " m.winner FROM matches m JOIN players pa ON pa.id = m.player_a JOIN players pb ON pb.id = m.player_b"
            " WHERE m.id = ?", (match_id,)).fetchone()
        if row is None:
            raise self._fail(f"no match {match_id}")
        table = None if row[2] is None else json.loads(row[2])
        return MatchInfo(row[0], row[1], table, row[3], json.loads(row[4]), (row[5], row[6]), row[7], row[8], row[9])

    def matches(self) -> list[MatchInfo]:
        ids = [r[0] for r in self._conn.execute("SELECT id FROM matches ORDER BY id")]
        return [self.match_info(i) for i in ids]

    def unfinished(self) -> MatchInfo | None:
        row = self._conn.execute("SELECT id FROM matches WHERE ended IS NULL ORDER BY id DESC LIMIT 1").fetchone()
        return None if row is None else self.match_info(row[0])

    def resume(self) -> "LiveMatch | None":
        """The latest unfinished match, its state re-judged from its log; None when every match has ended."""
        info = self.unfinished()
        return None if info is None else self.open_match(info.id)

    def open_match(self, match_id: int) -> "LiveMatch":
        info = self.match_info(match_id)
        try:
            table = None if info.table is None else table_from_field(info.table)
            referee = referee_for(info.discipline, table=table, distance=info.distance, options=info.options)
        except (ValueError, KeyError) as exc:  # CalibrationFileError and OptionError are ValueErrors
            raise self._fail(f"match {match_id} cannot be refereed here ({exc})") from None
        live = LiveMatch(self, info, referee)
        live.replay()
        return live

    def log_rows(self, match_id: int) -> list[tuple[int, str, str | None]]:
        return [(int(s), r, v) for s, r, v in self._conn.execute(
            "SELECT seq, record, verdict FROM log WHERE match_id = ? ORDER BY seq", (match_id,))]

    def export_log(self, match_id: int) -> str:
        """The match log as JSON lines, what ``arbitro referee`` reads."""
        return "".join(r + "\n" for _, r, _ in self.log_rows(match_id))

    # --- writing --------------------------------------------------------------------------------------------------

    def _transaction(self) -> "_Transaction":
        return _Transaction(self._conn)

    def _append_row(self, match_id: int, seq: int, record: str, verdict: str | None,
                    summary: Mapping[str, Any]) -> None:
        with self._transaction():
            self._conn.execute("INSERT INTO log (match_id, seq, record, verdict, written) VALUES (?, ?, ?, ?, ?)",
                               (match_id, seq, record, verdict, self._now()))
            if summary.get("match_over"):
                self._conn.execute("UPDATE matches SET ended = ?, winner = ? WHERE id = ? AND ended IS NULL",
                                   (self._now(), summary.get("winner"), match_id))

    def end_match(self, match_id: int, winner: str | None = None) -> None:
        """Close a match by hand (abandoned, or the next game started from a button)."""
        with self._transaction():
            self._conn.execute("UPDATE matches SET ended = ?, winner = ? WHERE id = ? AND ended IS NULL",
                               (self._now(), winner, match_id))


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on any error: one record is all or nothing."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.conn.execute("COMMIT" if exc_type is None else "ROLLBACK")


class LiveMatch:
    """A stored match being played: the in-memory fold of its log, kept in step with the store."""

    def __init__(self, store: MatchStore, info: MatchInfo, referee: Referee) -> None:
        self.store = store
        self.info = info
        self.referee = referee
        self.match = Match(referee)
        self.seq = 0
        self.last_verdict: Verdict | None = None
        self.rejudged: list[int] = []  # seqs whose stored verdict differs from today's referee (a rules update)

    @property
    def id(self) -> int:
        return self.info.id

    def summary(self) -> dict[str, Any]:
        return self.match.summary()

    def replay(self) -> None:
        """Fold the stored log from the opening state (crash recovery, resume, replay: one operation)."""
        self.match = Match(self.referee)
        self.seq, self.last_verdict, self.rejudged = 0, None, []
        table = self.referee.table
        for seq, record_json, verdict_json in self.store.log_rows(self.id):
            label = f"match {self.id} record {seq}"
            try:
                verdict = self.match.feed(parse_record(record_json, label, self.info.discipline, table), label)
            except LogError as exc:
                raise self.store._fail(f"the stored log no longer folds ({exc})") from None
            if verdict is not None:
                self.last_verdict = verdict
                if verdict_json is not None and json.loads(verdict_json) != json.loads(_verdict_json(verdict)):
                    self.rejudged.append(seq)
            self.seq = seq

    def append(self, record: Record, label: str | None = None) -> Verdict | None:
        """Judge one record and commit it; a record the referee rejects (LogError) is not stored."""
        label = label or f"match {self.id} record {self.seq + 1}"
        verdict = self.match.feed(record, label)  # raises LogError before anything is written
        try:
            self.store._append_row(self.id, self.seq + 1, _record_json(record),
                                   None if verdict is None else _verdict_json(verdict), self.match.summary())
        except sqlite3.Error as exc:
            self.replay()  # the fold ran ahead of the store: bring it back to what is on disk
            raise self.store._fail(f"cannot write record {self.seq + 1} ({exc})") from None
        self.seq += 1
        if verdict is not None:
            self.last_verdict = verdict
        elif isinstance(record, Control) and record.kind in ("undo", "override"):
            self.last_verdict = self.match.verdicts[-1] if self.match.verdicts else None
        if self.match.summary().get("match_over"):
            self.info = self.store.match_info(self.id)
        return verdict
