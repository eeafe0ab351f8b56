"""The stack's effective model on a hot leakage row: its cost and its error against the full sector.

A hot leakage row of a long array (the stack |2> on the qubit and N - 2 thermal |1>'s) lives in an N sector
whose spectral width is set by the number of doublons (0 .. N/2 of them, ~U apart), while the row itself stays
in the one-doublon manifold P: a hop that breaks the doublon or makes a second one is detuned by |dE| >= ~36 J
(L = 20, realistic), against couplings sqrt(2) J.  Second-order Schrieffer-Wolff perturbation theory gives an
effective H_eff on P alone:

    H_P = P H P + 1/2 sum_q V_aq V_qb [1/(E_a - E_q) + 1/(E_b - E_q)]

(E the configurations' diagonal energies, complex with the decay and dephasing; q the configurations outside
P one hop away).  It keeps the stack's hopping 2 J^2/U and the thermal |1>'s exact first-order hops, at a
fraction of the sector's states and of its spectral width.  This script measures, for one L = 20 realistic
realization (seed 3) and the leakage start with thermal |1>'s on fixed sites, per N:

* the cost: Chebyshev sparse products per 1/J times the matrix's stored entries, full against effective,
  and the wall time per 1/J on one core;
* the stack's band (N = 2, ideal): the effective model's eigenvalues against the full sector's;
* the error: the stack's site profile <n_l = 2>(t) in the normalized state (what a trajectory carries between
  events) over ``--time`` (1/J), and the norm (the probability of no decay or dephasing event so far, which sets
  the trajectory's event times) relative to its value, the largest differences between the full and the
  effective evolution; and where the stack is at the end (its mean site, full and effective).

Measured, not used by the engines: the effective model is a candidate control variate for the hot rows
(docs/benchmarks.md, "The stack's effective model").

    python benchmarks/stack_effective_model.py
    python benchmarks/stack_effective_model.py --sectors 3,4 --time 100

Measured timings depend on the machine's load: say what else was running.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from lru_mps.engines.sector.chebyshev import ChebyshevBlock
from lru_mps.engines.sector.state import sector_basis, sector_hamiltonian
from lru_mps.physics.model import ArraySpec

# the same array and thermal |1>'s (0-based sites, the first N - 2 of them) as the Krylov-step benchmark
from krylov_steps import L, THERMAL_SITES  # noqa: E402  (run as a script: its folder is on sys.path)


def effective_model(H: sp.csr_matrix, doublons: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray, float]:
    """(H_P, the indices of P in the sector, the largest |V_aq / (E_a - E_q)|): second-order Schrieffer-Wolff
    on the one-doublon manifold P of the sector block H."""
    P = doublons == 1
    p_idx = np.nonzero(P)[0]
    q_idx = np.nonzero(~P)[0]
    E = H.diagonal()
    V_pq = H[p_idx][:, q_idx].tocoo()
    denom = E[p_idx][V_pq.row] - E[q_idx][V_pq.col]
    Vc = V_pq.tocsr().real

    def second_order(d):  # 1/2 sum_q V_aq V_qb [1/(E_a - E_q) + 1/(E_b - E_q)] (V real symmetric: V_qb = V_bq)
        W = sp.csr_matrix((V_pq.data.real / d, (V_pq.row, V_pq.col)), shape=V_pq.shape)  # V_aq / (E_a - E_q)
        return 0.5 * (W @ Vc.T + Vc @ W.T)

    # off the diagonal with the real parts of the denominators (the Chebyshev propagator wants real couplings;
    # the losses' share of a denominator is ~1e-3 of it), on the diagonal with the complex ones
    second = second_order(denom.real)
    second = second - sp.diags(second.diagonal()) + sp.diags(second_order(denom).diagonal())
    H_P = (H[p_idx][:, p_idx] + second).tocsr()
    H_P.sum_duplicates()
    H_P.eliminate_zeros()
    return H_P, p_idx, float(np.max(np.abs(V_pq.data / denom))) if V_pq.nnz else 0.0


def start(N: int) -> np.ndarray:
    """The start's occupations: |2> on site 0, |1> on the first N - 2 THERMAL_SITES."""
    occ = np.zeros((1, L), np.int8)
    occ[0, 0] = 2
    occ[0, list(THERMAL_SITES[: N - 2])] = 1
    return occ


def profile(x: np.ndarray, doubled: sp.csr_matrix) -> tuple[np.ndarray, float]:
    """(<n_l = 2> per site in the normalized state, the norm^2: the probability of no event so far) of a sector
    vector; ``doubled`` is the (dim, L) indicator of n_l = 2."""
    w = np.abs(x) ** 2
    return doubled.T @ w / w.sum(), float(w.sum())


def evolve(blk: ChebyshevBlock, x: np.ndarray, times: np.ndarray, doubled) -> tuple[np.ndarray, np.ndarray, float]:
    """(profiles (T, L), norms (T,), seconds) of x evolved by blk to each of ``times``."""
    out, norms, t0, now = [], [], time.perf_counter(), 0.0
    for t in times:
        x = blk.apply(x, t - now) if t > now else x
        now = t
        p, n = profile(x, doubled)
        out.append(p)
        norms.append(n)
    return np.array(out), np.array(norms), time.perf_counter() - t0


def measure(N: int, t_final: float, points: int) -> dict:
    spec = ArraySpec.from_user(length=L, conditions="realistic")
    H = sector_hamiltonian(spec, spec.draw_realization(np.random.default_rng(3)), N).tocsr()
    basis = sector_basis(L, N)
    doublons = (basis.occ == 2).sum(axis=1)
    t0 = time.perf_counter()
    H_P, p_idx, ratio = effective_model(H, doublons)
    build = time.perf_counter() - t0
    times = np.linspace(0.0, t_final, points + 1)[1:]
    x = np.zeros(H.shape[0], complex)
    x[int(basis.index_of(start(N))[0])] = 1.0
    full, eff = ChebyshevBlock(H), ChebyshevBlock(H_P)
    prof_f, norm_f, sec_f = evolve(full, x, times, basis.indicator[2])
    prof_e, norm_e, sec_e = evolve(eff, x[p_idx], times, basis.indicator[2][p_idx])
    return {"N": N, "states": H.shape[0], "nnz": H.nnz, "r": full.r, "P states": len(p_idx), "P nnz": H_P.nnz,
            "P r": eff.r, "ratio": ratio, "build": build,
            "products/t": (full.products / t_final, eff.products / t_final), "s/t": (sec_f / t_final, sec_e / t_final),
            "profile error": float(np.max(np.abs(prof_f - prof_e))),
            "site-1 error": float(np.max(np.abs(prof_f[:, 0] - prof_e[:, 0]))),
            "mean site": tuple(float(p[-1] @ np.arange(1, L + 1) / p[-1].sum()) for p in (prof_f, prof_e)),
            "norm error": float(np.max(np.abs(norm_e / norm_f - 1.0))), "norm": float(norm_f[-1])}


def stack_band() -> dict:
    """The stack alone (N = 2, ideal conditions, the same realization): the effective model's L eigenvalues
    against the full sector's L eigenstates of largest weight on P (the stack's band), their largest difference,
    the band's width and its smallest level spacing."""
    spec = ArraySpec.from_user(length=L, conditions="ideal")
    H = sector_hamiltonian(spec, spec.draw_realization(np.random.default_rng(3)), 2).tocsr()
    H_P, p_idx, _ = effective_model(H, (sector_basis(L, 2).occ == 2).sum(axis=1))
    e, v = np.linalg.eigh(H.toarray().real)
    stack = np.sort(e[np.argsort(-(np.abs(v[p_idx]) ** 2).sum(axis=0))[:L]])
    eff = np.linalg.eigvalsh(H_P.toarray().real)
    return {"error": float(np.max(np.abs(eff - stack))), "width": float(stack[-1] - stack[0]),
            "spacing": float(np.min(np.diff(stack)))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sectors", default="3,4,5,6", help="N values (2 + thermal excitations, at most 6)")
    ap.add_argument("--time", type=float, default=300.0, help="evolution compared (1/J)")
    ap.add_argument("--points", type=int, default=40, help="times compared")
    a = ap.parse_args()
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores; one thread")
    print(f"L = {L} realistic (seed 3), leakage start + thermal |1>'s at {THERMAL_SITES}, to {a.time:g}/J")
    with threadpool_limits(1):
        band = stack_band()
        print(f"the stack's band (N = 2, ideal): width {band['width']:.4f} J, smallest spacing "
              f"{band['spacing']:.2e} J, largest eigenvalue error of the effective model {band['error']:.2e} J")
        print(f"{'N':>2} {'states':>8} {'P':>7} {'r':>6} {'r_P':>6} {'max V/dE':>8} {'cost ratio':>10} "
              f"{'s/(1/J) full':>12} {'eff':>7} {'profile err':>11} {'site-1 err':>10} {'norm rel':>9} "
              f"{'end: mean site of |2> (full, eff)':>34}")
        for N in (int(n) for n in a.sectors.split(",")):
            m = measure(N, a.time, a.points)
            cost = (m["products/t"][0] * (m["states"] + m["nnz"])) / (m["products/t"][1] * (m["P states"] + m["P nnz"]))
            print(f"{N:>2} {m['states']:>8,} {m['P states']:>7,} {m['r']:>6.1f} {m['P r']:>6.1f} {m['ratio']:>8.3f} "
                  f"{cost:>10.1f} {m['s/t'][0]:>12.4f} {m['s/t'][1]:>7.4f} {m['profile error']:>11.2e} "
                  f"{m['site-1 error']:>10.2e} {m['norm error']:>9.2e} "
                  f"{m['mean site'][0]:>22.3f}, {m['mean site'][1]:.3f}")


if __name__ == "__main__":
    main()
