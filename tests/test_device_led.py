"""The foul light and buttons on gpiozero's MockFactory: pin states at set times, no wall clock."""

from __future__ import annotations

import pytest

pytest.importorskip("gpiozero")
from gpiozero.pins.mock import MockFactory, MockPWMPin  # noqa: E402

from device.led import PATTERNS, Buttons, FoulLight, Indication, indication_for, make_light  # noqa: E402


@pytest.fixture
def factory() -> MockFactory:
    f = MockFactory()
    yield f
    f.reset()


@pytest.fixture
def pwm_factory() -> MockFactory:
    f = MockFactory(pin_class=MockPWMPin)
    yield f
    f.reset()


def pin_over_time(light: FoulLight, pin, times: list[float]) -> list[bool]:
    out = []
    for t in times:
        light.tick(t)
        out.append(bool(pin.state))
    return out


def test_foul_is_solid_until_the_next_shot_starts(factory: MockFactory) -> None:
    light = make_light(17, pin_factory=factory, clock=lambda: 0.0)
    pin = factory.pin(17)
    assert pin.state is False
    foul = {"foul": {"code": "touched", "article": "12.2.e"}, "confirm": False}
    light.show(indication_for(foul, camera_lost=False, shot_running=False), now=10.0)
    assert pin_over_time(light, pin, [10.0, 10.3, 11.7, 60.0]) == [True] * 4
    light.show(indication_for(foul, camera_lost=False, shot_running=True), now=61.0)
    assert pin.state is False


def test_confirm_blinks_fast_and_camera_lost_double_flashes(factory: MockFactory) -> None:
    light = make_light(17, pin_factory=factory, clock=lambda: 0.0)
    pin = factory.pin(17)
    light.show(Indication.CONFIRM, now=5.0)
    assert pin_over_time(light, pin, [5.0, 5.1, 5.3, 5.45, 5.5, 5.8]) == [True, True, False, False, True, False]
    light.show(Indication.CAMERA_LOST, now=100.0)
    times = [100.0, 100.1, 100.2, 100.35, 100.5, 101.0, 101.49, 101.55, 101.7]
    assert pin_over_time(light, pin, times) == [True, True, False, True, False, False, False, True, False]


def test_the_patterns_are_distinct() -> None:
    samples = [i / 20 for i in range(60)]
    shapes = {ind: tuple(PATTERNS[ind].lit(t) for t in samples) for ind in Indication}
    assert len(set(shapes.values())) == len(Indication)


def test_pins_are_not_rewritten_every_tick(factory: MockFactory) -> None:
    light = make_light(17, pin_factory=factory)
    pin = factory.pin(17)
    light.show(Indication.FOUL, now=0.0)
    n = len(pin.states)
    for i in range(50):
        light.tick(i / 10)
    assert len(pin.states) == n


@pytest.mark.parametrize("verdict, lost, running, ack, expected", [
    (None, False, False, False, Indication.OFF),
    ({"foul": None}, False, False, False, Indication.OFF),
    ({"foul": {"code": "x"}}, False, False, False, Indication.FOUL),
    ({"foul": {"code": "x"}, "confirm": True}, False, False, False, Indication.CONFIRM),
    ({"foul": {"code": "x"}, "confirm": True}, False, False, True, Indication.FOUL),
    ({"foul": {"code": "x"}}, True, False, False, Indication.CAMERA_LOST),
    ({"foul": {"code": "x"}}, False, True, False, Indication.OFF),
    ({"foul": None, "confirm": True}, False, True, False, Indication.OFF),
])
def test_what_the_light_shows(verdict, lost, running, ack, expected) -> None:
    assert indication_for(verdict, camera_lost=lost, shot_running=running, acknowledged=ack) is expected


def test_rgb_led_shows_each_indication_in_its_colour(pwm_factory: MockFactory) -> None:
    light = make_light((5, 6, 13), pin_factory=pwm_factory)
    pins = [pwm_factory.pin(p) for p in (5, 6, 13)]
    light.show(Indication.FOUL, now=0.0)
    assert [p.state for p in pins] == [1.0, 0.0, 0.0]
    light.show(Indication.CONFIRM, now=1.0)
    assert [p.state for p in pins] == [1.0, 0.5, 0.0]
    light.tick(1.3)
    assert [p.state for p in pins] == [0.0, 0.0, 0.0]
    light.show(Indication.CAMERA_LOST, now=2.0)
    assert [p.state for p in pins] == [0.0, 0.0, 1.0]
    light.close()


def test_active_low_led_inverts_the_pin(factory: MockFactory) -> None:
    light = make_light(17, active_high=False, pin_factory=factory)
    light.show(Indication.FOUL, now=0.0)
    assert factory.pin(17).state is False  # lit: the pin pulls the cathode low


def test_buttons_report_presses_by_name(factory: MockFactory) -> None:
    pressed: list[str] = []
    buttons = Buttons({"undo": 5, "confirm": 6, "next_game": 13}, pressed.append, bounce_ms=0,
                      pin_factory=factory)
    for pin in (5, 13, 6, 5):
        factory.pin(pin).drive_low()
        factory.pin(pin).drive_high()
    assert pressed == ["undo", "next_game", "confirm", "undo"]
    buttons.close()


def test_unknown_button_names_are_refused(factory: MockFactory) -> None:
    with pytest.raises(ValueError, match="unknown button 'reset'"):
        Buttons({"reset": 5}, print, pin_factory=factory)
