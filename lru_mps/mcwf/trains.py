"""The trajectory loop's side of feedback trains (the fast path; docs/physics.md §4, §6).

After the first feedback measurement of a grid interval the loop
(:mod:`lru_mps.mcwf.loop`) hands a row's further measurements before the
next grid time to its store's :class:`~lru_mps.mcwf.loop.FeedbackTrains`
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

The functions take the loop object (its public attributes: store, trains,
clocks, uniforms, threshold, t, next_measurement, log, spec, rows).
"""

from __future__ import annotations

import math

import numpy as np

from .kernels import AHEAD_CHUNK


def run_train(loop, rows: np.ndarray, t_k: float) -> None:
    """The rows' (just measured) further measurements before the grid time ``t_k`` through the store's trains."""
    rows = rows[loop.next_measurement[rows] < t_k]
    if not len(rows):
        return
    if loop.clocks.kind == "periodic":
        (sampled_periodic if loop.sampled else branch_periodic)(loop, rows, t_k)
    else:
        (sampled_poisson if loop.sampled else branch_poisson)(loop, rows, t_k)


def branch_periodic(loop, rows: np.ndarray, t_k: float) -> None:
    """Branch estimator, periodic feedback: every period before t_k as one matrix power."""
    period = 1.0 / loop.spec.reset.rate
    first, count, last = loop.clocks.periodic_before(rows, t_k)
    loop.trains.periodic(rows, count, period)
    loop.log.periodic_train(rows, first, count, period)
    loop.t[rows] = last


def branch_poisson(loop, rows: np.ndarray, t_k: float) -> None:
    """Branch estimator, random feedback: the Poisson times before t_k (drawn ahead) in one call."""
    times, waits = [], []
    for b in rows:
        clock = loop.rows[b].clock
        clock.next = loop.next_measurement[b]
        tb = clock.times_before(t_k)
        loop.next_measurement[b] = clock.next
        waits.append(np.diff(np.concatenate([[loop.t[b]], tb])))  # the stretches the loop would make
        times.append(tb)
        loop.t[b] = tb[-1]
    loop.trains.poisson(rows, waits)
    loop.log.poisson_train(rows, times)


def sampled_periodic(loop, rows: np.ndarray, t_k: float) -> None:
    """Sampled estimator, periodic feedback: the periods up to the next event, AHEAD_CHUNK at a time.

    The uniforms of the periods are looked at first and used only for the
    periods done.
    """
    period = 1.0 / loop.spec.reset.rate
    while len(rows):
        n = int(min(AHEAD_CHUNK, math.ceil((t_k - loop.next_measurement[rows].min()) / period) + 1))
        times = loop.clocks.periodic_steps(rows, n)  # the clock's next n + 1 times
        want = (times[:, :n] < t_k).sum(axis=1)
        done, survival = loop.trains.sampled_periodic(rows, want, period, loop.uniforms.peek(rows, n),
                                                      loop.threshold[rows])
        loop.uniforms.consume(rows, done)
        moved = np.nonzero(done > 0)[0]
        if len(moved):
            a, d = rows[moved], done[moved]
            loop.threshold[a] = loop.threshold[a] / survival[moved]
            loop.t[a] = times[moved, d - 1]
            loop.next_measurement[a] = times[moved, d]
            loop.log.periodic_train(a, times[moved, 0], d, period)
        rows = rows[(done == n) & (want == n)]


def sampled_poisson(loop, rows: np.ndarray, t_k: float) -> None:
    """Sampled estimator, random feedback: measurement after measurement until an event or t_k.

    Each step is the loop's stop at a measurement without its overhead:
    evolve to the clock time; a row whose squared norm fell to its
    threshold stops before the stretch (the loop finds the jump); else the
    threshold is divided by the squared norm, the outcome drawn (a row with
    n != 0 stops, its uniform put back), |0><0| applied, normalized, and the
    next waiting time drawn, in the streams' order.
    """
    steps = loop.trains.sampled_poisson(rows)
    nxt, t, thr = loop.next_measurement[rows], loop.t[rows], loop.threshold[rows]
    clocks = [loop.rows[b].clock for b in rows]
    draw = loop.uniforms.one
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
                loop.uniforms.put_back(b, u)
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
    loop.next_measurement[rows], loop.t[rows], loop.threshold[rows] = nxt, t, thr
    done = [j for j in range(len(rows)) if times[j]]
    if done:
        loop.log.poisson_train(rows[done], [times[j] for j in done])
