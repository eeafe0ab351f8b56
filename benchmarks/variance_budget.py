"""Where the variance of the realistic length-scaling numbers comes from: disorder or jumps and thermal samples.

Issue 24 asks what buys statistical power.  An ensemble of N trajectories,
each with its own disorder realization, thermal sample and jump record, has
per-trajectory variance

    Var = Var_r(E[x | r])  +  E_r(Var[x | r])
          (disorder)          (thermal sample + jumps, within a realization)

(the law of total variance).  This script measures both terms for the
observables behind T1, T2 and T_star at a time where each is fitted:
R realizations (the study's disorder stream), M trajectories each on the
fixed realization (``simulate(realization=...)``: own thermal samples and
jumps), at the study's realistic settings (periodic feedback at 0.03 J,
T1q = 16.7 us, Tphi = 10 us, 100 mK).  The disorder share says what a
variance reduction can buy: only the within-realization part can be
integrated out (jumps) or stratified (thermal samples); the disorder part
needs more realizations or a control variate correlated with the
realization (e.g. its exact ideal-branch value).

    python benchmarks/variance_budget.py                     # L = 3, 10; R = M = 16; sampled, then branch
    python benchmarks/variance_budget.py --lengths 3 --realizations 32 --per-realization 32
    python benchmarks/variance_budget.py --integrate-decay --realizations 8 --per-realization 32

Prints, per L and observable, the two variances, the disorder share, the
within-realization variance of the same run at 0 K ("jumps (0 K)": no
thermal sample, so jumps alone; the difference to "Var within" is the
thermal sample's share, approximately, since the jumps also change with
the temperature) and the trajectories needed for a 3 % standard error of
the mean at that time, for each estimator (default: ``sampled``, then
``branch``, docs/physics.md §6.5, with the gain in trajectories).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import time

import numpy as np
from threadpoolctl import threadpool_limits

from lru_mps.physics.model import ArraySpec
from lru_mps.run.seeding import disorder_rng
from lru_mps.run.simulate import simulate

#: observable -> (initial state, the time at which it is read: a function of the spec, 1/J)
PROBES = {
    "qubit_population": ("qubit", lambda s: s.conditions.T1q),               # T1 is fitted here
    "qubit_coherence": ("coherence", lambda s: 1.0 / (1.0 / (2 * s.conditions.T1q) + 1.0 / s.conditions.Tphi)),
    "leakage_array": ("leakage", lambda s: (s.L - 1) * s.T_prop + 0.25 * s.conditions.T1q),
}


def budget(L: int, realizations: int, per_realization: int, seed: int, temperature: str = "100mK",
           estimator: str = "sampled") -> dict:
    spec = ArraySpec.from_user(length=L, temperature=temperature)
    t_final = max(f(spec) for _, f in PROBES.values()) * 1.05
    means = {k: [] for k in PROBES}
    within = {k: [] for k in PROBES}
    for r in range(realizations):
        real = spec.draw_realization(disorder_rng(seed, r))
        res = simulate(spec, init=[i for i, _ in PROBES.values()], t_final=t_final, time_points=101,
                       trajectories=per_realization, seed=seed + 1 + r, realization=real, estimator=estimator)
        for name, (_, when) in PROBES.items():
            k = int(np.argmin(abs(res.times - when(spec))))
            ms = res.observable(name)
            means[name].append(ms.mean[k])
            within[name].append(ms.sem[k] ** 2 * per_realization)
    out = {}
    for name in PROBES:
        m, w = np.array(means[name]), float(np.mean(within[name]))
        between = max(float(np.var(m, ddof=1)) - w / per_realization, 0.0)
        total = between + w
        mean = float(m.mean())
        out[name] = {"mean": mean, "disorder": between, "within": w, "share": between / total if total > 0 else np.nan,
                     "n_3pct": total / (0.03 * mean) ** 2 if mean > 0 else np.inf}
    return out


def decay_integrated_out(L: int, realizations: int, per_realization: int, seed: int) -> dict:
    """<n_1>(T1q) at 0 K: sampled, against the T1q decay integrated out exactly (the gain it would buy).

    With one excitation (qubit start, 0 K) and the same T1q on every site,
    the decay part of H_eff is -(i/2)(1/T1q) N, a constant in the N = 1
    sector, and a decay ends in the vacuum, where n_1 stays 0.  So
    E[n_1(t)] = e^{-t/T1q} E[n_1(t) | no decay channel] exactly: the same
    run without the decay channel, weighted.  Returns both means and
    within-realization variances at t = T1q.
    """
    spec = ArraySpec.from_user(length=L, temperature="0K")
    T1q = spec.conditions.T1q
    no_decay = spec.replace(conditions=dataclasses.replace(spec.conditions, T1q=math.inf))
    out = {"sampled": [], "integrated": []}
    for r in range(realizations):
        real = spec.draw_realization(disorder_rng(seed, r))
        for key, s in (("sampled", spec), ("integrated", no_decay)):
            res = simulate(s, init="qubit", t_final=1.05 * T1q, time_points=41, trajectories=per_realization,
                           seed=seed + 1 + r, realization=real, estimator="sampled")
            k = int(np.argmin(abs(res.times - T1q)))
            w = math.exp(-res.times[k] / T1q) if key == "integrated" else 1.0
            ms = res.observable("qubit_population")
            out[key].append((w * ms.mean[k], (w * ms.sem[k]) ** 2 * per_realization))
    return {k: {"mean": float(np.mean([m for m, _ in v])), "within": float(np.mean([w for _, w in v]))}
            for k, v in out.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lengths", default="3,10")
    ap.add_argument("--realizations", type=int, default=16)
    ap.add_argument("--per-realization", type=int, default=16)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--estimators", default="sampled,branch",
                    help="estimators to budget, in order; 'gain' is the first one's N for 3 %% over each later one's")
    ap.add_argument("--integrate-decay", action="store_true",
                    help="instead: <n_1>(T1q) at 0 K sampled vs with the T1q decay integrated out exactly")
    a = ap.parse_args()
    if a.integrate_decay:
        with threadpool_limits(1):
            for L in (int(x) for x in a.lengths.split(",")):
                d = decay_integrated_out(L, a.realizations, a.per_realization, a.seed)
                gain = d["sampled"]["within"] / d["integrated"]["within"]
                print(f"L = {L}, <n_1>(T1q) at 0 K: sampled {d['sampled']['mean']:.4f} (Var within "
                      f"{d['sampled']['within']:.3e}), decay integrated out {d['integrated']['mean']:.4f} "
                      f"(Var within {d['integrated']['within']:.3e}): {gain:.1f}x fewer trajectories")
        return
    with threadpool_limits(1):
        for L in (int(x) for x in a.lengths.split(",")):
            before = None
            for estimator in a.estimators.split(","):
                t0 = time.perf_counter()
                b = budget(L, a.realizations, a.per_realization, a.seed, estimator=estimator)
                cold = budget(L, a.realizations, a.per_realization, a.seed, temperature="0K", estimator=estimator)
                print(f"L = {L}, {estimator} ({a.realizations} realizations x {a.per_realization} trajectories, "
                      f"at 100 mK and at 0 K; {time.perf_counter() - t0:.0f} s)")
                print(f"  {'observable':18s} {'mean':>8s} {'Var disorder':>13s} {'Var within':>11s} "
                      f"{'disorder share':>15s} {'jumps (0 K)':>12s} {'N for 3 %':>10s}"
                      + (f" {'gain':>6s}" if before else ""))
                for name, v in b.items():
                    gain = f" {before[name]['n_3pct'] / v['n_3pct']:6.1f}" if before else ""
                    print(f"  {name:18s} {v['mean']:8.4f} {v['disorder']:13.3e} {v['within']:11.3e} {v['share']:15.2f}"
                          f" {cold[name]['within']:12.3e} {v['n_3pct']:10.0f}" + gain)
                before = before or b


if __name__ == "__main__":
    main()
