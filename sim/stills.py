"""One still per discipline, as the Pi Global Shutter camera would see the table: ``docs/stills/NAME.png``.

    python -m sim.stills [--out docs/stills] [--size 1456 1088]

Each is a moment of a shot from the opening (a ball or two moving, so motion blur shows), with the default
exposure effects less the sensor noise (which only makes the PNGs large).
"""

from __future__ import annotations

import argparse
import os
import sys

import cv2

from rules.balls import DISCIPLINES

from .render import Renderer
from .scenario import Scenario, ShotSpec

# (shot, time of the still after the strike)
_SHOTS = {
    "sinuca": (ShotSpec("cue", 4500.0, direction=84.0, tip=(0.0, -0.2), t=1.0), 0.45),
    "bilhar": (ShotSpec("cue", 7500.0, direction=90.4, tip=(0.0, 0.1), t=1.0), 0.32),
    "chapo": (ShotSpec("1", 2500.0, direction=97.0, tip=(0.0, 0.3), t=1.0), 0.42),
}
_CAROM = (ShotSpec("spot", 3000.0, aim="red", cut=0.45, tip=(0.2, 0.2), t=1.0), 0.25)


def render_still(discipline: str, size: tuple[int, int] | None = None):
    shot, after = _SHOTS.get(discipline, _CAROM)
    camera = {"sensor": "pi_gs"} if size is None else {"sensor": "pi_gs", "size": list(size)}
    s = Scenario(discipline, name=discipline, shots=(shot,), camera=camera, effects={"noise_sigma": 0.0})
    traj = s.simulate()
    r = Renderer(s.table_spec(), discipline, s.camera_model(), traj, s.render_effects())
    img, _ = r.render(traj.strikes[0].t + after)
    return img


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join("docs", "stills"))
    ap.add_argument("--size", type=int, nargs=2, default=None)
    ap.add_argument("--only", nargs="*", default=None, choices=DISCIPLINES)
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    for d in args.only or DISCIPLINES:
        path = os.path.join(args.out, d + ".png")
        cv2.imwrite(path, render_still(d, tuple(args.size) if args.size else None),
                    [cv2.IMWRITE_PNG_COMPRESSION, 9])
        print(f"{path}: {os.path.getsize(path) / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
