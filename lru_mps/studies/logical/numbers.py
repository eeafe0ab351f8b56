"""The logical study's derived numbers: Lambda between distances, the break-even leakage rate, the gap to reset.

Every input is a point's ``logical_error_per_cycle`` {"value", "error"}
(:func:`lru_mps.circuits.per_cycle`); errors are propagated as independent
(each point has its own shots and stream).
"""

from __future__ import annotations

import math

import numpy as np

from ...circuits import ratio

#: draws of the points within their errors that give the break-even rate's error
BREAK_EVEN_DRAWS = 400


def lambdas(points: list[dict], lru: str, leakage: float, distances: list[int]) -> list[dict]:
    """Lambda_{d -> d+2} = eps(d) / eps(d + 2) between successive distances of one kind and leakage rate."""
    at = {p["distance"]: p["logical_error_per_cycle"] for p in points if p["lru"] == lru and p["leakage"] == leakage}
    ds = sorted(d for d in distances if d in at)
    return [{"lru": lru, "leakage": leakage, "distances": [a, b], **ratio(at[a], at[b])} for a, b in zip(ds, ds[1:])]


def _crossing(x: np.ndarray, f: np.ndarray) -> float | None:
    """The first x where f goes from < 0 to >= 0, linear between the two sweep points around it."""
    for i in range(len(x) - 1):
        if f[i] < 0 <= f[i + 1]:
            return float(x[i] + (x[i + 1] - x[i]) * (-f[i]) / (f[i + 1] - f[i]))
    return None


def break_even(points: list[dict], distance: int, leakages: list[float], seed: int = 0) -> dict:
    """The leakage rate above which the array's logical error per cycle is below that of no LRU, at one distance:
    f(l) = ln(eps_none / eps_array) interpolated linearly in l between the two sweep points where it turns
    positive.  Its error: the spread of the crossing over draws of every eps within its error (normal), the draws
    without a crossing left out (their share given).  {"value", "error", "bracket", "verdict", ...}."""
    def eps(lru):
        at = {p["leakage"]: p["logical_error_per_cycle"] for p in points
              if p["lru"] == lru and p["distance"] == distance}
        return [at.get(l, {"value": None, "error": None}) for l in leakages]

    none, arr = eps("none"), eps("array")
    if not none or any(x["value"] is None or x["value"] <= 0 for x in none + arr):
        return {"value": None, "error": None, "bracket": None, "distance": distance,
                "verdict": "not computed: needs the none and array rows at every sweep rate, each with an eps > 0"}
    x = np.asarray(leakages, dtype=float)
    vn = np.array([p["value"] for p in none])
    va = np.array([p["value"] for p in arr])
    f = np.log(vn / va)
    value = _crossing(x, f)
    if value is None:
        verdict = ("the array beats no LRU at every swept rate" if np.all(f >= 0) else
                   "the array does not beat no LRU at any swept rate" if np.all(f < 0) else
                   "no single crossing from worse to better within the sweep")
        return {"value": None, "error": None, "bracket": None, "distance": distance, "verdict": verdict,
                "log_ratio_none_over_array": f.tolist()}
    rng = np.random.default_rng(seed)
    en = np.array([p["error"] for p in none])
    ea = np.array([p["error"] for p in arr])
    draws = []
    for _ in range(BREAK_EVEN_DRAWS):
        dn = np.maximum(vn + rng.normal(size=vn.size) * en, 1e-300)
        da = np.maximum(va + rng.normal(size=va.size) * ea, 1e-300)
        c = _crossing(x, np.log(dn / da))
        if c is not None:
            draws.append(c)
    i = int(np.searchsorted(x, value))
    return {"value": value, "error": float(np.std(draws)) if len(draws) > 1 else None,
            "bracket": [float(x[max(i - 1, 0)]), float(x[min(i, len(x) - 1)])], "distance": distance,
            "draws_with_crossing": len(draws) / BREAK_EVEN_DRAWS,
            "verdict": f"above {value:.3g} leaked qubits per data qubit per cycle the array beats no LRU at d = "
                       f"{distance}", "log_ratio_none_over_array": f.tolist()}


def gaps(points: list[dict]) -> list[dict]:
    """eps(array) / eps(reset) at every (distance, leakage) where both were computed: how far the passive array is
    from an ideal active reset."""
    at = {(p["lru"], p["distance"], p["leakage"]): p["logical_error_per_cycle"] for p in points}
    out = []
    for (lru, d, l), e in sorted(at.items(), key=lambda kv: (kv[0][1], kv[0][2])):
        if lru == "array" and ("reset", d, l) in at:
            out.append({"distance": d, "leakage": l, "array_over_reset": ratio(e, at[("reset", d, l)])})
    return out


def finite(x) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)
