"""The explicit registry of referees: discipline name -> the module and class that judge it.

Modules are imported on first use so that a discipline's referee loads only when a match of it is played.
"""

from __future__ import annotations

import importlib
from typing import Mapping

from .balls import CAROM_DISCIPLINES, DISCIPLINES
from .match import OptionError, Referee
from .tables import DEFAULT_PRESET, PRESETS, TableSpec, preset

_REFEREES: Mapping[str, str] = {
    **{d: "rules.carom:CaromReferee" for d in CAROM_DISCIPLINES},
    "sinuca": "rules.sinuca:SinucaReferee",
    "bilhar": "rules.bilhar:BilharReferee",
    "chapo": "rules.chapo:ChapoReferee",
}


def referee_for(discipline: str, table: str | TableSpec | None = None, distance: int | None = None,
                options: Mapping[str, str] | None = None) -> Referee:
    """The referee of a discipline on a table (a preset name, a spec, or the discipline's default preset)."""
    if discipline not in DISCIPLINES:
        raise OptionError(f"unknown discipline {discipline!r} (known: {', '.join(DISCIPLINES)})")
    if table is None:
        spec = preset(DEFAULT_PRESET[discipline])
    elif isinstance(table, TableSpec):
        spec = table
    else:
        if table not in PRESETS:
            raise OptionError(f"unknown table preset {table!r} (known: {', '.join(sorted(PRESETS))})")
        spec = preset(table)
    if distance is not None and distance <= 0:
        raise OptionError(f"--distance {distance}: must be a positive number of points")
    module_name, _, class_name = _REFEREES[discipline].partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            raise OptionError(f"discipline {discipline!r} has no referee yet") from None
        raise
    cls = getattr(module, class_name)
    return cls(discipline=discipline, table=spec, distance=distance, options=dict(options or {}))
