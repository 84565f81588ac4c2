"""The foul light and the referee's buttons, through gpiozero (imported only when a pin is really used).

The light has four indications, each a pattern distinct on a plain LED and, on an RGB LED, a colour too:

    FOUL         solid (red)            from a foul's verdict until the next shot starts
    CONFIRM      fast blink (amber)     the referee asks a person to confirm the verdict (``confirm: true``)
    CAMERA_LOST  double flash (blue)    the camera is away: shots are not being refereed
    OFF

Blinking is driven by ``tick(now)`` from the output thread on the injected clock, not by gpiozero's own blink
thread, so tests set a time and read the pins. The pin factory is injectable (``MockFactory`` in tests).
"""

from __future__ import annotations

import enum
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping


class Indication(enum.Enum):
    OFF = "off"
    FOUL = "foul"
    CONFIRM = "confirm"
    CAMERA_LOST = "camera_lost"


@dataclass(frozen=True)
class Pattern:
    steps: tuple[tuple[float, bool], ...]  # (seconds, lit), repeated; one step lit forever is "solid"
    colour: tuple[float, float, float]  # on an RGB LED

    def lit(self, elapsed: float) -> bool:
        period = sum(d for d, _ in self.steps)
        phase = elapsed % period if period > 0 else 0.0
        for duration, on in self.steps:
            if phase < duration:
                return on
            phase -= duration
        return self.steps[-1][1]


PATTERNS: Mapping[Indication, Pattern] = {
    Indication.OFF: Pattern(((1.0, False),), (0.0, 0.0, 0.0)),
    Indication.FOUL: Pattern(((1.0, True),), (1.0, 0.0, 0.0)),
    Indication.CONFIRM: Pattern(((0.25, True), (0.25, False)), (1.0, 0.5, 0.0)),
    Indication.CAMERA_LOST: Pattern(((0.15, True), (0.15, False), (0.15, True), (1.05, False)), (0.0, 0.0, 1.0)),
}


def indication_for(verdict: Mapping[str, Any] | None, *, camera_lost: bool, shot_running: bool,
                   acknowledged: bool = False) -> Indication:
    """What the light shows for the match as it stands: a lost camera first, a pending confirmation before a foul."""
    if camera_lost:
        return Indication.CAMERA_LOST
    if shot_running or verdict is None:
        return Indication.OFF
    if verdict.get("confirm") and not acknowledged:
        return Indication.CONFIRM
    if verdict.get("foul"):
        return Indication.FOUL
    return Indication.OFF


class FoulLight:
    """Shows an indication on a gpiozero ``LED`` (``value``) or ``RGBLED`` (``color``)."""

    def __init__(self, device: Any, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.device = device
        self._rgb = hasattr(device, "color")
        self._clock = clock
        self.indication = Indication.OFF
        self._since = clock()
        self._written: tuple[float, float, float] | None = None  # what the pins show now
        self._write(False)

    def show(self, indication: Indication, now: float | None = None) -> None:
        if indication is not self.indication:
            self.indication = indication
            self._since = self._clock() if now is None else now
        self.tick(now)

    def tick(self, now: float | None = None) -> None:
        now = self._clock() if now is None else now
        self._write(PATTERNS[self.indication].lit(now - self._since))

    def _write(self, lit: bool) -> None:
        colour = PATTERNS[self.indication].colour if lit else (0.0, 0.0, 0.0)
        if self._rgb:
            if colour != self._written:  # do not rewrite the pins (and their PWM) every tick
                self.device.color = colour
        elif self._written is None or any(self._written) != lit:
            self.device.value = 1 if lit else 0
        self._written = colour

    def close(self) -> None:
        self._write(False)
        self.device.close()


def make_light(pins: int | tuple[int, int, int], *, active_high: bool = True, pin_factory: Any = None,
               clock: Callable[[], float] = time.monotonic) -> FoulLight:
    """A plain LED on one GPIO, or an RGB LED (PWM) on three."""
    from gpiozero import LED, RGBLED  # the "pi" extra; only when a light is really wired

    if isinstance(pins, int):
        device = LED(pins, active_high=active_high, pin_factory=pin_factory)
    else:
        device = RGBLED(*pins, active_high=active_high, pin_factory=pin_factory)
    return FoulLight(device, clock=clock)


BUTTONS = ("undo", "confirm", "next_game")


class Buttons:
    """Push buttons to ground (internal pull-ups). ``on_press(name)`` runs on gpiozero's thread: keep it short."""

    def __init__(self, pins: Mapping[str, int], on_press: Callable[[str], None], *, bounce_ms: int = 50,
                 pin_factory: Any = None) -> None:
        from gpiozero import Button

        unknown = set(pins) - set(BUTTONS)
        if unknown:
            raise ValueError(f"unknown button {sorted(unknown)[0]!r} (known: {', '.join(BUTTONS)})")
        self._buttons = []
        for name, pin in pins.items():
            button = Button(pin, pull_up=True, bounce_time=bounce_ms / 1000 if bounce_ms else None,
                            pin_factory=pin_factory)
            button.when_pressed = (lambda n: lambda: on_press(n))(name)
            self._buttons.append(button)

    def close(self) -> None:
        for b in self._buttons:
            b.close()
