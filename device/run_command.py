"""``arbitro run``: referee a live match from a camera, with the scoreboard, the foul light and the match store.

    arbitro run --camera SPEC --calib FILE --discipline NAME --players "Ana,Rui" [--distance N]
                [--store match.db] [--display fb|window|png:PATH|none] [--led GPIO|rgb|none] [--config FILE]
                [--web HOST:PORT [--web-data DIR]]

Everything the command line does not say comes from the TOML config (``device.config``). Bad input is one line on
stderr and exit status 2; at the end one JSON line on stdout: ``{"live": {...figures...}, "match": {...}}``.

The frames become shots in the vision pipeline, looked up at run time as ``vision.live.make_processor``:

    make_processor(calibration: calibration.file.Calibration, match: device.store.LiveMatch,
                   frame_size: tuple[int, int]) -> device.live.FrameProcessor

Until it exists the command stops with one line saying so, before opening the camera or the store: a live
referee without vision would only pretend.

With ``--web`` the phones get the scoreboard, the referee's controls (a new game or match among them) and the
calibration wizard on the live camera. A calibration the wizard saves (``WEB_DATA/table.calib.json``) is taken by
the running loop at once, between two frames, with a new vision processor; when its table differs from the match
in progress it is taken from the next match, which is refereed on it. Started again, the command uses the wizard's
file instead of ``--calib`` when it is the newer of the two, and says so: a restart never undoes a recalibration.
"""

from __future__ import annotations

import argparse
import importlib
import json
import signal
import sys
import threading
from pathlib import Path
from typing import Any, Callable, TextIO

from rules.balls import DISCIPLINES
from rules.errors import LogError
from rules.match import OptionError, parse_options
from rules.registry import referee_for

from .config import Config, ConfigError, load_config
from .display import DisplayError, open_display, parse_display_spec
from .live import LiveLoop
from .sources import SourceError, open_source, parse_source_spec
from .store import LiveMatch, MatchStore, StoreError

EXIT_BAD_INPUT = 2
EXIT_FAILED = 1
VISION_MODULE, VISION_FACTORY = "vision.live", "make_processor"


class RunError(Exception):
    """A problem to report in one line."""


def add_run_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Adds ``run`` to the ``arbitro`` subcommands (``device.cli.build_parser``)."""
    run = subparsers.add_parser("run", help="referee a live match from a camera (scoreboard, foul light, store)")
    run.add_argument("--camera", required=True, metavar="SPEC",
                     help="picamera2[:MODE] (gs, cm3, cm3_120, hq), v4l2:N, rtsp://..., or file:CLIP")
    run.add_argument("--calib", required=True, metavar="FILE", help="the calibration file (*.calib.json)")
    run.add_argument("--discipline", required=True, choices=DISCIPLINES, metavar="NAME",
                     help=f"one of: {', '.join(DISCIPLINES)}")
    run.add_argument("--players", required=True, metavar='"A,B"', help="the two names, side A (who opens) first")
    run.add_argument("--distance", type=int, default=None, help="points to win (default: the discipline's)")
    run.add_argument("--option", action="append", metavar="KEY=VALUE", help="a referee option; repeatable")
    run.add_argument("--store", default=None, metavar="FILE", help="the match store (default: the config's)")
    run.add_argument("--display", default="none", metavar="WHERE",
                     help="fb, fb:/dev/fbN, window, png:PATH or none (default)")
    run.add_argument("--led", default=None, metavar="GPIO",
                     help="the foul light: a GPIO number, rgb (the config's three pins), or none "
                          "(default: the config's [led])")
    run.add_argument("--config", default=None, metavar="FILE", help="the device configuration (TOML)")
    run.add_argument("--web", default=None, metavar="HOST:PORT",
                     help="serve the scoreboard and the referee's controls to phones (e.g. 0.0.0.0:8080); "
                          "the PIN is set with 'arbitro web --data DIR --set-pin'")
    run.add_argument("--web-data", default=None, metavar="DIR",
                     help="the web app's data folder (its PIN), default: beside the store")
    run.set_defaults(run=run_command)
    return run


def parse_players(text: str) -> tuple[str, str]:
    names = [n.strip() for n in text.split(",")]
    if len(names) != 2 or not all(names):
        raise RunError(f'--players {text!r}: two names separated by a comma, like "Ana,Rui"')
    if names[0] == names[1]:
        raise RunError(f"--players {text!r}: the two players need different names")
    return names[0], names[1]


def parse_led(text: str) -> int | str | None:
    """None (no light), "rgb", or a BCM GPIO number."""
    t = text.strip().lower()
    if t == "none":
        return None
    if t == "rgb":
        return "rgb"
    number = t[4:] if t.startswith("gpio") else t
    if not number.isdigit() or not 0 <= int(number) <= 27:
        raise RunError(f"--led {text!r}: a GPIO number 0-27 (e.g. 17 or GPIO17), rgb, or none")
    return int(number)


def _config_led(config: Config) -> int | str | None:
    kind = config.led.kind
    return None if kind == "none" else "rgb" if kind == "rgb" else config.led.pin


def vision_factory() -> Callable[..., Any]:
    """The vision pipeline's processor factory, or RunError saying it is not there."""
    try:
        module = importlib.import_module(VISION_MODULE)
    except ModuleNotFoundError as exc:
        if exc.name not in (VISION_MODULE, VISION_MODULE.split(".")[0]):
            raise
        module = None
    factory = getattr(module, VISION_FACTORY, None)
    if factory is None:
        raise RunError(f"the vision pipeline is not available in this build ({VISION_MODULE}.{VISION_FACTORY} "
                       "is missing), so there is nothing to turn frames into shots; nothing was opened")
    return factory


def run_command(args: argparse.Namespace, out: TextIO) -> int:
    try:
        return _run(args, out)
    except (RunError, ConfigError, SourceError, DisplayError, StoreError, OptionError, LogError) as exc:
        print(f"arbitro run: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT


def _run(args: argparse.Namespace, out: TextIO) -> int:
    config = load_config(args.config)
    players = parse_players(args.players)
    spec = parse_source_spec(args.camera)
    parse_display_spec(args.display)
    led = parse_led(args.led) if args.led is not None else _config_led(config)
    options = parse_options(args.option or [])
    referee_for(args.discipline, distance=args.distance, options=options)  # bad options fail before anything opens
    make_processor = vision_factory()
    store_path = args.store or config.store.path
    calib_path = _calibration_path(args.calib, args.web, _web_folder(args.web_data, store_path))
    calibration = _read_calibration(calib_path)
    with MatchStore(store_path) as store:
        live = _match(store, args.discipline, players, args.distance, options, calibration.table,
                      phones=args.web is not None)
        stats, summary = _live(config, spec, args.display, led, calibration, live, store, make_processor,
                               args.web, args.web_data)
    out.write(json.dumps({"live": stats.to_dict(), "match": summary}, separators=(",", ":")) + "\n")
    if stats.error:
        print(f"arbitro run: stopped: {stats.error}", file=sys.stderr)
        return EXIT_FAILED
    return 0


def _web_folder(data: str | None, store_path: str | Path) -> Path:
    return Path(data) if data else Path(store_path).resolve().parent / "web"


def _calibration_path(calib: str, web: str | None, folder: Path) -> str:
    """``--calib``, or the wizard's newer calibration in the web data folder (said on stderr)."""
    from .web.wizard import CALIB_FILE

    saved = folder / CALIB_FILE
    if web is None or not saved.is_file() or saved.resolve() == Path(calib).resolve():
        return calib
    if Path(calib).is_file() and Path(calib).stat().st_mtime >= saved.stat().st_mtime:
        return calib
    print(f"arbitro run: using the calibration saved by the wizard, {saved} (newer than --calib)", file=sys.stderr)
    return str(saved)


def _read_calibration(path: str) -> Any:
    from calibration.file import CalibrationFileError, read_calibration

    if not Path(path).is_file():
        raise RunError(f"--calib {path}: no such calibration file")
    try:
        return read_calibration(path)
    except CalibrationFileError as exc:
        raise RunError(str(exc)) from None


def _match(store: MatchStore, discipline: str, players: tuple[str, str], distance: int | None,
           options: dict[str, str], table: Any, phones: bool = False) -> LiveMatch:
    """The unfinished match of these players and discipline, resumed (on its own table); else a new one on the
    calibrated table. With ``phones`` (``--web``) an unfinished match of the discipline between other players is
    resumed too, and said: a phone may have started it, and a restart (a power cut) must not refuse to run."""
    pending = store.unfinished()
    if pending is None:
        return store.new_match(discipline, players, distance=distance, options=options, table=table)
    if phones and pending.discipline == discipline and pending.players != players:
        print(f"arbitro run: resuming the unfinished match of {pending.players[0]} and {pending.players[1]} "
              "(started from a phone), not a new one of --players", file=sys.stderr)
        return store.open_match(pending.id)
    if (pending.discipline, pending.players) != (discipline, players):
        raise RunError(f"{store.path}: an unfinished {pending.discipline} match of {pending.players[0]} and "
                       f"{pending.players[1]} is in this store; finish it or use another --store")
    return store.open_match(pending.id)


class _Table:
    """What the phones and the buttons change in a running loop: the calibration (the wizard saved one) and the
    match (a new game or match). Each change runs on the loop's processing thread (``LiveLoop.call_soon``),
    between two frames, with a new vision processor: the old one holds the old calibration and the old match."""

    WAIT_S = 10.0  # how long a phone's request waits for the processing thread

    def __init__(self, store: MatchStore, calibration: Any, make_processor: Callable[..., Any],
                 frame_size: tuple[int, int]) -> None:
        self.store, self.calibration, self.make_processor = store, calibration, make_processor
        self.frame_size = frame_size
        self.loop: LiveLoop | None = None
        self.web: Any = None

    def processor(self, live: LiveMatch) -> Any:
        return self.make_processor(self.calibration, live, self.frame_size)

    def _switch(self, loop: LiveLoop, live: LiveMatch) -> None:
        loop.match = live
        loop.processor = self.processor(live)
        if self.web is not None:
            self.web.switch_match(live)

    def next_game(self, current: LiveMatch) -> LiveMatch:
        """The device's next-game button (already on the processing thread)."""
        from .web.server import NewMatch, next_match

        new = next_match(current, NewMatch(current.info.players, current.info.distance), self.calibration.table)
        if self.loop is not None:
            self._switch(self.loop, new)
        return new

    def _on_loop(self, fn: Callable[[LiveLoop], Any]) -> Any:
        """Run ``fn`` on the processing thread and wait for its answer (or its exception)."""
        if self.loop is None:
            raise RunError("the live loop is not running")
        done, answer = threading.Event(), {}

        def call(loop: LiveLoop) -> None:
            try:
                answer["value"] = fn(loop)
            except Exception as exc:  # handed to the waiting request, not to the loop
                answer["error"] = exc
            done.set()

        self.loop.call_soon(call)
        if not done.wait(self.WAIT_S):
            raise TimeoutError("the live loop did not answer (has the camera stopped?)")
        if "error" in answer:
            raise answer["error"]
        return answer.get("value")

    def start_match(self, request: Any) -> None:
        """A phone's new game or match (``WebApp.start_match``)."""
        from .web.server import next_match

        self._on_loop(lambda loop: self._switch(loop, next_match(loop.match, request, self.calibration.table)))

    def reload(self, path: Path) -> str:
        """The wizard saved ``path`` (``Wizard.on_saved``): the loop takes it, now or from the next match."""
        calibration = _read_calibration(str(path))
        size = tuple(int(v) for v in calibration.camera.image_size)
        if size != tuple(self.frame_size):
            raise RunError(f"it was made at {size[0]}x{size[1]}, the camera gives "
                           f"{self.frame_size[0]}x{self.frame_size[1]}")

        def take(loop: LiveLoop) -> str:
            if calibration.table != loop.match.referee.table:
                self.calibration = calibration
                return (f"the match in progress is on {loop.match.referee.table.name}; the new table "
                        f"({calibration.table.name}) is used from the next match")
            processor = self.make_processor(calibration, loop.match, self.frame_size)
            self.calibration, loop.processor = calibration, processor
            return "the live loop uses it now"

        return str(self._on_loop(take))


def _web_app(spec: str | None, data: str | None, live: LiveMatch, store: MatchStore, table: _Table,
             discipline: str) -> tuple[Any, Any]:
    """The phones' web app on ``HOST:PORT``, serving in its own thread, and the feed of camera frames its wizard
    shows; (None, None) without ``--web``."""
    if spec is None:
        return None, None
    host, sep, port = spec.rpartition(":")
    if not sep or not port.isdigit():
        raise RunError(f"--web {spec}: give HOST:PORT, e.g. 0.0.0.0:8080")
    from .web import WebApp
    from .web.camera import FrameFeed
    from .web.wizard import Wizard

    folder = _web_folder(data, store.path)
    feed = FrameFeed()
    preset = table.calibration.table_field if isinstance(table.calibration.table_field, str) else None
    wizard = Wizard(feed, folder, table=preset, discipline=discipline)
    wizard.on_saved = table.reload
    app = WebApp(live, folder, wizard=wizard)
    app.start_match = table.start_match
    table.web = app
    try:
        app.serve(host or "0.0.0.0", int(port))
    except OSError as exc:
        raise RunError(f"--web {spec}: cannot listen there ({exc.strerror or exc})") from None
    print(f"arbitro run: scoreboard on http://{host or '0.0.0.0'}:{port}/, calibration wizard at /wizard",
          file=sys.stderr)
    return app, feed


def _live(config: Config, spec: Any, display_spec: str, led: int | str | None, calibration: Any,
          live: LiveMatch, store: MatchStore, make_processor: Callable[..., Any],
          web_spec: str | None = None, web_data: str | None = None) -> tuple[Any, dict]:
    cam = config.camera
    source = open_source(spec, mode=cam.mode, exposure_us=cam.exposure_us, analogue_gain=cam.analogue_gain,
                         stream=cam.stream, camera_num=cam.camera_num, frame_timeout_s=cam.frame_timeout_ms / 1000.0,
                         backoff_initial=cam.reopen_initial_s, backoff_max=cam.reopen_max_s, realtime=True)
    light = None
    if led is not None:
        from .led import make_light
        pins = config.led.rgb_pins if led == "rgb" else int(led)
        try:
            light = make_light(pins, active_high=config.led.active_high)
        except Exception as exc:  # gpiozero: no GPIO here, pin busy, no PWM...
            raise RunError(f"--led {led}: cannot drive the light ({exc})") from None

    table = _Table(store, calibration, make_processor, tuple(calibration.camera.image_size))
    web, feed = _web_app(web_spec, web_data, live, store, table, live.info.discipline)
    if feed is not None:
        from .web.camera import TapSource
        source = TapSource(source, feed)  # the wizard's live view is the loop's own camera
    try:
        with open_display(display_spec, framebuffer=config.display.framebuffer) as display, source:
            size = display.size or (config.display.width, config.display.height)
            processor = table.processor(live)
            loop = LiveLoop(source, processor, live, display=display, light=light, board_size=size,
                            frame_queue=config.queues.frames, output_queue=config.queues.outputs,
                            max_fps=config.display.max_fps, max_gap_s=cam.max_gap_ms / 1000.0,
                            new_match=table.next_game, web=web, lock=None if web is None else web.lock)
            table.loop = loop
            buttons = _buttons(config, loop)
            previous = {s: signal.signal(s, lambda *_: loop.stop()) for s in (signal.SIGINT, signal.SIGTERM)}
            try:
                stats = loop.run()
            finally:
                table.loop = None
                for s, handler in previous.items():
                    signal.signal(s, handler)
                if buttons is not None:
                    buttons.close()
                if light is not None:
                    light.close()
    finally:
        if web is not None:
            web.close()
    return stats, loop.match.summary()


def _buttons(config: Config, loop: LiveLoop) -> Any:
    b = config.buttons
    if not b.enabled:
        return None
    from .led import Buttons
    try:
        return Buttons({"undo": b.undo, "confirm": b.confirm, "next_game": b.next_game}, loop.press,
                       bounce_ms=b.bounce_ms)
    except Exception as exc:
        raise RunError(f"[buttons]: cannot read the buttons ({exc})") from None
