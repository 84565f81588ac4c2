"""Physical constants of the virtual table, in table millimetres, seconds and radians."""

from __future__ import annotations

from dataclasses import dataclass

G = 9810.0  # mm/s^2


@dataclass(frozen=True)
class PhysicsParams:
    """Friction and restitution. Defaults are typical cloth/ball values (pooltool and Marlow's measurements)."""

    mu_slide: float = 0.2  # ball-cloth sliding friction
    mu_roll: float = 0.01  # rolling resistance: a rolling ball decelerates at mu_roll * g
    spin_decel: float = 10.0  # rad/s^2 of side spin (about z) lost to the cloth's drilling friction
    e_ball: float = 0.94  # ball-ball restitution
    mu_ball: float = 0.05  # ball-ball friction: throw, and spin passed to the object ball
    e_cushion: float = 0.8  # cushion restitution (normal speed out / in)
    mu_cushion: float = 0.2  # ball-cushion friction: side spin changes the rebound angle
    cushion_nose_height: float = 0.635  # nose height as a fraction of the ball diameter (above the centre)
    pin_mass_ratio: float = 0.05  # a Chapó pin's mass / a ball's mass: light, it barely deflects the ball
    pin_fall_s: float = 0.12  # how long a knocked pin takes to lie flat (rendering only)
    dt: float = 0.0005  # integration step while a ball slides; contact times are solved inside a step
    dt_rolling: float = 0.01  # step while every ball rolls straight (sampling only: contacts stay exact)
