"""The web app's cost on the device: SSE latency from publish() to a client's event, and the memory it adds.

    python -m bench.bench_web [--publishes 200] [--clients 4]

A match store and a LiveMatch are made first (the live loop has those anyway), then the RSS is read; the web app is
imported, started on 127.0.0.1 and read by ``--clients`` SSE clients, one diagram is drawn, and the RSS is read
again: the difference is what the web app adds. The latency is from ``publish()`` to the last client having parsed
the event, over ``--publishes`` shots of the three-cushion demo log, then the last board again.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import tempfile
import threading
import time
from pathlib import Path


def rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--publishes", type=int, default=200)
    ap.add_argument("--clients", type=int, default=4)
    args = ap.parse_args()

    from device.store import MatchStore
    from rules.log import read_log

    tmp = Path(tempfile.mkdtemp(prefix="bench_web_"))
    store = MatchStore(tmp / "matches.db")
    live = store.new_match("three_cushion", ("Ana", "Rui"), distance=15)  # the demo log is a game to 15
    lines = (Path(__file__).parents[1] / "fixtures" / "logs" / "three_cushion_demo.jsonl").read_text().splitlines()
    shots = [r for _, r in read_log(lines, "three_cushion", live.referee.table) if hasattr(r, "tracks")]
    base = rss_kib()

    from device.web import WebApp

    app = WebApp(live, tmp / "web")
    server = app.serve("127.0.0.1", 0)
    port = server.server_address[1]
    received: list[list[float]] = [[] for _ in range(args.clients)]
    ready = threading.Barrier(args.clients + 1)

    def client(i: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/events")
        resp = conn.getresponse()
        first = True
        while True:
            line = resp.fp.readline()
            if not line:
                return
            if line.startswith(b"data: "):
                json.loads(line[6:])
                if first:
                    first = False
                    ready.wait()
                else:
                    received[i].append(time.perf_counter())

    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(args.clients)]
    for t in threads:
        t.start()
    ready.wait()
    latencies = []
    for n in range(args.publishes):
        if n < len(shots) and not live.summary().get("match_over"):
            live.append(shots[n])  # past the game's end the same board is published again (one event each)
        t0 = time.perf_counter()
        app.publish(live.last_verdict.to_dict(), live.summary())
        while min(len(r) for r in received) <= n:
            time.sleep(0.0002)
        latencies.append(max(r[n] for r in received) - t0)
    streaming = rss_kib() - base
    app.diagram_png()
    added = rss_kib() - base
    app.close()
    store.close()
    ms = sorted(x * 1000 for x in latencies)
    print(f"SSE latency publish -> {args.clients} clients, {args.publishes} publishes: median {statistics.median(ms):.2f} ms, "
          f"p95 {ms[int(0.95 * (len(ms) - 1))]:.2f} ms, max {ms[-1]:.2f} ms")
    print(f"RSS added by the web app: {streaming / 1024:.1f} MiB serving {args.clients} streams, "
          f"{added / 1024:.1f} MiB once a diagram is drawn (OpenCV's buffers)")


if __name__ == "__main__":
    main()
