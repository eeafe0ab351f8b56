"""A study's configuration read key by key: each value's type and range checked in one place, one clear line per bad
value (:class:`~lru_mps.errors.ParameterError` naming the key).

    c = Config(cfg)
    n = c.integer("trajectories", min=1)
    odds = c.number("leakage_thermal_odds", min=1.0, default=1.0)
    on = c.boolean("short_thermal_strata", default=False)
    at = c.factors("long_leakage_factor_at", others="long_leakage_factor")
"""

from __future__ import annotations

import math

from ..errors import require

_MISSING = object()


def _is_number(x) -> bool:
    """A real number as a study file gives it (int or float; not a bool)."""
    return isinstance(x, (int, float)) and not isinstance(x, bool)


class Config:
    """Typed, checked reads of a resolved study config (a dict: defaults, file, overrides)."""

    def __init__(self, cfg: dict):
        self.cfg = cfg

    def _get(self, key: str, default):
        if key in self.cfg and self.cfg[key] is not None:
            return self.cfg[key]
        require(default is not _MISSING, key, None, "a value (the study's file sets one)")
        return default

    def number(self, key: str, *, min: float | None = None, max: float | None = None, above: float | None = None,
               below: float | None = None, default=_MISSING, allowed: str | None = None) -> float:
        """A finite real number in [min, max] (and > above, < below where given)."""
        value = self._get(key, default)
        bounds = [f">= {min:g}" if min is not None else None, f"> {above:g}" if above is not None else None,
                  f"<= {max:g}" if max is not None else None, f"< {below:g}" if below is not None else None]
        text = allowed or "a number " + " and ".join(b for b in bounds if b) if any(bounds) else allowed or "a number"
        ok = _is_number(value) and math.isfinite(value) and (min is None or value >= min) and \
            (max is None or value <= max) and (above is None or value > above) and (below is None or value < below)
        require(ok, key, value, text)
        return float(value)

    def integer(self, key: str, *, min: int = 1, default=_MISSING, allowed: str | None = None) -> int:
        """An integer >= min (an integral float such as 240.0 is taken)."""
        value = self._get(key, default)
        require(_is_number(value) and math.isfinite(value) and int(value) == value and value >= min, key, value,
                allowed or f"an integer >= {min}")
        return int(value)

    def boolean(self, key: str, *, default=_MISSING) -> bool:
        """true or false."""
        value = self._get(key, default)
        require(isinstance(value, bool), key, value, "true or false")
        return value

    def factors(self, key: str, *, others: str, min: float = 1.0) -> dict[int, float]:
        """A table of lengths and factors (``{ 20 = 5 }``): {L: factor >= min}; ``others`` names what the lengths
        not in it take."""
        table = self._get(key, {})
        require(isinstance(table, dict), key, table,
                f"a table of lengths and factors, e.g. {{ 20 = 5 }} (the lengths not named take {others})")
        for k, value in table.items():
            require(str(k).isdigit() and int(k) >= 2, f"{key}.{k}", k, "a length L >= 2")
            require(_is_number(value) and min <= value < math.inf, f"{key}.{k}", value,
                    f"a number >= {min:g} (a factor of trajectories)")
        return {int(k): float(v) for k, v in table.items()}
