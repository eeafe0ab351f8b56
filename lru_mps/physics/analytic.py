"""The paper's analytic results as plain functions (docs/physics.md §8-§10).

Units: energies, rates and detunings in units of J (or in any unit, as long as
``J`` is given in the same unit), times in 1/J.  Every function accepts floats
or numpy arrays (broadcasting) unless stated otherwise.

Notation: ``Jp`` = J_prop = 2 J^2 / Ubar is the effective hopping of a
leakage "stack" (|2> on one site) between neighbouring sites, valid for
J / Ubar << 1 (paper Eq. Hamiltonian_BH_prop).  ``G`` is the reset rate
(Gamma_fb for feedback measurements, Gamma_d for engineered dissipation).

Which formula is exact and which is perturbative is stated in each docstring.
The *low-rate* stack formulas (``feedback_low_rate``, ``dissipation_low_rate``)
are interpolations between two perturbative limits; they describe a single
exponential fitted from t = 0 (close to the 1/e time), not the asymptotic
tail, which at L = 2 decays about 1.4x (random feedback) to 2x (dissipation)
faster (docs/physics.md §9).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "J_prop",
    "T_prop",
    "omega_dis",
    "rho_11_11",
    "feedback_low_rate",
    "feedback_low_optimum",
    "feedback_low_T_star",
    "dissipation_low_norm_exact",
    "dissipation_low_rate",
    "dissipation_low_optimum",
    "dissipation_low_T_star",
    "feedback_high_rate",
    "feedback_high_optimum",
    "feedback_high_T_star",
    "dissipation_high_rate",
    "dissipation_high_optimum",
    "dissipation_high_T_star",
    "qubit_T1_feedback",
    "qubit_T2_feedback",
    "chain_factor_F",
    "qubit_tau_dissipation",
    "qubit_tau_dissipation_chain",
]


# --------------------------------------------------------------------------- stack
def J_prop(Ubar, J=1.0):
    """Stack hopping J_prop = 2 J^2 / Ubar (docs/physics.md §8, paper Eq. 3).

    Second-order (J/Ubar << 1) amplitude for |20> -> |02> through the virtual
    |11> state.  The same process shifts a stack's energy by -J_prop per
    neighbouring site (the virtual |11> lies Ubar above), so a stack on an
    *end* site sits +J_prop above one in the bulk (hence the J_prop n_1 +
    J_prop n_L terms of the paper's Eq. Hamiltonian_BH_prop).
    """
    return 2.0 * np.asarray(J, dtype=float) ** 2 / np.asarray(Ubar, dtype=float) + 0.0


def T_prop(Ubar, J=1.0):
    """Propagation time T_prop = pi / (2 J_prop) (docs/physics.md §8), units of 1/J.

    The time a stack needs to hop one site (half a period of the |20>-|02>
    oscillation at frequency 2 J_prop).  Perturbative in J/Ubar.
    """
    return math.pi / (2.0 * J_prop(Ubar, J))


def omega_dis(Ubar, J=1.0):
    """Disintegration frequency w_dis = sqrt(Ubar^2 + 16 J^2) (docs/physics.md §9, paper Sec. IV).

    Exact for L = 2, W = 0, no reset: the symmetric stack state
    (|20> + |02>)/sqrt2 Rabi-oscillates with |11> (coupling 2J, detuning Ubar).
    """
    Ubar = np.asarray(Ubar, dtype=float)
    J = np.asarray(J, dtype=float)
    return np.sqrt(Ubar**2 + 16.0 * J**2) + 0.0


def rho_11_11(t, Ubar, J=1.0):
    """Population of |11> from |20>: (8 J^2 / w_dis^2) sin^2(w_dis t / 2) (docs/physics.md §9).

    Exact for the full L = 2 model with W = 0 and no reset (the antisymmetric
    stack state (|20> - |02>)/sqrt2 is decoupled from |11>).
    """
    w = omega_dis(Ubar, J)
    t = np.asarray(t, dtype=float)
    return 8.0 * np.asarray(J, dtype=float) ** 2 / w**2 * np.sin(0.5 * w * t) ** 2 + 0.0


# ------------------------------------------------------ low optimum, feedback (stack model)
def feedback_low_rate(G, Jp):
    """Leakage decay rate for random feedback, stack model L = 2 (paper Eq. fb_low_combination).

    1/T_star = 2 Jp^2 G / (4 Jp^2 + G^2).  An interpolation between the
    perturbative limits G/2 (G << 2 Jp) and 2 Jp^2/G (G >> 2 Jp); valid for
    J/Ubar << 1 and G << Ubar.  Describes the exponential fitted from t = 0,
    not the asymptotic tail (about 1.4x faster at the optimum).
    """
    G = np.asarray(G, dtype=float)
    Jp = np.asarray(Jp, dtype=float)
    return 2.0 * Jp**2 * G / (4.0 * Jp**2 + G**2) + 0.0


def feedback_low_optimum(Jp):
    """Optimal random-feedback rate G = 2 Jp (maximum of :func:`feedback_low_rate`)."""
    return 2.0 * np.asarray(Jp, dtype=float) + 0.0


def feedback_low_T_star(Jp):
    """Leakage decay time at the low feedback optimum, T_star = 2/Jp (paper Eq. leakage_fb_propagation)."""
    return 2.0 / np.asarray(Jp, dtype=float) + 0.0


# --------------------------------------------------- low optimum, dissipation (stack model)
def dissipation_low_norm_exact(t, G, Jp):
    """Exact no-jump norm of the L = 2 stack model (paper Eqs. L2_diss_prop_exact1/2).

    H_NJ = Jp [n1 + n2 - (a1^dag a2 + h.c.)] - i G n2 in the one-stack subspace
    (paper Eq. L2_diss_Heff), stack on site 1 at t = 0.  With x = 4 Jp^2 - G^2
    and s = sqrt(x) both branches of the paper read

        N(t) = exp(-G t) [1 + G^2 (1 - cos(s t)) / x + G sin(s t) / s],

    (cos, sin -> cosh, sinh of sqrt(-x) t for G > 2 Jp).  This form is
    evaluated without cancellation: 1 - cos(y) = 2 sin^2(y/2) and sin(y)/s
    through sinc, so the exceptional point G = 2 Jp, where
    N = exp(-2 Jp t)(1 + 2 Jp t + 2 Jp^2 t^2), is continuous; in the
    overdamped branch the growing exponentials are combined with exp(-G t)
    before evaluation (no overflow at long times).

    Exact within the stack model; as a description of the full transmon model
    it is perturbative in J/Ubar (relative corrections O(J^2/Ubar^2) to the
    rates, plus wiggles of amplitude ~ 8 J^2/Ubar^2 from disintegration).
    """
    t, G, Jp = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (t, G, Jp)))
    x = 4.0 * Jp**2 - G**2
    out = np.empty(t.shape, dtype=float)

    under = x >= 0.0
    if np.any(under):
        tu, Gu, xu = t[under], G[under], x[under]
        s = np.sqrt(xu)
        # 2 sin^2(s t/2)/x = (t^2/2) sinc^2(s t / 2pi);  sin(s t)/s = t sinc(s t / pi)
        one_minus_cos_over_x = 0.5 * tu**2 * np.sinc(s * tu / (2.0 * np.pi)) ** 2
        sin_over_s = tu * np.sinc(s * tu / np.pi)
        out[under] = np.exp(-Gu * tu) * (1.0 + Gu**2 * one_minus_cos_over_x + Gu * sin_over_s)

    over = ~under
    if np.any(over):
        to, Go, xo = t[over], G[over], x[over]
        r = np.sqrt(-xo)
        rt = r * to
        small = rt <= 1.0
        res = np.empty(to.shape, dtype=float)
        if np.any(small):
            ts, Gs, rs = to[small], Go[small], r[small]
            # cosh(y)-1 = 2 sinh^2(y/2); sinh(r t)/r via sinc of an imaginary argument
            sh = ts * np.sinc(1j * rs * ts / np.pi).real  # sinh(r t)/r
            sh_half = 0.5 * ts * np.sinc(1j * rs * ts / (2.0 * np.pi)).real  # sinh(r t/2)/r
            res[small] = np.exp(-Gs * ts) * (1.0 + 2.0 * Gs**2 * sh_half**2 + Gs * sh)
        big = ~small
        if np.any(big):
            tb, Gb, rb = to[big], Go[big], r[big]
            em = np.exp(-(Gb - rb) * tb)  # slow mode
            ep = np.exp(-(Gb + rb) * tb)  # fast mode
            e0 = np.exp(-Gb * tb)
            # e^{-Gt}[1 + G^2 (cosh(rt) - 1)/r^2 + G sinh(rt)/r]
            res[big] = e0 + Gb**2 * (0.5 * (em + ep) - e0) / rb**2 + Gb * 0.5 * (em - ep) / rb
        out[over] = res
    return out if out.ndim else float(out)


def dissipation_low_rate(G, Jp):
    """Approximate stack decay rate for dissipation, L = 2 (paper App. D, after Eq. L2_diss_prop_exact2).

    1/T_star = 2 Jp^2 G / (2 Jp^2 + G^2): interpolation between the limits G
    (G << Jp) and 2 Jp^2 / G (G >> Jp).  Valid for J/Ubar << 1, G << Ubar.
    Describes the exponential fitted from t = 0 to the exact norm
    (:func:`dissipation_low_norm_exact`), whose asymptotic tail decays 2x faster
    at the optimum.
    """
    G = np.asarray(G, dtype=float)
    Jp = np.asarray(Jp, dtype=float)
    return 2.0 * Jp**2 * G / (2.0 * Jp**2 + G**2) + 0.0


def dissipation_low_optimum(Jp):
    """Optimal low dissipation rate G = sqrt2 Jp (maximum of :func:`dissipation_low_rate`)."""
    return math.sqrt(2.0) * np.asarray(Jp, dtype=float) + 0.0


def dissipation_low_T_star(Jp):
    """Leakage decay time at the low dissipation optimum, T_star = sqrt2 / Jp (paper App. D)."""
    return math.sqrt(2.0) / np.asarray(Jp, dtype=float) + 0.0


# ------------------------------------------------------------ high optima (disintegration)
def feedback_high_rate(G, Ubar, J=1.0):
    """Leakage decay rate near the high feedback optimum, L = 2 (paper Eq. fb_freq2_decay2).

    1/T_star = 4 J^2 G / (G^2 + Ubar^2).  Liouvillian-gap estimate of the
    disintegration channel |20>/|02> <-> |11> interrupted by measurements,
    perturbative in J/Ubar (the paper maps it from a driven qubit with
    Delta = Ubar/2, beta = 2J and rescales t -> 4t); valid for G ~ Ubar >> J_prop.
    """
    G = np.asarray(G, dtype=float)
    Ubar = np.asarray(Ubar, dtype=float)
    J = np.asarray(J, dtype=float)
    return 4.0 * J**2 * G / (G**2 + Ubar**2) + 0.0


def feedback_high_optimum(Ubar):
    """High optimal feedback rate G = Ubar (maximum of :func:`feedback_high_rate`)."""
    return np.asarray(Ubar, dtype=float) + 0.0


def feedback_high_T_star(Ubar, J=1.0):
    """Decay time at the high feedback optimum, T_star = Ubar / (2 J^2) (docs/physics.md §9).

    (The paper's text after Eq. fb_freq2_decay2 prints J^2/2Ubar, a typo: the
    rate 4 J^2 G/(G^2 + Ubar^2) at G = Ubar is 2 J^2/Ubar.)
    """
    return np.asarray(Ubar, dtype=float) / (2.0 * np.asarray(J, dtype=float) ** 2) + 0.0


def dissipation_high_rate(G, Ubar, J=1.0):
    """Leakage decay rate near the high dissipation optimum, L = 2 (paper Eq. norm_split_dissipation).

    1/T_star = 8 J^2 G / (4 Ubar^2 + G^2) = -2 Im E_1, where E_1 is the |20>
    eigenvalue of H_NJ in the basis |20>, |11>, |02> to second order in J/Ubar
    (the stack on site 1 leaks through virtual |11>, damped at G/2).  Valid for
    J/Ubar << 1; near G ~ 2 Ubar the stack-propagation channel adds only
    O(J^2/Ubar^2) relative.
    """
    G = np.asarray(G, dtype=float)
    Ubar = np.asarray(Ubar, dtype=float)
    J = np.asarray(J, dtype=float)
    return 8.0 * J**2 * G / (4.0 * Ubar**2 + G**2) + 0.0


def dissipation_high_optimum(Ubar):
    """High optimal dissipation rate G = 2 Ubar (maximum of :func:`dissipation_high_rate`)."""
    return 2.0 * np.asarray(Ubar, dtype=float) + 0.0


def dissipation_high_T_star(Ubar, J=1.0):
    """Decay time at the high dissipation optimum, T_star = Ubar / (2 J^2) (paper App. D)."""
    return np.asarray(Ubar, dtype=float) / (2.0 * np.asarray(J, dtype=float) ** 2) + 0.0


# ----------------------------------------------------------------------- qubit subspace
def qubit_T1_feedback(G, dw12, J=1.0):
    """Qubit T1 under random feedback on site 2, L = 2 (paper Eq. T1_fb, docs/physics.md §9).

    T1_fb = (G^2 + dw12^2) / (2 J^2 G), dw12 = dw_1 - dw_2.  Second-order
    perturbation theory in J (needs J << sqrt(G^2 + dw12^2)); <n_1>(t) ~ exp(-t/T1).
    """
    G = np.asarray(G, dtype=float)
    dw12 = np.asarray(dw12, dtype=float)
    J = np.asarray(J, dtype=float)
    return (G**2 + dw12**2) / (2.0 * J**2 * G) + 0.0


def qubit_T2_feedback(G, dw12, J=1.0):
    """Qubit T2 under random feedback, L = 2: T2_fb = 2 T1_fb (paper Eq. T2_fb).

    Defined by 2|rho_10,00(t)| = |<sigma^->| * 2 ~ exp(-t/T2) (same regime as T1).
    """
    return 2.0 * qubit_T1_feedback(G, dw12, J)


def chain_factor_F(dw, J=1.0) -> float:
    """F = prod_{n=2}^{L-1} J^2 / (dw_1 - dw_n)^2 for detunings ``dw`` (site 1 first).

    The (L-2)-fold product of second-order hops from the coding site to the
    reset site (paper App. D, General L).  F = 1 for L = 2 (empty product);
    needs |dw_1 - dw_n| >> J for every intermediate n.  Computed in log space.
    """
    dw = np.asarray(dw, dtype=float)
    if dw.ndim != 1 or dw.size < 2:
        raise ValueError("dw must be a 1-D array with at least 2 sites")
    inner = dw[1:-1]
    if inner.size == 0:
        return 1.0
    d = np.abs(dw[0] - inner)
    if np.any(d == 0):
        return math.inf
    return float(np.exp(np.sum(2.0 * np.log(float(J)) - 2.0 * np.log(d))))


def qubit_tau_dissipation(G, dw1L, F=1.0, J=1.0):
    """Qubit removal time under dissipation on site L (paper App. D, docs/physics.md §9).

    tau = (4 dw1L^2 + G^2) / (4 F J^2 G), dw1L = dw_1 - dw_L, F from
    :func:`chain_factor_F`.  It is the decay time of the no-jump norm from
    |10...0> (probability that no excitation has been removed); for L = 2 it is
    the paper's T1_d (Eq. T1_T2_diss).  Perturbative: J << |dw_1 - dw_n|
    (n = 2..L) or J << G/2 at n = L.
    """
    G = np.asarray(G, dtype=float)
    dw1L = np.asarray(dw1L, dtype=float)
    F = np.asarray(F, dtype=float)
    J = np.asarray(J, dtype=float)
    return (4.0 * dw1L**2 + G**2) / (4.0 * F * J**2 * G) + 0.0


def qubit_tau_dissipation_chain(G, dw, J=1.0):
    """:func:`qubit_tau_dissipation` for the detunings ``dw`` of one realization (site 1 first)."""
    dw = np.asarray(dw, dtype=float)
    return qubit_tau_dissipation(G, dw[0] - dw[-1], chain_factor_F(dw, J), J)
