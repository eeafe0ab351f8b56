"""The clocks and importance weights of the branch estimator's rows (docs/physics.md §6.5).

A row on the removal-free branch that keeps number-conserving jumps
(dephasing of the qubit and leakage states) samples them at the ticks of a
Poisson clock of fixed rate Lambda; a *guided* row (the qubit state with
thermal excitations) samples every jump channel on a clock whose rate is
set from its state at each tick and removal, with proposal factors
:func:`~lru_mps.mcwf.kernels.guide_weights`.  Either way the row carries an
importance weight: its recorded values are <psi|O|psi> x exp(log_weight +
Lambda t), with psi its store's (unnormalized) state.  The ticks' random
numbers come from each row's own child stream (``Row.clock_rng``).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from .kernels import ChannelTable, guide_weights, sample_index
from .records import EventLog


class BranchClocks:
    """Clock rates, next ticks and log-weights of B rows (rows without a clock: rate 0, next tick inf)."""

    def __init__(self, store, table: ChannelTable, rows: Sequence):
        self.store = store
        self.table = table
        self.rows = list(rows)
        B = len(self.rows)
        self.clock_rate = np.array([r.clock_rate for r in self.rows], dtype=float)
        self.next_tick = np.full(B, np.inf)
        for b in np.nonzero(self.clock_rate > 0)[0]:
            self.next_tick[b] = self.rows[b].clock_rng.exponential(1.0 / self.clock_rate[b])
        self.log_weight = np.zeros(B)
        #: guided rows (every channel on the clock, its rate set from the state)
        self.guided = np.array([r.guided is not None for r in self.rows], dtype=bool)
        #: the number-conserving channels (a plain branch row's clock samples these)
        self.kept = np.array([k for k, ch in enumerate(table.channels) if not ch.removes], dtype=np.intp)
        for b in np.nonzero(self.guided)[0]:
            self.clock_rate[b] = self._guided_rate(int(b))
            if self.clock_rate[b] > 0:
                self.next_tick[b] = self.rows[b].clock_rng.exponential(1.0 / self.clock_rate[b])

    def weights(self, rows: np.ndarray, t: float) -> np.ndarray:
        """The rows' importance weights at time t (1/J)."""
        return np.exp(self.log_weight[rows] + self.clock_rate[rows] * t)

    def tick(self, b: int, log: EventLog) -> float:
        """A tick of row b's clock: one jump with its weight; returns the tick's time (1/J).

        Plain branch rows (rate Lambda fixed): channel k among the
        number-conserving ones with probability w_k / sum(w) (w_k = rate_k
        <op_k^dag op_k>, normalized state); the weight gains sum(w) / Lambda
        here (and e^{Lambda t} between ticks), so that weight x <psi|O|psi>
        has the mean of the branch's records.  With sum(w) = Lambda (one
        excitation, the same dephasing on every site) the weight is exactly 1.
        """
        if self.guided[b]:
            return self._guided_tick(b, log)
        store, table, kept = self.store, self.table, self.kept
        rng = self.rows[b].clock_rng
        t = float(self.next_tick[b])
        w, n2, _ = self._rates(b)
        w = w[kept]
        total = float(w.sum())
        if total > 0.0 and n2 > 0.0:
            k = int(kept[sample_index(w, rng.random())])
            store.apply_jump(b, k)  # (normalizes: the norm goes into the weight)
            self.log_weight[b] += math.log(n2) + math.log(total / self.clock_rate[b])
            ch = table.channels[k]
            log.jump(b, t, ch.name, ch.site)
        self.next_tick[b] = t + rng.exponential(1.0 / self.clock_rate[b])
        return t

    def measured(self, rows: np.ndarray, n2: np.ndarray, outcomes: np.ndarray, t: np.ndarray) -> None:
        """Guided rows just measured (Born outcomes, states normalized; n2 their squared norms before): the norm
        goes into the weight, and a removal (outcome != 0) re-rates the clock."""
        self.log_weight[rows] += np.log(n2)
        for b in rows[outcomes != 0]:
            self._rerate(int(b), float(t[b]))

    # ------------------------------------------------------------------ guided rows
    def _rates(self, b: int):
        """(rate_k <op_k^dag op_k> of row b's normalized state per channel, its squared norm, its normalized
        site populations)."""
        store = self.store
        n2 = float(store.norm2(np.array([b]))[0])
        pops = store.populations(b)
        pops = pops / max(float(pops[0].sum()), 1e-300)  # normalized (stores give <psi|m_l|psi> or normalized)
        return self.table.weights(pops, lambda site: store.rdm(b, site) / n2), n2, pops

    def _proposal(self, b: int):
        """(rates w, proposal factors u, squared norm) of guided row b."""
        w, n2, pops = self._rates(b)
        return w, guide_weights(self.table, pops, self.rows[b].guided), n2

    def _guided_rate(self, b: int) -> float:
        """The clock rate of guided row b from its state: sum_k w_k u_k (J)."""
        if not len(self.table):
            return 0.0
        w, u, _ = self._proposal(b)
        return float(np.sum(w * u))

    def _guided_tick(self, b: int, log: EventLog) -> float:
        """Channel k ~ w_k u_k, the weight x sum(w u) / (Lambda u_k); then the rate of the new state."""
        store, table = self.store, self.table
        rng = self.rows[b].clock_rng
        t = float(self.next_tick[b])
        w, u, n2 = self._proposal(b)
        q = w * u
        total = float(q.sum())
        rate = float(self.clock_rate[b])
        if total > 0.0 and n2 > 0.0:
            k = sample_index(q, rng.random())
            store.apply_jump(b, k)
            self.log_weight[b] += math.log(n2) + math.log(total / (rate * u[k]))
            ch = table.channels[k]
            log.jump(b, t, ch.name, ch.site)
        self._rerate(b, t)
        return t

    def _rerate(self, b: int, t: float) -> None:
        """Guided row b's clock from time t on at the rate of its current state (a Poisson clock may change its
        rate at any event: the next tick is drawn afresh); the weight's e^{Lambda t} continues at the new rate."""
        new = self._guided_rate(b)
        self.log_weight[b] += (self.clock_rate[b] - new) * t
        self.clock_rate[b] = new
        rng = self.rows[b].clock_rng
        self.next_tick[b] = t + rng.exponential(1.0 / new) if new > 0 else math.inf
