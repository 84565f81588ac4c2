"""The table's web app: the scoreboard for phones on the club network, and the referee's controls behind a PIN.

Standard library only (http.server.ThreadingHTTPServer): on the Pi a framework would cost memory and start-up
time for a handful of routes. Routes:

    GET  /                 the scoreboard page (static files from this package only, by a fixed whitelist)
    GET  /events           server-sent events: the state, pushed the moment ``WebApp.publish`` is called
    GET  /api/state        the state as JSON
    GET  /api/session      {"logged_in", "csrf"}: lets a reloaded page recover its CSRF token
    GET  /diagram/last.png the last shot's diagram (404 before the first shot)
    POST /api/login        {"pin"} -> a session cookie (HttpOnly, SameSite=Strict) and the session's CSRF token
    POST /api/logout
    POST /api/control      a control record (DESIGN.md section 5), with the session cookie and X-CSRF-Token
    POST /api/match        {"action": "new_game"} or {"action": "new_match", "players": [A, B], "distance": N}
                           (PIN and CSRF as for controls): the current match ends, the next one starts
    GET  /wizard           the calibration wizard (when the app has a camera): /wizard/live.jpg the live view,
                           /api/wizard its state and result, /wizard/still.png and /wizard/overlay.png its pictures,
    POST /api/wizard/still (PIN and CSRF) waits for the view to stay still, takes the still and calibrates it, and
    POST /api/wizard/save  {"corners", "table", "discipline"} (PIN and CSRF) writes the data folder's table.calib.json

Nothing else is writable, and no request path is joined to a file-system path.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import dataclass
from http.cookies import CookieError, SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Mapping
from urllib.parse import urlsplit

from rules.controls import Control
from rules.errors import LogError
from rules.match import OptionError
from rules.registry import referee_for
from rules.tables import TableSpec

from ..store import LiveMatch, StoreError
from .auth import PinStore, RateLimiter, Sessions
from .state import board_state
from .wizard import Wizard, WizardError

log = logging.getLogger(__name__)

COOKIE = "arbitro_session"
CSRF_HEADER = "X-CSRF-Token"
MAX_BODY = 16 * 1024  # a control record is a few hundred bytes
MAX_SSE_CLIENTS = 32  # each holds a thread; a Pi has no use for more phones than that
KEEPALIVE_S = 15.0  # an SSE comment this often, so dead phones are noticed and proxies keep the stream
CLOSE_DRAIN_S = 2.0  # how long closing waits for the open pages to get the last board

# path -> (file in device/web/static, content type): the only files the server ever reads for a request.
STATIC: Mapping[str, tuple[str, str]] = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/app.css": ("app.css", "text/css; charset=utf-8"),
    "/wizard": ("wizard.html", "text/html; charset=utf-8"),
    "/wizard.js": ("wizard.js", "text/javascript; charset=utf-8"),
}

SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": "default-src 'self'; img-src 'self'; script-src 'self'; style-src 'self'; "
                               "connect-src 'self'; frame-ancestors 'none'; form-action 'self'",
}


MAX_NAME = 40  # a player's name on the scoreboard


@dataclass(frozen=True)
class NewMatch:
    """What a phone asked for: the next game (same players and distance) or a new match."""

    players: tuple[str, str]
    distance: int | None


def parse_new_match(body: Any, current: Any) -> NewMatch:
    """``{"action": "new_game"}`` or ``{"action": "new_match", "players": [A, B], "distance": N | null}``;
    LogError naming the field otherwise. ``current`` is the running match's MatchInfo."""
    def fail(name: str | None, problem: str) -> LogError:
        return LogError("new match", name, problem)

    if not isinstance(body, dict):
        raise fail(None, 'must be a JSON object like {"action": "new_game"}')
    action = body.get("action")
    allowed = {"new_game": {"action"}, "new_match": {"action", "players", "distance"}}
    if action not in allowed:
        raise fail("action", f"{action!r} is neither 'new_game' nor 'new_match'")
    unknown = sorted(set(body) - allowed[action])
    if unknown:
        raise fail(unknown[0], f"not a field of {action}")
    if action == "new_game":
        return NewMatch(tuple(current.players), current.distance)
    players = body.get("players")
    if not (isinstance(players, list) and len(players) == 2 and all(isinstance(n, str) for n in players)):
        raise fail("players", 'two names, like ["Ana", "Rui"]')
    names = tuple(" ".join(n.split()) for n in players)  # one line on the board, whatever was typed
    if not all(names) or any(len(n) > MAX_NAME for n in names):
        raise fail("players", f"each name 1 to {MAX_NAME} characters")
    if names[0] == names[1]:
        raise fail("players", "the two players need different names")
    distance = body.get("distance")
    if distance is not None and (isinstance(distance, bool) or not isinstance(distance, int)):
        raise fail("distance", "a whole number of points, or null for the discipline's")
    return NewMatch((names[0], names[1]), distance)


def next_match(old: LiveMatch, request: NewMatch, table: TableSpec | None = None) -> LiveMatch:
    """End ``old`` (abandoned when unfinished) and start the match asked for, on ``table`` (default: the old
    match's). The referee is built first, so a bad distance ends nothing."""
    info = old.info
    table = table or old.referee.table
    referee_for(info.discipline, table=table, distance=request.distance, options=dict(info.options))
    old.store.end_match(old.id)
    return old.store.new_match(info.discipline, request.players, distance=request.distance,
                               options=dict(info.options), table=table)


NO_MATCH = "no match is played on this table yet (this server only calibrates it; start one with arbitro run)"


def no_match_state(version: int) -> dict[str, Any]:
    """The board of a table being set up: the page's usual fields, empty, and a status line saying why."""
    return {"version": version, "seq": 0, "discipline": None, "title": "ARBITRO",
            "status": "NO MATCH: calibration at /wizard",
            "sides": [{"side": side, "name": "", "score": 0, "shooting": False, "stats": []} for side in "AB"],
            "centre": [], "lines": [], "respot": [], "announce": [], "summary": {}, "verdict": None,
            "has_diagram": False, "match_over": False}


def _load_static() -> dict[str, tuple[bytes, str]]:
    pkg = resources.files("device.web") / "static"
    return {path: (pkg.joinpath(name).read_bytes(), ctype) for path, (name, ctype) in STATIC.items()}


class WebApp:
    """The web side of one table: holds the published state, applies controls, and serves HTTP.

    ``lock`` guards the LiveMatch: pass the live loop's lock when both append, so a control and a shot are never
    folded at once. ``clock`` drives the PIN rate limit and session expiry (tests inject one). ``live`` None: a
    table being set up (``arbitro web --source`` without a store), the wizard only; the board says so.
    """

    def __init__(self, live: LiveMatch | None, data_dir: str | Path, *, lock: threading.RLock | None = None,
                 clock: Callable[[], float] = time.monotonic, login_limit: int = 5,
                 login_window: float = 60.0, wizard: Wizard | None = None) -> None:
        self.live = live
        self.wizard = wizard  # the calibration wizard (/wizard), when the app was given a camera
        # Called (in the request's thread, after the append) when a control changed the match, so the live loop
        # can redraw the device's own display too; the phones are already published to.
        self.after_control: Callable[[Control], None] | None = None
        # Starts the match a phone asked for; the live loop sets it to switch on its own thread (between two
        # frames, with a new vision processor). It must call ``switch_match``. None: done here, in the request.
        self.start_match: Callable[[NewMatch], None] | None = None
        self.data_dir = Path(data_dir)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.lock = lock or threading.RLock()
        self.pins = PinStore(self.data_dir)
        self.limiter = RateLimiter(login_limit, login_window, clock)
        self.sessions = Sessions(clock=clock)
        self.static = _load_static()
        self._changed = threading.Condition()
        self._version = 0
        self._closed = False
        self._sse_clients = 0
        self._diagram: tuple[int, bytes | None] = (-1, None)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        with self.lock:
            last = None if live is None else live.last_verdict
            self._state = self._build(None if last is None else last.to_dict(),
                                      {} if live is None else live.summary(), None)

    # --- the state ------------------------------------------------------------------------------------------------

    def _build(self, verdict: Mapping[str, Any] | None, summary: Mapping[str, Any], status: str | None
               ) -> dict[str, Any]:
        if self.live is None:
            return no_match_state(self._version)
        info = self.live.info
        return board_state(info.discipline, info.players, summary, verdict, self.live.referee.table,
                           seq=self.live.seq, version=self._version, has_diagram=bool(self.live.match.shots),
                           status=status)

    def publish(self, verdict: Mapping[str, Any] | None, summary: Mapping[str, Any],
                status: str | None = None) -> None:
        """The board changed (a shot judged, a control applied, the camera lost): push it to every open page."""
        with self.lock:
            state = self._build(verdict, summary, status)
        with self._changed:
            self._version += 1
            state["version"] = self._version
            self._state = state
            self._changed.notify_all()

    def state(self) -> dict[str, Any]:
        with self._changed:
            return self._state

    def wait_change(self, seen: int, timeout: float) -> dict[str, Any] | None:
        """The state once its version differs from ``seen``; None on timeout, or when the app has closed and the
        caller has the last state (a board published just before closing still reaches the open pages)."""
        with self._changed:
            self._changed.wait_for(lambda: self._version != seen or self._closed, timeout)
            return None if self._version == seen else self._state

    def diagram_png(self) -> bytes | None:
        """The last shot's diagram as PNG, drawn once per log position (drawing costs tens of ms on the Pi)."""
        import cv2  # imported here: the server starts without OpenCV's import time until a diagram is asked for

        from ..diagrams import shot_diagram

        with self.lock:
            if self.live is None:
                return None
            seq = self.live.seq
            if self._diagram[0] == seq:
                return self._diagram[1]
            shots = self.live.match.shots
            if not shots:
                png = None
            else:
                img = shot_diagram(shots[-1], self.live.referee.table, self.live.last_verdict, height_px=600,
                                   discipline=self.live.info.discipline)
                ok, buf = cv2.imencode(".png", img)
                png = buf.tobytes() if ok else None
            self._diagram = (seq, png)
            return png

    def switch_match(self, live: LiveMatch) -> None:
        """From now on serve and control ``live`` (a new game or match was started)."""
        with self.lock:
            self.live = live
            self._diagram = (-1, None)
            last = live.last_verdict
            verdict, summary = (None if last is None else last.to_dict()), live.summary()
        self.publish(verdict, summary)

    def new_match(self, body: Any) -> dict[str, Any]:
        """A phone's new game or new match (``parse_new_match``); the state of the match started."""
        with self.lock:
            if self.live is None:
                raise LogError("new match", None, NO_MATCH)
            request = parse_new_match(body, self.live.info)
        if self.start_match is not None:
            self.start_match(request)
        else:
            with self.lock:
                self.switch_match(next_match(self.live, request))
        return self.state()

    # --- controls -------------------------------------------------------------------------------------------------

    def apply_control(self, record: Any) -> dict[str, Any]:
        """Validate a control record, append it to the match and publish; LogError when it is refused."""
        if not isinstance(record, dict):
            raise LogError("web control", None, "must be a JSON object like {\"control\": \"undo\"}")
        with self.lock:
            if self.live is None:
                raise LogError("web control", None, NO_MATCH)
            control = Control.from_dict(record, discipline=self.live.info.discipline,
                                        table=self.live.referee.table, record="web control")
            self.live.append(control, label="web control")
            last = self.live.last_verdict
            verdict, summary = (None if last is None else last.to_dict()), self.live.summary()
        self.publish(verdict, summary)
        if self.after_control is not None:
            self.after_control(control)
        return self.state()

    # --- serving --------------------------------------------------------------------------------------------------

    def serve(self, host: str = "0.0.0.0", port: int = 8080) -> ThreadingHTTPServer:
        """Start serving in a daemon thread; returns the server (``server_address`` has the port bound)."""
        server = ThreadingHTTPServer((host, port), _handler_for(self))
        server.daemon_threads = True  # open SSE streams must not keep the process alive
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, name="arbitro-web", daemon=True)
        self._thread.start()
        return server

    def close(self) -> None:
        with self._changed:
            self._closed = True
            self._changed.notify_all()
            # The open pages' streams send the last board and end: wait (briefly) for them, or a verdict judged
            # at the end of a recording would die with the process unseen.
            self._changed.wait_for(lambda: self._sse_clients == 0, CLOSE_DRAIN_S)
        if self.wizard is not None:
            self.wizard.close()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _sse_enter(self) -> bool:
        with self._changed:
            if self._sse_clients >= MAX_SSE_CLIENTS:
                return False
            self._sse_clients += 1
            return True

    def _sse_leave(self) -> None:
        with self._changed:
            self._sse_clients -= 1
            self._changed.notify_all()


class _BadRequest(Exception):
    def __init__(self, status: int, message: str, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.headers = status, message, dict(headers or {})


def _handler_for(app: WebApp) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        pass

    Handler.app = app
    return Handler


class _Handler(BaseHTTPRequestHandler):
    app: WebApp
    server_version = "arbitro"
    sys_version = ""
    protocol_version = "HTTP/1.1"

    # --- plumbing -------------------------------------------------------------------------------------------------

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base class's name)
        log.debug("%s %s", self.client_address[0], format % args)

    def _send(self, status: int, body: bytes, ctype: str, headers: Mapping[str, str] | None = None,
              cache: str = "no-store") -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", cache)
        for k, v in {**SECURITY_HEADERS, **(headers or {})}.items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, obj: Any, headers: Mapping[str, str] | None = None) -> None:
        body = json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()
        self._send(status, body, "application/json; charset=utf-8", headers)

    def _error(self, status: int, message: str, headers: Mapping[str, str] | None = None) -> None:
        self._json(status, {"error": message}, headers)

    def _route(self, table: Mapping[str, Callable[[], None]]) -> None:
        path = urlsplit(self.path).path
        try:
            handler = table.get(path)
            if handler is None:
                if self.command == "GET" and path in self.app.static:
                    body, ctype = self.app.static[path]
                    self._send(200, body, ctype, cache="no-cache")
                    return
                raise _BadRequest(404, f"no such page: {path[:80]}")
            handler()
        except _BadRequest as exc:
            self._error(exc.status, exc.message, exc.headers)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the phone went away mid-answer
        except Exception:  # never a traceback to the client; the log has it
            log.exception("web request %s %s failed", self.command, path)
            try:
                self._error(500, "internal error")
            except OSError:
                pass

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self._route({"/events": self._events, "/api/state": self._get_state, "/api/session": self._get_session,
                     "/diagram/last.png": self._get_diagram, "/api/wizard": self._get_wizard,
                     "/wizard/live.jpg": self._get_live, "/wizard/still.png": self._get_still,
                     "/wizard/overlay.png": self._get_overlay})

    def do_HEAD(self) -> None:  # noqa: N802
        if urlsplit(self.path).path == "/events":  # a stream has no head; answering would hold the thread
            self._error(405, "GET the event stream")
            return
        self.do_GET()

    def do_POST(self) -> None:  # noqa: N802
        self._read_body()
        self._route({"/api/login": self._login, "/api/logout": self._logout, "/api/control": self._control,
                     "/api/match": self._new_match, "/api/wizard/still": self._begin_still,
                     "/api/wizard/save": self._save_wizard})

    def _read_body(self) -> None:
        """Read the whole request body before routing: an answer given without reading it (a 401, say) would
        leave it in a kept-alive connection, to be parsed as the next request."""
        self._raw: bytes | None = None
        self._body_problem: _BadRequest | None = None
        te = (self.headers.get("Transfer-Encoding") or "").lower()
        try:
            length = int(self.headers.get("Content-Length") or "")
        except ValueError:
            length = -1
        if te or length < 0:
            self.close_connection = True
            self._body_problem = _BadRequest(411, "Content-Length required")
        elif length > MAX_BODY:
            self.close_connection = True  # not read: the connection cannot be reused
            self._body_problem = _BadRequest(413, f"request body over {MAX_BODY} bytes")
        else:
            self._raw = self.rfile.read(length)

    def _body(self) -> Any:
        if self._body_problem is not None:
            raise self._body_problem
        if "json" not in (self.headers.get("Content-Type") or ""):
            raise _BadRequest(415, "send JSON (Content-Type: application/json)")
        try:
            return json.loads(self._raw or b"")
        except (UnicodeDecodeError, ValueError) as exc:
            raise _BadRequest(400, f"not valid JSON ({exc})") from None

    def _session_id(self) -> str | None:
        try:
            cookie = SimpleCookie(self.headers.get("Cookie") or "")
        except CookieError:
            return None
        morsel = cookie.get(COOKIE)
        return morsel.value if morsel else None

    # --- routes ---------------------------------------------------------------------------------------------------

    def _get_state(self) -> None:
        self._json(200, self.app.state())

    def _get_session(self) -> None:
        csrf = self.app.sessions.csrf_for(self._session_id())
        self._json(200, {"logged_in": csrf is not None, "csrf": csrf, "pin_set": self.app.pins.is_set()})

    def _get_diagram(self) -> None:
        png = self.app.diagram_png()
        if png is None:
            raise _BadRequest(404, "no shot yet")
        self._send(200, png, "image/png")

    def _events(self) -> None:
        if not self.app._sse_enter():
            raise _BadRequest(503, "too many open scoreboards", {"Retry-After": "10"})
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream; charset=utf-8")
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Accel-Buffering", "no")
            for k, v in SECURITY_HEADERS.items():
                self.send_header(k, v)
            self.end_headers()
            self.close_connection = True  # the stream has no length: the connection ends with it
            state = self.app.state()
            self._event(state)
            seen = state["version"]
            while True:
                state = self.app.wait_change(seen, KEEPALIVE_S)
                if state is None:
                    if self.app._closed:
                        return
                    self.wfile.write(b": keepalive\n\n")
                    self.wfile.flush()
                    continue
                seen = state["version"]
                self._event(state)
        finally:
            self.app._sse_leave()

    def _event(self, state: Mapping[str, Any]) -> None:
        data = json.dumps(state, ensure_ascii=False, separators=(",", ":"))
        self.wfile.write(f"retry: 2000\nid: {state['version']}\nevent: state\ndata: {data}\n\n".encode())
        self.wfile.flush()

    def _login(self) -> None:
        client = self.client_address[0]
        wait = self.app.limiter.retry_after(client)
        if wait > 0:
            raise _BadRequest(429, f"too many PIN attempts; try again in {int(wait) + 1} s",
                              {"Retry-After": str(int(wait) + 1)})
        body = self._body()
        if not self.app.pins.is_set():
            raise _BadRequest(403, "no PIN is set for this table (arbitro web set-pin)")
        pin = body.get("pin") if isinstance(body, dict) else None
        if not self.app.pins.check(pin):
            self.app.limiter.hit(client)  # only failures count: a referee logging in on two phones is fine
            raise _BadRequest(403, "wrong PIN")
        sid, csrf = self.app.sessions.create()
        # No Secure flag: the club network serves plain HTTP; SameSite=Strict keeps other sites' forms out.
        cookie = f"{COOKIE}={sid}; Path=/; HttpOnly; SameSite=Strict; Max-Age={int(self.app.sessions.lifetime)}"
        self._json(200, {"csrf": csrf}, {"Set-Cookie": cookie})

    def _logout(self) -> None:
        self.app.sessions.drop(self._session_id())
        self._json(200, {"ok": True}, {"Set-Cookie": f"{COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"})

    def _require_session(self) -> None:
        """Every write: a live session (the PIN) and its CSRF token in the header."""
        sid = self._session_id()
        if self.app.sessions.csrf_for(sid) is None:
            raise _BadRequest(401, "log in with the table's PIN first")
        if not self.app.sessions.valid(sid, self.headers.get(CSRF_HEADER)):
            raise _BadRequest(403, f"missing or wrong {CSRF_HEADER} header")

    def _control(self) -> None:
        self._require_session()
        body = self._body()
        try:
            state = self.app.apply_control(body)
        except LogError as exc:
            raise _BadRequest(400, str(exc)) from None
        except StoreError as exc:
            raise _BadRequest(503, str(exc)) from None
        self._json(200, {"ok": True, "state": state})

    # --- the calibration wizard -----------------------------------------------------------------------------------

    def _wizard(self) -> Wizard:
        if self.app.wizard is None:
            raise _BadRequest(404, "no calibration source was given to this app (arbitro web --source)")
        return self.app.wizard

    def _get_wizard(self) -> None:
        self._json(200, self._wizard().status())

    def _get_live(self) -> None:
        jpeg = self._wizard().feed.jpeg()
        if jpeg is None:
            raise _BadRequest(503, self._wizard().feed.error or "no picture from the camera yet",
                              {"Retry-After": "1"})
        self._send(200, jpeg, "image/jpeg")

    def _get_still(self) -> None:
        png = self._wizard().still_png()
        if png is None:
            raise _BadRequest(404, "no still taken yet")
        self._send(200, png, "image/png")

    def _get_overlay(self) -> None:
        png = self._wizard().overlay_png()
        if png is None:
            raise _BadRequest(404, "no calibration drawn yet")
        self._send(200, png, "image/png")

    def _begin_still(self) -> None:
        wizard = self._wizard()
        self._require_session()
        try:
            self._json(200, wizard.begin_still())
        except WizardError as exc:
            raise _BadRequest(409, str(exc)) from None

    def _save_wizard(self) -> None:
        wizard = self._wizard()
        self._require_session()
        body = self._body()
        try:
            self._json(200, wizard.save(body))
        except (LogError, WizardError) as exc:
            raise _BadRequest(400 if isinstance(exc, LogError) else 422, str(exc)) from None

    # --- a new game or match --------------------------------------------------------------------------------------

    def _new_match(self) -> None:
        self._require_session()
        body = self._body()
        try:
            state = self.app.new_match(body)
        except (LogError, OptionError, ValueError) as exc:
            raise _BadRequest(400, str(exc)) from None
        except (StoreError, TimeoutError) as exc:
            raise _BadRequest(503, str(exc)) from None
        self._json(200, {"ok": True, "state": state})
