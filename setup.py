"""The one compiled part of arbitro: the ray fit's rounds (vision/_ray_kernel.c). Everything else is in
pyproject.toml; setuptools reads both."""

from setuptools import Extension, setup

setup(ext_modules=[Extension(
    "vision._ray_kernel", sources=["vision/_ray_kernel.c"],
    # No fused multiply-add: it rounds differently, and the fit's ray decisions are thresholds, so the Pi's
    # compiler (which fuses by default on aarch64) would otherwise fit a few edges unlike x86-64's.
    extra_compile_args=["-O2", "-ffp-contract=off", "-std=c99"],
)])
