"""Convergence study behind the MPS defaults (dt, order, max_bond, cutoff).

One trajectory (branch estimator, ideal conditions, dissipation at the low
optimum 0.04 J, the paper's disorder) from the leakage and the coherence
initial states on L = 12, evolved to t = 40/J with the MPS engine and with the
exact sector engine; prints the largest deviation of the recorded observables
(site populations and the coherence) and the time per trajectory.

Run:  python benchmarks/convergence.py
"""

from __future__ import annotations

import time

import numpy as np
from threadpoolctl import threadpool_limits

from lru_mps.run.settings import RunSettings, time_grid
from lru_mps.run.trajectories import run_trajectories
from lru_mps.physics.model import ArraySpec, Conditions, Reset


def run(spec, engine, opts, times, inits=("leakage", "coherence")):
    settings = RunSettings(times=times, seed=1, engine=engine, estimator="branch", inits=inits, engine_options=opts)
    t0 = time.perf_counter()
    (recs,) = run_trajectories(spec, settings, [0], batched=False)
    return recs, time.perf_counter() - t0


def main():
    L, t_final = 12, 40.0
    spec = ArraySpec(L=L, reset=Reset("dissipation", 0.04), conditions=Conditions())
    times = time_grid(t_final, 9)
    with threadpool_limits(1):
        ref, t_ref = run(spec, "sector", {}, times)
        print(f"L = {L}, t = {t_final}/J, reference: sector engine ({t_ref:.2f} s)")
        print(f"{'order':>5} {'dt':>7} {'max_bond':>8} {'cutoff':>8} {'max |dev|':>10} {'chi':>4} {'s/traj':>7}")
        cases = [(2, dt, 64, 1e-12) for dt in (0.02, 0.01, 0.005)]
        cases += [(4, dt, 64, 1e-12) for dt in (0.04, 0.02, 0.01, 0.005)]
        cases += [(4, 0.01, chi, 1e-12) for chi in (4, 8, 16)]
        cases += [(4, 0.01, 64, cut) for cut in (1e-8, 1e-10)]
        for order, dt, chi, cut in cases:
            try:
                recs, t_run = run(spec, "mps", {"dt": dt, "order": order, "max_bond": chi, "cutoff": cut}, times)
            except Exception as err:  # a dt above the Nyquist limit is refused
                print(f"{order:5d} {dt:7.3f} {chi:8d} {cut:8.0e}   refused: {err}")
                continue
            dev = max(
                max(np.abs(recs[k].populations - ref[k].populations).max(), np.abs(recs[k].coherence - ref[k].coherence).max())
                for k in recs
            )
            used = max(recs[k].diagnostics["max_bond"] for k in recs)
            print(f"{order:5d} {dt:7.3f} {chi:8d} {cut:8.0e} {dev:10.2e} {used:4d} {t_run:7.2f}", flush=True)


if __name__ == "__main__":
    main()
