"""Study ``temperature-sweep``: T_star, T1 and T2 against the temperature of the array at several lengths.

Physics (docs/physics.md §5, §8).  The array's sites 2..L start in the J = 0
Gibbs product state at temperature T (the qubit is prepared); a thermal
excitation in the way of a leakage stack changes its transport, and thermal
excitations add to the excitation number N, which no channel raises again.
For every length L and temperature T one ensemble of trajectories of the
branch estimator (three initial states; docs/physics.md §6.5: the thermal
rows are guided or sampled) runs to (L-1) T_prop + ``t_after`` under the
model's hardware noise (default: the paper's T1q = 16.7 us and Tphi = 10 us),
and T_star, T1, T2 are fitted (T_star over t > (L-1) T_prop, T1 and T2 over
t > T_prop; jackknife errors;
:func:`lru_mps.analysis.decay.decay_times`), next to the leakage lifetimes
tau_1, tau_L and the removal efficiency
(:func:`lru_mps.analysis.lifetimes.leakage_lifetimes`; :mod:`.lifetimes`).  Engines: exact to L = 6, then
the per-trajectory policy of ``--engine auto`` (sector engine where the
sampled state's largest sector is small, MPS otherwise; the summary gives
the mix per point).  Hot, long arrays hold many excitations and cost minutes
per trajectory on either engine, so lengths >= ``long_length`` run only up to
``max_temperature_long``.  The figure shows the hardware limits T1q,
T2q = 1/(1/(2 T1q) + 1/Tphi) and T1q/2 (the lifetime of |2>).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import xarray as xr

from ...analysis.decay import decay_times, unresolved_reason
from ...analysis.lifetimes import LIFETIMES, leakage_lifetimes
from ...errors import require
from ...physics.units import time_to_us, to_kelvin, to_time
from ...run.trajectories import engine_mix
from ..config import Config
from ...analysis.numbers import t2_flags
from ..base import (TIME_UNITS, Study, StudyContext, StudyOption, finite_or_none, parameters_json, parse_lengths,
                    time_json)
from ..common import FITTED, as_list, dataset_attrs, positive_int, run_ensemble, spec_of
from ..lifetimes import LifetimeGrid, limit_json
from . import report

HELP = """T_star, T1 and T2 vs the temperature of the array (0 to 300 mK) at L = 3, 6, 12.

Sampled trajectories under the paper's T1q and Tphi (configurable) from the
thermal initial state of the array at each temperature; exact engine to
L = 6, then sector or MPS per trajectory (the summary gives the mix).  The
figure shows T1q and T2q as limits.  Long arrays run up to
max_temperature_long (150 mK by default).  --quick: seconds.
"""


def _temperatures(cfg: dict) -> list[tuple[str, float]]:
    values = [(str(v), to_kelvin(v, "temperatures")) for v in as_list(cfg, "temperatures")]
    return sorted(values, key=lambda tv: tv[1])


def _limits(spec) -> dict[str, float]:
    c = spec.conditions
    T2q = c.T2q
    return {"T1q": c.T1q, "T2q": T2q, "T_leak_own": 0.5 * c.T1q}


@dataclass
class TemperaturePoint:
    """One (L, T) point of the sweep, as computed: its decay-time fits (value, error) in 1/J, the reason each
    unresolved one is so, its leakage lifetimes (:func:`~lru_mps.analysis.lifetimes.leakage_lifetimes`) and the
    engines its trajectories ran on (kind: count)."""

    fits: dict = field(default_factory=dict)
    reasons: dict = field(default_factory=dict)
    lifetimes: dict = field(default_factory=dict)
    mix: dict = field(default_factory=dict)


class TemperatureSweep(Study):
    """The temperature sweep (module docstring)."""

    NAME = "temperature-sweep"
    OPTIONS = (StudyOption("temperatures", "Temperatures with a unit, each under 1 K (0 needs none), e.g. 0,100mK,300mK.", each="temperature"),
               StudyOption("lengths", "Lengths, e.g. 3,6,12."))
    SWEPT = {"length": ("lengths",), "temperature": ("temperatures",)}
    REFUSES_DEVICE = "it sweeps the array length L (lengths), which the device file fixes"
    TIME_UNITS = TIME_UNITS
    HELP = HELP

    def compute(self, cfg: dict, ctx: StudyContext):
        require(cfg["model"].get("temperature") is None, "temperature", cfg["model"].get("temperature"),
                "not set in the model table: the temperature-sweep study sweeps it (use temperatures)")
        temps = _temperatures(cfg)
        lengths = parse_lengths(cfg["lengths"])
        T = positive_int(cfg, "time_points", 3)
        long_length = positive_int(cfg, "long_length", 2)
        t_max_long = to_kelvin(cfg["max_temperature_long"], "max_temperature_long")
        points: dict[tuple[int, int], TemperaturePoint] = {}  # (li, ti): the points run
        todo = [(li, ti) for li, L in enumerate(lengths) for ti, (_, tk) in enumerate(temps)
                if L < long_length or tk <= t_max_long]
        ctx.plan(len(todo))
        for li, ti in todo:
            L, (label, _) = lengths[li], temps[ti]
            spec = spec_of(cfg, length=L, temperature=label)
            t_final = spec.transit_hops * spec.T_prop + to_time(cfg["t_after"], "t_after", spec.J_hz)
            strata = Config(cfg).boolean("thermal_strata", default=False)
            res = run_ensemble(spec, cfg, ctx, f"L={L} T={label}", init="all", t_final=t_final, time_points=T,
                               thermal_strata=strata)
            point = points[li, ti] = TemperaturePoint(
                mix=engine_mix(res.diagnostics) or {res.settings.engine: res.completed * len(res.settings.inits)},
                lifetimes=leakage_lifetimes(res))
            times = decay_times(res)
            for name, d in times.items():
                if name in FITTED and d is not None:
                    point.fits[name] = (d.value, d.error)
                elif name in FITTED:
                    point.reasons[name] = unresolved_reason(name, res, times)
        spec0 = spec_of(cfg, length=lengths[0])
        return self._assemble(cfg, spec0, lengths, temps, points)

    def _assemble(self, cfg, spec0, lengths, temps, points: dict):
        """The dataset and summary from the points run (the others NaN, their reason beside each list)."""
        shape = (len(lengths), len(temps))
        fits = {k: np.full(shape + (2,), np.nan) for k in FITTED}
        lives = LifetimeGrid(shape)
        mixes: list[list[dict]] = [[{} for _ in temps] for _ in lengths]
        run = np.zeros(shape, dtype=bool)
        reasons: dict = {}  # (decay time, li, ti): why it is not resolved
        for (li, ti), point in points.items():
            run[li, ti] = True
            mixes[li][ti] = point.mix
            for name, fit in point.fits.items():
                fits[name][li, ti] = fit
            reasons.update({(name, li, ti): why for name, why in point.reasons.items()})
            lives.put((li, ti), point.lifetimes)
        J_hz = spec0.J_hz
        limits = _limits(spec0)
        mK = np.array([tk * 1e3 for _, tk in temps])
        data = {f"{k}_J": (("L", "temperature"), fits[k][..., 0], {"units": "1/J"}) for k in FITTED}
        data.update({f"{k}_error_J": (("L", "temperature"), fits[k][..., 1], {"units": "1/J"}) for k in FITTED})
        data.update(lives.data_vars(("L", "temperature")))
        data["run"] = (("L", "temperature"), run.astype(int))
        attrs = dataset_attrs(spec0, cfg, **{f"{k}_J": finite_or_none(v) or "inf" for k, v in limits.items()})
        for k in ("L", "temperature_K"):
            attrs.pop(k, None)
        ds = xr.Dataset(data, coords={"L": lengths, "temperature": ("temperature", mK, {"units": "mK"})}, attrs=attrs)
        def flags(k, li, ti):  # T2 past 2 T1 or the single transmon's T2 by more than its error
            if k != "T2":
                return None
            us = time_to_us(1.0, J_hz)
            return t2_flags(*(fits["T2"][li, ti] * us), *(fits["T1"][li, ti] * us), limits["T2q"] * us,
                            "the single transmon's T2 limit T2q")

        summary = {
            "study": self.NAME,
            "lengths": lengths,
            "temperatures_mK": [float(x) for x in mK],
            **{k: [[time_json(fits[k][li, ti, 0], fits[k][li, ti, 1], J_hz, reasons.get((k, li, ti)),
                              flags=flags(k, li, ti)) if run[li, ti] else None
                    for ti in range(len(temps))] for li in range(len(lengths))] for k in FITTED},
            **lives.nested(J_hz, where=run),
            "T_prop": time_json(spec0.T_prop, 0.0, J_hz),
            "hardware_limits": {k: limit_json(v, J_hz) for k, v in limits.items()},
            "engine_mix": mixes,
            "parameters": parameters_json(
                spec0, {"L": "swept: see lengths", "temperature_K": "swept: see temperatures_mK"},
                trajectories=int(cfg["trajectories"]), seed=int(cfg["seed"]),
                max_temperature_long_K=to_kelvin(cfg["max_temperature_long"], "max_temperature_long"),
                long_length=int(cfg["long_length"])),
        }
        if not run.all():  # the points not run say why, beside each list (keys unchanged)
            why = (f"not run: lengths L >= long_length = {int(cfg['long_length'])} run only up to max_temperature_long "
                   f"= {to_kelvin(cfg['max_temperature_long'], 'max_temperature_long') * 1e3:g} mK (raise it to run them)")
            mirror = [[None if run[li, ti] else why for ti in range(len(temps))] for li in range(len(lengths))]
            for k in (*FITTED, *LIFETIMES):
                summary[f"{k}_reason"] = mirror
        return ds, summary

    def table(self, summary: dict) -> str:
        return report.table(summary)

    def plot(self, ds, summary: dict, figdir) -> list:
        return report.plot(ds, summary, figdir)


STUDIES = {TemperatureSweep.NAME: TemperatureSweep()}
