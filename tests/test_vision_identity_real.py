"""Ball identity on real overhead snooker frames (LukasSeglias/billiard-ai), against every ball's annotated colour:
with the true-colour defaults, and with the model fitted to this camera on half of the frames."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from tests import real_snooker_frames as real
from vision.detection import BallDetector
from vision.identity import ColourModel, ball_features

pytestmark = pytest.mark.skipif(not real.available(), reason=f"real frames not found at {real.FOLDER}")


@pytest.fixture(scope="module")
def observed() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features, true kinds and frame index of every detected real ball."""
    cases = real.cases()
    camera, table = real.camera_and_table(cases)
    frames = [cv2.imread(str(c.image)) for c in cases]
    detector = BallDetector(camera, table)
    background = detector.background_from_frames(frames)
    feats, kinds, index = [], [], []
    for n, (case, frame) in enumerate(zip(cases, frames)):
        det = detector.detect(frame, 0.0, background)
        ti, fi = real.match(det.px, case.px, 7.0)
        feats.append(ball_features(frame, det.px[fi], det.radius_px[fi]))
        kinds += [case.kinds[i] for i in ti]
        index += [n] * len(ti)
    return np.concatenate(feats), np.array(kinds), np.array(index)


def _accuracy(model: ColourModel, feats: np.ndarray, kinds: np.ndarray) -> float:
    guess = np.array(model.kind_names)[model.kind_probs(feats).argmax(axis=1)]
    return float((guess == kinds).mean())


def test_true_colour_defaults_name_most_real_balls(observed):
    feats, kinds, _ = observed
    # Measured 0.853: this camera's warm balance makes the brown read as a red and the green as the black.
    assert _accuracy(ColourModel("sinuca"), feats, kinds) >= 0.8


def test_a_model_fitted_to_the_camera_names_the_balls_of_other_frames(observed):
    feats, kinds, index = observed
    train = index % 2 == 0
    fitted = ColourModel("sinuca").fit(feats[train], kinds[train])
    # Measured 0.95 on the odd frames: the remaining errors are brown and red, close on this camera.
    assert _accuracy(fitted, feats[~train], kinds[~train]) >= 0.9
