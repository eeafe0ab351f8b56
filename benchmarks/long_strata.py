"""The leakage lifetimes of a long array from its natural thermal sample against the sample by strata.

A realistic array of L sites at 100 mK, leakage start, the hardware decay integrated out (``integrate_decay``),
t_final = (L - 1) T_prop + 40 us: the same number of rows drawn (a) from the natural Gibbs sample of sites 2..L,
(b) by strata (``thermal_strata = "all"``: the configurations of sites 2..7, the sites after them natural;
docs/physics.md §6.5), (c) by strata with the excited strata's allocation scaled by ``--odds`` (``leakage_thermal_odds``; a Neyman
allocation n_s ~ W_s sigma_s / sqrt(c_s) takes fewer excited rows where they cost much more than they spread).  Per run: tau_1 and tau_L (1/J) with their jackknife errors and the
CPU seconds (one process, one BLAS thread); the figure of merit is error^2 x CPU seconds (the variance one CPU
second buys: smaller is better).  Over several seeds also the scatter of each estimate against the mean error
it reports (their calibration).

    python benchmarks/long_strata.py --lengths 10 --rows 256 --seeds 0 1 2 3
    python benchmarks/long_strata.py --lengths 16 --rows 128 --seeds 0 --arms natural strata

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

from lru_mps.analysis.lifetimes import leakage_lifetimes
from lru_mps.physics.model import ArraySpec
from lru_mps.physics.units import to_time
from lru_mps.run.simulate import simulate
from lru_mps.run.trajectories import draw

#: arm -> run options
ARMS = {"natural": {}, "strata": {"thermal_strata": "all"}, "strata_odds": {"thermal_strata": "all"}}


def one(L: int, rows: int, seed: int, arm: str, odds: float, temperature: str) -> dict:
    spec = ArraySpec.from_user(length=L, conditions="realistic", temperature=temperature)
    tf = (L - 1) * spec.T_prop + to_time("40us", "t", spec.J_hz)
    opts = dict(ARMS[arm])
    if arm == "strata_odds":
        opts["leakage_thermal_odds"] = odds
    t0 = time.process_time()
    res = simulate(spec, init="leakage", t_final=tf, time_points=201, trajectories=rows, seed=seed, workers=1,
                   integrate_decay=True, **opts)
    cpu = time.process_time() - t0
    lt = leakage_lifetimes(res)
    levels = [draw(spec, res.settings, i).products[0] for i in range(rows)]  # the rows' thermal starts, again
    excited = sum(any(int(np.argmax(np.abs(v))) for v in sites[1:]) for sites in levels)
    out = {"L": L, "rows": rows, "seed": seed, "arm": arm, "options": opts, "cpu_s": cpu, "excited_rows": excited}
    for key, name in (("tau_1", "leakage_lifetime_qubit"), ("tau_L", "leakage_lifetime_array")):
        out[key], out[key + "_err"] = lt[name].value, lt[name].error
    return out


def summarize(runs: list[dict]) -> list[dict]:
    """Per (L, arm): mean estimate, scatter over seeds, mean reported error, mean CPU seconds, error^2 x CPU."""
    out = []
    for L in sorted({r["L"] for r in runs}):
        for arm in ARMS:
            rs = [r for r in runs if r["L"] == L and r["arm"] == arm]
            if not rs:
                continue
            row = {"L": L, "arm": arm, "seeds": len(rs), "cpu_s": float(np.mean([r["cpu_s"] for r in rs]))}
            for key in ("tau_1", "tau_L"):
                v, e = np.array([r[key] for r in rs]), np.array([r[key + "_err"] for r in rs])
                row[key] = float(v.mean())
                row[key + "_err"] = float(e.mean())
                row[key + "_scatter"] = float(v.std(ddof=1)) if len(v) > 1 else None
                row[key + "_merit"] = float(np.mean(e**2) * row["cpu_s"])  # variance x CPU seconds
            out.append(row)
    return out


def row_costs(runs: list[dict]) -> dict:
    """CPU seconds of an empty and of an excited row (sites 2..L), least squares over the runs at each L."""
    out = {}
    for L in sorted({r["L"] for r in runs}):
        rs = [r for r in runs if r["L"] == L]
        A = np.array([[r["rows"] - r["excited_rows"], r["excited_rows"]] for r in rs], dtype=float)
        if np.linalg.matrix_rank(A) < 2:
            continue
        c = np.linalg.lstsq(A, np.array([r["cpu_s"] for r in rs]), rcond=None)[0]
        out[L] = {"empty_row_s": float(c[0]), "excited_row_s": float(c[1])}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lengths", type=int, nargs="+", default=[10])
    ap.add_argument("--rows", type=int, default=256)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--arms", nargs="+", default=list(ARMS), choices=list(ARMS))
    ap.add_argument("--odds", type=float, default=0.5, help="leakage_thermal_odds of the strata_odds arm")
    ap.add_argument("--temperature", default="100mK")
    ap.add_argument("--out", default=None, help="JSON file of every run and the summary")
    a = ap.parse_args()
    print(f"# {platform.machine()} {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}", flush=True)
    runs = []
    with threadpool_limits(1, "blas"):
        for L in a.lengths:
            for seed in a.seeds:
                for arm in a.arms:
                    r = one(L, a.rows, seed, arm, a.odds, a.temperature)
                    runs.append(r)
                    print(f"L={L} seed={seed} {arm:12s} excited {r['excited_rows']:3d}  tau_1 {r['tau_1']:7.2f} +- {r['tau_1_err']:5.2f}  "
                          f"tau_L {r['tau_L']:7.2f} +- {r['tau_L_err']:5.2f}  cpu {r['cpu_s']:6.1f} s", flush=True)
                    if a.out:
                        with open(a.out, "w") as f:
                            json.dump({"runs": runs, "summary": summarize(runs), "row_costs": row_costs(runs)}, f, indent=1)
    for row in summarize(runs):
        print(json.dumps(row), flush=True)
    print(json.dumps(row_costs(runs)), flush=True)
    print(f"# load {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
