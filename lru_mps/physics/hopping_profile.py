"""Engineered hopping profiles: the nominal coupling J_l of every bond along the chain (docs/physics.md §3.3).

A profile fixes the shape of the couplings J_l of bonds (l, l+1), l = 1..L-1,
by design (the fabrication spread ``hopping_spread`` multiplies it bond by
bond, J_l = P_l (1 + eps_l)).  The mean coupling stays the unit J: every
profile is rescaled to mean(P_l) = 1, so ``--hopping 5MHz`` is the mean of
the chip's couplings and times stay in units of 1/J.

A leakage stack ``|2>`` hops by second order through ``|1 1>`` (docs/physics.md §2):
bond l carries J_prop,l = 2 J_l^2 / Ubar, and every site's energy is shifted
by -(2/Ubar) times the sum of J^2 over its bonds.  The profiles:

* ``uniform``: P_l = 1 (the paper; bit for bit the chain without a profile);
* ``linear:A:B``: a ramp from A (bond 1, at the qubit) to B (bond L-1, at the
  reset site), A, B > 0, rescaled to mean 1 (only the ratio B/A matters);
* ``transfer``: J_prop,l proportional to sqrt(l (L - l)), i.e.
  P_l proportional to (l (L - l))^(1/4): the perfect-state-transfer couplings
  of a clean chain (Christandl et al. 2004) for the stack, whose transit
  from site 1 to site L is then complete at t = pi / (2 J_prop,0) up to the
  second-order on-site shifts (which are not uniform and spoil it slightly);
* an explicit list of L - 1 positive numbers (relative values, rescaled to
  mean 1), e.g. ``"1.2,0.9,0.9"`` on the command line or a TOML list.

Canonical form (what a spec holds, JSON-friendly): the strings ``"uniform"``,
``"transfer"``, ``"linear:A:B"`` (A, B as typed, ``repr`` of floats), or a tuple of
floats.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..errors import ParameterError, require

#: the named profiles (an explicit list is the fourth form)
PROFILES = ("uniform", "linear", "transfer")
NAME = "hopping_profile"
ALLOWED = ("uniform, transfer, linear:A:B (a ramp from A at the qubit to B at the reset site, A, B > 0), or a "
           "list of L - 1 positive relative couplings (e.g. 1.2,0.9,0.9), rescaled to mean 1")


def _positive(x, value) -> float:
    try:
        f = float(x)
    except (TypeError, ValueError):
        raise ParameterError(NAME, value, ALLOWED) from None
    if isinstance(x, bool) or not (math.isfinite(f) and f > 0):
        raise ParameterError(NAME, value, ALLOWED)
    return f


def parse(value) -> str | tuple:
    """The canonical profile of a user's value (a name, ``linear:A:B``, a comma list, a list/tuple of numbers)."""
    if value is None:
        return "uniform"
    if isinstance(value, (list, tuple, np.ndarray)):
        require(len(value) >= 1, NAME, value, ALLOWED)
        return tuple(_positive(x, value) for x in value)
    if isinstance(value, numbers.Real):
        raise ParameterError(NAME, value, ALLOWED)
    text = str(value).strip()
    low = text.lower()
    if low in ("uniform", "transfer"):
        return low
    if low == "linear" or low.startswith("linear:"):
        parts = low.split(":")
        require(len(parts) == 3, NAME, value, ALLOWED, "a ramp needs its two end values, e.g. linear:0.6:1.4")
        a, b = (_positive(p, value) for p in parts[1:])
        return f"linear:{a!r}:{b!r}"
    if is_explicit_list(text):
        return tuple(_positive(p, value) for p in text.split(","))
    raise ParameterError(NAME, value, ALLOWED)


def is_explicit_list(text: str) -> bool:
    """Whether a profile's text is an explicit list of couplings (comma-separated numbers, or one number)."""
    if "," in text:
        return True
    try:
        float(text)
    except ValueError:
        return False
    return True


def is_uniform(profile) -> bool:
    return profile == "uniform"


def couplings(profile, L: int) -> np.ndarray | None:
    """The nominal couplings P_l of the L - 1 bonds, mean 1 (units of J); None for ``uniform`` (J_l = 1).

    An explicit list must have L - 1 entries (refused naming the profile and L otherwise).
    """
    profile = parse(profile)
    if profile == "uniform":
        return None
    bonds = L - 1
    if profile == "transfer":
        l = np.arange(1, L, dtype=float)
        p = (l * (L - l)) ** 0.25
    elif isinstance(profile, str):  # linear:A:B
        a, b = (float(x) for x in profile.split(":")[1:])
        p = np.array([a]) if bonds == 1 else np.linspace(a, b, bonds)
    else:
        require(len(profile) == bonds, NAME, list(profile), f"{bonds} relative couplings, one per bond of L = {L} "
                "sites (L - 1 of them)", "an explicit profile fits one length: use uniform, linear or transfer "
                "for a study over several lengths")
        p = np.asarray(profile, dtype=float)
    return p / p.mean()


def describe(profile) -> str:
    """A short label for tables and figures."""
    profile = parse(profile)
    if isinstance(profile, tuple):
        return "list:" + ",".join(f"{x:g}" for x in profile)
    if profile.startswith("linear:"):
        a, b = (float(x) for x in profile.split(":")[1:])
        return f"linear:{a:g}:{b:g}"
    return profile


def as_json(profile):
    """JSON value of a profile (a string, or a list of floats)."""
    profile = parse(profile)
    return list(profile) if isinstance(profile, tuple) else profile


def effective_stack_hamiltonian(J: np.ndarray, Ubar: float, dw2: np.ndarray | None = None) -> np.ndarray:
    """The one-particle Hamiltonian of a leakage stack on a chain, to second order in J_l / U (units of J).

    ``H_eff = sum_l E_l |l><l| - sum_l (2 J_l^2 / Ubar) (|l><l+1| + h.c.)``, ``E_l = dw2_l - (2/Ubar)`` times the
    sum over the bonds b of site l of ``J_b^2``: the stack ``|2_l>`` reaches ``|2_{l+1}>`` through
    ``|1_l 1_{l+1}>`` (matrix elements sqrt(2) J_l each, energy denominator -Ubar on a clean resonant chain),
    and the same virtual process shifts it.  ``dw2``: an extra on-site energy of the stack (None: a clean
    resonant chain).  The sign of the hopping (negative) does not change a transit's populations.
    """
    J = np.asarray(J, dtype=float)
    L = len(J) + 1
    jp = 2.0 * J ** 2 / Ubar
    h = np.zeros((L, L))
    h[np.arange(L - 1), np.arange(1, L)] = h[np.arange(1, L), np.arange(L - 1)] = -jp
    shift = np.zeros(L)
    shift[:-1] -= jp
    shift[1:] -= jp
    h[np.diag_indices(L)] = shift + (0.0 if dw2 is None else np.asarray(dw2, dtype=float))
    return h
