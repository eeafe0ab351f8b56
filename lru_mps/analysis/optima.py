"""The optimal rate of a sweep: the vertex of a quadratic in log G through the evaluations near the lowest one, with
its jackknife error (the rate sweep's low and high optima, docs/physics.md §9)."""

from __future__ import annotations

import math

import numpy as np

from .fitting import jackknife_error


def fit_optimum(rates: np.ndarray, mean: np.ndarray, sem: np.ndarray, replicas, window: float) -> tuple[float, float]:
    """(optimal rate, its standard error) in J from evaluations of P_star^(L) at ``rates`` (J): :func:`optimum_fit`
    without the reason."""
    return optimum_fit(rates, mean, sem, replicas, window)[:2]


#: why an optimum has no error, and what would give one (:func:`optimum_fit`)
NO_FIT = {
    "points": "fewer than three evaluations near the lowest one, so no quadratic fit: the lowest evaluation is given, "
              "without an error (a finer rate grid resolves it)",
    "vertex": "the quadratic through the evaluations near the lowest one has no minimum inside them (the curve is "
              "flat or noisy there): the lowest evaluation is given, without an error (more realizations or a finer "
              "rate grid resolve it)",
    "blocks": "fewer than two blocks of trajectories, so no jackknife error (more realizations give one)",
    "replica": "a leave-one-block-out fit has no minimum inside its points, so the jackknife error is not resolved "
               "(more realizations resolve it)",
}


def optimum_fit(rates: np.ndarray, mean: np.ndarray, sem: np.ndarray, replicas,
                window: float) -> tuple[float, float, str | None]:
    """(optimal rate, its standard error, why the error is nan: None where it is not) in J from evaluations of
    P_star^(L) at ``rates`` (J).

    The vertex of a quadratic in x = log10 G fitted (weights 1/sem^2) to the
    evaluations within ``window`` decades of the lowest one (at least the
    three nearest to it); the error is the jackknife over ``replicas[i]``,
    the leave-one-block-out means at rates[i] (same blocks at every rate).
    Where the fit has no minimum inside the points it uses, or there are
    fewer than three, the lowest evaluation is returned with error nan.
    """
    x = np.log10(np.asarray(rates, dtype=float))
    mean = np.asarray(mean, dtype=float)
    best = int(np.argmin(mean))
    dist = np.abs(x - x[best])
    use = dist <= window + 1e-12
    if use.sum() < 3:
        use = np.zeros(len(x), dtype=bool)
        use[np.argsort(dist, kind="stable")[:3]] = True
    if use.sum() < 3:
        return float(rates[best]), math.nan, NO_FIT["points"]
    xs = x[use]
    w = 1.0 / np.maximum(np.asarray(sem, dtype=float)[use], 1e-300)

    def vertex(y):
        c2, c1, _ = np.polyfit(xs - x[best], y, 2, w=w)
        if not c2 > 0:
            return math.nan
        v = x[best] - c1 / (2.0 * c2)
        return v if xs.min() <= v <= xs.max() else math.nan

    x0 = vertex(mean[use])
    if not math.isfinite(x0):
        return float(rates[best]), math.nan, NO_FIT["vertex"]
    reps = [np.asarray(r, dtype=float) for r in replicas]
    n = min((len(r) for r in reps), default=0)
    if n < 2:
        return float(10.0**x0), math.nan, NO_FIT["blocks"]
    xj = np.array([vertex(np.array([reps[i][j] for i in np.nonzero(use)[0]])) for j in range(n)])
    if not np.all(np.isfinite(xj)):
        return float(10.0**x0), math.nan, NO_FIT["replica"]
    sx = float(jackknife_error(xj))
    return float(10.0**x0), float(10.0**x0 * math.log(10.0) * sx), None
