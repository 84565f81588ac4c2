"""Held-out referee cases (tests/heldout/<discipline>/<name>.json), run through the ``arbitro referee`` CLI.

The cases were written from the rulebooks and DESIGN.md only (see tests/heldout/README.md). Each case's log is
judged by ``python -m device referee`` exactly as a user would run it, and every verdict is compared with what a
federation referee would give. Cases under tests/heldout/_pending/ are not collected.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "tests" / "heldout"


def _case_files() -> list[Path]:
    return sorted(p for p in CASES.glob("*/*.json") if not p.parent.name.startswith("_"))


def _case_id(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


def _command(case: dict, log: Path) -> list[str]:
    cmd = [sys.executable, "-m", "device", "referee", "--discipline", case["discipline"]]
    if case.get("distance") is not None:
        cmd += ["--distance", str(case["distance"])]
    if case.get("table"):
        cmd += ["--table", case["table"]]
    for key, value in (case.get("options") or {}).items():
        if isinstance(value, bool):
            value = "true" if value else "false"
        cmd += ["--option", f"{key}={value}"]
    return cmd + [str(log)]


def _compare_verdict(i: int, exp: dict, got: dict) -> list[str]:
    """The fields a case states, compared; returns one line per difference."""
    diffs = []
    for key in ("points", "turn", "score", "game_over"):
        if key in exp and got.get(key) != exp[key]:
            diffs.append(f"{key}: expected {exp[key]!r}, got {got.get(key)!r}")
    foul = got.get("foul")
    if "foul" in exp and bool(exp["foul"]) != (foul is not None):
        diffs.append(f"foul: expected {'a foul' if exp['foul'] else 'none'}, got {foul!r}")
    if "penalty" in exp:
        penalty = 0 if foul is None else foul.get("penalty")
        if penalty != exp["penalty"]:
            diffs.append(f"foul.penalty: expected {exp['penalty']!r}, got {penalty!r} (foul {foul!r})")
    return diffs


@pytest.mark.parametrize("path", _case_files(), ids=_case_id)
def test_heldout(path: Path, tmp_path: Path) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    why = case.get("why", "")
    log = tmp_path / f"{path.stem}.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in case["log"]), encoding="utf-8")
    proc = subprocess.run(_command(case, log), cwd=ROOT, capture_output=True, text=True, timeout=60)
    if "has no referee yet" in proc.stderr:
        pytest.skip(proc.stderr.strip())
    assert proc.returncode == 0, f"{_case_id(path)}: exit {proc.returncode}: {proc.stderr.strip()}\nwhy: {why}"

    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    objs = []
    for n, line in enumerate(lines, start=1):
        try:
            objs.append(json.loads(line))
        except ValueError:
            pytest.fail(f"{_case_id(path)}: stdout line {n} is not JSON: {line[:200]!r}")
    n_shots = sum(1 for r in case["log"] if "control" not in r)
    assert len(case["expect"]) == n_shots, f"{_case_id(path)}: the case has {n_shots} shots but " \
                                           f"{len(case['expect'])} expectations"
    assert objs and set(objs[-1]) == {"match"}, f"{_case_id(path)}: the last line is not {{\"match\": ...}}"
    verdicts = objs[:-1]
    assert len(verdicts) == n_shots, f"{_case_id(path)}: {len(verdicts)} verdict lines for {n_shots} shots\n" \
                                     f"why: {why}"
    assert all("match" not in v for v in verdicts), f"{_case_id(path)}: a match line before the end"

    problems = []
    for i, (exp, got) in enumerate(zip(case["expect"], verdicts), start=1):
        diffs = _compare_verdict(i, exp, got)
        if diffs:
            shown = {k: got.get(k) for k in ("points", "turn", "score", "foul", "game_over", "reason")}
            problems.append(f"shot {i}: " + "; ".join(diffs) + f"\n    expected {exp}\n    actual   {shown}")
    match = objs[-1]["match"]
    for key, value in (case.get("match") or {}).items():
        if match.get(key) != value:
            problems.append(f"match.{key}: expected {value!r}, got {match.get(key)!r}")
    assert not problems, f"{_case_id(path)}\nwhy: {why}\n" + "\n".join(problems)
