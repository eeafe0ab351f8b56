"""Per-step cost of the trajectory engines (issue: MPS/sector backends).

For L = 10, 30, 60, 100 and the leakage initial state (ideal conditions,
dissipation reset at 0.5 J so that H_eff is non-Hermitian), prints ms per
time step of dt = 0.01/J per trajectory for

  (a) quimb's TEBD class (order 4, LocalHam1D of the same bond terms),
  (b) the lean MPS kernel (order 4, same dt, same absolute cutoff),
  (c) the exact N-sector engine (exact propagation over the same stretch,
      divided by the number of dt steps it replaces),

all after a warm-up stretch so that the bond dimension has grown.  The MPS
runs agree with the sector engine to ~1e-7 on these stretches (printed).

Run:  python benchmarks/engines.py [--lengths 10,30,60,100] [--steps 100]
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np
from threadpoolctl import threadpool_limits

import quimb.tensor as qtn

from lru_mps.engines.mps import MPSEngine, bond_hamiltonians
from lru_mps.engines.sector import SectorPropagator
from lru_mps.physics.model import ArraySpec, Conditions, Reset, product_state


def _setup(L):
    spec = ArraySpec(L=L, reset=Reset("dissipation", 0.5), conditions=Conditions())
    real = spec.draw_realization(np.random.default_rng(L))
    sites = product_state("leakage", np.zeros(L, int))
    return spec, real, sites


def bench_quimb_tebd(spec, real, sites, dt, warm, steps):
    h = bond_hamiltonians(spec, real)
    H = qtn.LocalHam1D(spec.L, H2={(b, b + 1): h[b] for b in range(spec.L - 1)})
    p0 = qtn.MPS_product_state([np.asarray(v, complex) for v in sites])
    tebd = qtn.TEBD(p0, H, dt=dt, split_opts={"cutoff": 1e-12, "cutoff_mode": "abs"}, progbar=False)
    for _ in range(warm):
        tebd.step(order=4, dt=dt)
    t0 = time.perf_counter()
    for _ in range(steps):
        tebd.step(order=4, dt=dt)
    return (time.perf_counter() - t0) / steps * 1e3, tebd.pt


def bench_lean(spec, real, sites, dt, warm, steps):
    st = MPSEngine(dt=dt, order=4).prepare(spec, real).state(sites)
    for _ in range(warm):
        st.evolve(dt)
    t0 = time.perf_counter()
    for _ in range(steps):
        st.evolve(dt)
    return (time.perf_counter() - t0) / steps * 1e3, st


def bench_sector(spec, real, sites, dt, warm, steps, grid_every=10):
    """Exact propagation over warm+steps dt, stopping every ``grid_every`` steps like a recorded grid."""
    prop = SectorPropagator(spec, real)
    st = prop.state(sites)
    st.evolve(warm * dt)  # includes building and diagonalizing the sector once
    t0 = time.perf_counter()
    for _ in range(steps // grid_every):
        st.evolve(grid_every * dt)
        st.site_populations()
    return (time.perf_counter() - t0) / steps * 1e3, st


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lengths", default="10,30,60,100")
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--warm", type=int, default=200)
    ap.add_argument("--dt", type=float, default=0.01)
    ap.add_argument("--skip-quimb-above", type=int, default=60)
    args = ap.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, python {platform.python_version()}, "
          f"numpy {np.__version__}, quimb {qtn.__name__ and __import__('quimb').__version__}; BLAS threads = 1")
    print(f"dt = {args.dt}/J, order 4, cutoff 1e-12 (abs), warm-up {args.warm} steps, timed {args.steps} steps")
    print(f"{'L':>4} {'quimb TEBD':>12} {'lean MPS':>10} {'sector':>10} {'lean/quimb':>11} {'sector/lean':>12} "
          f"{'chi':>4} {'|mps-sector|':>13}")
    with threadpool_limits(1):
        for L in [int(x) for x in args.lengths.split(",")]:
            spec, real, sites = _setup(L)
            lean_ms, st = bench_lean(spec, real, sites, args.dt, args.warm, args.steps)
            if L <= args.skip_quimb_above:
                q_ms, _ = bench_quimb_tebd(spec, real, sites, args.dt, args.warm, args.steps)
            else:
                q_ms = float("nan")
            s_ms, sec = bench_sector(spec, real, sites, args.dt, args.warm, args.steps)
            err = np.abs(st.site_populations() - sec.site_populations()).max()
            chi = max(a.shape[2] for a in st.arrays)
            print(f"{L:4d} {q_ms:10.2f}ms {lean_ms:8.2f}ms {s_ms:8.3f}ms {q_ms / lean_ms:10.1f}x "
                  f"{lean_ms / s_ms:11.1f}x {chi:4d} {err:13.1e}", flush=True)


if __name__ == "__main__":
    main()
