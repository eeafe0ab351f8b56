"""The pieces of the trajectory algorithm, written once (docs/physics.md §4, §6).

Every function here is used by :func:`lru_mps.mcwf.loop.run_rows`, whatever
holds the states (a batched store of an engine or a list of ordinary
states): the feedback-measurement clock, the estimators, the step schedule of
integrators, the jump time inside a stretch (root finding, with its
tolerances as options), the jump channel weights and the sampling of an index
from weights.  Times are in 1/J, rates in J.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy.optimize import brentq

from ..errors import ParameterError
from ..physics.model import ArraySpec, Channel

ESTIMATORS = ("sampled", "branch")

#: brentq tolerances of the jump time inside a stretch of length s: xtol = CROSSING_XTOL * max(1, s)
CROSSING_XTOL = 1e-12
CROSSING_RTOL = 1e-14
#: an integrator's last step in a stretch absorbs a remainder shorter than STEP_MERGE * dt
STEP_MERGE = 1e-12


# ------------------------------------------------------------------ estimators
def branch_is_exact(spec: ArraySpec) -> bool:
    """True when the removal-free branch gives the exact ensemble average (docs/physics.md §6.5).

    That needs every event to remove the observed quantity for good: no
    hardware decay or dephasing and no thermal excitations (ideal conditions).
    """
    return spec.conditions.ideal


def check_estimator(spec: ArraySpec, estimator: str) -> str:
    """Resolve 'auto' and refuse the branch estimator where it is not exact."""
    if estimator == "auto":
        return "branch" if branch_is_exact(spec) else "sampled"
    if estimator not in ESTIMATORS:
        raise ParameterError("estimator", estimator, "one of auto, sampled, branch")
    if estimator == "branch" and not branch_is_exact(spec):
        raise ParameterError(
            "estimator",
            estimator,
            "'branch' only in ideal conditions (no T1q/Tphi noise, temperature 0)",
            "hardware noise and thermal excitations make events that do not remove the observed "
            "quantity; use --estimator sampled",
        )
    return estimator


# ------------------------------------------------------------- measurement clock
class MeasurementClock:
    """Feedback-measurement times of one trajectory: periodic with a random phase, or Poisson.

    Periodic feedback at rate G measures at t0 + k/G with t0 ~ U[0, 1/G)
    (the moment of leakage is unknown); random feedback at Poisson times of
    rate G.  Draws from ``rng`` when created (one number) and, for random
    feedback, at every :meth:`advance`.
    """

    def __init__(self, spec: ArraySpec, rng: np.random.Generator):
        self.kind = spec.reset.kind
        self.rate = spec.reset.rate
        self.rng = rng
        if self.kind == "periodic":
            self.next = rng.uniform(0.0, 1.0 / self.rate)
        elif self.kind == "random":
            self.next = rng.exponential(1.0 / self.rate)
        else:
            self.next = math.inf

    def advance(self) -> None:
        """The time of the measurement after the current one."""
        if self.kind == "periodic":
            self.next += 1.0 / self.rate
        else:
            self.next += self.rng.exponential(1.0 / self.rate)


# ------------------------------------------------------------------- integration
def step_lengths(left: np.ndarray, dt: float) -> np.ndarray:
    """The next step of an integrator with step ``dt`` for stretches with ``left`` time still to go.

    ``min(dt, left)``, except that a remainder shorter than STEP_MERGE * dt
    after the step is absorbed into it (no step of ~1e-16/J).
    """
    left = np.asarray(left, dtype=float)
    step = np.minimum(dt, left)
    cut = left - step < STEP_MERGE * dt
    return np.where(cut, left, step)


def crossing_time(excess: Callable[[float], float], duration: float, xtol: float = CROSSING_XTOL,
                  rtol: float = CROSSING_RTOL) -> float:
    """The time tau in [0, duration] at which the squared norm reaches the jump threshold.

    ``excess(tau)`` = ||psi(tau)||^2 - threshold, positive at 0 and not
    positive at ``duration`` (the norm does not increase between events).
    The jump time has no step-size bias beyond the integrator's own error.
    """
    return brentq(excess, 0.0, duration, xtol=xtol * max(1.0, duration), rtol=rtol)


# ----------------------------------------------------------------------- jumps
@dataclass(frozen=True)
class ChannelTable:
    """The jump channels of a spec, ready for weights: rate_k <op_k^dag op_k> on the channel's site."""

    channels: tuple[Channel, ...]
    rates: np.ndarray
    sites: np.ndarray
    #: diagonal of op^dag op per channel, (K, 3); None if some op^dag op is not diagonal
    diag: np.ndarray | None

    @classmethod
    def of(cls, spec: ArraySpec) -> "ChannelTable":
        chans = tuple(spec.jump_channels())
        diags = []
        for ch in chans:
            m = ch.op.conj().T @ ch.op
            diags.append(None if np.count_nonzero(m - np.diag(np.diagonal(m))) else np.real(np.diagonal(m)))
        diag = np.array(diags) if chans and all(d is not None for d in diags) else None
        return cls(chans, np.array([ch.rate for ch in chans]), np.array([ch.site for ch in chans], dtype=int), diag)

    def __len__(self) -> int:
        return len(self.channels)

    def weights(self, populations: np.ndarray, rdm: Callable[[int], np.ndarray]) -> np.ndarray:
        """rate_k <op_k^dag op_k> from a row's site populations (L, 3), or its one-site density matrices."""
        if self.diag is not None:
            w = self.rates * np.einsum("ck,ck->c", self.diag, populations[self.sites])
        else:
            w = np.array([ch.rate * float(np.real(np.trace((ch.op.conj().T @ ch.op) @ rdm(ch.site))))
                          for ch in self.channels])
        return np.clip(w, 0.0, None)


def sample_index(weights: np.ndarray, u: float) -> int:
    """Index k with probability weights[k] / sum(weights), from a uniform u in [0, 1)."""
    return min(int(np.searchsorted(np.cumsum(weights), u * weights.sum(), side="right")), len(weights) - 1)


def sample_outcomes(probabilities: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Born-rule outcomes of many rows at once: probabilities (m, n) (unnormalized, >= 0), uniforms (m,)."""
    p = np.clip(probabilities, 0.0, None)
    p = p / p.sum(axis=1, keepdims=True)
    cum = np.cumsum(p, axis=1)
    return np.minimum((cum <= u[:, None]).sum(axis=1), p.shape[1] - 1)  # searchsorted(cum, u, 'right') per row
