"""Who may change the match: the table's PIN (hashed on disk), sessions, CSRF tokens and a PIN rate limit.

Reading the scoreboard is open to anyone on the club network; every control needs a session won with the PIN.
The PIN is short, so its hash alone would not stop a guesser who can ask fast: the rate limit does that, and
scrypt makes a stolen data folder expensive to search.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

PIN_FILE = "web_pin.json"
# scrypt at N=2**14, r=8: 16 MiB and a few tens of milliseconds per check; enough when attempts are rate-limited.
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2 ** 14, 8, 1


class PinError(ValueError):
    """A PIN that cannot be set (the message is one line)."""


def _derive(pin: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(pin.encode(), salt=salt, n=n, r=r, p=p, maxmem=64 * 1024 * 1024, dklen=32)


class PinStore:
    """The table's PIN as a salted scrypt hash in ``data_dir/web_pin.json``; no file: no controls at all."""

    def __init__(self, data_dir: Path) -> None:
        self.path = Path(data_dir) / PIN_FILE

    def is_set(self) -> bool:
        return self.path.is_file()

    def set(self, pin: str) -> None:
        if not (pin.isdigit() and pin.isascii() and 4 <= len(pin) <= 12):
            raise PinError("the PIN must be 4 to 12 digits")
        salt = os.urandom(16)
        record = {"scheme": "scrypt", "n": SCRYPT_N, "r": SCRYPT_R, "p": SCRYPT_P, "salt": salt.hex(),
                  "hash": _derive(pin, salt, SCRYPT_N, SCRYPT_R, SCRYPT_P).hex()}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        # Written owner-only and renamed into place: a crash never leaves half a PIN file.
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(record, f)
        os.replace(tmp, self.path)

    def check(self, pin: object) -> bool:
        if not isinstance(pin, str) or not pin or len(pin) > 64 or not self.is_set():
            return False
        try:
            rec = json.loads(self.path.read_text())
            salt, want = bytes.fromhex(rec["salt"]), bytes.fromhex(rec["hash"])
            got = _derive(pin, salt, int(rec["n"]), int(rec["r"]), int(rec["p"]))
        except (OSError, ValueError, KeyError, TypeError):
            return False  # an unreadable PIN file refuses everyone rather than letting anyone in
        return hmac.compare_digest(got, want)


class RateLimiter:
    """At most ``limit`` attempts per ``window`` seconds per client; the clock is injectable for tests."""

    def __init__(self, limit: int = 5, window: float = 60.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit, self.window, self.clock = limit, window, clock
        self._hits: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def _prune(self, client: str, now: float) -> deque[float]:
        hits = self._hits.setdefault(client, deque())
        while hits and now - hits[0] >= self.window:
            hits.popleft()
        return hits

    def retry_after(self, client: str) -> float:
        """0 when ``client`` may try now, else the seconds until its oldest attempt leaves the window."""
        with self._lock:
            now = self.clock()
            hits = self._prune(client, now)
            return 0.0 if len(hits) < self.limit else max(0.0, self.window - (now - hits[0]))

    def hit(self, client: str) -> None:
        with self._lock:
            now = self.clock()
            self._prune(client, now).append(now)
            if len(self._hits) > 4096:  # a flood of client addresses must not grow memory without bound
                for c in [c for c, h in self._hits.items() if not h]:
                    del self._hits[c]


@dataclass
class Session:
    csrf: str
    expires: float


class Sessions:
    """Session cookie value -> its CSRF token; kept in memory, so a restart logs everyone out (on purpose)."""

    def __init__(self, lifetime: float = 8 * 3600.0, clock: Callable[[], float] = time.monotonic,
                 max_sessions: int = 64) -> None:
        self.lifetime, self.clock, self.max_sessions = lifetime, clock, max_sessions
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()

    def create(self) -> tuple[str, str]:
        """A new (session id, csrf token); the oldest session goes when there are too many."""
        with self._lock:
            now = self.clock()
            self._sessions = {k: s for k, s in self._sessions.items() if s.expires > now}
            while len(self._sessions) >= self.max_sessions:
                del self._sessions[min(self._sessions, key=lambda k: self._sessions[k].expires)]
            sid, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
            self._sessions[sid] = Session(csrf, now + self.lifetime)
            return sid, csrf

    def csrf_for(self, sid: str | None) -> str | None:
        if not sid:
            return None
        with self._lock:
            s = self._sessions.get(sid)
            if s is None or s.expires <= self.clock():
                self._sessions.pop(sid, None)
                return None
            return s.csrf

    def drop(self, sid: str | None) -> None:
        with self._lock:
            self._sessions.pop(sid or "", None)

    def valid(self, sid: str | None, csrf: str | None) -> bool:
        want = self.csrf_for(sid)
        return want is not None and isinstance(csrf, str) and hmac.compare_digest(want.encode(), csrf.encode())
