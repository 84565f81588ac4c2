"""The calibration wizard over HTTP: the live view, the still taken only once the view is still (and only with the
PIN), the automatic corners on it, and saving with the table preset and the bottom end; bad input refused."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.file import read_calibration
from device.calibrate_command import run_calibrate
from device.store import MatchStore
from device.web import WebApp
from device.web.camera import FrameFeed
from device.web.wizard import CALIB_FILE, STILL_FILE, Wizard, _args, wait_ready
from tests.test_web_server import PIN, login, request

CLIP = Path(__file__).parents[1] / "fixtures" / "clips" / "arm_over_the_table.mp4"


def last_frame(clip: Path) -> np.ndarray:
    cap = cv2.VideoCapture(str(clip))
    last = None
    while True:
        ok, img = cap.read()
        if not ok:
            break
        last = img
    cap.release()
    assert last is not None
    return last


@pytest.fixture(scope="module")
def wizard_app(tmp_path_factory):
    """A wizard whose camera is a picture: the clip's last view (after the arm and the camera's nudge)."""
    tmp = tmp_path_factory.mktemp("wizard")
    picture = tmp / "view.png"
    cv2.imwrite(str(picture), last_frame(CLIP))
    store = MatchStore(tmp / "m.db")
    data = tmp / "web"
    app = WebApp(store.new_match("three_cushion", ("Ana", "Rui")), data,
                 wizard=Wizard.from_source(str(picture), data, table="carom_match"))
    app.pins.set(PIN)
    server = app.serve("127.0.0.1", 0)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    cookie, csrf = login(base)
    status, _, body = request(base, "/api/wizard")
    assert status == 200 and body["phase"] == "live" and body["result"] is None
    assert request(base, "/wizard/still.png")[0] == 404  # nothing taken yet
    assert request(base, "/api/wizard/still", {})[0] == 401  # taking the still needs the PIN
    assert request(base, "/api/wizard/still", {}, cookie=cookie)[0] == 403  # and the CSRF token
    status, _, body = request(base, "/api/wizard/still", {}, cookie=cookie, csrf=csrf)
    assert status == 200 and body["phase"] == "waiting", body
    ready = wait_ready(app.wizard)
    yield app, data, base, picture, ready, (cookie, csrf)
    app.close()
    store.close()


def test_the_live_view_is_a_jpeg_of_the_camera(wizard_app) -> None:
    app, _, base, picture, _, _ = wizard_app
    status, headers, jpeg = request(base, "/wizard/live.jpg")
    assert status == 200 and headers["Content-Type"] == "image/jpeg" and headers["Cache-Control"] == "no-store"
    view = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
    want = cv2.imread(str(picture))
    assert view.shape == want.shape and float(np.abs(view.astype(int) - want).mean()) < 4


def test_the_still_is_calibrated_as_arbitro_calibrate_would(wizard_app, tmp_path: Path) -> None:
    _, data, base, picture, ready, _ = wizard_app
    auto = ready["result"]
    assert auto["found"] and auto["table"] == "carom_match" and (auto["width"], auto["height"]) == (640, 480)
    assert ready["still_for"] >= ready["hold"] == 1.0 and not ready["moving"]
    # Exactly what ``arbitro calibrate`` finds in the same view: the wizard runs the command's own code.
    same = run_calibrate(_args(str(picture), tmp_path / "cli.calib.json", table="carom_match", lens=None))
    assert auto["corners_px"] == same["corners_px"] and auto["quality"] == same["quality"]
    assert all("/" not in str(v) for v in auto.values())  # no server paths leak to the page
    for path in ("/wizard/still.png", "/wizard/overlay.png"):
        status, headers, png = request(base, path)
        assert status == 200 and png[:4] == b"\x89PNG", path
    assert (data / STILL_FILE).is_file()
    status, _, page = request(base, "/wizard")
    assert status == 200 and b"/wizard.js" in page
    assert set(ready["options"]["tables"]) >= {"carom_match", "sinuca_br", "pool_9ft", "chapo"}
    assert ready["options"]["bottom"]["chapo"] == "cabaña de salida"


def test_saving_needs_the_pin_and_refuses_bad_input(wizard_app) -> None:
    _, data, base, _, ready, (cookie, csrf) = wizard_app
    corners = ready["result"]["corners_px"]
    assert request(base, "/api/wizard/save", {"corners": corners})[0] == 401
    assert request(base, "/api/wizard/save", {"corners": corners}, cookie=cookie)[0] == 403  # no CSRF token
    for bad, field in (({"corners": [[0, 0]] * 3}, "corners"), ({"corners": [[0, 0], [1, 1], [2, "x"], [3, 3]]},
                       "corners"), ({"corners": "corners"}, "corners"), ({"corners": [[1e9, 0]] * 4}, "corners"),
                       ({"corners": corners, "table": "../../etc/passwd"}, "table"),
                       ({"corners": corners, "discipline": "darts"}, "discipline"),
                       ({"corners": corners, "path": "/tmp/x.json"}, "path")):
        status, _, body = request(base, "/api/wizard/save", bad, cookie=cookie, csrf=csrf)
        assert status == 400 and field in body["error"], (bad, body)
    assert not (data / CALIB_FILE).exists()


def test_saved_with_the_preset_and_the_ends_swapped(wizard_app) -> None:
    app, data, base, _, ready, (cookie, csrf) = wizard_app
    bl, br, tr, tl = ready["result"]["corners_px"]
    told: list[Path] = []
    app.wizard.on_saved = lambda path: told.append(path) or "the live loop uses it now"
    try:
        # The page's "swap ends" turns the corner order by two: the other short cushion becomes the bottom.
        swapped = [tr, tl, bl, br]
        status, _, body = request(base, "/api/wizard/save", {"corners": swapped, "table": "sinuca_br",
                                                             "discipline": "sinuca"}, cookie=cookie, csrf=csrf)
    finally:
        app.wizard.on_saved = None
    assert status == 200, body
    assert body["saved"] == CALIB_FILE and body["table"] == "sinuca_br" and body["discipline"] == "sinuca"
    assert body["live"] == "the live loop uses it now" and told == [data / CALIB_FILE]
    calib = read_calibration(data / CALIB_FILE)
    assert calib.table.name == "sinuca_br" and calib.quality["manual_corners"] == 1
    assert np.abs(np.asarray(calib.corners_px) - np.asarray(swapped)).max() < 0.05
    # y = 0 of the table frame (the baulk end) is now where the automatic result had the top cushion (within a
    # few pixels: the corners are the cushion noses, a little above the cloth).
    w, length = calib.table.width, calib.table.length
    seen = np.asarray(calib.camera.table_to_image([[0, 0], [w, 0], [w, length], [0, length]])).reshape(4, 2)
    assert np.abs(seen - np.asarray([tr, tl, bl, br])).max() < 6
    assert np.abs(seen[0] - np.asarray(bl)).max() > 300
    assert json.loads((data / CALIB_FILE).read_text())["table"] == "sinuca_br"


def test_a_live_loop_that_refuses_the_calibration_is_said(wizard_app) -> None:
    app, _, base, _, ready, (cookie, csrf) = wizard_app

    def refuse(path: Path) -> str:
        raise RuntimeError("it was made at 640x480, the camera gives 1456x1088")

    app.wizard.on_saved = refuse
    try:
        status, _, body = request(base, "/api/wizard/save", {"corners": ready["result"]["corners_px"]},
                                  cookie=cookie, csrf=csrf)
    finally:
        app.wizard.on_saved = None
    assert status == 200 and body["live"].startswith("saved, but the live loop did not take it: it was made at")


def test_saving_before_a_still_is_refused(tmp_path: Path) -> None:
    store = MatchStore(tmp_path / "m.db")
    app = WebApp(store.new_match("three_cushion", ("Ana", "Rui")), tmp_path / "web",
                 wizard=Wizard(FrameFeed(), tmp_path / "web"))
    app.pins.set(PIN)
    server = app.serve("127.0.0.1", 0)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        cookie, csrf = login(base)
        status, _, body = request(base, "/api/wizard/save", {"corners": [[1, 1], [2, 1], [2, 2], [1, 2]]},
                                  cookie=cookie, csrf=csrf)
        assert status == 422 and "still" in body["error"]
        status, _, body = request(base, "/wizard/live.jpg")
        assert status == 503 and "no picture" in body["error"]  # a camera that has given nothing yet
    finally:
        app.close()
        store.close()


def test_no_wizard_without_a_camera(tmp_path: Path) -> None:
    store = MatchStore(tmp_path / "m.db")
    app = WebApp(store.new_match("three_cushion", ("Ana", "Rui")), tmp_path / "web")
    server = app.serve("127.0.0.1", 0)
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        for path in ("/api/wizard", "/wizard/live.jpg"):
            status, _, body = request(base, path)
            assert status == 404 and "source" in body["error"]
    finally:
        app.close()
        store.close()
