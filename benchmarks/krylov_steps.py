"""Sparse products per unit time: a Krylov (Arnoldi) step against the sector engine's Chebyshev expansion.

The hot leakage rows of a long array (the stack |2> on the qubit and N - 2 thermal |1>'s beside it) live in
N sectors whose spectral width is ~ N U/2 + W, while the state itself has an energy spread of a few J.  A
Krylov space adapts to the state's own spectral measure, so it could step further per sparse product than
Chebyshev, whose cost is set by the width (~ r sparse products per 1/J).  This script measures it: for the
L = 20 realistic array (one realization, seed 3), the leakage start with thermal |1>'s on fixed sites, in
the N = 4, 5, 6 sectors, after --pre (1/J) of evolution from that start, it builds an Arnoldi space of m
vectors of -i H_eff (full reorthogonalization, twice) and finds the longest step dt on a grid whose result
is within --tol (2-norm) of the Chebyshev one; the Krylov cost per 1/J is then m / dt, against Chebyshev's
products per 1/J over --time.  The state's energy spread <H^2> - <H>^2 and the Ritz values' range are
printed beside.  One core.

    python benchmarks/krylov_steps.py
    python benchmarks/krylov_steps.py --sectors 5 --m 20,40,60,100 --pre 30

Measured timings depend on the machine's load: say what else was running.
"""

from __future__ import annotations

import argparse
import os
import platform

import numpy as np
import scipy.linalg as sla
from threadpoolctl import threadpool_limits

from lru_mps.engines.sector.chebyshev import ChebyshevBlock
from lru_mps.engines.sector.state import sector_basis, sector_hamiltonian
from lru_mps.physics.model import ArraySpec

L = 20
#: the thermal |1>'s of the start (0-based sites), the first N - 2 of them
THERMAL_SITES = (4, 9, 15, 12)
#: the steps tried (1/J)
STEPS = np.geomspace(0.02, 5.0, 49)


def start(N: int, H, blk: ChebyshevBlock, pre: float) -> np.ndarray:
    """|2> on site 0 and |1> on the first N - 2 THERMAL_SITES, evolved for ``pre`` and normalized."""
    occ = np.zeros((1, L), np.int8)
    occ[0, 0] = 2
    occ[0, list(THERMAL_SITES[: N - 2])] = 1
    x = np.zeros(H.shape[0], complex)
    x[int(sector_basis(L, N).index_of(occ)[0])] = 1.0
    if pre > 0:
        x = blk.apply(x, pre)
    return x / np.linalg.norm(x)


def arnoldi(H, x: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """(V, Hm): m orthonormal Krylov vectors of A = -i H from x (rows of V) and A's projection Hm (m x m)."""
    A = (-1j * H).tocsr()
    V = np.zeros((m, len(x)), complex)
    Hm = np.zeros((m, m), complex)
    V[0] = x
    for j in range(m - 1):
        p = A @ V[j]
        for _ in range(2):
            c = V[: j + 1].conj() @ p
            p -= c @ V[: j + 1]
            Hm[: j + 1, j] += c
        Hm[j + 1, j] = np.linalg.norm(p)
        V[j + 1] = p / Hm[j + 1, j]
    Hm[:, m - 1] = V.conj() @ (A @ V[m - 1])
    return V, Hm


def measure(N: int, ms: list[int], pre: float, tol: float, t_cheb: float) -> list[dict]:
    spec = ArraySpec.from_user(length=L, conditions="realistic")
    H = sector_hamiltonian(spec, spec.draw_realization(np.random.default_rng(3)), N).tocsr()
    blk = ChebyshevBlock(H)
    x = start(N, H, blk, pre)
    Hx = H @ x
    e = np.vdot(x, Hx).real
    spread = float(np.sqrt(max(np.linalg.norm(Hx) ** 2 - e**2, 0.0)))
    blk.products = 0
    blk.apply(x, t_cheb)
    cheb_per_t = blk.products / t_cheb
    refs = [blk.apply(x, dt) for dt in STEPS]
    V, Hm = arnoldi(H, x, max(ms))
    ritz = np.linalg.eigvals(1j * Hm).real
    out = []
    for m in ms:
        best = 0.0
        for dt, ref in zip(STEPS, refs):
            y = sla.expm(dt * Hm[:m, :m])[:, 0] @ V[:m]
            if np.linalg.norm(y - ref) <= tol:
                best = dt
        out.append({"N": N, "states": H.shape[0], "r": blk.r, "spread": spread, "ritz": (ritz.min(), ritz.max()),
                    "m": m, "dt": best, "krylov_per_t": m / best if best else np.inf, "cheb_per_t": cheb_per_t})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sectors", default="4,5,6", help="N values (2 + thermal excitations, at most 6)")
    ap.add_argument("--m", default="20,40,60,100", help="Krylov dimensions")
    ap.add_argument("--pre", type=float, default=30.0, help="evolution before the step (1/J)")
    ap.add_argument("--tol", type=float, default=1e-10, help="largest 2-norm error of a step")
    ap.add_argument("--time", type=float, default=20.0, help="Chebyshev evolution for its products per 1/J")
    a = ap.parse_args()
    ms = [int(m) for m in a.m.split(",")]
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores; one thread")
    print(f"L = {L} realistic, leakage start + thermal |1>'s at {THERMAL_SITES}, after {a.pre:g}/J, tol {a.tol:g}")
    print(f"{'N':>2} {'states':>8} {'r (J)':>7} {'spread':>7} {'ritz Re range':>17} {'m':>4} {'dt (1/J)':>9} "
          f"{'Krylov/t':>9} {'Cheb/t':>7}")
    with threadpool_limits(1):
        for N in (int(n) for n in a.sectors.split(",")):
            for row in measure(N, ms, a.pre, a.tol, a.time):
                lo, hi = row["ritz"]
                print(f"{N:>2} {row['states']:>8,} {row['r']:>7.1f} {row['spread']:>7.2f} {lo:>8.1f}..{hi:<7.1f} "
                      f"{row['m']:>4} {row['dt']:>9.3f} {row['krylov_per_t']:>9.0f} {row['cheb_per_t']:>7.0f}")


if __name__ == "__main__":
    main()
