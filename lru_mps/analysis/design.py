"""The physics of the design search (`lru-mps study design`, docs/physics.md §8 "Designing an LRU").

A candidate LRU is (L, W, J, Ubar, disorder pattern, reset kind, rate G).
It is scored by two numbers of the QEC view (:mod:`lru_mps.analysis.qec`):

``D``      the mean leakage duration in cycles after a leakage event,
           sum_{k>=1} P_star^(1)(k t_c) (smaller: leakage leaves sooner);
``added``  the qubit's Pauli error per cycle with the LRU minus that of a bare
           transmon with the same T1q and Tphi (smaller: the LRU costs the
           coding qubit less).

Both cannot be small at once: a faster reset or a shorter, weaker-disordered
array removes leakage sooner and pulls the qubit's |1> out too.  The design
answer is the Pareto front of (D, added) and the best D under a budget of
added error.

Rates.  The low (stack-propagation) optimum of the L = 2 stack model
(docs/physics.md §9) seeds every kind's rate: G* = 2 J_prop for feedback
(periodic and random), sqrt2 J_prop for dissipation, J_prop = 2 J^2/Ubar; a
candidate's rate is G* times a factor.  At the paper's point 0.375 x 2 J_prop
= 0.03 J, the paper's periodic working point.

The screen's added error (exact per realization, hardware composed in).  In
the one-excitation sector (docs/physics.md §8 "Designing an LRU"; the qubit
mode q is the eigenvector of H1 with the largest weight |psi_1|^2 on site 1):
decay at a uniform 1/T1q multiplies the N = 1 block by e^{-t/T1q}, so it adds
1/T1q to Gamma_1 and 1/(2 T1q) to Gamma_2 exactly; dephasing sqrt(2 kappa_l)
n_l acts on the N = 1 density matrix as Haken-Strobl dephasing (it hops the
excitation incoherently toward the reset site), which :func:`dephased_gamma1`
includes exactly in Gamma_1, and on the coherence's N = 1 amplitude as a
uniform damping kappa = 1/Tphi, so Gamma_2 = Gamma_2(ideal reset,
:func:`ideal_gamma2`) + 1/(2 T1q) + 1/Tphi exactly (uniform Tphi; the screen
takes site 1's).  Per realization
r the curves the QEC study fits are then, after the initial hybridization,

    <n_1>_r(t) = |psi_1|^4 e^{-Gamma_1r t},    2 C_r(t) = |psi_1|^2 e^{-Gamma_2r t}

and the screen fits A e^{-t/T} to their realization averages on the QEC
study's grid and window (T_prop to the end, weights the realizations' spread
over sqrt(R)), so that screen and confirmation compare like with like: the
fitted T1, T2 of an average of exponentials is dominated by the slow
realizations, not the mean rate.  Not in the screen: thermal excitations
(their dispersive shifts dephase the coherence, their blocking slows the
qubit's decay through the array), the Lamb shift of the qubit mode by the
reset (a per-realization frequency shift that dephases the realization
average).  The confirmation (the
QEC study's trajectories) has them all; the study reports where screen and
confirmation differ beyond their errors.
"""

from __future__ import annotations

import math

import numpy as np

from .fitting import fit_exponential, jackknife_error, leave_one_block_out
from .qec import pauli_errors

#: the reset kinds a design can use
KINDS = ("periodic", "random", "dissipation")


def seed_rate(kind: str, J_prop: float) -> float:
    """The L = 2 stack model's low optimum of ``kind`` (units of J, as J_prop): 2 J_prop for feedback (periodic,
    random), sqrt2 J_prop for dissipation (docs/physics.md §9)."""
    if kind == "dissipation":
        return math.sqrt(2.0) * J_prop
    if kind in ("periodic", "random"):
        return 2.0 * J_prop
    raise ValueError(f"reset kind {kind!r}: one of {', '.join(KINDS)}")


def pareto_front(x, y) -> np.ndarray:
    """Indices of the points (x_i, y_i) that no other point dominates, both minimized, sorted by x.

    j dominates i when x_j <= x_i and y_j <= y_i with at least one strict;
    equal points do not dominate each other (both stay).  Non-finite points
    are never on the front and never dominate.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    idx = np.flatnonzero(ok)
    front = []
    for i in idx:
        le = (x[idx] <= x[i]) & (y[idx] <= y[i])
        lt = (x[idx] < x[i]) | (y[idx] < y[i])
        if not np.any(le & lt):
            front.append(i)
    front = np.array(front, dtype=int)
    return front[np.lexsort((y[front], x[front]))] if front.size else front


def composed_rates(gamma1, gamma2, T1q: float, Tphi: float) -> tuple[np.ndarray, np.ndarray]:
    """The qubit mode's (Gamma_1, Gamma_2) with the hardware on top (module docstring): Gamma_1 + 1/T1q
    (``gamma1`` with the dephasing already in, :func:`dephased_gamma1`) and Gamma_2 + 1/(2 T1q) + 1/Tphi (``gamma2``
    of the ideal reset); units of J, T1q and Tphi in 1/J (inf = none)."""
    g_dec = 1.0 / T1q if math.isfinite(T1q) else 0.0
    g_phi = 1.0 / Tphi if math.isfinite(Tphi) else 0.0
    return np.asarray(gamma1, dtype=float) + g_dec, np.asarray(gamma2, dtype=float) + 0.5 * g_dec + g_phi


def dephased_gamma1(dw, J, kind: str, G: float, kappa) -> float:
    """Gamma_1 (units of J) of the qubit mode's removal-free population with dephasing sqrt(2 kappa_l) n_l on every
    site, exact in the one-excitation sector (module docstring).

    The N = 1 density matrix (L x L, column-stacked) evolves with -i[H1, rho], the dephasing
    d rho_ij/dt = -(kappa_i + kappa_j) rho_ij (i != j; Haken-Strobl: it hops the excitation incoherently between
    the modes, toward the reset site) and the reset of the removal-free branch: random feedback
    G (P0 rho P0 - rho), dissipation -(G/2) {Pi, rho}, periodic feedback the map P0 rho P0 every 1/G.  Gamma_1 is
    -Re(lambda) (random, dissipation) or -G ln|mu| (periodic, one period) of the eigenvector with the largest
    overlap with |q><q|.  Without dephasing it is :func:`lru_mps.analysis.rates.exact_rates`'s Gamma_1.
    """
    from scipy.linalg import expm

    dw = np.asarray(dw, dtype=float)
    L = dw.size
    Jb = np.broadcast_to(np.asarray(J, dtype=float), (L - 1,))
    H = np.diag(dw) + np.diag(Jb, 1) + np.diag(Jb, -1)
    E, V = np.linalg.eigh(H)
    qv = V[:, int(np.argmax(V[0] ** 2))]
    k = np.broadcast_to(np.asarray(kappa, dtype=float), (L,))
    I = np.eye(L)
    gen = -1j * (np.kron(I, H) - np.kron(H.T, I))  # vec(A rho B) = (B^T kron A) vec(rho)
    gen = gen + np.diag(-((k[:, None] + k[None, :]) * (1.0 - I)).ravel(order="F"))
    p0 = np.ones(L)
    p0[-1] = 0.0
    P = np.diag(np.kron(p0, p0))
    ref = np.kron(qv, qv)

    def pick(vals, vecs, allowed):
        ov = np.abs(ref.conj() @ vecs) / np.linalg.norm(vecs, axis=0)
        ov[~allowed] = -1.0
        return vals[int(np.argmax(ov))]

    if kind == "periodic":
        lam, R = np.linalg.eig(gen / G)  # exp by the eigenbasis (scipy's expm costs ~10x at L^2 <= 64)
        if np.linalg.cond(R) < 1e8:
            step = (R * np.exp(lam)) @ np.linalg.inv(R)
        else:
            step = expm(gen / G)
        mu, vec = np.linalg.eig(P @ step)
        m = abs(pick(mu, vec, np.abs(mu) > 1e-12))
        return -G * math.log(m) if m > 0 else math.inf
    if kind == "random":
        gen = gen + G * (P - np.eye(L * L))
    elif kind == "dissipation":
        Pi = np.zeros((L, L))
        Pi[-1, -1] = 1.0
        gen = gen - 0.5 * G * (np.kron(I, Pi) + np.kron(Pi.T, I))
    else:
        raise ValueError(f"reset kind {kind!r}: one of {', '.join(KINDS)}")
    lam, vec = np.linalg.eig(gen)
    return float(-pick(lam, vec, np.ones(lam.size, dtype=bool)).real)


def ideal_gamma2(dw, J, kind: str, G: float) -> tuple[float, float]:
    """(|psi_1|^2, Gamma_2) of the qubit mode in ideal conditions, units of J: the exact N = 1 coherence rates of
    :mod:`lru_mps.analysis.rates` (module docstring there), computed directly from L x L eigenproblems.

    The coherence amplitude evolves with H1 - i G Pi (random feedback, the trajectory average), H1 - (i G/2) Pi
    (dissipation, Gamma_2 = Gamma_1/2) or the one-period map P0 exp(-i H1/G) (periodic, Gamma_2 = -G ln|mu|);
    q: the eigenvector with the largest overlap with the qubit mode of H1 (periodic: among the L - 1 nonzero
    eigenvalues of the map).
    """
    dw = np.asarray(dw, dtype=float)
    L = dw.size
    Jb = np.broadcast_to(np.asarray(J, dtype=float), (L - 1,))
    H = np.diag(dw) + np.diag(Jb, 1) + np.diag(Jb, -1)
    E, V = np.linalg.eigh(H)
    q = int(np.argmax(V[0] ** 2))
    qv = V[:, q]

    def pick(vals, vecs, allowed=None):
        ov = np.abs(qv @ vecs) / np.linalg.norm(vecs, axis=0)
        if allowed is not None:
            ov[~allowed] = -1.0
        return vals[int(np.argmax(ov))]

    if kind == "periodic":
        U = (V * np.exp(-1j * E / G)) @ V.T
        U[-1, :] = 0.0
        mu, vec = np.linalg.eig(U)
        keep = np.ones(L, dtype=bool)
        keep[np.argmin(np.abs(mu))] = False
        m = abs(pick(mu, vec, keep))
        return float(V[0, q] ** 2), (-G * math.log(m) if m > 0 else math.inf)
    Hc = H.astype(complex)
    Hc[-1, -1] -= 1j * G if kind == "random" else 0.5j * G
    lam, vec = np.linalg.eig(Hc)
    return float(V[0, q] ** 2), float(-pick(lam, vec).imag)


def qubit_curves(t, weight1, gamma1, gamma2) -> tuple[np.ndarray, np.ndarray]:
    """Per realization (rows) the late curves <n_1>(t) = w^2 e^{-Gamma_1 t} and 2 C(t) = w e^{-Gamma_2 t}, w the
    qubit mode's weight |psi_1|^2 on site 1 (t in 1/J, rates in J)."""
    t = np.asarray(t, dtype=float)[None, :]
    w = np.asarray(weight1, dtype=float)[:, None]
    return w**2 * np.exp(-np.asarray(gamma1)[:, None] * t), w * np.exp(-np.asarray(gamma2)[:, None] * t)


def _fit_tau(t, rows, start: float) -> float:
    """tau of A e^{-t/tau} fitted to the mean of ``rows`` on t >= start, weights std/sqrt(R) (nan if no fit)."""
    mean = rows.mean(axis=0)
    sem = rows.std(axis=0, ddof=1) / math.sqrt(rows.shape[0]) if rows.shape[0] > 1 else None
    fit = fit_exponential(t, mean, sem, t_start=start)
    return float(fit.tau) if fit.ok else math.nan


def screened_qubit_error(t, start: float, t_c: float, weight1, gamma1, gamma2, T1_bare: float, T2_bare: float,
                         blocks: int = 16) -> dict:
    """The screen's qubit error per cycle from per-realization composed rates (module docstring).

    ``t``: the QEC study's time grid (1/J); ``start``: its T1/T2 window start; ``gamma1``, ``gamma2``: composed
    rates per realization (J); T1_bare, T2_bare: the bare transmon's (1/J).  Returns {"T1", "T2" (1/J),
    "T1_error", "T2_error", "added": {eps_1, p_x, p_y, p_z, p_total: {"value", "error"}}, "replicas": the leave-one-block-out
    added p_total} with jackknife errors over ``blocks`` blocks of realizations (the disorder sampling; the rates themselves are exact).
    """
    n1, c2 = qubit_curves(t, weight1, gamma1, gamma2)
    R = n1.shape[0]

    def added(T1, T2):
        lru = pauli_errors(t_c, T1, T2)
        bare = pauli_errors(t_c, T1_bare, T2_bare)
        return {q: lru[q]["value"] - bare[q]["value"] for q in lru}

    T1 = _fit_tau(t, n1, start)
    T2 = _fit_tau(t, c2, start)
    full = added(T1, T2)
    nb = min(blocks, R)
    reps = []
    if nb >= 2:
        for keep in leave_one_block_out(R, nb):
            T1j, T2j = _fit_tau(t, n1[keep], start), _fit_tau(t, c2[keep], start)
            reps.append((T1j, T2j, added(T1j, T2j)))
    def err(values):
        v = np.array(values, dtype=float)
        return float(jackknife_error(v)) if len(v) >= 2 and np.all(np.isfinite(v)) else math.nan

    return {"T1": T1, "T2": T2, "T1_error": err([r[0] for r in reps]), "T2_error": err([r[1] for r in reps]),
            "added": {q: {"value": full[q], "error": err([r[2][q] for r in reps])} for q in full},
            "replicas": np.array([r[2]["p_total"] for r in reps])}


def paired_difference(a: float, b: float, reps_a, reps_b) -> tuple[float, float]:
    """(a - b, its jackknife error) from leave-one-block-out replicas taken on the same blocks (common random
    numbers: the correlation of a and b cancels in the difference)."""
    ra, rb = np.asarray(reps_a, dtype=float), np.asarray(reps_b, dtype=float)
    if ra.shape != rb.shape or ra.size < 2:
        return a - b, math.nan
    return a - b, float(jackknife_error(ra - rb))


def disagreement(x: float, ex: float, y: float, ey: float) -> float:
    """|x - y| / sqrt(ex^2 + ey^2): the distance of two estimates in combined standard errors (nan if unknown)."""
    s = math.hypot(ex, ey) if math.isfinite(ex) and math.isfinite(ey) else math.nan
    if not (math.isfinite(x) and math.isfinite(y)) or not s > 0:
        return math.nan
    return abs(x - y) / s


def best_under(D, added, budget: float) -> int | None:
    """The index of the smallest D among the points with added <= budget (None if none)."""
    D, added = np.asarray(D, dtype=float), np.asarray(added, dtype=float)
    ok = np.flatnonzero(np.isfinite(D) & np.isfinite(added) & (added <= budget))
    return None if ok.size == 0 else int(ok[np.argmin(D[ok])])
