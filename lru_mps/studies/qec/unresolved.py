"""Why a number of the qec study is null, and what would give it: the reasons its summary carries next to each null.

Every null of the summary that stands for a number (not for an option that
was not asked for) gets a reason beside it, added as a key of its own so that
every other key keeps its meaning:

``T1_reason``, ``T2_reason``              the fitted T1 or T2 is null
                                          (:func:`lru_mps.analysis.decay.unresolved_reason`);
``leakage_survival.sem_reason``           an S(k) without an error;
``leakage_survival.first_cycle_below_reason``  S(k) never fell below the threshold;
``leakage_survival.resolved_reason``      the cycles where the stratified run's mask says S(k)'s error
                                          cannot be trusted (``leakage_survival.resolved``);
``mean_leakage_cycles.reason`` / ``error_reason``, likewise in
``steady_state_leakage``                  D (or its error) is null;
``seepage_per_cycle.reasons``             per cycle, null where the seepage is
                                          resolved, else why not, with
                                          ``trajectories_to_resolve`` beside it;
``error_per_cycle.lru_reason``, ``added_reason``, ``lru_T1_T2_fit_reason``,
``added_T1_T2_fit_reason``                a block of the error per cycle is null;
``error_reason`` in a {"value", "error"}  an error is null (fewer than two
                                          trajectory blocks, or one realization).
"""

from __future__ import annotations

import math

from ...analysis.decay import RESOLVED_SIGMAS
from ...analysis.numbers import probability_flag

#: an error over the trajectory blocks that is null
NO_JACKKNIFE = ("no error: the jackknife over the trajectory blocks needs at least 2 blocks; more trajectories "
                "give one")
#: an error over the direct simulation's realizations that is null
NO_REALIZATION_ERROR = ("no error: the standard error over the realizations needs at least 2 (--direct-realizations "
                        ">= 2)")


def evolutions_option(summary: dict) -> str:
    """The option that sets the number of evolutions of the study's ensemble."""
    return "--realizations" if summary.get("conditions") == "ideal" and summary.get("estimator") == "branch" \
        else "--trajectories"


def seepage_reasons(S, sem, value, n: int, option: str = "--trajectories") -> tuple[list, list]:
    """(reason or None, trajectories that would resolve it or None) of each seepage 1 - S(k)/S(k-1), k = 1..K:
    a seepage is null where S(k-1) does not stand RESOLVED_SIGMAS of its errors above zero (a ratio of noise);
    S(k-1) of mean m and error s needs about n (3 s/m)^2 trajectories (the error falls as 1/sqrt(n)), 20 % spare."""
    reasons, need = [], []
    for k in range(1, len(S)):
        if value[k - 1] is not None and math.isfinite(value[k - 1]):
            reasons.append(None)
            need.append(None)
            continue
        m, s = float(S[k - 1]), float(sem[k - 1])
        if not m > 0:
            reasons.append(f"not resolved: S({k - 1}) = 0, no leaked row left at boundary {k - 1}; more "
                           f"trajectories ({option}) reach it")
            need.append(None)
            continue
        if not math.isfinite(s):
            reasons.append(f"not resolved: S({k - 1}) has no error ({NO_JACKKNIFE})")
            need.append(None)
            continue
        N = max(n + 1, int(math.ceil(1.2 * n * (RESOLVED_SIGMAS * s / m) ** 2)))
        reasons.append(f"not resolved: S({k - 1}) = {m:.2g} +- {s:.2g} stands less than {RESOLVED_SIGMAS:g} "
                       f"standard errors above zero (the ratio S({k})/S({k - 1}) is noise); about {N:,} "
                       f"trajectories would resolve it (ran {n:,}; {option})")
        need.append(N)
    return reasons, need


def add_error_reasons(block: dict | None, why: str = NO_JACKKNIFE) -> None:
    """In place: ``error_reason`` in every {"value", "error"} of ``block`` (one level down, or ``block`` itself)
    whose value is a number and whose error is null."""
    if not isinstance(block, dict):
        return
    items = [block] + [v for v in block.values() if isinstance(v, dict)]
    for x in items:
        if "error" in x and x.get("error") is None and x.get("value") is not None:
            x["error_reason"] = why


def add(summary: dict, reasons: dict) -> dict:
    """In place: the reasons next to the summary's nulls (module docstring); ``reasons``: {"T1", "T2": the decay
    times' :func:`~lru_mps.analysis.decay.unresolved_reason` (None where resolved)}.  Returns the summary."""
    n = int(summary["evolutions"])
    option = evolutions_option(summary)
    for q in ("T1", "T2"):
        if summary.get(q) is None and reasons.get(q):
            summary[f"{q}_reason"] = reasons[q]
    ls = summary["leakage_survival"]
    if any(s is None for s in ls["sem"]):
        ls["sem_reason"] = NO_JACKKNIFE
    if ls.get("resolved") is not None and not all(ls["resolved"]):
        ks = [k for k, ok in zip(ls["cycles"], ls["resolved"]) if not ok]
        ls["resolved_reason"] = (
            f"S(k) at k = {_ranges(ks)} not resolved: a class of thermal starts that carries it there has too few "
            f"leaked rows for its error to be trusted (a blocked stack drawn in few rows; docs/physics.md §6.5); the "
            f"value is kept, its error may be too small; more trajectories ({option}) resolve it")
    if ls["first_cycle_below"] is None:
        ls["first_cycle_below_reason"] = (
            f"not reached: S(k) stays at or above the threshold {ls['threshold']:g} for all K = {summary['cycles']} "
            "cycles; a longer run (--cycles, or a longer duration) reaches it (beyond K the tail is extrapolated)")
    D = summary["mean_leakage_cycles"]
    ss = summary["steady_state_leakage"]
    if D["value"] is None:
        why = (f"not resolved: no leaked row at the start (S(0) has no weight); more trajectories ({option}) give "
               "it")
        D["reason"] = why
        ss["reason"] = "not resolved: D is not (mean_leakage_cycles.reason)"
    elif D["error"] is None:
        D["error_reason"] = NO_JACKKNIFE
        if ss["value"] is not None and ss["error"] is None:
            ss["error_reason"] = "no error: D has none (mean_leakage_cycles.error_reason)"
    seep = summary["seepage_per_cycle"]
    S = [ls["S0"]["mean"]] + list(ls["mean"])
    sem = [ls["S0"]["sem"] or 0.0] + [math.nan if s is None else s for s in ls["sem"]]
    value = [math.nan if v is None else v for v in seep["value"]]
    if any(v is None for v in seep["value"]):
        seep["reasons"], seep["trajectories_to_resolve"] = seepage_reasons(S, sem, value, n, option)
        # the convention of every null (lru_mps.analysis.numbers): a reason beside it, aligned
        seep["value_reason"] = seep["error_reason"] = seep["reasons"]
        seep["trajectories_to_resolve_reason"] = ["resolved: nothing to resolve" if t is None else None
                                                  for t in seep["trajectories_to_resolve"]]
    e = summary["error_per_cycle"]
    if e["lru"] is None:
        e["lru_reason"] = ("not resolved: <n_1> or 2C has no weight at t = 0 (no row of that start); more "
                           f"trajectories ({option}) give it")
        e["added_reason"] = "not computed: the error with the LRU is not resolved (lru_reason)"
    else:
        add_error_reasons(e["lru"])
        add_error_reasons(e["added"])
    for row in (e.get("lru"), e.get("bare")):  # the error per cycle's probabilities: flagged outside [0, 1]
        for q, x in (row or {}).items():
            if isinstance(x, dict) and q in ("eps_1", "p_x", "p_y", "p_z", "p_total"):
                flag = probability_flag(x.get("value"), x.get("error"))
                if flag:
                    x["flags"] = [flag]
    if e["lru_T1_T2_fit"] is None:
        missing = [q for q in ("T1", "T2") if summary.get(q) is None]
        e["lru_T1_T2_fit_reason"] = (f"not computed: the fitted {' and '.join(missing)} "
                                     f"{'is' if len(missing) == 1 else 'are'} not resolved "
                                     f"({', '.join(q + '_reason' for q in missing)})")
        e["added_T1_T2_fit_reason"] = "not computed: lru_T1_T2_fit is not (lru_T1_T2_fit_reason)"
    direct = ss.get("direct_simulation")
    if direct is not None:
        one = direct.get("realizations", 2) < 2
        why = NO_REALIZATION_ERROR if one else "no error over the realizations"
        for x in direct["points"]:
            for key in ("error", "ratio_error"):
                base = "value" if key == "error" else "ratio"
                if x.get(key) is None and x.get(base) is not None:
                    x[f"{key}_reason"] = why
        for x in direct.get("D_reference", {}).values():
            if isinstance(x, dict):
                add_error_reasons(x, why)
    return summary


def seepage_line(summary: dict, shown) -> str | None:
    """The table's line under the survival table: the shown cycles whose seepage is null and why, or None."""
    seep = summary["seepage_per_cycle"]
    reasons = seep.get("reasons")
    if not reasons:
        return None
    idx = [i for i in shown if reasons[i]]
    if not idx:
        return None
    ks = ", ".join(str(seep["cycles"][i]) for i in idx)
    need = [seep["trajectories_to_resolve"][i] for i in idx if seep["trajectories_to_resolve"][i]]
    n = int(summary["evolutions"])
    if not need:
        return f"* seepage at k = {ks}: {reasons[idx[0]]}"
    span = f"{min(need):,}" if min(need) == max(need) else f"{min(need):,} to {max(need):,}"
    return (f"* seepage at k = {ks}: not resolved: S(k-1) stands less than {RESOLVED_SIGMAS:g} standard errors above "
            f"zero (the ratio S(k)/S(k-1) is noise); about {span} trajectories would resolve them (ran {n:,}; "
            f"{evolutions_option(summary)})")


def _ranges(ks) -> str:
    """1, 2, 3, 7 -> '1-3, 7'."""
    out, start = [], None
    for i, k in enumerate(ks):
        if start is None:
            start = k
        if i + 1 == len(ks) or ks[i + 1] != k + 1:
            out.append(str(start) if start == k else f"{start}-{k}")
            start = None
    return ", ".join(out)
