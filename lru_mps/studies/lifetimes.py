"""The leakage lifetimes of a study's points: one definition of their JSON, NetCDF variables and table columns.

Every study whose ensembles start from |2> on site 1 reports, per point,
:func:`lru_mps.analysis.lifetimes.leakage_lifetimes` of that ensemble
(docs/physics.md §8): tau_1 (``leakage_lifetime_qubit``) and tau_L
(``leakage_lifetime_array``) in 1/J and the removal efficiency eta
(``removal_efficiency``), each with its jackknife error.  :class:`LifetimeGrid`
holds them on the study's grid of points and writes

* JSON: each quantity's own ``as_json`` per point (``value_J``, ``error_J``,
  ``value_us``, ``error_us``, ``tail_J``, ``tail``; eta: ``value``,
  ``error``), every field None where the point has no number;
* NetCDF: ``<name>_J`` and ``<name>_error_J`` (1/J) of the two lifetimes,
  ``removal_efficiency`` and ``removal_efficiency_error``;
* tables: the columns tau_leak(1), tau_leak(L), eta (:data:`HEAD`,
  :func:`cells`, :data:`LEGEND`).
"""

from __future__ import annotations

import math

import numpy as np

from ..analysis.lifetimes import LIFETIME_OBSERVABLE, LIFETIMES, Fraction, Lifetime

#: what a point without a number reports: every JSON field None, nan in the dataset
_MISSING = {**{k: Lifetime(math.nan, math.nan, math.nan, None) for k in LIFETIME_OBSERVABLE},
            "removal_efficiency": Fraction(math.nan, math.nan)}

#: the table columns of :func:`cells`
HEAD = f"{'tau_leak(1)':>17} {'tau_leak(L)':>17} {'eta':>13}"
#: the line under a table with these columns
LEGEND = ("tau_leak(1), tau_leak(L): leakage lifetimes, int P_star^(1) dt and int P_star^(L) dt; eta: share "
          "of the leakage ended by the reset site (not by hardware decay)")


class LifetimeGrid:
    """tau_1, tau_L and eta on a study's grid of points (an index: a tuple into ``shape``)."""

    def __init__(self, shape):
        self.points = np.full(tuple(shape), None, dtype=object)

    def put(self, index: tuple, lives: dict) -> None:
        """Store one point's :func:`~lru_mps.analysis.lifetimes.leakage_lifetimes`."""
        self.points[index] = lives

    def get(self, index: tuple) -> dict:
        """The point's quantities, a Lifetime or Fraction each (all nan where the point has none)."""
        lives = self.points[index] or {}
        return {k: lives.get(k) or _MISSING[k] for k in LIFETIMES}

    def as_json(self, index: tuple, J_hz: float) -> dict:
        """{name: as_json} of one point."""
        return {k: v.as_json(J_hz) for k, v in self.get(index).items()}

    def lists(self, indices, J_hz) -> dict:
        """{name: [as_json of each point of ``indices``]}; ``J_hz``: one value, or one per point."""
        indices = list(indices)
        J = list(J_hz) if np.ndim(J_hz) else [J_hz] * len(indices)
        rows = [self.as_json(i, j) for i, j in zip(indices, J)]
        return {k: [r[k] for r in rows] for k in LIFETIMES}

    def nested(self, J_hz: float, where=None) -> dict:
        """{name: nested lists over the grid's axes of as_json per point (None where ``where`` is False)}."""
        out = {}
        for k in LIFETIMES:
            a = np.full(self.points.shape, None, dtype=object)
            for index in np.ndindex(a.shape):
                if where is None or where[index]:
                    a[index] = self.get(index)[k].as_json(J_hz)
            out[k] = a.tolist()
        return out

    def array(self, name: str) -> np.ndarray:
        """(*shape, 2): the value and error of one quantity at every point (nan where none)."""
        out = np.full(self.points.shape + (2,), np.nan)
        for index in np.ndindex(self.points.shape):
            d = self.get(index)[name]
            out[index] = (d.value, d.error)
        return out

    def data_vars(self, dims: tuple) -> dict:
        """The dataset's variables over ``dims`` (the grid's axes)."""
        out = {}
        for k in LIFETIMES:
            a = self.array(k)
            if k in LIFETIME_OBSERVABLE:
                out[f"{k}_J"] = (dims, a[..., 0], {"units": "1/J"})
                out[f"{k}_error_J"] = (dims, a[..., 1], {"units": "1/J"})
            else:
                out[k] = (dims, a[..., 0], {"units": "1"})
                out[f"{k}_error"] = (dims, a[..., 1], {"units": "1"})
        return out


def time_cell(t: dict | None, unit: str = "J") -> str:
    """A table cell 'value+-error' (17 characters) of a time's JSON, in 1/J (``unit`` = 'J') or us; 'not resolved*'
    where the JSON gives the reason (listed under the table, :func:`reason_lines`), '-' without one."""
    if t and t.get(f"value_{unit}") is None and t.get("reason"):
        return f"{'not resolved*':>17s}"
    if not t or t.get(f"value_{unit}") is None:
        return f"{'-':>17s}"
    return f"{t[f'value_{unit}']:9.4g}+-{(t[f'error_{unit}'] or 0):<6.2g}"


def reason_lines(points: dict) -> list[str]:
    """'* <labels>: <reason>' for the points ({label: a time's JSON}) that carry a reason (not resolved), the points
    with the same reason on one line."""
    by_reason: dict[str, list[str]] = {}
    for label, t in points.items():
        if t and t.get("reason"):
            by_reason.setdefault(t["reason"], []).append(label)
    return [f"* {'; '.join(labels)}: {reason}" for reason, labels in by_reason.items()]


def cells(qubit: dict | None, array: dict | None, eta: dict | None, unit: str = "J") -> str:
    """The columns of :data:`HEAD` from one point's JSON of tau_1, tau_L (1/J or us) and eta."""
    if not eta or eta.get("value") is None:
        eta_s = f"{'-':>13s}"
    else:
        eta_s = f"{eta['value']:6.3f}+-{(eta['error'] or 0):<5.1g}"
    return f"{time_cell(qubit, unit)} {time_cell(array, unit)} {eta_s}"
