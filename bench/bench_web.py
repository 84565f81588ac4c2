"""The web app's cost on the device: SSE latency from publish() to a client's event, and the memory it adds.

    python -m bench.bench_web [--publishes 200] [--clients 4] [--viewers 2] [--live-seconds 5]

A match store and a LiveMatch are made first (the live loop has those anyway), then the RSS is read; the web app is
imported, started on 127.0.0.1 and read by ``--clients`` SSE clients, one diagram is drawn, and the RSS is read
again: the difference is what the web app adds. The latency is from ``publish()`` to the last client having parsed
the event, over ``--publishes`` shots of the three-cushion demo log, then the last board again.

Then the calibration wizard's live view: frames of the Pi Global Shutter's size (1456x1088, a fixture clip's view
scaled up; the live loop holds such frames anyway, so they are made before the first RSS reading) are offered at
60 fps, as the tapped camera does, while ``--viewers`` phones each fetch /wizard/live.jpg as the page does (the
next picture once the last has come, 200 ms later). It prints the pictures encoded a second, the fetch time, the
cost of one encode and of one still-wait sample, and the RSS with the live view on.
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
    ap.add_argument("--viewers", type=int, default=2)
    ap.add_argument("--live-seconds", type=float, default=5.0)
    args = ap.parse_args()

    from device.store import MatchStore
    from rules.log import read_log

    tmp = Path(tempfile.mkdtemp(prefix="bench_web_"))
    store = MatchStore(tmp / "matches.db")
    live = store.new_match("three_cushion", ("Ana", "Rui"), distance=15)  # the demo log is a game to 15
    lines = (Path(__file__).parents[1] / "fixtures" / "logs" / "three_cushion_demo.jsonl").read_text().splitlines()
    shots = [r for _, r in read_log(lines, "three_cushion", live.referee.table) if hasattr(r, "tracks")]
    frames = camera_frames()
    base = rss_kib()

    from device.web import WebApp
    from device.web.camera import FrameFeed
    from device.web.wizard import Wizard

    feed = FrameFeed()
    app = WebApp(live, tmp / "web", wizard=Wizard(feed, tmp / "web"))
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
            try:
                line = resp.fp.readline()
            except TimeoutError:  # the SSE part is over and the wizard's is measured: nothing comes any more
                return
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
    live_view = measure_live_view(feed, port, frames, args.viewers, args.live_seconds)
    with_view = rss_kib() - base
    calibrated = measure_still(app.wizard, feed, frames[0])
    with_still = rss_kib() - base
    app.close()
    store.close()
    ms = sorted(x * 1000 for x in latencies)
    print(f"SSE latency publish -> {args.clients} clients, {args.publishes} publishes: median {statistics.median(ms):.2f} ms, "
          f"p95 {ms[int(0.95 * (len(ms) - 1))]:.2f} ms, max {ms[-1]:.2f} ms")
    print(f"RSS added by the web app: {streaming / 1024:.1f} MiB serving {args.clients} streams, "
          f"{added / 1024:.1f} MiB once a diagram is drawn (OpenCV's buffers), {with_view / 1024:.1f} MiB with the "
          f"wizard's live view on, {with_still / 1024:.1f} MiB after the wizard's still is calibrated "
          f"(in a child process, whose peak RSS was {calibrated['child_peak_mib']:.0f} MiB, all given back)")
    print(f"wizard live view, {live_view['size']} frames at 60 fps, {args.viewers} phones: "
          f"{live_view['encodes_per_s']:.1f} pictures encoded a second ({live_view['jpeg_kib']:.0f} KiB each), "
          f"fetch median {live_view['fetch_ms']:.1f} ms; one encode {live_view['encode_ms']:.1f} ms, "
          f"one still-wait sample {live_view['still_ms']:.1f} ms (5 a second while waiting)")
    print(f"wizard still: taken {calibrated['wait_s']:.2f} s after the wait began (hold 1 s), the automatic "
          f"calibration of the {live_view['size']} still {calibrated['calibrate_s']:.1f} s "
          f"({'found' if calibrated['found'] else 'not found'})")


def measure_still(wizard, feed, frame) -> dict:
    """The wait for a still view and the automatic calibration of the still, on a camera that shows one view."""
    import resource

    from device.web.wizard import wait_ready

    stop = threading.Event()

    def camera() -> None:
        k = 0
        while not stop.is_set():
            feed.offer(frame, 1000 + k / 60)
            k += 1
            time.sleep(1 / 60)

    cam = threading.Thread(target=camera, daemon=True)
    cam.start()
    t0 = time.perf_counter()
    wizard.begin_still()
    taken = None
    while True:
        status = wizard.status()
        if taken is None and status["phase"] in ("calibrating", "ready"):
            taken = time.perf_counter() - t0
        if status["phase"] == "ready":
            break
        time.sleep(0.01)
    done = time.perf_counter() - t0
    stop.set()
    cam.join(5)
    wait_ready(wizard)
    child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB on Linux
    return {"wait_s": taken, "calibrate_s": done - taken, "found": bool(status["result"]["found"]),
            "child_peak_mib": child / 1024}


def camera_frames() -> list:
    """Two 1456x1088 views (a fixture clip's frames scaled up), alternated as a camera's frames."""
    import cv2

    cap = cv2.VideoCapture(str(Path(__file__).parents[1] / "fixtures" / "clips" / "three_cushion_point_and_miss.mp4"))
    out = []
    for _ in range(2):
        ok, img = cap.read()
        out.append(cv2.resize(img, (1456, 1088), interpolation=cv2.INTER_CUBIC))
    cap.release()
    return out


def measure_live_view(feed, port: int, frames: list, viewers: int, seconds: float) -> dict:
    from device.web.camera import LIVE_WIDTH, JPEG_QUALITY, StillWatch, _encode_jpeg

    stop = threading.Event()

    def camera() -> None:
        k = 0
        while not stop.is_set():
            feed.offer(frames[k % 2], k / 60)
            k += 1
            time.sleep(1 / 60)

    fetches: list[float] = []
    sizes: list[int] = []

    def phone() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        while not stop.is_set():
            t0 = time.perf_counter()
            conn.request("GET", "/wizard/live.jpg")
            resp = conn.getresponse()
            body = resp.read()
            if resp.status == 200:
                fetches.append(time.perf_counter() - t0)
                sizes.append(len(body))
            time.sleep(0.2)

    cam = threading.Thread(target=camera, daemon=True)
    cam.start()
    time.sleep(0.2)
    before = feed.encodes
    phones = [threading.Thread(target=phone, daemon=True) for _ in range(viewers)]
    t0 = time.perf_counter()
    for t in phones:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in phones + [cam]:
        t.join(5)
    elapsed = time.perf_counter() - t0
    encode = []
    for _ in range(10):
        t1 = time.perf_counter()
        _encode_jpeg(frames[0], LIVE_WIDTH, JPEG_QUALITY)
        encode.append(time.perf_counter() - t1)
    watch, still = StillWatch(), []
    for k in range(10):
        t1 = time.perf_counter()
        watch.update(frames[k % 2], k * 0.2)
        still.append(time.perf_counter() - t1)
    return {"size": f"{frames[0].shape[1]}x{frames[0].shape[0]}", "encodes_per_s": (feed.encodes - before) / elapsed,
            "jpeg_kib": statistics.median(sizes) / 1024 if sizes else 0.0,
            "fetch_ms": statistics.median(fetches) * 1000 if fetches else float("nan"),
            "encode_ms": statistics.median(encode) * 1000, "still_ms": statistics.median(still) * 1000}


if __name__ == "__main__":
    main()
