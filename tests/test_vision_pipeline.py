"""The pipeline's own filters between detection and tracking: what cannot be a ball on the table."""

from __future__ import annotations

import numpy as np

from rules.tables import chapo_pin_spots, preset
from vision.detections import Detections, PinObservation
from vision.pipeline import VisionPipeline

CHAPO = preset("chapo")
BALLS = ("1", "2", "mingo")


class FixedDetector:
    """Always the same blobs, each looking like the Mingo (a dark hole, a pale lying pin)."""

    def __init__(self, points):
        self.points = np.asarray(points, dtype=float)

    def detect(self, image, t):
        n = len(self.points)
        probs = np.tile([0.0, 0.0, 1.0], (n, 1))
        return Detections(t, self.points, self.points, np.full(n, 8.0), np.ones(n), BALLS, probs)


class KingDown:
    def __init__(self, at, seen=True):
        self.at = at
        self.seen = seen

    def observe(self, image, t, balls):
        spots = chapo_pin_spots(CHAPO)
        return PinObservation(t, {p: spots[p] for p in spots if p != "king"}, {"king": self.at},
                              frozenset() if self.seen else frozenset({"king"}))


def _run(pipeline, frames=20):
    image = np.zeros((4, 4, 3), np.uint8)
    return [pipeline.process(image, k / 30) for k in range(frames)]


def test_a_blob_over_a_chapo_hole_is_never_a_ball():
    hole = CHAPO.pocket("bottom_right").drop
    pipe = VisionPipeline(FixedDetector([[hole[0] - 20.0, hole[1] + 20.0], [600.0, 2100.0]]), BALLS, CHAPO,
                          cue_ball=lambda: "1")
    _run(pipe)
    assert np.allclose(pipe.last_positions[2], [600.0, 2100.0])  # the real Mingo, not the hole


def test_a_blob_on_a_lying_pin_is_never_a_ball():
    lying = (635.0, 1292.0)
    pipe = VisionPipeline(FixedDetector([[lying[0] + 10.0, lying[1]]]), BALLS, CHAPO, cue_ball=lambda: "1",
                          pins=KingDown(lying))
    _run(pipe)
    assert np.isnan(pipe.last_positions).all()


def test_a_ball_resting_over_a_pin_down_whose_place_was_not_seen_is_a_ball():
    """A pin down with no blob of its own (under a ball) is put on its spot, a stand-in: the ball lying over it is
    not dropped for being near that stand-in (Chapó seed 120: the mingo resting on the fallen top lateral was
    never seen at rest, its place 12 mm off)."""
    spot = chapo_pin_spots(CHAPO)["king"]
    ball = [spot[0] + 10.0, spot[1] + 15.0]
    pipe = VisionPipeline(FixedDetector([ball]), BALLS, CHAPO, cue_ball=lambda: "1", pins=KingDown(spot, seen=False))
    _run(pipe)
    assert np.allclose(pipe.last_positions[2], ball)


# --- naming the carom whites mid-game ---------------------------------------------------------------------------

CAROM = preset("carom_match")
WHITES = ("white", "spot", "red")
AT = {"white": (300.0, 700.0), "spot": (900.0, 1800.0), "red": (600.0, 2400.0)}


def _still_view(dotted_at: tuple[float, float] | None) -> np.ndarray:
    """Two white balls on a blue cloth (pixel = mm / 4); the one at ``dotted_at`` with a red dot on top."""
    import cv2

    image = np.full((800, 400, 3), (160, 90, 20), np.uint8)
    for x, y in (AT["white"], AT["spot"]):
        cv2.circle(image, (int(x / 4), int(y / 4)), 12, (236, 240, 242), -1)
    cv2.circle(image, (int(AT["red"][0] / 4), int(AT["red"][1] / 4)), 12, (40, 30, 200), -1)
    if dotted_at is not None:
        cv2.circle(image, (int(dotted_at[0] / 4), int(dotted_at[1] / 4)), 2, (40, 30, 200), -1)
    return image


def _whites(t: float) -> Detections:
    xy = np.array([AT["white"], AT["spot"], AT["red"]])
    probs = np.array([[0.5, 0.5, 0.0], [0.5, 0.5, 0.0], [0.0, 0.0, 1.0]])  # colour cannot tell the whites apart
    return Detections(t, xy, xy / 4, np.full(3, 12.0), np.ones(3), WHITES, probs)


def _first_shot(struck: str) -> "Shot":
    from rules.events import strike
    from rules.shot import Shot
    return Shot(cue_ball=struck, t_start=2.0, t_end=4.0, start=AT, events=(strike(2.05, struck),), end=AT)


def _watched(dotted_at, frames: int = 40, side_to_play: str = "white") -> VisionPipeline:
    pipe = VisionPipeline(FixedDetector(np.zeros((0, 2))), WHITES, CAROM, cue_ball=lambda: side_to_play,
                          lookalikes=("white", "spot"))
    image = _still_view(dotted_at)
    positions = np.array([AT["white"], AT["spot"], AT["red"]])
    for k in range(frames):
        pipe.evidence.observe(image, _whites(k / 60), positions, positions)
    return pipe


def test_mid_game_the_first_struck_white_is_named_by_the_dots_seen_at_rest():
    """The tracks' labels are right (the dots are on the track called spot): the spot struck first stays the spot
    though the side the match would open with plays the white (a coin toss mid-game, issue 7)."""
    pipe = _watched(dotted_at=AT["spot"])
    shot = pipe._settle_lookalikes(_first_shot("spot"))
    assert shot.struck_ball == "spot"


def test_mid_game_dots_on_the_track_called_white_swap_the_two_names():
    pipe = _watched(dotted_at=AT["white"])
    shot = pipe._settle_lookalikes(_first_shot("white"))
    assert shot.struck_ball == "spot" and shot.start["spot"] == AT["white"]


def test_without_dot_evidence_the_side_to_play_names_the_struck_white():
    """No dot seen (a low resolution): the old rule stands, the struck white is the side to play's."""
    pipe = _watched(dotted_at=None, side_to_play="white")
    assert pipe.evidence.verdict(before=10.0) is None
    assert pipe._settle_lookalikes(_first_shot("spot")).struck_ball == "white"


def test_too_few_still_frames_leave_the_naming_to_the_side_to_play():
    pipe = _watched(dotted_at=AT["white"], frames=3, side_to_play="spot")
    assert pipe.evidence.verdict(before=10.0) is None
    assert pipe._settle_lookalikes(_first_shot("spot")).struck_ball == "spot"


def test_frames_just_before_the_strike_are_not_evidence():
    """The cue at the ball (its tip can read as a dot) in the last 0.2 s before the strike does not count."""
    pipe = _watched(dotted_at=AT["white"], frames=40)
    assert pipe.evidence.verdict(before=0.2) is None  # every frame within the margin of this strike
    assert pipe.evidence.verdict(before=1.0) is True


# --- naming balls of distinct kinds from the still frames ---------------------------------------------------------

POOL = ("cue", "1", "9")


def _pool_frame(t: float, probs) -> Detections:
    xy = np.array([[300.0, 600.0], [700.0, 1200.0], [500.0, 2000.0]])
    return Detections(t, xy, xy / 4, np.full(3, 7.0), np.ones(3), POOL, np.asarray(probs, dtype=float))


def test_still_frames_taken_together_one_of_each_rename_a_track_placed_by_a_poor_reading():
    """Tracks called cue, 1, 9 (rows in that order); the ball tracked as the cue keeps reading as the 9 and the
    one tracked as the 9 reads as cue or 9 alike (a stripe cap-up): one of each, they trade names."""
    from vision.pipeline import RestingIdentity

    rest = RestingIdentity(POOL)
    probs = [[0.05, 0.05, 0.9], [0.0, 1.0, 0.0], [0.5, 0.0, 0.5]]
    xy = _pool_frame(0.0, probs).xy
    for k in range(20):
        rest.observe(_pool_frame(k / 60, probs), xy, xy)
        perm = rest.relabelling()
        if rest.decided:
            break
    assert rest.frames == rest.c.min_frames
    assert perm is not None and list(perm) == [2, 1, 0]  # the cue is the ball tracked as 9, and the other way


def test_a_naming_the_still_frames_agree_with_is_kept():
    from vision.pipeline import RestingIdentity

    rest = RestingIdentity(POOL)
    probs = [[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.3, 0.1, 0.6]]
    xy = _pool_frame(0.0, probs).xy
    for k in range(rest.c.min_frames):
        rest.observe(_pool_frame(k / 60, probs), xy, xy)
    assert rest.relabelling() is None and rest.decided


def test_the_pipeline_renames_the_tracks_before_the_first_shot():
    """End to end through the tracker: the blobs are placed by their first readings, the later still frames say
    the cue and the 9 were placed the wrong way round; the pipeline's positions then follow the new names."""
    class Flipping:
        def __init__(self):
            self.n = 0

        def detect(self, image, t):
            self.n += 1
            first = self.n <= 12  # the placing frames read the cue as the 9 and the 9 as the cue
            probs = [[0.2, 0.0, 0.8], [0.0, 1.0, 0.0], [0.8, 0.0, 0.2]] if first else \
                [[0.9, 0.0, 0.1], [0.0, 1.0, 0.0], [0.1, 0.0, 0.9]]
            return _pool_frame(t, probs)

    pipe = VisionPipeline(Flipping(), POOL, preset("pool_9ft"), cue_ball=lambda: "cue")
    image = np.zeros((4, 4, 3), np.uint8)
    for k in range(60):
        pipe.process(image, k / 60)
    assert pipe.resting.decided
    assert np.allclose(pipe.last_positions[POOL.index("cue")], [300.0, 600.0])
    assert np.allclose(pipe.last_positions[POOL.index("9")], [500.0, 2000.0])


class _Rolling:
    """The three carom balls at AT; from the 41st frame the ball at AT["white"] rolls up the table at 3 m/s. The
    first 12 frames read it as the plain white with odds ``lean`` (0.5: colour cannot tell the whites apart)."""

    def __init__(self, lean: float) -> None:
        self.n = 0
        self.lean = lean

    def detect(self, image, t):
        self.n += 1
        xy = np.array([AT["white"], AT["spot"], AT["red"]])
        if self.n > 40:
            xy[0, 1] += 3000.0 * (self.n - 40) / 60
        lean = self.lean if self.n <= 12 else 0.5
        probs = np.array([[lean, 1 - lean, 0.0], [1 - lean, lean, 0.0], [0.0, 0.0, 1.0]])
        return Detections(t, xy, xy / 4, np.full(3, 12.0), np.ones(3), WHITES, probs)


def test_the_whites_are_named_by_their_dots_as_the_first_shot_opens_not_when_it_closes():
    """Mid-game, the tracker placed the dotted ball under the name white (a poor first reading). The dots seen at
    rest rename the two as soon as the shot opens: during the shot the moving dotted ball is already the spot, so
    the detector's own reading at a close pass (a kiss) agrees with the names instead of pulling them across."""
    pipe = VisionPipeline(_Rolling(lean=0.6), WHITES, CAROM, cue_ball=lambda: "white", lookalikes=("white", "spot"))
    image = _still_view(dotted_at=AT["white"])
    for k in range(40):
        assert pipe.process(image, k / 60) is None
    assert np.allclose(pipe.last_positions[WHITES.index("white")], AT["white"])  # placed under the wrong name
    for k in range(40, 50):
        assert pipe.process(image, k / 60) is None  # the shot is open, not closed
    assert pipe.segmenter.open is not None
    spot = pipe.last_positions[WHITES.index("spot")]
    assert spot[0] == AT["white"][0] and spot[1] > AT["white"][1] + 100.0  # the rolling dotted ball is the spot
    # ... in the whole window the segmenter holds, its preroll at rest included (the strike is fitted on it)
    assert all(f.xy[WHITES.index("spot"), 0] == AT["white"][0] for f in pipe.segmenter.open)


def test_a_first_shot_the_clip_ends_in_is_named_as_one_that_closed():
    """The clip ends while the first shot still runs (a recording stopped, the camera gone): the shot ``flush``
    hands over is named by the same rule as one that closed. No dots resolved here, so the struck white is the
    side to play's."""
    pipe = VisionPipeline(_Rolling(lean=0.5), WHITES, CAROM, cue_ball=lambda: "spot", lookalikes=("white", "spot"))
    image = _still_view(dotted_at=None)
    for k in range(50):
        assert pipe.process(image, k / 60) is None
    shot = pipe.flush()
    assert shot is not None and shot.struck_ball == "spot"
