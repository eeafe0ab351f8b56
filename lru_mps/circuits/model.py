"""The leakage model of a data qubit in the circuit: return probabilities by age, steady state, per-cycle numbers.

A data qubit that leaked ``a`` rounds ago (``a >= 1``: it leaked at the start
of the round ``a`` boundaries back) returns at the start of the next round
with the probability

    r_{a-1} = 1 - S(a) / S(a-1),

where S(k) is the survival of the QEC view (docs/physics.md §8, "The QEC
view": S(0) = 1, S(k) the probability that a qubit that leaked at the start
of cycle 0 is still leaked at cycle boundary k).  A kind with one number r
has S(k) = (1 - r)^k.  Where a measured S(k) rises between two boundaries
(leakage that came back from the array), r is 0 there: the model's
survival then stays below the measured one after the rise, and
:func:`return_probabilities` reports the leakage-cycles left out.  After the
last boundary K the tail S(K + j) = S(K) q^j (q the tail ratio) gives
r = 1 - q.

Steady state (a renewal argument, exact for this model since a returned
qubit has no memory): at a boundary, after the returns and before the new
leaks, a qubit is leaked with age a with probability p S(a) / (1 + p D),
D = sum_{a>=1} S(a) the mean leakage duration in cycles, so the leaked
fraction is p D / (1 + p D) (:func:`steady_leaked_fraction`), the QEC
view's steady-state leakage.

Everything here is numbers: probabilities per round (one round = one QEC
cycle t_c), no units of time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import require

#: ages past which the steady-state age distribution is cut (its weight there is below this share of D)
STEADY_CUT = 1e-10
#: the most ages a steady-state distribution holds (a kind with D of ~10^4 cycles or more is cut there)
MAX_AGES = 200_000


@dataclass(frozen=True)
class ReturnModel:
    """How a leaked data qubit returns: ``r[k]`` for ages k + 1 = 1..len(r), ``tail`` for every older age.

    r_k is the probability that a qubit leaked k + 1 rounds ago returns at
    this round's start (an unconditional per-round hazard, 0..1).
    """

    r: tuple[float, ...]
    tail: float

    def __post_init__(self):
        vals = list(self.r) + [self.tail]
        require(all(math.isfinite(x) and 0.0 <= x <= 1.0 for x in vals), "return_probability", vals,
                "probabilities in [0, 1]")

    @classmethod
    def constant(cls, r: float) -> "ReturnModel":
        """One return probability at every age: S(k) = (1 - r)^k, D = (1 - r)/r."""
        return cls((), float(r))

    def at_ages(self, ages: np.ndarray) -> np.ndarray:
        """r_{a-1} for the ages ``a`` >= 1 (an integer array): the return probability at this boundary."""
        table = np.asarray(self.r + (self.tail,), dtype=float)
        return table[np.minimum(np.asarray(ages) - 1, len(self.r))]

    def survival(self, ages: int) -> np.ndarray:
        """S(0..ages) of the model: S(0) = 1, S(a) = prod_{j<a} (1 - r_j)."""
        r = np.array([self.r[j] if j < len(self.r) else self.tail for j in range(ages)], dtype=float)
        return np.concatenate(([1.0], np.cumprod(1.0 - r)))

    @property
    def mean_duration(self) -> float:
        """D = sum_{a>=1} S(a) in cycles (inf where the tail never returns and S has not reached 0)."""
        S = self.survival(len(self.r))
        body = float(np.sum(S[1:]))
        if S[-1] == 0.0:
            return body
        if self.tail <= 0.0:
            return math.inf
        return body + float(S[-1] * (1.0 - self.tail) / self.tail)

    def steady_ages(self, p: float) -> tuple[np.ndarray, np.ndarray]:
        """(ages a >= 1, P(leaked with age a)) at a boundary after the returns, before the new leaks, in the steady
        state under leaks of probability ``p`` per round: p S(a) / (1 + p D), cut where the rest of the
        distribution is below :data:`STEADY_CUT` of D (or at :data:`MAX_AGES`)."""
        D = self.mean_duration
        require(math.isfinite(D), "initial_leakage", "steady",
                "a kind whose leaked qubits return (finite mean duration D): use initial_leakage = 'none'")
        if p == 0.0 or D == 0.0:
            return np.arange(1, 2), np.zeros(1)
        n = len(self.r)
        extra = 0
        if self.tail > 0.0 and self.tail < 1.0:
            extra = int(min(MAX_AGES, math.ceil(math.log(STEADY_CUT) / math.log1p(-self.tail))))
        S = self.survival(n + extra)[1:]
        ages = np.arange(1, len(S) + 1)
        keep = S > 0
        return ages[keep], p * S[keep] / (1.0 + p * D)


def return_probabilities(S, tail_ratio: float | None = None) -> dict:
    """The return probabilities r_k = 1 - S(k+1)/S(k) of a measured survival S(0..K) (S(0) = 1), exactly, not a
    fit; 0 where S rises (k where S(k+1) > S(k)); 1 where S(k) = 0 (no qubit reaches that age).  After K:
    r = 1 - tail_ratio (the QEC view's tail S(K + j) ~ S(K) ratio^j; None or 0: every qubit left returns at K).

    Returns {"model": ReturnModel, "rises": [k, ...], "left_out": the leakage-cycles per event the clipped rises
    leave out, sum_k (S(k) - S_model(k)) over k <= K, "left_out_share": that over D of S}.
    """
    S = np.asarray(S, dtype=float)
    require(S.ndim == 1 and len(S) >= 2 and abs(S[0] - 1.0) < 1e-9, "survival", S[:3].tolist(),
            "S(0) = 1 and at least one later boundary")
    require(bool(np.all(np.isfinite(S)) and np.all((S >= 0) & (S <= 1 + 1e-12))), "survival", S.tolist(),
            "probabilities in [0, 1]")
    prev, nxt = S[:-1], S[1:]
    rises = np.flatnonzero(nxt > prev)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(prev > 0, 1.0 - nxt / np.where(prev > 0, prev, 1.0), 1.0)
    r = np.clip(r, 0.0, 1.0)
    q = 0.0 if tail_ratio is None or not math.isfinite(tail_ratio) else float(tail_ratio)
    model = ReturnModel(tuple(float(x) for x in r), 1.0 - min(max(q, 0.0), 1.0))
    S_model = model.survival(len(S) - 1)
    left = float(np.sum(S[1:] - S_model[1:]))
    D = float(np.sum(S[1:]))
    return {"model": model, "rises": [int(k) for k in rises], "left_out": left,
            "left_out_share": left / D if D > 0 else 0.0}


def steady_leaked_fraction(p: float, D: float) -> float:
    """p D / (1 + p D): the leaked share of the data qubits at a boundary (after the returns, before new leaks)."""
    if not math.isfinite(D):
        return 1.0 if p > 0 else 0.0
    return p * D / (1.0 + p * D)


def per_cycle(failures: int, shots: int, rounds: int) -> dict:
    """The logical error per cycle from P_L = failures/shots over ``rounds`` rounds:
    eps = (1 - (1 - 2 P_L)^(1/rounds)) / 2, with its error propagated from the binomial error of P_L,
    sqrt(P_L (1 - P_L) / shots) (with no failure, that of one failure: a scale, not a bound).

    {"value", "error", "P_L", "P_L_error", "failures", "shots", "rounds"}; value None where P_L >= 1/2 (the
    memory is random: no per-cycle error is defined)."""
    require(shots >= 1 and rounds >= 1, "shots", shots, "an integer >= 1")
    P = failures / shots
    P_err = math.sqrt(max(P, 1.0 / shots) * (1.0 - min(P, 1.0 - 1.0 / shots)) / shots)
    out = {"P_L": P, "P_L_error": P_err, "failures": int(failures), "shots": int(shots), "rounds": int(rounds)}
    if P >= 0.5:
        return {"value": None, "error": None, **out, "reason": "P_L >= 1/2: the memory is random"}
    x = 1.0 - 2.0 * P
    eps = (1.0 - x ** (1.0 / rounds)) / 2.0
    deps = x ** (1.0 / rounds - 1.0) / rounds * P_err  # |d eps / d P_L| = (1 - 2P)^(1/R - 1) / R
    return {"value": eps, "error": deps, **out}


def ratio(a: dict, b: dict) -> dict:
    """a/b of two {"value", "error"} numbers with independent errors (relative errors in quadrature); None where
    either is missing or b is 0."""
    if a.get("value") is None or b.get("value") is None or b["value"] == 0 or a["value"] == 0:
        return {"value": None, "error": None}
    v = a["value"] / b["value"]
    return {"value": v, "error": abs(v) * math.hypot(a["error"] / a["value"], b["error"] / b["value"])}
