"""Trajectories of a run: draw each one's disorder, thermal sample and streams, and run them through the loop.

:func:`run_trajectories` is the one entry point: it draws the rows of the
given trajectory indices (:mod:`lru_mps.run.seeding`, in the order the
algorithm fixes) and runs them: batched, the plain rows of a chunk of
indices in the engine's batched store (:func:`lru_mps.mcwf.loop.run_rows`);
unbatched, index by index on the states the engine gives each row
(:mod:`lru_mps.engines.row_states`, :func:`lru_mps.mcwf.index_rows.run_index`).
Decay-integrated rows run on the engine's decay-free propagator either way.
The sector engine's batch holds the indices whose sectors are all small
(``largest_number`` of its store); the others run one at a time.  Batched
or not, trajectory i gives the same numbers (to rounding for the batched
exact, sector and MPS stores: tested).

Which engine holds a row is the engine's answer: with the per-trajectory
policy (``engine = "auto"`` at T > 0 on long arrays,
:class:`~lru_mps.engines.auto.PerTrajectoryEngine`) each row goes to the
sector or the MPS engine by its own sampled initial state, i.e. by its seed,
and every record carries the choice in its diagnostics (``engine_mps``,
counted by :func:`engine_mix`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

import numpy as np

from ..engines import batch_store, run_engine
from ..engines.row_states import row_preparer
from ..errors import require
from ..mcwf.index_rows import run_index, run_integrated_indices
from ..mcwf.integrated_decay import IntegratedRow, integrable_number, without_decay
from ..mcwf.kernels import branch_clock, guided_init
from ..mcwf.loop import run_rows
from ..mcwf.trajectory_rows import Row, start_row
from ..mcwf.records import TrajectoryRecord
from ..physics.initial_states import product_state
from ..physics.model import ArraySpec, Realization
from ..physics.rules import integrated_decay_rate
from .seeding import disorder_rng, event_rng
from .thermal_sample import excess_mass, thermal_cap, thermal_start_row

#: trajectory indices advanced together by a batched store (rows = indices x initial states)
DEFAULT_BATCH = 256


@dataclass
class Draw:
    """One trajectory index: its realization and, per initial state, the product state and the row."""

    index: int
    realization: Realization
    products: list  # per initial state: the site vectors
    rows: list  # per initial state: a Row, or an IntegratedRow (hardware decay integrated out)
    #: the largest excitation number in the products' support
    nmax: int
    #: per initial state: the largest excitation number of its product state
    nmax_per_init: list[int] | None = None
    #: per initial state: (stratum, its probability given the realization) of a stratified thermal start, else None
    strata: list | None = None
    #: per initial state: the Gibbs mass of the thermal starts the engine cannot hold, left out of the sample
    #: (:func:`~lru_mps.run.thermal_sample.thermal_cap`), or None where every start fits
    dropped: list | None = None


def draw(spec: ArraySpec, settings, index: int, realization: Realization | None = None) -> Draw:
    """Trajectory ``index``'s draws, in the fixed order: disorder, then per initial state thermal levels, clock, threshold."""
    real = realization if realization is not None else spec.draw_realization(disorder_rng(settings.seed, index))
    wq = spec.qubit_frequency(real)
    integrate = getattr(settings, "integrate_decay", False) and integrated_decay_rate(spec) is not None
    products, rows, per_init, strata, dropped = [], [], [], [], []
    for init in settings.inits:
        rng = event_rng(settings.seed, index, init)
        levels, weight, stratum, prob = thermal_start_row(spec, real, init, rng, settings, index)
        strata.append(None if stratum is None else (stratum, prob))
        cap = thermal_cap(spec, settings, init)
        dropped.append(None if cap is None else excess_mass(spec.thermal_probabilities(real)[1:], cap))
        sites = [np.asarray(v, dtype=complex) for v in product_state(init, levels)]
        per_init.append(sum(int(np.nonzero(v)[0].max()) for v in sites))
        products.append(sites)
        clock_rate, guided = branch_clock(spec, init, levels), guided_init(spec, init, levels)
        sampled = settings.estimator != "branch" or (clock_rate is None and guided is None)
        number = integrable_number(spec, sites) if integrate and sampled else None
        if number is not None:  # a sampled row with N sharp in a small sector: its hardware decay integrated out
            rows.append(IntegratedRow(rng, wq, weight, number))
        else:
            rows.append(start_row(spec, rng, settings.estimator, wq, clock_rate, weight, guided))
    return Draw(index, real, products, rows, max(per_init), per_init, strata,
                dropped if any(d is not None for d in dropped) else None)


def run_trajectories(
    spec: ArraySpec,
    settings,
    indices: Iterable[int],
    realization: Realization | None = None,
    *,
    batched: bool | None = None,
    batch_size: int | None = None,
    backend: str | None = None,
    keep_states: bool = False,
    on_index: Callable[[int], None] | None = None,
) -> list[dict[str, TrajectoryRecord]]:
    """Trajectories ``indices`` of a run: one ``{init: record}`` per index, in order.

    ``realization`` fixes the disorder of every trajectory (checks against the
    density-matrix reference).  ``batched`` (default: ``settings.batched``
    where the engine has a batched store) advances up to ``batch_size``
    indices (default :data:`DEFAULT_BATCH`) together on ``backend`` ('numpy',
    'torch', 'cupy'; default ``settings.backend``); unbatched, each index runs
    on the engine's ordinary states.  ``keep_states`` puts each trajectory's
    final state into its record.  ``on_index(n)`` is called as n more indices
    finish.  Call with one BLAS thread (``threadpoolctl``), as run_block does.
    """
    engine = run_engine(settings.for_engines())
    require(spec.L <= engine.max_length, "length", spec.L, f"L <= {engine.max_length} for the {settings.engine} engine",
            "use --engine mps or sector for long arrays" if settings.engine == "exact" else None)
    store_cls = batch_store(engine)
    if batched is None:
        batched = settings.batched and store_cls is not None
    elif batched:
        require(store_cls is not None, "engine", settings.engine,
                "an engine with a batched store (exact; sector; mps with the lean kernel)",
                "the quimb kernel runs unbatched")
    batch_size = DEFAULT_BATCH if batch_size is None else batch_size
    require(int(batch_size) == batch_size and batch_size >= 1, "batch_size", batch_size, "an integer >= 1")
    draws = [draw(spec, settings, int(i), realization) for i in indices]
    out: list = [None] * len(draws)
    integrated = any(isinstance(r, IntegratedRow) for d in draws for r in d.rows)
    preparer = row_preparer(engine, spec, without_decay(spec) if integrated else None, realization)
    alone = list(range(len(draws)))  # positions that run one index at a time
    if batched:
        limit = store_cls.largest_number(spec)  # (the sector batch: rows whose sectors are all small)
        fits = [limit is None or d.nmax <= limit for d in draws]
        held, alone = [j for j in alone if fits[j]], [j for j in alone if not fits[j]]
        if store_cls.by_number:  # the store holds the N-blocks 0..N_max: group by N_max
            chunks = [[held[i] for i in c] for c in _chunks([draws[j].nmax for j in held], int(batch_size))]
        else:
            chunks = [held[s:s + int(batch_size)] for s in range(0, len(held), int(batch_size))]
        for chunk in chunks:
            part = [draws[j] for j in chunk]
            store = _batch_store(store_cls, spec, settings, part, realization is not None,
                                 backend or settings.backend)
            recs = _run_batch(part, settings, store, spec, keep_states)
            if integrated:  # the chunk's decay-integrated rows, together (their placeholders' records replaced)
                per_index = [(preparer.for_index(d.realization, d.nmax_per_init), d.products, d.rows,
                              [q for q, r in enumerate(d.rows) if isinstance(r, IntegratedRow)]) for d in part]
                for (n, q), r in run_integrated_indices(spec, settings.times, per_index).items():
                    recs[n][settings.inits[q]] = r
            for j, rec in zip(chunk, recs):
                out[j] = rec
            if on_index is not None:
                on_index(len(chunk))
    for j in alone:  # one index at a time, each row on the state its engine gives it
        d = draws[j]
        rows_of = preparer.for_index(d.realization, d.nmax_per_init)
        recs = run_index(rows_of, spec, settings.times, d.products, d.rows, settings.estimator, keep_states)
        out[j] = dict(zip(settings.inits, recs))
        if on_index is not None:
            on_index(1)
    return _tag(out, draws, settings)


def _tag(out: list, draws: Sequence[Draw], settings) -> list:
    """Each record's thermal stratum (``record.stratum``: (stratum, probability) or None) from its draw, and where
    the engine cannot hold every thermal start the Gibbs mass left out (diagnostics ``thermal_mass_dropped``)."""
    for rec, d in zip(out, draws):
        for q, init in enumerate(settings.inits):
            rec[init].stratum = d.strata[q] if d.strata else None
            if d.dropped is not None and d.dropped[q] is not None:
                rec[init].diagnostics["thermal_mass_dropped"] = d.dropped[q]
    return out


def engine_mix(diagnostics: dict) -> dict[str, int]:
    """Trajectories per engine of a per-trajectory run, from a result's diagnostics ({init: {key: values}}).

    {} when the run had no per-trajectory choice (one engine for every trajectory).
    """
    flags = [np.asarray(d["engine_mps"]) for d in diagnostics.values() if "engine_mps" in d]
    if not flags:
        return {}
    n_mps = int(sum(int(np.count_nonzero(f)) for f in flags))
    return {"sector": int(sum(f.size for f in flags)) - n_mps, "mps": n_mps}


def format_mix(mix: dict[str, int]) -> str:
    """'sector 1,482 / mps 18' for trajectories per engine."""
    return " / ".join(f"{k} {v:,}" for k, v in mix.items())


def format_engine_mix(diagnostics: dict) -> str:
    """'sector 1,482 / mps 18 trajectories' for a per-trajectory run, '' otherwise."""
    mix = engine_mix(diagnostics)
    return format_mix(mix) + " trajectories" if mix else ""


def _batch_store(store_cls, spec, settings, part: Sequence[Draw], fixed: bool, backend: str):
    """The engine's batched store of a chunk's rows, ordered (index, initial state)."""
    n_init = len(settings.inits)
    reals = [part[0].realization] if fixed else [d.realization for d in part]
    per_realization = len(part) * n_init if fixed else n_init
    products = [p for d in part for p in d.products]
    nmax = np.repeat([d.nmax for d in part], n_init)
    return store_cls.for_backend(backend)(spec, settings.for_engines(), reals, per_realization, products, nmax, backend)


def _run_batch(part: Sequence[Draw], settings, store, spec, keep_states) -> list[dict[str, TrajectoryRecord]]:
    """The rows of a batched store; a decay-integrated row holds its place with a placeholder of weight 0 (its
    record is then replaced by :func:`~lru_mps.mcwf.index_rows.run_integrated_indices`)."""
    rows = [row if isinstance(row, Row) else _placeholder(spec, settings, row) for d in part for row in d.rows]
    records = run_rows(store, spec, settings.times, rows, settings.estimator, keep_states)
    n_init = len(settings.inits)
    return [{init: records[j * n_init + q] for q, init in enumerate(settings.inits)} for j in range(len(part))]


def _placeholder(spec, settings, row: IntegratedRow) -> Row:
    """A row of weight 0 from a stream of its own (the integrated row's stream does not move)."""
    return start_row(spec, np.random.default_rng(0), settings.estimator, row.qubit_frequency, None, 0.0)


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
