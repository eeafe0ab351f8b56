"""The routing study's error bars at temperature over independent seeds, natural against cost-aware thermal sample.

The study's maps (``lru-mps study routing``) on a small layout at one temperature, run once per seed and per
``thermal_sample`` arm with the study's counts (realizations, trajectories) and shorter windows (1000/J + 10 hops
T_prop ideal, 20 us realistic), as tests/test_routing.py's calibration at 0 K does.  Per arm, condition and
quantity (tau_L, tau_1, T1, T2) over the K seeds and the layout's classes of start sites: the pooled
z^2 = ((value - mean over seeds) / error)^2 x K / (K - 1), which is 1 where the stated errors are the scatter
(its 0.1 %-99.9 % chi-square band printed beside it); and between the arms, seed by seed (the same seed draws
the same realizations), the mean difference cost - natural over the seeds in units of its standard error
(|t| < 3 where the two samples estimate the same number).  An arm ``cost@A`` runs the cost-aware sample with the
defensive share A in place of the library's (lru_mps.run.thermal_number.DEFENSIVE).

    python benchmarks/routing_thermal_calibration.py --seeds 16 --workers 2 --out /tmp/calibration
    python benchmarks/routing_thermal_calibration.py --seeds 16 --arms natural cost@0.25 --out /tmp/calibration

Each run's numbers go to ``OUT/<arm>_<seed>.json`` as it ends; a rerun reads the runs it finds and runs the rest.
A run of the 2x3 layout at 100 mK takes ~140-170 s of one core.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

QUANTITIES = ("leakage_lifetime_array", "leakage_lifetime_qubit", "T1", "T2")


def one(arm: str, seed: int, grid: str, temperature: str, out: str) -> dict:
    """The study's maps at one seed and arm: {"condition|site|quantity": [value, error] (1/J), "cpu": s}."""
    from threadpoolctl import threadpool_limits

    from lru_mps.run import thermal_number
    from lru_mps.studies import get_study
    from lru_mps.studies.base import StudyContext, load_config

    sample, _, share = arm.partition("@")
    if share:  # this worker process's defensive share (the odds are built in it)
        thermal_number.DEFENSIVE = float(share)
    study = get_study("routing")
    over = dict(grids=grid, temperatures=temperature, time_points=41, t_base="1000/J", t_per_hop=10.0,
                realistic_t_after="20us", thermal_sample=sample, seed=seed)
    cfg = load_config("routing", study.DEFAULTS, None, over)
    t0 = time.process_time()
    with threadpool_limits(1, "blas"):
        s = study.compute(cfg, StudyContext(out=Path(out) / "runs" / f"{arm}_{seed}", workers=1))[1]
    firsts = [i for i, p in enumerate(s["sites"][0]) if p["ensemble_of"] == {"row": p["row"], "col": p["col"]}]
    res = {}
    for label in s["conditions"]:
        for si in firsts:
            rec = s["sites"][0][si]["conditions"][label]
            for q in QUANTITIES:
                res[f"{label}|{si}|{q}"] = (rec[q]["value_J"], rec[q]["error_J"])
    res["cpu"] = time.process_time() - t0
    (Path(out) / f"{arm}_{seed}.json").write_text(json.dumps(res))
    return res


def pooled_z2(runs: list[dict]) -> dict:
    """{(condition, quantity): (z^2 per degree of freedom, degrees of freedom)} over the seeds' runs of one arm."""
    out = {}
    keys = sorted({k for r in runs for k in r if k != "cpu"})
    for key in keys:
        label, _, q = key.split("|")
        pairs = [r[key] for r in runs if key in r and None not in r[key]]
        if len(pairs) < 2:
            continue
        v, e = np.array(pairs, dtype=float).T
        K = len(v)
        z2, df = out.get((label, q), (0.0, 0))
        out[(label, q)] = (z2 + float(np.sum(((v - v.mean()) / e) ** 2)) * K / (K - 1), df + K - 1)
    return {k: (z2 / df, df) for k, (z2, df) in out.items()}


def paired_t(a: list[dict], b: list[dict]) -> dict:
    """{(condition, site, quantity): (mean of b - a over the seeds, its standard error, t)} for runs paired by seed."""
    out = {}
    for key in sorted({k for r in a for k in r if k != "cpu"}):
        d = np.array([rb[key][0] - ra[key][0] for ra, rb in zip(a, b)
                      if None not in ra.get(key, (None,)) and None not in rb.get(key, (None,))], dtype=float)
        if len(d) < 2:
            continue
        m, se = float(d.mean()), float(d.std(ddof=1) / np.sqrt(len(d)))
        out[tuple(key.split("|"))] = (m, se, m / se if se > 0 else 0.0)
    return out


def main() -> None:
    from scipy.stats import chi2

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grid", default="2x3")
    ap.add_argument("--temperature", default="100mK")
    ap.add_argument("--seeds", type=int, default=16, help="K: seeds 400 .. 400 + K - 1")
    ap.add_argument("--arms", nargs="+", default=["natural", "cost"],
                    help="natural, cost, or cost@A (the cost-aware sample at defensive share A, 0 < A <= 1)")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--out", required=True, help="folder of the runs' JSON (a rerun resumes)")
    a = ap.parse_args()
    for arm in a.arms:
        sample, _, share = arm.partition("@")
        if sample not in ("natural", "cost") or (share and not (sample == "cost" and 0 < float(share) <= 1)):
            ap.error(f"--arms: {arm!r} is not natural, cost or cost@A with 0 < A <= 1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    Path(a.out).mkdir(parents=True, exist_ok=True)
    print(f"# {platform.machine()} {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}; {a.grid} layout, "
          f"{a.temperature}, seeds 400..{399 + a.seeds}", flush=True)
    todo = [(arm, 400 + k) for k in range(a.seeds) for arm in a.arms
            if not (Path(a.out) / f"{arm}_{400 + k}.json").exists()]
    if todo:
        n = len(todo)
        arms, seeds = zip(*todo)
        with ProcessPoolExecutor(max_workers=max(1, a.workers)) as pool:
            for arm, seed, r in zip(arms, seeds, pool.map(one, arms, seeds, [a.grid] * n, [a.temperature] * n,
                                                          [a.out] * n)):
                print(f"seed={seed} {arm:8s} cpu {r['cpu']:7.1f} s", flush=True)
    runs = {arm: [json.loads((Path(a.out) / f"{arm}_{400 + k}.json").read_text()) for k in range(a.seeds)]
            for arm in a.arms}
    for arm, rs in runs.items():
        print(f"\n{arm}: mean CPU {np.mean([r['cpu'] for r in rs]):.1f} s per run")
        for (label, q), (m, df) in pooled_z2(rs).items():
            lo, hi = chi2.ppf(0.001, df) / df, chi2.ppf(0.999, df) / df
            print(f"  {label:18s} {q:24s} z^2 {m:5.2f}  (df {df}, band {lo:.2f}-{hi:.2f})")
    for arm in [x for x in runs if x != "natural" and "natural" in runs]:
        print(f"\n{arm} - natural, paired by seed (mean over seeds, standard error, t):")
        for (label, si, q), (m, se, t) in paired_t(runs["natural"], runs[arm]).items():
            mean = np.mean([r[f"{label}|{si}|{q}"][0] for r in runs["natural"]])
            print(f"  {label:18s} site {si} {q:24s} {m:+9.3g} +- {se:8.2g}  t {t:+5.2f}  "
                  f"(natural mean {mean:.4g})")
    print(f"# load {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
