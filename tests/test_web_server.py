"""The web app over real HTTP on 127.0.0.1: open reading, PIN-guarded controls, CSRF, rate limit, SSE latency."""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from device.store import MatchStore
from device.web import WebApp
from device.web.auth import PinStore, RateLimiter
from rules.log import read_log

ROOT = Path(__file__).parents[1]
DEMO = (ROOT / "fixtures" / "logs" / "three_cushion_demo.jsonl").read_text().splitlines()
PIN = "4821"


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def table(tmp_path: Path):
    store = MatchStore(tmp_path / "matches.db")
    live = store.new_match("three_cushion", ("Ana", "Rui"), distance=15)
    clock = Clock()
    app = WebApp(live, tmp_path / "web", clock=clock)
    app.pins.set(PIN)
    server = app.serve("127.0.0.1", 0)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    yield app, live, store, base, clock
    app.close()
    store.close()


def shots(live, n: int, start: int = 0) -> list:
    return [r for _, r in read_log(DEMO[start:start + n], "three_cushion", live.referee.table)]


def request(base: str, path: str, body: Any = None, *, cookie: str | None = None, csrf: str | None = None,
            raw: bytes | None = None, ctype: str = "application/json") -> tuple[int, dict, Any]:
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    req = urllib.request.Request(base + path, data=data, method="POST" if data is not None else "GET")
    if data is not None:
        req.add_header("Content-Type", ctype)
    if cookie:
        req.add_header("Cookie", cookie)
    if csrf:
        req.add_header("X-CSRF-Token", csrf)
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            payload = r.read()
            status, headers = r.status, dict(r.headers)
    except urllib.error.HTTPError as exc:
        payload, status, headers = exc.read(), exc.code, dict(exc.headers)
    if headers.get("Content-Type", "").startswith("application/json"):
        return status, headers, json.loads(payload)
    return status, headers, payload


def login(base: str, pin: str = PIN) -> tuple[str, str]:
    status, headers, body = request(base, "/api/login", {"pin": pin})
    assert status == 200, body
    cookie = headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    return cookie.split(";")[0], body["csrf"]


OVERRIDE = {"control": "override", "points": {"B": 3}, "reason": "referee saw the kiss"}


def test_state_is_readable_without_a_pin(table) -> None:
    app, live, _, base, _ = table
    for r in shots(live, 3):
        live.append(r)
    app.publish(live.last_verdict.to_dict(), live.summary())
    status, _, state = request(base, "/api/state")
    assert status == 200
    assert state["summary"]["score"] == live.summary()["score"] == {"A": 0, "B": 1}
    assert [s["name"] for s in state["sides"]] == ["Ana", "Rui"]
    assert state["sides"][1]["score"] == 1 and state["verdict"]["shot"] == 3
    assert any("no carom" in line["text"] for line in state["lines"])
    status, headers, page = request(base, "/")
    assert status == 200 and b"/app.js" in page and "default-src 'self'" in headers["Content-Security-Policy"]
    status, headers, png = request(base, "/diagram/last.png")
    assert status == 200 and headers["Content-Type"] == "image/png" and png[:8] == b"\x89PNG\r\n\x1a\n"


def test_override_needs_the_pin_and_is_stored(table) -> None:
    app, live, store, base, _ = table
    for r in shots(live, 3):
        live.append(r)
    before = store.export_log(live.id)
    status, _, body = request(base, "/api/control", OVERRIDE)
    assert status == 401 and "PIN" in body["error"]
    assert store.export_log(live.id) == before and live.summary()["score"]["B"] == 1

    told = []
    app.after_control = told.append  # the live loop's hook to redraw the device display
    cookie, csrf = login(base)
    status, _, body = request(base, "/api/control", OVERRIDE, cookie=cookie, csrf=csrf)
    assert status == 200, body
    assert [c.kind for c in told] == ["override"]
    # The override replaces the last shot's points (B had 1 from earlier shots, 0 on the last): 1 + 3.
    assert body["state"]["summary"]["score"]["B"] == 4 == live.summary()["score"]["B"]
    last = json.loads(store.export_log(live.id).splitlines()[-1])
    assert last == OVERRIDE
    # The override reached the published state, as an open page would see it.
    assert request(base, "/api/state")[2]["summary"]["score"]["B"] == 4


def test_csrf_token_is_required(table) -> None:
    _, live, store, base, _ = table
    for r in shots(live, 3):
        live.append(r)
    cookie, csrf = login(base)
    before = store.export_log(live.id)
    for token in (None, "forged", csrf + "x"):
        status, _, body = request(base, "/api/control", OVERRIDE, cookie=cookie, csrf=token)
        assert status == 403 and "X-CSRF-Token" in body["error"]
    # A token without its session cookie is no better.
    assert request(base, "/api/control", OVERRIDE, csrf=csrf)[0] == 401
    assert store.export_log(live.id) == before


def test_bad_pins_are_rate_limited(table) -> None:
    app, _, _, base, clock = table
    for _ in range(5):
        status, _, body = request(base, "/api/login", {"pin": "0000"})
        assert status == 403 and body["error"] == "wrong PIN"
    status, headers, body = request(base, "/api/login", {"pin": PIN})
    assert status == 429 and int(headers["Retry-After"]) >= 1, body  # even the right PIN waits
    clock.t += 61
    assert request(base, "/api/login", {"pin": PIN})[0] == 200


def test_rate_limiter_window() -> None:
    clock = Clock()
    rl = RateLimiter(2, 10.0, clock)
    rl.hit("a"), rl.hit("a")
    assert rl.retry_after("a") == pytest.approx(10.0) and rl.retry_after("b") == 0
    clock.t += 4
    assert rl.retry_after("a") == pytest.approx(6.0)
    clock.t += 6
    assert rl.retry_after("a") == 0


def test_pin_is_stored_hashed(tmp_path: Path) -> None:
    pins = PinStore(tmp_path)
    assert not pins.check("1234")  # no PIN set: nobody gets in
    pins.set("1234")
    text = pins.path.read_text()
    assert "1234" not in text and json.loads(text)["scheme"] == "scrypt"
    assert pins.check("1234") and not pins.check("1235") and not pins.check(1234)
    with pytest.raises(ValueError):
        pins.set("12a4")


def test_bad_requests_get_json_errors(table) -> None:
    _, live, store, base, _ = table
    cookie, csrf = login(base)
    cases = [
        (dict(raw=b"{not json"), 400, "not valid JSON"),
        (dict(body={"control": "teleport"}), 400, "unknown control"),
        (dict(body={"control": "override", "points": {"A": "many"}}), 400, "whole number"),
        (dict(body=["undo"]), 400, "JSON object"),
        (dict(body={"control": "undo"}), 400, ""),  # nothing to undo yet: the referee refuses
        (dict(raw=b"x" * 20000), 413, "bytes"),
        (dict(body={"control": "undo"}, ctype="text/plain"), 415, "JSON"),
    ]
    for kwargs, want, text in cases:
        status, headers, body = request(base, "/api/control", cookie=cookie, csrf=csrf, **kwargs)
        assert status == want, (kwargs, body)
        assert isinstance(body, dict) and text in body["error"] and "Traceback" not in body["error"]
    assert store.export_log(live.id) == ""
    for path in ("/../../etc/passwd", "/static/app.js", "/index.html", "/%2e%2e/store.py"):
        status, _, body = request(base, path)
        assert status == 404 and "error" in body
    assert request(base, "/diagram/last.png")[0] == 404  # no shot yet
    assert request(base, "/api/state", {"x": 1})[0] == 404  # nothing else is writable
    head = urllib.request.Request(base + "/events", method="HEAD")
    with pytest.raises(urllib.error.HTTPError) as exc:
        urllib.request.urlopen(head, timeout=2)
    assert exc.value.code == 405


def test_refused_post_leaves_a_kept_alive_connection_usable(table) -> None:
    _, _, _, base, _ = table
    host, port = base.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=5)
    headers = {"Content-Type": "application/json"}
    conn.request("POST", "/api/control", json.dumps(OVERRIDE), headers)  # refused before its body is used
    resp = conn.getresponse()
    assert resp.status == 401 and json.loads(resp.read())["error"]
    conn.request("POST", "/api/login", json.dumps({"pin": PIN}), headers)  # the same connection
    resp = conn.getresponse()
    assert resp.status == 200 and "csrf" in json.loads(resp.read())
    conn.close()


def _sse_lines(base: str):
    host, port = base.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=5)
    conn.request("GET", "/events")
    resp = conn.getresponse()
    assert resp.status == 200 and resp.getheader("Content-Type").startswith("text/event-stream")
    return conn, resp


def read_event(resp) -> dict:
    data = None
    while True:
        line = resp.fp.readline().decode()
        if line.startswith("data: "):
            data = json.loads(line[6:])
        elif line == "\n" and data is not None:
            return data


def test_a_board_published_as_the_app_closes_reaches_the_open_pages(table) -> None:
    """The verdict judged as a recording ends is published and the app closed at once: the open streams still
    send it before they end."""
    app, live, _, base, _ = table
    conn, resp = _sse_lines(base)
    read_event(resp)
    live.append(shots(live, 1)[0])
    # Both under the stream's condition, so its thread cannot wake between them: it sees the new board and the
    # app closed together.
    with app._changed:
        app.publish(live.last_verdict.to_dict(), live.summary())
        app.close()
    events = []
    while (line := resp.fp.readline().decode()):  # the stream ends once the last board is out
        if line.startswith("data: "):
            events.append(json.loads(line[6:]))
    conn.close()
    assert [e["seq"] for e in events] == [live.seq]


def test_sse_update_within_200_ms_of_publish(table) -> None:
    app, live, _, base, _ = table
    conn, resp = _sse_lines(base)
    first = read_event(resp)
    assert first["seq"] == 0
    latencies = []
    for r in shots(live, 5):
        live.append(r)
        t0 = time.perf_counter()
        app.publish(live.last_verdict.to_dict(), live.summary())
        event = read_event(resp)
        latencies.append(time.perf_counter() - t0)
        assert event["seq"] == live.seq and event["summary"]["score"] == live.summary()["score"]
    conn.close()
    assert max(latencies) < 0.2, latencies


def test_close_ends_open_streams(tmp_path: Path) -> None:
    store = MatchStore(tmp_path / "m.db")
    app = WebApp(store.new_match("three_cushion", ("Ana", "Rui")), tmp_path / "web")
    server = app.serve("127.0.0.1", 0)
    conn, resp = _sse_lines(f"http://127.0.0.1:{server.server_address[1]}")
    read_event(resp)
    t0 = time.perf_counter()
    app.close()
    assert time.perf_counter() - t0 < 2
    assert resp.fp.readline() == b""  # the stream ended rather than hanging
    conn.close()
    store.close()


def test_new_game_and_new_match_need_the_pin_and_start_in_the_store(table) -> None:
    app, live, store, base, _ = table
    for record in shots(live, 3):
        live.append(record)
    assert request(base, "/api/match", {"action": "new_game"})[0] == 401
    cookie, csrf = login(base)
    assert request(base, "/api/match", {"action": "new_game"}, cookie=cookie)[0] == 403  # no CSRF token
    assert [m.ended for m in store.matches()] == [None]

    status, _, body = request(base, "/api/match", {"action": "new_game"}, cookie=cookie, csrf=csrf)
    assert status == 200, body
    first, game = store.matches()
    assert first.ended is not None and first.winner is None  # abandoned at 0-1: no winner
    assert game.ended is None and game.players == ("Ana", "Rui") and game.distance == 15
    assert body["state"]["summary"]["score"] == {"A": 0, "B": 0} and body["state"]["seq"] == 0
    assert app.live.id == game.id and len(store.log_rows(first.id)) == 3  # the old log is kept whole

    status, _, body = request(base, "/api/match", {"action": "new_match", "players": [" Bea  Lima", "Carlos"],
                                                   "distance": 20}, cookie=cookie, csrf=csrf)
    assert status == 200, body
    new = store.matches()[-1]
    assert new.players == ("Bea Lima", "Carlos") and new.distance == 20 and new.discipline == "three_cushion"
    assert [s["name"] for s in body["state"]["sides"]] == ["Bea Lima", "Carlos"]
    assert [s["name"] for s in request(base, "/api/state")[2]["sides"]] == ["Bea Lima", "Carlos"]
    # Controls now go to the new match.
    status, _, body = request(base, "/api/control", {"control": "concede", "side": "B"}, cookie=cookie, csrf=csrf)
    assert status == 200, body
    assert len(store.log_rows(new.id)) == 1 and len(store.log_rows(game.id)) == 0


@pytest.mark.parametrize("body, field", [
    ({"action": "rematch"}, "action"),
    ({"action": "new_match", "players": ["Ana"]}, "players"),
    ({"action": "new_match", "players": ["Ana", "Ana"]}, "different names"),
    ({"action": "new_match", "players": ["Ana", "   "]}, "players"),
    ({"action": "new_match", "players": ["Ana", "x" * 41]}, "players"),
    ({"action": "new_match", "players": ["Ana", 7]}, "players"),
    ({"action": "new_match", "players": ["Ana", "Rui"], "distance": "15"}, "distance"),
    ({"action": "new_match", "players": ["Ana", "Rui"], "distance": 0}, "positive"),
    ({"action": "new_game", "players": ["Ana", "Rui"]}, "players"),
    (["new_game"], "JSON object"),
])
def test_a_bad_new_match_is_refused_and_ends_nothing(table, body: Any, field: str) -> None:
    app, live, store, base, _ = table
    cookie, csrf = login(base)
    status, _, answer = request(base, "/api/match", body, cookie=cookie, csrf=csrf)
    assert status == 400 and field in answer["error"], answer
    assert [m.ended for m in store.matches()] == [None] and app.live is live
