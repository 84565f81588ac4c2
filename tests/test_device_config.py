"""The device config: typed, bounded, described; unknown keys and bad values are one line naming the key."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from device.config import Config, ConfigError, describe_config, load_config, parse_config


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "arbitro.toml"
    p.write_text(text)
    return p


def test_no_file_gives_the_defaults() -> None:
    c = load_config(None)
    assert c == Config()
    assert (c.display.width, c.display.height) == (800, 480)
    assert c.queues.frames >= 1
    assert c.led.kind == "none"  # no light unless one is configured: a desktop has no GPIO


def test_a_file_overrides_only_what_it_names(tmp_path: Path) -> None:
    c = load_config(write(tmp_path, """
        [display]
        width = 1024
        height = 600
        [led]
        kind = "rgb"
        rgb_pins = [5, 6, 13]
        [camera]
        exposure_us = 1200
        analogue_gain = 6
        [store]
        path = "/var/lib/arbitro/match.db"
    """))
    assert (c.display.width, c.display.height, c.display.max_fps) == (1024, 600, 10.0)
    assert c.led.rgb_pins == (5, 6, 13) and c.led.kind == "rgb"
    assert c.camera.analogue_gain == 6.0 and isinstance(c.camera.analogue_gain, float)
    assert c.store.path == "/var/lib/arbitro/match.db"
    assert c.buttons == Config().buttons


@pytest.mark.parametrize("text, message", [
    ("[display]\nwidht = 800", "unknown key display.widht (known: width, height"),
    ("[screen]\nwidth = 800", "unknown section [screen]"),
    ("display = 3", "display must be a [display] section"),
    ("[display]\nwidth = 100", "display.width = 100: below the minimum 320"),
    ("[display]\nwidth = 9000", "display.width = 9000: above the maximum 3840"),
    ("[display]\nwidth = 800.5", "display.width = 800.5: expected a whole number"),
    ("[display]\nwidth = true", "display.width = true: expected a whole number"),
    ('[camera]\nmode = "v1"', 'camera.mode = "v1": must be one of gs, cm3, cm3_120, hq'),
    ("[camera]\nexposure_us = 10", "camera.exposure_us = 10: below the minimum 50"),
    ("[led]\nrgb_pins = [1, 2]", "led.rgb_pins = [1, 2]: expected a list of 3 values"),
    ("[led]\nrgb_pins = [1, 2, 40]", "led.rgb_pins[2] = 40: above the maximum 27"),
    ('[led]\nactive_high = "yes"', 'led.active_high = "yes": expected true or false'),
    ("[queues]\nframes = 0", "queues.frames = 0: below the minimum 1"),
    ("[display\nwidth = 1", "not valid TOML"),
])
def test_bad_settings_are_one_line_naming_the_key(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert message in str(info.value)
    assert str(info.value).startswith(str(path)) and "\n" not in str(info.value)


def test_a_missing_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such config file"):
        load_config(tmp_path / "nope.toml")


def test_the_documented_defaults_are_a_valid_config_equal_to_the_defaults() -> None:
    text = describe_config()
    assert parse_config(tomllib.loads(text)) == Config()
    assert "# fixed exposure in microseconds" in text and "(50 to 100000)" in text


def test_config_is_frozen() -> None:
    with pytest.raises(AttributeError):
        Config().display.width = 3  # type: ignore[misc]
