"""Scaling with workers and on Dask, and memory (issue: throughput and scale-out).

1. The same run (L = 4, paper parameters, realistic conditions, periodic
   feedback, 256 trajectories to tJ = 400) with 1 and 2 local worker
   processes, and on a dask.distributed LocalCluster with 2 single-threaded
   worker processes; prints the wall times, the parallel efficiency
   t1 / (2 t2) and the Dask overhead t_dask / t2 - 1, and checks that the
   three results are bit-identical.
2. Peak resident memory (ru_maxrss) of one process running L = 100 ideal
   branch trajectories with the N = 2 sector engine and a short MPS run, at
   two trajectory counts, to show that nothing grows with the number of
   trajectories beyond the stored means (statistics are streamed sums).

Run:  python benchmarks/scaling.py   (needs dask[distributed] for part 1c)
"""

from __future__ import annotations

import platform
import subprocess
import sys
import time

import numpy as np


def part1():
    from lru_mps.run.simulate import simulate
    from lru_mps.physics.model import ArraySpec

    spec = ArraySpec.from_user(length=4, conditions="realistic", rate="0.03J")
    kw = dict(trajectories=256, t_final=400.0, time_points=41, seed=2)
    out = {}
    for label, extra in (("1 worker", {"workers": 1}), ("2 workers", {"workers": 2})):
        t0 = time.perf_counter()
        res = simulate(spec, **kw, **extra)
        out[label] = (time.perf_counter() - t0, res)
    try:
        from dask.distributed import Client, LocalCluster

        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, Client(
            cluster
        ) as client:
            client.run(lambda: __import__("lru_mps.run.simulate"))  # warm imports on the workers
            t0 = time.perf_counter()
            res = simulate(spec, client=client, **kw)
            out["dask 2 workers"] = (time.perf_counter() - t0, res)
    except ImportError:
        print("dask.distributed not installed: pip install 'lru-mps[dask]'")
    base = out["1 worker"][1].observable("qubit_population").mean
    for label, (t, res) in out.items():
        same = np.array_equal(res.observable("qubit_population").mean, base)
        print(f"{label:16s} {t:7.2f} s   {kw['trajectories'] / t:7.1f} traj/s   bit-identical: {same}")
    t1, t2 = out["1 worker"][0], out["2 workers"][0]
    print(f"parallel efficiency 1 -> 2 workers: {t1 / (2 * t2):.0%}")
    if "dask 2 workers" in out:
        print(f"Dask LocalCluster overhead vs process pool: {out['dask 2 workers'][0] / t2 - 1:+.0%}")


_MEM = r"""
import resource, sys
from lru_mps.run.simulate import simulate
from lru_mps.physics.model import ArraySpec
engine, n = sys.argv[1], int(sys.argv[2])
spec = ArraySpec.from_user(length=100, conditions="ideal", reset="dissipation", rate="0.04J")
opts = {"dt": 0.01, "order": 4} if engine == "mps" else {}
t_final = 2000.0 if engine == "sector" else 0.5
simulate(spec, trajectories=n, t_final=t_final, time_points=101, init="leakage", engine=engine, engine_options=opts,
         estimator="branch")
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def part2():
    for engine, counts in (("sector", (2, 8)), ("mps", (1, 3))):
        for n in counts:
            out = subprocess.run([sys.executable, "-c", _MEM, engine, str(n)], capture_output=True, text=True)
            print(f"L = 100 {engine:6s} {n:3d} trajectories: peak RSS {float(out.stdout.strip() or 'nan'):7.1f} MB"
                  + ("" if out.returncode == 0 else f"  (failed: {out.stderr[-200:]})"))


if __name__ == "__main__":
    print(f"machine: {platform.machine()}, {__import__('os').cpu_count()} cores, python {platform.python_version()}")
    part1()
    part2()
