"""How a number is shown: one rule for every study table, summary.json, ``lru-mps simulate``'s summary and a decay
time's text in Python (here, below the io layer, so that the analysis's own results use it too).

* **Significant digits.**  A value with an error is written to the error's
  digits: the error with two significant digits, the value rounded at the same
  decimal place (:func:`pm`: ``0.92 +- 0.21``, ``118 +- 14``,
  ``(6.8 +- 1.1)e-04``); a value without an error with four (:func:`sig`).
* **Not resolved.**  A value whose error is half of it or more is not a
  result: it reads ``not resolved (reason)`` (:func:`resolution_reason` gives
  the reason, :func:`not_resolved` the text), and so does a value that is not
  there; the reason says why and what would resolve it.
* **Bounds.**  A value beyond a physical bound by more than its error is
  flagged with the bound (:func:`bound_flag`: T2 above 2 T1, T2 above the
  hardware's T2 limit, a probability outside [0, 1]).
* **Gaps in the JSON.**  Every null says why (:func:`unexplained_nulls` finds
  those that do not): a table whose numbers are missing (a value object with
  ``value_J``, ``error_J``, ...; a fit's ``amplitude`` and ``window_J``)
  carries a ``reason`` field; any other null under a key ``K`` has a sibling
  ``K_reason`` beside it: a string (for every null under ``K``), or, where
  ``K`` holds a list or a table, a list or table of the same shape with a
  reason at each null.  The keys of the values stay what they are; a null
  inside a reason (``reason``, ``reasons``, ``K_reason``) means there is
  nothing to explain there.
"""

from __future__ import annotations

import math

#: an error this large against its value or larger: the value is not resolved
UNRESOLVED_FRACTION = 0.5

#: the reason a value with an error of half of it or more is not resolved (the remedy is the caller's)
LARGE_ERROR = "its error is half its value or more"


def _finite(x) -> bool:
    try:
        return x is not None and math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def sig(value, digits: int = 4) -> str:
    """``value`` to ``digits`` significant digits, trailing zeros kept (``7.70``; ``'-'`` where it is not a finite
    number)."""
    if not _finite(value):
        return "-"
    return f"{float(value):#.{digits}g}".rstrip(".").replace(".e", "e")


def _decimals(error: float, digits: int) -> int:
    """The decimal place of an error's last significant digit (negative: left of the point)."""
    return digits - 1 - math.floor(math.log10(abs(error)))


def pm(value, error, digits: int = 2, sep: str = " +- ") -> str:
    """``value +- error`` to the error's ``digits`` significant digits (the value rounded at the same place); values
    under 1e-3 or from 1e5 on as ``(m +- e)e+XX``; without a finite, non-zero error, the value to 4 digits."""
    if not _finite(value):
        return "-"
    v = float(value)
    if not _finite(error) or float(error) == 0:
        return sig(v)
    e = abs(float(error))
    scale = max(abs(v), e)
    if scale < 1e-3 or scale >= 1e5:
        exp = math.floor(math.log10(scale))
        m, me = v / 10 ** exp, e / 10 ** exp
        d = _decimals(me, digits)
        d = max(0, d - 1 if round(me, d) >= 10 ** (digits - d) else d)
        return f"({m:.{d}f}{sep}{me:.{d}f})e{exp:+03d}"
    d = _decimals(e, digits)
    if round(e, d) >= 10 ** (digits - d):  # 0.0998 rounds to 0.100: one digit fewer
        d -= 1
    if d >= 0:
        return f"{v:.{d}f}{sep}{e:.{d}f}"
    q = 10 ** (-d)
    return f"{round(v / q) * q:.0f}{sep}{round(e / q) * q:.0f}"


def resolution_reason(value, error, remedy: str | None = None, unit: str = "") -> str | None:
    """Why a value with this error is not a result: an error of half the value or more (None where it is one, or where
    the value is not there: its reason is the caller's); ``remedy``: what would resolve it (e.g. 'more
    trajectories'), added to the reason; ``unit``: the unit the value is quoted in."""
    tail = f"; {remedy}" if remedy else ""
    if not _finite(value):
        return None
    if _finite(error) and abs(float(error)) >= UNRESOLVED_FRACTION * abs(float(value)):
        return f"{LARGE_ERROR} ({pm(value, error)}{' ' + unit if unit else ''}){tail}"
    return None


def not_resolved(reason: str | None = None) -> str:
    """The text of a number that is not a result: ``not resolved (reason)``."""
    if not reason:
        return "not resolved"
    reason = reason.removeprefix("not resolved: ").removeprefix("not resolved ")
    return f"not resolved ({reason})"


def shown(value, error, reason: str | None = None, remedy: str | None = None, digits: int = 2,
          sep: str = " +- ", unit: str = "") -> str:
    """A value as what it is: ``value +- error unit`` (:func:`pm`), or ``not resolved (reason)`` where it is not there
    (``reason``: why) or its error is half of it or more (:func:`resolution_reason`, with ``remedy``)."""
    why = resolution_reason(value, error, remedy)
    if not _finite(value) or why:
        return not_resolved(why or reason)
    return pm(value, error, digits, sep) + (f" {unit}" if unit else "")


def bound_flag(value, error, bound, what: str, above: bool = True, unit: str = "") -> str | None:
    """'above <what> = <bound> <unit>' (``above``; else 'below') where ``value`` passes ``bound`` by more than its
    error (``error``: None or nan counts as 0), None where it does not or a number is missing."""
    if not _finite(value) or not _finite(bound):
        return None
    v, b = float(value), float(bound)
    # the error, and the rounding of the arithmetic (an exact 1 computed as 1 + 2e-16 passes no bound)
    e = (abs(float(error)) if _finite(error) else 0.0) + 1e-9 * max(abs(v), abs(b))
    u = f" {unit}" if unit else ""
    if above and v - e > b:
        return f"above {what} = {sig(b, 3)}{u}"
    if not above and v + e < b:
        return f"below {what} = {sig(b, 3)}{u}"
    return None


def probability_flag(value, error, what: str = "a probability") -> str | None:
    """A flag where a probability lies outside [0, 1] by more than its error (None where it does not)."""
    if bound_flag(value, error, 1.0, "1"):
        return f"above 1 ({what})"
    if bound_flag(value, error, 0.0, "0", above=False):
        return f"below 0 ({what})"
    return None


#: a weighted fit whose reduced chi^2 passes this does not describe its curve within the curve's errors
CHI2_RED_FLAG = 3.0


def fit_flag(chi2_red, weighted: bool = True) -> str | None:
    """A flag where a weighted fit's reduced chi^2 passes :data:`CHI2_RED_FLAG`: the model (one exponential) does not
    describe the curve within its errors, so the fitted time summarises a curve that is not that model."""
    if not weighted or not _finite(chi2_red) or float(chi2_red) <= CHI2_RED_FLAG:
        return None
    return (f"poor fit: chi2_red = {sig(chi2_red, 3)} > {CHI2_RED_FLAG:g} (the exponential does not describe the curve "
            "within its errors; the time is a summary of a curve that is not one exponential)")


def t2_flags(t2, t2_err, t1, t1_err=None, t2_limit=None, limit_what: str = "the hardware's T2 limit",
             unit: str = "us") -> list[str]:
    """The bounds a T2 passes by more than its error: 2 T1 (T1's error added to T2's) and ``t2_limit`` (the
    single transmon's T2 = 1/(1/(2 T1q) + 1/Tphi)), all in ``unit``."""
    flags = []
    if _finite(t1):
        e = math.hypot(float(t2_err) if _finite(t2_err) else 0.0, 2 * float(t1_err) if _finite(t1_err) else 0.0)
        flag = bound_flag(t2, e, 2 * float(t1), "2 T1", unit=unit)
        if flag:
            flags.append(flag)
    flag = bound_flag(t2, t2_err, t2_limit, limit_what, unit=unit) if t2_limit is not None else None
    if flag:
        flags.append(flag)
    return flags


def with_parameter_reasons(params: dict) -> dict:
    """A table of parameters with a ``<key>_reason`` beside each null that has none (an infinite T1q or Tphi: that
    decay is off; anything else: not set for this run)."""
    out = dict(params)
    for key, value in params.items():
        if value is None and f"{key}_reason" not in out:
            out[f"{key}_reason"] = (f"infinite: no {key.removesuffix('_J')} decay (ideal conditions or switched off)"
                                    if key in ("T1q_J", "Tphi_J") else "not set for this run")
    return out


def _walk(value, reason, path: str) -> list[str]:
    """The paths of the nulls in ``value`` that neither ``reason`` (a string, or a list/table of the same shape) nor
    the reasons inside ``value`` explain."""
    if isinstance(reason, str) and reason.strip():
        return []
    if value is None:
        return [path or "."]
    if isinstance(value, list):
        out = []
        for i, v in enumerate(value):
            out += _walk(v, reason[i] if isinstance(reason, list) and i < len(reason) else None, f"{path}[{i}]")
        return out
    if not isinstance(value, dict):
        return []
    if isinstance(value.get("reason"), str) and value["reason"].strip():
        return []
    out = []
    for k, v in value.items():
        if k in ("reason", "reasons") or k.endswith("_reason"):  # reasons (a null there: nothing to explain)
            continue
        r = reason.get(k) if isinstance(reason, dict) else None
        if not (isinstance(r, str) and r.strip()) and f"{k}_reason" in value:
            r = value[f"{k}_reason"]
        out += _walk(v, r, f"{path}.{k}")
    return out


def unexplained_nulls(obj) -> list[str]:
    """The paths (``.key[i].key``) of the nulls in a JSON object that carry no reason (the module's convention,
    above); [] when every gap says why."""
    return _walk(obj, None, "")
