"""Per-step cost of the trajectory engines, and quimb's TEBD at equal accuracy (issues: MPS/sector backends, 13).

For L = 10, 30, 60 (default) and the leakage initial state (ideal conditions,
dissipation reset at 0.5 J so that H_eff is non-Hermitian), prints the cost
per step of dt (default 0.01/J) and per trajectory of

  (a) quimb's TEBD class (order 4, LocalHam1D of the same bond terms),
  (b) the lean MPS kernel with the same order, dt and absolute cutoff (equal
      accuracy: the same Trotter formula; the deviations from the sector
      engine are printed for both),
  (c) the lean MPS kernel at the default settings (lru_mps.defaults.MPS),
      per 1/J of evolution, with its deviation,
  (d) the exact N-sector engine (exact propagation over the same stretch,
      divided by the number of dt steps it replaces),

all after a warm-up stretch so that the bond dimension has grown.

Run:  python benchmarks/engines.py [--lengths 10,30,60] [--steps 50]
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np
from threadpoolctl import threadpool_limits

import quimb.tensor as qtn

from lru_mps.defaults import MPS
from lru_mps.engines.mps import MPSEngine
from lru_mps.engines.mps.tebd import bond_hamiltonians
from lru_mps.engines.sector import SectorPropagator
from lru_mps.physics.conditions import Conditions, Reset
from lru_mps.physics.model import ArraySpec


from lru_mps.physics.initial_states import product_state
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


def bench_lean(spec, real, sites, dt, warm, steps, order=4):
    """ms per step of the lean kernel, and the state after warm + steps steps."""
    st = MPSEngine(dt=dt, order=order).prepare(spec, real).state(sites)
    for _ in range(warm):
        st.evolve(dt)
    t0 = time.perf_counter()
    for _ in range(steps):
        st.evolve(dt)
    return (time.perf_counter() - t0) / steps * 1e3, st


def _pops(p):
    return p / p[0].sum()


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
    ap.add_argument("--lengths", default="10,30,60")
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--warm", type=int, default=200)
    ap.add_argument("--dt", type=float, default=0.01)
    ap.add_argument("--skip-quimb-above", type=int, default=60)
    args = ap.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, python {platform.python_version()}, "
          f"numpy {np.__version__}, quimb {__import__('quimb').__version__}; BLAS threads = 1")
    print(f"(a), (b): dt = {args.dt}/J, order 4, cutoff 1e-12 (abs); (c): defaults {MPS}; warm-up "
          f"{args.warm} steps of dt, timed {args.steps}; |dP|: normalized populations vs the sector engine")
    print(f"{'L':>4} {'quimb ms/step':>13} {'lean ms/step':>12} {'quimb/lean':>10} {'|dP| quimb':>10} "
          f"{'|dP| lean':>10} {'default ms/(1/J)':>16} {'|dP| default':>12} {'sector ms/step':>14} {'chi':>4}")
    with threadpool_limits(1):
        for L in [int(x) for x in args.lengths.split(",")]:
            spec, real, sites = _setup(L)
            lean_ms, st = bench_lean(spec, real, sites, args.dt, args.warm, args.steps)
            s_ms, sec = bench_sector(spec, real, sites, args.dt, args.warm, args.steps)
            ref = _pops(sec.site_populations())
            err = np.abs(_pops(st.site_populations()) - ref).max()
            if L <= args.skip_quimb_above:
                q_ms, qmps = bench_quimb_tebd(spec, real, sites, args.dt, args.warm, args.steps)
                q_err = float("nan")
                if L <= 12:  # quimb's state as a dense vector: its populations
                    v = np.abs(np.asarray(qmps.to_dense()).reshape([3] * L)) ** 2
                    qp = np.array([v.sum(axis=tuple(k for k in range(L) if k != l)) for l in range(L)])
                    q_err = np.abs(_pops(qp) - ref).max()
            else:
                q_ms = q_err = float("nan")
            ddt, dorder = MPS["dt"], MPS["order"]
            n_warm, n_time = int(round(args.warm * args.dt / ddt)), int(round(args.steps * args.dt / ddt))
            d_ms, dst = bench_lean(spec, real, sites, ddt, n_warm, n_time, dorder)
            d_err = np.abs(_pops(dst.site_populations()) - ref).max()
            chi = max(a.shape[2] for a in st.arrs)
            print(f"{L:4d} {q_ms:13.2f} {lean_ms:12.2f} {q_ms / lean_ms:9.1f}x {q_err:10.1e} {err:10.1e} "
                  f"{d_ms / ddt:16.1f} {d_err:12.1e} {s_ms:14.3f} {chi:4d}", flush=True)


if __name__ == "__main__":
    main()
