"""Batched trajectories: many trajectories of one run advanced together.

:func:`run_batch` returns, for every trajectory index, the records of
``TrajectoryRunner(spec, settings, realization).run(index)`` (equal to
rounding: tested to 1e-10 for the exact engine and 1e-8 for MPS), but
advances the states of many trajectories (every initial state of every index
of a chunk) in vectorised calls instead of one trajectory at a time.

The trajectory algorithm here is that of :func:`lru_mps.trajectory.run_trajectory`,
replayed row by row on a *state store* that holds the states of all rows:

* :class:`~lru_mps.engines.exact_batch.ExactBatch` (``engine='exact'``): the
  kept N-blocks of the 3^L space, (B, d) amplitudes, grid steps as batched
  matmuls;
* :class:`~lru_mps.engines.mps_batch.MPSBatch` (``engine='mps'``, lean
  kernel): qutrit MPS tensors (B, 3, chi_l, chi_r) padded to a common bond
  dimension, one batched TEBD sweep for all rows.

Why the numbers are those of the unbatched engines
--------------------------------------------------
Every row has its own random stream (``event_rng(seed, index, init)``) and
measurement clock (the very :class:`~lru_mps.trajectory._MeasurementClock` of
the unbatched algorithm) and draws from it in the same order: thermal levels,
clock, first threshold, then events in time order (a jump: channel, then the
new threshold; a measurement: outcome, then for random feedback the next
clock time).  The driver replays the stops of :func:`run_trajectory` row by
row: each grid interval is cut at the row's measurement times; every stop
renormalizes the state and divides the threshold by the squared norm
(sampled estimator); a grid point is recorded before a measurement at the
same time; a row whose squared norm falls below its threshold gets the
crossing time by the same ``brentq`` search as ``trajectory._advance``, then
jumps by the rule of ``trajectory._jump``.  Only the order of additions inside
sums and matrix products (and, for MPS, the gauge of the SVDs) differs.

The stores call array functions resolved through autoray, so the bulk array
work can run on torch or cupy arrays (``backend=``); numpy is the reference.
Root finding and random numbers stay in numpy on the host.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

from . import trajectory as _traj
from .errors import ParameterError, require
from .physics.model import ArraySpec, Realization, product_state
from .trajectory import ESTIMATORS, Event, TrajectoryRecord

#: trajectory indices advanced together (rows = indices x initial states)
DEFAULT_BATCH = 256

#: engines with a batched state store
BATCHED_ENGINES = ("exact", "mps")


def batch_supported(settings) -> bool:
    """Whether run_batch can run these settings (exact engine; MPS with the lean kernel)."""
    if settings.engine == "exact":
        return True
    return settings.engine == "mps" and settings.engine_options.get("kernel", "lean") == "lean"


def _store_class(settings):
    if settings.engine == "exact":
        from .engines.exact_batch import ExactBatch

        return ExactBatch
    from .engines.mps_batch import MPSBatch

    return MPSBatch


def run_batch(
    spec: ArraySpec,
    settings,
    indices: Iterable[int],
    realization: Realization | None = None,
    *,
    batch_size: int | None = None,
    backend: str = "numpy",
) -> list[dict[str, TrajectoryRecord]]:
    """Trajectories ``indices`` of a run, batched: one ``{init: record}`` per index, in order.

    The records of ``[TrajectoryRunner(spec, settings, realization).run(i) for i in indices]``
    (to rounding) for ``settings.engine`` 'exact' or 'mps' (lean kernel):
    both estimators, every reset kind, hardware noise and temperature.
    ``realization`` fixes the disorder of every trajectory, as in
    :class:`~lru_mps.run.ensemble.TrajectoryRunner`.  Up to ``batch_size``
    indices (default :data:`DEFAULT_BATCH`) are advanced together; the numbers
    depend on it only through rounding.  ``backend`` names the array library
    of the bulk work ('numpy', 'torch', 'cupy'; the latter two run on a GPU
    when the arrays live there).  Call it with one BLAS thread
    (``threadpoolctl.threadpool_limits(1)``), as run_block does.
    """
    require(
        settings.engine in BATCHED_ENGINES,
        "engine",
        settings.engine,
        "'exact' or 'mps' for the batched runner",
        "run the sector engine unbatched (batched=False)",
    )
    require(
        batch_supported(settings),
        "kernel",
        settings.engine_options.get("kernel"),
        "'lean' for the batched MPS runner (the quimb kernel is the unbatched reference)",
    )
    store_cls = _store_class(settings)
    require(
        spec.L <= store_cls.max_length,
        "length",
        spec.L,
        f"L <= {store_cls.max_length} for the {settings.engine} engine",
        "use --engine mps or sector for long arrays" if settings.engine == "exact" else None,
    )
    if settings.estimator not in ESTIMATORS:
        raise ParameterError("estimator", settings.estimator, "sampled or branch")
    batch_size = DEFAULT_BATCH if batch_size is None else batch_size
    require(int(batch_size) == batch_size and batch_size >= 1, "batch_size", batch_size, "an integer >= 1")
    batch_size = int(batch_size)
    entries = [_Entry.draw(spec, settings, int(i), realization) for i in indices]
    out: list = [None] * len(entries)
    if settings.engine == "exact":  # an exact batch holds blocks 0..N_max: group by N_max
        chunks = _chunks([e.nmax for e in entries], batch_size)
    else:
        chunks = [list(range(s, min(s + batch_size, len(entries)))) for s in range(0, len(entries), batch_size)]
    for chunk in chunks:
        driver = _Driver(spec, settings, [entries[j] for j in chunk], realization is not None, store_cls, backend)
        for j, rec in zip(chunk, driver.run()):
            out[j] = rec
    return out


def _chunks(nmax: Sequence[int], batch_size: int) -> list[list[int]]:
    """Positions grouped by N_max (an exact batch holds blocks 0..N_max), at most batch_size each.

    A new chunk starts when the current one is full, or when N_max grows and
    the current chunk already holds a quarter of batch_size (small groups of
    rare large N_max ride along with the next).
    """
    order = sorted(range(len(nmax)), key=lambda j: nmax[j])
    chunks: list[list[int]] = []
    cur: list[int] = []
    for j in order:
        if cur and (len(cur) >= batch_size or (nmax[j] > nmax[cur[-1]] and 4 * len(cur) >= batch_size)):
            chunks.append(cur)
            cur = []
        cur.append(j)
    if cur:
        chunks.append(cur)
    return chunks


class _Entry:
    """One trajectory index: its realization and, per initial state, stream, clock, threshold, product state.

    Drawn as TrajectoryRunner.run and run_trajectory draw them, in their order:
    the disorder from its own stream, then per initial state the thermal
    levels, the measurement clock and the first threshold.
    """

    __slots__ = ("index", "real", "wq", "rngs", "clocks", "thresholds", "products", "nmax")

    @classmethod
    def draw(cls, spec: ArraySpec, settings, index: int, realization: Realization | None) -> "_Entry":
        from .run.ensemble import disorder_rng, event_rng

        self = cls()
        self.index = index
        real = realization if realization is not None else spec.draw_realization(disorder_rng(settings.seed, index))
        self.real = real
        self.wq = spec.qubit_frequency(real)
        jumps = settings.estimator == "sampled" and bool(spec.jump_channels())
        self.rngs, self.clocks, self.thresholds, self.products = [], [], [], []
        self.nmax = 0
        for init in settings.inits:
            rng = event_rng(settings.seed, index, init)
            levels = spec.thermal_levels(real, rng)
            sites = [np.asarray(v, dtype=complex) for v in product_state(init, levels)]
            # the largest N in the product's support: the highest occupied level of each site, summed
            self.nmax = max(self.nmax, sum(int(np.nonzero(v)[0].max()) for v in sites))
            self.clocks.append(_traj._MeasurementClock(spec, rng))
            self.thresholds.append(rng.random() if jumps else 0.0)
            self.rngs.append(rng)
            self.products.append(sites)
        return self


class _Driver:
    """The trajectory algorithm for the rows (index, initial state) of a chunk, on a state store."""

    def __init__(self, spec: ArraySpec, settings, entries: Sequence[_Entry], fixed: bool, store_cls, backend: str):
        self.spec = spec
        self.times = np.asarray(settings.times, dtype=float)
        self.inits = tuple(settings.inits)
        self.sampled = settings.estimator == "sampled"
        self.channels = spec.jump_channels()
        self.jumps = self.sampled and bool(self.channels)
        L = self.L = spec.L
        n_idx, n_init = len(entries), len(self.inits)
        self.n_idx = n_idx
        # rows ordered (entry, init); row b belongs to realization b // I (a single one if fixed)
        reals = [entries[0].real] if fixed else [e.real for e in entries]
        I = n_idx * n_init if fixed else n_init
        B = self.B = n_idx * n_init
        self.wq = np.repeat([e.wq for e in entries], n_init)
        self.rngs = [rng for e in entries for rng in e.rngs]
        self.clocks = [c for e in entries for c in e.clocks]
        self.thr = np.array([x for e in entries for x in e.thresholds], dtype=float)
        self.clock = np.array([c.next for c in self.clocks], dtype=float)
        self.t = np.zeros(B)
        self.events: list[list[Event]] = [[] for _ in range(B)]
        products = [p for e in entries for p in e.products]
        nmax = np.repeat([e.nmax for e in entries], n_init)
        self.store = store_cls(spec, settings, reals, I, products, nmax, backend)
        T = len(self.times)
        self.pops = np.zeros((B, T, L, 3))
        self.coh = np.zeros((B, T), dtype=complex)

    def _measure(self, rows: np.ndarray) -> None:
        """Feedback measurement of n_L and |0><n| for each row (as trajectory._measure), then the next clock time."""
        if self.sampled:
            p = np.clip(self.store.last_populations(rows), 0.0, None)
            p = p / p.sum(axis=1, keepdims=True)
            cum = np.cumsum(p, axis=1)
            u = np.array([self.rngs[b].random() for b in rows])
            # searchsorted(cum, u, side='right') per row
            outcome = np.minimum((cum <= u[:, None]).sum(axis=1), 2)
        else:
            outcome = np.zeros(len(rows), dtype=int)
        self.store.reset_last(rows, outcome, normalize=self.sampled)
        last = self.L - 1
        for j, b in enumerate(rows):
            self.events[b].append(Event(self.t[b], "measurement", last, int(outcome[j])))
            clock = self.clocks[b]
            clock.advance()
            self.clock[b] = clock.next

    def _record(self, k: int, rows: np.ndarray) -> None:
        """Populations and coherence of the rows at times[k] (normalized in sampled mode)."""
        pops, rho10 = self.store.observe(rows)
        norm = pops[:, 0, :].sum(axis=1) if self.sampled else np.ones(len(rows))
        self.pops[rows, k] = pops / norm[:, None, None]
        self.coh[rows, k] = rho10 / norm * np.exp(1j * self.wq[rows] * self.times[k])

    def run(self) -> list[dict[str, TrajectoryRecord]]:
        store = self.store
        B = self.B
        times = self.times
        for k in range(len(times)):
            tk = times[k]
            dk = tk - (times[k - 1] if k > 0 else 0.0)
            active = np.ones(B, dtype=bool)  # rows that have not recorded times[k] yet
            first = True
            while True:
                tgt = np.minimum(tk, self.clock)  # the next stop of every row
                dur = tgt - self.t
                ev = active & (self.t < tgt)
                n2 = None  # squared norms of all rows, when known
                if ev.any():
                    crossed, taus, n2, pending = store.advance(ev, dur, self.thr if self.jumps else None, dk, first)
                    for b, tau in zip(crossed, taus):
                        b = int(b)
                        t_new = min(self.t[b] + tau, tgt[b])
                        store.jump(b, self.rngs[b], self.events[b], t_new)
                        self.thr[b] = self.rngs[b].random()
                        self.t[b] = t_new
                        if n2 is not None:
                            n2[b] = store.norm2(np.array([b]))[0]
                    reached = ev.copy()
                    reached[crossed] = False
                    reached[pending] = False  # still inside their stretch: they go on in the next round
                    self.t[reached] = tgt[reached]
                arrived = active & (self.t >= tgt)
                if self.jumps and arrived.any():
                    # every stop: renormalize; P(no jump yet) carries over to the threshold
                    rows = None if arrived.all() else np.nonzero(arrived)[0]
                    if n2 is None:
                        n2r = store.norm2(rows)
                    else:
                        n2r = n2 if rows is None else n2[rows]
                    if rows is None:
                        self.thr /= n2r
                    else:
                        self.thr[rows] = self.thr[rows] / n2r
                    store.scale(rows, 1.0 / np.sqrt(n2r))
                record = arrived & (tk <= self.clock)
                if record.any():
                    self._record(k, np.nonzero(record)[0])
                    active &= ~record
                measure = arrived & ~(tk <= self.clock)
                if measure.any():
                    self._measure(np.nonzero(measure)[0])
                if not active.any():
                    break
                first = False
        return self._records()

    def _records(self) -> list[dict[str, TrajectoryRecord]]:
        n_init = len(self.inits)
        diags = self.store.diagnostics()
        return [
            {
                init: TrajectoryRecord(
                    times=self.times,
                    populations=self.pops[j * n_init + q],
                    coherence=self.coh[j * n_init + q],
                    events=self.events[j * n_init + q],
                    final_state=None,
                    diagnostics=diags[j * n_init + q],
                )
                for q, init in enumerate(self.inits)
            }
            for j in range(self.n_idx)
        ]


def records_differ(a: dict[str, TrajectoryRecord], b: dict[str, TrajectoryRecord], tol: float = 1e-10) -> list[str]:
    """How two ``{init: record}`` results differ beyond ``tol`` (populations, coherence, events); [] if they agree."""
    if set(a) != set(b):
        return [f"initial states {sorted(a)} != {sorted(b)}"]
    problems = []
    for init in a:
        ra, rb = a[init], b[init]
        dp = float(np.max(np.abs(ra.populations - rb.populations)))
        dc = float(np.max(np.abs(ra.coherence - rb.coherence)))
        if not dp <= tol:
            problems.append(f"{init}: populations differ by {dp:.3g}")
        if not dc <= tol:
            problems.append(f"{init}: coherence differs by {dc:.3g}")
        if len(ra.events) != len(rb.events):
            problems.append(f"{init}: {len(ra.events)} != {len(rb.events)} events")
            continue
        for ea, eb in zip(ra.events, rb.events):
            if (ea.channel, ea.site, ea.outcome) != (eb.channel, eb.site, eb.outcome) or not abs(ea.time - eb.time) <= tol:
                problems.append(f"{init}: event {ea} != {eb}")
                break
    return problems
