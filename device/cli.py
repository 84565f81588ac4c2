"""The ``arbitro`` command line. Nothing but JSON on stdout; errors are one line on stderr and a non-zero exit."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import NoReturn, Sequence, TextIO

from rules.errors import LogError
from rules.log import read_log
from rules.match import Match, OptionError, parse_options
from rules.registry import referee_for
from rules.balls import DISCIPLINES
from device.replay import ReplayError

EXIT_BAD_INPUT = 2

# FFmpeg (under OpenCV's video reader) prints its own complaint about a damaged file ("moov atom not found") on
# stderr beside ours; the user gets our one line. OpenCV reads this when a file is opened, so setting it here is
# in time; a user who wants FFmpeg's words sets it themselves.
os.environ.setdefault("OPENCV_FFMPEG_LOGLEVEL", "-8")


class CliError(Exception):
    """A problem to report to the user in one line."""


def _version() -> str:
    try:
        from importlib.metadata import version
        return version("arbitro")
    except Exception:  # running from a source tree that was never installed
        return "unknown"


def _json_line(obj: object, out: TextIO) -> None:
    out.write(json.dumps(obj, separators=(",", ":"), ensure_ascii=False) + "\n")


def referee_command(args: argparse.Namespace, out: TextIO) -> int:
    options = parse_options(args.option or [])
    referee = referee_for(args.discipline, table=args.table, distance=args.distance, options=options)
    if args.log == "-":
        lines, source = sys.stdin, "stdin"
    else:
        path = Path(args.log)
        if not path.is_file():
            raise CliError(f"{args.log}: no such log file")
        try:
            lines, source = path.read_text(encoding="utf-8").splitlines(), path.name
        except (OSError, UnicodeDecodeError) as exc:
            raise CliError(f"{args.log}: cannot read ({exc})") from None
    match = Match(referee)
    for label, record in read_log(lines, referee.discipline, referee.table, source):
        verdict = match.feed(record, label)
        if verdict is not None:
            _json_line(verdict.to_dict(), out)
    _json_line({"match": match.summary()}, out)
    return 0


class _OneLineParser(argparse.ArgumentParser):
    """argparse that reports a usage error in one line (the full usage is one ``--help`` away)."""

    def error(self, message: str) -> "NoReturn":  # type: ignore[override]
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _OneLineParser(prog="arbitro", description="An automatic billiards referee.")
    parser.add_argument("--version", action="version", version=f"arbitro {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_OneLineParser)

    ref = sub.add_parser("referee", help="judge a match log (JSON lines) and print one verdict per shot")
    ref.add_argument("--discipline", required=True, choices=DISCIPLINES, metavar="NAME",
                     help=f"one of: {', '.join(DISCIPLINES)}")
    ref.add_argument("--distance", type=int, default=None, help="points to win (carom: the game's distance)")
    ref.add_argument("--table", default=None, help="table preset (default: the discipline's)")
    ref.add_argument("--option", action="append", metavar="KEY=VALUE", help="a discipline option; repeatable")
    ref.add_argument("log", help="the match log (.jsonl), or - for standard input")
    ref.set_defaults(run=referee_command)

    from device.calibrate_command import add_calibrate_parser
    from device.replay_command import add_replay_parser
    from device.run_command import add_run_parser
    add_calibrate_parser(sub)
    add_replay_parser(sub)
    add_run_parser(sub)
    from device.web.command import add_web_parser
    add_web_parser(sub)
    return parser




def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a usage error already printed in one line
        return int(exc.code or 0)
    try:
        return args.run(args, sys.stdout)
    except (LogError, OptionError, CliError, ReplayError) as exc:
        print(f"arbitro: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a bug, or bad input nothing above names: still one line (ARBITRO_DEBUG=1 shows all)
        if os.environ.get("ARBITRO_DEBUG"):
            raise
        print(f"arbitro: internal error ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}); "
              f"set ARBITRO_DEBUG=1 for the details", file=sys.stderr)
        return 1
