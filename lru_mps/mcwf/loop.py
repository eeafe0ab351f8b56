"""The Monte-Carlo wave-function algorithm, once, for a batch of rows (docs/physics.md §4, §6).

A *row* is one trajectory: its own random stream, measurement clock, jump
threshold and qubit frequency.  The states of all rows live in a *state
store* (an engine's batched store, or :class:`~lru_mps.mcwf.states.StateList`
holding ordinary states); the algorithm talks to it only through the methods
listed in :class:`~lru_mps.mcwf.store_protocol.StateStore`.  A single trajectory is a batch of one.

The algorithm.  Between events the unnormalized state evolves with
exp(-i H_eff t).  Continuous channels (engineered dissipation, hardware decay
and dephasing) are unravelled by the waiting-time method: draw r ~ U(0, 1),
evolve until the squared norm falls to r, pick channel k with probability
proportional to rate_k <op_k^dag op_k>, apply it, renormalize, draw a new r.
Feedback measurements of n_L interrupt the evolution at their clock times;
the outcome n is drawn with the Born probability and |0><n|_L is applied
(with a readout error, a report n' ~ p(n'|n) is drawn next and X_0n' |n><n|_L
applied: :mod:`lru_mps.physics.readout`; the log keeps the true outcome n).
Every row stops at every grid time and every measurement time; at each stop
a sampled row is renormalized and its threshold divided by the squared norm
(P(no jump yet) carries over), a grid point is recorded before a measurement
at the same time.

Estimators (:mod:`lru_mps.mcwf.kernels`): ``sampled`` samples every event;
``branch`` follows the removal-free branch (no waiting-time jumps, every
measurement gives n = 0, nothing renormalized) and records unnormalized
expectation values, the exact ensemble average per realization in ideal
conditions.

Random numbers.  Each row draws from its own stream in a fixed order (the
caller draws the thermal levels, then :func:`start_row` the clock and the
first threshold; then events in time order: a jump draws the channel and then
the new threshold, a measurement the outcome and, for random feedback, the
next clock time), so a trajectory's numbers depend only on its seed, never on
the batch it ran in.  The rows' uniforms are drawn ahead in chunks where a
stream draws nothing but uniforms, and branch-mode Poisson clocks draw their
waiting times ahead (the same numbers, :mod:`lru_mps.mcwf.kernels`); periodic
clocks advance all rows at once.  Events are logged as arrays
(:class:`~lru_mps.mcwf.records.EventLog`), not one object each.

Feedback trains (the fast path).  A store may offer
:class:`~lru_mps.mcwf.store_protocol.FeedbackTrains`: after the first
measurement of a grid interval the loop hands the row's further
measurements before the next grid time to the store
(:mod:`lru_mps.mcwf.trains`; branch estimator: all of them in one call, as
matrix powers of the periodic map or in the eigenbasis for random feedback;
sampled estimator: the measurements up to the next event, which the loop
then makes as above).  A store without them (or ``RunSettings.feedback =
"reference"``) gets one stop per measurement: the reference path.

Integrators (a store with ``time_step``) advance in steps of dt, the last
one of a stretch shortened (:func:`~lru_mps.mcwf.kernels.step_lengths`); the
rows step in lockstep and the loop handles a row as soon as it stops, so a
row that was measured or jumped rejoins the batch.  A row whose squared norm
falls below its threshold during a step (or, for exact stores, a stretch)
gets the crossing time by root finding from the state before it.  A store
may offer ``advance_regular(rows, counts, floors)`` (declared in its
``capabilities``, :mod:`lru_mps.engines.common.store`): the steps of dt before
each row's last one in one call, each row stopped before a step that could
take its squared norm to its floor (the threshold) by a rigorous bound
(docs/physics.md 6.2); the loop then takes the remaining steps singly, as
above.  The numbers are the same either way.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import check_stop
from ..physics import readout as readouts
from ..physics.model import ArraySpec
from .records import EventLog, TrajectoryRecord
from ..physics.rules import ESTIMATORS, resolve_estimator
from .kernels import (ChannelTable, Clocks, UniformDraws, crossing_time, sample_index,
                      regular_steps, sample_outcomes, step_lengths)
from .branch_clocks import BranchClocks
from .trajectory_rows import Row, start_row
from .store_protocol import StateStore
from .trains import TrainRows, run_train, trains_apply


def run_rows(store: StateStore, spec: ArraySpec, times, rows: Sequence[Row], estimator: str,
             keep_states: bool = False, lengths=None) -> list[TrajectoryRecord]:
    """Run the trajectories of ``rows`` (whose states are ``store``'s rows, in order) over the grid ``times``.

    ``times`` is one grid (T,) for every row, or with ``lengths`` (B,) a grid per row (B, T): row b's first
    lengths[b] entries (the rest is padding it never reaches), for sampled rows without feedback trains (the
    decay-integrated rows' runs that end at their own decay times, :mod:`lru_mps.mcwf.integrated_decay`).  A row
    gives the same numbers in either form as alone on its own grid.
    """
    if estimator not in ESTIMATORS:
        from ..errors import ParameterError

        raise ParameterError("estimator", estimator, "sampled or branch")
    resolve_estimator(spec, estimator)  # the rule book refuses a branch that is not exact here
    lengths = None if lengths is None else np.asarray(lengths, dtype=int)
    return _Loop(store, spec, np.asarray(times, dtype=float), rows, estimator, lengths).run(keep_states)


def feedback_trains(store, spec: ArraySpec, estimator: str):
    """The store's :class:`~lru_mps.mcwf.store_protocol.FeedbackTrains` if the loop uses them for this run, else None.

    Where the store offers them (``store.offers("feedback_trains")``, and its
    ``feedback_trains`` attribute is not None), for periodic and random
    feedback with either estimator; not with a readout error (its reports are drawn in the loop), nor with several
    reset sites (a train measures one).
    """
    if not trains_apply(spec, store.offers("feedback_trains") and store.feedback_trains is not None):
        return None
    return store.feedback_trains


class _Loop:
    """The trajectory algorithm over the rows of one store."""

    def __init__(self, store: StateStore, spec: ArraySpec, times: np.ndarray, rows: Sequence[Row], estimator: str,
                 lengths: np.ndarray | None = None):
        self.store = store
        self.spec = spec
        self.times = times  # (T,), or (B, T) with lengths: a grid per row
        self.lengths = lengths
        self.rows = list(rows)
        B = self.B = len(self.rows)
        #: per row: sampled (else on the removal-free branch, docs/physics.md §6.5)
        self.sampled = np.array([not r.branch for r in self.rows], dtype=bool)
        self.all_sampled = bool(self.sampled.all())
        self.channels = ChannelTable.of(spec)
        self.jumps = bool(self.sampled.any()) and len(self.channels) > 0
        # branch rows' dephasing clocks: rate, next time, log of the importance weight (Row)
        # branch rows' clocks (dephasing; every channel for guided rows) and importance weights
        self.branch = BranchClocks(store, self.channels, self.rows)
        self.next_tick = self.branch.next_tick  # (shared array)
        self.guided = self.branch.guided
        self.row_weight = np.array([r.weight for r in self.rows], dtype=float)
        self.weighted = bool(np.any(self.row_weight != 1.0))
        self.reset_sites = spec.reset_sites  # measured in this order at each feedback time
        self.threshold = np.array([r.threshold for r in self.rows], dtype=float)
        self.clocks = Clocks([r.clock for r in self.rows])
        self.next_measurement = self.clocks.next  # one array: the clocks advance it
        # every later draw of a stream is a uniform unless a random-feedback clock draws waiting times from it
        self.uniforms = UniformDraws([r.rng for r in self.rows], ahead=spec.reset.kind != "random")
        self.trains = feedback_trains(store, spec, estimator)
        if lengths is not None and (times.shape != (B, lengths.max(initial=0)) or self.trains is not None
                                    or not self.all_sampled):
            raise ValueError(f"run_rows: a grid per row needs times of shape (rows, max length) (got {times.shape} "
                             f"for {B} rows), sampled rows and no feedback trains")
        self.qubit_frequency = np.array([r.qubit_frequency for r in self.rows], dtype=float)
        self.t = np.zeros(B)
        self.log = EventLog(B, self.reset_sites[-1])
        T = times.shape[-1]
        self.populations = np.zeros((B, T, spec.L, 3))
        self.coherence = np.zeros((B, T), dtype=complex)
        # integrators: the time already covered of the stretch each row is in, and whether it is unfinished
        self.covered = np.zeros(B)
        self.in_stretch = np.zeros(B, dtype=bool)
        #: what the feedback trains may read and advance (shared arrays)
        self.train_rows = None if self.trains is None else TrainRows(
            spec, self.sampled, self.trains, self.clocks, [r.clock for r in self.rows], self.uniforms, self.log,
            self.t, self.next_measurement, self.threshold, self.next_tick)

    # ------------------------------------------------------------------ the loop
    def run(self, keep_states: bool) -> list[TrajectoryRecord]:
        times, per_row = self.times, self.lengths is not None
        for k in range(times.shape[-1]):
            if per_row:  # each row's own grid time (its padding is never waited for)
                t_k, grid_step = times[:, k], None
                waiting = k < self.lengths
            else:
                t_k = times[k]
                grid_step = t_k - (times[k - 1] if k > 0 else 0.0)
                waiting = np.ones(self.B, dtype=bool)  # rows that have not recorded times[k] yet
            first = True
            while waiting.any():
                check_stop()  # (a signal whose KeyboardInterrupt was lost, e.g. while numba compiled)
                stop = np.minimum(t_k, self.next_measurement)  # the next stop of every row
                stop = np.minimum(stop, self.next_tick)
                moving = waiting & (self.t < stop)
                if moving.any():
                    self._advance(np.nonzero(moving)[0], stop, grid_step if first else None)
                arrived = np.nonzero(waiting & (self.t >= stop))[0]
                if self.jumps and len(arrived):
                    # every stop of a sampled row: renormalize; P(no jump yet) carries over to the threshold
                    renorm = arrived if self.all_sampled else arrived[self.sampled[arrived]]
                    if len(renorm):
                        n2 = self.store.norm2(None if len(renorm) == self.B else renorm)
                        self.threshold[renorm] = self.threshold[renorm] / n2
                        self.store.scale(None if len(renorm) == self.B else renorm, 1.0 / np.sqrt(n2))
                t_at = t_k[arrived] if per_row else t_k
                ticks = self.next_tick[arrived] <= np.minimum(t_at, self.next_measurement[arrived])
                if ticks.any():  # branch rows' dephasing clocks (then on to their next stop)
                    for b in arrived[ticks]:
                        self._tick(int(b))
                    arrived, t_at = arrived[~ticks], t_at[~ticks] if per_row else t_at
                    if not len(arrived):
                        first = False
                        continue
                on_grid = t_at <= self.next_measurement[arrived]
                if on_grid.any():
                    self._record(k, arrived[on_grid])
                    waiting[arrived[on_grid]] = False
                if (~on_grid).any():
                    self._measure(arrived[~on_grid], t_k)
                if not waiting.any():
                    break
                first = False
        return self._records(keep_states)

    # --------------------------------------------------------------- evolution
    def _advance(self, rows: np.ndarray, stop: np.ndarray, grid_step: float | None) -> None:
        """Evolve the rows towards their stops; rows that cross their threshold jump on the way."""
        if self.store.time_step is None:
            self._advance_exact(rows, stop, grid_step)
        else:
            self._advance_steps(rows, stop)

    def _advance_exact(self, rows: np.ndarray, stop: np.ndarray, grid_step: float | None) -> None:
        """Exact propagation: each row's stretch in one go; a row below its threshold gets its jump time."""
        store = self.store
        duration = stop[rows] - self.t[rows]
        before = store.snapshot(rows) if self.jumps else None
        store.evolve(rows, duration, grid_step)
        reached = ~self._jumps_inside(rows, before, duration, np.zeros(len(rows)), stop)
        self.t[rows[reached]] = stop[rows[reached]]

    def _advance_steps(self, rows: np.ndarray, stop: np.ndarray) -> None:
        """Integrator steps in lockstep until some row stops (end of its stretch, or a jump)."""
        store = self.store
        dt = store.time_step
        duration = stop - self.t
        fresh = rows[~self.in_stretch[rows]]
        self.covered[fresh] = 0.0
        self.in_stretch[rows] = True
        going = rows
        regular = store.advance_regular if store.offers("advance_regular") else None
        while len(going):
            if regular is not None:
                self._advance_regular(regular, going, duration, dt)
            step = step_lengths(duration[going] - self.covered[going], dt)
            before = store.snapshot(going) if self.jumps else None
            store.evolve(going, step, None)
            done = self._jumps_inside(going, before, step, self.covered[going], stop)
            self.covered[going] += step
            ended = ~(self.covered[going] < duration[going])
            self.t[going[ended & ~done]] = stop[going[ended & ~done]]
            done |= ended
            self.in_stretch[going[done]] = False
            going = going[~done]
            if done.any():
                return

    def _advance_regular(self, regular, rows: np.ndarray, duration: np.ndarray, dt: float) -> None:
        """The steps of length dt before each row's last one, in one call of the store's ``advance_regular``,
        which stops a row before any step in which it might cross its threshold (the single steps below take
        that one, from a snapshot).  The same steps and the same sums of ``covered`` as one at a time."""
        counts, _ = regular_steps(duration[rows], self.covered[rows], dt)
        if not (counts > 1).any():
            return
        floors = self.threshold[rows] if self.jumps else np.zeros(len(rows))  # branch rows: threshold 0
        done = regular(rows, counts, floors)
        _, self.covered[rows] = regular_steps(duration[rows], self.covered[rows], dt, done)

    def _jumps_inside(self, rows, before, lengths, covered, stop) -> np.ndarray:
        """Rows whose squared norm fell to their threshold during the piece (of ``lengths``) just made jump.

        The jump time is found inside the piece from ``before``; the row was
        ``covered`` into its stretch when the piece began.  Returns which rows jumped.
        """
        jumped = np.zeros(len(rows), dtype=bool)
        if not self.jumps:
            return jumped
        n2 = self.store.norm2(rows)
        cross = ~(n2 > self.threshold[rows])
        if not self.all_sampled:
            cross &= self.sampled[rows]
        for j in np.nonzero(cross)[0]:
            b = int(rows[j])
            tau = self._crossing(b, before, int(j), float(lengths[j]))
            self._jump(b, min(self.t[b] + (covered[j] + tau), stop[b]))
            jumped[j] = True
        return jumped

    def _crossing(self, b: int, snapshot, j: int, duration: float) -> float:
        """Row b's jump time inside the stretch it just made (from position j of ``snapshot``); row b is left there."""
        probe = self.store.probe(b, snapshot, j)
        threshold = float(self.threshold[b])
        tau = crossing_time(lambda tau: probe.norm2_after(tau) - threshold, duration)
        probe.commit(tau)
        return tau

    # ------------------------------------------------------------------ events
    def _jump(self, b: int, t: float) -> None:
        """A jump of row b at time t: channel ~ rate <op^dag op>, applied and renormalized; a new threshold."""
        store, table = self.store, self.channels
        weights = table.weights(store.populations(b), lambda site: store.rdm(b, site))
        k = sample_index(weights, self.uniforms.one(b))
        store.apply_jump(b, k)
        ch = table.channels[k]
        self.log.jump(b, t, ch.name, ch.site)
        self.threshold[b] = self.uniforms.one(b)
        self.t[b] = t

    def _tick(self, b: int) -> None:
        """A tick of branch row b's clock at its time (:class:`~lru_mps.mcwf.branch_clocks.BranchClocks`)."""
        self.t[b] = self.branch.tick(b, self.log)

    def _measure(self, rows: np.ndarray, t_k: float) -> None:
        """Feedback measurement of n_r and |0><n|_r on each reset site r for each row, then its next clock time.

        Several reset sites are measured at the same time, one after the other
        (the operations on different sites commute).  With the store's trains
        the rows' further measurements before the grid time ``t_k`` follow
        through them (:mod:`lru_mps.mcwf.trains`).
        """
        guided = self.guided[rows]
        for site in self.reset_sites:
            self.log.measured(rows, self.t[rows], self._measure_site(rows, site, guided), site)
        self.clocks.advance(rows)
        if self.trains is not None:  # (guided rows make each measurement in the loop)
            run_train(self.train_rows, rows[~guided] if guided.any() else rows, t_k)

    def _measure_site(self, rows: np.ndarray, site: int, guided: np.ndarray) -> np.ndarray:
        """The measurement of reset site ``site`` for each row and its feedback; the outcomes."""
        outcome = np.zeros(len(rows), dtype=int)  # the removal-free branch keeps outcome 0
        sampled = self.sampled[rows]
        if guided.any():  # outcomes drawn with the Born rule; the row keeps its norm in its weight
            g = rows[guided]
            n2 = self.store.norm2(g)
            outcome[guided] = sample_outcomes(self.store.reset_populations(g, site), self.uniforms.take(g))
            self.store.apply_reset(g, site, outcome[guided], normalize=True)
            self.branch.measured(g, n2, outcome[guided], self.t)
            rest = ~guided
            self._reset_rest(rows[rest], site, outcome, rest, sampled[rest])
        elif sampled.all():
            p = self.store.reset_populations(rows, site)
            outcome = sample_outcomes(p, self.uniforms.take(rows))
            self._reset_sampled(rows, site, outcome)
        else:
            self._reset_rest(rows, site, outcome, np.ones(len(rows), dtype=bool), sampled)
        return outcome

    def _reset_rest(self, rows: np.ndarray, site: int, outcome: np.ndarray, where: np.ndarray,
                    sampled: np.ndarray) -> None:
        """Measure the sampled (Born outcome, normalized) and branch rows (outcome 0, not normalized) of ``rows``;
        their outcomes go to ``outcome[where]``."""
        if not len(rows):
            return
        if sampled.any():
            some = rows[sampled]
            got = sample_outcomes(self.store.reset_populations(some, site), self.uniforms.take(some))
            idx = np.nonzero(where)[0][sampled]
            outcome[idx] = got
            self._reset_sampled(some, site, got)
        if (~sampled).any():
            self.store.apply_reset(rows[~sampled], site, np.zeros(int(np.count_nonzero(~sampled)), dtype=int),
                                   normalize=False)

    def _reset_sampled(self, rows: np.ndarray, site: int, outcome: np.ndarray) -> None:
        """The feedback after true outcomes m, normalized: |0><m|_r, or with a readout error X_0n |m><m|_r with the
        report n ~ p(n|m) drawn from one more uniform of each row's stream (:mod:`lru_mps.physics.readout`)."""
        readout = self.spec.readout
        if readout is None:
            self.store.apply_reset(rows, site, outcome, normalize=True)
            return
        reports = readouts.report(readout, outcome, self.uniforms.take(rows))
        self.store.apply_reset(rows, site, outcome, normalize=True, targets=readouts.targets(outcome, reports))

    def _record(self, k: int, rows: np.ndarray) -> None:
        """Populations and coherence of the rows at times[k] (normalized in sampled mode)."""
        pops, rho10, n2 = self.store.observe(rows)
        t = self.times[rows, k] if self.lengths is not None else self.times[k]
        if self.all_sampled:
            norm = n2
        else:  # branch rows: unnormalized, times their dephasing clocks' weights
            weight = self.branch.weights(rows, t)
            norm = np.where(self.sampled[rows], n2, 1.0 / weight)
        if self.weighted:  # the initial state's sampling weights (0: a thinned row contributes nothing)
            w = self.row_weight[rows]
            norm = np.where(w > 0, norm / np.where(w > 0, w, 1.0), np.inf)
        self.populations[rows, k] = pops / norm[:, None, None]
        self.coherence[rows, k] = rho10 / norm * np.exp(1j * self.qubit_frequency[rows] * t)

    def _records(self, keep_states: bool) -> list[TrajectoryRecord]:
        diags = self.store.diagnostics()
        return [
            TrajectoryRecord(
                times=self.times if self.lengths is None else self.times[b, :self.lengths[b]],
                populations=self.populations[b] if self.lengths is None else self.populations[b, :self.lengths[b]],
                coherence=self.coherence[b] if self.lengths is None else self.coherence[b, :self.lengths[b]],
                final_state=self.store.state(b) if keep_states else None,
                diagnostics=diags[b],
                log=self.log,
                row=b,
            )
            for b in range(self.B)
        ]


def run_trajectory(state, spec: ArraySpec, realization, times, rng: np.random.Generator,
                   estimator: str = "sampled") -> TrajectoryRecord:
    """One trajectory from an ordinary ``state`` (normalized), its own stream ``rng`` and the grid ``times`` (1/J).

    A batch of one: the clock and the first threshold are drawn from ``rng``
    now, then the events as they happen.
    """
    from .states import StateList

    if estimator == "branch" and any(not ch.removes for ch in spec.jump_channels()):
        from ..errors import ParameterError

        raise ParameterError("estimator", estimator, "'sampled' for one trajectory from a given state with dephasing",
                             "the branch estimator decides per initial state (simulate does)")
    row = start_row(spec, rng, estimator, spec.qubit_frequency(realization))
    return run_rows(StateList([state], spec), spec, times, [row], estimator)[0]
