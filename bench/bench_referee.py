"""How fast ``arbitro referee`` judges a 200-shot three-cushion match log.

    python -m bench.bench_referee [--shots 200] [--repeats 7]

Prints the median wall time of the whole command (a fresh interpreter each run, as a user would call it) and of
the fold alone (parse + judge in-process), so start-up and judging can be told apart.
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rules.log import read_log, write_log
from rules.match import Match
from rules.registry import referee_for
from tests.carom_builders import log_of_kinds

ROOT = Path(__file__).resolve().parent.parent


def make_log(shots: int, seed: int = 1) -> str:
    rng = random.Random(seed)
    weights = {"carom": 30, "miss": 45, "two_cushions": 12, "kiss": 6}
    kinds = [rng.choices(list(weights), list(weights.values()))[0] for _ in range(shots)]
    log = log_of_kinds("three_cushion", kinds, distance=10_000)
    assert len(log) == shots
    return write_log(log)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shots", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    text = make_log(args.shots)
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        f.write(text)
        path = f.name
    cmd = [sys.executable, "-m", "device", "referee", "--discipline", "three_cushion", "--distance", "10000", path]
    whole, fold = [], []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, cwd=ROOT)
        whole.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        referee = referee_for("three_cushion", distance=10_000)
        match = Match(referee)
        for label, record in read_log(text.splitlines(), "three_cushion", referee.table):
            match.feed(record, label)
        fold.append(time.perf_counter() - t0)
    print(f"arbitro referee, {args.shots}-shot three-cushion log ({len(text) // 1024} KiB), {args.repeats} runs:")
    print(f"  whole command (interpreter start-up included): median {statistics.median(whole) * 1000:.0f} ms")
    print(f"  parse + judge in-process:                      median {statistics.median(fold) * 1000:.1f} ms "
          f"({statistics.median(fold) / args.shots * 1e6:.0f} us per shot)")


if __name__ == "__main__":
    main()
