"""A routing point at temperature from the natural thermal sample against the cost-aware one (``thermal_sample``).

One point of the routing study (a grid's layout, one start site, realistic conditions at a temperature), run as
the study runs it (every start, sampled rows with the decay integrated out, the study's t_final), with the
thermal start drawn either from the natural Gibbs sample or by number at cost-aware odds (``cost``:
lru_mps.run.thermal_number).  Per run: the fitted T_star, T1, T2 and the leakage lifetimes tau_1, tau_L (1/J)
with their errors and the CPU seconds (one process, one BLAS thread); per arm over the seeds the mean error,
the scatter of the estimates, the mean CPU and the figure of merit error^2 x CPU (smaller is better: the
variance one CPU second buys), and the odds' expected share of rows by number of thermal excitations.

    python benchmarks/routing_thermal_sample.py --grid 3x3 --rows 128 --seeds 0 1 2
    python benchmarks/routing_thermal_sample.py --grid 4x4 --rows 64 --seeds 0 --arms cost

Measured timings depend on the machine's load: say what else was running.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

import numpy as np
from threadpoolctl import threadpool_limits

from lru_mps.physics import geometry as geometries
from lru_mps.run.simulate import simulate
from lru_mps.run.thermal_number import build_odds
from lru_mps.run.thermal_sample import nominal_probabilities, number_distribution
from lru_mps.studies.base import study_defaults
from lru_mps.studies.common import spec_of
from lru_mps.studies.routing.plan import REALISTIC_RUN, THERMAL_SAMPLES, _t_final, parse_grids
from lru_mps.studies.routing.points import ensemble_numbers

NAMES = ("T_star", "T1", "T2", "leakage_lifetime_qubit", "leakage_lifetime_array")


def point_spec(grid: str, site: int, temperature: str):
    cfg = study_defaults("routing")[0]
    (R, C), = parse_grids(grid)
    g = geometries.lru_grid(R, C, cfg["lrus"], int(cfg["lru_arm"]))
    k = geometries.coding_sites(g)[site]
    spec = spec_of(cfg, geometry=g.relabel(k, list(g.reset_sites)), conditions="realistic", temperature=temperature)
    return cfg, spec


def one(cfg, spec, rows: int, seed: int, arm: str) -> dict:
    t0 = time.process_time()
    res = simulate(spec, init="all", t_final=_t_final(spec, cfg), time_points=int(cfg["time_points"]),
                   trajectories=rows, seed=seed, workers=1, engine=cfg["engine"],
                   thermal_strata=THERMAL_SAMPLES[arm], **REALISTIC_RUN)
    cpu = time.process_time() - t0
    fits, lives, _ = ensemble_numbers(res)
    out = {"arm": arm, "seed": seed, "rows": rows, "cpu_s": cpu}
    for name in NAMES:
        v, e = fits.get(name, (None, None)) if name in ("T_star", "T1", "T2") else \
            ((lives[name].value, lives[name].error) if name in lives else (None, None))
        out[name], out[name + "_err"] = (None if v is None else float(v)), (None if e is None else float(e))
    return out


def summarize(runs: list[dict]) -> list[dict]:
    out = []
    for arm in THERMAL_SAMPLES:
        rs = [r for r in runs if r["arm"] == arm]
        if not rs:
            continue
        row = {"arm": arm, "seeds": len(rs), "cpu_s": float(np.mean([r["cpu_s"] for r in rs]))}
        for name in NAMES:
            v = np.array([r[name] for r in rs if r[name] is not None], float)
            e = np.array([r[name + "_err"] for r in rs if r[name] is not None], float)
            if len(v) == 0:
                continue
            row[name] = float(v.mean())
            row[name + "_err"] = float(e.mean())
            row[name + "_scatter"] = float(v.std(ddof=1)) if len(v) > 1 else None
            row[name + "_merit"] = float(np.mean(e**2) * row["cpu_s"])
        out.append(row)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grid", default="3x3")
    ap.add_argument("--site", type=int, default=0, help="index of the start site among the coding sites")
    ap.add_argument("--temperature", default="100mK")
    ap.add_argument("--rows", type=int, default=128)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--arms", nargs="+", default=list(THERMAL_SAMPLES), choices=list(THERMAL_SAMPLES))
    ap.add_argument("--out", default=None, help="JSON file of every run and the summary")
    a = ap.parse_args()
    print(f"# {platform.machine()} {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}", flush=True)
    cfg, spec = point_spec(a.grid, a.site, a.temperature)
    W = number_distribution(nominal_probabilities(spec), 6)
    q = build_odds(spec.L, number_distribution(nominal_probabilities(spec), 2 * (spec.L - 1)), 2, a.rows).odds[:7]
    print(f"# {a.grid} layout, L = {spec.L}, {a.temperature}: thermal numbers n = 0..6, Gibbs weight / cost odds "
          "(leakage start): " + ", ".join(f"{w:.4f}/{x:.4f}" for w, x in zip(W, q)), flush=True)
    runs = []
    with threadpool_limits(1, "blas"):
        for seed in a.seeds:
            for arm in a.arms:
                r = one(cfg, spec, a.rows, seed, arm)
                runs.append(r)
                cells = "  ".join(f"{n} {r[n]:.4g} +- {r[n + '_err']:.2g}" for n in NAMES if r[n] is not None)
                print(f"seed={seed} {arm:8s} cpu {r['cpu_s']:7.1f} s  {cells}", flush=True)
                if a.out:
                    with open(a.out, "w") as f:
                        json.dump({"runs": runs, "summary": summarize(runs)}, f, indent=1)
    for row in summarize(runs):
        print(json.dumps(row), flush=True)
    print(f"# load {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
