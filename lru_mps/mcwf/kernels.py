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
from numba import njit
from scipy.optimize import brentq

from ..physics.model import ArraySpec, Channel
from ..physics.rules import guided_rows_verdict

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


# ------------------------------------------------------------- measurement clock
#: waiting times (random feedback) or uniforms drawn ahead per row and chunk, where a stream draws nothing else
AHEAD_CHUNK = 256


class MeasurementClock:
    """Feedback-measurement times of one trajectory: periodic with a random phase, or Poisson.

    Periodic feedback at rate G measures at t0 + k/G with t0 ~ U[0, 1/G)
    (the moment of leakage is unknown), the times summed one period at a
    time; random feedback at Poisson times of rate G.  Draws from ``rng``
    when created (one number) and, for random feedback, one waiting time per
    :meth:`advance`.  Where the clock is its stream's only consumer (the
    branch estimator draws nothing else) set ``draw_ahead``: the waiting
    times are then drawn AHEAD_CHUNK at a time, which gives the same numbers
    (``Generator.exponential(size=n)`` draws as n single calls do).
    """

    def __init__(self, spec: ArraySpec, rng: np.random.Generator):
        self.kind = spec.reset.kind
        self.rate = spec.reset.rate
        self.rng = rng
        self.draw_ahead = False
        self._ahead = np.empty(0)
        self._used = 0
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
            self.next += self.wait()

    def wait(self) -> float:
        """The next waiting time of random feedback (1/J)."""
        if not self.draw_ahead:
            return self.rng.exponential(1.0 / self.rate)
        w = self._peek(1)[0]
        self._used += 1
        return float(w)

    def _peek(self, n: int) -> np.ndarray:
        """The next n waiting times, drawn ahead (not consumed)."""
        have = len(self._ahead) - self._used
        if have < n:
            more = self.rng.exponential(1.0 / self.rate, size=max(n - have, AHEAD_CHUNK))
            self._ahead = np.concatenate([self._ahead[self._used:], more])
            self._used = 0
        return self._ahead[self._used:self._used + n]

    def times_before(self, limit: float) -> np.ndarray:
        """The clock times from the current one on that lie before ``limit``; the clock then stands at the first >= limit.

        The same floating-point numbers as :meth:`advance` one time after
        another (``np.add.accumulate`` sums in order).  Random feedback needs
        ``draw_ahead``.
        """
        if not self.next < limit:
            return np.empty(0)
        if self.kind == "random" and not self.draw_ahead:
            raise RuntimeError("times_before needs draw_ahead for random feedback")
        n = int((limit - self.next) * self.rate * 1.25) + 16
        while True:
            steps = np.full(n, 1.0 / self.rate) if self.kind == "periodic" else self._peek(n)
            acc = np.add.accumulate(np.concatenate([[self.next], steps]))
            if acc[-1] >= limit:
                break
            n *= 2
        k = int(np.searchsorted(acc, limit, side="left"))  # acc[:k] < limit <= acc[k]
        if self.kind == "random":
            self._used += k
        self.next = float(acc[k])
        return acc[:k]


class Clocks:
    """The measurement clocks of B rows, with their next times as one array (``next``, 1/J).

    Periodic clocks advance all at once (the same sums as one at a time);
    random ones draw their waiting times from their own streams, row by row.
    """

    def __init__(self, clocks):
        self.clocks = list(clocks)
        self.next = np.array([c.next for c in self.clocks], dtype=float)
        self.kind = self.clocks[0].kind if self.clocks else "none"
        self.rate = self.clocks[0].rate if self.clocks else 0.0

    def advance(self, rows: np.ndarray) -> None:
        """The rows' next measurement times after their current ones."""
        if self.kind == "periodic":
            self.next[rows] += 1.0 / self.rate
        else:
            for b in rows:
                self.next[b] += self.clocks[b].wait()

    def periodic_steps(self, rows: np.ndarray, n: int) -> np.ndarray:
        """Periodic clocks: each row's next time and the n after it, (m, n + 1), as :meth:`advance` sums them."""
        acc = np.empty((len(rows), n + 1))
        acc[:, 0] = self.next[rows]
        acc[:, 1:] = 1.0 / self.rate
        return np.add.accumulate(acc, axis=1)

    def periodic_before(self, rows: np.ndarray, limit, at_most: np.ndarray | None = None,
                        move: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Periodic clocks: (first, count, last) of the measurement times of each row before ``limit``.

        first = the row's next time, count = how many of t, t + 1/G, ...
        lie before ``limit`` (0 if none; at most ``at_most[j]``), last = the
        last of them (first if none).  With ``move`` the rows' clocks then
        stand at the time after the last one counted.  The same sums as
        :meth:`advance` one period at a time.
        """
        first = self.next[rows].copy()
        limit = np.broadcast_to(np.asarray(limit, dtype=float), (len(rows),))  # one per row, or one for all
        cap = np.full(len(rows), np.iinfo(np.int64).max) if at_most is None else np.asarray(at_most, dtype=np.int64)
        count = np.zeros(len(rows), dtype=np.int64)
        last = first.copy()
        carry = first.copy()
        after = first.copy()
        active = np.nonzero((first < limit) & (cap > 0))[0]
        count[active] = 1
        T = 1.0 / self.rate
        width = int(min(max(np.max(limit - first, initial=0.0) * self.rate + 2, 1), 4096))
        while len(active):
            acc = np.empty((len(active), width + 1))
            acc[:, 0] = carry[active]
            acc[:, 1:] = T
            acc = np.add.accumulate(acc, axis=1)[:, 1:]
            take = np.minimum((acc < limit[active, None]).sum(axis=1), cap[active] - count[active])
            has = take > 0
            last[active[has]] = acc[has, take[has] - 1]
            count[active] += take
            done = take < width
            after[active[done]] = acc[done, take[done]]
            carry[active] = acc[:, -1]
            active = active[~done]
        if move:
            self.next[rows] = after
        return first, count, last


class UniformDraws:
    """The uniforms U[0, 1) that B rows draw from their own streams, in each stream's order.

    With ``ahead`` (every later draw of the streams is a uniform: no random
    feedback clock) they are drawn AHEAD_CHUNK at a time per row and handed
    out as arrays (``Generator.random(size=n)`` gives the numbers of n single
    calls), and up to AHEAD_CHUNK of them can be looked at before they are
    used (:meth:`peek`, :meth:`consume`); otherwise one call per draw.
    """

    def __init__(self, rngs, ahead: bool):
        self.rngs = list(rngs)
        self.ahead = ahead
        self.back: dict[int, float] = {}  # a uniform put back per row, handed out first
        if ahead:
            self.buffer = np.empty((len(self.rngs), 2 * AHEAD_CHUNK))
            self.pos = np.full(len(self.rngs), 2 * AHEAD_CHUNK, dtype=np.intp)

    def _ensure(self, rows: np.ndarray, n: int) -> None:
        """At least n draws ahead for every row (n <= AHEAD_CHUNK)."""
        width = self.buffer.shape[1]
        for b in rows[self.pos[rows] > width - n]:
            left = width - self.pos[b]
            self.buffer[b, :left] = self.buffer[b, self.pos[b]:]
            self.buffer[b, left:] = self.rngs[b].random(width - left)
            self.pos[b] = 0

    def put_back(self, b: int, u: float) -> None:
        """Hand ``u`` (row b's last uniform, not used after all) out again as row b's next one."""
        self.back[b] = u

    def take(self, rows: np.ndarray) -> np.ndarray:
        """One uniform per row (rows distinct)."""
        if self.back or not self.ahead:
            return np.array([self.one(b) for b in rows], dtype=float)
        self._ensure(rows, 1)
        u = self.buffer[rows, self.pos[rows]]
        self.pos[rows] += 1
        return u

    def one(self, b: int) -> float:
        """One uniform of row b."""
        if b in self.back:
            return self.back.pop(b)
        if not self.ahead:
            return self.rngs[b].random()
        self._ensure(np.array([b]), 1)
        self.pos[b] += 1
        return float(self.buffer[b, self.pos[b] - 1])

    def peek(self, rows: np.ndarray, n: int) -> np.ndarray:
        """The next n uniforms of each row, (m, n), not used yet (n <= AHEAD_CHUNK; needs ``ahead``)."""
        self._ensure(rows, n)
        return self.buffer[rows[:, None], self.pos[rows][:, None] + np.arange(n)]

    def consume(self, rows: np.ndarray, counts: np.ndarray) -> None:
        """Use the first counts[j] of the uniforms :meth:`peek` showed for rows[j]."""
        self.pos[rows] += np.asarray(counts, dtype=np.intp)


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
