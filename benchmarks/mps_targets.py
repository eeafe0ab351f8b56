"""The four single-core targets of issue 13, with the default MPS settings, each checked against an exact engine.

    1. W = 0, L = 10, dissipation G = 130 J, t = 400/J, ideal, branch, leakage: one trajectory (the branch is the
       ensemble); |dP| against the sector engine.
    2. L = 4, realistic, periodic feedback, 24 trajectories x 3 initial states to t = 100/J, --engine mps;
       ensemble means against the exact engine (same seeds).
    3. W = 0, L = 40, qubit, dissipation G = 0.5 J, t = 100/J: one trajectory, ideal (branch) and realistic
       (sampled, thermal sample); |dP| against the sector engine (same seed).
    4. L = 12, realistic, 4 trajectories x 3 initial states to t = 5/J; |dP| against the sector engine.

Each MPS run goes through :func:`lru_mps.run.simulate.simulate` (what ``lru-mps simulate`` runs), one worker,
one BLAS thread; the time includes everything (realizations, the loop, observables) but numba's loading of the
compiled kernels, which a short warm-up run does first (a few seconds from the cache; ~45 s to compile them
after an install or an edit of the kernels).  Printed: wall time and
CPU time of the process (on a shared, loaded machine the wall time is an upper bound and the CPU time is close
to what an idle core takes), with the load average.

    python benchmarks/mps_targets.py              # all four
    python benchmarks/mps_targets.py --targets 1,4
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

from lru_mps.defaults import MPS  # noqa: E402
from lru_mps.physics.model import ArraySpec  # noqa: E402
from lru_mps.run.result import OBSERVABLE_INIT  # noqa: E402
from lru_mps.run.simulate import simulate  # noqa: E402

TARGETS = {
    "1": ("W=0 L=10 G=130J t=400 branch leakage", dict(length=10, disorder=0, conditions="ideal",
                                                       reset="dissipation", rate="130J"),
          dict(init="leakage", t_final=400.0, trajectories=1, estimator="branch"), "sector", 60.0, 1e-4),
    "2": ("L=4 realistic 24x3 t=100 --engine mps", dict(length=4, conditions="realistic"),
          dict(init="all", t_final=100.0, trajectories=24), "exact", 60.0, 1e-5),
    "3": ("W=0 L=40 qubit G=0.5J t=100 ideal", dict(length=40, disorder=0, conditions="ideal", reset="dissipation",
                                                    rate="0.5J"),
          dict(init="qubit", t_final=100.0, trajectories=1), "sector", 60.0, 1e-4),
    "3r": ("W=0 L=40 qubit G=0.5J t=100 realistic", dict(length=40, disorder=0, conditions="realistic",
                                                         reset="dissipation", rate="0.5J"),
           dict(init="qubit", t_final=100.0, trajectories=1), "sector", 60.0, 1e-4),
    "4": ("L=12 realistic 4x3 t=5", dict(length=12, conditions="realistic"),
          dict(init="all", t_final=5.0, trajectories=4), "sector", 10.0, 1e-4),
}


def deviation(a, b) -> float:
    """Largest difference of the ensemble means: per-site <n_l> and <|2><2|_l> of every initial state, and the
    observables of the run (leakage in the array, qubit population, |coherence|)."""
    dev = 0.0
    for init in a.settings.inits:
        for key in ("site_population", "site_leakage"):
            dev = max(dev, float(np.max(np.abs(a.site_resolved(init, key).mean - b.site_resolved(init, key).mean))))
    for key, init in OBSERVABLE_INIT.items():
        if init in a.settings.inits:
            dev = max(dev, float(np.max(np.abs(a.observable(key).mean - b.observable(key).mean))))
    return dev


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--targets", default="1,2,3,3r,4")
    ap.add_argument("--dt", type=float, default=None, help="instead of the default (for exploring)")
    ap.add_argument("--order", type=int, default=None, help="instead of the default (for exploring)")
    ap.add_argument("--t-final", type=float, default=None, help="instead of the target's (for exploring)")
    args = ap.parse_args(argv)
    options = {k: v for k, v in (("dt", args.dt), ("order", args.order)) if v is not None}
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, python {platform.python_version()}; one BLAS "
          f"thread, one worker; MPS settings {dict(MPS, **options)}")
    print(f"{'target':>40} {'wall s':>7} {'cpu s':>7} {'limit s':>7} {'ref':>6} {'ref s':>6} {'max |dP|':>9} "
          f"{'tol':>6} {'load':>5} {'ok':>3}")
    with threadpool_limits(limits=1, user_api="blas"):
        # load (or compile) the compiled kernels first: the targets time the runs, not numba's start-up
        warm = ArraySpec.from_user(length=4, conditions="realistic")
        for engine in ("mps", "sector", "exact"):
            simulate(warm, engine=engine, init="all", t_final=0.2, time_points=3, trajectories=2, seed=0)
        for key in args.targets.split(","):
            name, model, run, ref_engine, limit, tol = TARGETS[key]
            spec = ArraySpec.from_user(**model)
            kw = dict(run, time_points=101, seed=0)
            if args.t_final:
                kw["t_final"] = args.t_final
            t0, c0 = time.perf_counter(), time.process_time()
            res = simulate(spec, engine="mps", engine_options=options, **kw)
            t_mps, c_mps = time.perf_counter() - t0, time.process_time() - c0
            load = os.getloadavg()[0]
            t0 = time.perf_counter()
            ref = simulate(spec, engine=ref_engine, **kw)
            t_ref = time.perf_counter() - t0
            dev = deviation(res, ref)
            ok = min(t_mps, c_mps) < limit and dev < tol
            print(f"{name:>40} {t_mps:7.1f} {c_mps:7.1f} {limit:7.0f} {ref_engine:>6} {t_ref:6.1f} {dev:9.1e} "
                  f"{tol:6.0e} {load:5.1f} {'yes' if ok else 'NO':>3}", flush=True)


if __name__ == "__main__":
    main()
