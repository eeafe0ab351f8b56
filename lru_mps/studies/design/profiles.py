"""The design study's hopping profiles: the searched list and whether a non-uniform profile moves the front.

The study key ``hopping_profiles`` lists the engineered coupling profiles
searched (:mod:`lru_mps.physics.hopping_profile`) next to L, W, J, Ubar, the
disorder pattern and the reset: the named forms only (``uniform``,
``transfer``, ``linear:A:B``), separated by commas on the command line
(``--hopping-profiles uniform,transfer``) or a TOML list of strings.  An
explicit list of couplings fits one length (L - 1 of them) and is refused in a
search over lengths.  The paper's chain is ``uniform``; it is searched first.

At a length where a profile's couplings are those of a profile before it (every
profile is the uniform chain at L = 2, one bond of mean 1; ``transfer`` is at
L = 3 too, l (L - l) = 2 on both bonds) the candidate is not screened twice:
it is the earlier profile's (``skipped``).

Whether a profile moves the front (:func:`compare`) is judged on the confirmed
points: the confirmed front of every profile against that of the uniform
points alone.  A non-uniform point on the front moves it when no uniform
confirmed point is as good in both D and added p_total up to ``SIGMAS``
combined standard errors; the best D under the budget per profile with its
error says by how much.
"""

from __future__ import annotations

import math

import numpy as np

from ...analysis.design import best_under, pareto_front
from ...analysis.numbers import pm, shown
from ...errors import ParameterError, require
from ...physics import hopping_profile as hp

KEY = "hopping_profiles"
ALLOWED = ("named hopping profiles separated by commas (or a TOML list of strings): uniform, transfer, linear:A:B "
           "(a ramp from A at the qubit to B at the reset site, A, B > 0)")
EXPLICIT = ("an explicit list of couplings fits one length (L - 1 of them), so it is not searched over lengths; run "
            "it alone with --length and --hopping-profile in `lru-mps simulate` or the qec study")
#: a non-uniform point moves the front when no uniform point is as good within this many combined errors
SIGMAS = 2.0


def searched(cfg: dict) -> list[str]:
    """The canonical profiles of ``hopping_profiles`` (uniform first where given, no repeats); one line naming the
    key for anything else."""
    value = cfg[KEY]
    items = [v.strip() for v in value.split(",")] if isinstance(value, str) else value
    require(isinstance(items, (list, tuple)) and len(items) >= 1 and all(items), KEY, value, ALLOWED)
    out = []
    for v in items:
        require(isinstance(v, str), KEY, value, ALLOWED, EXPLICIT if isinstance(v, (list, tuple)) else None)
        require(not hp.is_explicit_list(v), KEY, value, ALLOWED, EXPLICIT)
        try:
            p = hp.parse(v)
        except ParameterError:
            raise ParameterError(KEY, value, ALLOWED) from None
        out.append(p)
    out = list(dict.fromkeys(out))
    return sorted(out, key=lambda p: p != "uniform")  # (stable: the others in the order given)


def distinct(profiles: list[str], L: int) -> tuple[list[str], dict]:
    """(the profiles with couplings of their own at length L, {skipped profile: the earlier one it equals})."""
    kept, same = [], {}
    for p in profiles:
        P = _couplings(p, L)
        twin = next((q for q in kept if np.allclose(_couplings(q, L), P, rtol=1e-12, atol=0)), None)
        if twin is None:
            kept.append(p)
        else:
            same[p] = twin
    return kept, same


def _couplings(p, L: int) -> np.ndarray:
    P = hp.couplings(p, L)
    return np.ones(L - 1) if P is None else P


def skipped(profiles: list[str], lengths: list[int]) -> dict:
    """{profile: {L: the profile it equals there}} for the lengths where a profile is not screened (JSON keys)."""
    out: dict = {}
    for L in lengths:
        for p, twin in distinct(profiles, L)[1].items():
            out.setdefault(p, {})[str(L)] = twin
    return out


def tag(p: str) -> str:
    """The profile in a label: '' for uniform (the labels of earlier runs stay), else ' ' + its short name."""
    return "" if hp.is_uniform(p) else " " + hp.describe(p)


# ------------------------------------------------------------------ does a profile move the front?
def _v(x) -> float:
    return math.nan if x is None else float(x)


def _point(x: dict) -> dict:
    return {"index": x["index"], "label": x["label"], "hopping_profile": x["hopping_profile"],
            "D": {"value": x["D"]["value"], "error": x["D"]["error"]},
            "added": {"value": x["added"]["value"], "error": x["added"]["error"]}}


def _as_good(u: dict, p: dict, sigmas: float) -> bool:
    """Whether point u is at least as good as p in D and in added p_total up to ``sigmas`` combined errors (an
    error that is not a number counts as 0: compared by value)."""
    for key in ("D", "added"):
        diff = _v(u[key]["value"]) - _v(p[key]["value"])
        err = math.hypot(_v(u[key]["error"]), _v(p[key]["error"]))
        if not diff <= sigmas * (err if math.isfinite(err) else 0.0):
            return False
    return True


def _fmt(x: dict) -> str:
    return (f"D = {shown(x['D']['value'], x['D']['error'])} at added p "
            f"{shown(x['added']['value'], x['added']['error'])}")


def compare(points: list[dict], profiles: list[str], budget, sigmas: float = SIGMAS) -> dict:
    """Whether the non-uniform profiles move the confirmed front (module docstring).

    ``points``: the confirmed points, each {"index", "label", "hopping_profile", "D": {"value", "error"},
    "added": {"value", "error"}} (added p_total per cycle; a null value is left out of the fronts); ``budget``: the
    confirmed budget (None: not resolved, no best).  Returns the summary's ``profiles`` entry: ``searched``,
    ``moves_front`` (null with ``reason`` where there is nothing to compare), ``moves_front_by_value``, ``movers``
    (the non-uniform front points no uniform point matches within errors), ``front``, ``uniform_front`` (indices),
    ``front_by_profile`` {profile: {"front", "best" (under the budget, or null with "best_reason")}},
    ``best_difference`` {profile: D of uniform's best minus the profile's, combined error, within_errors} and
    ``text``: one plain sentence.
    """
    pts = [_point(x) for x in points]
    ok = [x for x in pts if math.isfinite(_v(x["D"]["value"])) and math.isfinite(_v(x["added"]["value"]))]

    def front_of(sub):
        f = pareto_front(np.array([_v(x["D"]["value"]) for x in sub]), np.array([_v(x["added"]["value"]) for x in sub]))
        return [sub[j] for j in f]

    by = {}
    for p in profiles:
        sub = [x for x in ok if x["hopping_profile"] == p]
        entry = {"front": [x["index"] for x in front_of(sub)] if sub else [], "best": None}
        j = None if budget is None or not sub else best_under([_v(x["D"]["value"]) for x in sub],
                                                             [_v(x["added"]["value"]) for x in sub], budget)
        if j is not None:
            entry["best"] = sub[j]
        else:
            entry["best_reason"] = ("no budget: it is not resolved (budget.reason)" if budget is None else
                                    f"no confirmed {p} design" + (" under the budget" if sub else ""))
        by[p] = entry
    full = front_of(ok) if ok else []
    uni = [x for x in ok if x["hopping_profile"] == "uniform"]
    others = [p for p in profiles if p != "uniform"]
    out = {"searched": list(profiles), "sigmas": sigmas, "front": [x["index"] for x in full],
           "uniform_front": [x["index"] for x in front_of(uni)] if uni else [], "front_by_profile": by}
    if not others or "uniform" not in profiles:
        out["moves_front"] = out["moves_front_by_value"] = None
        out["reason"] = ("only the uniform profile is searched: nothing to compare (add e.g. transfer to "
                         "hopping_profiles)" if not others else
                         "uniform is not searched (only the paper's point is uniform): add it to hopping_profiles")
        out["text"] = f"hopping profiles: {out['reason']}."
        return out
    on_front = [x for x in full if x["hopping_profile"] != "uniform"]
    movers = [x for x in on_front if not any(_as_good(u, x, sigmas) for u in uni)]
    out["moves_front_by_value"] = bool(on_front)
    out["moves_front"] = bool(movers)
    out["movers"] = movers
    diffs = {}
    bu = by["uniform"]["best"]
    for p in others:
        bp = by[p]["best"]
        if bu is None or bp is None:
            continue
        d = _v(bu["D"]["value"]) - _v(bp["D"]["value"])
        e = math.hypot(_v(bu["D"]["error"]), _v(bp["D"]["error"]))
        diffs[p] = {"value": d, "error": e if math.isfinite(e) else None,
                    "within_errors": bool(not math.isfinite(e) or abs(d) <= sigmas * e)}
    out["best_difference"] = diffs
    names = ", ".join(others)
    verb = "does" if len(others) == 1 else "do"
    if movers:
        who = list(dict.fromkeys(x["hopping_profile"] for x in movers))
        head = (f"hopping profiles: {', '.join(who)} {'moves' if len(who) == 1 else 'move'} the confirmed front: "
                f"{movers[0]['label']} ({_fmt(movers[0])}) is matched by no uniform design within {sigmas:g} "
                "combined errors")
    elif on_front:
        head = (f"hopping profiles: {names} {verb} not move the confirmed front: {on_front[0]['label']} is on it by "
                f"value, within {sigmas:g} combined errors of a uniform design")
    else:
        head = f"hopping profiles: {names} {verb} not move the confirmed front (no point of theirs on it)"

    def best(p):
        b = by[p]["best"]
        if b is None:
            return f"{p} none ({by[p]['best_reason']})"
        d = diffs.get(p)
        if d is None:
            return f"{p} {_fmt(b)}"
        how = "lower" if d["value"] > 0 else "higher"
        sig = "within errors" if d["within_errors"] else f"beyond {sigmas:g} combined errors"
        return f"{p} {_fmt(b)}, {pm(abs(d['value']), d['error'])} {how} than uniform's ({sig})"

    out["text"] = f"{head}; best D under the budget: " + "; ".join(best(p) for p in profiles)
    out["reason"] = ("judged on the confirmed points: a non-uniform point of the confirmed front moves it when no "
                     f"uniform confirmed point is as good in both D and added p_total within {sigmas:g} combined "
                     "standard errors")
    return out
