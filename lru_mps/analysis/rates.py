"""Per-realization qubit decay rates T1, T2 in ideal conditions, from the removal-free branch (N = 1).

Physics (docs/physics.md §4, §7-§10).  In ideal conditions (no hardware
noise, T = 0) the coding qubit's |1> on site 1 lives in the one-excitation
(N = 1) sector: an L x L problem with the single-particle Hamiltonian

    H1 = sum_l dw_l |l><l| + sum_l J_l (|l><l+1| + h.c.)        (units of J)

(tridiagonal, J_l = 1 or the realization's per-bond couplings under a hopping
spread, ``Realization.hoppings``; U_l plays no role for one excitation).  The probability that
no removal event has happened (the removal-free branch, docs/physics.md §10 and
:mod:`lru_mps.mcwf.loop`) decays at late times like exp(-Gamma_1 t) and the
coherence |<sigma^->_1>| like exp(-Gamma_2 t), T1 = 1/Gamma_1, T2 = 1/Gamma_2.
Let q be the *qubit mode*, the eigenvector of H1 with the largest weight on
site 1 (energy E_q, normalized amplitudes psi_l, psi_1 > 0), Pi = |L><L| and
P0 = 1 - Pi the "no excitation on the reset site" projector.

Exact N = 1 rates (``method='exact'``), per reset kind with rate G:

dissipation
    no-jump generator H_eff = H1 - (i G/2) Pi; Gamma_1 = -2 Im(lambda_q).
    The coherence amplitude evolves with the same H_eff: Gamma_2 = Gamma_1/2
    exactly.
periodic (feedback every 1/G, branch keeps outcome 0)
    one-period map M = P0 exp(-i H1 / G); Gamma_1 = -G ln|mu_q|^2.  The
    coherence amplitude evolves with the same M (the random phase t0 of the
    measurement clock only shifts the time origin): Gamma_2 = Gamma_1/2
    exactly.
random (feedback at Poisson times of rate G)
    the trajectory-averaged removal-free density matrix obeys
    d rho/dt = -i[H1, rho] + G (P0 rho P0 - rho); Gamma_1 = -Re(lambda_q) of
    this L^2 x L^2 Liouvillian (dense eigensolver for L <= 12, sparse
    shift-invert around the log-space estimate above).  The averaged
    coherence *amplitude* obeys d<a>/dt = -i (H1 - i G Pi) <a>, so
    Gamma_2 = -Im(lambda_q(H1 - i G Pi)), which equals Gamma_1/2 only to
    leading order in |psi_L|^2 (and is computed as such).
"q" is selected in each case as the eigenvector with the largest overlap with
the qubit mode of H1 (more robust than the site-1 weight when the qubit is
hybridized with a neighbour); for periodic feedback among the L - 1 nonzero
eigenvalues of M (its zero eigenvalue belongs to the state that sits on the
reset site at the measurement, which a qubit hybridized with the reset site,
dw_1 ~ dw_L, can overlap most: picking it gave Gamma_1 = inf).  tests/test_localization.py checks these rates
against the late-time slopes of the trajectory engine's branch estimator.

Log-space continuation (``method='log-space'``).  To leading order in the
qubit's weight on the reset site |psi_L|^2 (and to all orders in G):

    Gamma_1 = c * G * |psi_L|^2,   Gamma_2 = Gamma_1 / 2,

with a per-realization factor c built from the other modes k != q of H1
(weights w_k = |phi_k(L)|^2 on the reset site, detunings d_k = E_k - E_q,
S = sum_k w_k / d_k, K = sum_k w_k cot(d_k / 2G)):

    dissipation  c = 1 / (1 + (G S / 2)^2)      -> 1 for G << |d_k|
    random       c = 2 / (1 + (G S)^2)          -> 2 for G << |d_k|
    periodic     c = 4 / (1 + K^2)              in [0, 4] for every G

(second-order perturbation theory in the coupling of the qubit mode to the
modes near the reset site; Sherman-Morrison for the rank-one reset term).
At L = 2 they reduce to docs/physics.md §9: dissipation
Gamma = 4 J^2 G / (4 dw^2 + G^2), random feedback Gamma = 2 J^2 G/(G^2 + dw^2).
The periodic factor has no small-G limit: after every projection the state
P0|q> rings at the reset site with the phases (E_k - E_q)/G, so
c = 4 sin^2((E_k - E_q)/2G) for a single neighbouring mode; over
realizations its mean is 2 (the random-feedback value) and its typical value
exp<ln c> is 1.  ``C_SMALL_G`` lists the small-G constants.  The factors
involve only modes with weight on the reset site, which double precision
resolves; |psi_L|^2 comes from the log-space backward recursion
(:func:`log_edge_weight`), finite far below 1e-300, and Gamma_1 is reported
also as its natural log ``log_gamma1`` (finite even where Gamma_1 underflows).
Neglected: relative corrections ~ |psi_L|^2 X with
X = 1 + sum_k w_k (J+G)^2/d_k^2 (dissipation, random) or
1 + sum_k w_k / sin^2(d_k/2G) (periodic); ``perturbative_error`` reports
|psi_L|^2 X (its accuracy against the exact rates: docs/physics.md §10.6).

The floor (docs/physics.md §10).  An eigenvalue-based Gamma_1 carries an absolute
round-off error ~ eps * scale with scale = ||H1|| + G (dissipation),
2 (||H1|| + G) (random: the Liouvillian) and ||H1|| + 2 L G (periodic: the
one-period propagator is unitary only to ~eps L).  A realization is
*resolvable* when Gamma_1 > RESOLVE_FACTOR * eps * scale (RESOLVE_FACTOR =
1e4, i.e. relative round-off below ~1e-4); at W = 20 J all realizations are
resolvable for L <= 5 and almost none at L >= 13.  ``auto`` uses the
exact computation there and the log-space continuation beyond, where the
perturbative error (~|psi_L|^2 < 1e-10) is far below any other uncertainty.
Explicitly asking for ``method='exact'`` past the floor is refused (the
number would be noise); :func:`exact_rates` gives the raw numbers.

The localization length fitted from these rates: :mod:`lru_mps.analysis.localization`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from ..errors import ParameterError, require
from .edge import C_SMALL_G, check_detunings, factor_and_error, log_edge_weight, qubit_mode, reset_factor, spectrum
from .n1_rates import eigen_rates, graph_spectrum
from ..physics.model import ArraySpec, Realization

__all__ = [
    "C_SMALL_G",
    "RESOLVE_FACTOR",
    "QubitRates",
    "qubit_mode",
    "log_edge_weight",
    "reset_factor",
    "exact_rates",
    "qubit_rates",
    "graph_rates_floored",
]

#: resolvable when Gamma_1 > RESOLVE_FACTOR * eps * scale (relative round-off below ~1e-4)
RESOLVE_FACTOR = 1e4
METHODS = ("auto", "exact", "log-space")
_EPS = float(np.finfo(float).eps)
#: below this site-1 weight the "qubit" mode is strongly hybridized with a neighbour (message warns)
_HYBRID_WEIGHT = 0.5
#: log-space results with a larger estimated relative error get a warning
_PERT_WARN = 1e-2


# ------------------------------------------------------------------- exact rates
def exact_rates(spec: ArraySpec, real: Realization, dense_liouvillian: bool | None = None) -> tuple[float, float]:
    """Raw exact N = 1 rates (Gamma_1, Gamma_2) in units of J, without any resolvability check.

    See the module docstring for the three reset kinds.  Past the
    floating-point floor these numbers are round-off noise (they may even be
    negative); use :func:`qubit_rates`, which checks, unless you want to see
    the noise.  ``dense_liouvillian`` forces the dense (True) or sparse
    (False) eigensolver for random feedback (default: dense for L <= 12).
    """
    _check_spec(spec, real)
    dw, J = np.asarray(real.dw, dtype=float), real.hoppings
    if not spec.is_chain:
        H = spec.one_particle_hamiltonian(real)
        E, V, q = graph_spectrum(H)
        return eigen_rates(spec, dw, J, E, V, q, 0.0, True, H)
    E, V, q = spectrum(dw, J)
    return eigen_rates(spec, dw, J, E, V, q, _log_space_gamma1(spec, dw, J, E, V, q)[0], dense_liouvillian)


def _log_space_gamma1(spec, dw, J, E, V, q) -> tuple[float, float, float, float, float]:
    """(Gamma_1 or 0 on underflow, ln Gamma_1, c, perturbative error, ln|psi_L|^2) of the log-space continuation."""
    kind, G = spec.reset.kind, float(spec.reset.rate)
    lw = log_edge_weight(dw, E[q], J)
    c, X = factor_and_error(E, V, q, kind, G, J)
    log_g1 = math.log(c) + math.log(G) + lw if c > 0 else -math.inf
    pert = math.exp(lw) * X if math.isfinite(X) else math.inf
    return (math.exp(log_g1) if log_g1 > -745.0 else 0.0), log_g1, c, pert, lw


def _roundoff_scale(kind: str, G: float, E: np.ndarray) -> float:
    """Absolute round-off of the exact Gamma_1 in units of eps (J).

    dissipation ||H1|| + G (eigenvalue of H_eff); random 2 (||H1|| + G)
    (Liouvillian norm); periodic ||H1|| + 2 L G: the one-period propagator
    built from the eigenvectors of H1 is unitary only to ~eps L, which shifts
    |mu| by ~eps L and Gamma_1 = -G ln|mu|^2 by ~2 eps L G.
    """
    h = float(np.max(np.abs(E)))
    if kind == "random":
        return 2.0 * (h + G)
    if kind == "periodic":
        return h + 2.0 * E.size * G
    return h + G


# -------------------------------------------------------------------- qubit_rates
@dataclass(frozen=True)
class QubitRates:
    """Ideal-conditions qubit rates of one disorder realization (units: J and 1/J).

    ``gamma1``/``gamma2``: Gamma_1 = 1/T1 and Gamma_2 = 1/T2 in units of J
    (0.0 where they underflow double precision); ``T1``/``T2`` in 1/J (inf
    there); ``log_gamma1``/``log_gamma2``: their natural logs, always finite,
    so T1 = exp(-log_gamma1) can be reported in log form past 1e300
    (``log_T1``, ``log10_T1``).  ``method``: 'exact' or 'log-space' (what
    produced the numbers); ``resolvable``: whether the exact N = 1 eigenvalue
    resolves Gamma_1 for this realization (Gamma_1 > ``floor``, the
    round-off floor RESOLVE_FACTOR eps scale); ``message``: what was done and
    any caveat, readable by a user.  Diagnostics: ``kind``, ``rate`` (G, J),
    ``energy`` E_q (J, rotating frame), ``site1_weight`` |psi_1|^2,
    ``log_edge_weight`` ln|psi_L|^2, ``c_factor`` (c in Gamma_1 = c G |psi_L|^2,
    from the log-space formula), ``perturbative_error`` (estimated relative
    error of the log-space formula), ``roundoff_error`` (estimated relative
    round-off error of the exact eigenvalue, eps scale / Gamma_1; > 1e-4 means
    not resolvable) and ``floor`` (J).

    On a coupling graph (exact only): ``site1_weight`` is the start site's, ``log_edge_weight`` the reset
    site's from the eigenvector, ``c_factor`` and ``perturbative_error`` NaN (no log-space formula).

    Gamma_1 is the rate of the qubit mode.  If another mode with a small
    weight on site 1 decays even slower (rare; e.g. a mode locked by a
    stroboscopic resonance under periodic feedback), the very late tail of
    <n_1>(t), after the qubit mode has decayed below that small weight,
    follows the slower mode instead.
    """

    gamma1: float
    gamma2: float
    T1: float
    T2: float
    log_gamma1: float
    log_gamma2: float
    method: str
    resolvable: bool
    message: str
    kind: str
    rate: float
    energy: float
    site1_weight: float
    log_edge_weight: float
    c_factor: float
    perturbative_error: float
    roundoff_error: float
    floor: float

    @property
    def log_T1(self) -> float:
        """ln(T1 J)."""
        return -self.log_gamma1

    @property
    def log_T2(self) -> float:
        """ln(T2 J)."""
        return -self.log_gamma2

    @property
    def log10_T1(self) -> float:
        return -self.log_gamma1 / math.log(10.0)

    def as_dict(self) -> dict:
        """JSON-friendly dict (inf -> None)."""
        out = asdict(self)
        return {k: (None if isinstance(v, float) and math.isinf(v) else v) for k, v in out.items()}


def _check_spec(spec: ArraySpec, real: Realization) -> None:
    require(isinstance(spec, ArraySpec), "spec", type(spec).__name__, "an ArraySpec")
    kind = spec.reset.kind
    require(
        kind != "none",
        "reset",
        kind,
        "dissipation, periodic or random",
        "with reset 'none' nothing removes the excitation: T1 = T2 = infinity in ideal conditions",
    )
    c = spec.conditions
    require(
        c.ideal,
        "conditions",
        c.describe(),
        "ideal conditions (no hardware T1q/Tphi noise, temperature 0)",
        "these rates are those of the removal-free N = 1 branch; with noise or thermal "
        "excitations simulate with the sampled estimator instead",
    )
    require(isinstance(real, Realization), "realization", type(real).__name__, "a Realization")
    dw = check_detunings(real.dw, "realization")
    require(dw.size == spec.L, "realization", f"L = {dw.size}", f"a realization of the spec's L = {spec.L} sites")


def _from_exact(exact, kind: str, floor: float):
    """(g1, g2, ln g1, ln g2, resolvable, method, message) from the exact N = 1 rates."""
    g1, g2 = exact
    msg = (
        f"exact N = 1 {kind} rate: Gamma_1 = {g1:.6g} J, {g1 / floor:.3g}x the round-off floor "
        f"{floor:.2g} J (relative round-off ~ {floor / (g1 * RESOLVE_FACTOR):.1g})"
    )
    log_g1 = math.log(g1)
    log_g2 = math.log(g2) if g2 > 0 else log_g1 - math.log(2.0)
    return g1, g2, log_g1, log_g2, True, "exact", msg


def _from_log_space(g_ls, log_ls, c, pert, lw, kind: str, G: float, floor: float, resolvable: bool, notes: list):
    """(g1, g2, ln g1, ln g2, method, message) from the log-space continuation (appends its warnings to notes)."""
    g1 = g_ls
    g2 = 0.5 * g_ls
    log_g1 = log_ls
    log_g2 = log_ls - math.log(2.0)
    head = (
        "past the floating-point floor: reported from the log-space continuation"
        if not resolvable
        else "log-space continuation (the exact method also resolves this realization)"
    )
    msg = (
        f"{head}: Gamma_1 = c G |psi_L|^2 with |psi_L|^2 = e^{lw:.6g}, c = {c:.4g} ({kind}), "
        f"ln Gamma_1 = {log_ls:.6g}; leading order in |psi_L|^2, all orders in G, estimated "
        f"relative error {pert:.2g}"
    )
    if not resolvable:
        msg += f" (the exact eigenvalue would be noise: Gamma_1 below the round-off floor {floor:.2g} J)"
    if not (pert <= _PERT_WARN):
        notes.append(
            f"warning: |psi_L|^2 = {math.exp(lw):.3g} is not small, the log-space continuation is "
            "inaccurate here; use method='exact'"
        )
    if c == 0.0 or not math.isfinite(log_g1):
        raise ParameterError(
            "rate",
            G,
            "a rate off exact stroboscopic resonance",
            "the log-space factor c vanished (a bath mode exactly resonant with the qubit mode)",
        )
    return g1, g2, log_g1, log_g2, "log-space", msg


def qubit_rates(spec: ArraySpec, real: Realization, method: str = "auto") -> QubitRates:
    """Gamma_1, Gamma_2 (units of J) of the coding qubit for one realization, ideal conditions.

    ``method``: 'exact' (N = 1 eigenvalue problem, see the module
    docstring; refused past the floating-point floor), 'log-space' (the
    continuation ``Gamma_1 = c G |psi_L|^2`` with ``|psi_L|^2`` from
    :func:`log_edge_weight`: leading order in ``|psi_L|^2``, all orders in G;
    Gamma_2 = Gamma_1/2) or 'auto' (exact where resolvable, i.e. where the
    log-space estimate of Gamma_1 exceeds the round-off floor
    RESOLVE_FACTOR eps scale, scale = ``||H1|| + G`` for dissipation,
    ``2 (||H1|| + G)`` for random and ``||H1|| + 2 L G`` for periodic feedback, and
    the exact value confirms it; log-space beyond).  Raises ParameterError for
    reset 'none', non-ideal conditions, a realization of the wrong length or
    an unknown method.
    """
    require(method in METHODS, "method", method, "auto, exact or log-space")
    _check_spec(spec, real)
    if not spec.is_chain:
        return _graph_rates(spec, real, method)
    kind, G = spec.reset.kind, float(spec.reset.rate)
    dw, J = np.asarray(real.dw, dtype=float), real.hoppings
    E, V, q = spectrum(dw, J)
    floor = RESOLVE_FACTOR * _EPS * _roundoff_scale(kind, G, E)
    g_ls, log_ls, c, pert, lw = _log_space_gamma1(spec, dw, J, E, V, q)
    resolvable_est = g_ls > floor
    w1 = float(V[0, q] ** 2)
    notes = []
    if w1 < _HYBRID_WEIGHT:
        notes.append(
            f"warning: the qubit mode has only {w1:.2f} of its weight on site 1 "
            "(coding qubit strongly hybridized with a neighbour)"
        )

    exact = None
    if method == "exact" or (method == "auto" and resolvable_est):
        exact = eigen_rates(spec, dw, J, E, V, q, g_ls)
        # auto: an exact value that lands under the floor after all falls back to log-space
        require(
            exact[0] > floor or method == "auto",
            "method",
            method,
            "'auto' or 'log-space' for this realization",
            f"past the floating-point floor: the exact N = 1 Gamma_1 = {exact[0]:.3g} J is below the round-off "
            f"floor {floor:.2g} J (RESOLVE_FACTOR eps scale), i.e. noise; the log-space continuation gives "
            f"ln Gamma_1 = {log_ls:.6g} (|psi_L|^2 = e^{lw:.4g})",
        )
    if exact is not None and exact[0] > floor:
        g1, g2, log_g1, log_g2, resolvable, used, msg = _from_exact(exact, kind, floor)
    else:
        resolvable = exact[0] > floor if exact is not None else resolvable_est
        g1, g2, log_g1, log_g2, used, msg = _from_log_space(g_ls, log_ls, c, pert, lw, kind, G, floor, resolvable, notes)
    if notes:
        msg += "; " + "; ".join(notes)
    T1 = 1.0 / g1 if g1 > 0 else math.inf
    T2 = 1.0 / g2 if g2 > 0 else math.inf
    return QubitRates(
        gamma1=float(g1),
        gamma2=float(g2),
        T1=T1,
        T2=T2,
        log_gamma1=float(log_g1),
        log_gamma2=float(log_g2),
        method=used,
        resolvable=bool(resolvable),
        message=msg,
        kind=kind,
        rate=G,
        energy=float(E[q]),
        site1_weight=w1,
        log_edge_weight=float(lw),
        c_factor=float(c),
        perturbative_error=float(pert),
        roundoff_error=float(floor / (RESOLVE_FACTOR * g1)) if g1 > 0 else math.inf,
        floor=float(floor),
    )


def _graph_rates(spec: ArraySpec, real: Realization, method: str) -> QubitRates:
    """:func:`qubit_rates` on a coupling graph: the exact N = 1 rates of its dense H1 (the start site is index 0, the
    reset site the last, as :class:`~lru_mps.physics.geometry.Geometry` numbers them).  The log-space continuation
    follows the chain's bonds and has no graph form: refused, and so is a rate under the round-off floor."""
    require(method != "log-space", "method", method, "'auto' or 'exact' on a graph geometry",
            "the log-space continuation is a recursion along a chain's bonds (l, l+1)")
    kind, G = spec.reset.kind, float(spec.reset.rate)
    g1, g2, floor, E, V, q = _graph_exact(spec, real)
    require(g1 > floor, "geometry", spec.geometry.name,
            "a graph whose qubit rate is above the round-off floor (no log-space continuation off the chain)",
            f"the exact N = 1 Gamma_1 = {g1:.3g} J is below the floor {floor:.2g} J: noise; a smaller disorder or "
            "a start site nearer the reset site resolves it")
    g1, g2, log_g1, log_g2, resolvable, used, msg = _from_exact((g1, g2), kind, floor)
    w1 = float(V[0, q] ** 2)
    if w1 < _HYBRID_WEIGHT:
        msg += (f"; warning: the qubit mode has only {w1:.2f} of its weight on the start site "
                "(strongly hybridized with a neighbour)")
    edge = float(np.sum(V[list(spec.reset_sites), q] ** 2))  # (the weight on the reset sites)
    return QubitRates(gamma1=float(g1), gamma2=float(g2), T1=1.0 / g1, T2=1.0 / g2 if g2 > 0 else math.inf,
                      log_gamma1=float(log_g1), log_gamma2=float(log_g2), method=used, resolvable=True, message=msg,
                      kind=kind, rate=G, energy=float(E[q]), site1_weight=w1,
                      log_edge_weight=math.log(edge) if edge > 0 else -math.inf, c_factor=math.nan,
                      perturbative_error=math.nan, roundoff_error=float(floor / (RESOLVE_FACTOR * g1)),
                      floor=float(floor))


def _graph_exact(spec: ArraySpec, real: Realization):
    """(Gamma_1, Gamma_2, the round-off floor of Gamma_1, E, V, q): the exact N = 1 rates of a graph's dense H1."""
    kind, G = spec.reset.kind, float(spec.reset.rate)
    H = spec.one_particle_hamiltonian(real)
    E, V, q = graph_spectrum(H)
    floor = RESOLVE_FACTOR * _EPS * _roundoff_scale(kind, G, E)
    g1, g2 = eigen_rates(spec, np.asarray(real.dw, dtype=float), real.hoppings, E, V, q, 0.0, True, H)
    return g1, g2, floor, E, V, q


def graph_rates_floored(spec: ArraySpec, real: Realization) -> tuple[float, float, bool]:
    """(Gamma_1, Gamma_2, under) of the qubit on a coupling graph (units of J), where :func:`qubit_rates` would
    refuse a Gamma_1 under the round-off floor: then ``under`` is True and Gamma_1 is the floor (an upper bound of
    the rate, so 1/Gamma_1 is a lower bound of T1) and Gamma_2 = Gamma_1/2 likewise (the reset's share of the
    coherence's decay)."""
    g1, g2, floor, _, _, _ = _graph_exact(spec, real)
    if g1 > floor:
        return float(g1), float(g2), False
    return float(floor), 0.5 * float(floor), True
