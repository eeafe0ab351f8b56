"""The JSON form of a summary's numbers: a float or None (:func:`finite_or_none`), a time with its error in 1/J and
µs and the reason where it is not a result (:func:`time_json`), a study's ``parameters`` (:func:`parameters_json`)."""

from __future__ import annotations

import math

def finite_or_none(x):
    """JSON-friendly float: None for nan/inf/None."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


#: what resolves a time whose error is half of it or more (the remedy of :func:`time_json`'s reason)
MORE_SAMPLES = "more trajectories (or disorder realizations) resolve it"


def time_json(value_J, error_J, J_hz: float, reason: str | None = None, remedy: str = MORE_SAMPLES,
              flags: list[str] | None = None) -> dict:
    """{"value_J", "error_J", "value_us", "error_us"} with None where not available; "reason" where the value is not a
    result: why it is None (``reason``: why it is not there and what would give it), or why a value whose error is
    half of it or more is not resolved (:func:`lru_mps.analysis.numbers.resolution_reason`, with ``remedy``); "flags" where
    it passes a physical bound by more than its error (:mod:`lru_mps.analysis.numbers`: bound_flag, t2_flags)."""
    from ..analysis.numbers import resolution_reason
    from ..physics.units import time_to_us

    v, e = finite_or_none(value_J), finite_or_none(error_J)
    out = {
        "value_J": v,
        "error_J": e,
        "value_us": None if v is None else time_to_us(v, J_hz),
        "error_us": None if e is None else time_to_us(e, J_hz),
    }
    if v is None and reason:
        out["reason"] = reason
    elif v is not None:
        why = resolution_reason(out["value_us"], out["error_us"], remedy, "us")
        if why:
            out["reason"] = f"not resolved: {why}"
    if flags:
        out["flags"] = list(flags)
    return out


def parameters_json(spec, swept: dict[str, str] | None = None, **extra) -> dict:
    """The JSON ``parameters`` of a study: ``spec.as_dict()`` with the ``swept`` keys None (each with its
    ``<key>_reason``: where the swept values are), ``extra`` keys added, and a reason beside every other null (an
    infinite T1q or Tphi: no such decay)."""
    from ..analysis.numbers import with_parameter_reasons

    out = {**spec.as_dict(), **extra}
    for key, why in (swept or {}).items():
        out[key] = None
        out[f"{key}_reason"] = why
    return with_parameter_reasons(out)
