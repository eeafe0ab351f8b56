"""Where the variance of the leakage lifetimes comes from at long L, and what the rows cost.

Issue 24 asks for the leakage lifetimes tau_1 = int P_star^(1) dt and
tau_L = int P_star^(L) dt within 3 % at every realistic L.  This script runs
the leakage start row by row at the length-scaling study's realistic
settings (t_final = (L-1) T_prop + 40 us, 201 time points, periodic feedback
at 0.03 J, T1q, Tphi, 100 mK, ``--engine auto``, hot tail ``--hot-tail``),
integrates each row's curves (Simpson, like analysis.lifetimes, without
the tail after t_final), times each row, and prints:

* the per-row spread of tau_1 and tau_L (relative to the mean), hence the
  rows needed for a 3 % standard error;
* the split by the row's thermal sample: empty interior (sites 2..L-1; the
  branch), excited interior (sampled), the subset with site 2 excited,
  and each part's share of the variance and its mean cost per row;
* what the excited-interior odds r (``leakage_thermal_odds``) would buy:
  the per-row variance, the cost per row and the net gain per CPU second,
  from the two strata's spreads and costs (Neyman with costs).

    python benchmarks/lifetime_budget.py --length 16 --trajectories 320      # ~5 min on 2 cores
    python benchmarks/lifetime_budget.py --length 10 --trajectories 480 --hot-tail 1

Rows are split over ``--workers`` processes (one BLAS thread each); a row's
numbers depend only on (seed, index), as in every run.
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from scipy.integrate import simpson
from threadpoolctl import threadpool_limits

from lru_mps.physics.model import ArraySpec
from lru_mps.physics.units import to_time
from lru_mps.run.settings import make_settings
from lru_mps.run.trajectories import draw, run_trajectories


def _settings(L: int, n: int, seed: int, hot_tail: float, integrate_decay: bool = False):
    spec = ArraySpec.from_user(length=L, conditions="realistic")
    t_final = (L - 1) * spec.T_prop + to_time("40us", "t_after", spec.J_hz)
    st = make_settings(spec, init="leakage", t_final=t_final, time_points=201, trajectories=n, seed=seed,
                       engine="auto", estimator="auto", hot_tail=hot_tail, integrate_decay=integrate_decay)
    return spec, st


def rows(L: int, indices: list[int], n: int, seed: int, hot_tail: float, integrate_decay: bool = False) -> list[dict]:
    """Per row: tau_1, tau_L (1/J, weighted as the row counts in the mean), thermal levels, weight, seconds."""
    spec, st = _settings(L, n, seed, hot_tail, integrate_decay)
    out = []
    with threadpool_limits(1):
        for i in indices:
            t0 = time.perf_counter()
            rec = run_trajectories(spec, st, [i])[0]["leakage"]
            sec = time.perf_counter() - t0
            p = rec.populations
            d = draw(spec, st, i)
            out.append({"tau1": float(simpson(p[:, 0, 2], x=rec.times)),
                        "tauL": float(simpson(p[:, :, 2].sum(axis=1), x=rec.times)),
                        "levels": [int(np.nonzero(v)[0].max()) for v in d.products[0]],  # site 1: the leak (2)
                        "weight": float(d.rows[0].weight), "sec": sec})
    return out


def report(data: list[dict], L: int) -> None:
    lv = np.array([r["levels"] for r in data])
    excited = lv[:, 1:-1].sum(axis=1) > 0
    site2 = excited & (lv[:, 1] > 0)
    sec = np.array([r["sec"] for r in data])
    ce, cx = sec[~excited].mean(), sec[excited].mean() if excited.any() else np.nan
    P0 = float((~excited).mean())
    print(f"L = {L}: {len(data)} rows; excited interior {1 - P0:.1%} of the rows; cost per row {ce:.2f} s empty, "
          f"{cx:.2f} s excited ({cx / ce:.1f}x); weights {dict(zip(*np.unique([r['weight'] for r in data], return_counts=True)))}")
    for key, name in (("tau1", "tau_1"), ("tauL", "tau_L")):
        x = np.array([r[key] for r in data])
        total = float(((x - x.mean()) ** 2).sum())
        rel = x.std(ddof=1) / x.mean()
        print(f"  {name}: mean {x.mean():.1f}/J, spread per row {rel:.2f} of the mean -> {rel ** 2 / 0.03 ** 2:.0f} rows "
              f"for 3 %")
        for label, m in (("empty interior", ~excited), ("excited interior", excited), ("  site 2 excited", site2)):
            if m.any():
                share = float(((x[m] - x.mean()) ** 2).sum()) / total
                print(f"    {label:18s} {m.mean():6.1%} of rows  mean {x[m].mean():7.1f}  spread {x[m].std():7.1f}  "
                      f"variance share {share:.2f}")
        if excited.any() and (~excited).any():
            se, sx, c0 = x[~excited].std(), x[excited].std(), P0 * ce + (1 - P0) * cx
            gains = []
            for r in (2, 4, 8):
                q = r * (1 - P0) / P0 / (1 + r * (1 - P0) / P0)
                v = P0 ** 2 * se ** 2 / (1 - q) + (1 - P0) ** 2 * sx ** 2 / q
                c = (1 - q) * ce + q * cx
                gains.append(f"r = {r}: variance {x.var() / v:.2f}x, cost {c / c0:.2f}x, net {x.var() * c0 / (v * c):.2f}x")
            print("    odds of excited interiors: " + "; ".join(gains))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--length", type=int, default=16)
    ap.add_argument("--trajectories", type=int, default=320)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--hot-tail", type=float, default=4.0, help="the hot tail's thinning f (the study: 4 for the "
                    "qubit starts; 1 = every hot row runs)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--integrate-decay", action="store_true", help="the excited rows' hardware decay integrated out "
                    "(lru_mps.mcwf.integrated_decay)")
    a = ap.parse_args()
    idx = list(range(a.trajectories))
    parts = [idx[k::a.workers] for k in range(a.workers)]
    t0 = time.perf_counter()
    with ProcessPoolExecutor(a.workers) as pool:
        data = sum(pool.map(rows, [a.length] * a.workers, parts, [a.trajectories] * a.workers,
                            [a.seed] * a.workers, [a.hot_tail] * a.workers, [a.integrate_decay] * a.workers), [])
    print(f"({time.perf_counter() - t0:.0f} s on {a.workers} workers)")
    report(data, a.length)


if __name__ == "__main__":
    main()
