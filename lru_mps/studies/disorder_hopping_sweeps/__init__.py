"""Studies ``disorder-sweep`` (paper Fig. 3a,d) and ``hopping-sweep`` (Fig. 3b,e).

T_star, T_prop, T1, T2 (:func:`lru_mps.analysis.decay.decay_times`) versus the
disorder width W or the hopping J, at L = 3 with periodic feedback, for ideal
and realistic conditions.  The hopping J is the unit of the model, so the
hopping sweep builds each point's spec with ``ArraySpec.from_user(hopping=J,
...)``: quantities given in MHz/GHz (Ubar, wbar, W) stay fixed in physical
units, quantities given as multiples of J scale with J.  The reset rate
follows the paper (appendix on the numerical simulations): the low optimal
rate is held at G = c J_prop with c fixed so that G = 0.03 J at J/2pi = 5 MHz
(``rate_scaling = "jprop"``; J_prop = 2 J^2/Ubar, so G/J grows like J);
``rate_scaling = "fixed"`` takes the model's rate at each J as given ('0.03J'
then means 0.03 of each J, '0.15MHz' a fixed rate).  The sweep variable is
quoted in MHz (and J), the times in us and in units of 1/J of that point's
own J.  Each point runs two ensembles: |2> on site 1 (T_star) up to
((L-1) + leakage_tail_tprop) T_prop, so that the fit window t > (L-1) T_prop
spans a few T_star at every J (docs/physics.md §8: the window should cover a
few tau; a much longer one fits the slow tail of rare, nearly blocked
realizations instead), and |1>, (|0>+|1>)/sqrt2 (T1, T2) up to ``t_final``
(40 us: a few T1 <= T1q = 16.7 us).  The leakage ensemble also gives the
leakage lifetimes tau_1, tau_L and the removal efficiency of each point
(:func:`lru_mps.analysis.lifetimes.leakage_lifetimes`; :mod:`.lifetimes`).
The swept parameter is not in the model table; ``--disorder`` or
``--hopping`` runs one value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import xarray as xr

from ...analysis.decay import decay_times, unresolved_reason
from ...analysis.lifetimes import leakage_lifetimes
from ...errors import require
from ...physics.conditions import Reset, bare_T2
from ...physics.model import ArraySpec
from ...physics.units import to_time
from ...analysis.numbers import t2_flags
from ..base import TIME_UNITS, Study, StudyContext, finite_or_none, time_json
from ..common import (CURVES, DECAYS, FITTED, as_list, conditions_of, dataset_attrs, ensemble_settings, json_list,
                      nan_if_none, positive_int, run_ensemble, spec_of, us_per_J)
from ..lifetimes import LifetimeGrid
from . import report

#: the two ensembles of a point: initial states, and the observables read from each
_PARTS = {"leakage": ("leakage",), "qubit": ("qubit", "coherence")}
_PART_OBSERVABLES = {"leakage": ("leakage_array",), "qubit": ("qubit_population", "qubit_coherence")}


@dataclass
class _Fits:
    """The decay times and fits of a sweep, per condition (C) and point (P)."""

    tau: dict  # {decay: (C, P, 2) value, error in 1/J}
    amp: dict  # {fitted decay: (C, P) fit amplitude}
    window: dict  # {fitted decay: (C, P, 2) fit window in 1/J}
    reasons: dict  # {(decay, C, P): why it is not resolved and what would resolve it}


@dataclass
class _Sweep:
    """What a decay sweep measured: per condition (C) and point (P) decay times, fits, curves and times."""

    conds: list[str]
    specs: list[list[ArraySpec]]
    fits: _Fits
    curves: dict  # {observable: (C, P, T, 2) mean, sem}
    time_J: dict  # {part: (P, T)}
    estimators: np.ndarray
    evolutions: np.ndarray
    lives: LifetimeGrid  # (C, P): tau_1, tau_L, eta of the leakage ensemble

    @property
    def tau(self) -> dict:
        return self.fits.tau

    @property
    def amp(self) -> dict:
        return self.fits.amp

    @property
    def window(self) -> dict:
        return self.fits.window

    @property
    def reasons(self) -> dict:
        return self.fits.reasons

    def axes(self):
        """Per point: us per 1/J, J/2pi (MHz), W (J), W/2pi (MHz); and the reset rates (C, P) in J."""
        row = self.specs[0]
        us = np.array([us_per_J(s) for s in row])  # us per 1/J of each point
        J_MHz = np.array([s.J_hz / 1e6 for s in row])
        W_J = np.array([s.W for s in row])
        return us, J_MHz, W_J, W_J * J_MHz, np.array([[s.reset.rate for s in r] for r in self.specs])


class DecaySweep(Study):
    """T_star, T_prop, T1, T2 vs one model parameter for ideal and realistic conditions (paper Fig. 3)."""

    def __init__(self, name: str, model_key: str, list_key: str, dim: str, label: str, help: str):
        self.NAME = name
        self.HELP = help
        self.model_key = model_key  # 'disorder' or 'hopping'
        self.list_key = list_key  # 'disorders' or 'hoppings'
        self.SWEPT = {model_key: (list_key,)}
        self.REFUSES_DEVICE = (f"it sweeps the disorder width W; a device file fixes every site's frequency"
                               if model_key == "disorder" else "it sweeps the hopping J, which the device file fixes")
        self.dim = dim
        self.label = label
        # `lru-mps plot --time-unit`: the disorder sweep's J is the same at every point, so its times can be drawn
        # in 1/J; the hopping sweep's J is what it sweeps, so 1/J is not one unit along its axes
        if model_key == "disorder":
            self.TIME_UNITS = TIME_UNITS
        else:
            self.TIME_UNITS = ("us",)
            self.TIME_UNITS_WHY = "J varies along the hopping sweep, so 1/J is not one unit of time across its points"

    # ------------------------------------------------------------------ specs
    def _values(self, cfg: dict) -> list[str]:
        if cfg["model"].get(self.model_key) is not None:
            return [cfg["model"][self.model_key]]
        return [str(v) for v in as_list(cfg, self.list_key)]

    def _point_spec(self, cfg: dict, value, cond: str) -> ArraySpec:
        spec = spec_of(cfg, **{self.model_key: value}, conditions=cond)
        if self.model_key == "hopping":
            scaling = cfg.get("rate_scaling", "jprop")
            require(scaling in ("jprop", "fixed"), "rate_scaling", scaling, "jprop or fixed")
            if scaling == "jprop" and spec.reset.kind != "none":
                ref = spec_of(cfg, hopping=cfg["rate_reference_hopping"], conditions=cond)
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
        return {"leakage": (spec.transit_hops + float(k)) * spec.T_prop, "qubit": t}

    # -------------------------------------------------------------------- run
    def compute(self, cfg: dict, ctx: StudyContext):
        """Two ensembles (leakage; qubit and coherence) per point and condition: (dataset, summary)."""
        conds = conditions_of(cfg, allow_both=True)
        values = self._values(cfg)
        T = positive_int(cfg, "time_points", 3)
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
        lives = LifetimeGrid((C, P))
        reasons = {}
        ctx.plan(C * P * len(_PARTS))
        for ci, cond in enumerate(conds):
            for pi, (value, spec) in enumerate(zip(values, specs[ci])):
                t_finals = self._t_finals(spec, cfg)
                estimators[ci], evolutions[ci] = ensemble_settings(spec, cfg)
                # leakage (T_star) and qubit (T1, T2) ensembles run to different times: the leakage
                # fit window must cover a few T_star after the transit, the qubit one a few T1
                for part, inits in _PARTS.items():
                    label = f"{cond} {self.model_key}={value} {part}"
                    res = run_ensemble(spec, cfg, ctx, label, init=inits, t_final=t_finals[part], time_points=T)
                    time_J[part][pi] = res.times
                    if part == "leakage":
                        lives.put((ci, pi), leakage_lifetimes(res))
                    times = decay_times(res)
                    for q, d in times.items():
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
                            reasons[(q, ci, pi)] = unresolved_reason(q, res, times)
                            continue
                        tau[q][ci, pi] = (nan_if_none(d.value), nan_if_none(d.error))
                        if d.fit is not None:
                            amp[q][ci, pi] = nan_if_none(d.fit.amplitude)
                            window[q][ci, pi] = (d.fit.t_start, d.fit.t_end)

        sweep = _Sweep(conds, specs, _Fits(tau, amp, window, reasons), curves, time_J, estimators, evolutions, lives)
        return self._dataset(cfg, sweep), self._summary(cfg, sweep)

    def _dataset(self, cfg: dict, sweep: "_Sweep") -> xr.Dataset:
        """The study's dataset: decay times, fits and curves per condition and point."""
        dim, conds, specs, row = self.dim, sweep.conds, sweep.specs, sweep.specs[0]
        tau, amp, window, curves, time_J = sweep.tau, sweep.amp, sweep.window, sweep.curves, sweep.time_J
        us, J_MHz, W_J, W_MHz, rates_J = sweep.axes()
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
        data.update(sweep.lives.data_vars(("conditions", dim)))
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
            "estimators": ",".join(str(e) for e in sweep.estimators),
            "evolutions": ",".join(str(int(n)) for n in sweep.evolutions),
            "reset_kind": spec0.reset.kind,
        }
        if "realistic" in conds:
            rs = specs[conds.index("realistic")][0]
            t1q, tphi = rs.conditions.T1q * us_per_J(rs), rs.conditions.Tphi * us_per_J(rs)
            extra["T1q_us"] = t1q if math.isfinite(t1q) else "inf"
            extra["T2q_us"] = bare_T2(t1q, tphi) if math.isfinite(t1q) or math.isfinite(tphi) else "inf"
        if dim == "hopping":
            extra["rate_scaling"] = str(cfg.get("rate_scaling", "jprop"))
        attrs = dataset_attrs(spec0, cfg, **extra)
        # per-point or per-condition quantities live in the data, not in the attributes
        drop = ["T1q_J", "Tphi_J", "temperature_K"]
        drop += ["W_J"] if dim == "disorder" else ["J_over_2pi_Hz", "Ubar_J", "wbar_J", "W_J", "time_us_per_J"]
        for k in drop:
            attrs.pop(k, None)
        return xr.Dataset(data, coords=coords, attrs=attrs)

    def _summary(self, cfg: dict, sweep: "_Sweep") -> dict:
        """The study's JSON object."""
        dim, conds, specs, row = self.dim, sweep.conds, sweep.specs, sweep.specs[0]
        tau, amp, window, time_J = sweep.tau, sweep.amp, sweep.window, sweep.time_J
        estimators, evolutions, spec0 = sweep.estimators, sweep.evolutions, row[0]
        us, J_MHz, W_J, W_MHz, rates_J = sweep.axes()
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
            "t_final_J": {part: json_list(time_J[part][:, -1]) for part in _PARTS},
            "t_final_us": {part: json_list(time_J[part][:, -1] * us) for part in _PARTS},
        }
        if dim == "disorder":
            summary["disorders_MHz"] = json_list(W_MHz)
            summary["disorders_J"] = json_list(W_J)
            summary["rates_J"] = json_list(rates_J[0])
        else:
            summary["hoppings_MHz"] = json_list(J_MHz)
            summary["rates_J"] = json_list(rates_J[0])
            summary["rates_MHz"] = json_list(rates_J[0] * J_MHz)
            summary["Ubar_J"] = json_list([s.Ubar for s in row])
            summary["disorder_J"] = json_list(W_J)
        for ci, c in enumerate(conds):
            entry = {}
            for q in DECAYS:
                entry[q] = [time_json(tau[q][ci, pi, 0], tau[q][ci, pi, 1], specs[ci][pi].J_hz,
                                      sweep.reasons.get((q, ci, pi)), flags=self._flags(sweep, q, ci, pi))
                            for pi in range(len(row))]
            entry.update(sweep.lives.lists([(ci, pi) for pi in range(len(row))], [s.J_hz for s in specs[ci]]))
            entry["fits"] = {
                q: [
                    {"amplitude": finite_or_none(amp[q][ci, pi]),
                     "window_J": [finite_or_none(window[q][ci, pi, 0]), finite_or_none(window[q][ci, pi, 1])],
                     **({"reason": sweep.reasons[(q, ci, pi)]} if sweep.reasons.get((q, ci, pi)) else {})}
                    for pi in range(len(row))
                ]
                for q in FITTED
            }
            summary[c] = entry
        return summary

    @staticmethod
    def _flags(sweep: "_Sweep", q: str, ci: int, pi: int) -> list[str]:
        """The physical bounds a point's T2 passes by more than its error: 2 T1 and the single transmon's T2 (in 1/J of
        the point)."""
        if q != "T2":
            return []
        spec = sweep.specs[ci][pi]
        t1q, tphi = spec.conditions.T1q, spec.conditions.Tphi
        limit = bare_T2(t1q, tphi) if math.isfinite(t1q) or math.isfinite(tphi) else None
        us = us_per_J(spec)
        (t2, e2), (t1, e1) = sweep.tau["T2"][ci, pi] * us, sweep.tau["T1"][ci, pi] * us
        return t2_flags(t2, e2, t1, e1, None if limit is None else limit * us, "the single transmon's T2 limit")

    # -------------------------------------------------------- table and plot
    def table(self, summary: dict) -> str:
        return report.table(summary, self.NAME, self.dim, self.label)

    def plot(self, ds, summary: dict, figdir) -> list:
        """Decay times vs the sweep variable (one panel per condition) and the fitted curves."""
        return report.plot(ds, summary, figdir, self.dim)

DisorderSweep = DecaySweep(
    "disorder-sweep",
    model_key="disorder",
    list_key="disorders",
    dim="disorder",
    label="disorder W",
    help="""T_star, T_prop, T1 and T2 vs the disorder width W.

    Decay times of leakage (T_star) and of the qubit (T1, T2) at L = 3 with
    periodic feedback at 0.03 J, for W/2pi from 20 to 200 MHz, under ideal
    and realistic conditions (T1q, Tphi, temperature).  Reproduces paper
    Fig. 3a,d.  Default: about 2 minutes on 2 cores (--quick: seconds).
    """,
)

HoppingSweep = DecaySweep(
    "hopping-sweep",
    model_key="hopping",
    list_key="hoppings",
    dim="hopping",
    label="hopping J",
    help="""T_star, T_prop, T1 and T2 vs the hopping J.

    Decay times of leakage and of the qubit at L = 3 for J/2pi from 2 to
    10 MHz (the reset rate follows J_prop as in the paper), under ideal and
    realistic conditions.  Reproduces paper Fig. 3b,e.  Default: about 4
    minutes on 2 cores (--quick: seconds).
    """,
)

STUDIES = {DisorderSweep.NAME: DisorderSweep, HoppingSweep.NAME: HoppingSweep}
