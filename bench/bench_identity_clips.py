"""Identity of the balls at rest in recorded benchmark clips, per ball: how each ball's kind is read.

    python -m bench.bench_identity_clips --cache /tmp/dcache [--family bilhar] [--size 728x544] [--seeds 100-109]
                                         [--model other.onnx]

Reads the clips ``bench_vision --cache DIR`` rendered (the video and its truth). In each, two frames with every
ball at rest: one before the strike (the balls as the layout put them: a stripe cap-up, a solid number-up) and the
last (turned as the roll left them). The balls are found by the detector (its empty table painted from the frame
itself), matched to the truth's image centres within 3 px, and each read three ways: by the colour model alone
(``colour``); by the discipline's identifier (colour and patch classifier), each ball on its own (``each
alone``); and with the frame's one-of-each match added where the discipline has one (``one of each``: what the
tracker is given).
Prints the accuracy of each per phase, each ball's own (``each alone``, both phases), and the commonest
misreadings. ``--model`` reads with another patch classifier than the committed one (a candidate from
``vision.train_identity --out``).
"""

from __future__ import annotations

import argparse
import json
import os
from collections import Counter
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from calibration.file import read_calibration  # noqa: E402
from vision.detection import BallDetector  # noqa: E402
from vision.crop_classifier import CropClassifier  # noqa: E402
from vision.identity import BallIdentifier, ball_features  # noqa: E402

FAMILIES = {"bilhar": "bilhar", "sinuca": "sinuca", "carom": "three_cushion", "chapo": "chapo"}


def _frame_at(video: str, index: int) -> np.ndarray:
    cap = cv2.VideoCapture(video)
    cap.set(cv2.CAP_PROP_POS_FRAMES, index)
    ok, frame = cap.read()
    cap.release()
    if not ok:
        raise SystemExit(f"{video}: no frame {index}")
    return frame


def rest_samples(base: str) -> list[tuple[str, np.ndarray, dict[str, np.ndarray]]]:
    """(phase, frame, {ball: true image centre}) for the still frame before the strike and the last frame."""
    truth = json.loads(Path(base + ".truth.json").read_text())
    frames = truth["frames"]
    t_strike = truth["strikes"][0]["t"] if truth["strikes"] else frames[-1]["t"]
    before = max(i for i, f in enumerate(frames) if f["t"] < t_strike - 0.3)
    out = []
    for phase, i in (("layout", before), ("after", len(frames) - 1)):
        balls = {b: np.array(v[2:4]) for b, v in frames[i]["balls"].items()}
        out.append((phase, _frame_at(base + ".mp4", i), balls))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", required=True, help="bench_vision's clip cache")
    ap.add_argument("--family", choices=sorted(FAMILIES), default="bilhar")
    ap.add_argument("--size", default="728x544")
    ap.add_argument("--seeds", default="100-109", help="first-last")
    ap.add_argument("--model", default=None, help="an ONNX patch classifier instead of the committed one")
    args = ap.parse_args(argv)
    cv2.setNumThreads(1)
    discipline = FAMILIES[args.family]
    lo, hi = (int(s) for s in args.seeds.split("-"))
    identifier = BallIdentifier.for_discipline(discipline)
    if args.model:
        identifier = BallIdentifier(identifier.colour, CropClassifier(args.model), identifier.weight,
                                    identifier.one_of_each, identifier.colour_weight)
    alone = BallIdentifier(identifier.colour, identifier.classifier, identifier.weight, 0.0,
                           identifier.colour_weight)
    kinds = identifier.colour.kind_names
    hits: dict[tuple[str, str], list[bool]] = {}
    wrong: Counter = Counter()
    per_ball: dict[str, list[bool]] = {}
    for seed in range(lo, hi + 1):
        base = os.path.join(args.cache, f"{args.family}_{args.size}_60_{seed}", f"random_{discipline}_{seed}")
        if not os.path.exists(base + ".mp4"):
            raise SystemExit(f"no clip at {base}.mp4 (run bench_vision with --cache first)")
        calib = read_calibration(base + ".calib.json")
        detector = BallDetector(calib.camera, calib.table)
        for phase, frame, balls in rest_samples(base):
            det = detector.detect(frame, 0.0, detector.background_without_empty_table(frame))
            if len(det) == 0:
                continue
            names = list(balls)
            true_px = np.array([balls[b] for b in names])
            d = np.linalg.norm(true_px[:, None] - det.px[None], axis=2)
            reads = {
                "colour": identifier.colour.kind_probs(ball_features(frame, det.px, det.radius_px)),
                "each alone": alone.kind_probs(frame, det),
                "one of each": identifier.kind_probs(frame, det),
            }
            for i, name in enumerate(names):
                j = int(d[i].argmin())
                if d[i, j] > 3.0:
                    continue
                want = "red" if discipline == "sinuca" and name.startswith("red") else name
                for how, p in reads.items():
                    got = kinds[int(p[j].argmax())]
                    hits.setdefault((phase, how), []).append(got == want)
                    if how == "each alone":
                        per_ball.setdefault(want, []).append(got == want)
                        if got != want:
                            wrong[(phase, want, got)] += 1
    print(f"{args.family} {args.size}, seeds {lo}-{hi}: kind read right, balls at rest")
    for phase in ("layout", "after"):
        row = [f"{how} {np.mean(hits[(phase, how)]):.3f}" for how in ("colour", "each alone", "one of each")
               if (phase, how) in hits]
        n = len(hits.get((phase, "colour"), []))
        print(f"  {phase} ({n} balls): " + ", ".join(row))
    print("  each ball (each alone, both phases): " + ", ".join(
        f"{k} {np.mean(per_ball[k]):.2f}/{len(per_ball[k])}" for k in kinds if k in per_ball))
    print("  commonest misreadings (each alone): " + ", ".join(f"{p} {w}->{g} x{c}" for (p, w, g), c in wrong.most_common(12)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
