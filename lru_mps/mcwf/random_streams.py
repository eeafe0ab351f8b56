"""What the rows of the trajectory algorithm draw from their own random streams (docs/physics.md §4, §6): the
feedback-measurement clock of one row (periodic with a random phase, or Poisson: :class:`MeasurementClock`) and of
many (:class:`Clocks`), and the uniforms U[0, 1) of their jump thresholds and outcomes (:class:`UniformDraws`),
drawn ahead where nothing else draws from the stream (the same numbers as one call per draw).  Times in 1/J, rates
in J."""

from __future__ import annotations

import math

import numpy as np

from ..physics.model import ArraySpec

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
