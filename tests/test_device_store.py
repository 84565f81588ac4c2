"""The match store: durable across SIGKILL, append-only, resumed by re-folding, and clear about bad files."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rules.errors import LogError
from rules.log import read_log
from rules.match import Match
from rules.registry import referee_for
from device.store import MatchStore, StoreError

ROOT = Path(__file__).parents[1]
DEMO = ROOT / "fixtures" / "logs" / "three_cushion_demo.jsonl"
LINES = DEMO.read_text().splitlines()


def fold_summary(n: int) -> dict:
    """What the match is after the first n records of the demo log, folded from scratch."""
    referee = referee_for("three_cushion", distance=15)
    match = Match(referee)
    for label, record in read_log(LINES[:n], "three_cushion", referee.table):
        match.feed(record, label)
    return match.summary()


def records(n: int, start: int = 0) -> list:
    table = referee_for("three_cushion").table
    return [r for _, r in read_log(LINES[start:start + n], "three_cushion", table)]


CHILD = textwrap.dedent("""
    import json, os, signal, sqlite3, sys
    sys.path.insert(0, sys.argv[1])
    from device.store import MatchStore
    from rules.log import read_log
    from rules.registry import referee_for

    path, log, stop_after, mode = sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
    lines = open(log).read().splitlines()
    store = MatchStore(path)
    live = store.new_match("three_cushion", ("Ana", "Rui"), distance=15)
    table = live.referee.table
    for n, (label, record) in enumerate(read_log(lines, "three_cushion", table), start=1):
        if n > stop_after:
            break
        live.append(record)
        s = live.summary()
        print(json.dumps({"n": n, "score": s["score"], "innings": s["innings"], "run": s["run"],
                          "high_run": s["high_run"]}), flush=True)
    if mode == "open_transaction":
        # Die half-way through writing the next record: its transaction begun, its row inserted, no COMMIT.
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        other.execute("INSERT INTO log (match_id, seq, record, verdict, written) VALUES (?, ?, ?, NULL, 0)",
                      (live.id, live.seq + 1, lines[stop_after]))
    os.kill(os.getpid(), signal.SIGKILL)
""")


@pytest.mark.parametrize("stop_after, mode", [(37, "between_records"), (20, "open_transaction")])
def test_sigkill_in_the_middle_of_a_match_loses_nothing_committed(tmp_path: Path, stop_after: int, mode: str
                                                                   ) -> None:
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    db = tmp_path / "match.db"
    proc = subprocess.run([sys.executable, str(script), str(ROOT), str(db), str(DEMO), str(stop_after), mode],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == -9, proc.stderr  # SIGKILL: no clean shutdown, no checkpoint
    before = json.loads(proc.stdout.splitlines()[-1])
    assert before["n"] == stop_after
    assert Path(str(db) + "-wal").exists()  # the records live in the write-ahead log, not yet checkpointed

    with MatchStore(db) as store:
        live = store.resume()
        assert live is not None and live.seq == stop_after
        after = live.summary()
        for key in ("score", "innings", "run", "high_run"):
            assert after[key] == before[key], key
        assert after == fold_summary(stop_after)
        assert live.rejudged == []  # today's referee agrees with every stored verdict
        # The match goes on where it stopped.
        for record in records(3, start=stop_after):
            live.append(record)
        assert live.summary() == fold_summary(stop_after + 3)


def test_the_log_is_exactly_the_match_log_and_append_only(tmp_path: Path) -> None:
    with MatchStore(tmp_path / "m.db") as store:
        live = store.new_match("three_cushion", ("Ana", "Rui"), distance=15)
        for r in records(6):
            live.append(r)
        assert store.export_log(live.id).splitlines() == LINES[:6]
        rows = store.log_rows(live.id)
        assert [seq for seq, _, _ in rows] == [1, 2, 3, 4, 5, 6]
        assert all(v is not None and json.loads(v)["shot"] for _, _, v in rows)
        conn = sqlite3.connect(tmp_path / "m.db")
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            conn.execute("UPDATE log SET record = '{}' WHERE seq = 1")
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            conn.execute("DELETE FROM log")
        conn.close()
        assert store._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert store._conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL


def test_undo_and_override_are_appended_control_records(tmp_path: Path) -> None:
    from rules.controls import Control
    with MatchStore(tmp_path / "m.db") as store:
        live = store.new_match("three_cushion", ("Ana", "Rui"), distance=15)
        for r in records(4):
            live.append(r)
        before_undo = fold_summary(3)
        assert live.append(Control("undo")) is None
        assert live.summary() == before_undo
        assert live.last_verdict is not None and live.last_verdict.shot == 3
        live.append(Control("override", {"points": {"A": 0, "B": 0}, "reason": "referee"}))
        rows = store.log_rows(live.id)
        assert [json.loads(r).get("control") for _, r, _ in rows[-2:]] == ["undo", "override"]
        assert [v for _, _, v in rows[-2:]] == [None, None]
        summary = live.summary()
    with MatchStore(tmp_path / "m.db") as store:
        assert store.resume().summary() == summary  # the re-fold applies them the same way


def test_a_record_the_referee_rejects_is_not_stored(tmp_path: Path) -> None:
    with MatchStore(tmp_path / "m.db") as store:
        live = store.new_match("three_cushion", ("Ana", "Rui"), distance=15)
        first, second = records(2)
        live.append(first)
        with pytest.raises(LogError):
            live.append(first)  # the same shot again: it is B's turn, and time goes backwards
        assert live.seq == 1 and len(store.log_rows(live.id)) == 1
        live.append(second)
        assert live.seq == 2


def test_a_finished_match_is_ended_and_not_resumed(tmp_path: Path) -> None:
    clock = iter(range(1000, 2000))
    with MatchStore(tmp_path / "m.db", now=lambda: float(next(clock))) as store:
        live = store.new_match("three_cushion", ("Ana", "Rui"), distance=15)
        for r in records(len(LINES)):
            live.append(r)
        assert live.info.ended is not None and live.info.winner == "A"
        assert store.resume() is None
        assert [m.players for m in store.matches()] == [("Ana", "Rui")]
        second = store.new_match("three_cushion", ("Rui", "Bea"))
        assert store.resume().id == second.id
        names = [r[0] for r in store._conn.execute("SELECT name FROM players ORDER BY id")]
        assert names == ["Ana", "Rui", "Bea"]  # one row per player across matches


def _one_line_error(path: Path) -> str:
    with pytest.raises(StoreError) as info:
        MatchStore(path)
    message = str(info.value)
    assert "\n" not in message and str(path) in message
    return message


def test_a_file_that_is_not_sqlite_is_one_clear_line(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_bytes(b"these are my notes, not a database" * 100)
    assert "not an arbitro match store (not an SQLite database)" in _one_line_error(path)


def test_a_foreign_sqlite_database_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "photos.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE photos (id INTEGER)")
    conn.commit()
    conn.close()
    size = path.stat().st_size
    assert "not an arbitro match store (an SQLite database with tables photos)" in _one_line_error(path)
    assert path.stat().st_size == size and not Path(str(path) + "-wal").exists()
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("PRAGMA application_id = 1234")
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    assert "application id 0x4d2" in _one_line_error(other)


def test_a_damaged_store_is_one_clear_line(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with MatchStore(path) as store:
        live = store.new_match("three_cushion", ("Ana", "Rui"), distance=15)
        for r in records(60):
            live.append(r)
    data = bytearray(path.read_bytes())
    page = 4096
    assert len(data) > 4 * page
    data[2 * page:len(data) - page] = b"\xa5" * (len(data) - 3 * page)  # every page but the first and last
    path.write_bytes(bytes(data))
    message = _one_line_error(path)
    assert "damaged" in message or "not a usable match store" in message


def test_a_store_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    MatchStore(path).close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 99")
    conn.commit()
    conn.close()
    assert "newer arbitro" in _one_line_error(path)


def test_bad_match_parameters_store_nothing(tmp_path: Path) -> None:
    from rules.match import OptionError
    with MatchStore(tmp_path / "m.db") as store:
        with pytest.raises(OptionError):
            store.new_match("three_cushion", ("Ana", "Rui"), options={"nope": "1"})
        with pytest.raises(StoreError, match="two player names"):
            store.new_match("three_cushion", ("Ana", " "))
        assert store.matches() == []


def test_a_measured_table_is_kept_whole_and_a_resumed_match_is_refereed_on_it(tmp_path: Path) -> None:
    from calibration.file import scaled_table
    from rules.tables import preset
    measured = scaled_table(preset("chapo"), 1200.0, 2400.0, 79.0, "club_chapo")
    with MatchStore(tmp_path / "m.db") as store:
        live = store.new_match("chapo", ("Ana", "Rui"), table=measured)
        assert live.referee.table == measured
        by_name = store.new_match("three_cushion", ("Bea", "Rui"), table="carom_match")
        assert by_name.info.table == "carom_match"
    with MatchStore(tmp_path / "m.db") as store:
        again = store.open_match(live.id)
        assert (again.referee.table.width, again.referee.table.length) == (1200.0, 2400.0)
        assert again.referee.table.name == "club_chapo"


def test_a_table_that_cannot_be_stored_faithfully_is_refused(tmp_path: Path) -> None:
    from dataclasses import replace
    from rules.tables import preset
    odd = replace(preset("carom_match"), name="odd", spots={"centre": (700.0, 1400.0)})
    with MatchStore(tmp_path / "m.db") as store:
        with pytest.raises(StoreError, match="table 'odd' cannot be stored"):
            store.new_match("three_cushion", ("Ana", "Rui"), table=odd)
        assert store.matches() == []
