"""Hardware decay integrated out of a trajectory: the decay clock's survival as a weight (docs/physics.md §6.5).

Hardware decay sqrt(gamma) a_l at one rate gamma on every site has, in a
state of excitation number N, the total hazard gamma sum_l <a_l^dag a_l> =
gamma N: the same for every state with N excitations.  H conserves N, so
between events the decay part of H_eff is the scalar -i gamma N / 2: it
lowers the norm and nothing else.  A trajectory is therefore the *decay-free*
trajectory (the model without hardware decay: feedback measurements,
engineered dissipation and dephasing sampled as usual) up to the first
decay time tau, which comes at the rate gamma N(t) of a clock that does not
look at the state; there a decay a_l acts (site l with probability
<n_l> / N) and an ordinary trajectory follows.  Instead of sampling tau
into the curve, a row records

    f(t) = S(t) f_0(t) + w(tau) 1{t > tau} f_tau(t),      S(t) = exp(-gamma int_0^t N(t') dt'),

with f_0 the decay-free path's value, f_tau the continuation from the
path's state at tau after the decay, computed the same way (each generation
lowers N by one, so at most N generations), and tau drawn in the run's
window from a defensive mixture of the clock along the path and a uniform
time, with the importance weight w(tau) (:func:`first_decay`).  E[f(t)] is
the ensemble value (the first term is the expectation of f_0(t) 1{tau > t}
over tau given the path, the second the integral of the continuation over
the first decay's density); the variance loses the randomness of when the
first decay comes, which carried most of the leakage lifetimes' variance: a
leakage stack blocked by a thermal excitation lives until it or the blocker
decays.  Drawn from the clock alone, the blocker's decay late in the run
(the released stack then carries the late curve for ~T_prop) came in few
rows with a large value: a heavy tail; the uniform share draws it in every
part of the window with a small weight.

The state at tau is that of the path itself: the row's stream is replayed
with a stop at tau (a trajectory's numbers depend only on its stream, not
on the grid it stops at; tested).  The decay clock and the decayed site draw
from a child stream of the row (``rng.spawn``), the continuation from its
children.  Cost: the path, its replay up to tau and the continuation, i.e.
about (1 + 2 x generations) runs of the span, all on one propagator of the
decay-free model.

Exact where the hazard is state-independent (:func:`~lru_mps.physics.rules.integrated_decay_rate`): every
site decays at one rate through a, no other channel raises or lowers N
except the reset site's (whose events the log records: a measurement with
outcome n lowers N by n, engineered dissipation a_L by one), no readout
error (a false report changes N by what the log does not keep), and a Fock
initial state (N sharp: the leakage and qubit starts with their thermal
levels; not the coherence state).  Only rows whose initial sector has at
most :data:`INTEGRATE_MAX_DIM` states are integrated (the others are
sampled): the cost of the decay-free path does not grow with time only
where the sector is propagated through its eigendecomposition.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import math
from typing import Callable

import numpy as np

from ..physics import operators as ops
from ..physics.model import ArraySpec
from ..physics.rules import integrated_decay_rate
from .kernels import sample_index
from .loop import run_rows
from .records import TrajectoryRecord
from .trajectory_rows import start_row
from .states import StateList

#: rows are integrated where their initial N-sector has at most this many states (the sector engine's
#: eigendecomposition limit, EIG_MAX_DIM): there the decay-free path to t_final costs at most the eigendecomposition
#: (the sector engine takes Chebyshev for it only where that is cheaper, eig_pays).  In a larger sector (Chebyshev,
#: MPS) it would run to t_final in that sector, where a sampled row leaves it at its first decay (~T1q/N): 10x the
#: cost for a hot row at L = 16, every excited row at L = 20.
INTEGRATE_MAX_DIM = 1000
#: the share of first decay times drawn from the path's own decay clock; the others are uniform over the run, so
#: that a late decay is drawn as often as an early one (:func:`first_decay`)
NATURAL_SHARE = 0.5


def without_decay(spec: ArraySpec) -> ArraySpec:
    """The same model without hardware decay (the decay-free path's dynamics)."""
    return dataclasses.replace(spec, conditions=dataclasses.replace(spec.conditions, T1q=math.inf))


def integrable_number(spec: ArraySpec, product) -> int | None:
    """N of a row's initial state if the row can be integrated (a Fock state in a sector of at most
    :data:`INTEGRATE_MAX_DIM` states), else None."""
    from ..engines.sector.engine import sector_dimension

    n = fock_number(product)
    return n if n is not None and sector_dimension(spec.L, n) <= INTEGRATE_MAX_DIM else None


def fock_number(product) -> int | None:
    """The excitation number of a product state of site vectors, or None if some site is not a Fock state."""
    n = 0
    for v in product:
        nz = np.flatnonzero(np.asarray(v))
        if len(nz) != 1:
            return None
        n += int(nz[0])
    return n


@dataclasses.dataclass
class IntegratedRow:
    """A row whose hardware decay is integrated out: what :func:`run_integrated` needs besides the propagator."""

    rng: np.random.Generator  # the row's stream, after its thermal levels (start_row not yet called)
    qubit_frequency: float
    weight: float
    number: int  # N of the initial Fock state


def run_integrated(prop, spec: ArraySpec, times, product, row: IntegratedRow) -> TrajectoryRecord:
    """One row with its hardware decay integrated out, on ``prop`` (an engine prepared for
    :func:`without_decay` of ``spec``); ``product`` its initial site vectors.  The record holds
    S(t) f_0(t) + 1{t > tau} f_tau(t) (module docstring), times the row's weight."""
    return run_integrated_batch(spec, times, [(prop, product, row)])[0]


def run_integrated_batch(spec: ArraySpec, times, items) -> list[TrajectoryRecord]:
    """:func:`run_integrated` of every (propagator, product, row) of ``items``, their runs together.

    Generation by generation: every row's decay-free path in one store, then every replay to its own decay time
    (a grid per row), then the continuations (the next generation); the records are the same, bit for bit, as
    one row at a time (each row's numbers depend only on its streams and its grid; tested).
    """
    times = np.asarray(times, dtype=float)
    if not items:
        return []
    gamma = integrated_decay_rate(spec)
    if gamma is None:
        raise ValueError("run_integrated: the spec's hardware decay cannot be integrated out (the rule book's integrated_decay_rate is None)")
    free = without_decay(spec)
    out: list = [None] * len(items)
    groups: dict = {}  # the rows of one kind of state run together (one integrator step per store)
    for i, (prop, product, row) in enumerate(items):
        if row.weight == 0.0:  # a thinned row contributes nothing (lru_mps.run.thermal_sample.thin_hot_tail)
            out[i] = TrajectoryRecord(times, np.zeros((len(times), spec.L, 3)), np.zeros(len(times), dtype=complex))
            continue
        drng = row.rng.spawn(1)[0]  # the decay clock's stream: the row's own numbers do not move
        task = _Generation(functools.partial(prop.state, product), times, row.rng, drng, row.number, None,
                           row.qubit_frequency, row.weight)
        groups.setdefault((type(prop), getattr(prop, "time_step", None)), []).append((i, task))
    for members in groups.values():
        level = [task for _, task in members]
        while level:
            level = _run_generation(free, gamma, level)
        for i, task in members:
            pops, coh, diag = task.combined()
            out[i] = TrajectoryRecord(times, pops, coh, diagnostics=diag)
    return out


@dataclasses.dataclass
class _Generation:
    """One decay generation of a row (N excitations, before the next hardware decay): the decay-free path from
    ``make_state`` on ``grid`` (from 0), its decay clock, and the continuation after its first decay (``child``)."""

    make_state: Callable
    grid: np.ndarray
    rng: np.random.Generator
    drng: np.random.Generator
    number: int
    clock_next: float | None
    wq: float
    weight: float
    pops: np.ndarray | None = None
    coh: np.ndarray | None = None
    diag: dict | None = None
    tau: float = math.inf
    w_tau: float = 0.0
    child: "_Generation | None" = None

    def combined(self):
        """(populations (T, L, 3), coherence (T,), diagnostics) of this generation and all after it."""
        if self.child is not None:
            pops, coh, diag = self.child.combined()
            later = self.grid > self.tau
            self.pops[later] += self.w_tau * pops[1:]
            self.coh[later] += self.w_tau * coh[1:] * np.exp(1j * self.wq * self.tau)
            self.diag = merge_diagnostics(self.diag, diag)
        return self.pops, self.coh, self.diag


def _start(free: ArraySpec, task: _Generation, rng):
    row = start_row(free, rng, "sampled", task.wq, None, task.weight)
    if task.clock_next is not None:
        row.clock.next = task.clock_next  # periodic feedback keeps its phase across the decay
    return row


def _run_all(free: ArraySpec, states, grids, rows, keep_states=False):
    """run_rows of the rows on their grids (one grid if they share it, else a grid per row, padded)."""
    if all(g is grids[0] for g in grids):
        return run_rows(StateList(states, free), free, grids[0], rows, "sampled", keep_states)
    lengths = np.array([len(g) for g in grids])
    padded = np.zeros((len(grids), lengths.max()))
    for j, g in enumerate(grids):
        padded[j, :len(g)] = g
        padded[j, len(g):] = g[-1]
    return run_rows(StateList(states, free), free, padded, rows, "sampled", keep_states, lengths)


def _run_generation(free: ArraySpec, gamma: float, tasks: list) -> list:
    """Run one generation of every task (path, decay time, replay to it, decay); returns the next generation."""
    replays = [copy.deepcopy(t.rng) for t in tasks]
    rows = [_start(free, t, t.rng) for t in tasks]
    firsts = [r.clock.next for r in rows]
    recs = _run_all(free, [t.make_state() for t in tasks], [t.grid for t in tasks], rows)
    decayed = []
    for j, (t, rec) in enumerate(zip(tasks, recs)):
        t.diag = rec.diagnostics
        starts, numbers = number_history(rec.events, t.number)
        survival = np.exp(-cumulative_hazard(t.grid, starts, numbers, gamma))
        t.pops = survival[:, None, None] * rec.populations
        t.coh = survival * rec.coherence
        tau, w_tau = first_decay(t.grid[-1], starts, numbers, gamma, t.drng.random(2))
        if w_tau > 0.0 and tau < t.grid[-1]:
            t.tau, t.w_tau = tau, w_tau
            decayed.append((j, int(numbers[np.searchsorted(starts, tau, side="right") - 1])))
    if not decayed:
        return []
    recs2 = _run_all(free, [tasks[j].make_state() for j, _ in decayed],
                     [np.append(tasks[j].grid[tasks[j].grid < tasks[j].tau], tasks[j].tau) for j, _ in decayed],
                     [_start(free, tasks[j], replays[j]) for j, _ in decayed], keep_states=True)
    children = []
    for (j, n_tau), rec2 in zip(decayed, recs2):
        t = tasks[j]
        state = rec2.final_state
        t.diag = merge_diagnostics(t.diag, rec2.diagnostics)
        state.scale(1.0 / math.sqrt(state.norm2()))
        p = state.site_populations()
        site = sample_index(np.clip(p[:, 1] + 2.0 * p[:, 2], 0.0, None), t.drng.random())
        state.apply_local(ops.a, site)
        state.scale(1.0 / math.sqrt(state.norm2()))
        child_rng, child_drng = t.drng.spawn(2)
        t.child = _Generation(state.copy, np.concatenate([[0.0], t.grid[t.grid > t.tau] - t.tau]), child_rng,
                              child_drng, n_tau - 1, _next_after(free, firsts[j], t.tau), t.wq, t.weight)
        children.append(t.child)
    return children


def _next_after(free: ArraySpec, first: float, tau: float) -> float | None:
    """The first measurement after tau, from tau (periodic feedback); None: a fresh clock (random: memoryless)."""
    if free.reset.kind != "periodic":
        return None
    period = 1.0 / free.reset.rate
    k = max(0, math.floor((tau - first) / period) + 1)
    return first + k * period - tau


def number_history(events, number: int) -> tuple[np.ndarray, np.ndarray]:
    """N along a decay-free path: (start times, N from each start on), from its events and the initial N.

    A feedback measurement with outcome n resets |n> -> |0> (N - n); engineered dissipation a_L lowers N by one;
    dephasing keeps N.
    """
    starts, numbers = [0.0], [int(number)]
    for ev in events:
        if ev.channel == "measurement":
            change = int(ev.outcome or 0)
        elif ev.channel == "dissipation":
            change = 1
        elif ev.channel == "dephasing":
            change = 0
        else:
            raise ValueError(f"number_history: event {ev.channel!r} on a decay-free path")
        if change:
            starts.append(float(ev.time))
            numbers.append(numbers[-1] - change)
    return np.array(starts), np.array(numbers, dtype=float)


def _hazard_at_starts(starts: np.ndarray, numbers: np.ndarray, gamma: float) -> np.ndarray:
    """gamma int_0^t N at each start of a constant stretch of N."""
    return gamma * np.concatenate([[0.0], np.cumsum(numbers[:-1] * np.diff(starts))])


def cumulative_hazard(times: np.ndarray, starts: np.ndarray, numbers: np.ndarray, gamma: float) -> np.ndarray:
    """gamma int_0^t N(t') dt' at ``times`` for N piecewise constant (``numbers`` from ``starts`` on)."""
    j = np.searchsorted(starts, times, side="right") - 1
    return _hazard_at_starts(starts, numbers, gamma)[j] + gamma * numbers[j] * (times - starts[j])


def decay_time(e: float, starts: np.ndarray, numbers: np.ndarray, gamma: float) -> float:
    """The time at which gamma int_0^t N reaches ``e`` (inf if it never does: N reaches 0 first)."""
    at_starts = _hazard_at_starts(starts, numbers, gamma)
    j = int(np.searchsorted(at_starts, e, side="right")) - 1
    if numbers[j] <= 0:
        return math.inf
    return float(starts[j] + (e - at_starts[j]) / (gamma * numbers[j]))


def first_decay(t_end: float, starts: np.ndarray, numbers: np.ndarray, gamma: float, u) -> tuple[float, float]:
    """The first decay time tau in [0, t_end] and its importance weight, from two uniforms ``u``.

    Along the path the first decay comes at the density p(tau) = gamma N(tau) exp(-gamma int_0^tau N), of total
    P = 1 - S(t_end) on [0, t_end].  Drawn from it, a late tau is rare, and a row whose continuation carries the
    late curve (a blocked stack released by its blocker's decay) is a rare row with a large value: the tail the
    error of the mean does not see.  tau is drawn instead from the defensive mixture q = a p / P + (1 - a) / t_end
    (a = :data:`NATURAL_SHARE`: natural with probability a, else uniform on [0, t_end]) and the continuation carries
    w = p(tau) / q(tau) <= P / a.  E[w 1{t > tau} f_tau(t)] = int_0^t p(tau) f_tau(t) dtau for every t <= t_end:
    unbiased, with every part of the window drawn.  Returns (inf, 0) where no decay can come (N = 0 throughout).
    """
    total = -math.expm1(-float(cumulative_hazard(np.array([t_end]), starts, numbers, gamma)[0]))
    if not total > 0.0:
        return math.inf, 0.0
    if u[0] < NATURAL_SHARE:
        tau = min(decay_time(-math.log1p(-u[1] * total), starts, numbers, gamma), t_end)
    else:
        tau = float(u[1]) * t_end
    n_tau = float(numbers[np.searchsorted(starts, tau, side="right") - 1])
    if n_tau <= 0.0:
        return tau, 0.0
    p = gamma * n_tau * math.exp(-float(cumulative_hazard(np.array([tau]), starts, numbers, gamma)[0]))
    return tau, p / (NATURAL_SHARE * p / total + (1.0 - NATURAL_SHARE) / t_end)


def merge_diagnostics(a: dict, b: dict) -> dict:
    """Diagnostics of the runs of one row: the largest value of each number (truncation, norm error, bonds)."""
    out = dict(a)
    for k, v in b.items():
        try:
            out[k] = max(float(out[k]), float(v)) if k in out else v
        except (TypeError, ValueError):
            out.setdefault(k, v)
    return out
