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
from ..analysis.numbers import pm, probability_flag, resolution_reason

#: what a point without a number reports: every JSON field None, nan in the dataset
_MISSING = {**{k: Lifetime(math.nan, math.nan, math.nan, None) for k in LIFETIME_OBSERVABLE},
            "removal_efficiency": Fraction(math.nan, math.nan)}

#: why a point that ran a leakage start has no lifetime (:func:`lru_mps.analysis.lifetimes.leakage_lifetimes`)
NO_LIFETIME = ("not defined: the leakage has a floor here (a readout error at the reset site or a thermal bath at "
               "T > 0 makes |2> anew), so its integral diverges")

#: the table columns of :func:`cells`
HEAD = f"{'tau_leak(1)':>17} {'tau_leak(L)':>17} {'eta':>13}"
#: the line under a table with these columns
LEGEND = ("tau_leak(1), tau_leak(L): leakage lifetimes, int P_star^(1) dt and int P_star^(L) dt; eta: share "
          "of the leakage ended by the reset site (not by hardware decay); 'not resolved*' in these columns: not "
          "there (reason in summary.json), or an error of half the value or more (more trajectories resolve it)")


class LifetimeGrid:
    """tau_1, tau_L and eta on a study's grid of points (an index: a tuple into ``shape``)."""

    def __init__(self, shape):
        self.points = np.full(tuple(shape), None, dtype=object)
        self.reasons: dict = {}

    def put(self, index: tuple, lives: dict, reason: str | None = None) -> None:
        """Store one point's :func:`~lru_mps.analysis.lifetimes.leakage_lifetimes` (``reason``: why a quantity it
        lacks is not there, where the caller knows better than :data:`NO_LIFETIME`)."""
        self.points[index] = lives
        if reason:
            self.reasons[index] = reason

    def get(self, index: tuple) -> dict:
        """The point's quantities, a Lifetime or Fraction each (all nan where the point has none)."""
        lives = self.points[index] or {}
        return {k: lives.get(k) or _MISSING[k] for k in LIFETIMES}

    def as_json(self, index: tuple, J_hz: float) -> dict:
        """{name: as_json} of one point; a quantity that is not there carries its "reason"."""
        out = {k: v.as_json(J_hz) for k, v in self.get(index).items()}
        for k, v in out.items():
            if v.get("value_J", v.get("value")) is None:
                v["reason"] = self.reason(index, k)
        eta = out["removal_efficiency"]
        flag = probability_flag(eta["value"], eta["error"], "the share eta is a probability")
        if flag:  # outside [0, 1] by more than its error
            eta["flags"] = [flag]
        return out

    def reason(self, index: tuple, name: str) -> str:
        """Why quantity ``name`` of a point is not there (:meth:`put`'s reason, else :data:`NO_LIFETIME` where the
        analysis gave none, else not resolved)."""
        if index in self.reasons:
            return self.reasons[index]
        if self.points[index] is None:
            return "this point did not run a leakage start"
        if self.points[index].get(name) is None:
            return NO_LIFETIME
        return "not resolved: the leakage curve is not resolved enough to integrate; more trajectories resolve it"

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
                    a[index] = self.as_json(index, J_hz)[k]
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
    """A table cell 'value+-error' (17 characters) of a time's JSON, in 1/J (``unit`` = 'J') or us, to the error's
    significant digits (:func:`lru_mps.analysis.numbers.pm`); 'not resolved*' where the JSON gives a reason (not there, or
    an error of half the value or more; listed under the table, :func:`reason_lines`), '-' without one; a '!' after a
    value that passes a physical bound (its "flags", listed under the table too)."""
    if t and _why(t, unit):
        return f"{'not resolved*':>17s}"
    if not t or t.get(f"value_{unit}") is None:
        return f"{'-':>17s}"
    text = pm(t[f"value_{unit}"], t.get(f"error_{unit}"), sep="+-") + ("!" if t.get("flags") else "")
    return f"{text:>17s}"


def reason_lines(points: dict) -> list[str]:
    """'* <labels>: <reason>' for the points ({label: a time's JSON}) that carry a reason (not resolved), the points
    with the same reason on one line; then '! <label>: <value> <flags>' for those that pass a physical bound."""
    by_reason: dict[str, list[str]] = {}
    flagged = []
    for label, t in points.items():
        why = _why(t, "us" if t and t.get("value_us") is not None else "J") if t else None
        if why:
            by_reason.setdefault(why, []).append(label)
        elif t and t.get("flags"):
            unit = "us" if t.get("value_us") is not None else "J"
            value = pm(t[f"value_{unit}"], t.get(f"error_{unit}")) + (" us" if unit == "us" else "/J")
            flagged.append(f"! {label} = {value}: {'; '.join(t['flags'])}")
    return [f"* {'; '.join(labels)}: {reason}" for reason, labels in by_reason.items()] + flagged


def _why(t: dict, unit: str) -> str | None:
    """Why a time's JSON is not a result: its reason, or an error of half its value or more."""
    if f"value_{unit}" not in t and "value" in t:  # a number without a unit (a fraction, cycles, a probability)
        why = t.get("reason") or resolution_reason(t.get("value"), t.get("error"), MORE)
    else:
        why = t.get("reason") or resolution_reason(t.get(f"value_{unit}"), t.get(f"error_{unit}"), MORE,
                                                   "us" if unit == "us" else "/J")
    return None if why is None else why if why.startswith("not resolved") else f"not resolved: {why}"


#: what resolves a lifetime whose error is half of it or more
MORE = "more trajectories (or disorder realizations) resolve it"


def cells(qubit: dict | None, array: dict | None, eta: dict | None, unit: str = "J") -> str:
    """The columns of :data:`HEAD` from one point's JSON of tau_1, tau_L (1/J or us) and eta."""
    if not eta or eta.get("value") is None:
        eta_s = f"{'-':>13s}"
    elif resolution_reason(eta["value"], eta.get("error")):  # an error of half the value or more
        eta_s = f"{'not resolved*':>13s}"
    elif eta.get("flags"):
        eta_s = f"{pm(eta['value'], eta['error'], sep='+-') + '!':>13s}"
    else:
        eta_s = f"{pm(eta['value'], eta['error'], sep='+-') if eta['error'] else format(eta['value'], '.3f'):>13s}"
    return f"{time_cell(qubit, unit)} {time_cell(array, unit)} {eta_s}"


#: why a hardware limit (T1q, T2q, T1q/2) has no value: that decay is off (ideal conditions, or an infinite T1q/Tphi)
NO_DECAY = "infinite: no such decay in these conditions (ideal, or an infinite T1q or Tphi)"


def limit_json(value_J, J_hz: float) -> dict:
    """A hardware limit's JSON (:func:`~lru_mps.studies.base.time_json`, error 0), with :data:`NO_DECAY` where it is
    infinite or not there."""
    from .base import time_json

    finite = value_J is not None and math.isfinite(float(value_J))
    return time_json(value_J, 0.0, J_hz, None if finite else NO_DECAY)
