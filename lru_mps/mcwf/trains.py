"""The trajectory loop's side of feedback trains (the fast path; docs/physics.md §4, §6).

After the first feedback measurement of a grid interval the loop
(:mod:`lru_mps.mcwf.loop`) hands a row's further measurements before the
next grid time to its store's :class:`~lru_mps.mcwf.store_protocol.FeedbackTrains`
instead of stopping at each.  This module does the loop's bookkeeping for
them, with the loop's own rules: the clock times (the same ordered sums or
draws as one measurement at a time), the rows' uniforms in their streams'
order, the waiting-time thresholds (divided by the no-jump probability of
every stretch made), the event log.

* Branch estimator (every outcome n = 0, nothing renormalized): all the
  measurements before the grid time in one call (periodic: a matrix power;
  random: the waiting times drawn ahead, one call).
* Sampled estimator: the measurements up to the first with an event: an
  outcome n != 0, or a jump in the stretch before it.  That measurement is
  left to the loop, which then makes it as usual with the same numbers: a
  jump is found again from the state before the stretch, and a uniform drawn
  for an outcome n != 0 is put back for the loop's measurement.

The functions take a :class:`TrainRows`: what the trains read and advance of
the loop's rows, handed over by the loop explicitly (its own arrays, shared:
no copy, and no other field of the loop is touched).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..physics.model import ArraySpec
from .kernels import AHEAD_CHUNK, Clocks, MeasurementClock, UniformDraws
from .records import EventLog


def trains_apply(spec: ArraySpec, offered: bool) -> bool:
    """Whether a run's feedback measurements go through feedback trains: the one rule, read by the loop (what
    runs) and by the run's summary (what it reports).

    ``offered``: the run's store offers trains and its settings ask for them
    (``feedback = "fast"``).  Trains serve periodic and random feedback with
    either estimator, but not a readout error (its reports are drawn in the
    loop) nor several reset sites (a train measures one).
    """
    return (offered and spec.reset.kind in ("periodic", "random") and spec.readout is None
            and len(spec.reset_sites) == 1)


@dataclass
class TrainRows:
    """The loop's rows as the feedback trains see them (the loop's arrays themselves: writes advance the rows)."""

    spec: ArraySpec
    #: per row: sampled (else on the removal-free branch)
    sampled: np.ndarray
    #: the store's FeedbackTrains
    trains: object
    clocks: Clocks
    #: each row's measurement clock (random feedback draws its waiting times from it)
    row_clocks: list[MeasurementClock]
    uniforms: UniformDraws
    log: EventLog
    #: per row: the time reached, the next measurement time, the waiting-time threshold
    t: np.ndarray
    next_measurement: np.ndarray
    threshold: np.ndarray
    #: per row: the next tick of a branch row's dephasing clock (inf: none)
    next_tick: np.ndarray


def run_train(progress: TrainRows, rows: np.ndarray, t_k: float) -> None:
    """The rows' (just measured) further measurements before the grid time ``t_k`` through the store's trains."""
    rows = rows[progress.next_measurement[rows] < t_k]
    if not len(rows):
        return
    periodic = progress.clocks.kind == "periodic"
    sampled = progress.sampled[rows]
    if sampled.any():
        (sampled_periodic if periodic else sampled_poisson)(progress, rows[sampled], t_k)
    rows = rows[~sampled]
    if len(rows):
        # a branch row's train stops at its dephasing clock's next tick (the loop makes the tick)
        limit = np.minimum(t_k, progress.next_tick[rows])
        rows, limit = rows[progress.next_measurement[rows] < limit], limit[progress.next_measurement[rows] < limit]
        if not len(rows):
            return
        if np.all(limit == t_k):
            limit = t_k
        (branch_periodic if periodic else branch_poisson)(progress, rows, limit)


def branch_periodic(progress: TrainRows, rows: np.ndarray, t_k) -> None:
    """Branch estimator, periodic feedback: every period before t_k (one per row, or all) as one matrix power."""
    period = 1.0 / progress.spec.reset.rate
    first, count, last = progress.clocks.periodic_before(rows, t_k)
    progress.trains.periodic(rows, count, period)
    progress.log.periodic_train(rows, first, count, period)
    progress.t[rows] = last


def branch_poisson(progress: TrainRows, rows: np.ndarray, t_k) -> None:
    """Branch estimator, random feedback: the Poisson times before t_k (one per row, or all; drawn ahead) in one call."""
    times, waits = [], []
    limits = np.broadcast_to(np.asarray(t_k, dtype=float), (len(rows),))
    for b, limit in zip(rows, limits):
        clock = progress.row_clocks[b]
        clock.next = progress.next_measurement[b]
        tb = clock.times_before(float(limit))
        progress.next_measurement[b] = clock.next
        waits.append(np.diff(np.concatenate([[progress.t[b]], tb])))  # the stretches the loop would make
        times.append(tb)
        progress.t[b] = tb[-1]
    progress.trains.poisson(rows, waits)
    progress.log.poisson_train(rows, times)


def sampled_periodic(progress: TrainRows, rows: np.ndarray, t_k: float) -> None:
    """Sampled estimator, periodic feedback: the periods up to the next event, AHEAD_CHUNK at a time.

    The uniforms of the periods are looked at first and used only for the
    periods done.
    """
    period = 1.0 / progress.spec.reset.rate
    while len(rows):
        n = int(min(AHEAD_CHUNK, math.ceil((t_k - progress.next_measurement[rows].min()) / period) + 1))
        times = progress.clocks.periodic_steps(rows, n)  # the clock's next n + 1 times
        want = (times[:, :n] < t_k).sum(axis=1)
        done, survival = progress.trains.sampled_periodic(rows, want, period, progress.uniforms.peek(rows, n),
                                                      progress.threshold[rows])
        progress.uniforms.consume(rows, done)
        moved = np.nonzero(done > 0)[0]
        if len(moved):
            a, d = rows[moved], done[moved]
            progress.threshold[a] = progress.threshold[a] / survival[moved]
            progress.t[a] = times[moved, d - 1]
            progress.next_measurement[a] = times[moved, d]
            progress.log.periodic_train(a, times[moved, 0], d, period)
        rows = rows[(done == n) & (want == n)]


def sampled_poisson(progress: TrainRows, rows: np.ndarray, t_k: float) -> None:
    """Sampled estimator, random feedback: measurement after measurement until an event or t_k.

    Each step is the loop's stop at a measurement without its overhead:
    evolve to the clock time; a row whose squared norm fell to its
    threshold stops before the stretch (the loop finds the jump); else the
    threshold is divided by the squared norm, the outcome drawn (a row with
    n != 0 stops, its uniform put back), |0><0| applied, normalized, and the
    next waiting time drawn, in the streams' order.
    """
    steps = progress.trains.sampled_poisson(rows)
    nxt, t, thr = progress.next_measurement[rows], progress.t[rows], progress.threshold[rows]
    clocks = [progress.row_clocks[b] for b in rows]
    draw = progress.uniforms.one
    times: list[list[float]] = [[] for _ in rows]
    active = np.nonzero(nxt < t_k)[0]
    while len(active):
        n2, pops = steps.step(active, nxt[active] - t[active])
        ok = n2 > thr[active]  # no jump in the stretch
        zero = pops[:, 0] / pops.sum(axis=1)  # the Born probability of n = 0 (sample_outcomes: n = 0 iff u < it)
        go = []
        for j, i in enumerate(active):
            if not ok[j]:
                continue
            b = int(rows[i])
            u = draw(b)
            if not u < zero[j]:
                progress.uniforms.put_back(b, u)
                continue
            go.append(j)
            times[i].append(nxt[i])
            t[i] = nxt[i]
            nxt[i] += clocks[i].wait()
        go = np.array(go, dtype=np.intp)
        acc = active[go]
        thr[acc] = thr[acc] / n2[go]
        steps.accept(acc)
        active = acc[nxt[acc] < t_k]
    steps.finish()
    progress.next_measurement[rows], progress.t[rows], progress.threshold[rows] = nxt, t, thr
    done = [j for j in range(len(rows)) if times[j]]
    if done:
        progress.log.poisson_train(rows[done], [times[j] for j in done])
