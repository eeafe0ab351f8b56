"""The accuracy/cost frontier behind the MPS defaults (Trotter order and dt), against the sector engine.

Realistic cases: L = 12 (default), the paper's disorder and anharmonicity,
realistic hardware (T1, Tphi: the non-Hermitian parts of H_eff) and a thermal
sample of sites 2..L, from the leakage and the coherence initial states
(``--inits``), on ``--realizations`` disorder draws.  Each MPS setting
propagates exp(-i H_eff t) to ``--t-final`` (default 1000/J) and is compared
with the exact fixed-N sector engine on a grid of ``--points`` times: the
largest deviation of the normalized site populations (what the issue's 1e-4
criterion is about).  No jumps or resets: those are exact local operations in
both engines; what differs is the propagation.  Cost: S2 sweeps per 1/J
(what a step costs is proportional to its sweeps: 1, 5 and 9 for orders 2, 4
and 6) and seconds of MPS propagation per 1/J of evolution (one core).

    python benchmarks/convergence.py                                 # the frontier table
    python benchmarks/convergence.py --t-final 100 --cases 4:0.01,6:0.02
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from lru_mps.engines.mps import MPSEngine  # noqa: E402
from lru_mps.engines.sector import SectorPropagator  # noqa: E402
from lru_mps.engines.mps.tebd import trotter_fractions  # noqa: E402
from lru_mps.physics.model import ArraySpec  # noqa: E402
from lru_mps.physics.initial_states import product_state

DEFAULT_CASES = "2:0.005,4:0.04,4:0.03,4:0.02,4:0.015,4:0.01,6:0.04,6:0.03,6:0.025,6:0.02"


def reference(spec, real, sites, grid):
    """Normalized site populations (len(grid), L, 3) from the sector engine."""
    st = SectorPropagator(spec, real).state(sites)
    out, t = [], 0.0
    for t1 in grid:
        st.evolve(t1 - t)
        t = t1
        p = st.site_populations()
        out.append(p / p[0].sum())
    return np.array(out)


def mps_error(spec, real, sites, grid, ref, order, dt, max_bond, cutoff):
    """Largest |dP| on the grid, seconds, largest bond of one MPS propagation with these settings."""
    st = MPSEngine(dt=dt, order=order, max_bond=max_bond, cutoff=cutoff).prepare(spec, real).state(sites)
    err, t = 0.0, 0.0
    t0 = time.perf_counter()
    for k, t1 in enumerate(grid):
        n = int(round((t1 - t) / dt))
        for _ in range(n):
            st.evolve(dt)
        if abs(n * dt - (t1 - t)) > 1e-12:
            st.evolve(t1 - t - n * dt)
        t = t1
        p = st.site_populations()
        err = max(err, float(np.abs(p / p[0].sum() - ref[k]).max()))
    return err, time.perf_counter() - t0, st.diag["max_bond"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--L", type=int, default=12)
    ap.add_argument("--t-final", type=float, default=1000.0)
    ap.add_argument("--points", type=int, default=20)
    ap.add_argument("--realizations", type=int, default=2)
    ap.add_argument("--inits", default="leakage,coherence")
    ap.add_argument("--cases", default=DEFAULT_CASES, help="order:dt pairs")
    ap.add_argument("--max-bond", type=int, default=64)
    ap.add_argument("--cutoff", type=float, default=1e-12)
    ap.add_argument("--conditions", default="realistic")
    ap.add_argument("--temperature", default=None, help="e.g. 0K: no thermal excitations (small bonds, cheap)")
    args = ap.parse_args(argv)
    extra = {} if args.temperature is None else {"temperature": args.temperature}
    spec = ArraySpec.from_user(length=args.L, conditions=args.conditions, reset="periodic", **extra)
    grid = np.linspace(0.0, args.t_final, args.points + 1)[1:]
    problems = []
    for r in range(args.realizations):
        rng = np.random.default_rng(100 + r)
        real = spec.draw_realization(rng)
        levels = spec.thermal_levels(real, rng)
        for init in args.inits.split(","):
            sites = product_state(init, levels)
            problems.append((r, init, real, sites, reference(spec, real, sites, grid)))
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, python {platform.python_version()}; one BLAS thread")
    print(f"L = {args.L}, {args.conditions} (T = {spec.conditions.temperature_K} K), t = {args.t_final:g}/J, {len(problems)} propagations "
          f"({args.realizations} realizations x {args.inits}"
          f"{', thermal samples' if spec.conditions.temperature_K > 0 else ''}), max_bond {args.max_bond}, "
          f"cutoff {args.cutoff:g}; |dP| = largest deviation of normalized populations from the sector engine")
    print(f"{'order':>5} {'dt':>7} {'sweeps/(1/J)':>12} {'max |dP|':>10} {'s per 1/J':>10} {'chi':>4}")
    with threadpool_limits(limits=1, user_api="blas"):
        for case in args.cases.split(","):
            order, dt = int(case.split(":")[0]), float(case.split(":")[1])
            errs, secs, chis = [], [], []
            try:
                for _, _, real, sites, ref in problems:
                    e, s, c = mps_error(spec, real, sites, grid, ref, order, dt, args.max_bond, args.cutoff)
                    errs.append(e)
                    secs.append(s)
                    chis.append(c)
            except Exception as err:  # a dt above the Nyquist limit is refused
                print(f"{order:5d} {dt:7.4g}   refused: {err}")
                continue
            print(f"{order:5d} {dt:7.4g} {len(trotter_fractions(order)) / dt:12.0f} {max(errs):10.2e} {np.mean(secs) / args.t_final:10.4f} "
                  f"{max(chis):4d}", flush=True)


if __name__ == "__main__":
    main()
