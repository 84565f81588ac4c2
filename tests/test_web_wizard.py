"""The calibration wizard over HTTP: the automatic corners on a fixture clip, saving needs the PIN, bad corners."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from calibration.file import read_calibration
from device.store import MatchStore
from device.web import WebApp
from device.calibrate_command import run_calibrate
from device.web.wizard import CALIB_FILE, Wizard, _args
from tests.test_web_server import PIN, login, request

CLIP = Path(__file__).parents[1] / "fixtures" / "clips" / "arm_over_the_table.mp4"


@pytest.fixture(scope="module")
def wizard_app(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wizard")
    store = MatchStore(tmp / "m.db")
    data = tmp / "web"
    app = WebApp(store.new_match("three_cushion", ("Ana", "Rui")), data,
                 wizard=Wizard(str(CLIP), data, table="carom_match"))
    app.pins.set(PIN)
    server = app.serve("127.0.0.1", 0)
    yield app, data, f"http://127.0.0.1:{server.server_address[1]}"
    app.close()
    store.close()


def test_automatic_calibration_and_still(wizard_app, tmp_path: Path) -> None:
    _, _, base = wizard_app
    status, _, auto = request(base, "/api/wizard")
    assert status == 200 and auto["found"] and auto["table"] == "carom_match"
    assert (auto["width"], auto["height"]) == (640, 480) and len(auto["corners_px"]) == 4
    # Exactly what ``arbitro calibrate`` finds in the same clip: the wizard runs the command's own code.
    same = run_calibrate(_args(str(CLIP), tmp_path / "cli.calib.json", table="carom_match", lens=None))
    assert auto["corners_px"] == same["corners_px"] and auto["quality"] == same["quality"]
    assert all(0 <= x <= 640 and 0 <= y <= 480 for x, y in auto["corners_px"])
    assert all("/" not in str(v) for v in auto.values())  # no server paths leak to the page
    for path in ("/wizard/still.png", "/wizard/overlay.png"):
        status, headers, png = request(base, path)
        assert status == 200 and png[:4] == b"\x89PNG", path
    status, _, page = request(base, "/wizard")
    assert status == 200 and b"/wizard.js" in page


def test_saving_corners_needs_the_pin_and_writes_the_data_folder(wizard_app) -> None:
    _, data, base = wizard_app
    auto = request(base, "/api/wizard")[2]
    moved = [[x + 1.5, y - 1.0] for x, y in auto["corners_px"]]
    assert request(base, "/api/wizard/save", {"corners": moved})[0] == 401
    assert not (data / CALIB_FILE).exists()
    cookie, csrf = login(base)
    assert request(base, "/api/wizard/save", {"corners": moved}, cookie=cookie)[0] == 403  # no CSRF token
    for bad in ([[0, 0]] * 3, [[0, 0], [1, 1], [2, "x"], [3, 3]], "corners", [[1e9, 0]] * 4):
        status, _, body = request(base, "/api/wizard/save", {"corners": bad}, cookie=cookie, csrf=csrf)
        assert status == 400 and "corners" in body["error"], bad
    assert not (data / CALIB_FILE).exists()
    status, _, body = request(base, "/api/wizard/save", {"corners": moved}, cookie=cookie, csrf=csrf)
    assert status == 200, body
    assert body["saved"] == CALIB_FILE
    calib = read_calibration(data / CALIB_FILE)
    assert calib.quality["manual_corners"] == 1
    assert np.abs(np.asarray(calib.corners_px) - np.asarray(moved)).max() < 0.05
    assert json.loads((data / CALIB_FILE).read_text())  # a whole file, as arbitro run --calib reads it


def test_no_wizard_without_a_source(tmp_path: Path) -> None:
    store = MatchStore(tmp_path / "m.db")
    app = WebApp(store.new_match("three_cushion", ("Ana", "Rui")), tmp_path / "web")
    server = app.serve("127.0.0.1", 0)
    try:
        status, _, body = request(f"http://127.0.0.1:{server.server_address[1]}", "/api/wizard")
        assert status == 404 and "source" in body["error"]
    finally:
        app.close()
        store.close()
