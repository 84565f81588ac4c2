"""The table's web app (issue 9): the scoreboard for phones, and the referee's controls behind the table's PIN."""

from .server import WebApp

__all__ = ["WebApp"]
