"""The pieces of the trajectory algorithm, written once (docs/physics.md §4, §6).

Every function here is used by :func:`lru_mps.mcwf.loop.run_rows`, whatever
holds the states (a batched store of an engine or a list of ordinary
states): the estimators, the step schedule of integrators, the jump time inside a stretch (root finding, with its
tolerances as options), the jump channel weights and the sampling of an index
from weights.  The rows' clocks and uniforms are :mod:`lru_mps.mcwf.random_streams` (their names are
here too).  Times are in 1/J, rates in J.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from numba import njit
from scipy.optimize import brentq

from ..physics.model import ArraySpec, Channel
from ..physics.rules import guided_rows_verdict
from .random_streams import AHEAD_CHUNK, Clocks, MeasurementClock, UniformDraws  # noqa: F401 (the loop's names, here too)

#: brentq tolerances of the jump time inside a stretch of length s: xtol = CROSSING_XTOL * max(1, s)
CROSSING_XTOL = 1e-12
CROSSING_RTOL = 1e-14
#: an integrator's last step in a stretch absorbs a remainder shorter than STEP_MERGE * dt
STEP_MERGE = 1e-12


# ------------------------------------------------------------------ estimators
#: the level of site 1 in the initial states whose observable the branch keeps (qubit: |1>, leakage: |2>)
BRANCH_SITE1_LEVEL = {"qubit": 1, "leakage": 2}


#: the proposal weight of a jump that (by its site's populations) ends the observed excitation (guided rows)
GUIDE_FLOOR = 0.05


def guided_init(spec: ArraySpec, init: str, levels: np.ndarray) -> str | None:
    """The observable a thermal row of the branch estimator is guided by ('qubit', 'leakage'), or None (sampled).

    A row whose array holds thermal excitations cannot follow the branch
    (a removal may take the thermal excitation and leave the observed one),
    but its jumps can be *guided* (:func:`guide_weights`): every jump
    channel is sampled on a clock with importance weights that steer away
    from the jumps that end the observed excitation, and the measurement
    outcomes with their Born probabilities (docs/physics.md §6.5).  The
    qubit state only: guided leakage rows (proposal factors from the stack's
    site populations) showed heavy-tailed weights (a band too narrow on a
    hot array), and T_star is needed where thermal rows are few; the
    coherence state's thermal rows are sampled too (T2 is sharp without).
    Nor where the rule book says a guided clock is not exact
    (:func:`~lru_mps.physics.rules.guided_rows_verdict`: engineered dissipation).
    """
    if not np.any(np.asarray(levels)[1:] != 0) or init != "qubit" or not guided_rows_verdict(spec):
        return None
    return init


def guide_weights(table: "ChannelTable", populations: np.ndarray, observed: str) -> np.ndarray:
    """Proposal factors u_k > 0 of a guided row's jump channels (importance sampling, docs/physics.md §6.5).

    Channel k is proposed with probability ~ w_k u_k (w_k its rate times
    <op^dag op>), the row's weight corrected by w_k / (proposal): unbiased for
    any u_k > 0.  u_k estimates the fraction of the observable a jump leaves:
    1 for number-conserving jumps (dephasing); for a removal at site l,
    GUIDE_FLOOR + the share of the site's removal rate not carried by the
    observed excitation -- the qubit's is site 1, the leakage stack's is
    2 p_l(2) of <n_l> = p_l(1) + 2 p_l(2) -- so that removals of thermal
    excitations are followed and those that end the observable are rare
    (their weight then carries the small value they leave).  ``populations``
    normalized, (L, 3).
    """
    u = np.ones(len(table))
    for k, ch in enumerate(table.channels):
        if not ch.removes:
            continue
        l = int(ch.site)
        p1, p2 = populations[l, 1], populations[l, 2]
        n = p1 + 2.0 * p2
        if n <= 0.0:
            continue
        if observed == "qubit":
            if l == 0:  # a_1 takes |1> to |0> (n_1 gone) and |2> to |1> (n_1 halved): what n_1 keeps, on average
                u[k] = GUIDE_FLOOR + min(1.0, (2.0 * p2 / n) / n)
        else:  # a_l takes the stack |2> to |1> (P_star gone there) and |1> to |0> (P_star kept)
            u[k] = GUIDE_FLOOR + max(0.0, 1.0 - 2.0 * p2 / n)
    return u


def branch_clock(spec: ArraySpec, init: str, levels: np.ndarray) -> float | None:
    """How a row of the branch estimator runs: None = sampled, else the rate (J) of its dephasing clock.

    A row follows the removal-free branch when every event that lowers its
    excitation number N ends its observable for good (docs/physics.md §6.5):

    * rows with a thermal excitation in the array are sampled (a removal
      may take that one and leave the observed one);
    * without number-conserving channels (no dephasing, e.g. ideal
      conditions): every other row, no clock (rate 0);
    * otherwise rows whose array starts empty (sites 2..L in |0>): the
      qubit state (N = 1, <n_1>) and the leakage state (N = 2, P_star) keep
      the number-conserving jumps (dephasing) sampled, on a clock of fixed
      rate Lambda = the initial state's dephasing hazard (qubit: 2/Tphi,
      leakage: 4 x 2/Tphi), with weights (:class:`~lru_mps.mcwf.trajectory_rows.Row`);
      the coherence state has no clock, because a dephasing jump also ends
      its coherence (n_l annihilates the vacuum part of (|0> + |1>)/sqrt 2);
      rows of other initial states are sampled.
    """
    if np.any(np.asarray(levels)[1:] != 0):
        return None  # a removal may take the thermal excitation and leave the observed one
    keep = [ch for ch in spec.jump_channels() if not ch.removes]
    if not keep:
        return 0.0
    if init == "coherence":
        return 0.0
    level = BRANCH_SITE1_LEVEL.get(init)
    if level is None:
        return None
    ops = [ch for ch in keep if ch.site == 0]
    return float(sum(ch.rate * float(np.real((ch.op.conj().T @ ch.op)[level, level])) for ch in ops))


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


def regular_steps(duration: np.ndarray, covered: np.ndarray, dt: float, limit: np.ndarray | None = None):
    """The steps of length exactly dt that :func:`step_lengths` makes before the last one of each stretch.

    Returns (count (m,), covered after them (m,)), at most ``limit`` each; the
    sums are accumulated as one step at a time does, so a caller that makes
    these steps in one go leaves ``covered`` bit for bit where single steps would.
    """
    duration = np.ascontiguousarray(duration, dtype=float)
    covered = np.array(covered, dtype=float)
    cap = np.full(len(covered), np.iinfo(np.int64).max) if limit is None else np.asarray(limit, dtype=np.int64)
    return _regular_steps(duration, covered, float(dt), cap, STEP_MERGE), covered


@njit(cache=True)
def _regular_steps(duration, covered, dt, cap, merge):
    count = np.zeros(covered.size, dtype=np.int64)
    for j in range(covered.size):
        while count[j] < cap[j]:
            left = duration[j] - covered[j]
            step = min(dt, left)
            if step != dt or left - step < merge * dt:
                break
            covered[j] += step
            count[j] += 1
    return count


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
