"""The physical domain of every hardware quantity a user types: one set of rules, read by the device file
(:mod:`lru_mps.physics.device`) and by ``ArraySpec.from_user`` and ``from_device``
(:mod:`lru_mps.physics.spec_input`), hence by the command line, the studies and the Python API alike.

A hardware quantity needs its unit, on the command line as in a device file; a bare number is refused with the
reading it would have had (a multiple of J, or of 1/J) and the unit to use:

=======================  =====================  ==========================  ============================
quantity                 unit                   refused                     a warning (the edge)
=======================  =====================  ==========================  ============================
frequency wbar/2pi       Hz..GHz (or ``xJ``)    outside 1-20 GHz            --
anharmonicity Ubar/2pi   Hz..GHz (or ``xJ``)    outside 50-500 MHz          --
Ubar against J           (J/2pi in Hz)          Ubar < 10 J                 Ubar < 20 J
T1, Tphi                 s..ns (or ``x/J``)     under 100 ns                under 1 us
temperature              K, mK, uK (0 alone)    1 K or more                 above 300 mK
=======================  =====================  ==========================  ============================

``0`` needs no unit (it is 0 in any unit), and ``inf`` none either (no decay).  Written out, a multiple of J
(``'1500J'``) or of 1/J (``'500/J'``) stays allowed, and is checked in physical units like any other value.  The
model's own multiples of J keep their bare numbers: the rate G, the disorder width W, the spreads and the run's
times (``t_final``, ``dt``) are in units of J or 1/J by definition (:mod:`lru_mps.physics.units`).

Why these bounds (docs/physics.md §2):

* *Frequencies and anharmonicities*: what a transmon has (w/2pi in 1-20 GHz; U/2pi in 50-500 MHz, positive: the
  |1>-|2> transition lies U below the |0>-|1> one).  A bare ``7.5`` would be 7.5 J = 37.5 MHz at J/2pi = 5 MHz.
* *Ubar against J*: the leakage level |2_l> is resonant along the array (E2_l = -Ubar on every site) and moves
  only through the virtual states |1_l 1_(l+1)>, detuned by about U_l and coupled by sqrt(2) J: the stack's
  hopping J_prop = 2 J^2/Ubar is second order in J/Ubar, with relative corrections of order (J/Ubar)^2 (the
  exact two-site transfer lies within 1.7 (J/Ubar)^2 of the second-order one, docs/physics.md §3.1), and |2_l>
  carries an admixture 2 (J/Ubar)^2 of |1 1> per bond.  Below Ubar = 10 J (50 MHz against the paper's 5 MHz, the device file's lowest anharmonicity at the
  paper's J) the admixture passes 2 % per bond and "leakage" and "qubit" no longer name the array's states;
  below 20 J (the hopping sweep reaches 25 J) the corrections pass 0.4 %: a warning.
* *T1, Tphi*: under 100 ns (pi/J at J/2pi = 5 MHz: an excitation's hop to its neighbour and back) a transmon
  decays before the array acts on its excitation, and no transmon the model describes has one; under 1 us it is
  possible but odd.
* *Temperature*: aluminium stops superconducting near 1.2 K, so 1 K or more is refused; above 300 mK the qutrit
  leaves out more than 2 % of a 7.5 GHz transmon's Gibbs weight (its |3> level) and thermal quasiparticles
  shorten T1 beyond the figures given: a warning.

The refusals are :class:`~lru_mps.errors.ParameterError` naming the option (or ``device.KEY``); the edges are
:class:`~lru_mps.errors.ParameterWarning` lines (:func:`edge_warnings`, :func:`warn`), which a summary repeats
(:func:`recorded` collects them for a study).
"""

from __future__ import annotations

import contextlib
import math
import warnings
from dataclasses import dataclass

from ..errors import ParameterError, ParameterWarning
from .units import _split, time_to_us, to_energy, to_kelvin, to_time


@dataclass(frozen=True)
class Range:
    """A closed range [low, high] of a quantity in SI units, shown in ``unit`` (``scale`` SI units each)."""

    low: float
    high: float
    unit: str
    scale: float

    def __contains__(self, x: float) -> bool:
        return self.low <= x <= self.high

    def text(self) -> str:
        return f"{self.low / self.scale:g}-{self.high / self.scale:g} {self.unit}"

    def show(self, x: float) -> str:
        return f"{x / self.scale:.6g} {self.unit}"


#: a transmon's frequency w/2pi and anharmonicity U/2pi, Hz
FREQUENCY = Range(1e9, 20e9, "GHz", 1e9)
ANHARMONICITY = Range(50e6, 500e6, "MHz", 1e6)
#: T1 and Tphi in us: refused below the first, a warning below the second
COHERENCE_US = (0.1, 1.0)
#: the temperature in K: a warning above the first, refused from the second on
TEMPERATURE_K = (0.3, 1.0)
#: Ubar in units of J: refused below the first, a warning below the second
UBAR_J = (10.0, 20.0)

#: the kind of each hardware quantity a user types, by the name of its option (a device file's key: ``KINDS``
#: of :mod:`lru_mps.physics.device`)
KINDS = {"frequency": "frequency", "anharmonicity": "anharmonicity", "t1": "time", "tphi": "time",
         "temperature": "temperature", "anharmonicities": "anharmonicity", "temperatures": "temperature"}


def bare_number(value) -> float | None:
    """The number of a value given without a unit (a number, or a text like '7520'), else None: a value with a
    unit, 0, inf, or one that does not parse (its own error says why)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        try:
            number, unit = _split(value, "", "")
        except ParameterError:
            return None
        if unit:
            return None
    else:
        return None
    return None if math.isinf(number) or math.isnan(number) or number == 0 else number


def example(kind: str, x: float, multiple_of_j: bool = False) -> str:
    """How to write the bare number ``x`` of a quantity of ``kind`` with its unit: 'frequency' (w/2pi),
    'anharmonicity', 'coupling' (``multiple_of_j``: a multiple of a given hopping is allowed too) or 'time'."""
    if kind == "frequency":
        return f"'{x:g}MHz' or '{x / 1e3:g}GHz'" if abs(x) >= 100 else f"'{x:g}GHz' or '{x * 1e3:g}MHz'"
    if kind == "anharmonicity":
        return f"'{x:g}MHz'" if abs(x) >= 1 else f"'{x:g}GHz' or '{x * 1e3:g}MHz'"
    if kind == "coupling":
        return f"'{x:g}MHz', or '{x:g}J' for a multiple of the hopping" if multiple_of_j else f"'{x:g}MHz'"
    return f"'{x:g}us' or '{x:g}/J'"


def require_unit(value, name: str, J_hz: float) -> None:
    """Refuse a bare number for the hardware quantity ``name`` (:data:`KINDS`), saying what it would have been
    read as at J/2pi = ``J_hz`` and how to write it with its unit (0 and inf need none)."""
    kind = KINDS[name]
    x = bare_number(value)
    if x is None:
        return
    if kind == "temperature":
        raise ParameterError(name, value, f"a temperature with a unit: '{x:g}mK' or '{x:g}K' (0 alone needs none)")
    if kind == "time":
        raise ParameterError(name, value, f"a time with a unit, e.g. {example('time', x)} for a multiple of 1/J",
                             f"a bare number would be read as {x:g}/J = {time_to_us(x, J_hz):.3g} us at "
                             f"J/2pi = {J_hz / 1e6:g} MHz")
    raise ParameterError(name, value, f"a frequency with a unit, e.g. {example(kind, x)}, or '{x:g}J' for a "
                                      f"multiple of J",
                         f"a bare number would be read as {x:g} J = {_hz(x * J_hz)} at J/2pi = {J_hz / 1e6:g} MHz")


def frequency(value, name: str, J_hz: float) -> float:
    """The mean frequency wbar in units of J from ``value`` with its unit, in a transmon's range."""
    require_unit(value, name, J_hz)
    w = to_energy(value, name, J_hz)
    if not (math.isfinite(w) and w * J_hz in FREQUENCY):
        raise ParameterError(name, w, f"a transmon frequency w/2pi in {FREQUENCY.text()} "
                                      f"({_reading(value, w, J_hz)}), e.g. '7.5GHz'")
    return w


def anharmonicity(value, name: str, J_hz: float) -> float:
    """The mean anharmonicity Ubar in units of J from ``value`` with its unit, in a transmon's range."""
    require_unit(value, name, J_hz)
    U = to_energy(value, name, J_hz)
    if not (math.isfinite(U) and U * J_hz in ANHARMONICITY):
        raise ParameterError(name, U, f"a transmon anharmonicity U/2pi in {ANHARMONICITY.text()}, positive "
                                      f"({_reading(value, U, J_hz)}), e.g. '250MHz'")
    return U


def coherence_time(value, name: str, J_hz: float) -> float:
    """T1 or Tphi (``name`` t1 or tphi) in units of 1/J from ``value`` with its unit (inf: none), at least
    100 ns."""
    require_unit(value, name, J_hz)
    t = to_time(value, name, J_hz)
    floor = COHERENCE_US[0]
    if not t > 0:
        raise ParameterError(name, t, "a time > 0 with a unit (inf: none), e.g. '16.7us'")
    if below(time_to_us(t, J_hz), floor):
        raise ParameterError(name, t, f"a transmon {_TIME_NAMES[name]} of at least {floor * 1e3:g} ns (here "
                                      f"{time_to_us(t, J_hz) * 1e3:.3g} ns): shorter, a transmon decays before "
                                      "the array acts on its excitation, e.g. '16.7us'")
    return t


def temperature(value, name: str = "temperature") -> float:
    """A temperature in K from ``value`` with its unit (0 needs none), under 1 K."""
    require_unit(value, name if name in KINDS else "temperature", 0.0)
    T = to_kelvin(value, name)
    require_temperature_K(T, name)
    return T


def require_temperature_K(T: float, name: str, value=None) -> None:
    """Refuse a temperature ``T`` (K) outside [0, 1 K), naming ``name`` with ``value`` (default: T in K)."""
    top = TEMPERATURE_K[1]
    value = T if value is None else value
    if not (math.isfinite(T) and T >= 0):
        raise ParameterError(name, value, "a temperature >= 0 K with a unit, e.g. '100mK'")
    if T >= top:
        raise ParameterError(name, value, f"a chip's temperature under {top:g} K, e.g. '100mK' (aluminium stops "
                                          "superconducting near 1.2 K)")


def listed(value, name: str, one) -> list:
    """A list option (a list, or a text separated by commas, e.g. '0,100mK'), each item through ``one(item)``
    (e.g. :func:`temperature`); an error names ``name`` with the whole list and the item."""
    items = value if isinstance(value, (list, tuple)) else [v.strip() for v in str(value).split(",") if v.strip()]
    out = []
    for item in items:
        try:
            out.append(one(item))
        except ParameterError as err:
            raise ParameterError(name, value, f"item {item!r}: {err.allowed}", err.hint) from None
    return out


def temperatures(value, name: str = "temperatures") -> list[float]:
    """A list of temperatures in K, each as :func:`temperature` (under 1 K, with its unit; 0 needs none)."""
    return listed(value, name, lambda item: temperature(item, name))


def require_ubar(Ubar: float, name: str, value, J_hz: float) -> None:
    """Refuse a mean anharmonicity Ubar (units of J) that is not large against J (module docstring);
    ``name``/``value``: the option to name (the anharmonicity, or the hopping that made it small) as typed."""
    low = UBAR_J[0]
    if not Ubar >= low:
        raise ParameterError(name, value, f"a mean anharmonicity large against J, Ubar >= {low:g} J (here "
                                          f"Ubar/2pi = {_hz(Ubar * J_hz)} = {Ubar:.3g} J at J/2pi = {_hz(J_hz)}): "
                                          "the leakage stack moves at J_prop = 2 J^2/Ubar, second order in J/Ubar, "
                                          "which the model's resonance recipe needs small")


def edge_warnings(spec) -> list[str]:
    """One line per quantity of ``spec`` (an ArraySpec) at the edge of its domain (module docstring), each naming
    the option (``device.KEY`` where the value is a device file's): Ubar under 20 J, a T1 or Tphi under 1 us, a
    temperature above 300 mK.  Empty inside the domain."""
    out = []
    J_MHz = spec.J_hz / 1e6
    if spec.Ubar < UBAR_J[1]:
        name = "device.anharmonicities" if spec.device is not None else "hopping and anharmonicity"
        out.append(f"{name}: Ubar = {spec.Ubar:.3g} J (Ubar/2pi = {_hz(spec.Ubar * spec.J_hz)} at J/2pi = "
                   f"{J_MHz:g} MHz), under {UBAR_J[1]:g} J: the stack's hopping 2 J^2/Ubar is off by about "
                   f"(J/Ubar)^2 = {1 / spec.Ubar ** 2:.2g} (is the hopping right?)")
    c = spec.conditions
    for key, sites in (("t1", c.t1_sites(spec.L)), ("tphi", c.tphi_sites(spec.L))):
        us = [time_to_us(float(t), spec.J_hz) for t in sites]
        short = [(i, u) for i, u in enumerate(us) if below(u, COHERENCE_US[1])]
        if not short:
            continue
        dev = spec.device
        mine = getattr(dev, {"t1": "T1", "tphi": "Tphi"}[key], None) if dev is not None else None
        given = getattr(c, {"t1": "T1q", "tphi": "Tphi"}[key])
        name = f"device.{key}" if mine is not None and mine == given else key
        if len(set(us)) == 1:
            where = "every site"
        else:
            where = ("site " if len(short) == 1 else "sites ") + ", ".join(str(i + 1) for i, _ in short)
        values = ", ".join(f"{u:.3g}" for u in dict.fromkeys(u for _, u in short))
        out.append(f"{name}: {_TIME_NAMES[key]} = {values} us on {where}, under {COHERENCE_US[1]:g} us: short for "
                   f"a transmon (is the unit right?)")
    T = c.temperature_K
    if T > TEMPERATURE_K[0]:
        name = "device.temperature" if spec.device is not None and spec.device.temperature_K == T else "temperature"
        out.append(f"{name}: {T * 1e3:.4g} mK, above {TEMPERATURE_K[0] * 1e3:g} mK: the qutrit leaves out the |3> "
                   "level's share of the Gibbs state (2 % at 7.5 GHz and 300 mK) and thermal quasiparticles shorten "
                   "T1 beyond the figures given")
    return out


def warn(spec) -> None:
    """Each of :func:`edge_warnings` as a :class:`~lru_mps.errors.ParameterWarning` (the CLI prints one line
    ``Warning: ...`` each)."""
    for text in edge_warnings(spec):
        warnings.warn(text, ParameterWarning, stacklevel=3)


@contextlib.contextmanager
def recorded():
    """Collect the :class:`~lru_mps.errors.ParameterWarning` texts raised inside (each once, in order), while still
    showing each once as usual: ``with recorded() as notes: ...`` (a study's summary repeats them)."""
    notes: list[str] = []
    with warnings.catch_warnings():
        show = warnings.showwarning
        warnings.simplefilter("always", ParameterWarning)

        def tee(message, category, filename, lineno, file=None, line=None):
            if issubclass(category, ParameterWarning):
                if str(message) in notes:
                    return
                notes.append(str(message))
            show(message, category, filename, lineno, file, line)

        warnings.showwarning = tee
        yield notes


_TIME_NAMES = {"t1": "T1", "tphi": "Tphi"}


def below(x: float, bound: float) -> bool:
    """x < bound beyond rounding (a time typed as '1us' comes back from 1/J as 0.9999999999999999 us)."""
    return x < bound * (1.0 - 1e-9)


def _hz(hz: float) -> str:
    """A frequency f in Hz as the user reads it (kHz, MHz or GHz)."""
    for unit, scale in (("GHz", 1e9), ("MHz", 1e6), ("kHz", 1e3)):
        if abs(hz) >= scale:
            return f"{hz / scale:.4g} {unit}"
    return f"{hz:.4g} Hz"


def _reading(value, x_J: float, J_hz: float) -> str:
    """'7.5J = 37.5 MHz' (a value typed in units of J and its frequency) or 'here 40 GHz'."""
    if not math.isfinite(x_J):
        return f"here {value}"
    typed = str(value).strip()
    return f"{typed} = {_hz(x_J * J_hz)}" if typed.endswith(("J", "j")) else f"here {_hz(x_J * J_hz)}"
