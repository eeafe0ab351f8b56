"""Why a number of the design study is null, and what would give it: the reasons its summary carries beside each null.

Added as keys of their own (every other key keeps its meaning):

``"reason"`` in a {"value", "error"} whose value is null (D, each added
probability; in ``screen`` and ``confirm``), ``"error_reason"`` where only the
error is; ``T1_reason``, ``T2_reason`` beside a null ``T1_us``, ``T2_us``;
``D_reason``, ``added_reason`` in ``disagreement`` where a distance could not
be computed (its point's ``agree`` is then null: not compared, so no agreement;
false only where the other distance is computed and over the flag); ``budget.reason`` and
``verdict.reason``; per point of the screen's front,
``confirmed`` and, where it is not, ``not_confirmed_reason``.
"""

from __future__ import annotations

#: a jackknife error that is null
NO_JACKKNIFE = ("no error: the jackknife over the blocks needs at least 2 blocks whose fits all resolve; more "
                "trajectories (or realizations, for the screen's added error) give one")


def not_confirmed(confirm_max: int) -> str:
    """Why a point of the screen's front has no confirmation."""
    return (f"not confirmed: at most confirm_max = {confirm_max} points of the screen's front are confirmed (spread "
            "evenly along it by D), besides the paper's point and the screen's best under the budget; a larger "
            "confirm_max (in the study's TOML file) confirms it")


def _values(block: dict, why_value: str, why_error: str = NO_JACKKNIFE) -> None:
    """In place: "reason" in a {"value", "error"} with a null value, "error_reason" in one with only a null error."""
    if block.get("value") is None:
        block["reason"] = why_value
    elif block.get("error") is None:
        block["error_reason"] = why_error


def _point(side: dict, who: str, reasons: dict | None = None) -> None:
    """The reasons of one screen or confirmation block ({"D", "added", "T1_us", "T2_us"}); ``reasons``: the
    confirmation's fitted T1, T2 (:func:`lru_mps.analysis.decay.unresolved_reason`)."""
    reasons = reasons or {}
    option = "screen_trajectories" if who == "screen" else "--trajectories"
    _values(side["D"], f"not resolved: no leaked row at the start (S(0) has no weight); more trajectories ({option}) "
                       "give it")
    for q in ("T1", "T2"):
        if side.get(f"{q}_us") is None:
            side[f"{q}_reason"] = reasons.get(q) or (
                "not resolved: the realization average of the exact qubit curve gives no exponential fit from the "
                "window start; more realizations (--realizations) or a longer duration resolve it" if who == "screen"
                else f"not reported: the confirmation reports T1 and T2 only together, and "
                     f"{'T2' if q == 'T1' else 'T1'} is not resolved")
    missing = [q for q in ("T1", "T2") if side.get(f"{q}_us") is None and (who == "screen" or q in reasons)]
    why = (f"not computed: the {who}'s fitted {' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} not "
           f"resolved ({', '.join(q + '_reason' for q in missing)})" if missing else
           "not computed: the fitted T1 or T2 is not a number")
    for x in side["added"].values():
        _values(x, why)


def add(summary: dict, reasons: dict, confirm_max: int) -> dict:
    """In place: the reasons beside the summary's nulls (module docstring); ``reasons``: {candidate index: {"T1",
    "T2": the confirmation's unresolved_reason or None}}.  Returns the summary."""
    seen = set()
    confirmed = {x["index"] for x in summary["confirmation"]["points"]}
    for x in summary["confirmation"]["points"]:
        if id(x) in seen:
            continue
        seen.add(id(x))
        _point(x["screen"], "screen")
        _point(x["confirm"], "confirmation", reasons.get(x["index"]))
        z = x["disagreement"]
        for key, name in (("D", "D"), ("added", "added p_total")):
            if z.get(key) is None:
                s = x["screen"]["D"] if key == "D" else x["screen"]["added"]["p_total"]
                c = x["confirm"]["D"] if key == "D" else x["confirm"]["added"]["p_total"]
                gone = [f"the {w} {name} {'is not resolved' if b.get('value') is None else 'has no error'}"
                        for w, b in (("screen's", s), ("confirmation's", c))
                        if b.get("value") is None or b.get("error") is None]
                z[f"{key}_reason"] = f"not computed: {' and '.join(gone) or 'a combined error is not a number'}"
    for f in summary["screen"]["front"]:
        _point(f, "screen")
        f["confirmed"] = f["index"] in confirmed
        if not f["confirmed"]:
            f["not_confirmed_reason"] = not_confirmed(confirm_max)
    best = summary["screen"].get("best")
    if best is not None:
        _point(best, "screen")
    b = summary["budget"]
    if b.get("added_p_total") is None:
        b["reason"] = ("not resolved: the paper's point's confirmed added p_total is not "
                       "(paper_point.confirm.added.p_total.reason); give --budget a number, or more trajectories")
        summary["verdict"]["reason"] = "no verdict: the budget is not resolved (budget.reason)"
    return summary
