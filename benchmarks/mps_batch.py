"""Batched MPS vs unbatched MPS vs quimb's TEBD kernel, per trajectory (issue: Throughput).

L = 30 (default), paper parameters (W = 20 J, Ubar = 50 J, periodic feedback
at the paper's rate), leakage initial state, in ideal conditions (branch
estimator) and realistic ones (T1, T2, temperature: sampled estimator with
jumps and thermal initial states).  All three run the same trajectories with
the same Trotter schedule (the defaults of lru_mps.defaults.MPS unless --dt /
--order say otherwise; absolute cutoff 1e-12), so they are at equal accuracy;
the script prints how far apart they are (largest site-population difference
over the compared trajectories).

    (a) batched   ``run_trajectories(..., batched=True)`` on ``--rows`` trajectory indices, one call
                  (numpy: the compiled row store, mps_batch.py; torch/cupy: the padded store, mps_padded.py)
    (b) unbatched ``run_trajectories(..., batched=False)`` (lean kernel) on ``--unbatched`` of them
    (c) quimb     the same runner with ``kernel='quimb'`` (quimb's ``gate_split_``
                  for every split, no charge blocks) on ``--quimb`` of them

Times are seconds per trajectory over ``--steps`` Trotter steps; (a)/(b)
compares the same indices when ``--unbatched`` equals ``--rows`` (realistic
trajectories differ a lot in bond dimension, so only the same set is a fair
ratio).  ``--backend torch:cuda`` runs (a) on a GPU.

    python benchmarks/mps_batch.py                       # CPU, both conditions
    python benchmarks/mps_batch.py --backend torch:cuda --rows 64,256,1024 --quimb 0
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from lru_mps.defaults import MPS  # noqa: E402
from lru_mps.engines.common.arraylib import ArrayLib  # noqa: E402
from lru_mps.run.settings import make_settings  # noqa: E402
from lru_mps.run.trajectories import run_trajectories  # noqa: E402
from lru_mps.physics.model import ArraySpec  # noqa: E402

DT, ORDER = MPS["dt"], MPS["order"]


def _settings(spec, rows: int, steps: int, kernel: str = "lean"):
    return make_settings(spec, init="leakage", t_final=steps * DT, time_points=2, trajectories=rows, seed=0,
                         engine="mps", engine_options=dict(dt=DT, order=ORDER, cutoff=1e-12, kernel=kernel))


def _pops(rec):
    return rec["leakage"].populations


def bench(L: int, cond: str, rows: int, steps: int, n_unb: int, n_quimb: int, backend: str) -> dict:
    spec = ArraySpec.from_user(length=L, conditions=cond, reset="periodic")
    st = _settings(spec, rows, steps)
    lib = ArrayLib(backend)
    run_trajectories(spec, _settings(spec, 2, 2), range(2), batched=True, backend=backend)  # warm-up (imports, GPU context)
    lib.synchronize()
    t0 = time.perf_counter()
    got = run_trajectories(spec, st, range(rows), batched=True, backend=backend)
    lib.synchronize()
    t_b = (time.perf_counter() - t0) / rows
    out = dict(L=L, conditions=cond, estimator=st.estimator, rows=rows, steps=steps, backend=backend,
               batched_s=t_b, max_bond=int(max(r["leakage"].diagnostics["max_bond"] for r in got)))
    dev = 0.0
    if n_unb:
        t0 = time.perf_counter()
        ref = run_trajectories(spec, st, range(n_unb), batched=False)
        out["unbatched_s"] = (time.perf_counter() - t0) / n_unb
        dev = max(float(np.abs(_pops(got[i]) - _pops(ref[i])).max()) for i in range(n_unb))
        # the batched run's time per trajectory on exactly these indices (when it is a subset)
        out["unbatched_n"] = n_unb
    if n_quimb:
        t0 = time.perf_counter()
        qr = run_trajectories(spec, _settings(spec, rows, steps, kernel="quimb"), range(n_quimb), batched=False)
        out["quimb_s"] = (time.perf_counter() - t0) / n_quimb
        dev = max([dev] + [float(np.abs(_pops(got[i]) - _pops(qr[i])).max()) for i in range(n_quimb)])
    out["max_dev"] = dev
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--L", type=int, default=30)
    ap.add_argument("--conditions", default="ideal,realistic")
    ap.add_argument("--rows", default="144", help="batched trajectory counts, comma-separated")
    ap.add_argument("--steps", type=int, default=100, help="Trotter steps of dt")
    ap.add_argument("--dt", type=float, default=None)
    ap.add_argument("--order", type=int, default=None)
    ap.add_argument("--unbatched", type=int, default=144, help="trajectories for (b)")
    ap.add_argument("--quimb", type=int, default=4, help="trajectories for (c)")
    ap.add_argument("--backend", default="numpy")
    ap.add_argument("--json", help="write the rows to this file")
    args = ap.parse_args(argv)
    global DT, ORDER
    DT, ORDER = args.dt or DT, args.order or ORDER
    results = []
    with threadpool_limits(limits=1, user_api="blas"):
        for cond in args.conditions.split(","):
            for i, rows in enumerate(int(r) for r in args.rows.split(",")):
                first = i == 0
                res = bench(args.L, cond, rows, args.steps, min(args.unbatched, rows) if first else 0,
                            args.quimb if first else 0, args.backend)
                results.append(res)
                print(json.dumps(res), flush=True)
    import numpy

    print(f"\nmachine: {platform.machine()}, {os.cpu_count()} cores, python {platform.python_version()}, "
          f"numpy {numpy.__version__}; BLAS threads = 1; backend {args.backend}")
    print(f"L = {args.L}, leakage, {args.steps} steps of dt = {DT}/J, order {ORDER}, cutoff 1e-12 (abs); "
          "s per trajectory")
    print(f"{'conditions':>10} {'rows':>5} {'batched':>9} {'unbatched':>10} {'quimb':>8} {'unb/batch':>10} "
          f"{'quimb/batch':>12} {'quimb/unb':>10} {'chi':>4} {'max|dP|':>9}")
    for r in results:
        b, u, q = r["batched_s"], r.get("unbatched_s", np.nan), r.get("quimb_s", np.nan)
        print(f"{r['conditions']:>10} {r['rows']:>5} {b:9.3f} {u:10.3f} {q:8.3f} {u / b:9.1f}x {q / b:11.1f}x "
              f"{q / u:9.1f}x {r['max_bond']:>4} {r['max_dev']:9.1e}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)


if __name__ == "__main__":
    main()
