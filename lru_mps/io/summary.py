"""Readable text summaries of results."""

from __future__ import annotations

from ..analysis.decay import decay_times, fit_window_start
from ..analysis.lifetimes import LIFETIME_OBSERVABLE, leakage_lifetimes
from .datasets import decay_flags, decay_reason, diagnostics_summary
from ..analysis.numbers import not_resolved, pm, resolution_reason, sig
from ..run.result import OBSERVABLE_INIT, SimulationResult
from ..physics import readout as readouts
from ..physics.domains import edge_warnings
from ..physics.units import time_to_us
from ..physics.rules import estimator_label, integrated_decay_verdict, number_can_grow
from ..run.settings import feedback_path
from ..engines.sector.engine import MAX_SECTOR_DIM
from ..run.trajectories import format_engine_mix

#: what each feedback path does (lru_mps.run.settings.feedback_path)
FEEDBACK_PATHS = {
    "fast": "fast (the measurements between two events computed together, in closed form; the same numbers as "
            "taking them one at a time, to rounding)",
    "reference": "one at a time (each measurement computed on its own)",
}

def _disorder_line(spec) -> list[str]:
    """The disorder pattern and the fabrication/tuning spreads, when any differs from the paper's recipe;
    the readout at the reset site, when it has an error."""
    out = []
    if spec.readout is not None:
        eps = readouts.symmetric_error(spec.readout)
        out.append("readout at the reset site: " + (f"symmetric error EPS={eps:g} (p(n|m) = 1 - EPS, EPS/2 each n != m)"
                   if eps is not None else f"confusion p(n|m) = {readouts.describe(spec.readout)} (rows m)")
                   + "; the feedback applies X_0n for the report n")
    if spec.thermal_bath:
        from ..physics.bath import occupations

        nbar = occupations(spec)
        out.append("thermal bath on every site: decay sqrt(gamma (1 + nbar)) a, heating sqrt(gamma nbar) a^dag, nbar = "
                   + ", ".join(f"{x:.4g}" for x in nbar) + " (sites 1..L, at their nominal frequencies)")
    g = spec.geometry
    if g is not None:
        out.append(f"geometry: {g.name}, {g.n_edges} bonds, {spec.transit_hops} hops from the start to the reset site; "
                   f"start (qubit, site 1) at {_rc(g.coords[0])}, reset (site L) at {_rc(g.coords[-1])} "
                   "(row,col 1-based; layout site " + f"{g.labels[0] + 1} and {g.labels[-1] + 1})")
        out.append("sites 1..L at (row,col): " + " ".join(f"({_rc(c)})" for c in g.coords)
                   + "  (layout sites " + " ".join(str(k + 1) for k in g.labels) + ")")
    P = spec.profile()
    if P is not None:
        from ..physics.hopping_profile import describe

        out.append(f"hopping profile: {describe(spec.hopping_profile)} (nominal J_l = "
                   + ", ".join(f"{x:.3g}" for x in P) + " J, bonds 1..L-1, mean J)")
    if spec.disorder_pattern == "box" and spec.e2_spread == 0 and spec.frequency_noise == 0 \
            and spec.hopping_spread == 0:
        return out
    jp = spec.J_prop
    return out + [f"disorder: pattern={spec.disorder_pattern}"
            f"  e2 spread={spec.e2_spread:g} J ({spec.e2_spread / jp:.3g} J_prop)"
            f"  frequency noise={spec.frequency_noise:g} J ({spec.frequency_noise / jp:.3g} J_prop)"
            + (f"  hopping spread={spec.hopping_spread:g}" if spec.hopping_spread else "")]


def format_summary(result: SimulationResult) -> str:
    """Parameters, estimator, decay times (1/J and us) and final values."""
    spec, s = result.spec, result.settings
    c = spec.conditions
    cond = "ideal" if c.ideal else f"T1q={_t(c.T1q, spec)}, Tphi={_t(c.Tphi, spec)}, T={c.temperature_K * 1e3:g} mK"
    MHz = spec.J_hz / 1e6  # an energy or rate in J, times this: /2pi in MHz
    lines = [
        f"L={spec.L}  J/2pi={spec.J_hz / 1e6:g} MHz  Ubar={spec.Ubar:.6g} J ({spec.Ubar * MHz:.6g} MHz)  "
        + (f"W={spec.W:.6g} J ({spec.W * MHz:.6g} MHz)  " if spec.device is None else "(mean of the device's)  ")
        + f"reset={spec.reset.kind}"
        + (f" G={spec.reset.rate:.6g} J ({spec.reset.rate * MHz:.6g} MHz)" if spec.reset.kind != "none" else ""),
        *([spec.device.describe()] if spec.device is not None else []),
        f"conditions: {cond}" + ("  (one per site, sites 1..L)" if c.per_site else ""),
        *_disorder_line(spec),
        f"engine={s.engine}  estimator={s.estimator}"
        + f"  trajectories={result.completed}  seed={s.seed}  "
        f"t_final={s.times[-1]:g}/J ({time_to_us(s.times[-1], spec.J_hz):.3g} us)",
        "estimator: " + estimator_label(spec, s.estimator, spec.reset.kind in ("periodic", "random"))
        + (_integrate_note(spec) if s.integrate_decay else ""),
        f"fit windows: T_star t > {'(L-1)' if spec.geometry is None else spec.transit_hops} T_prop = "
        f"{fit_window_start(result):.4g}/J, "
        f"T1 and T2 t > {fit_window_start(result, 'T1'):.4g}/J",
    ]
    mix = format_engine_mix(result.diagnostics)
    if mix:
        lines.append(f"engine per trajectory: {mix}")
    path = feedback_path(spec, s)
    if path != "none":
        lines.append(f"feedback measurements: {FEEDBACK_PATHS[path]}"
                     + ("; readout error: the reference path" if spec.readout is not None else ""))
    if s.engine_options:
        lines.append("engine options: " + ", ".join(f"{k}={v}" for k, v in s.engine_options.items()))
    dropped = result.thermal_mass_dropped()
    if dropped is not None:
        lines.append(f"thermal starts: conditioned on those the sector engine holds (N sector <= {MAX_SECTOR_DIM:,} "
                     f"states); Gibbs mass left out {dropped:.2g} (every population within that of the full "
                     "ensemble)")
    worst = diagnostics_summary(result)
    if worst:
        lines.append("engine diagnostics (worst trajectory): " + ", ".join(f"{k}={v:.3g}" for k, v in worst.items()))
    lines += [
        "",
        f"{'time':8s} {'value [us]':>22s} {'value [1/J]':>22s}",
    ]
    times = decay_times(result)
    notes = []
    for name, d in times.items():
        if d is None:
            lines.append(f"{name:8s} {not_resolved(decay_reason(name, result, times))}"
                         .replace("not resolved (not measured: ", "not measured ("))
            continue
        why = resolution_reason(d.value, d.error, "more trajectories resolve it") if name != "T_prop" else None
        if why:
            lines.append(f"{name:8s} {not_resolved(why.replace(pm(d.value, d.error), _both(d, spec)))}")
            continue
        flags = decay_flags(d)
        lines.append(f"{name:8s} {_pm_us(d, spec):>22s} {pm(d.value, d.error) if d.error else sig(d.value):>22s}"
                     + ("  !" if flags else ""))
        notes += [f"! {name}: {f}" for f in flags]
    lines += notes
    lines += _lifetime_lines(result)
    lines.append("")
    lines.append(f"at t = {s.times[-1]:g}/J:")
    for name, init in OBSERVABLE_INIT.items():
        if init in result.blocks:
            ms = result.observable(name)
            lines.append(f"  {name:18s} {pm(ms.mean[-1], ms.sem[-1])}")
    lines += [f"Warning: {w}" for w in edge_warnings(spec)]  # values at the edge of their domain, repeated here
    return "\n".join(lines)


def _pm_us(d, spec) -> str:
    """A decay time in us to its error's digits."""
    return pm(time_to_us(d.value, spec.J_hz), time_to_us(d.error, spec.J_hz)) if d.error else \
        sig(time_to_us(d.value, spec.J_hz))


def _both(d, spec) -> str:
    """A decay time in us and 1/J: '553 +- 630 us = ...'."""
    return f"{_pm_us(d, spec)} us = {pm(d.value, d.error)}/J"


def _rc(coord) -> str:
    """A layout coordinate (row, col), 0-based inside, as the user types it: 'r,c' 1-based."""
    return f"{coord[0] + 1},{coord[1] + 1}"


def _integrate_note(spec) -> str:
    """Whether ``integrate_decay`` could act here (the rule book), in words."""
    verdict = integrated_decay_verdict(spec)
    if verdict:
        return "  (hardware decay integrated out of the sampled Fock rows)"
    return f"  (decay not integrated out: {verdict.reason}; those rows are sampled)"


def _lifetime_lines(result: SimulationResult) -> list[str]:
    """Leakage lifetimes (integrals of P_star^(1), P_star^(L)) and the removal efficiency, if a leakage start ran."""
    lt = leakage_lifetimes(result)
    if all(v is None for v in lt.values()):
        if "leakage" in result.blocks and result.spec.readout is not None:
            return ["", "leakage lifetimes: not defined with a readout error (a false report makes a |2> at the "
                        "reset site, so the leakage has a floor and its integral diverges)"]
        if "leakage" in result.blocks and number_can_grow(result.spec):
            return ["", "leakage lifetimes: not defined with --thermal-bath (heating makes |2> from |1> on every "
                        "site, so the leakage has a thermal floor and its integral diverges)"]
        return []
    J_hz = result.spec.J_hz
    lines = ["", "leakage lifetimes (integrals over the leakage start, tail after t_final included), in us and 1/J:"]
    for name in LIFETIME_OBSERVABLE:
        d = lt[name]
        longest = "the longest " if result.spec.conditions.per_site else ""
        tail = {"fit": "", "bound": f"  (tail after t_final bounded by {longest}T1q/2)",
                "lower bound": "  (lower bound: no tail fitted)"}[d.tail_method]
        lines.append(f"{name:24s} {pm(time_to_us(d.value, J_hz), time_to_us(d.error, J_hz)):>22s} us "
                     f"{pm(d.value, d.error):>18s} /J{tail}")
    eta = lt["removal_efficiency"]
    lines.append(f"{'removal_efficiency':24s} {pm(eta.value, eta.error):>22s} "
                 "(share of the leakage ended by the reset site, not by hardware decay)")
    return lines


def _t(t_J, spec) -> str:
    if isinstance(t_J, tuple):  # one per site (a device file's)
        return "(" + ", ".join(_t(t, spec) for t in t_J) + ")"
    return "inf" if t_J == float("inf") else f"{time_to_us(t_J, spec.J_hz):.3g} us"
