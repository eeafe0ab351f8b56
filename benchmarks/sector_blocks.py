"""Eigendecomposition against Chebyshev for the sector engine's blocks under 1000 states (the rule eig_pays).

For each block (a chain's or a routing layout's N sector, one realization at 100 mK): the time of its
eigendecomposition as the engine builds it (BlockPropagator: eig, inverse, condition bound; best of 2), the time
of one Chebyshev sparse product (50 stops of --stop 1/J from a random vector), their ratio, the EIG_COST that
ratio implies (eig time / product time x (d + nnz) / d^3, which the rule takes as 2), the horizon t where both
cost the same under the rule, and what the rule picks at --horizons (cheb*: over EIG_MAX_DIM, Chebyshev at any
horizon).  One core.

With --conditions ideal: a chain's N = 2 block at 0 K (real symmetric, L = 30-80: 465-3240 states), its real
eigh as the engine builds it (BlockPropagator of the real matrix), the time of one stop of a row (a real
matrix-vector pass with V and V^T: evolve_real_eigen), one Chebyshev product, the EIG_COST_REAL and
EIG_STOP_COST_REAL they imply (eigh / product x (d + nnz) / d^3; stop / product x (d + nnz) / d^2), the horizon
where the rule finds both equal with --points time points and G t measurements as the stops, and what it picks.

    python benchmarks/sector_blocks.py
    python benchmarks/sector_blocks.py --horizons 100,940,16000
    python benchmarks/sector_blocks.py --conditions ideal --horizons 2000,13250,20750

Measured timings depend on the machine's load: say what else was running.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
from threadpoolctl import threadpool_limits

from lru_mps.engines.common.eigen import BlockPropagator, evolve_real_eigen
from lru_mps.engines.sector.chebyshev import ChebyshevBlock, scale_radius, spectral_bounds
from lru_mps.engines.sector.engine import EIG_COST, EIG_MAX_DIM, eig_pays, sector_hamiltonian
from lru_mps.engines.sector.state import EIG_COST_REAL, EIG_REAL_DIM_FACTOR, EIG_STOP_COST_REAL
from lru_mps.physics import geometry as G
from lru_mps.physics.model import ArraySpec

#: (label, layout: chain length or grid side, N)
BLOCKS = (("chain L=12", 12, 3), ("chain L=14", 14, 3), ("chain L=16", 16, 3), ("chain L=40", 40, 2),
          ("grid 5x5", "5x5", 2), ("grid 3x3", "3x3", 3), ("grid 2x2", "2x2", 4))
#: the ideal chains' N = 2 blocks (--conditions ideal): lengths
IDEAL_LENGTHS = (30, 40, 50, 60, 80)


def _spec(layout) -> ArraySpec:
    if isinstance(layout, int):
        return ArraySpec.from_user(length=layout, conditions="realistic", temperature="100mK")
    R = int(layout.split("x")[0])
    g = G.lru_grid(R, R, "corners", 2)
    return ArraySpec.from_user(geometry=g.relabel(G.coding_sites(g)[0], list(g.reset_sites)), conditions="realistic",
                               temperature="100mK")


def bench(layout, N: int, stop: float) -> dict:
    spec = _spec(layout)
    H = sector_hamiltonian(spec, spec.draw_realization(np.random.default_rng(3)), N)
    d = H.shape[0]
    eig = []
    for _ in range(2):
        t0 = time.perf_counter()
        BlockPropagator(H.toarray())
        eig.append(time.perf_counter() - t0)
    product = _product_s(H, stop)
    r = scale_radius(*spectral_bounds(H))
    return {"d": d, "nnz": H.nnz, "eig_s": min(eig), "product_us": 1e6 * product, "ratio": min(eig) / product,
            "eig_cost": min(eig) / product * (d + H.nnz) / d**3, "r": r,
            "even_t": EIG_COST * d**3 / (d + H.nnz) / r, "H": H}


def _product_s(H, stop: float) -> float:
    """Seconds per sparse product of the compiled Chebyshev kernel on H (50 stops of ``stop`` 1/J)."""
    blk = ChebyshevBlock(H)
    x = np.random.default_rng(1).normal(size=H.shape[0]) + 0j
    y = blk.apply(x / np.linalg.norm(x), stop)  # (compiled kernel warm)
    blk.products = 0
    t0 = time.perf_counter()
    for _ in range(50):
        y = blk.apply(y, stop)
    return (time.perf_counter() - t0) / blk.products


def bench_ideal(L: int, stop: float, points: int) -> dict:
    """A chain's ideal N = 2 block: real eigh, one stop and one product, and the constants they imply."""
    spec = ArraySpec.from_user(length=L, conditions="ideal")
    H = sector_hamiltonian(spec, spec.draw_realization(np.random.default_rng(3)), 2)
    d, G = H.shape[0], spec.reset.rate
    t0 = time.perf_counter()
    blk = BlockPropagator(H.real.toarray())
    eigh = time.perf_counter() - t0
    assert blk.real
    x = np.random.default_rng(2).normal(size=d) + 0j
    evolve_real_eigen(blk.V, blk.lam, x, stop)
    t0 = time.perf_counter()
    for _ in range(20):
        x = evolve_real_eigen(blk.V, blk.lam, x, stop)
    apply = (time.perf_counter() - t0) / 20
    product, r = _product_s(H, stop), scale_radius(*spectral_bounds(H))
    A, B = EIG_COST_REAL * d**3 / (d + H.nnz), EIG_STOP_COST_REAL * d**2 / (d + H.nnz)
    return {"d": d, "nnz": H.nnz, "eigh_s": eigh, "stop_ms": 1e3 * apply, "product_us": 1e6 * product, "r": r,
            "eig_cost": eigh / product * (d + H.nnz) / d**3, "stop_cost": apply / product * (d + H.nnz) / d**2,
            "even_t": (A + B * points) / (r - B * G), "H": H, "G": G}


def main_ideal(args, horizons) -> None:
    print(f"# {platform.machine()} {platform.processor() or ''}, {os.cpu_count()} CPUs, one BLAS thread; "
          f"EIG_COST_REAL = {EIG_COST_REAL}, EIG_STOP_COST_REAL = {EIG_STOP_COST_REAL}, {args.points} time points")
    print(f"{'block':12s} {'d':>5s} {'nnz':>6s} {'eigh s':>7s} {'stop ms':>8s} {'product us':>10s} "
          f"{'EIG_COST_REAL':>13s} {'STOP_COST':>9s} {'r':>6s} {'even t':>7s}  "
          + "  ".join(f"t={h:g}" for h in horizons))
    with threadpool_limits(limits=1, user_api="blas"):
        for L in IDEAL_LENGTHS:
            b = bench_ideal(L, args.stop, args.points)
            over = b["d"] > EIG_REAL_DIM_FACTOR * EIG_MAX_DIM
            picks = "  ".join(("cheb*" if over else "eig" if eig_pays(b["H"], h, args.points + b["G"] * h)
                               else "cheb").rjust(len(f"t={h:g}")) for h in horizons)
            print(f"{f'chain L={L}':12s} {b['d']:5d} {b['nnz']:6d} {b['eigh_s']:7.3f} {b['stop_ms']:8.3f} "
                  f"{b['product_us']:10.1f} {b['eig_cost']:13.2f} {b['stop_cost']:9.2f} {b['r']:6.1f} "
                  f"{b['even_t']:7.0f}  {picks}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stop", type=float, default=20.0, help="time per Chebyshev stop, 1/J")
    ap.add_argument("--horizons", default="940,16000", help="run horizons t_final (1/J) at which to show the choice")
    ap.add_argument("--conditions", choices=("realistic", "ideal"), default="realistic",
                    help="realistic: the blocks under 1000 states at 100 mK; ideal: the chains' real N = 2 blocks")
    ap.add_argument("--points", type=int, default=201, help="time points of the run (ideal: stops priced)")
    args = ap.parse_args()
    horizons = [float(h) for h in args.horizons.split(",")]
    if args.conditions == "ideal":
        return main_ideal(args, horizons)
    print(f"# {platform.machine()} {platform.processor() or ''}, {os.cpu_count()} CPUs, one BLAS thread; "
          f"EIG_COST = {EIG_COST}")
    print(f"{'block':12s} {'N':>2s} {'d':>5s} {'nnz':>6s} {'eig s':>7s} {'product us':>10s} {'eig/product':>11s} "
          f"{'EIG_COST':>8s} {'r':>6s} {'even t':>7s}  " + "  ".join(f"t={h:g}" for h in horizons))
    with threadpool_limits(limits=1, user_api="blas"):
        for label, layout, N in BLOCKS:
            b = bench(layout, N, args.stop)
            over = b["d"] > EIG_MAX_DIM  # (Chebyshev at any horizon: over the eigendecomposition's limit)
            picks = "  ".join(("cheb*" if over else "eig" if eig_pays(b["H"], h) else "cheb").rjust(len(f"t={h:g}"))
                              for h in horizons)
            print(f"{label:12s} {N:2d} {b['d']:5d} {b['nnz']:6d} {b['eig_s']:7.3f} {b['product_us']:10.1f} "
                  f"{b['ratio']:11,.0f} {b['eig_cost']:8.2f} {b['r']:6.1f} {b['even_t']:7.0f}  {picks}")


if __name__ == "__main__":
    main()
