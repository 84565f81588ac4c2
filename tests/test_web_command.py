"""``arbitro web`` (device.web.command): setting the PIN, refusing what cannot be served, and serving."""

from __future__ import annotations

import argparse
import io
import json
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from device.store import MatchStore
from device.web.auth import PinStore
from device.web.command import add_web_parser, web_command


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="arbitro")
    add_web_parser(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(["web", *argv])


def serve(args: argparse.Namespace) -> tuple[io.StringIO, threading.Event, threading.Thread, list[int]]:
    """``web_command`` in a thread, once it has printed the address it serves on."""
    out, stop, result = io.StringIO(), threading.Event(), []
    t = threading.Thread(target=lambda: result.append(web_command(args, out, stop=stop)))
    t.start()
    deadline = time.monotonic() + 10
    while "http://" not in out.getvalue() and time.monotonic() < deadline:
        time.sleep(0.02)
    return out, stop, t, result


def test_set_pin_from_stdin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("55123\n"))
    out = io.StringIO()
    assert web_command(parse("--data", str(tmp_path), "--set-pin"), out) == 0
    assert PinStore(tmp_path).check("55123") and "PIN set" in out.getvalue()
    monkeypatch.setattr(sys, "stdin", io.StringIO("12\n"))
    assert web_command(parse("--data", str(tmp_path), "--set-pin"), out) == 2
    assert PinStore(tmp_path).check("55123")  # the old PIN stays


def test_refuses_without_an_unfinished_match(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    MatchStore(tmp_path / "m.db").close()
    assert web_command(parse("--data", str(tmp_path), "--store", str(tmp_path / "m.db"))) == 2
    assert "no unfinished match" in capsys.readouterr().err
    assert web_command(parse("--data", str(tmp_path))) == 2


def test_serves_the_unfinished_match(tmp_path: Path) -> None:
    with MatchStore(tmp_path / "m.db") as store:
        store.new_match("three_cushion", ("Ana", "Rui"), distance=15)
    args = parse("--data", str(tmp_path / "web"), "--store", str(tmp_path / "m.db"), "--host", "127.0.0.1",
                 "--port", "0")
    out, stop, t, result = serve(args)
    try:
        url = out.getvalue().split()[4]
        assert "no PIN set" in out.getvalue()
        with urllib.request.urlopen(url + "api/state", timeout=5) as r:
            assert [s["name"] for s in json.loads(r.read())["sides"]] == ["Ana", "Rui"]
    finally:
        stop.set()
        t.join(10)
    assert result == [0]


def test_the_wizard_alone_for_a_table_being_set_up(tmp_path: Path) -> None:
    """No store yet (a first install): the wizard is served on its camera, the board says there is no match and
    every control is refused with one clear line."""
    import cv2
    import numpy as np

    from tests.test_web_server import login, request

    picture = tmp_path / "view.png"
    cv2.imwrite(str(picture), np.full((48, 64, 3), 70, np.uint8))
    PinStore(tmp_path / "web").set("4821")
    args = parse("--data", str(tmp_path / "web"), "--source", str(picture), "--host", "127.0.0.1", "--port", "0")
    out, stop, t, result = serve(args)
    try:
        assert "the calibration wizard (no match)" in out.getvalue()
        base = out.getvalue().split("http://")[1].split("/")[0]
        base = f"http://{base}"
        state = request(base, "/api/state")[2]
        assert state["status"].startswith("NO MATCH") and [s["name"] for s in state["sides"]] == ["", ""]
        assert request(base, "/")[0] == 200 and request(base, "/wizard")[0] == 200
        assert request(base, "/diagram/last.png")[0] == 404
        deadline = time.monotonic() + 10
        while request(base, "/wizard/live.jpg")[0] != 200 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert request(base, "/wizard/live.jpg")[2][:2] == b"\xff\xd8"
        cookie, csrf = login(base)
        for path, body in (("/api/control", {"control": "undo"}), ("/api/match", {"action": "new_game"})):
            status, _, answer = request(base, path, body, cookie=cookie, csrf=csrf)
            assert status == 400 and "no match is played on this table" in answer["error"], path
        assert request(base, "/api/wizard/still", {}, cookie=cookie, csrf=csrf)[0] == 200
    finally:
        stop.set()
        t.join(10)
    assert result == [0]
    assert web_command(parse("--data", str(tmp_path / "web"))) == 2  # neither a store nor a camera


def test_arbitro_calibrate_wizard_serves_the_wizard_saving_where_out_says(tmp_path: Path) -> None:
    import subprocess

    import cv2
    import numpy as np

    from tests.test_web_server import request

    picture = tmp_path / "view.png"
    cv2.imwrite(str(picture), np.full((48, 64, 3), 70, np.uint8))
    root = Path(__file__).resolve().parent.parent
    wrong = subprocess.run([sys.executable, "-m", "device", "calibrate", str(picture), "--out",
                            str(tmp_path / "x.json"), "--wizard"], capture_output=True, text=True, cwd=root,
                           timeout=60)
    assert wrong.returncode == 2 and "table.calib.json" in wrong.stderr and len(wrong.stderr.splitlines()) == 1
    proc = subprocess.Popen([sys.executable, "-m", "device", "calibrate", str(picture), "--out",
                             str(tmp_path / "web" / "table.calib.json"), "--wizard", "--host", "127.0.0.1",
                             "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=root)
    try:
        line = proc.stdout.readline()
        assert "calibration wizard" in line, line + proc.stderr.read() if proc.poll() is not None else line
        base = "http://" + line.split("http://")[1].split("/")[0]
        assert request(base, "/wizard")[0] == 200
        assert (tmp_path / "web").is_dir()
    finally:
        proc.terminate()
        proc.wait(10)
