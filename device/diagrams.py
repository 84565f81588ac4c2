"""Shot diagrams: the table drawn to scale with each ball's path and the contacts numbered in order.

This is the picture players use to discuss a three-cushion shot: the cue ball's line, where it met each cushion and
ball, and where everything stopped. Drawn with OpenCV from the Shot record alone, so a diagram of a shot from the
camera and one from the virtual table's truth can be compared side by side.
"""

from __future__ import annotations

from typing import Mapping

import cv2
import numpy as np

from rules.events import EventType
from rules.shot import Shot
from rules.tables import TableSpec, balkline_fields, free_game_corner_zones
from rules.verdict import Verdict

# BGR colours of the balls, close to the real ones.
BALL_BGR: Mapping[str, tuple[int, int, int]] = {
    "white": (235, 235, 235), "spot": (60, 210, 240), "red": (40, 40, 210), "cue": (240, 240, 240),
    "yellow": (40, 220, 240), "green": (60, 150, 30), "brown": (30, 70, 130), "blue": (200, 90, 20),
    "pink": (180, 140, 250), "black": (20, 20, 20), "mingo": (60, 200, 240), "1": (240, 240, 240),
    "2": (60, 200, 240),
}
POOL_BGR = {1: (0, 215, 255), 2: (200, 70, 0), 3: (0, 0, 220), 4: (130, 0, 90), 5: (0, 120, 255),
            6: (40, 130, 0), 7: (20, 40, 120), 9: (0, 215, 255), 10: (200, 70, 0), 11: (0, 0, 220),
            12: (130, 0, 90), 13: (0, 120, 255), 14: (40, 130, 0), 15: (20, 40, 120)}
CLOTH = (70, 120, 20)
RAIL = (40, 60, 90)


def ball_colour(ball: str) -> tuple[int, int, int]:
    if ball.startswith("red"):
        return BALL_BGR["red"]
    if ball.isdigit() and int(ball) in POOL_BGR:
        return POOL_BGR[int(ball)]
    return BALL_BGR.get(ball, (200, 200, 200))


class TableCanvas:
    """Table millimetres onto a picture: the table upright (bottom cushion at the bottom), with a rail border."""

    def __init__(self, table: TableSpec, height_px: int = 900, discipline: str | None = None) -> None:
        self.table = table
        self.rail = int(height_px * 0.04)
        self.scale = (height_px - 2 * self.rail) / table.length
        self.size = (int(round(table.width * self.scale)) + 2 * self.rail, height_px)
        self.discipline = discipline

    def px(self, xy) -> tuple[int, int]:
        x, y = float(xy[0]), float(xy[1])
        return (int(round(self.rail + x * self.scale)), int(round(self.size[1] - self.rail - y * self.scale)))

    def blank(self) -> np.ndarray:
        w, h = self.size
        img = np.full((h, w, 3), RAIL, np.uint8)
        cv2.rectangle(img, self.px((0, self.table.length)), self.px((self.table.width, 0)), CLOTH, -1)
        for d in self.table.diamonds:
            cv2.circle(img, self._on_rail(d), max(2, self.rail // 6), (230, 230, 230), -1, cv2.LINE_AA)
        for p in self.table.pockets:
            cv2.circle(img, self.px(p.drop), int(p.mouth * self.scale * 0.6), (15, 15, 15), -1, cv2.LINE_AA)
        self._markings(img)
        return img

    def _on_rail(self, d) -> tuple[int, int]:
        x, y = self.px(d)
        w, h = self.size
        if d[0] <= 0:
            x -= self.rail // 2
        elif d[0] >= self.table.width:
            x += self.rail // 2
        elif d[1] <= 0:
            y += self.rail // 2
        else:
            y -= self.rail // 2
        return x, y

    def _markings(self, img: np.ndarray) -> None:
        chalk = (200, 215, 200)
        disc = self.discipline or ""
        zones = []
        if disc.startswith("balkline_"):
            zones = balkline_fields(self.table, 473.0 if "_47_" in disc else 710.0)
        elif disc == "free_game":
            zones = free_game_corner_zones(self.table)
        for z in zones:
            pts = np.array([self.px(p) for p in z.points], np.int32)
            cv2.polylines(img, [pts], True, chalk, 1, cv2.LINE_AA)
        for name, spot in self.table.spots.items():
            if not name.startswith(("aux_", "lat_", "king")):
                c = self.px(spot)
                cv2.drawMarker(img, c, chalk, cv2.MARKER_CROSS, max(6, self.rail // 3), 1, cv2.LINE_AA)
        if "baulk_line_y" in self.table.lines:
            y = self.table.lines["baulk_line_y"]
            r = self.table.lines["d_radius"]
            cv2.line(img, self.px((0, y)), self.px((self.table.width, y)), chalk, 1, cv2.LINE_AA)
            cv2.ellipse(img, self.px((self.table.width / 2, y)), (int(r * self.scale),) * 2, 0, 0, 180, chalk, 1,
                        cv2.LINE_AA)

    def ball(self, img: np.ndarray, ball: str, xy, outline: bool = False) -> None:
        r = max(3, int(round(self.table.ball_radius * self.scale)))
        c = self.px(xy)
        if outline:
            cv2.circle(img, c, r, ball_colour(ball), 1, cv2.LINE_AA)
            return
        cv2.circle(img, c, r, ball_colour(ball), -1, cv2.LINE_AA)
        cv2.circle(img, c, r, (30, 30, 30), 1, cv2.LINE_AA)


def shot_diagram(shot: Shot, table: TableSpec, verdict: Verdict | None = None, height_px: int = 900,
                 discipline: str | None = None) -> np.ndarray:
    canvas = TableCanvas(table, height_px, discipline or shot.discipline)
    img = canvas.blank()
    for ball, p in shot.start.items():
        canvas.ball(img, ball, p, outline=True)  # where each ball started: a ring
    for ball, track in shot.tracks.items():
        pts = np.array([canvas.px((x, y)) for _, x, y in track], np.int32)
        width = 3 if ball == shot.cue_ball else 2
        if len(pts) > 1:
            cv2.polylines(img, [pts], False, ball_colour(ball), width, cv2.LINE_AA)
    for ball, p in shot.end.items():
        canvas.ball(img, ball, p)
    # The contacts of the shot, numbered in order, at the cue ball's (or the ball's) position at that time.
    n = 0
    for e in shot.events:
        if e.type not in (EventType.BALL_BALL, EventType.CUSHION, EventType.POCKET, EventType.OFF_TABLE):
            continue
        who = e.ball if e.ball else (shot.cue_ball if e.balls and shot.cue_ball in e.balls else e.balls[0])
        where = _position_at(shot, who, e.t)
        if where is None:
            continue
        n += 1
        c = canvas.px(where)
        cv2.circle(img, c, 11, (255, 255, 255), -1, cv2.LINE_AA)
        cv2.circle(img, c, 11, (0, 0, 0), 1, cv2.LINE_AA)
        label = str(n)
        size = cv2.getTextSize(label, cv2.FONT_HERSHEY_SIMPLEX, 0.45, 1)[0]
        cv2.putText(img, label, (c[0] - size[0] // 2, c[1] + size[1] // 2), cv2.FONT_HERSHEY_SIMPLEX, 0.45,
                    (0, 0, 0), 1, cv2.LINE_AA)
    if verdict is not None:
        img = _with_caption(img, verdict)
    return img


def _position_at(shot: Shot, ball: str, t: float):
    track = shot.tracks.get(ball)
    if track:
        ts = np.array([s[0] for s in track])
        xs = np.array([s[1] for s in track])
        ys = np.array([s[2] for s in track])
        return (float(np.interp(t, ts, xs)), float(np.interp(t, ts, ys)))
    return shot.start.get(ball) or shot.end.get(ball)


def _with_caption(img: np.ndarray, v: Verdict) -> np.ndarray:
    text = f"shot {v.shot}  {v.shooter}: +{v.points.get(v.shooter, 0)}"
    if v.foul is not None:
        text += f"  FOUL {v.foul.code}"
    elif v.reason:
        text += f"  {v.reason}"
    text += f"   {v.score.get('A', 0)}-{v.score.get('B', 0)}"
    strip = np.zeros((28, img.shape[1], 3), np.uint8)
    cv2.putText(strip, text, (8, 19), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (255, 255, 255), 1, cv2.LINE_AA)
    return np.vstack([strip, img])
