"""The three LRU kinds of the logical study, as the numbers the circuit takes (docs/physics.md §8, "The logical
error per cycle").

``none``    leakage leaves by the transmon's own decay of |2> alone: one return
            probability per cycle, r = 1 - exp(-t_c / T1(|2>)), T1(|2>) = T1q/2
            (``t1_leakage``: another value);
``array``   the passive array of the qec study on the same model options: its
            survival S(k) and tail, read from that study's own computation
            (:class:`lru_mps.studies.qec.Qec`, its ensemble stored under
            ``<out>/qec/work``), give r_k = 1 - S(k+1)/S(k) exactly
            (:func:`lru_mps.circuits.return_probabilities`); its added error
            per round is a depolarizing channel of the qec study's
            ``added_T1_T2_fit`` p_total (the late-time rates of the dressed
            qubit against a bare transmon), with the curve-based ``added``
            (the one-time early loss) reported beside it, not folded in;
``reset``   an ideal active reset of leakage every cycle: r = 1; its added error
            ``reset_added_error`` (default 0).

``--removal R`` (a constant return probability) and ``--added-error E`` (a
depolarizing probability per round) replace a kind's computed numbers; they
define one row, so they need one kind in ``--lrus``, and never the array's
return (which is its S(k)).
"""

from __future__ import annotations

import math

from ...analysis.qec import pauli_errors
from ...circuits import ReturnModel, return_probabilities
from ...errors import ParameterError, require
from ...physics.conditions import bare_T2
from ...physics.units import time_to_us, to_time
from ...run.settings import MPS_USER_OPTIONS
from ..base import StudyContext, load_config

KINDS = ("none", "array", "reset")
#: the keys of the logical study that the array's qec ensemble takes as they are
QEC_KEYS = ("cycle_time", "duration", "min_time_points", "trajectories", "realizations", "leakage_thermal_odds",
            "thermal_strata", "integrate_decay", "engine", "threshold")
#: the depolarizing probability a data qubit can take per round (stim's DEPOLARIZE1 at most 3/4)
MAX_ADDED = 0.75


def calibration(cfg: dict, name: str, upper: float, closed: bool):
    """A calibration option: None where 'computed' (the kind's own number), else a probability in its range."""
    value = cfg.get(name, "computed")
    if value is None or (isinstance(value, str) and value.strip().lower() == "computed"):
        return None
    bound = f"[0, {upper:g}{']' if closed else ')'}" if name == "added_error" else f"(0, {upper:g}]"
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ParameterError(name, value, f"a probability per round in {bound}, or 'computed'") from None
    lower_ok = x >= 0 if name == "added_error" else x > 0
    require(not isinstance(value, bool) and lower_ok and (x <= upper if closed else x < upper), name, value,
            f"a probability per round in {bound}, or 'computed'")
    return x


def check_calibrations(lrus: list[str], removal, added) -> None:
    """--removal never with the array (its return is its S(k)); a calibration defines one row: one kind."""
    if removal is not None:
        require("array" not in lrus, "removal", removal,
                "one kind of --lrus none or reset: the array's return probabilities are its S(k)",
                "--lrus none --removal R: a constant return probability R in place of the kind's own")
    for name, value in (("removal", removal), ("added_error", added)):
        if value is not None:
            require(len(lrus) == 1, name, value, f"one kind in --lrus (it defines one row; --lrus is {','.join(lrus)})")


def _depolarizing(p_total: float, source: str, **beside) -> dict:
    """The added error as the circuit takes it: a depolarizing channel of total probability p per data qubit per
    round (p_x = p_y = p_z = p/3)."""
    p = max(float(p_total), 0.0)
    return {"p_x": p / 3, "p_y": p / 3, "p_z": p / 3, "p_total": p, "source": source, **beside}


def hardware(spec, t_c: float, threshold: float, p: float) -> dict:
    """The processor the circuit's p stands for, as the qec view sees it: T1q, Tphi of the coding qubit, t_c, the
    bare transmon's Pauli error per cycle (:func:`lru_mps.analysis.qec.pauli_errors`) beside p, and a warning
    where it exceeds the surface code's threshold."""
    c = spec.conditions
    T1 = float(c.t1_sites(spec.L)[0])
    Tphi = float(c.tphi_sites(spec.L)[0])
    us = time_to_us(1.0, spec.J_hz)
    bare = pauli_errors(t_c, T1, bare_T2(T1, Tphi))
    total = bare["p_total"]["value"]
    warn = None
    if total > threshold:
        warn = (f"the bare transmon's Pauli error per cycle ({total:.3g}) is above the surface code's threshold "
                f"({threshold:g}): on this hardware no distance protects a qubit; the circuit's p = {p:g} "
                "describes a better processor")
    out = {"T1q_us": _us(T1 * us), "Tphi_us": _us(Tphi * us), "cycle_time_us": _us(t_c * us), "physical_error": p,
           "bare_error_per_cycle": bare, "threshold": threshold, "above_threshold": total > threshold, "warning": warn}
    if warn is None:
        out["warning_reason"] = (f"none: the bare transmon's Pauli error per cycle ({total:.3g}) is under the "
                                 f"threshold ({threshold:g})")
    return out


def _us(x: float) -> float | None:
    """A time in us to 12 digits (100.0, not 99.99999999999999); None where infinite."""
    return float(f"{x:.12g}") if math.isfinite(x) else None


def none_kind(cfg: dict, spec, t_c: float, removal, added) -> dict:
    """The kind without an LRU: r = 1 - exp(-t_c/T1(|2>)), T1(|2>) = T1q/2 or ``t1_leakage``."""
    given = cfg.get("t1_leakage", "auto")
    if removal is not None:
        r, source = removal, "--removal (calibration)"
        T12 = None
    else:
        if isinstance(given, str) and given.strip().lower() == "auto":
            T12 = float(spec.conditions.t1_sites(spec.L)[0]) / 2
            source = "1 - exp(-t_c/T1(|2>)), T1(|2>) = T1q/2"
        else:
            T12 = to_time(given, "t1_leakage", spec.J_hz)
            require(T12 > 0, "t1_leakage", given, "a time > 0 (e.g. 50us) or 'auto' (T1q/2)")
            source = "1 - exp(-t_c/T1(|2>)), T1(|2>) = t1_leakage"
        r = -math.expm1(-t_c / T12) if math.isfinite(T12) else 0.0
    model = ReturnModel.constant(r)
    us = time_to_us(1.0, spec.J_hz)
    return {"model": model, "return_probability": r, "return_source": source,
            "T1_leakage_us": None if T12 is None else _us(T12 * us),
            "mean_leakage_cycles": {"value": model.mean_duration if math.isfinite(model.mean_duration) else None,
                                    "error": 0.0},
            "added_error": _depolarizing(added or 0.0, "--added-error (calibration)" if added is not None else
                                         "none: the bare transmon's errors are the circuit's p")}


def reset_kind(cfg: dict, removal, added) -> dict:
    """An ideal active reset of leakage every cycle: r = 1 (or --removal), added error reset_added_error (or
    --added-error)."""
    r = 1.0 if removal is None else removal
    own = cfg.get("reset_added_error", 0.0)
    if added is None:
        require(not isinstance(own, bool) and isinstance(own, (int, float)) and 0 <= own < MAX_ADDED,
                "reset_added_error", own, f"a depolarizing probability per round in [0, {MAX_ADDED:g})")
    p = float(own) if added is None else added
    model = ReturnModel.constant(r)
    return {"model": model, "return_probability": r,
            "return_source": "ideal reset: every leaked qubit returns at the next round's start" if removal is None
            else "--removal (calibration)",
            "mean_leakage_cycles": {"value": model.mean_duration, "error": 0.0},
            "added_error": _depolarizing(p, "--added-error (calibration)" if added is not None
                                         else "reset_added_error")}


def qec_config(cfg: dict, leakage: float, quick: bool) -> dict:
    """The qec study's resolved config for the array row: its defaults (and [quick] table with --quick), then this
    study's keys of :data:`QEC_KEYS`, model table, seed and MPS options; no direct simulation."""
    from .. import get_study

    qec = get_study("qec")
    base = qec.DEFAULTS
    if quick:
        base.update(qec.QUICK)
    over = {k: cfg[k] for k in QEC_KEYS if cfg.get(k) is not None}
    over.update({k: cfg[k] for k in MPS_USER_OPTIONS if cfg.get(k) is not None})
    over.update(seed=cfg["seed"], direct_realizations=0, injection=leakage if 0 < leakage < 1 else 1e-3)
    out = load_config("qec", base, None, over)
    out["model"] = {**out.get("model", {}), **{k: v for k, v in cfg.get("model", {}).items() if v is not None}}
    return out


def array_kind(cfg: dict, ctx: StudyContext, leakage: float, added) -> dict:
    """The passive array: the qec study's own S(k), tail, D and added errors (its compute, on this study's model
    options), turned into r_k exactly."""
    from ..qec import Qec

    qcfg = qec_config(cfg, leakage, bool(cfg.get("quick")))
    sub = StudyContext(out=ctx.out / "qec", workers=ctx.workers, progress=ctx.progress, quiet=ctx.quiet,
                       client=ctx.client, backend=ctx.backend)
    _, q = Qec().compute(qcfg, sub)
    surv = q["leakage_survival"]
    S = [1.0] + [float(x) if x is not None else 0.0 for x in surv["mean"]]
    tail = surv["tail"]
    ret = return_probabilities(S, tail["ratio"] if tail["S_end"] > 0 else None)
    model = ret["model"]
    errs = q["error_per_cycle"]
    fit = errs.get("added_T1_T2_fit")
    if added is None:
        require(fit is not None, "trajectories", qcfg.get("trajectories"),
                "enough trajectories for the qec study's T1 and T2 fits (the array's added error comes from them)",
                "or give the added error: --added-error E")
        added_error = _depolarizing(fit["p_total"]["value"], "qec study: added_T1_T2_fit p_total (late-time rates)",
                                    error=fit["p_total"]["error"], T1_T2_fit=fit)
    else:
        added_error = _depolarizing(added, "--added-error (calibration)", T1_T2_fit=fit)
    added_error["curve_based"] = errs.get("added")  # the one-time early loss: beside, not folded in
    added_error["curve_based_note"] = ("the qec study's curve-based added error (the channel at t_c, with the early "
                                       "loss of near-resonant realizations): a one-time loss after preparation, not "
                                       "a per-cycle error; reported, not in the circuit")
    D = q["mean_leakage_cycles"]
    return {"model": model, "return_probability": list(model.r), "return_probability_tail": model.tail,
            "return_source": "r_k = 1 - S(k+1)/S(k) of the qec study's S(k) (0 where S rises); after K, 1 - the "
                             "tail ratio",
            "survival": S, "survival_sem": [0.0] + [x if x is not None else None for x in surv["sem"]],
            "tail": tail, "rises": ret["rises"], "left_out": ret["left_out"],
            "left_out_share": ret["left_out_share"],
            "mean_leakage_cycles": D, "model_mean_leakage_cycles": model.mean_duration,
            "qec_parameters": q["parameters"], "added_error": added_error}
