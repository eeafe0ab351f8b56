"""Study ``rate-sweep`` (paper Fig. 2c and the random-feedback figure of its appendix).

The array leakage population P_star^(L)(t_eval), t_eval = 200/J, from the
leakage state |2> on site 1, versus the reset rate G on a log grid, for each
reset kind.  The two optimal rates of each kind (the minima at low G, stack
propagation, and at high G, disintegration) are located by a bounded Brent
minimisation in log10(G) around the two most prominent grid minima, on the
same realizations (common random numbers: the same seed, hence the same
disorder, measurement phases and Poisson clocks scaled by 1/G, at every
rate).  Each optimum is the vertex of a weighted quadratic fit of
P_star^(L) in log10 G to the evaluations within ``fit_window_decades`` of
the lowest one (:func:`~lru_mps.analysis.optima.fit_optimum`), with a jackknife error over the
trajectory blocks (the same blocks at every rate, so the errors of nearby
rates are correlated as they should be); it is reported next to the L = 2 analytic positions (docs/physics.md
§9: low 2 J_prop feedback / sqrt2 J_prop dissipation, high Ubar feedback /
2 Ubar dissipation; the feedback formulas are for random feedback, the paper
uses them for periodic too) and, at the paper's point, the paper's L = 3
optima.  In ideal conditions (the branch estimator) periodic feedback costs
a few matrix products per evolution at any rate (its k periods are a matrix
power), random feedback a few array operations per measurement for all
realizations together (:mod:`lru_mps.engines.exact.feedback`), sampled runs one
stop per measurement; the feedback grid stops at ``feedback_rate_max``,
dissipation (no events) runs up to ``rate_max``.  The summary states the
feedback path that ran.  The reset kind and rate are swept: ``--reset`` runs one kind.
"""

from __future__ import annotations

import math

import numpy as np
import xarray as xr

from ...analysis.optima import optimum_fit
from ...errors import require
from ...physics import analytic
from ...physics.conditions import Reset
from ...physics.units import to_rate, to_time
from ...run.settings import feedback_path
from ..base import TIME_UNITS, Study, StudyContext, finite_or_none, parameters_json
from ..common import (refuse_readout, PAPER_OPTIMA_J, as_list, conditions_of, dataset_attrs, ensemble_settings,
                      json_list, positive_int, run_ensemble, spec_of, us_per_J)
from . import report

class RateSweep(Study):
    """P_star^(L)(t_eval) vs reset rate and the two optimal rates per reset kind (paper Fig. 2c)."""

    NAME = "rate-sweep"
    SWEPT = {"reset": ("resets",), "rate": None}
    SWEPT_HOW = {"rate": "the rate from rate_min to rate_max (--rate has no effect here)"}
    TIME_UNITS = TIME_UNITS
    HELP = """Leakage left at t = 200/J vs the reset rate, and the optimal rates.

    The array's leakage population P_star^(L)(t_eval) from |2> on the coding
    qubit on a log grid of reset rates G for periodic feedback, random
    feedback and engineered dissipation (L = 3, ideal conditions), with the
    low (stack propagation) and high (disintegration) optimal rates refined by
    a bounded minimiser and set against the paper's and the analytic values.
    Reproduces and extends paper Fig. 2c and the random-feedback figure of its
    appendix.  Each optimum comes with its jackknife error (a few percent at
    the default 1000 realizations).  Default: about 2 minutes on 2 cores
    (--quick: seconds).
    """
    # ----------------------------------------------------------------- run
    def compute(self, cfg: dict, ctx: StudyContext):
        """The sweep and the refined optima: (dataset, summary)."""
        sw = _SweepSettings.of(cfg)
        leakage = _Leakage(sw.base, cfg, ctx, sw.t_eval)
        # the stages of the grid; the minimiser's evaluations add stages
        ctx.plan(sum(int(np.sum(sw.rates <= sw.top(kd) * (1 + 1e-12))) for kd in sw.kinds))
        mean, sem = _grid(sw, leakage)
        optima = _optima(sw, cfg, leakage, mean)
        ds = _dataset(sw, cfg, mean, sem, optima)
        return ds, self._summary(sw, leakage, mean, sem, optima)

    def _summary(self, sw: "_SweepSettings", leakage: "_Leakage", mean, sem, optima: dict) -> dict:
        """The study's JSON object."""
        kinds, base, J_hz = sw.kinds, sw.base, sw.base.J_hz
        opt, opt_err, opt_p, opt_sem, grid_opt = (optima[k] for k in ("opt", "opt_err", "opt_p", "opt_sem", "grid_opt"))
        evals, analytic_opt = optima["evals"], _analytic_optima(base)
        us = us_per_J(base)
        summary = {
            "study": self.NAME,
            "parameters": parameters_json(base, {"rate_J": "swept: see rates_J", "reset": "swept: see resets"}),
            "conditions": sw.cond,
            "estimator": sw.estimator,
            "evolutions_per_rate": sw.n_evol,
            "t_eval_J": sw.t_eval,
            "t_eval_us": sw.t_eval * us,
            "J_prop_J": base.J_prop,
            "resets": kinds,
            "rates_J": json_list(sw.rates),
            "rates_MHz": json_list(sw.rates * J_hz / 1e6),
            "leakage": {kd: self._leakage_json(sw, kd, mean[k], sem[k]) for k, kd in enumerate(kinds)},
            "optima_J": {kd: {b: finite_or_none(opt[k, j]) for j, b in enumerate(BRANCHES)} for k, kd in enumerate(kinds)},
            "optima_error_J": {kd: {b: finite_or_none(opt_err[k, j]) for j, b in enumerate(BRANCHES)}
                               for k, kd in enumerate(kinds)},
            "optima_error_J_reason": {kd: {b: optima["reasons"].get((kd, b)) for b in BRANCHES} for kd in kinds},
            "optima_MHz": {
                kd: {b: finite_or_none(opt[k, j] * J_hz / 1e6) for j, b in enumerate(BRANCHES)} for k, kd in enumerate(kinds)
            },
            "optima_leakage": {
                kd: {b: {"mean": finite_or_none(opt_p[k, j]), "sem": finite_or_none(opt_sem[k, j])} for j, b in enumerate(BRANCHES)}
                for k, kd in enumerate(kinds)
            },
            "grid_optima_J": {kd: {b: finite_or_none(grid_opt[k, j]) for j, b in enumerate(BRANCHES)} for k, kd in enumerate(kinds)},
            "analytic_optima_J": {kd: {"low": analytic_opt[kd][0], "high": analytic_opt[kd][1]} for kd in kinds},
            "analytic_note": "L = 2 stack/disintegration model (docs/physics.md §9): low 2 J_prop (feedback) or sqrt2 J_prop "
                             "(dissipation), high Ubar (feedback) or 2 Ubar (dissipation); the feedback formulas are for "
                             "random feedback",
            "minimiser_evaluations": {kd: len(evals[kd]) for kd in kinds},
            "optimum_note": f"vertex of a quadratic fit in log10 G within {sw.window:g} decades of the lowest evaluation, "
                            "jackknife error over the trajectory blocks; the lowest evaluation where no fit",
            "feedback_path": {kd: leakage.paths.get(kd, "none") for kd in kinds},
        }
        for key in ("optima_J", "optima_MHz", "grid_optima_J", "optima_leakage"):  # a missing optimum says why
            missing = {kd: {b: optima["reasons"].get((kd, b)) if finite_or_none(optima["opt"][k, j]) is None else None
                            for j, b in enumerate(BRANCHES)} for k, kd in enumerate(kinds)}
            if any(v for d in missing.values() for v in d.values()):
                summary[f"{key}_reason"] = missing
        if _paper_point(base):
            summary["paper_optima_J"] = {kd: PAPER_OPTIMA_J[kd] for kd in kinds}
        return summary

    @staticmethod
    def _leakage_json(sw: "_SweepSettings", kind: str, mean, sem) -> dict:
        """One kind's leakage on the grid: mean, sem, and beside them why a rate was not run (above the kind's top)."""
        out = {"mean": json_list(mean), "sem": json_list(sem)}
        if np.isnan(mean).any():
            why = [None if np.isfinite(m) else
                   f"not run: feedback runs up to feedback_rate_max = {sw.fmax:g} J (a rate above it costs "
                   "G t_eval measurements per evolution); raise feedback_rate_max to run it" for m in mean]
            out["mean_reason"] = out["sem_reason"] = why
        return out

    # ------------------------------------------------------- table and plot
    def table(self, summary: dict) -> str:
        return report.table(summary)

    def plot(self, ds, summary: dict, figdir) -> list:
        """P_star^(L)(t_eval) vs G (log-log) with the found and analytic optima."""
        return report.plot(ds, summary, figdir)

BRANCHES = ("low", "high")


class _SweepSettings:
    """The sweep's settings from the configuration, checked: reset kinds, rate grid, t_eval, tolerances."""

    @classmethod
    def of(cls, cfg: dict) -> "_SweepSettings":
        sw = cls()
        cond = sw.cond = conditions_of(cfg, allow_both=False)[0]
        require("rate" not in cfg["model"], "rate", cfg["model"].get("rate"),
                "not set for the rate-sweep (the rate is swept: use rate_min, rate_max, rate_points)")
        if cfg["model"].get("reset") is not None:
            kinds = [cfg["model"]["reset"]]
        else:
            kinds = as_list(cfg, "resets")
        for kind in kinds:
            require(kind in ("periodic", "random", "dissipation"), "resets", kind, "periodic, random or dissipation")
        sw.kinds = kinds
        refuse_readout(cfg, "rate sweep", "a readout error runs every measurement on the reference path, and "
                       "feedback at up to 100 J then takes hours",
                       "study it with `lru-mps study dynamics` or `lru-mps simulate --readout-error`")
        base = sw.base = spec_of(cfg, reset="dissipation", rate="1J", conditions=cond)
        J_hz = base.J_hz
        rmin = to_rate(cfg["rate_min"], "rate_min", J_hz)
        rmax = sw.rmax = to_rate(cfg["rate_max"], "rate_max", J_hz)
        sw.fmax = to_rate(cfg["feedback_rate_max"], "feedback_rate_max", J_hz)
        require(0 < rmin < rmax and math.isfinite(rmax), "rate_max", cfg["rate_max"], f"a finite rate > rate_min = {rmin:g} J")
        npts = positive_int(cfg, "rate_points", 3)
        t_eval = sw.t_eval = to_time(cfg["t_eval"], "t_eval", J_hz)
        require(math.isfinite(t_eval) and t_eval > 0, "t_eval", cfg["t_eval"], "a finite time > 0")
        sw.xatol = float(cfg["xatol_decades"])
        require(0 < sw.xatol < 1, "xatol_decades", cfg["xatol_decades"], "a tolerance in decades of the rate, 0 < x < 1")
        sw.window = float(cfg["fit_window_decades"])
        require(0 < sw.window < 1, "fit_window_decades", cfg["fit_window_decades"],
                "a width in decades of the rate, 0 < w < 1")
        sw.rates = np.logspace(math.log10(rmin), math.log10(rmax), npts)
        sw.estimator, sw.n_evol = ensemble_settings(base, cfg)
        return sw

    def top(self, kind: str) -> float:
        """The largest rate of the grid for a reset kind (feedback stops at feedback_rate_max)."""
        return self.rmax if kind == "dissipation" else min(self.rmax, self.fmax)


class _Leakage:
    """P_star^(L)(t_eval) (mean, sem) of one reset kind and rate, each evaluated once, with its jackknife replicas."""

    def __init__(self, base, cfg: dict, ctx: StudyContext, t_eval: float):
        self.base, self.cfg, self.ctx, self.t_eval = base, cfg, ctx, t_eval
        self.cache: dict[tuple[str, float], tuple[float, float]] = {}
        self.replicas: dict[tuple[str, float], np.ndarray] = {}  # leave-one-block-out means (jackknife)
        self.paths: dict[str, str] = {}

    def __call__(self, kind: str, G: float) -> tuple[float, float]:
        key = (kind, float(G))
        if key not in self.cache:
            spec = self.base.replace(reset=Reset(kind, float(G)))
            res = run_ensemble(spec, self.cfg, self.ctx, f"{kind} G={G:.4g}J", init="leakage", t_final=self.t_eval,
                               time_points=2)
            ms = res.observable("leakage_array")
            self.cache[key] = (float(ms.mean[-1]), float(ms.sem[-1]))
            self.replicas[key] = np.array([r.observable("leakage_array").mean[-1] for r in res.leave_one_out()])
            self.paths[kind] = feedback_path(spec, res.settings)
        return self.cache[key]


def _grid(sw: _SweepSettings, leakage: _Leakage) -> tuple[np.ndarray, np.ndarray]:
    """The leakage (mean, sem) on the rate grid (K, R); nan above a kind's largest rate."""
    mean = np.full((len(sw.kinds), len(sw.rates)), np.nan)
    sem = np.full((len(sw.kinds), len(sw.rates)), np.nan)
    for k, kind in enumerate(sw.kinds):
        top = sw.top(kind)
        for i, G in enumerate(sw.rates):
            if G <= top * (1 + 1e-12):
                mean[k, i], sem[k, i] = leakage(kind, G)
    return mean, sem


def _optima(sw: _SweepSettings, cfg: dict, leakage: _Leakage, mean: np.ndarray) -> dict:
    """The two optima of each kind: bounded minimisation around the grid minima, then a quadratic fit (arrays (K, 2))."""
    K, rates, cache = len(sw.kinds), sw.rates, leakage.cache
    out = {name: np.full((K, 2), np.nan) for name in ("opt", "opt_err", "opt_p", "opt_sem", "grid_opt", "lo_b", "hi_b")}
    evals: dict[str, list[tuple[float, float, float]]] = {}
    reasons: dict[tuple[str, str], str | None] = {}  # (kind, branch): why the optimum (or its error) is missing
    for k, kind in enumerate(sw.kinds):
        valid = np.isfinite(mean[k])
        idx = np.nonzero(valid)[0]
        minima = _two_minima(mean[k, idx])
        before = set(key for key in cache if key[0] == kind)
        for b, j in enumerate(minima):
            if j is None:
                reasons[(kind, BRANCHES[b])] = (
                    f"no interior minimum of the grid on the {BRANCHES[b]}-rate side, so no optimum to bracket "
                    "(a wider rate grid, rate_min/rate_max, finds it)")
                continue
            i = idx[j]
            out["grid_opt"][k, b] = rates[i]
            lo, hi = rates[idx[j - 1]], rates[idx[j + 1]]
            out["lo_b"][k, b], out["hi_b"][k, b] = lo, hi
            if cfg.get("optimize", True):
                from scipy.optimize import minimize_scalar

                minimize_scalar(
                    lambda x: leakage(kind, 10.0**x)[0],
                    bounds=(math.log10(lo), math.log10(hi)),
                    method="bounded",
                    options={"xatol": sw.xatol},
                )
            # the optimum: a quadratic fit around the lowest evaluated point inside the bracket
            cand = sorted(G for (kd, G) in cache if kd == kind and lo < G < hi)
            G_best, p_best, s_best = min(((G, *cache[(kind, G)]) for G in cand), key=lambda c: c[1])
            out["opt_p"][k, b], out["opt_sem"][k, b] = p_best, s_best
            out["opt"][k, b], out["opt_err"][k, b], reasons[(kind, BRANCHES[b])] = optimum_fit(
                np.array(cand), np.array([cache[(kind, G)][0] for G in cand]),
                np.array([cache[(kind, G)][1] for G in cand]),
                [leakage.replicas[(kind, G)] for G in cand], sw.window)
        evals[kind] = sorted((G, *cache[(kd, G)]) for (kd, G) in cache if kd == kind and (kd, G) not in before)
    out["evals"] = evals
    out["reasons"] = reasons
    return out


def _analytic_optima(base) -> dict[str, tuple[float, float]]:
    """The L = 2 analytic (low, high) optimal rates of each reset kind (docs/physics.md §9)."""
    Jp = base.J_prop
    return {
        "periodic": (float(analytic.feedback_low_optimum(Jp)), float(analytic.feedback_high_optimum(base.Ubar))),
        "random": (float(analytic.feedback_low_optimum(Jp)), float(analytic.feedback_high_optimum(base.Ubar))),
        "dissipation": (float(analytic.dissipation_low_optimum(Jp)), float(analytic.dissipation_high_optimum(base.Ubar))),
    }


def _paper_point(base) -> bool:
    """The paper's parameters (L = 3, J = 5 MHz, Ubar = 50 J, W = 20 J): its L = 3 optima apply."""
    return base.L == 3 and abs(base.J_hz - 5e6) < 1 and abs(base.Ubar - 50) < 1e-9 and abs(base.W - 20) < 1e-9


def _dataset(sw: _SweepSettings, cfg: dict, mean, sem, optima: dict) -> xr.Dataset:
    """The study's dataset: the grid, the optima and the minimiser's evaluations."""
    kinds, base, rates, J_hz = sw.kinds, sw.base, sw.rates, sw.base.J_hz
    K, evals, analytic_opt = len(kinds), optima["evals"], _analytic_optima(base)
    n_ev = max([len(v) for v in evals.values()] + [1])
    ev_rate = np.full((K, n_ev), np.nan)
    ev_mean = np.full((K, n_ev), np.nan)
    ev_sem = np.full((K, n_ev), np.nan)
    for k, kind in enumerate(kinds):
        for e, (G, p, s) in enumerate(evals[kind]):
            ev_rate[k, e], ev_mean[k, e], ev_sem[k, e] = G, p, s
    us = us_per_J(base)
    pair = ("reset", "optimum")
    ds = xr.Dataset(
        {
            "leakage_mean": (("reset", "rate_J"), mean, {"units": "1", "long_name": "P_star^(L)(t_eval), mean"}),
            "leakage_sem": (("reset", "rate_J"), sem, {"units": "1", "long_name": "standard error"}),
            "optimum_rate_J": (pair, optima["opt"], {"units": "J", "long_name": "refined optimal rate"}),
            "optimum_rate_error_J": (pair, optima["opt_err"], {
                "units": "J", "long_name": "jackknife standard error of the optimal rate (nan: not fitted)"}),
            "optimum_leakage_mean": (pair, optima["opt_p"], {"units": "1", "long_name": "lowest evaluated P_star"}),
            "optimum_leakage_sem": (pair, optima["opt_sem"], {"units": "1"}),
            "grid_optimum_rate_J": (pair, optima["grid_opt"], {"units": "J", "long_name": "grid minimum"}),
            "bracket_low_J": (pair, optima["lo_b"], {"units": "J"}),
            "bracket_high_J": (pair, optima["hi_b"], {"units": "J"}),
            "analytic_optimum_rate_J": (
                pair,
                np.array([analytic_opt[kd] for kd in kinds]),
                {"units": "J", "long_name": "L = 2 analytic optimum (docs/physics.md §9)"},
            ),
            "evaluation_rate_J": (("reset", "evaluation"), ev_rate, {"units": "J", "long_name": "minimiser evaluations"}),
            "evaluation_leakage_mean": (("reset", "evaluation"), ev_mean, {"units": "1"}),
            "evaluation_leakage_sem": (("reset", "evaluation"), ev_sem, {"units": "1"}),
        },
        coords={
            "reset": ("reset", np.array(kinds, dtype=str)),
            "rate_J": ("rate_J", rates, {"units": "J", "long_name": "reset rate G"}),
            "rate_MHz": ("rate_J", rates * J_hz / 1e6, {"units": "MHz", "long_name": "G/2pi"}),
            "optimum": ("optimum", np.array(BRANCHES, dtype=str)),
        },
        attrs=dataset_attrs(
            base, cfg,
            conditions=sw.cond,
            estimator=sw.estimator,
            evolutions_per_rate=sw.n_evol,
            t_eval_J=sw.t_eval,
            t_eval_us=sw.t_eval * us,
            observable="leakage_array",
            init="leakage",
            J_prop_J=base.J_prop,
        ),
    )
    if _paper_point(base):
        ds["paper_optimum_rate_J"] = (
            pair,
            np.array([[PAPER_OPTIMA_J[kd]["low"], PAPER_OPTIMA_J[kd]["high"]] for kd in kinds]),
            {"units": "J", "long_name": "paper's L = 3 numerics (Fig. 2c and the random-feedback figure)"},
        )
    return ds



def _two_minima(m: np.ndarray) -> list:
    """Indices (into m) of the low-rate and high-rate minima: the two most prominent interior minima.

    Returns [low, high] with None where there is no interior minimum (an
    optimum at the edge of the grid cannot be bracketed).
    """
    from scipy.signal import find_peaks

    if len(m) < 3:
        return [None, None]
    peaks, props = find_peaks(-np.asarray(m, dtype=float), prominence=0.0)
    if len(peaks) == 0:
        return [None, None]
    order = np.argsort(-props["prominences"], kind="stable")
    best = sorted(int(peaks[i]) for i in order[:2])
    if len(best) == 2:
        return best
    # a single interior minimum: call it low or high by the half of the grid it lies in
    j = best[0]
    return [j, None] if j < len(m) / 2 else [None, j]


STUDIES = {RateSweep.NAME: RateSweep()}
