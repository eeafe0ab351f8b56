"""Feedback at high rates: cost per realization vs the reset rate, fast path vs reference path (issue 14).

Case of the issue: L = 3, paper parameters, the leakage initial state,
t = 0..200/J on 201 points, ``--realizations`` disorder realizations (default
20) in one worker process (``run.executors.run_blocks``, up to 16 blocks,
one BLAS thread), for periodic and random feedback at G = 0.03, 3, 30, 100 J:

* ideal conditions (branch estimator): ``feedback="fast"`` (the store's
  feedback trains: matrix powers of the periodic map, random feedback in the
  eigenbasis) and ``feedback="reference"`` (one loop stop per measurement),
  with the largest difference of the mean leakage of the two paths;
* realistic conditions (sampled estimator, one stop per measurement: draws
  and clocks vectorized): the cost per unit of simulated time relative to
  G = 0.03 J.

Run:  python benchmarks/feedback.py                       (a few minutes on one core)
      python benchmarks/feedback.py --skip-reference      (the fast path only)
      python benchmarks/feedback.py --sweep               (also time `lru-mps study rate-sweep --length 3
                                                            --realizations 1500` on all cores)
      PYTHONPATH=<checkout of main> python benchmarks/feedback.py --save main.npz; then
      python benchmarks/feedback.py --compare main.npz    (before/after, and the curves' largest difference)

The script runs on older versions of the package too (without the
``feedback`` setting it runs the only path there is), e.g. with
PYTHONPATH pointing at a checkout of main, for a before/after table.
Timings on a shared machine are upper bounds: the load average is printed.
"""

from __future__ import annotations

import argparse
import inspect
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np
from threadpoolctl import threadpool_limits

from lru_mps.physics.model import ArraySpec
from lru_mps.run.executors import run_blocks
from lru_mps.run.result import assemble
from lru_mps.run.settings import make_settings

T_FINAL, POINTS = 200.0, 201
HAS_PATHS = "feedback" in inspect.signature(make_settings).parameters


def run_case(kind: str, rate: float, conditions: str, realizations: int, path: str | None):
    """(wall seconds, mean leakage curve) of one ensemble."""
    spec = ArraySpec.from_user(length=3, reset=kind, rate=f"{rate}J", conditions=conditions)
    extra = {"feedback": path} if (HAS_PATHS and path) else {}
    settings = make_settings(spec, init="leakage", t_final=T_FINAL, time_points=POINTS, trajectories=realizations,
                             seed=0, **extra)
    t0 = time.perf_counter()
    with threadpool_limits(limits=1, user_api="blas"):
        res = assemble(spec, settings, run_blocks(spec, settings, workers=1))
    return time.perf_counter() - t0, res.observable("leakage_array").mean


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--realizations", type=int, default=20)
    ap.add_argument("--rates", default="0.03,3,30,100", help="feedback rates G in J")
    ap.add_argument("--kinds", default="periodic,random")
    ap.add_argument("--skip-reference", action="store_true", help="ideal conditions: time the fast path only")
    ap.add_argument("--skip-realistic", action="store_true")
    ap.add_argument("--sweep", action="store_true", help="also time the full rate sweep (several minutes)")
    ap.add_argument("--save", help="write the mean leakage curves to this .npz (to compare runs of two versions)")
    ap.add_argument("--compare", help="a .npz of --save: print the largest difference of the mean leakage to it")
    args = ap.parse_args()
    rates = [float(r) for r in args.rates.split(",")]
    kinds = args.kinds.split(",")
    print(f"python {platform.python_version()}, numpy {np.__version__}, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.2f} at start; package: {os.path.dirname(inspect.getfile(make_settings))}")
    print(f"L = 3, leakage initial state, t = 0..{T_FINAL:g}/J on {POINTS} points, {args.realizations} realizations, "
          "one worker, one BLAS thread\n")

    paths = ["fast"] + ([] if args.skip_reference else ["reference"]) if HAS_PATHS else [None]
    saved: dict[str, np.ndarray] = {}
    other = dict(np.load(args.compare)) if args.compare else {}

    def keep(key: str, curve: np.ndarray) -> str:
        saved[key] = curve
        return f"   vs --compare: {np.max(np.abs(curve - other[key])):.2g}" if key in other else ""

    print("ideal conditions (branch estimator)")
    print(f"{'kind':>9} {'G (J)':>7} " + " ".join(f"{(p or 'main') + ' s':>12} {'s/real.':>8}" for p in paths)
          + ("   max |fast - ref| of the mean leakage" if len(paths) == 2 else ""))
    for kind in kinds:
        for G in rates:
            cells, curves = [], []
            for p in paths:
                wall, curve = run_case(kind, G, "ideal", args.realizations, p)
                cells.append(f"{wall:12.2f} {wall / args.realizations:8.3f}")
                curves.append(curve)
            diff = f"   {np.max(np.abs(curves[0] - curves[1])):.2g}" if len(curves) == 2 else ""
            diff += keep(f"ideal-{kind}-{G:g}", curves[0])
            print(f"{kind:>9} {G:7.3g} " + " ".join(cells) + diff, flush=True)

    if not args.skip_realistic:
        print("\nrealistic conditions (sampled estimator; cost per unit of simulated time relative to the lowest rate)")
        print(f"{'kind':>9} {'G (J)':>7} {'s':>9} {'s/real.':>8} {'x lowest':>9}")
        for kind in kinds:
            low = None
            for G in rates:
                wall, curve = run_case(kind, G, "realistic", args.realizations, None)
                low = wall if low is None else low
                print(f"{kind:>9} {G:7.3g} {wall:9.2f} {wall / args.realizations:8.3f} {wall / low:9.2f}"
                      + keep(f"realistic-{kind}-{G:g}", curve), flush=True)

    if args.save:
        np.savez(args.save, **saved)
    if args.sweep:
        with tempfile.TemporaryDirectory() as out:
            cmd = [sys.executable, "-m", "lru_mps_cli.main", "study", "rate-sweep", "--length", "3",
                   "--realizations", "1500", "--out", out]
            print(f"\n{' '.join(cmd[2:])}: load average {os.getloadavg()[0]:.2f} at start", flush=True)
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            print(f"rate sweep, 1500 realizations, {os.cpu_count()} workers: {time.perf_counter() - t0:.0f} s wall, "
                  f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
