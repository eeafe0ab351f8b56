"""A real readout at the reset site: the reported outcome of the feedback measurement (docs/physics.md §4.4).

The feedback measures n_L projectively with true outcome m (Born rule); the
readout *reports* n with probability p(n|m), and the feedback applies X_0n,
the swap of |0> and |n> on site L (X_00 = 1).  The Kraus operators of one
measurement are

    K_mn = sqrt(p(n|m)) X_0n |m><m|_L = sqrt(p(n|m)) |x(m, n)><m|_L,

with x(m, n) = X_0n(m): 0 if n = m (a correct report resets), n if m = 0
(a false report of an excitation puts |0> into |n>: leakage *injected* at
the reset site), else m (a wrong report leaves |m> in place).  Averaged over
outcomes, rho -> sum_{m,n} K_mn rho K_mn^dag; sum_{m,n} K_mn^dag K_mn = 1.

The confusion matrix P[m][n] = p(n|m) (rows sum to 1) is held as a tuple of
tuples; ``None`` is the ideal readout (P = 1, today's |0><m|_L, bit for bit).
The symmetric error EPS is p(n|m) = 1 - EPS for n = m and EPS/2 for each
n != m, EPS in [0, 2/3] (2/3: the report is independent of m).
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ParameterError, require

#: how far a confusion matrix's row may sum from 1
ROW_SUM_TOLERANCE = 1e-9
#: the reset kinds whose measurement has a readout
FEEDBACK_KINDS = ("periodic", "random")


def symmetric(eps: float) -> tuple[tuple[float, ...], ...]:
    """P[m][n] = 1 - eps for n = m, eps/2 for n != m."""
    return tuple(tuple(1.0 - eps if n == m else eps / 2.0 for n in range(3)) for m in range(3))


def confusion(readout_error=0.0, readout_confusion=None) -> tuple[tuple[float, ...], ...] | None:
    """The confusion matrix from the user's options (None: an ideal readout).

    ``readout_error`` is the symmetric error EPS in [0, 2/3] (a number or a
    numeric string); ``readout_confusion`` a 3x3 matrix P[m][n] = p(n|m) (nested
    lists, or a string 'a,b,c; d,e,f; g,h,i').  At most one of them may be on.
    """
    try:
        eps = float(readout_error if readout_error is not None else 0.0)
    except (TypeError, ValueError):
        raise ParameterError("readout_error", readout_error, "a number EPS in [0, 2/3]") from None
    require(math.isfinite(eps) and 0.0 <= eps <= 2.0 / 3.0, "readout_error", readout_error,
            "EPS in [0, 2/3] (p(n|m) = 1 - EPS for n = m, EPS/2 for each n != m)")
    if readout_confusion is None:
        return None if eps == 0.0 else symmetric(eps)
    require(eps == 0.0, "readout_confusion", readout_confusion, "not together with readout_error (give one of them)")
    return check(readout_confusion)


def _matrix(value) -> tuple[tuple[float, ...], ...]:
    """Nested lists or 'a,b,c; d,e,f; g,h,i' as a 3x3 tuple of floats."""
    rows = [r for r in value.split(";")] if isinstance(value, str) else value
    try:
        m = tuple(tuple(float(x) for x in (r.split(",") if isinstance(r, str) else r)) for r in rows)
    except (TypeError, ValueError):
        m = ()
    require(len(m) == 3 and all(len(r) == 3 for r in m), "readout_confusion", value,
            "a 3x3 matrix P[m][n] = p(n|m) (rows: true outcome m = 0, 1, 2), e.g. [[0.98, 0.01, 0.01], ...]")
    return m


def check(matrix) -> tuple[tuple[float, ...], ...] | None:
    """A validated confusion matrix (tuple of tuples); None for the identity (an ideal readout)."""
    m = _matrix(matrix)
    a = np.array(m)
    require(bool(np.all(np.isfinite(a)) and np.all(a >= 0.0) and np.all(a <= 1.0)), "readout_confusion", matrix,
            "entries p(n|m) in [0, 1]")
    sums = a.sum(axis=1)
    require(bool(np.all(np.abs(sums - 1.0) <= ROW_SUM_TOLERANCE)), "readout_confusion", matrix,
            f"rows that sum to 1 (each row is p(.|m) of one true outcome m; sums {', '.join(f'{s:.6g}' for s in sums)})")
    return None if np.array_equal(a, np.eye(3)) else m


def check_reset(readout, kind: str) -> None:
    """A readout error only where a feedback measurement has one."""
    key = "readout_error" if readout is None or symmetric_error(readout) is not None else "readout_confusion"
    require(readout is None or kind in FEEDBACK_KINDS, key, describe(readout),
            "an ideal readout for the reset kind '{}' (a readout error needs a feedback measurement: reset periodic "
            "or random)".format(kind))


def describe(readout) -> str:
    """'EPS' for a symmetric error, else the matrix (for messages and summaries)."""
    if readout is None:
        return "0"
    eps = symmetric_error(readout)
    return f"{eps:g}" if eps is not None else "[" + "; ".join(", ".join(f"{x:g}" for x in r) for r in readout) + "]"


def symmetric_error(readout) -> float | None:
    """EPS if the matrix is the symmetric error's, else None."""
    eps = 1.0 - readout[0][0]
    return eps if np.allclose(readout, symmetric(eps), rtol=0.0, atol=1e-12) else None


def targets(outcomes: np.ndarray, reports: np.ndarray) -> np.ndarray:
    """x(m, n) = X_0n(m): the level site L is left in (0 for a correct report, n from |0>, else m)."""
    m, n = np.asarray(outcomes), np.asarray(reports)
    return np.where(m == n, 0, np.where(m == 0, n, m))


def report(readout, outcomes: np.ndarray, u: np.ndarray) -> np.ndarray:
    """The reported outcomes n ~ p(n|m) of true outcomes m, from one uniform each (the Born rule's way)."""
    cum = np.cumsum(np.asarray(readout, dtype=float), axis=1)[np.asarray(outcomes, dtype=int)]
    return np.minimum((cum <= np.asarray(u)[:, None]).sum(axis=1), 2)


def kraus(readout) -> list[tuple[float, int, int]]:
    """The measurement's Kraus operators as (weight, x, m): K = sqrt(weight) |x><m|_L, weight > 0.

    The reports n that leave the same x(m, n) are one operator (weight = the sum of their p(n|m)).
    """
    out: dict[tuple[int, int], float] = {}
    for m in range(3):
        for n in range(3):
            p = float(readout[m][n])
            if p > 0.0:
                key = (int(targets(m, n)), m)
                out[key] = out.get(key, 0.0) + p
    return [(p, k, m) for (k, m), p in out.items()]


def population_map(readout) -> np.ndarray:
    """R[k, m]: the probability that one measurement leaves site L in |k> when it was in |m> (a column-stochastic 3x3)."""
    R = np.zeros((3, 3))
    for p, k, m in kraus(readout):
        R[k, m] += p
    return R
