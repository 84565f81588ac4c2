"""The device configuration: a TOML file for everything the ``arbitro run`` command line does not say.

Every setting is typed, bounded and described here, next to its default; unknown sections and keys are errors (a
misspelt key would otherwise be silently ignored and the default used), each problem is one line naming the key.
The file is read once, by the run command, and the frozen ``Config`` is handed to whatever needs it.
``python -m device.config`` prints the documented defaults as a TOML file to start from.
"""

from __future__ import annotations

import dataclasses
import sys
import tomllib
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from .sources.picamera import CAMERA_MODES, DEFAULT_MODE


class ConfigError(ValueError):
    """A bad configuration file; the message is one line naming the file and the key."""


def setting(default: Any, doc: str, *, min: float | None = None, max: float | None = None,
            choices: tuple[Any, ...] | None = None) -> Any:
    return field(default=default, metadata={"doc": doc, "min": min, "max": max, "choices": choices})


@dataclass(frozen=True)
class CameraConfig:
    mode: str = setting(DEFAULT_MODE, "Pi camera mode for --camera picamera2", choices=tuple(CAMERA_MODES))
    camera_num: int = setting(0, "which Pi camera (0 or 1 on a Pi 5)", min=0, max=7)
    exposure_us: int = setting(2000, "fixed exposure in microseconds: short keeps a fast ball's blur to a few "
                                     "pixels", min=50, max=100_000)
    analogue_gain: float = setting(4.0, "fixed sensor gain (brightness without longer exposure)", min=1.0, max=16.0)
    stream: str = setting("lores", "the stream detection reads: lores (faster) or main (full size)",
                          choices=("lores", "main"))
    frame_timeout_ms: int = setting(1000, "a Pi camera silent this long is taken as lost (a loose cable hangs, it does "
                                          "not fail)", min=50, max=60_000)
    reopen_initial_s: float = setting(0.5, "first wait before reopening a lost camera, doubled on each failure",
                                      min=0.01, max=60.0)
    reopen_max_s: float = setting(10.0, "longest wait between reopening attempts", min=0.1, max=600.0)
    max_gap_ms: float = setting(100.0, "frames missing for longer than this (camera lost, frames skipped or dropped "
                                       "behind) mark the shot under way as unrefereed", min=0.0, max=10_000.0)


@dataclass(frozen=True)
class DisplayConfig:
    width: int = setting(800, "scoreboard width in pixels (800x480 and 1024x600 are the usual panels)",
                         min=320, max=3840)
    height: int = setting(480, "scoreboard height in pixels", min=240, max=2160)
    framebuffer: str = setting("/dev/fb0", "framebuffer device for --display fb")
    max_fps: float = setting(10.0, "most scoreboard redraws per second (the rest are skipped, never queued)",
                             min=0.5, max=60.0)


@dataclass(frozen=True)
class LedConfig:
    kind: str = setting("none", "the foul light when --led does not say: none, a plain LED on one pin, or an RGB "
                                "LED on three", choices=("none", "led", "rgb"))
    pin: int = setting(17, "GPIO (BCM number) of the plain LED", min=0, max=27)
    rgb_pins: tuple[int, int, int] = setting((17, 27, 22), "GPIOs of the RGB LED's red, green and blue legs",
                                             min=0, max=27)
    active_high: bool = setting(True, "false when the LED lights with the pin low (common anode)")


@dataclass(frozen=True)
class ButtonsConfig:
    enabled: bool = setting(False, "read the undo / confirm / next-game buttons")
    undo: int = setting(5, "GPIO of the undo button (to ground, internal pull-up)", min=0, max=27)
    confirm: int = setting(6, "GPIO of the confirm button", min=0, max=27)
    next_game: int = setting(13, "GPIO of the next-game button", min=0, max=27)
    bounce_ms: int = setting(50, "contact bounce ignored after a press", min=0, max=1000)


@dataclass(frozen=True)
class QueueConfig:
    frames: int = setting(4, "frames waiting for processing; beyond it the oldest is dropped and counted",
                          min=1, max=256)
    outputs: int = setting(8, "scoreboard updates waiting for the display; beyond it the oldest is dropped",
                           min=1, max=256)


@dataclass(frozen=True)
class StoreConfig:
    path: str = setting("arbitro.db", "the match store, when --store does not name it")


@dataclass(frozen=True)
class Config:
    camera: CameraConfig = field(default_factory=CameraConfig)
    display: DisplayConfig = field(default_factory=DisplayConfig)
    led: LedConfig = field(default_factory=LedConfig)
    buttons: ButtonsConfig = field(default_factory=ButtonsConfig)
    queues: QueueConfig = field(default_factory=QueueConfig)
    store: StoreConfig = field(default_factory=StoreConfig)


# --- reading ----------------------------------------------------------------------------------------------------

def load_config(path: str | Path | None) -> Config:
    """The file's settings over the defaults; no path gives the defaults."""
    if path is None:
        return Config()
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such config file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read ({exc})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from None
    return parse_config(data, str(path))


def parse_config(data: Mapping[str, Any], source: str = "config") -> Config:
    sections: dict[str, Any] = {}
    known = {f.name: f for f in dataclasses.fields(Config)}
    for name, value in data.items():
        if name not in known:
            raise ConfigError(f"{source}: unknown section [{name}] (known: {', '.join(known)})")
        if not isinstance(value, Mapping):
            raise ConfigError(f"{source}: {name} must be a [{name}] section")
        cls = typing.get_type_hints(Config)[name]
        sections[name] = _section(cls, name, value, source)
    return Config(**sections)


def _section(cls: type, section: str, values: Mapping[str, Any], source: str) -> Any:
    fields = {f.name: f for f in dataclasses.fields(cls)}
    hints = typing.get_type_hints(cls)
    out: dict[str, Any] = {}
    for key, value in values.items():
        if key not in fields:
            raise ConfigError(f"{source}: unknown key {section}.{key} (known: {', '.join(fields)})")
        out[key] = _value(f"{section}.{key}", hints[key], fields[key].metadata, value, source)
    return cls(**out)


def _value(key: str, kind: Any, meta: Mapping[str, Any], value: Any, source: str) -> Any:
    def fail(problem: str) -> ConfigError:
        return ConfigError(f"{source}: {key} = {_toml(value)}: {problem}")

    if typing.get_origin(kind) is tuple:
        items = typing.get_args(kind)
        if not isinstance(value, list) or len(value) != len(items):
            raise fail(f"expected a list of {len(items)} values")
        return tuple(_value(f"{key}[{i}]", t, meta, v, source) for i, (t, v) in enumerate(zip(items, value)))
    if kind is bool:
        if not isinstance(value, bool):
            raise fail("expected true or false")
        return value
    if kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise fail("expected a whole number")
    elif kind is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise fail("expected a number")
        value = float(value)
    elif kind is str:
        if not isinstance(value, str) or not value:
            raise fail("expected a non-empty string")
    if meta.get("min") is not None and value < meta["min"]:
        raise fail(f"below the minimum {meta['min']}")
    if meta.get("max") is not None and value > meta["max"]:
        raise fail(f"above the maximum {meta['max']}")
    if meta.get("choices") is not None and value not in meta["choices"]:
        raise fail(f"must be one of {', '.join(map(str, meta['choices']))}")
    return value


# --- documenting ------------------------------------------------------------------------------------------------

def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return repr(value)


def describe_config() -> str:
    """The defaults as a TOML file, every key with its description and bounds."""
    lines = ["# arbitro device configuration (arbitro run --config FILE). Every key is optional.", ""]
    defaults = Config()
    for section in dataclasses.fields(Config):
        lines.append(f"[{section.name}]")
        current = getattr(defaults, section.name)
        for f in dataclasses.fields(current):
            meta = f.metadata
            bounds = []
            if meta.get("choices"):
                bounds.append("one of " + ", ".join(map(str, meta["choices"])))
            if meta.get("min") is not None:
                bounds.append(f"{meta['min']} to {meta['max']}")
            lines.append(f"# {meta['doc']}" + (f" ({'; '.join(bounds)})" if bounds else ""))
            lines.append(f"{f.name} = {_toml(getattr(current, f.name))}")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.stdout.write(describe_config())
