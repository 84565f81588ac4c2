"""``arbitro web``: set the table's PIN, or serve the store's unfinished match to phones on its own, or the
calibration wizard alone (a table being set up, before any match).

    arbitro web --data DIR --set-pin < pin.txt        # the PIN on one line of standard input
    arbitro web --data DIR --store FILE [--host H] [--port N] [--source SPEC] [--table PRESET]
    arbitro web --data DIR --source SPEC [--table PRESET] [--host H] [--port N]   # the wizard only

The live loop serves the same app in-process (``WebApp.publish`` from its board snapshots, the wizard on its own
camera); this command is for a table whose match is kept by hand, for the first calibration, and for trying the
pages out. The wizard saves ``DIR/table.calib.json``, for ``arbitro run --calib``.
"""

from __future__ import annotations

import argparse
import getpass
import sys
import threading
from pathlib import Path
from typing import Any, TextIO

EXIT_BAD_INPUT = 2


def add_web_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Adds ``web`` to the ``arbitro`` subcommands (``device.cli.build_parser``)."""
    p = subparsers.add_parser("web", help="serve the scoreboard to phones on the club network, or set the PIN")
    p.add_argument("--data", required=True, metavar="DIR", help="the web app's data folder (PIN hash, calibration)")
    p.add_argument("--store", default=None, metavar="FILE",
                   help="the match store whose unfinished match to serve (none: the wizard alone, with --source)")
    p.add_argument("--host", default="0.0.0.0", help="address to listen on (default: all)")
    p.add_argument("--port", type=int, default=8080, help="port (default 8080; 0: any free one)")
    p.add_argument("--source", default=None, metavar="SPEC",
                   help="a video file, picture or camera for the calibration wizard at /wizard (default: no wizard)")
    p.add_argument("--table", default=None, help="the wizard's table preset (default: told from the view)")
    p.add_argument("--set-pin", action="store_true",
                   help="read the table's PIN (4-12 digits) from standard input, store its hash, and exit")
    p.set_defaults(run=web_command)
    return p


def web_command(args: argparse.Namespace, out: TextIO = sys.stdout, *, stop: threading.Event | None = None) -> int:
    from ..store import MatchStore, StoreError
    from .auth import PinError, PinStore

    def fail(message: str) -> int:
        print(f"arbitro web: {message}", file=sys.stderr)
        return EXIT_BAD_INPUT

    if args.set_pin:
        pin = getpass.getpass("Table PIN: ") if sys.stdin.isatty() else sys.stdin.readline().strip()
        try:
            PinStore(args.data).set(pin)
        except (PinError, OSError) as exc:
            return fail(str(exc))
        print(f"PIN set ({PinStore(args.data).path})", file=out)
        return 0
    if not args.store and not args.source:
        return fail("--store FILE is needed to serve a match, --source SPEC to calibrate (or --set-pin)")
    from contextlib import ExitStack

    from .server import WebApp
    from .wizard import Wizard, WizardError

    with ExitStack() as stack:
        live = None
        if args.store:
            try:
                store = stack.enter_context(MatchStore(args.store))
                live = store.resume()
            except StoreError as exc:
                return fail(str(exc))
            if live is None:
                return fail(f"{args.store}: no unfinished match to serve")
        wizard = None
        try:
            if args.source is not None:
                wizard = Wizard.from_source(args.source, Path(args.data), table=args.table,
                                            discipline=None if live is None else live.info.discipline)
            app = WebApp(live, args.data, wizard=wizard)
            server = app.serve(args.host, args.port)
        except WizardError as exc:
            return fail(str(exc))
        except OSError as exc:
            if wizard is not None:
                wizard.close()
            return fail(f"cannot listen on {args.host}:{args.port} ({exc.strerror or exc})")
        host, port = server.server_address[:2]
        what = f"match {live.id}" if live is not None else "the calibration wizard (no match)"
        print(f"serving {what} on http://{host}:{port}/" + ("wizard" if live is None else "") +
              ("" if app.pins.is_set() else "  (no PIN set: controls are refused; arbitro web --set-pin)"),
              file=out, flush=True)
        try:
            (stop or threading.Event()).wait()
        except KeyboardInterrupt:
            pass
        finally:
            app.close()
    return 0
