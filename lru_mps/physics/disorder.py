"""Disorder realizations: the pattern of the detunings and the fabrication/tuning spreads (docs/physics.md §3.1).

One realization is drawn from the trajectory's disorder stream in these steps
(units of J, rotating frame at wbar N, sites l = 1..L):

1. The pattern of the detunings dw0_l (``pattern``, full width W):

   - ``box`` (the paper): dw0_l ~ Uniform[-W/2, W/2], independent per site;
   - ``gaussian``: dw0_l ~ N(0, W/sqrt(12)), independent per site (the box's
     standard deviation);
   - ``quasiperiodic`` (Aubry-Andre): dw0_l = (W/2) cos(2 pi beta l + phi),
     beta = (sqrt(5) - 1)/2 (golden), phi ~ Uniform[0, 2 pi) per realization;
   - ``alternating``: dw0_l = s (-1)^(l-1) W/2, the sign s = +-1 of site 1
     drawn per realization with probability 1/2 each: frequencies, and with
     them the anharmonicities U_l = Ubar +- W, alternate along the array.

   The resonant-E2 recipe U_l = Ubar + 2 dw0_l applies to each, so the
   leakage energy E2_l = 2 dw0_l - U_l = -Ubar is the same on every site.
2. ``e2_spread`` S (residual detuning of the leakage levels):
   E2_l -> E2_l + delta_l with delta_l ~ N(0, S) per site, absorbed by the
   anharmonicity: U_l -> U_l - delta_l (w_l unchanged).
3. ``frequency_noise`` S (quasi-static flux noise): dw_l = dw0_l + s_l with
   s_l ~ N(0, S) per site, U_l unchanged, so E1_l shifts by s_l and E2_l by
   2 s_l.  The noise varies from shot to shot, so a calibration does not see
   it: the qubit frequency of the coherence frame is the dressed frequency of
   the realization without s (``Realization.frequency_offset``), and the
   noise on site 1 dephases the ensemble (a Ramsey T2*,
   exp(-(S t)^2/2) for a Gaussian offset), while the pattern and the e2
   spread are static fabrication properties, calibrated like the paper's
   disorder.

4. ``hopping_spread`` X (fabrication spread of the couplings): the bond
   between sites l and l+1 has J_l = J (1 + eps_l), eps_l ~ N(0, X)
   independent per bond (:func:`hoppings`; a dimensionless fraction, J = 1
   in the internal units).  A static property of the chip, calibrated like
   the disorder.

Random numbers: the pattern draws first (box: L uniforms, exactly the
paper's recipe as before; gaussian: L normals; quasiperiodic: one uniform;
alternating: one uniform), then delta (L normals) only if S > 0, then s
(L normals) only if S > 0, then eps (L - 1 normals) only if X > 0.  With
the spreads off and the box pattern a
realization is therefore bit for bit the one drawn before the spreads
existed.

Positivity.  A transmon's anharmonicity is positive, so U_l must stay > 0.
For the bounded patterns (box, quasiperiodic, alternating) U_l >= Ubar - W
exactly (hence W < Ubar).  The Gaussian parts (the gaussian pattern and
``e2_spread``) are unbounded; a realization is never redrawn or clipped (that
would bias the distribution), instead the parameters are refused unless
U_l <= 0 lies beyond :data:`NEGLIGIBLE_SIGMAS` = 4 standard deviations of the
Gaussian part of U_l (probability < 3.2e-5 per site), see :func:`check`.  At
the paper's point (Ubar = 50 J, W = 20 J) the gaussian pattern alone puts
U_l <= 0 at 4.33 standard deviations (7.5e-6 per site).  Likewise a coupling
J_l <= 0 must lie beyond 4 standard deviations: X < 1/4.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..errors import require

PATTERNS = ("box", "gaussian", "quasiperiodic", "alternating")
#: the patterns drawn independently and identically on every site: the only ones with a meaning on a coupling graph
#: (the quasiperiodic and alternating patterns run along a chain's site numbers l = 1..L)
SITE_PATTERNS = ("box", "gaussian")
#: the Aubry-Andre wave number of the quasiperiodic pattern: the inverse golden ratio
GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0
#: U_l <= 0 (and w_l <= 0) must lie beyond this many standard deviations of the Gaussian parts
NEGLIGIBLE_SIGMAS = 4.0


def pattern_sigma(pattern: str, W: float) -> tuple[float, float]:
    """(bounded half width, Gaussian standard deviation) of the pattern's dw0_l."""
    if pattern == "gaussian":
        return 0.0, W / math.sqrt(12.0)
    return W / 2.0, 0.0


def pattern_detunings(pattern: str, W: float, L: int, rng: np.random.Generator, beta: float = GOLDEN) -> np.ndarray:
    """The detunings dw0_l of one realization of ``pattern`` (units of J), sites l = 1..L."""
    if pattern == "box":
        return rng.uniform(-W / 2.0, W / 2.0, size=L)
    if pattern == "gaussian":
        return rng.normal(0.0, W / math.sqrt(12.0), size=L)
    sites = np.arange(1, L + 1)
    if pattern == "quasiperiodic":
        phi = rng.uniform(0.0, 2.0 * math.pi)
        return (W / 2.0) * np.cos(2.0 * math.pi * beta * sites + phi)
    if pattern == "alternating":
        sign = 1.0 if rng.random() < 0.5 else -1.0
        return sign * (W / 2.0) * np.where(sites % 2 == 1, 1.0, -1.0)
    require(False, "disorder_pattern", pattern, f"one of {', '.join(PATTERNS)}")


def draw(L: int, Ubar: float, W: float, rng: np.random.Generator, pattern: str = "box", e2_spread: float = 0.0,
         frequency_noise: float = 0.0, beta: float = GOLDEN) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(dw, U, s) of one realization: pattern, resonant-E2 recipe, then the spreads (module docstring).

    s is the frequency noise included in dw (None when off).
    """
    dw = pattern_detunings(pattern, W, L, rng, beta)
    return spreads(dw, Ubar + 2.0 * dw, rng, e2_spread, frequency_noise)


def spreads(dw: np.ndarray, U: np.ndarray, rng: np.random.Generator, e2_spread: float = 0.0,
            frequency_noise: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Steps 2 and 3 of the module docstring on the detunings ``dw`` and anharmonicities ``U`` (units of J) of
    step 1 (a pattern's, or a device file's): (dw, U, s), s the frequency noise included in dw (None when off).

    Draws L normals for each spread that is on, nothing for one that is off.
    """
    L = len(dw)
    if e2_spread > 0:
        U = U - rng.normal(0.0, e2_spread, size=L)  # E2_l = 2 dw_l - U_l gains delta_l
    offset = None
    if frequency_noise > 0:
        offset = rng.normal(0.0, frequency_noise, size=L)
        dw = dw + offset  # w_l and E2_l/2 shift together, U_l unchanged
    return dw, U, offset


def hoppings(L: int, hopping_spread: float, rng: np.random.Generator, bonds: int | None = None) -> np.ndarray | None:
    """The per-bond couplings J_l = 1 + eps_l, eps_l ~ N(0, X) (units of J; L - 1 normals, or one per bond of a
    graph: ``bonds``), None when X = 0 (uniform J).

    Drawn after :func:`draw` (step 4 of the module docstring), so that with X = 0 the stream is untouched.
    """
    if hopping_spread > 0:
        return 1.0 + rng.normal(0.0, hopping_spread, size=L - 1 if bonds is None else bonds)
    return None


def extent(pattern: str, W: float, e2_spread: float = 0.0, frequency_noise: float = 0.0,
           sigmas: float = NEGLIGIBLE_SIGMAS) -> tuple[float, float]:
    """(max |dw_l|, max |U_l - Ubar|): exact for the bounded parts, ``sigmas`` std for the Gaussian ones.

    Box without spreads: (W/2, W), as before.
    """
    half, sg = pattern_sigma(pattern, W)
    dw_max = half + sigmas * math.hypot(sg, frequency_noise)
    du_max = 2.0 * half + sigmas * math.hypot(2.0 * sg, e2_spread)
    return dw_max, du_max


def check(Ubar: float, wbar: float, W: float, pattern: str, e2_spread: float, frequency_noise: float,
          hopping_spread: float = 0.0) -> None:
    """Refuse patterns and spreads that could make an anharmonicity or a frequency non-positive (module docstring).

    The box pattern's own condition W < Ubar is checked by ArraySpec as before.
    """
    require(pattern in PATTERNS, "disorder_pattern", pattern, f"one of {', '.join(PATTERNS)}")
    k = NEGLIGIBLE_SIGMAS
    for name, value in (("e2_spread", e2_spread), ("frequency_noise", frequency_noise)):
        require(isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value) and value >= 0,
                name, value,
                "a standard deviation >= 0 (units of J; 0 = off)")
    limit = 1.0 / k
    require(isinstance(hopping_spread, numbers.Real) and not isinstance(hopping_spread, bool)
            and math.isfinite(hopping_spread) and 0 <= hopping_spread < limit, "hopping_spread", hopping_spread,
            f"a relative standard deviation 0 <= X < {limit:g} (a bare number like 0.05 or '5%'; 0 = off), so that "
            f"a coupling J_l = J (1 + eps_l) <= 0 lies beyond {k:g} standard deviations")
    half, sg = pattern_sigma(pattern, W)
    if pattern == "gaussian":
        limit = Ubar * math.sqrt(12.0) / (2.0 * k)
        require(W < limit, "disorder", W,
                f"W < Ubar sqrt(12)/{2 * k:g} = {limit:.4g} J for the gaussian pattern, so that an anharmonicity "
                f"U_l = Ubar + 2 dw_l <= 0 lies beyond {k:g} standard deviations")
    room = Ubar - 2.0 * half  # what the bounded part leaves of Ubar
    limit = math.sqrt(max((room / k) ** 2 - (2.0 * sg) ** 2, 0.0))
    require(e2_spread < limit or e2_spread == 0, "e2_spread", e2_spread,
            f"0 <= S < {limit:.4g} J here, so that an anharmonicity U_l = Ubar + 2 dw_l - delta_l <= 0 lies beyond "
            f"{k:g} standard deviations")
    room = wbar - half
    limit = math.sqrt(max((room / k) ** 2 - sg**2, 0.0))
    require(frequency_noise < limit or frequency_noise == 0, "frequency_noise", frequency_noise,
            f"0 <= S < {limit:.4g} J here, so that a frequency w_l = wbar + dw_l <= 0 lies beyond "
            f"{k:g} standard deviations")
