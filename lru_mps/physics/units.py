"""Quantities a physicist types, converted to the internal units of J.

Internally lru-mps measures energies and rates in units of the hopping J
(hbar = 1), times in units of 1/J and temperatures in kelvin.  At the edges a
user may type:

==============  ==========================================  =================
kind            accepted                                    bare number means
==============  ==========================================  =================
frequency       ``Hz kHz MHz GHz`` (f = omega / 2 pi), ``J``  multiples of J
                (``Jprop`` where the anharmonicity is known)
rate            as frequency (Gamma / 2 pi), ``/s /ms /us /ns``  multiples of J
                (a plain rate 1/tau), ``J``
time            ``s ms us ns ps``, ``/J`` (e.g. ``200/J``)    multiples of 1/J
temperature     ``K mK uK``                                 (0 only)
==============  ==========================================  =================

``inf`` is accepted for times (e.g. no hardware decay: ``--t1 inf``).
With J/2pi = 5 MHz, 1/J = 1 / (2 pi 5 MHz) = 31.83 ns.

``Jprop`` (also ``J_prop``, ``*Jprop``, ``xJprop``) is the leakage stack's
hopping J_prop = 2 J^2/Ubar (docs/physics.md §8), i.e. 2/Ubar in units of J
with Ubar in units of J: '2Jprop' = 0.08 J at Ubar = 50 J.  It is accepted
by :func:`to_energy` and :func:`to_rate` when the caller passes ``Ubar``
(the parameters that take it: ``e2_spread`` and ``frequency_noise``).

A dimensionless fraction (``hopping_spread``, :func:`to_fraction`) is a bare
number or a percentage: ``0.05`` = ``5%``.

These are the conversions.  Where a user types a hardware quantity (the
frequency, the anharmonicity, T1, Tphi, the temperature) the bare number is
refused instead, and the value is held to a transmon's domain:
:mod:`lru_mps.physics.domains`.
"""

from __future__ import annotations

import math
import re

from ..errors import ParameterError

_NUMBER = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?inf"
_PATTERN = re.compile(rf"^\s*({_NUMBER})\s*(.*?)\s*$", re.IGNORECASE)

# Unit symbols are case-sensitive: 'mHz' is not 'MHz', 'Ms' is not 'ms'.
_FREQ = {"Hz": 1.0, "kHz": 1e3, "MHz": 1e6, "GHz": 1e9}
_TIME = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ns": 1e-9, "ps": 1e-12}
_TEMP = {"K": 1.0, "mK": 1e-3, "uK": 1e-6, "µK": 1e-6}
_J_WORDS = {"J", "*J", "xJ", "j"}
_PER_J = {"/J", "1/J", "J^-1", "J**-1", "/j", "1/j"}
_JPROP_WORDS = {"Jprop", "J_prop", "*Jprop", "xJprop", "*J_prop"}


def _split(value, name: str, example: str) -> tuple[float, str]:
    if isinstance(value, bool):
        raise ParameterError(name, value, f"a number with a unit, e.g. {example!r}")
    if isinstance(value, (int, float)):
        return float(value), ""
    match = _PATTERN.match(str(value))
    if not match:
        raise ParameterError(name, value, f"a number with a unit, e.g. {example!r}")
    return float(match.group(1)), match.group(2).replace(" ", "")


def parse_frequency_hz(value, name: str = "frequency") -> float:
    """A frequency f = omega/2pi with an explicit unit, in Hz (used for J itself)."""
    number, unit = _split(value, name, "5MHz")
    key = unit
    if key not in _FREQ:
        raise ParameterError(name, value, "a frequency with a unit Hz, kHz, MHz or GHz, e.g. '5MHz'")
    return number * _FREQ[key]


def _in_J(number: float, unit: str, J_hz: float, value=None, name: str = "", Ubar: float | None = None) -> float | None:
    """A bare number or a multiple of J as it is; a frequency f = omega/2pi (Hz..GHz) over J/2pi;
    a multiple of J_prop = 2 J^2/Ubar (= 2/Ubar in J) where ``Ubar`` (in J) is given; else None."""
    if unit == "" or unit in _J_WORDS:
        return number
    if unit in _FREQ:
        return number * _FREQ[unit] / J_hz
    if unit in _JPROP_WORDS:
        if Ubar is None:
            raise ParameterError(name, value, "a frequency or a multiple of J ('Jprop' is not accepted here)")
        return number * 2.0 / Ubar
    return None


def j_prop(Ubar: float) -> float:
    """The stack hopping J_prop = 2 J^2/Ubar in units of J (Ubar in units of J)."""
    return 2.0 / Ubar


def to_energy(value, name: str, J_hz: float, Ubar: float | None = None) -> float:
    """An energy/frequency in units of J: '250MHz' (omega/2pi), '50J' or a bare 50.

    With ``Ubar`` (units of J), also a multiple of J_prop = 2 J^2/Ubar: '2Jprop'.
    """
    number, unit = _split(value, name, "250MHz")
    x = _in_J(number, unit, J_hz, value, name, Ubar)
    if x is None:
        also = " or of J_prop = 2 J^2/Ubar like '2Jprop'" if Ubar is not None else ""
        raise ParameterError(
            name, value, f"a frequency in Hz/kHz/MHz/GHz (f = omega/2pi) or a multiple of J like '50J'{also}"
        )
    return x


def to_rate(value, name: str, J_hz: float, Ubar: float | None = None) -> float:
    """A rate in units of J: '0.03J', a bare 0.03, '0.15MHz' (Gamma/2pi) or '1/us' (1/tau).

    With ``Ubar`` (units of J), also a multiple of J_prop = 2 J^2/Ubar: '2Jprop'.
    """
    number, unit = _split(value, name, "0.03J")
    x = _in_J(number, unit, J_hz, value, name, Ubar)
    if x is not None:
        return x
    if unit.startswith("/") or unit.startswith("1/"):
        tkey = unit.split("/", 1)[1]
        if tkey in _TIME:
            return number / (_TIME[tkey] * 2.0 * math.pi * J_hz)
    raise ParameterError(
        name, value, "a rate as a multiple of J ('0.03J'), a frequency Gamma/2pi ('0.15MHz') or per time ('2/us')"
    )


def to_fraction(value, name: str, allowed: str = "a dimensionless fraction") -> float:
    """A dimensionless fraction: a bare number (0.05) or a percentage ('5%'); ``allowed`` heads the error."""
    what = f"{allowed}: a bare number like 0.05 or a percentage like '5%'"
    try:
        number, unit = _split(value, name, "5%")
    except ParameterError:
        raise ParameterError(name, value, what) from None
    if unit == "":
        return number
    if unit == "%":
        return number / 100.0
    raise ParameterError(name, value, what)


def to_time(value, name: str, J_hz: float) -> float:
    """A time in units of 1/J: '200/J', a bare 200, '16.7us', 'inf'."""
    number, unit = _split(value, name, "200/J")
    key = unit
    if key == "" or key in _PER_J:
        return number
    if key in _TIME:
        return number * _TIME[key] * 2.0 * math.pi * J_hz
    raise ParameterError(name, value, "a time in s/ms/us/ns or a multiple of 1/J like '200/J'")


def to_kelvin(value, name: str = "temperature") -> float:
    """A temperature in kelvin from '100mK', '0.1K' or 0."""
    number, unit = _split(value, name, "100mK")
    key = unit
    if key == "":
        if number == 0.0:
            return 0.0
        raise ParameterError(name, value, "a temperature with a unit K or mK, e.g. '100mK'")
    if key in _TEMP:
        return number * _TEMP[key]
    raise ParameterError(name, value, "a temperature with a unit K or mK, e.g. '100mK'")


def time_to_us(t_J: float, J_hz: float) -> float:
    """Convert a time in 1/J to microseconds."""
    return t_J / (2.0 * math.pi * J_hz) * 1e6


def rate_to_hz(rate_J: float, J_hz: float) -> float:
    """Convert a rate/energy in units of J to f = omega/2pi in Hz."""
    return rate_J * J_hz
