"""The annotated replay video: each ball's track, the events as they happen and each verdict, over the footage.

Everything is drawn from the replay's results (Shot records and verdicts in table millimetres) projected back into
the image through the calibration, so what is drawn is what the referee judged, not what the detector saw.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from calibration.camera import CameraModel
from rules.events import EventType
from rules.shot import Shot
from rules.tables import TableSpec
from rules.verdict import Verdict

from .diagrams import ball_colour
from .sources import VideoFileSource

EVENT_SHOW_S = 0.8  # an event's label stays this long
VERDICT_SHOW_S = 3.0  # a verdict's banner stays this long after its shot


@dataclass
class _Track:
    t: np.ndarray
    px: np.ndarray  # (K, 2) image points of the ball centre


def _project_tracks(shot: Shot, camera: CameraModel, table: TableSpec) -> dict[str, _Track]:
    out = {}
    for ball, samples in shot.tracks.items():
        arr = np.asarray(samples, dtype=float).reshape(-1, 3)
        px = camera.table_to_image(arr[:, 1:], z=table.ball_radius)
        out[ball] = _Track(arr[:, 0], np.asarray(px).reshape(-1, 2))
    return out


def verdict_text(v: Verdict) -> str:
    text = f"Shot {v.shot} - {v.shooter}: +{v.points.get(v.shooter, 0)}"
    if v.foul is not None:
        text += f"  FOUL {v.foul.code} ({v.foul.article})"
    elif v.reason:
        text += f"  {v.reason}"
    return text + f"   {v.score.get('A', 0)} : {v.score.get('B', 0)}"


def write_annotated(video: str, out_path: str, shots: list[Shot], verdicts: list[Verdict | None],
                    camera: CameraModel, table: TableSpec) -> int:
    """Re-read ``video`` and write ``out_path`` with the overlays; returns the number of frames written."""
    projected = [_project_tracks(s, camera, table) for s in shots]
    writer = None
    written = 0
    with VideoFileSource(video) as source:
        while (frame := source.read()) is not None:
            image = frame.image.copy()
            if image.ndim == 2:
                image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
            _draw(image, frame.t, shots, verdicts, projected, camera, table)
            if writer is None:
                h, w = image.shape[:2]
                writer = cv2.VideoWriter(out_path, cv2.VideoWriter_fourcc(*"mp4v"), source.fps or 30.0, (w, h))
                if not writer.isOpened():
                    raise OSError(f"{out_path}: cannot write a video here")
            writer.write(image)
            written += 1
    if writer is not None:
        writer.release()
    return written


def _draw(image: np.ndarray, t: float, shots, verdicts, projected, camera: CameraModel, table: TableSpec) -> None:
    scale = max(image.shape[0] / 720.0, 0.6)
    for shot, verdict, tracks in zip(shots, verdicts, projected):
        if shot.t_start - 0.05 <= t <= shot.t_end:
            for ball, tr in tracks.items():
                upto = tr.t <= t
                if upto.sum() >= 2:
                    pts = np.round(tr.px[upto]).astype(np.int32)
                    cv2.polylines(image, [pts], False, ball_colour(ball), max(1, int(2 * scale)), cv2.LINE_AA)
            for e in shot.events:
                if e.t <= t <= e.t + EVENT_SHOW_S:
                    _event_label(image, e, shot, tracks, camera, table, scale)
        if verdict is not None and shot.t_end <= t <= shot.t_end + VERDICT_SHOW_S:
            _banner(image, verdict_text(verdict), scale, foul=verdict.foul is not None)
        elif verdict is None and shot.t_end <= t <= shot.t_end + VERDICT_SHOW_S:
            _banner(image, "Shot not refereed", scale, foul=True)


def _event_label(image, e, shot: Shot, tracks, camera: CameraModel, table: TableSpec, scale: float) -> None:
    ball = e.ball or (e.balls[0] if e.balls else None)
    if ball is None:
        return
    tr = tracks.get(ball)
    if tr is not None and len(tr.t):
        p = np.array([np.interp(e.t, tr.t, tr.px[:, 0]), np.interp(e.t, tr.t, tr.px[:, 1])])
    elif ball in shot.start:
        p = np.asarray(camera.table_to_image(np.array([shot.start[ball]]), z=table.ball_radius)).reshape(2)
    else:
        return
    label = {
        EventType.STRIKE: "strike", EventType.BALL_BALL: "ball", EventType.CUSHION: f"cushion {e.cushion}",
        EventType.POCKET: f"pocket {e.pocket}", EventType.OFF_TABLE: "off table",
        EventType.TOUCHED: "touched", EventType.PIN_DOWN: f"pin {e.pin}",
    }[e.type]
    c = (int(p[0]), int(p[1]))
    cv2.circle(image, c, int(14 * scale), (255, 255, 255), max(1, int(2 * scale)), cv2.LINE_AA)
    width = cv2.getTextSize(label, cv2.FONT_HERSHEY_SIMPLEX, 0.6 * scale, max(1, int(1.5 * scale)))[0][0]
    x = c[0] + int(16 * scale)
    if x + width > image.shape[1] - 4:  # near the right edge: write it on the left of the ball
        x = c[0] - int(16 * scale) - width
    at = (x, max(c[1] - int(10 * scale), int(20 * scale)))
    cv2.putText(image, label, at, cv2.FONT_HERSHEY_SIMPLEX, 0.6 * scale, (0, 0, 0), int(4 * scale), cv2.LINE_AA)
    cv2.putText(image, label, at, cv2.FONT_HERSHEY_SIMPLEX, 0.6 * scale, (255, 255, 255),
                max(1, int(1.5 * scale)), cv2.LINE_AA)


def _banner(image: np.ndarray, text: str, scale: float, foul: bool) -> None:
    h = int(44 * scale)
    colour = (0, 0, 170) if foul else (40, 40, 40)
    overlay = image.copy()
    cv2.rectangle(overlay, (0, image.shape[0] - h), (image.shape[1], image.shape[0]), colour, -1)
    cv2.addWeighted(overlay, 0.75, image, 0.25, 0, dst=image)
    cv2.putText(image, text, (int(12 * scale), image.shape[0] - int(14 * scale)), cv2.FONT_HERSHEY_DUPLEX,
                0.8 * scale, (255, 255, 255), max(1, int(1.5 * scale)), cv2.LINE_AA)
