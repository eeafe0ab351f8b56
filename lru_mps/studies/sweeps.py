"""Studies that reproduce the paper's Figs. 2 and 3: rate, disorder and hopping sweeps, dynamics.

Four studies (physics in docs/physics.md; figures of Martin-Vazquez,
Tolppanen, Silveri):

``rate-sweep`` (paper Fig. 2c and the random-feedback figure of its appendix)
    The array leakage population P_star^(L)(t_eval), t_eval = 200/J, from
    the leakage state |2> on site 1, versus the reset rate G on a log grid,
    for each reset kind.  The two optimal rates of each kind (the minima at
    low G, stack propagation, and at high G, disintegration) are located by
    a bounded Brent minimisation in log10(G) around the two most prominent
    grid minima, on the same realizations (common random numbers: the same
    seed, hence the same disorder, measurement phases and Poisson clocks
    scaled by 1/G, at every rate), and reported next to the L = 2 analytic
    positions (docs/physics.md §9: low 2 J_prop feedback / sqrt2 J_prop
    dissipation, high Ubar feedback / 2 Ubar dissipation; the feedback
    formulas are for random feedback, the paper uses them for periodic too).
    Feedback kinds cost one state update per measurement, i.e. ~G t_eval per
    evolution, so their grid stops at ``feedback_rate_max``; dissipation has
    no events in the exact branch estimator and runs up to ``rate_max``.

``disorder-sweep`` (paper Fig. 3a,d) and ``hopping-sweep`` (Fig. 3b,e)
    T_star, T_prop, T1, T2 (:func:`lru_mps.analysis.decay.decay_times`) versus the
    disorder width W or the hopping J, at L = 3 with periodic feedback, for
    ideal and realistic conditions.  The hopping J is the unit of the model, so the
    hopping sweep builds each point's spec with ``ArraySpec.from_user(hopping=J,
    ...)``: quantities given in MHz/GHz (Ubar, wbar, W) stay fixed in
    physical units, quantities given as multiples of J scale with J.  The
    reset rate follows the paper (appendix on the numerical simulations): the low
    optimal rate is held at G = c J_prop with c fixed so that G = 0.03 J at
    J/2pi = 5 MHz (``rate_scaling = "jprop"``; J_prop = 2 J^2/Ubar, so G/J
    grows like J); ``rate_scaling = "fixed"`` takes the model's rate at each
    J as given ('0.03J' then means 0.03 of each J, '0.15MHz' a fixed rate).
    The sweep variable is quoted in MHz (and J), the times in us and in units
    of 1/J of that point's own J.  Each point runs two ensembles: |2> on
    site 1 (T_star) up to ((L-1) + leakage_tail_tprop) T_prop, so that the
    fit window t > (L-1) T_prop spans a few T_star at every J (docs/physics.md §8:
    the window should cover a few tau; a much longer one fits the slow tail
    of rare, nearly blocked realizations instead), and |1>, (|0>+|1>)/sqrt2
    (T1, T2) up to ``t_final`` (40 us: a few T1 <= T1q = 16.7 us).

``dynamics`` (paper Fig. 2a,b)
    P_star^(1)(t) and P_star^(L)(t) (observables ``leakage_site1`` and
    ``leakage_array``) from |2> on site 1 at a low and a high rate.

Ensembles: in ideal conditions the removal-free branch estimator (exact per
disorder realization) with ``realizations`` evolutions, each with its own
disorder realization; otherwise sampled trajectories (``trajectories`` per
point).  Every ensemble goes through :func:`lru_mps.run.simulate.simulate` with
the study's work folder as store (and ``ctx.run_options``: workers, Dask
client, progress), so an interrupted study resumes and a rerun reuses all
finished work.

Config keys common to all four: ``realizations``, ``trajectories``,
``engine``, ``seed`` and the ``[model]`` table with the option names of
``lru-mps simulate``; ``model.conditions`` may be "both" in the disorder and
hopping sweeps.  The swept model parameter is not in the model table; giving
it there (e.g. ``--disorder 50MHz``, ``--reset dissipation``, ``--rate 1J``
for the dynamics) runs the study at that one value.
"""

from __future__ import annotations

import math

import numpy as np
import xarray as xr

from ..physics import analytic
from ..analysis.decay import decay_times
from ..run.simulate import simulate
from ..errors import require
from ..physics.model import ArraySpec, Reset
from ..physics.units import time_to_us, to_rate, to_time
from .base import MODEL_KEYS, StudyContext, engine_options, StudyResult, finite_or_none, save_figure, time_json, write_outputs

#: Paper model values (docs/physics.md §3): the shared part of every model table.
_PAPER_MODEL = {
    "length": 3,
    "hopping": "5MHz",
    "anharmonicity": "250MHz",
    "frequency": "7.5GHz",
    "disorder": "100MHz",
}

#: optimal rates the paper reads off its L = 3 numerics (units of J; Fig. 2c and the random-feedback figure)
PAPER_OPTIMA_J = {
    "periodic": {"low": 0.03, "high": 30.0},
    "random": {"low": 0.055, "high": 60.0},
    "dissipation": {"low": 0.04, "high": 130.0},
}

DECAYS = ("T_star", "T_prop", "T1", "T2")
FITTED = ("T_star", "T1", "T2")
#: fitted decay time -> (observable, factor of the fitted curve), as in lru_mps.analysis.decay
CURVES = {"T_star": ("leakage_array", 1.0), "T1": ("qubit_population", 1.0), "T2": ("qubit_coherence", 2.0)}
#: the two ensembles of a decay-sweep point: initial states, and the observables read from each
_PARTS = {"leakage": ("leakage",), "qubit": ("qubit", "coherence")}
_PART_OBSERVABLES = {"leakage": ("leakage_array",), "qubit": ("qubit_population", "qubit_coherence")}

#: below this many state updates (trajectories x stops) an ensemble runs in-process
_POOL_MIN_WORK = 4000


# ============================================================================ helpers
def _model(cfg: dict, **changes) -> dict:
    model = {**cfg.get("model", {}), **changes}
    unknown = [k for k in model if k not in MODEL_KEYS]
    require(not unknown, "model", unknown, f"keys among {', '.join(MODEL_KEYS)}")
    return model


def _spec(cfg: dict, **changes) -> ArraySpec:
    """The spec of the model table with ``changes`` (swept value, conditions)."""
    model = _model(cfg, **changes)
    return ArraySpec.from_user(**{k: model[k] for k in MODEL_KEYS if k in model and model[k] is not None})


def _conditions(cfg: dict, allow_both: bool) -> list[str]:
    cond = cfg["model"].get("conditions", "ideal")
    allowed = ("ideal", "realistic", "both") if allow_both else ("ideal", "realistic")
    require(cond in allowed, "conditions", cond, " or ".join(allowed),
            None if allow_both else f"the {cfg['study']} study runs one set of conditions at a time")
    return ["ideal", "realistic"] if cond == "both" else [cond]


def _positive_int(cfg: dict, key: str, minimum: int = 1) -> int:
    value = cfg[key]
    require(
        not isinstance(value, bool) and isinstance(value, (int, float)) and int(value) == value and value >= minimum,
        key, value, f"an integer >= {minimum}",
    )
    return int(value)


def _list(cfg: dict, key: str) -> list:
    value = cfg[key]
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    require(isinstance(value, (list, tuple)) and len(value) >= 1, key, value, "a non-empty list")
    return list(value)


def _ensemble_settings(spec: ArraySpec, cfg: dict) -> tuple[str, int]:
    """(estimator, number of evolutions): exact branch per realization when ideal, else sampled."""
    if spec.conditions.ideal:
        return "branch", _positive_int(cfg, "realizations")
    return "sampled", _positive_int(cfg, "trajectories")


def _run(spec: ArraySpec, cfg: dict, ctx: StudyContext, label: str, *, init, t_final: float, time_points: int):
    """One resumable ensemble through :func:`simulate` (store = the study's work folder)."""
    estimator, n = _ensemble_settings(spec, cfg)
    # the cost of an evolution is ~ one state update per stop: time points and measurements
    stops = time_points + (spec.reset.rate * t_final if spec.reset.kind in ("periodic", "random") else 0.0)
    n_init = (3 if init == "all" else 1) if isinstance(init, str) else len(init)
    options = ctx.run_options(label)  # workers, store, progress and (Dask) client
    if n * stops * n_init < _POOL_MIN_WORK and options.get("client") is None:
        options["workers"] = 1  # a process pool costs more than it saves (numbers do not depend on workers)
    return simulate(
        spec,
        init=init,
        t_final=t_final,
        time_points=time_points,
        trajectories=n,
        seed=_positive_int(cfg, "seed", 0),
        engine=cfg["engine"],
        estimator=estimator,
        engine_options=engine_options(cfg, spec),
        **options,
    )


def _us_per_J(spec: ArraySpec) -> float:
    return time_to_us(1.0, spec.J_hz)


def _nan(x) -> float:
    x = finite_or_none(x)
    return math.nan if x is None else x


def _json_list(a) -> list:
    return [finite_or_none(x) for x in np.asarray(a, dtype=float).ravel()]


def _plt():
    import matplotlib.pyplot as plt

    return plt


_RC = {
    "font.size": 10,
    "axes.labelsize": 10,
    "axes.titlesize": 10,
    "legend.fontsize": 8,
    "xtick.direction": "in",
    "ytick.direction": "in",
    "xtick.top": False,
    "ytick.right": True,
    "axes.grid": True,
    "grid.alpha": 0.25,
    "savefig.dpi": 200,
}


def _attrs(spec: ArraySpec, cfg: dict, **extra) -> dict:
    out = {}
    for k, v in spec.as_dict().items():
        if v is None:
            v = "inf" if k in ("T1q_J", "Tphi_J") else "none"
        elif isinstance(v, float) and math.isinf(v):
            v = "inf"
        out[k] = v
    out.pop("rate_J", None)
    out.update({
        "study": cfg["study"],
        "seed": int(cfg["seed"]),
        "engine": str(cfg["engine"]),
        "time_us_per_J": _us_per_J(spec),
        "quick": int(bool(cfg.get("quick", False))),
    })
    out.update(extra)
    return out


# ========================================================================= rate-sweep
class RateSweepStudy:
    """P_star^(L)(t_eval) vs reset rate and the two optimal rates per reset kind (paper Fig. 2c)."""

    NAME = "rate-sweep"
    HELP = """Leakage left at t = 200/J vs the reset rate, and the optimal rates.

    The array's leakage population P_star^(L)(t_eval) from |2> on the coding
    qubit on a log grid of reset rates G for periodic feedback, random
    feedback and engineered dissipation (L = 3, ideal conditions), with the
    low (stack propagation) and high (disintegration) optimal rates refined by
    a bounded minimiser and set against the paper's and the analytic values.
    Reproduces and extends paper Fig. 2c and the random-feedback figure of its
    appendix.  Default: about 5 minutes on 2 cores (--quick: seconds).
    """
    DEFAULTS = {
        "study": "rate-sweep",
        "model": {**_PAPER_MODEL, "conditions": "ideal"},
        "resets": ["periodic", "random", "dissipation"],
        "rate_min": "0.001J",
        "rate_max": "1000J",
        "rate_points": 25,
        "feedback_rate_max": "200J",
        "t_eval": "200/J",
        "optimize": True,
        "xatol_decades": 0.025,
        "realizations": 32,
        "trajectories": 200,
        "engine": "auto",
        "seed": 0,
    }
    QUICK = {
        "resets": ["periodic", "dissipation"],
        "rate_points": 13,
        "feedback_rate_max": "100J",
        "xatol_decades": 0.04,
        "realizations": 4,
        "trajectories": 16,
    }

    # ----------------------------------------------------------------- run
    def run(self, cfg: dict, ctx: StudyContext) -> StudyResult:
        """The sweep, the refined optima, outputs and figures into ``ctx.out``."""
        cond = _conditions(cfg, allow_both=False)[0]
        require("rate" not in cfg["model"], "rate", cfg["model"].get("rate"),
                "not set for the rate-sweep (the rate is swept: use rate_min, rate_max, rate_points)")
        if cfg["model"].get("reset") is not None:
            kinds = [cfg["model"]["reset"]]
        else:
            kinds = _list(cfg, "resets")
        for kind in kinds:
            require(kind in ("periodic", "random", "dissipation"), "resets", kind, "periodic, random or dissipation")
        base = _spec(cfg, reset="dissipation", rate="1J", conditions=cond)
        J_hz = base.J_hz
        rmin = to_rate(cfg["rate_min"], "rate_min", J_hz)
        rmax = to_rate(cfg["rate_max"], "rate_max", J_hz)
        fmax = to_rate(cfg["feedback_rate_max"], "feedback_rate_max", J_hz)
        require(0 < rmin < rmax and math.isfinite(rmax), "rate_max", cfg["rate_max"], f"a finite rate > rate_min = {rmin:g} J")
        npts = _positive_int(cfg, "rate_points", 3)
        t_eval = to_time(cfg["t_eval"], "t_eval", J_hz)
        require(math.isfinite(t_eval) and t_eval > 0, "t_eval", cfg["t_eval"], "a finite time > 0")
        xatol = float(cfg["xatol_decades"])
        require(0 < xatol < 1, "xatol_decades", cfg["xatol_decades"], "a tolerance in decades of the rate, 0 < x < 1")
        rates = np.logspace(math.log10(rmin), math.log10(rmax), npts)
        estimator, n_evol = _ensemble_settings(base, cfg)

        cache: dict[tuple[str, float], tuple[float, float]] = {}

        def leakage(kind: str, G: float) -> tuple[float, float]:
            key = (kind, float(G))
            if key not in cache:
                spec = base.replace(reset=Reset(kind, float(G)))
                res = _run(spec, cfg, ctx, f"{kind} G={G:.4g}J", init="leakage", t_final=t_eval, time_points=2)
                ms = res.observable("leakage_array")
                cache[key] = (float(ms.mean[-1]), float(ms.sem[-1]))
            return cache[key]

        K, R = len(kinds), len(rates)
        ctx.plan(sum(int(np.sum(rates <= (rmax if kd == "dissipation" else min(rmax, fmax)) * (1 + 1e-12)))
                     for kd in kinds))  # the grid; the minimiser's evaluations add stages
        mean = np.full((K, R), np.nan)
        sem = np.full((K, R), np.nan)
        for k, kind in enumerate(kinds):
            top = rmax if kind == "dissipation" else min(rmax, fmax)
            for i, G in enumerate(rates):
                if G <= top * (1 + 1e-12):
                    mean[k, i], sem[k, i] = leakage(kind, G)

        branches = ("low", "high")
        opt = np.full((K, 2), np.nan)
        opt_p = np.full((K, 2), np.nan)
        opt_sem = np.full((K, 2), np.nan)
        grid_opt = np.full((K, 2), np.nan)
        lo_b = np.full((K, 2), np.nan)
        hi_b = np.full((K, 2), np.nan)
        evals: dict[str, list[tuple[float, float, float]]] = {}
        for k, kind in enumerate(kinds):
            valid = np.isfinite(mean[k])
            idx = np.nonzero(valid)[0]
            minima = _two_minima(mean[k, idx])
            before = set(key for key in cache if key[0] == kind)
            for b, j in enumerate(minima):
                if j is None:
                    continue
                i = idx[j]
                grid_opt[k, b] = rates[i]
                lo, hi = rates[idx[j - 1]], rates[idx[j + 1]]
                lo_b[k, b], hi_b[k, b] = lo, hi
                if cfg.get("optimize", True):
                    from scipy.optimize import minimize_scalar

                    minimize_scalar(
                        lambda x: leakage(kind, 10.0**x)[0],
                        bounds=(math.log10(lo), math.log10(hi)),
                        method="bounded",
                        options={"xatol": xatol},
                    )
                # the optimum: the lowest evaluated point inside the bracket (grid point included)
                cand = [(G, *cache[(kd, G)]) for (kd, G) in cache if kd == kind and lo < G < hi]
                G_best, p_best, s_best = min(cand, key=lambda c: c[1])
                opt[k, b], opt_p[k, b], opt_sem[k, b] = G_best, p_best, s_best
            evals[kind] = sorted((G, *cache[(kd, G)]) for (kd, G) in cache if kd == kind and (kd, G) not in before)

        Jp = base.J_prop
        analytic_opt = {
            "periodic": (float(analytic.feedback_low_optimum(Jp)), float(analytic.feedback_high_optimum(base.Ubar))),
            "random": (float(analytic.feedback_low_optimum(Jp)), float(analytic.feedback_high_optimum(base.Ubar))),
            "dissipation": (float(analytic.dissipation_low_optimum(Jp)), float(analytic.dissipation_high_optimum(base.Ubar))),
        }
        paper_point = base.L == 3 and abs(base.J_hz - 5e6) < 1 and abs(base.Ubar - 50) < 1e-9 and abs(base.W - 20) < 1e-9

        n_ev = max([len(v) for v in evals.values()] + [1])
        ev_rate = np.full((K, n_ev), np.nan)
        ev_mean = np.full((K, n_ev), np.nan)
        ev_sem = np.full((K, n_ev), np.nan)
        for k, kind in enumerate(kinds):
            for e, (G, p, s) in enumerate(evals[kind]):
                ev_rate[k, e], ev_mean[k, e], ev_sem[k, e] = G, p, s

        us = _us_per_J(base)
        ds = xr.Dataset(
            {
                "leakage_mean": (("reset", "rate_J"), mean, {"units": "1", "long_name": "P_star^(L)(t_eval), mean"}),
                "leakage_sem": (("reset", "rate_J"), sem, {"units": "1", "long_name": "standard error"}),
                "optimum_rate_J": (("reset", "optimum"), opt, {"units": "J", "long_name": "refined optimal rate"}),
                "optimum_leakage_mean": (("reset", "optimum"), opt_p, {"units": "1"}),
                "optimum_leakage_sem": (("reset", "optimum"), opt_sem, {"units": "1"}),
                "grid_optimum_rate_J": (("reset", "optimum"), grid_opt, {"units": "J", "long_name": "grid minimum"}),
                "bracket_low_J": (("reset", "optimum"), lo_b, {"units": "J"}),
                "bracket_high_J": (("reset", "optimum"), hi_b, {"units": "J"}),
                "analytic_optimum_rate_J": (
                    ("reset", "optimum"),
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
                "optimum": ("optimum", np.array(branches, dtype=str)),
            },
            attrs=_attrs(
                base, cfg,
                conditions=cond,
                estimator=estimator,
                evolutions_per_rate=n_evol,
                t_eval_J=t_eval,
                t_eval_us=t_eval * us,
                observable="leakage_array",
                init="leakage",
                J_prop_J=Jp,
            ),
        )
        if paper_point:
            ds["paper_optimum_rate_J"] = (
                ("reset", "optimum"),
                np.array([[PAPER_OPTIMA_J[kd]["low"], PAPER_OPTIMA_J[kd]["high"]] for kd in kinds]),
                {"units": "J", "long_name": "paper's L = 3 numerics (Fig. 2c and the random-feedback figure)"},
            )

        summary = {
            "study": self.NAME,
            "parameters": {**base.as_dict(), "rate_J": None, "reset": None},
            "conditions": cond,
            "estimator": estimator,
            "evolutions_per_rate": n_evol,
            "t_eval_J": t_eval,
            "t_eval_us": t_eval * us,
            "J_prop_J": Jp,
            "resets": kinds,
            "rates_J": _json_list(rates),
            "rates_MHz": _json_list(rates * J_hz / 1e6),
            "leakage": {kd: {"mean": _json_list(mean[k]), "sem": _json_list(sem[k])} for k, kd in enumerate(kinds)},
            "optima_J": {kd: {b: finite_or_none(opt[k, j]) for j, b in enumerate(branches)} for k, kd in enumerate(kinds)},
            "optima_MHz": {
                kd: {b: finite_or_none(opt[k, j] * J_hz / 1e6) for j, b in enumerate(branches)} for k, kd in enumerate(kinds)
            },
            "optima_leakage": {
                kd: {b: {"mean": finite_or_none(opt_p[k, j]), "sem": finite_or_none(opt_sem[k, j])} for j, b in enumerate(branches)}
                for k, kd in enumerate(kinds)
            },
            "grid_optima_J": {kd: {b: finite_or_none(grid_opt[k, j]) for j, b in enumerate(branches)} for k, kd in enumerate(kinds)},
            "analytic_optima_J": {kd: {"low": analytic_opt[kd][0], "high": analytic_opt[kd][1]} for kd in kinds},
            "analytic_note": "L = 2 stack/disintegration model (docs/physics.md §9): low 2 J_prop (feedback) or sqrt2 J_prop "
                             "(dissipation), high Ubar (feedback) or 2 Ubar (dissipation); the feedback formulas are for "
                             "random feedback",
            "minimiser_evaluations": {kd: len(evals[kd]) for kd in kinds},
        }
        if paper_point:
            summary["paper_optima_J"] = {kd: PAPER_OPTIMA_J[kd] for kd in kinds}
        table = self.table(summary)
        write_outputs(ctx, cfg, ds, summary)
        self.plot(ds, summary, ctx.out / "figures")
        return StudyResult(self.NAME, ctx.out, summary, table, ds)

    # --------------------------------------------------------------- table
    @staticmethod
    def table(summary: dict) -> str:
        kinds = summary["resets"]
        t = summary["t_eval_J"]
        lines = [
            f"rate-sweep: array leakage P_star^(L)(t = {t:g}/J = {summary['t_eval_us']:.3g} us) vs reset rate G, "
            f"L = {summary['parameters']['L']}, {summary['conditions']} conditions, "
            f"{summary['evolutions_per_rate']} {'realizations' if summary['estimator'] == 'branch' else 'trajectories'} per rate",
            "",
            f"{'G (J)':>10} {'G/2pi (MHz)':>12} " + " ".join(f"{k:>17}" for k in kinds),
        ]
        for i, G in enumerate(summary["rates_J"]):
            cells = []
            for k in kinds:
                m, s = summary["leakage"][k]["mean"][i], summary["leakage"][k]["sem"][i]
                cells.append(f"{'-':>17}" if m is None else f"{m:9.4f}+-{(s or 0):<6.4f}")
            lines.append(f"{G:10.4g} {summary['rates_MHz'][i]:12.4g} " + " ".join(cells))
        lines += ["", "optimal rates (units of J): refined minimum of P_star^(L)(t_eval), L = 2 analytic position"
                  + (", paper's L = 3 numerics" if "paper_optima_J" in summary else "")]
        head = f"{'reset':>12} {'optimum':>8} {'found':>10} {'P_star':>17} {'analytic':>10} {'found/an.':>10}"
        if "paper_optima_J" in summary:
            head += f" {'paper':>8}"
        lines.append(head)

        def f(x, fmt="10.4g"):
            return f"{'-':>{fmt.split('.')[0]}}" if x is None else format(x, fmt)

        for k in kinds:
            for b in ("low", "high"):
                found = summary["optima_J"][k][b]
                an = summary["analytic_optima_J"][k][b]
                p = summary["optima_leakage"][k][b]
                pcell = f"{'-':>17}" if p["mean"] is None else f"{p['mean']:9.4f}+-{(p['sem'] or 0):<6.4f}"
                ratio = None if found is None else found / an
                row = f"{k:>12} {b:>8} {f(found)} {pcell} {f(an)} {f(ratio)}"
                if "paper_optima_J" in summary:
                    row += f" {f(summary['paper_optima_J'][k][b], '8.3g')}"
                lines.append(row)
        lines.append(f"J_prop = {summary['J_prop_J']:.4g} J; {summary['analytic_note']}")
        return "\n".join(lines) + "\n"

    # ---------------------------------------------------------------- plot
    @staticmethod
    def plot(ds, summary: dict, figdir) -> list:
        """P_star^(L)(t_eval) vs G (log-log) with the found and analytic optima."""
        plt = _plt()
        styles = {"periodic": ("C0", "o", "-"), "random": ("C2", "s", "-."), "dissipation": ("C3", "^", "--")}
        J_MHz = float(ds.attrs["J_over_2pi_Hz"]) / 1e6
        with plt.rc_context(_RC):
            fig, ax = plt.subplots(figsize=(6.4, 4.2))
            rates = ds["rate_J"].values
            for kind in ds["reset"].values:
                c, mk, ls = styles.get(str(kind), ("k", "o", "-"))
                m = ds["leakage_mean"].sel(reset=kind).values
                s = ds["leakage_sem"].sel(reset=kind).values
                ok = np.isfinite(m)
                ax.plot(rates[ok], m[ok], ls, color=c, marker=mk, ms=3.5, label=f"{kind}")
                ax.fill_between(rates[ok], np.clip(m[ok] - s[ok], 1e-6, None), m[ok] + s[ok], color=c, alpha=0.2, lw=0)
                er = ds["evaluation_rate_J"].sel(reset=kind).values
                em = ds["evaluation_leakage_mean"].sel(reset=kind).values
                okk = np.isfinite(er)
                ax.plot(er[okk], em[okk], ".", color=c, ms=3, alpha=0.7)
                for b in ("low", "high"):
                    g = float(ds["optimum_rate_J"].sel(reset=kind, optimum=b))
                    if np.isfinite(g):
                        ax.axvline(g, color=c, ls=ls, lw=0.9, alpha=0.9)
                        ax.plot([g], [float(ds["optimum_leakage_mean"].sel(reset=kind, optimum=b))], marker="*",
                                color=c, ms=11, mec="k", mew=0.5, ls="none")
                    a = float(ds["analytic_optimum_rate_J"].sel(reset=kind, optimum=b))
                    ax.axvline(a, color=c, ls=":", lw=0.9, alpha=0.6)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel(r"reset rate $\Gamma$ (units of $J$)")
            ax.set_ylabel(r"$P_\star^{(L)}(t)$ at $tJ = %g$" % float(ds.attrs["t_eval_J"]))
            ax.set_title(f"L = {int(ds.attrs['L'])}, {ds.attrs['conditions']} conditions, "
                         f"J/2π = {J_MHz:g} MHz, W = {float(ds.attrs['W_J']):g} J, Ū = {float(ds.attrs['Ubar_J']):g} J")
            sec = ax.secondary_xaxis("top", functions=(lambda x: x * J_MHz, lambda x: x / J_MHz))
            sec.set_xlabel(r"$\Gamma/2\pi$ (MHz)")
            from matplotlib.lines import Line2D

            handles, labels = ax.get_legend_handles_labels()
            handles += [Line2D([], [], color="0.3", marker="*", ls="none", ms=9, mec="k", mew=0.5),
                        Line2D([], [], color="0.3", ls=":", lw=0.9)]
            labels += ["found optimum (minimiser)", "analytic optimum (L = 2)"]
            ax.legend(handles, labels, loc="lower center", frameon=True, framealpha=0.9)
            fig.tight_layout()
            return save_figure(fig, figdir, "leakage_vs_rate")


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


# ====================================================================== decay sweeps
class DecaySweepStudy:
    """T_star, T_prop, T1, T2 vs one model parameter for ideal and realistic conditions (paper Fig. 3)."""

    def __init__(self, name: str, model_key: str, list_key: str, dim: str, label: str, defaults: dict, quick: dict,
                 help: str):
        self.NAME = name
        self.HELP = help
        self.model_key = model_key  # 'disorder' or 'hopping'
        self.list_key = list_key  # 'disorders' or 'hoppings'
        self.dim = dim
        self.label = label
        self.DEFAULTS = defaults
        self.QUICK = quick

    # ------------------------------------------------------------------ specs
    def _values(self, cfg: dict) -> list[str]:
        if cfg["model"].get(self.model_key) is not None:
            return [cfg["model"][self.model_key]]
        return [str(v) for v in _list(cfg, self.list_key)]

    def _point_spec(self, cfg: dict, value, cond: str) -> ArraySpec:
        spec = _spec(cfg, **{self.model_key: value}, conditions=cond)
        if self.model_key == "hopping":
            scaling = cfg.get("rate_scaling", "jprop")
            require(scaling in ("jprop", "fixed"), "rate_scaling", scaling, "jprop or fixed")
            if scaling == "jprop" and spec.reset.kind != "none":
                ref = _spec(cfg, hopping=cfg["rate_reference_hopping"], conditions=cond)
                c = ref.reset.rate / ref.J_prop
                spec = spec.replace(reset=Reset(spec.reset.kind, c * spec.J_prop))
        return spec

    def _value_MHz(self, spec: ArraySpec) -> float:
        return (spec.W if self.model_key == "disorder" else 1.0) * spec.J_hz / 1e6

    def _t_finals(self, spec: ArraySpec, cfg: dict) -> dict[str, float]:
        """Simulated times (1/J): {'leakage': ((L-1) + leakage_tail_tprop) T_prop, 'qubit': t_final}."""
        t = to_time(cfg["t_final"], "t_final", spec.J_hz)
        require(math.isfinite(t) and t > 0, "t_final", cfg["t_final"], "a finite time > 0")
        k = cfg["leakage_tail_tprop"]
        require(isinstance(k, (int, float)) and not isinstance(k, bool) and k > 0, "leakage_tail_tprop", k,
                "a number of propagation times T_prop > 0")
        return {"leakage": ((spec.L - 1) + float(k)) * spec.T_prop, "qubit": t}

    # -------------------------------------------------------------------- run
    def run(self, cfg: dict, ctx: StudyContext) -> StudyResult:
        conds = _conditions(cfg, allow_both=True)
        values = self._values(cfg)
        T = _positive_int(cfg, "time_points", 3)
        P, C = len(values), len(conds)
        specs = [[self._point_spec(cfg, v, c) for v in values] for c in conds]
        # sort the points by the sweep variable (MHz)
        order = np.argsort([self._value_MHz(s) for s in specs[0]], kind="stable")
        values = [values[i] for i in order]
        specs = [[row[i] for i in order] for row in specs]

        tau = {q: np.full((C, P, 2), np.nan) for q in DECAYS}  # (value, error) in 1/J of the point
        amp = {q: np.full((C, P), np.nan) for q in FITTED}
        window = {q: np.full((C, P, 2), np.nan) for q in FITTED}
        curves = {obs: np.full((C, P, T, 2), np.nan) for obs, _ in CURVES.values()}
        time_J = {part: np.full((P, T), np.nan) for part in _PARTS}
        estimators = np.full((C,), "", dtype=object)
        evolutions = np.zeros(C, dtype=int)
        ctx.plan(C * P * len(_PARTS))
        for ci, cond in enumerate(conds):
            for pi, (value, spec) in enumerate(zip(values, specs[ci])):
                t_finals = self._t_finals(spec, cfg)
                estimators[ci], evolutions[ci] = _ensemble_settings(spec, cfg)
                # leakage (T_star) and qubit (T1, T2) ensembles run to different times: the leakage
                # fit window must cover a few T_star after the transit, the qubit one a few T1
                for part, inits in _PARTS.items():
                    label = f"{cond} {self.model_key}={value} {part}"
                    res = _run(spec, cfg, ctx, label, init=inits, t_final=t_finals[part], time_points=T)
                    time_J[part][pi] = res.times
                    for q, d in decay_times(res).items():
                        if q in FITTED and CURVES[q][0] not in _PART_OBSERVABLES[part]:
                            continue
                        if q == "T_prop":
                            tau[q][ci, pi] = (d.value, d.error)
                            continue
                        obs = CURVES[q][0]
                        ms = res.observable(obs)
                        curves[obs][ci, pi, :, 0] = ms.mean
                        curves[obs][ci, pi, :, 1] = ms.sem
                        if d is None:
                            continue
                        tau[q][ci, pi] = (_nan(d.value), _nan(d.error))
                        if d.fit is not None:
                            amp[q][ci, pi] = _nan(d.fit.amplitude)
                            window[q][ci, pi] = (d.fit.t_start, d.fit.t_end)

        ds, summary = self._assemble(cfg, conds, values, specs, tau, amp, window, curves, time_J, estimators, evolutions)
        table = self.table(summary)
        write_outputs(ctx, cfg, ds, summary)
        self.plot(ds, summary, ctx.out / "figures")
        return StudyResult(self.NAME, ctx.out, summary, table, ds)

    def _assemble(self, cfg, conds, values, specs, tau, amp, window, curves, time_J, estimators, evolutions):
        dim = self.dim
        row = specs[0]
        us = np.array([_us_per_J(s) for s in row])  # us per 1/J of each point
        J_MHz = np.array([s.J_hz / 1e6 for s in row])
        W_J = np.array([s.W for s in row])
        W_MHz = W_J * J_MHz
        rates_J = np.array([[s.reset.rate for s in r] for r in specs])
        data = {}
        for q in DECAYS:
            attrs_J = {"units": "1/J", "long_name": f"{q} in units of 1/J of the point's own hopping J"}
            data[f"{q}_J"] = (("conditions", dim), tau[q][..., 0], attrs_J)
            data[f"{q}_error_J"] = (("conditions", dim), tau[q][..., 1], attrs_J)
            data[f"{q}_us"] = (("conditions", dim), tau[q][..., 0] * us, {"units": "us", "long_name": q})
            data[f"{q}_error_us"] = (("conditions", dim), tau[q][..., 1] * us, {"units": "us"})
        for q in FITTED:
            data[f"{q}_amplitude"] = (("conditions", dim), amp[q], {"units": "1", "long_name": f"fit amplitude A of {q}"})
            data[f"{q}_window_start_J"] = (("conditions", dim), window[q][..., 0], {"units": "1/J"})
            data[f"{q}_window_end_J"] = (("conditions", dim), window[q][..., 1], {"units": "1/J"})
        for obs, arr in curves.items():
            data[f"{obs}_mean"] = (("conditions", dim, "t"), arr[..., 0], {"units": "1"})
            data[f"{obs}_sem"] = (("conditions", dim, "t"), arr[..., 1], {"units": "1"})
        data["rate_J"] = (("conditions", dim), rates_J, {"units": "J", "long_name": "reset rate G"})
        data["rate_MHz"] = (("conditions", dim), rates_J * J_MHz[None, :], {"units": "MHz", "long_name": "G/2pi"})
        coords = {
            "conditions": ("conditions", np.array(conds, dtype=str)),
            "leakage_time_J": ((dim, "t"), time_J["leakage"], {"units": "1/J", "long_name": "time of leakage_array"}),
            "leakage_time_us": ((dim, "t"), time_J["leakage"] * us[:, None], {"units": "us"}),
            "time_J": ((dim, "t"), time_J["qubit"], {"units": "1/J", "long_name": "time of the qubit curves"}),
            "time_us": ((dim, "t"), time_J["qubit"] * us[:, None], {"units": "us"}),
        }
        if dim == "disorder":
            coords["disorder"] = ("disorder", W_MHz, {"units": "MHz", "long_name": "W/2pi"})
            coords["disorder_J"] = ("disorder", W_J, {"units": "J"})
        else:
            coords["hopping"] = ("hopping", J_MHz, {"units": "MHz", "long_name": "J/2pi"})
            coords["Ubar_J"] = ("hopping", np.array([s.Ubar for s in row]), {"units": "J"})
            coords["disorder_J"] = ("hopping", W_J, {"units": "J"})
        spec0 = row[0]
        extra = {
            "conditions_list": ",".join(conds),
            "estimators": ",".join(str(e) for e in estimators),
            "evolutions": ",".join(str(int(n)) for n in evolutions),
            "reset_kind": spec0.reset.kind,
        }
        if "realistic" in conds:
            rs = specs[conds.index("realistic")][0]
            t1q, tphi = rs.conditions.T1q * _us_per_J(rs), rs.conditions.Tphi * _us_per_J(rs)
            extra["T1q_us"] = t1q if math.isfinite(t1q) else "inf"
            extra["T2q_us"] = 1.0 / (1.0 / (2.0 * t1q) + 1.0 / tphi) if math.isfinite(t1q) or math.isfinite(tphi) else "inf"
        if dim == "hopping":
            extra["rate_scaling"] = str(cfg.get("rate_scaling", "jprop"))
        attrs = _attrs(spec0, cfg, **extra)
        # per-point or per-condition quantities live in the data, not in the attributes
        drop = ["T1q_J", "Tphi_J", "temperature_K"]
        drop += ["W_J"] if dim == "disorder" else ["J_over_2pi_Hz", "Ubar_J", "wbar_J", "W_J", "time_us_per_J"]
        for k in drop:
            attrs.pop(k, None)
        ds = xr.Dataset(data, coords=coords, attrs=attrs)

        summary = {
            "study": self.NAME,
            "conditions": conds,
            "parameters": {
                "L": int(spec0.L),
                "reset": spec0.reset.kind,
                "wbar_MHz": spec0.wbar * spec0.J_hz / 1e6,
                "Ubar_MHz": spec0.Ubar * spec0.J_hz / 1e6,
                **({"J_over_2pi_MHz": spec0.J_hz / 1e6} if dim == "disorder" else {"W_MHz": float(W_MHz[0])}),
                **({"rate_scaling": str(cfg.get("rate_scaling", "jprop"))} if dim == "hopping" else {}),
            },
            "ensembles": {c: {"estimator": str(estimators[ci]), "evolutions": int(evolutions[ci])} for ci, c in enumerate(conds)},
            "t_final_J": {part: _json_list(time_J[part][:, -1]) for part in _PARTS},
            "t_final_us": {part: _json_list(time_J[part][:, -1] * us) for part in _PARTS},
        }
        if dim == "disorder":
            summary["disorders_MHz"] = _json_list(W_MHz)
            summary["disorders_J"] = _json_list(W_J)
            summary["rates_J"] = _json_list(rates_J[0])
        else:
            summary["hoppings_MHz"] = _json_list(J_MHz)
            summary["rates_J"] = _json_list(rates_J[0])
            summary["rates_MHz"] = _json_list(rates_J[0] * J_MHz)
            summary["Ubar_J"] = _json_list([s.Ubar for s in row])
            summary["disorder_J"] = _json_list(W_J)
        for ci, c in enumerate(conds):
            entry = {}
            for q in DECAYS:
                entry[q] = [time_json(tau[q][ci, pi, 0], tau[q][ci, pi, 1], specs[ci][pi].J_hz) for pi in range(len(row))]
            entry["fits"] = {
                q: [
                    {"amplitude": finite_or_none(amp[q][ci, pi]),
                     "window_J": [finite_or_none(window[q][ci, pi, 0]), finite_or_none(window[q][ci, pi, 1])]}
                    for pi in range(len(row))
                ]
                for q in FITTED
            }
            summary[c] = entry
        return ds, summary

    # ------------------------------------------------------------------ table
    def table(self, summary: dict) -> str:
        if self.dim == "disorder":
            xs, head = summary["disorders_MHz"], "W/2pi (MHz)"
            xj = summary["disorders_J"]
        else:
            xs, head = summary["hoppings_MHz"], "J/2pi (MHz)"
            xj = summary["rates_J"]
        lines = [f"{self.NAME}: decay times vs {self.label}, L = {summary['parameters']['L']}, "
                 f"{summary['parameters']['reset']} reset; times in us (value +- jackknife error)"]

        def cell(t):
            if t is None or t.get("value_us") is None:
                return f"{'-':>17}"
            err = "?" if t.get("error_us") is None else format(t["error_us"], ".2g")
            return f"{t['value_us']:8.4g}+-{err:<7}"

        for c in summary["conditions"]:
            e = summary["ensembles"][c]
            kind = "disorder realizations (exact branch)" if e["estimator"] == "branch" else "sampled trajectories"
            lines += ["", f"{c} conditions ({e['evolutions']} {kind} per point)"]
            second = "W (J)" if self.dim == "disorder" else "G (J)"
            lines.append(f"{head:>12} {second:>8} {'T_prop':>9} {'T_star':>17} {'T1':>17} {'T2':>17}")
            for i, x in enumerate(xs):
                d = summary[c]
                lines.append(
                    f"{x:12.4g} {xj[i]:8.4g} {d['T_prop'][i]['value_us']:9.4g} "
                    f"{cell(d['T_star'][i])} {cell(d['T1'][i])} {cell(d['T2'][i])}"
                )
        return "\n".join(lines) + "\n"

    # ------------------------------------------------------------------- plot
    def plot(self, ds, summary: dict, figdir) -> list:
        """Decay times vs the sweep variable (one panel per condition) and the fitted curves."""
        plt = _plt()
        x = ds[self.dim].values
        xlabel = r"disorder $W/2\pi$ (MHz)" if self.dim == "disorder" else r"hopping $J/2\pi$ (MHz)"
        conds = [str(c) for c in ds["conditions"].values]
        paths = []
        styles = {"T_star": ("C0", "o", r"$T_\star$"), "T_prop": ("k", "", r"$T_{\rm prop}$"),
                  "T1": ("C3", "s", r"$T_1$"), "T2": ("C2", "^", r"$T_2$")}
        with plt.rc_context(_RC):
            fig, axes = plt.subplots(len(conds), 1, figsize=(5.0, 3.3 * len(conds)), sharex=True, squeeze=False)
            for ax, cond in zip(axes[:, 0], conds):
                for q in DECAYS:
                    c, mk, lab = styles[q]
                    v = ds[f"{q}_us"].sel(conditions=cond).values
                    e = ds[f"{q}_error_us"].sel(conditions=cond).values
                    ok = np.isfinite(v)
                    if not ok.any():
                        continue
                    if q == "T_prop":
                        ax.plot(x[ok], v[ok], "--", color=c, lw=1.2, label=lab)
                    else:
                        ax.errorbar(x[ok], v[ok], yerr=np.nan_to_num(e[ok]), fmt=mk + "-", color=c, ms=4, capsize=2,
                                    lw=1.0, label=lab)
                if cond == "realistic":
                    for key, c, lab in (("T1q_us", "C3", r"$T_1^{\rm q}$"), ("T2q_us", "C2", r"$T_2^{\rm q}$")):
                        v = ds.attrs.get(key, "inf")
                        if not isinstance(v, str) and np.isfinite(v):
                            ax.axhline(float(v), color=c, ls=":", lw=1, label=lab + " (one transmon)")
                ax.set_yscale("log")
                ax.set_ylabel(r"time ($\mu$s)")
                ax.set_title(f"{cond} conditions, L = {int(ds.attrs['L'])}, {ds.attrs['reset_kind']} reset")
                ax.legend(loc="best", ncol=2)
            axes[-1, 0].set_xlabel(xlabel)
            if self.dim == "hopping":
                axes[-1, 0].set_xscale("log")
                axes[-1, 0].set_xticks(x)
                axes[-1, 0].set_xticklabels([f"{v:g}" for v in x])
                axes[-1, 0].minorticks_off()
            fig.tight_layout()
            paths += save_figure(fig, figdir, f"decay_times_vs_{self.dim}")

            # the curves and their fits (paper Fig. 7)
            fig, axes = plt.subplots(len(conds), 3, figsize=(11.0, 3.1 * len(conds)), squeeze=False)
            cmap = plt.get_cmap("viridis")
            names = {"T_star": r"$P_\star^{(L)}(t)$", "T1": r"$\langle n_1\rangle(t)$", "T2": r"$2C(t)$"}
            for r, cond in enumerate(conds):
                for col, q in enumerate(FITTED):
                    ax = axes[r, col]
                    obs, factor = CURVES[q]
                    for p in range(len(x)):
                        color = cmap(p / max(1, len(x) - 1))
                        prefix = "leakage_" if q == "T_star" else ""
                        t_us = ds[f"{prefix}time_us"].isel({self.dim: p}).values
                        t_J = ds[f"{prefix}time_J"].isel({self.dim: p}).values
                        y = factor * ds[f"{obs}_mean"].sel(conditions=cond).isel({self.dim: p}).values
                        ax.plot(t_us, y, color=color, lw=1.0, label=f"{x[p]:g} MHz")
                        tau = float(ds[f"{q}_J"].sel(conditions=cond).isel({self.dim: p}))
                        A = float(ds[f"{q}_amplitude"].sel(conditions=cond).isel({self.dim: p}))
                        t0 = float(ds[f"{q}_window_start_J"].sel(conditions=cond).isel({self.dim: p}))
                        t1 = float(ds[f"{q}_window_end_J"].sel(conditions=cond).isel({self.dim: p}))
                        if all(np.isfinite([tau, A, t0, t1])):
                            tt = np.linspace(t0, t1, 50)
                            ax.plot(tt * t_us[-1] / t_J[-1], A * np.exp(-tt / tau), ls="--", color=color, lw=0.9)
                    ax.set_yscale("log")
                    ax.set_xlabel(r"time $t$ ($\mu$s)")
                    ax.set_ylabel(names[q])
                    ax.set_title(f"{cond}: {names[q]} (dashed: fit)")
                    if col == 0:
                        ax.legend(title=("W/2π" if self.dim == "disorder" else "J/2π"), fontsize=7)
            fig.tight_layout()
            paths += save_figure(fig, figdir, f"fits_vs_{self.dim}")
        return paths


# ========================================================================== dynamics
class DynamicsStudy:
    """P_star^(1)(t) and P_star^(L)(t) at a low and a high reset rate (paper Fig. 2a,b)."""

    NAME = "dynamics"
    HELP = """Leakage dynamics P_star^(1)(t), P_star^(L)(t) at a low and a high rate.

    The leakage population on the coding qubit and in the whole array after
    |2> is prepared on site 1, at the low and high optimal reset rates (L = 3,
    ideal conditions by default).  Reproduces paper Fig. 2a,b.  Default: about
    a minute on 2 cores (--quick: seconds).
    """
    DEFAULTS = {
        "study": "dynamics",
        "model": {**_PAPER_MODEL, "reset": "periodic", "conditions": "ideal"},
        "rates": ["0.03J", "50J"],
        "t_final": "200/J",
        "time_points": 201,
        "realizations": 200,
        "trajectories": 500,
        "engine": "auto",
        "seed": 0,
    }
    QUICK = {"realizations": 8, "trajectories": 16, "time_points": 101}

    def run(self, cfg: dict, ctx: StudyContext) -> StudyResult:
        cond = _conditions(cfg, allow_both=False)[0]
        model = cfg["model"]
        require(model.get("reset", "periodic") != "none", "reset", "none", "periodic, random or dissipation")
        labels = [model["rate"]] if model.get("rate") is not None else [str(r) for r in _list(cfg, "rates")]
        specs = [_spec(cfg, rate=r, conditions=cond) for r in labels]
        spec0 = specs[0]
        t_final = to_time(cfg["t_final"], "t_final", spec0.J_hz)
        require(math.isfinite(t_final) and t_final > 0, "t_final", cfg["t_final"], "a finite time > 0")
        T = _positive_int(cfg, "time_points", 2)
        R, L = len(specs), spec0.L
        obs_names = ("leakage_site1", "leakage_array")
        data = {o: np.full((R, T, 2), np.nan) for o in obs_names}
        site = np.full((R, T, L, 2), np.nan)
        times = None
        estimator, n_evol = _ensemble_settings(spec0, cfg)
        ctx.plan(len(specs))
        for i, (lab, spec) in enumerate(zip(labels, specs)):
            res = _run(spec, cfg, ctx, f"{spec.reset.kind} G={lab}", init="leakage", t_final=t_final, time_points=T)
            times = res.times
            for o in obs_names:
                ms = res.observable(o)
                data[o][i, :, 0], data[o][i, :, 1] = ms.mean, ms.sem
            ms = res.site_resolved("leakage", "site_leakage")
            site[i, ..., 0], site[i, ..., 1] = ms.mean, ms.sem
        us = _us_per_J(spec0)
        rates_J = np.array([s.reset.rate for s in specs])
        ds = xr.Dataset(
            {
                "leakage_site1_mean": (("rate", "time_J"), data["leakage_site1"][..., 0], {"units": "1", "long_name": "P_star^(1)(t)"}),
                "leakage_site1_sem": (("rate", "time_J"), data["leakage_site1"][..., 1], {"units": "1"}),
                "leakage_array_mean": (("rate", "time_J"), data["leakage_array"][..., 0], {"units": "1", "long_name": "P_star^(L)(t)"}),
                "leakage_array_sem": (("rate", "time_J"), data["leakage_array"][..., 1], {"units": "1"}),
                "site_leakage_mean": (("rate", "time_J", "site"), site[..., 0], {"units": "1", "long_name": "<|2><2|_l>(t)"}),
                "site_leakage_sem": (("rate", "time_J", "site"), site[..., 1], {"units": "1"}),
            },
            coords={
                "rate": ("rate", np.array(labels, dtype=str), {"long_name": "reset rate as configured"}),
                "rate_J": ("rate", rates_J, {"units": "J"}),
                "rate_MHz": ("rate", rates_J * spec0.J_hz / 1e6, {"units": "MHz", "long_name": "G/2pi"}),
                "time_J": ("time_J", times, {"units": "1/J"}),
                "time_us": ("time_J", times * us, {"units": "us"}),
                "site": ("site", np.arange(1, L + 1)),
            },
            attrs=_attrs(spec0, cfg, conditions=cond, estimator=estimator, evolutions=n_evol,
                         reset_kind=spec0.reset.kind, T_prop_J=spec0.T_prop, init="leakage"),
        )
        summary = {
            "study": self.NAME,
            "parameters": {**spec0.as_dict(), "rate_J": None},
            "conditions": cond,
            "estimator": estimator,
            "evolutions": n_evol,
            "T_prop_J": spec0.T_prop,
            "T_prop_us": spec0.T_prop * us,
            "rates": labels,
            "rates_J": _json_list(rates_J),
            "time_J": _json_list(times),
            "time_us": _json_list(times * us),
            "curves": {
                lab: {
                    "rate_J": float(rates_J[i]),
                    **{o: {"mean": _json_list(data[o][i, :, 0]), "sem": _json_list(data[o][i, :, 1])} for o in obs_names},
                }
                for i, lab in enumerate(labels)
            },
        }
        table = self.table(summary)
        write_outputs(ctx, cfg, ds, summary)
        self.plot(ds, summary, ctx.out / "figures")
        return StudyResult(self.NAME, ctx.out, summary, table, ds)

    @staticmethod
    def table(summary: dict) -> str:
        t = np.array(summary["time_J"], dtype=float)
        marks = [x for x in (0.0, summary["T_prop_J"], 2 * summary["T_prop_J"], 50.0, 100.0, 150.0, t[-1]) if x <= t[-1]]
        idx = sorted(set(int(np.argmin(np.abs(t - m))) for m in marks))
        lines = [
            f"dynamics: leakage from |2> on site 1, L = {summary['parameters']['L']}, {summary['parameters']['reset']} reset, "
            f"{summary['conditions']} conditions, {summary['evolutions']} "
            f"{'realizations' if summary['estimator'] == 'branch' else 'trajectories'} per rate; "
            f"T_prop = {summary['T_prop_J']:.4g}/J = {summary['T_prop_us']:.3g} us",
            "",
            f"{'G':>8} {'tJ':>8} {'t (us)':>8} {'P_star^(1)':>17} {'P_star^(L)':>17}",
        ]
        for lab, c in summary["curves"].items():
            for i in idx:
                a, b = c["leakage_site1"], c["leakage_array"]
                lines.append(
                    f"{lab:>8} {t[i]:8.4g} {summary['time_us'][i]:8.3g} "
                    f"{a['mean'][i]:9.4f}+-{a['sem'][i] or 0:<6.4f} {b['mean'][i]:9.4f}+-{b['sem'][i] or 0:<6.4f}"
                )
        return "\n".join(lines) + "\n"

    @staticmethod
    def plot(ds, summary: dict, figdir) -> list:
        """(a) P_star^(1)(t), (b) P_star^(L)(t) for each rate."""
        plt = _plt()
        us = float(ds.attrs["time_us_per_J"])
        t = ds["time_J"].values
        with plt.rc_context(_RC):
            fig, axes = plt.subplots(1, 2, figsize=(9.0, 3.6), sharey=True)
            colors = plt.get_cmap("Blues")(np.linspace(0.45, 0.95, max(2, ds.sizes["rate"])))
            for ax, obs, lab in zip(axes, ("leakage_site1", "leakage_array"), (r"$P_\star^{(1)}(t)$", r"$P_\star^{(L)}(t)$")):
                for i in range(ds.sizes["rate"]):
                    m = ds[f"{obs}_mean"].isel(rate=i).values
                    s = ds[f"{obs}_sem"].isel(rate=i).values
                    g = float(ds["rate_J"].isel(rate=i))
                    ax.plot(t, m, color=colors[i], lw=1.4, label=rf"$\Gamma = {g:g}\,J$")
                    ax.fill_between(t, m - s, m + s, color=colors[i], alpha=0.25, lw=0)
                tp = float(ds.attrs["T_prop_J"])
                L = int(ds.attrs["L"])
                ax.axvline(tp, color="0.4", ls=":", lw=1, label=r"$T_{\rm prop}$")
                if L > 2:
                    ax.axvline((L - 1) * tp, color="0.4", ls="--", lw=1, label=r"$(L-1)T_{\rm prop}$")
                ax.set_xlabel(r"time $tJ$")
                ax.set_ylabel(lab)
                ax.set_ylim(0, 1.02)
                ax.set_xlim(t[0], t[-1])
                sec = ax.secondary_xaxis("top", functions=(lambda x: x * us, lambda x: x / us))
                sec.set_xlabel(r"$t$ ($\mu$s)")
                ax.legend(loc="upper right")
            axes[0].set_title(f"(a) qubit site, L = {int(ds.attrs['L'])}, {ds.attrs['reset_kind']}", loc="left")
            axes[1].set_title("(b) whole array", loc="left")
            fig.tight_layout()
            return save_figure(fig, figdir, "leakage_dynamics")


# ========================================================================= registry
_SWEEP_MODEL = {**_PAPER_MODEL, "reset": "periodic", "rate": "0.03J", "conditions": "both"}

DisorderSweep = DecaySweepStudy(
    "disorder-sweep",
    model_key="disorder",
    list_key="disorders",
    dim="disorder",
    label="disorder W",
    defaults={
        "study": "disorder-sweep",
        "model": {k: v for k, v in _SWEEP_MODEL.items() if k != "disorder"},
        "disorders": ["20MHz", "50MHz", "100MHz", "150MHz", "200MHz"],
        "t_final": "40us",
        "leakage_tail_tprop": 6.0,
        "time_points": 201,
        "realizations": 200,
        "trajectories": 1000,
        "engine": "auto",
        "seed": 0,
    },
    quick={"disorders": ["50MHz", "150MHz"], "realizations": 16, "trajectories": 32, "time_points": 81, "t_final": "20us"},
    help="""T_star, T_prop, T1 and T2 vs the disorder width W.

    Decay times of leakage (T_star) and of the qubit (T1, T2) at L = 3 with
    periodic feedback at 0.03 J, for W/2pi from 20 to 200 MHz, under ideal
    and realistic conditions (T1q, Tphi, temperature).  Reproduces paper
    Fig. 3a,d.  Default: about 2 minutes on 2 cores (--quick: seconds).
    """,
)

HoppingSweep = DecaySweepStudy(
    "hopping-sweep",
    model_key="hopping",
    list_key="hoppings",
    dim="hopping",
    label="hopping J",
    defaults={
        "study": "hopping-sweep",
        "model": {k: v for k, v in _SWEEP_MODEL.items() if k != "hopping"},
        "hoppings": ["2MHz", "3MHz", "5MHz", "7MHz", "10MHz"],
        "rate_scaling": "jprop",
        "rate_reference_hopping": "5MHz",
        "t_final": "40us",
        "leakage_tail_tprop": 6.0,
        "time_points": 201,
        "realizations": 200,
        "trajectories": 1000,
        "engine": "auto",
        "seed": 0,
    },
    quick={"hoppings": ["5MHz", "10MHz"], "realizations": 16, "trajectories": 32, "time_points": 81, "t_final": "20us"},
    help="""T_star, T_prop, T1 and T2 vs the hopping J.

    Decay times of leakage and of the qubit at L = 3 for J/2pi from 2 to
    10 MHz (the reset rate follows J_prop as in the paper), under ideal and
    realistic conditions.  Reproduces paper Fig. 3b,e.  Default: about 4
    minutes on 2 cores (--quick: seconds).
    """,
)

RateSweep = RateSweepStudy()
Dynamics = DynamicsStudy()

STUDIES = {
    "rate-sweep": RateSweep,
    "disorder-sweep": DisorderSweep,
    "hopping-sweep": HoppingSweep,
    "dynamics": Dynamics,
}
