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

from ..analysis.decay import decay_times, unresolved_reason
from ..analysis.lifetimes import LIFETIMES, leakage_lifetimes
from ..errors import require
from ..physics.units import time_to_us, to_kelvin, to_time
from ..run.trajectories import engine_mix, format_mix
from .config import Config
from ..analysis.numbers import sig, t2_flags
from .base import (TIME_UNITS, Study, StudyContext, StudyOption, finite_or_none, parameters_json, parse_lengths, save_figure, time_axis,
                   time_json)
from .common import FITTED, UNRESOLVED_LABEL, mark_unresolved, unresolved_handle, PLOT_STYLE, as_list, dataset_attrs, positive_int, pyplot, run_ensemble, spec_of
from .lifetimes import reason_lines, HEAD, LEGEND, LifetimeGrid, cells, limit_json, time_cell

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
        lines = [f"{self.NAME}: decay times (us, +- jackknife error) vs the array's temperature"]
        hw = summary["hardware_limits"]
        lines.append("hardware limits: " + ", ".join(f"{k} = {sig(hw[k]['value_us'], 3)} us" for k in hw
                                                     if hw[k]["value_us"] is not None))
        unresolved = {}
        for li, L in enumerate(summary["lengths"]):
            lines += ["", f"L = {L}", f"{'T (mK)':>8} {'T_star':>17} {'T1':>17} {'T2':>17} {HEAD}  engines"]
            for ti, t in enumerate(summary["temperatures_mK"]):
                if summary["T1"][li][ti] is None:
                    lines.append(f"{t:8.4g} {'not run*':>17}")
                    not_run = (summary.get("T1_reason") or [[None]])[li][ti] or "not run"
                    unresolved[f"L = {L}, {t:g} mK"] = {"value_us": None, "reason": not_run}
                    continue
                times = " ".join(time_cell(summary[k][li][ti], "us") for k in FITTED)
                lives = cells(*(summary[k][li][ti] for k in LIFETIMES), unit="us")
                mix = format_mix(summary["engine_mix"][li][ti])
                lines.append(f"{t:8.4g} {times} {lives}  {mix}")
                unresolved.update({f"{k} at L = {L}, {t:g} mK": summary[k][li][ti] for k in FITTED})
        return "\n".join(lines + [""] + reason_lines(unresolved) + [LEGEND]) + "\n"

    def plot(self, ds, summary: dict, figdir) -> list:
        plt = pyplot()
        us, time_label = time_axis(ds.attrs["time_us_per_J"])  # 1/J -> the figure's time unit (us by default)
        x = ds["temperature"].values
        with plt.rc_context(PLOT_STYLE):
            fig, axes = plt.subplots(1, len(ds.L), figsize=(4.4 * len(ds.L), 3.6), squeeze=False, sharey=True)
            for ax, L in zip(axes[0], ds.L.values):
                ran = ds["run"].sel(L=L).values.astype(bool)
                for name, marker, label in (("T_star", "o", "T_star"), ("T1", "s", "T1"), ("T2", "^", "T2"),
                                            ("leakage_lifetime_qubit", "v", r"$\tau_1$ (leakage lifetime)"),
                                            ("leakage_lifetime_array", "D", r"$\tau_L$")):
                    if f"{name}_J" not in ds:
                        continue
                    v = ds[f"{name}_J"].sel(L=L).values * us
                    e = ds[f"{name}_error_J"].sel(L=L).values * us
                    ok = np.isfinite(v)
                    if ok.any():
                        line = ax.errorbar(x[ok], v[ok], yerr=np.nan_to_num(e[ok]), fmt=marker + "-", capsize=2,
                                           label=label)
                        color = line[0].get_color()
                    else:
                        color = "0.4"
                    mark_unresolved(ax, x[ran & ~ok], color, marker)
                for key, color, lab in (("T1q_J", "C1", "T1q"), ("T2q_J", "C2", "T2q"), ("T_leak_own_J", "C0", "T1q/2")):
                    v = ds.attrs.get(key)
                    if isinstance(v, (int, float, np.floating)) and np.isfinite(v):
                        ax.axhline(float(v) * us, color=color, ls=":", lw=1.2, label=f"{lab} (limit)")
                ax.set_yscale("log")
                ax.set_xlabel("temperature (mK)")
                ax.set_title(f"L = {int(L)}")
            axes[0, 0].set_ylabel(time_label)
            handles, labels = axes[0, 0].get_legend_handles_labels()
            fig.legend(handles + [unresolved_handle()], labels + [UNRESOLVED_LABEL], fontsize=7, loc="center left",
                       bbox_to_anchor=(1.0, 0.5))
            fig.tight_layout()
            return save_figure(fig, figdir, "decay_times_vs_temperature")


STUDIES = {TemperatureSweep.NAME: TemperatureSweep()}
