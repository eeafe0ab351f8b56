"""What the rows of one trajectory index need from an engine: each row's engine, its state, its decay-free propagator.

The trajectory algorithm (:mod:`lru_mps.mcwf.index_rows`) runs the rows of a
trajectory index (one per initial state) on what an engine gives it here,
and :mod:`lru_mps.run.trajectories` only draws the rows and stores the
records.  For one index, :class:`IndexRows` says

* which engine holds row q (``engine_of``): the plain engines hold every
  row; the per-trajectory policy (``auto``, :mod:`lru_mps.engines.auto`)
  names the sector or the MPS engine by the row's initial sector;
* its state (``state``, a :class:`RowState`): the engine's ordinary state of
  the row's product state, and whether it runs in a store of its own (a
  sector row that may be handed over to MPS changes its time step);
* the decay-free propagator a decay-integrated row runs on
  (``free_propagator``, :mod:`lru_mps.mcwf.integrated_decay`);
* the row's diagnostics as the engine reports them (``diagnostics``).

Propagators are built once per index, and once per run for a fixed
realization (a check against the density-matrix reference).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class RowState:
    """A row's state and whether it runs in a store of its own."""

    state: object
    alone: bool = False


class RowPreparer:
    """The rows of one run on a plain engine (exact, sector, mps).

    ``free_spec``: the decay-free model of the decay-integrated rows (None:
    the run has none); ``fixed``: a realization every index shares (its
    propagators are kept across indices).
    """

    def __init__(self, engine, spec, free_spec=None, fixed=None):
        self.engine, self.spec, self.free_spec, self.fixed = engine, spec, free_spec, fixed
        self._kept: dict = {}

    def for_index(self, real, nmax_per_init) -> "IndexRows":
        """The rows of one index whose realization is ``real`` (``nmax_per_init``: each row's largest N)."""
        return IndexRows(self, self.fixed if self.fixed is not None else real, nmax_per_init)

    def propagator(self, cache: dict, key: str, engine, spec, real):
        """``engine``'s propagator of ``spec`` and ``real``, from ``cache`` (an index's), or the run's for a fixed
        realization."""
        store = self._kept if self.fixed is not None else cache
        if key not in store:
            store[key] = engine.prepare(spec, real)
        return store[key]


class IndexRows:
    """The rows of one trajectory index on a plain engine (module docstring)."""

    def __init__(self, preparer: RowPreparer, real, nmax_per_init):
        self.preparer, self.real, self.nmax = preparer, real, list(nmax_per_init)
        self._cache: dict = {}

    def engine_of(self, q: int) -> str:
        return self.preparer.engine.name

    def state(self, q: int, product) -> RowState:
        p = self.preparer
        return RowState(p.propagator(self._cache, "model", p.engine, p.spec, self.real).state(product))

    def free_propagator(self, q: int):
        p = self.preparer
        return p.propagator(self._cache, "free", p.engine, p.free_spec, self.real)

    def diagnostics(self, q: int, diag: dict) -> dict:
        return diag


def row_preparer(engine, spec, free_spec=None, fixed=None):
    """The row preparer of ``engine`` (the per-trajectory policy's own, or the plain engines' :class:`RowPreparer`)."""
    make = getattr(engine, "row_preparer", None)
    return make(spec, free_spec, fixed) if make is not None else RowPreparer(engine, spec, free_spec, fixed)
