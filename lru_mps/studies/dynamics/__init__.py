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

from ...analysis.lifetimes import leakage_lifetimes
from ...errors import require
from ...physics.units import to_time

from ..base import TIME_UNITS, Study, StudyContext, parameters_json
from ..common import (as_list, conditions_of, dataset_attrs, ensemble_settings, json_list, positive_int, run_ensemble,
                     spec_of, us_per_J)
from ..lifetimes import LifetimeGrid
from . import report


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
        return report.table(summary)

    def plot(self, ds, summary: dict, figdir) -> list:
        return report.plot(ds, summary, figdir)


STUDIES = {Dynamics.NAME: Dynamics()}
