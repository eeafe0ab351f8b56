"""One ensemble of trajectories: :func:`simulate`, the Python API behind ``lru-mps simulate``."""

from __future__ import annotations

from typing import Callable

from ..physics.model import ArraySpec, Realization
from .executors import run_blocks
from .result import SimulationResult, assemble
from .settings import RunSettings, make_settings, with_options


def simulate(
    spec: ArraySpec,
    settings: RunSettings | None = None,
    *,
    realization: Realization | None = None,
    progress: Callable[[int, int], None] | None = None,
    workers: int = 1,
    store=None,
    client=None,
    **options,
) -> SimulationResult:
    """Run one ensemble: ``trajectories`` trajectories, each with its own disorder realization.

    How it runs is ``settings`` (:func:`~lru_mps.run.settings.make_settings`)
    or the run options as keywords (:data:`~lru_mps.run.settings.RUN_OPTIONS`:
    init, t_final, time_points, trajectories, seed, engine, estimator,
    engine_options, batched, backend, feedback, hot_tail,
    leakage_thermal_odds, integrate_decay, thermal_strata); with both, the
    keywords replace those of ``settings``.  Defaults:
    :data:`lru_mps.defaults.RUN` (the same as ``lru-mps simulate``).
    Times in 1/J, or with a unit (``t_final='30us'``).  ``realization`` fixes
    the disorder for every trajectory (checks against the density-matrix
    reference).  ``estimator`` is 'sampled', 'branch' (removal-free branch,
    exact in ideal conditions) or 'auto' (branch where exact; sampled where
    Tphi differs between sites, a device file's: the branch's dephasing clock
    runs at the initial state's rate on site 1, and where another site
    dephases much faster its weights are heavy-tailed, docs/physics.md §3.2).  ``engine`` is
    exact, sector, mps or auto (:func:`lru_mps.engines.choose_engine`);
    ``engine_options`` go to the engine (MPS: dt, order, max_bond, cutoff,
    kernel; unset ones from :data:`lru_mps.defaults.MPS`).

    The trajectories run in up to 16 contiguous blocks; ``workers`` > 1 runs
    blocks in a process pool.  With ``store`` (a
    :class:`lru_mps.run.cache.BlockCache` or a folder) every finished block is
    saved atomically and a repeated call skips the saved ones, so an
    interrupted run resumes and ends with exactly the numbers of an
    uninterrupted one.  ``client`` (a dask.distributed Client or a scheduler
    address) runs the blocks on a Dask cluster instead.  With ``batched``
    (default) the exact and MPS engines advance the trajectories of a block
    together (the same numbers per trajectory to rounding), with the array
    library ``backend`` ('numpy'; 'torch' or 'cupy' put the bulk array work on
    a GPU).  ``feedback`` is 'fast' (feedback measurements in trains where
    the store offers them, :mod:`lru_mps.mcwf.trains`) or 'reference' (one
    loop stop per measurement, the path the trains are tested against).
    ``hot_tail`` f > 1 thins the thermal sample's hot tail (rows with at
    least :data:`~lru_mps.defaults.HOT_TAIL_FROM` thermal excitations, the
    costly ones) by Russian roulette: such a row runs with probability 1/f
    and weight f, else contributes 0 (unbiased;
    :func:`lru_mps.run.thermal_sample.thin_hot_tail`).
    ``leakage_thermal_odds`` r > 1 draws the leakage start's rows with a
    thermally excited array at r times their natural odds, with weights
    that keep every mean exact; 1 (default) draws the natural Gibbs sample
    (:func:`lru_mps.run.thermal_sample.stratified_levels`).
    ``integrate_decay`` makes every sampled row whose excitation number is
    sharp (leakage and qubit starts) carry the survival of its hardware decay
    clock as a weight instead of sampling when its decays come: the same
    ensemble, less variance (:mod:`lru_mps.mcwf.integrated_decay`; exact where
    every site decays at one rate and the readout is ideal, else the rows are
    sampled as without it).
    ``thermal_strata`` draws the thermal start by strata, the configurations
    of sites 2..L with a fixed allocation (every one above a stated weight
    is drawn by construction), and combines the strata in the statistics
    (:class:`lru_mps.run.thermal_sample.ThermalStrata`; L = 3..7).
    ``progress(done, total)`` is called as trajectories finish.
    """
    if settings is None:
        settings = make_settings(spec, **options)
    elif options:
        settings = with_options(spec, settings, **options)
    blocks = run_blocks(spec, settings, realization=realization, workers=workers, store=store, progress=progress,
                        client=client)
    return assemble(spec, settings, blocks)
