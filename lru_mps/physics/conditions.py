"""The last-site reset and the hardware conditions of an ensemble (docs/physics.md §4, §5).

:class:`Reset`: the mechanism at site L and its rate G (units of J).
:class:`Conditions`: hardware decay sqrt(1/T1_l) a_l and dephasing
sqrt(2/Tphi_l) n_l on every site l, and the temperature of the thermal
initial state.  T1 and Tphi are one value for every site (a float; the
paper, the command line) or one per site (a tuple of L floats: a device
file's, :mod:`lru_mps.physics.device`); times in 1/J, ``inf`` = none.
A tuple whose values are all equal is stored as that one float, so a
device with one T1 everywhere is the same spec as ``--t1``.  Code that needs
one number must say which: :meth:`Conditions.t1_sites` / :meth:`tphi_sites`
per site, :attr:`Conditions.longest_T1` for a bound on every decay.

Import both from here; :class:`lru_mps.physics.model.ArraySpec` holds one of each.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..defaults import MODEL, REALISTIC
from ..errors import require
from .units import parse_frequency_hz, to_kelvin, to_rate, to_time

RESET_KINDS = ("periodic", "random", "dissipation", "none")

_DEFAULT_RATE = to_rate(MODEL["rate"], "rate", parse_frequency_hz(MODEL["hopping"], "hopping"))


@dataclass(frozen=True)
class Reset:
    """Last-site reset: ``kind`` in periodic|random|dissipation|none, ``rate`` G in J."""

    kind: str = MODEL["reset"]
    rate: float = _DEFAULT_RATE

    def measurements(self, t_final: float) -> float:
        """Expected feedback measurements of one trajectory in [0, t_final] (1/J): G t_final for the periodic and
        random feedback, none for dissipation or no reset (each one a stop of the trajectory loop)."""
        return self.rate * t_final if self.kind in ("periodic", "random") else 0.0

    def __post_init__(self):
        require(self.kind in RESET_KINDS, "reset", self.kind, f"one of {', '.join(RESET_KINDS)}")
        if self.kind != "none":
            require(
                math.isfinite(self.rate) and self.rate > 0,
                "rate",
                self.rate,
                f"a finite rate > 0 (in units of J) for the {self.kind} reset",
            )


@dataclass(frozen=True)
class Conditions:
    """Hardware noise on every site and temperature of the initial state.

    ``T1q`` and ``Tphi`` in 1/J (``inf`` = none): decay sqrt(1/T1q) a_l and
    dephasing sqrt(2/Tphi) n_l; one float for every site, or a tuple with
    one value per site (module docstring).  ``temperature_K`` sets the
    thermal product state of sites 2..L.
    """

    T1q: float | tuple = math.inf
    Tphi: float | tuple = math.inf
    temperature_K: float = 0.0

    def __post_init__(self):
        for field_name, key, what in (("T1q", "t1", "decay"), ("Tphi", "tphi", "dephasing")):
            value = getattr(self, field_name)
            if isinstance(value, (tuple, list, np.ndarray)):
                per_site = tuple(float(x) for x in value)
                require(len(per_site) >= 1 and all(x > 0 for x in per_site), key, value,
                        f"times > 0 (or inf for no {what}), one per site")
                object.__setattr__(self, field_name, per_site[0] if len(set(per_site)) == 1 else per_site)
            else:
                require(value > 0, key, value, f"a time > 0 (or inf for no {what})")
        require(
            math.isfinite(self.temperature_K) and self.temperature_K >= 0,
            "temperature",
            self.temperature_K,
            "a temperature >= 0 K",
        )

    @property
    def ideal(self) -> bool:
        """No hardware noise and zero temperature."""
        return bool(np.all(np.isinf(self.T1q)) and np.all(np.isinf(self.Tphi))) and self.temperature_K == 0.0

    @property
    def per_site(self) -> bool:
        """Whether T1 or Tphi differs between sites (a device file's)."""
        return isinstance(self.T1q, tuple) or isinstance(self.Tphi, tuple)

    @property
    def dephasing_per_site(self) -> bool:
        """Whether Tphi differs between sites: then 'auto' does not pick the branch estimator (its dephasing
        clock runs at site 1's rate; docs/physics.md §3.2)."""
        return isinstance(self.Tphi, tuple)

    def t1_sites(self, L: int) -> np.ndarray:
        """T1 of sites 1..L (1/J), shape (L,)."""
        return _sites(self.T1q, L, "t1")

    def tphi_sites(self, L: int) -> np.ndarray:
        """Tphi of sites 1..L (1/J), shape (L,)."""
        return _sites(self.Tphi, L, "tphi")

    @property
    def longest_T1(self) -> float:
        """The longest T1 of any site (1/J): every ``|2>`` decays at 2/T1_l >= 2/longest_T1, so T1/2 of it bounds a
        leakage tail (the scalar T1q when it is the same everywhere)."""
        return float(max(self.T1q)) if isinstance(self.T1q, tuple) else self.T1q

    @property
    def T2q(self) -> float:
        """The bare T2 of one transmon, 1 / (1/(2 T1q) + 1/Tphi) (1/J), with site 1's T1q and Tphi where they
        differ between sites (:func:`bare_T2`)."""
        return bare_T2(float(self.t1_sites(1)[0]), float(self.tphi_sites(1)[0]))

    def describe(self) -> str:
        """T1q=..., Tphi=..., temperature=... K in units of 1/J (one value, or one per site)."""
        def txt(v):
            return "(" + ", ".join(f"{x:g}" for x in v) + ")" if isinstance(v, tuple) else f"{v:g}"
        return f"T1q={txt(self.T1q)}, Tphi={txt(self.Tphi)}, temperature={self.temperature_K:g} K"


def bare_T2(T1q: float, Tphi: float) -> float:
    """A bare transmon's T2 = 1 / (1/(2 T1q) + 1/Tphi) (the unit of T1q and Tphi; inf without either)."""
    rate = (0.5 / T1q if math.isfinite(T1q) else 0.0) + (1.0 / Tphi if math.isfinite(Tphi) else 0.0)
    return 1.0 / rate if rate > 0 else math.inf


def _sites(value, L: int, key: str) -> np.ndarray:
    if isinstance(value, tuple):
        require(len(value) == L, key, value, f"one time per site, L = {L} of them")
        return np.array(value, dtype=float)
    return np.full(L, float(value))


def resolve(conditions: str, t1, tphi, temperature, J_hz: float, given: dict | None = None) -> Conditions:
    """The hardware of a spec from what a user typed (J/2pi = ``J_hz`` in Hz sets the units of times).

    ``conditions`` 'ideal' (no noise, 0 K) or 'realistic' (:data:`lru_mps.defaults.REALISTIC`) gives the base;
    ``given`` (a device file's ``{"T1q", "Tphi", "temperature_K"}`` in 1/J and K, None where the file has
    none) replaces it; ``t1``, ``tphi``, ``temperature`` (with units) override both.
    """
    require(conditions in ("ideal", "realistic"), "conditions", conditions, "ideal or realistic")
    if conditions == "realistic":
        T1q = to_time(REALISTIC["t1"], "t1", J_hz)
        Tphi = to_time(REALISTIC["tphi"], "tphi", J_hz)
        temp = to_kelvin(REALISTIC["temperature"], "temperature")
    else:
        T1q, Tphi, temp = math.inf, math.inf, 0.0
    given = given or {}
    T1q = given["T1q"] if given.get("T1q") is not None else T1q
    Tphi = given["Tphi"] if given.get("Tphi") is not None else Tphi
    temp = given["temperature_K"] if given.get("temperature_K") is not None else temp
    if t1 is not None:
        T1q = to_time(t1, "t1", J_hz)
    if tphi is not None:
        Tphi = to_time(tphi, "tphi", J_hz)
    if temperature is not None:
        temp = to_kelvin(temperature, "temperature")
    return Conditions(T1q, Tphi, temp)
