"""One ensemble of trajectories: :func:`simulate`, the Python API behind ``lru-mps simulate``."""

from __future__ import annotations

import warnings
from typing import Callable

from ..errors import require
from ..physics.model import ArraySpec, Realization
from .executors import run_blocks
from .result import SimulationResult, assemble
from .settings import RunSettings, make_settings, options_table, with_options


def simulate(
    spec: ArraySpec,
    settings: RunSettings | None = None,
    *,
    realization: Realization | None = None,
    progress: Callable[[int, int], None] | None = None,
    workers: int = 1,
    cache=None,
    client=None,
    store=None,
    **options,
) -> SimulationResult:
    """Run one ensemble: ``trajectories`` trajectories, each with its own disorder realization.

    How it runs is ``settings`` (:func:`~lru_mps.run.settings.make_settings`)
    or the run options as keywords (:data:`~lru_mps.run.settings.RUN_OPTIONS`:
    init, t_final, time_points, engine, estimator, engine_options and the
    plain options below); with both, the keywords replace those of
    ``settings``.  Defaults: :data:`lru_mps.defaults.RUN` (the same as
    ``lru-mps simulate``).  Times in 1/J, or with a unit
    (``t_final='30us'``).  ``realization`` fixes the disorder for every
    trajectory (checks against the density-matrix reference).  ``estimator``
    is 'sampled', 'branch' (removal-free branch, exact in ideal conditions)
    or 'auto' (branch where exact; sampled where Tphi differs between sites,
    a device file's: the branch's dephasing clock runs at the initial state's
    rate on site 1, and where another site dephases much faster its weights
    are heavy-tailed, docs/physics.md §3.2).  ``engine`` is exact, sector,
    mps or auto (:func:`lru_mps.engines.choose_engine`); ``engine_options``
    go to the engine (MPS: dt, order, max_bond, cutoff, kernel; unset ones
    from :data:`lru_mps.defaults.MPS`).

    The trajectories run in up to 16 contiguous blocks; ``workers`` > 1 runs
    blocks in a process pool.  With ``cache`` (a
    :class:`lru_mps.run.cache.BlockCache` or its folder) every finished
    block is saved atomically and a repeated call skips the saved ones, so
    an interrupted run resumes and ends with exactly the numbers of an
    uninterrupted one (``store``: its former name, still taken).
    ``client`` (a dask.distributed Client or a scheduler address) runs the
    blocks on a Dask cluster instead.  ``progress(done, total)`` is called
    as trajectories finish.

    The plain run options (declared once, on :class:`~lru_mps.run.settings.RunSettings`):

    {options}
    """
    if store is not None:
        require(cache is None, "store", store, "not given with cache (store is cache's former name)")
        warnings.warn("simulate(store=...) is now simulate(cache=...): the folder of finished blocks",
                      DeprecationWarning, stacklevel=2)
        cache = store
    if settings is None:
        settings = make_settings(spec, **options)
    elif options:
        settings = with_options(spec, settings, **options)
    blocks = run_blocks(spec, settings, realization=realization, workers=workers, cache=cache, progress=progress,
                        client=client)
    return assemble(spec, settings, blocks)


simulate.__doc__ = simulate.__doc__.replace("{options}", options_table().replace("\n", "\n    "))
