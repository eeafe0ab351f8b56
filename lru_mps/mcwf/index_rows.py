"""The rows of one trajectory index through the algorithm, on the states an engine gives them.

Two forms of a row (docs/physics.md §6.4, §6.5): a plain :class:`~lru_mps.mcwf.trajectory_rows.Row`
runs through the loop (:func:`~lru_mps.mcwf.loop.run_rows`), the rows that
share an engine in one store and a row whose state may change its engine
(a hand-over) in a store of its own; a decay-integrated
:class:`~lru_mps.mcwf.integrated_decay.IntegratedRow` runs on the engine's
decay-free propagator (:func:`~lru_mps.mcwf.integrated_decay.run_integrated_batch`).
What holds each row comes from the engine (``rows_of``, an
:class:`lru_mps.engines.row_states.IndexRows`); which rows there are comes from
the run (:mod:`lru_mps.run.trajectories`).
"""

from __future__ import annotations

from typing import Sequence

from ..physics.model import ArraySpec
from .integrated_decay import IntegratedRow, run_integrated_batch
from .loop import run_rows
from .records import TrajectoryRecord
from .states import StateList


def run_integrated_rows(rows_of, spec: ArraySpec, times, products: Sequence, rows: Sequence,
                        qs: Sequence[int] | None = None) -> dict[int, TrajectoryRecord]:
    """The decay-integrated rows of an index (positions ``qs``, default every IntegratedRow): {position: record}."""
    qs = [q for q, r in enumerate(rows) if isinstance(r, IntegratedRow)] if qs is None else qs
    return {q: rec for (_, q), rec in run_integrated_indices(spec, times, [(rows_of, products, rows, qs)]).items()}


def run_integrated_indices(spec: ArraySpec, times, indices: Sequence) -> dict[tuple[int, int], TrajectoryRecord]:
    """The decay-integrated rows of several indices, run together (:func:`run_integrated_batch`): ``indices`` a
    list of (rows_of, products, rows, positions); returns {(list position, row position): record}."""
    keys, items = [], []
    for n, (rows_of, products, rows, qs) in enumerate(indices):
        for q in qs:
            keys.append((n, q))
            items.append((rows_of.free_propagator(q), products[q], rows[q]))
    out = {}
    for (n, q), rec in zip(keys, run_integrated_batch(spec, times, items)):
        rec.diagnostics = indices[n][0].diagnostics(q, rec.diagnostics)
        out[(n, q)] = rec
    return out


def run_index(rows_of, spec: ArraySpec, times, products: Sequence, rows: Sequence, estimator: str,
              keep_states: bool = False) -> list[TrajectoryRecord]:
    """Every row of one index (one per initial state, in order) on the states ``rows_of`` gives: the records, in
    the rows' order, each with its diagnostics as the engine reports them."""
    records: list = [None] * len(rows)
    names = [rows_of.engine_of(q) for q in range(len(rows))]
    for name in dict.fromkeys(names):  # each engine's rows together
        mine = [q for q in range(len(rows)) if names[q] == name]
        for q, rec in run_integrated_rows(rows_of, spec, times, products, rows,
                                          [q for q in mine if isinstance(rows[q], IntegratedRow)]).items():
            records[q] = rec
        qs = [q for q in mine if not isinstance(rows[q], IntegratedRow)]
        if not qs:
            continue
        made = {q: rows_of.state(q, products[q]) for q in qs}
        together = [q for q in qs if not made[q].alone]
        groups = ([together] if together else []) + [[q] for q in qs if made[q].alone]
        for group in groups:
            store = StateList([made[q].state for q in group], spec)
            for q, rec in zip(group, run_rows(store, spec, times, [rows[q] for q in group], estimator, keep_states)):
                rec.diagnostics = rows_of.diagnostics(q, rec.diagnostics)
                records[q] = rec
    return records
