"""Study ``dynamics`` (paper Fig. 2a,b): the leakage population over time at a low and a high rate.

P_star^(1)(t) and P_star^(L)(t) (observables ``leakage_site1`` and
``leakage_array``) and the per-site leakage, from |2> on site 1, at each of
the configured reset rates (``--rate`` runs one), and per rate the leakage
lifetimes tau_1, tau_L and the removal efficiency of the same ensemble
(:func:`lru_mps.analysis.lifetimes.leakage_lifetimes`; :mod:`.lifetimes`).
"""

from __future__ import annotations

import math

import numpy as np
import xarray as xr

from ..analysis.lifetimes import LIFETIMES, leakage_lifetimes
from ..errors import require
from ..physics.units import to_time
from ..analysis.numbers import pm, resolution_reason, sig
from .base import TIME_UNITS, Study, StudyContext, parameters_json, save_figure, time_axis, time_unit
from .common import (evolution_kind, PLOT_STYLE, as_list, conditions_of, dataset_attrs, ensemble_settings, json_list, positive_int, pyplot,
                     run_ensemble, spec_of, us_per_J)
from .lifetimes import HEAD, LEGEND, LifetimeGrid, cells


class Dynamics(Study):
    """P_star^(1)(t) and P_star^(L)(t) at a low and a high reset rate (paper Fig. 2a,b)."""

    NAME = "dynamics"
    SWEPT = {"rate": ("rates",)}
    TIME_UNITS = TIME_UNITS
    HELP = """Leakage dynamics P_star^(1)(t), P_star^(L)(t) at a low and a high rate.

    The leakage population on the coding qubit and in the whole array after
    |2> is prepared on site 1, at the low and high optimal reset rates (L = 3,
    ideal conditions by default).  Reproduces paper Fig. 2a,b.  Default: about
    a minute on 2 cores (--quick: seconds).
    """
    def compute(self, cfg: dict, ctx: StudyContext):
        """One leakage ensemble per rate: (dataset, summary)."""
        cond = conditions_of(cfg, allow_both=False)[0]
        model = cfg["model"]
        require(model.get("reset", "periodic") != "none", "reset", "none", "periodic, random or dissipation")
        labels = [model["rate"]] if model.get("rate") is not None else [str(r) for r in as_list(cfg, "rates")]
        specs = [spec_of(cfg, rate=r, conditions=cond) for r in labels]
        spec0 = specs[0]
        t_final = to_time(cfg["t_final"], "t_final", spec0.J_hz)
        require(math.isfinite(t_final) and t_final > 0, "t_final", cfg["t_final"], "a finite time > 0")
        T = positive_int(cfg, "time_points", 2)
        R, L = len(specs), spec0.L
        obs_names = ("leakage_site1", "leakage_array")
        data = {o: np.full((R, T, 2), np.nan) for o in obs_names}
        site = np.full((R, T, L, 2), np.nan)
        lives = LifetimeGrid((R,))
        times = None
        estimator, n_evol = ensemble_settings(spec0, cfg)
        ctx.plan(len(specs))
        for i, (lab, spec) in enumerate(zip(labels, specs)):
            res = run_ensemble(spec, cfg, ctx, f"{spec.reset.kind} G={lab}", init="leakage", t_final=t_final, time_points=T)
            times = res.times
            for o in obs_names:
                ms = res.observable(o)
                data[o][i, :, 0], data[o][i, :, 1] = ms.mean, ms.sem
            ms = res.site_resolved("leakage", "site_leakage")
            site[i, ..., 0], site[i, ..., 1] = ms.mean, ms.sem
            lives.put((i,), leakage_lifetimes(res))
        us = us_per_J(spec0)
        rates_J = np.array([s.reset.rate for s in specs])
        ds = xr.Dataset(
            {
                "leakage_site1_mean": (("rate", "time_J"), data["leakage_site1"][..., 0], {"units": "1", "long_name": "P_star^(1)(t)"}),
                "leakage_site1_sem": (("rate", "time_J"), data["leakage_site1"][..., 1], {"units": "1"}),
                "leakage_array_mean": (("rate", "time_J"), data["leakage_array"][..., 0], {"units": "1", "long_name": "P_star^(L)(t)"}),
                "leakage_array_sem": (("rate", "time_J"), data["leakage_array"][..., 1], {"units": "1"}),
                "site_leakage_mean": (("rate", "time_J", "site"), site[..., 0], {"units": "1", "long_name": "<|2><2|_l>(t)"}),
                "site_leakage_sem": (("rate", "time_J", "site"), site[..., 1], {"units": "1"}),
                **lives.data_vars(("rate",)),
            },
            coords={
                "rate": ("rate", np.array(labels, dtype=str), {"long_name": "reset rate as configured"}),
                "rate_J": ("rate", rates_J, {"units": "J"}),
                "rate_MHz": ("rate", rates_J * spec0.J_hz / 1e6, {"units": "MHz", "long_name": "G/2pi"}),
                "time_J": ("time_J", times, {"units": "1/J"}),
                "time_us": ("time_J", times * us, {"units": "us"}),
                "site": ("site", np.arange(1, L + 1)),
            },
            attrs=dataset_attrs(spec0, cfg, conditions=cond, estimator=estimator, evolutions=n_evol,
                         reset_kind=spec0.reset.kind, T_prop_J=spec0.T_prop, init="leakage"),
        )
        summary = {
            "study": self.NAME,
            "parameters": parameters_json(spec0, {"rate_J": "swept: see rates_J"}),
            "conditions": cond,
            "estimator": estimator,
            "evolutions": n_evol,
            "T_prop_J": spec0.T_prop,
            "T_prop_us": spec0.T_prop * us,
            "rates": labels,
            "rates_J": json_list(rates_J),
            "rates_MHz": json_list(rates_J * spec0.J_hz / 1e6),
            "time_J": json_list(times),
            "time_us": json_list(times * us),
            "curves": {
                lab: {
                    "rate_J": float(rates_J[i]),
                    **{o: {"mean": json_list(data[o][i, :, 0]), "sem": json_list(data[o][i, :, 1])} for o in obs_names},
                }
                for i, lab in enumerate(labels)
            },
            **lives.nested(spec0.J_hz),
        }
        return ds, summary

    def table(self, summary: dict) -> str:
        t = np.array(summary["time_J"], dtype=float)
        marks = [x for x in (0.0, summary["T_prop_J"], 2 * summary["T_prop_J"], 50.0, 100.0, 150.0, t[-1]) if x <= t[-1]]
        idx = sorted(set(int(np.argmin(np.abs(t - m))) for m in marks))
        lines = [
            f"dynamics: leakage from |2> on site 1, L = {summary['parameters']['L']}, {summary['parameters']['reset']} reset, "
            f"{summary['conditions']} conditions, {summary['evolutions']} "
            f"{evolution_kind(summary['conditions'] == 'ideal' and summary.get('estimator') != 'sampled')} per rate; "
            f"T_prop = {summary['T_prop_J']:.4g}/J = {summary['T_prop_us']:.3g} us",
            "",
            f"{'G':>8} {'G/2pi (MHz)':>12} {'t (us)':>8} {'tJ':>8} {'P_star^(1)':>17} {'P_star^(L)':>17}",
        ]
        mhz = summary.get("rates_MHz") or [None] * len(summary["rates"])
        for (lab, c), g in zip(summary["curves"].items(), mhz):
            for i in idx:
                a, b = c["leakage_site1"], c["leakage_array"]
                lines.append(
                    f"{lab:>8} {_g(g):>12} {summary['time_us'][i]:8.3g} {t[i]:8.4g} "
                    f"{_p(a['mean'][i], a['sem'][i]):>17} {_p(b['mean'][i], b['sem'][i]):>17}"
                )
        if "not resolved*" in "\n".join(lines):
            lines.append("* not resolved: its error is half its value or more; more trajectories (or disorder "
                         "realizations) resolve it")
        lines += ["", "leakage lifetimes (us), per rate:", f"{'G':>8} {'G/2pi (MHz)':>12} {HEAD}"]
        for i, lab in enumerate(summary["rates"]):
            lines.append(f"{lab:>8} {_g(mhz[i]):>12} " + cells(*(summary[k][i] for k in LIFETIMES), unit="us"))
        lines.append(LEGEND)
        return "\n".join(lines) + "\n"

    def plot(self, ds, summary: dict, figdir) -> list:
        """(a) P_star^(1)(t), (b) P_star^(L)(t) for each rate."""
        plt = pyplot()
        us = float(ds.attrs["time_us_per_J"])
        f, time_label = time_axis(us, "time $t$")  # the bottom axis in the figure's unit, the other one on top
        t = ds["time_J"].values * f
        with plt.rc_context(PLOT_STYLE):
            fig, axes = plt.subplots(1, 2, figsize=(9.0, 3.6), sharey=True)
            colors = plt.get_cmap("Blues")(np.linspace(0.45, 0.95, max(2, ds.sizes["rate"])))
            for ax, obs, lab in zip(axes, ("leakage_site1", "leakage_array"), (r"$P_\star^{(1)}(t)$", r"$P_\star^{(L)}(t)$")):
                for i in range(ds.sizes["rate"]):
                    m = ds[f"{obs}_mean"].isel(rate=i).values
                    s = ds[f"{obs}_sem"].isel(rate=i).values
                    g = float(ds["rate_J"].isel(rate=i))
                    g_mhz = g * float(ds.attrs["J_over_2pi_Hz"]) / 1e6
                    ax.plot(t, m, color=colors[i], lw=1.4, label=rf"$\Gamma = {g:g}\,J$ ({g_mhz:.3g} MHz)")
                    ax.fill_between(t, m - s, m + s, color=colors[i], alpha=0.25, lw=0)
                tp = float(ds.attrs["T_prop_J"]) * f
                L = int(ds.attrs["L"])
                ax.axvline(tp, color="0.4", ls=":", lw=1, label=r"$T_{\rm prop}$")
                if L > 2:
                    ax.axvline((L - 1) * tp, color="0.4", ls="--", lw=1, label=r"$(L-1)T_{\rm prop}$")
                ax.set_xlabel(time_label)
                ax.set_ylabel(lab)
                ax.set_ylim(0, 1.02)
                ax.set_xlim(t[0], t[-1])
                if time_unit() == "us":  # top: t in 1/J
                    sec = ax.secondary_xaxis("top", functions=(lambda x: x / us, lambda x: x * us))
                    sec.set_xlabel("$t$ (1/J)")
                else:
                    sec = ax.secondary_xaxis("top", functions=(lambda x: x * us, lambda x: x / us))
                    sec.set_xlabel("$t$ (µs)")
                ax.legend(loc="upper right")
            axes[0].set_title(f"(a) qubit site, L = {int(ds.attrs['L'])}, {ds.attrs['reset_kind']}", loc="left")
            axes[1].set_title("(b) whole array", loc="left")
            fig.tight_layout()
            return save_figure(fig, figdir, "leakage_dynamics")


def _g(x) -> str:
    """A configured rate as given (4 digits, no trailing zeros)."""
    return "-" if x is None else f"{x:.4g}"


def _p(mean, sem) -> str:
    """A probability to its error's digits; an exact one (no error: the start) as it is; 'not resolved*' where its
    error is half of it or more (the reason under the table)."""
    if sem and resolution_reason(mean, sem):
        return "not resolved*"
    return pm(mean, sem, sep="+-") if sem else sig(mean, 4)


STUDIES = {Dynamics.NAME: Dynamics()}
