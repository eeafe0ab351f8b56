"""The engines: how a trajectory's state is held and evolved.

Each engine (:class:`~lru_mps.engines.protocol.Engine`) turns (spec,
realization) into a *propagator* that makes ordinary states
(:class:`~lru_mps.mcwf.states.TrajectoryState`) from product states:
``exact`` (the 3^L space), ``sector`` (exact fixed-N sectors), ``mps`` (TEBD on
a qutrit MPS), one subpackage each; ``auto`` is the per-trajectory policy
(sector or MPS for each trajectory).  An engine names its *batched store*
(many rows in one set of arrays: :mod:`~lru_mps.engines.exact.batch`,
:mod:`~lru_mps.engines.mps.batch`) with ``batch_store()``; the others run one
state at a time.  What the engines share is in ``common`` (the propagator
rule, the array library, the store base).
"""

from __future__ import annotations

from ..errors import ParameterError
from .auto import SECTOR_AUTO_MAX_DIM, PerTrajectoryEngine
from .exact.engine import ExactEngine
from .mps.engine import MPSEngine
from .protocol import Engine, EngineSettings
from .sector.engine import SectorEngine

#: engine name -> class; "auto" is the per-trajectory policy (sector or MPS for each trajectory)
ENGINES = {"exact": ExactEngine, "sector": SectorEngine, "mps": MPSEngine, "auto": PerTrajectoryEngine}


#: the exact engine is the cheapest up to this length (3^6 = 729 states)
EXACT_AUTO_MAX_LENGTH = 6


def choose_engine(spec) -> tuple[str, str]:
    """The cheapest exact-or-converged engine for ``spec``, with the reason.

    exact for L <= 6; the fixed-N sector engine where no thermal excitations
    can add to the excitation number (T = 0: N <= 2 throughout); at T > 0 on
    longer arrays 'auto', the per-trajectory policy
    (:class:`~lru_mps.engines.auto.PerTrajectoryEngine`): each
    trajectory's thermal sample fixes its largest excitation number N0 (no
    channel raises N), and it runs on the sector engine when that sector has
    at most SECTOR_AUTO_MAX_DIM states, on the MPS engine otherwise.  On a coupling graph (not a chain) never
    MPS: exact up to L = 6, the sector engine beyond.
    """
    if spec.L <= EXACT_AUTO_MAX_LENGTH:
        return "exact", f"L = {spec.L} <= {EXACT_AUTO_MAX_LENGTH}: full 3^L space, exact propagation"
    if not spec.is_chain:  # the MPS engine (and so the per-trajectory policy) holds a chain only
        return "sector", f"geometry {spec.geometry.name}: a graph, exact fixed-N sectors (MPS needs a chain)"
    if spec.conditions.temperature_K == 0.0:
        return "sector", "T = 0: at most 2 excitations, exact fixed-N sectors"
    return "auto", (f"T > 0 on a long array: per trajectory, exact fixed-N sectors where the sampled state's largest "
                    f"sector has <= {SECTOR_AUTO_MAX_DIM:,} states, TEBD on an MPS otherwise")


def get_engine(name: str, **options):
    """The engine called ``name``: exact, sector, mps or auto (per trajectory; options go to its constructor)."""
    if name not in ENGINES:
        raise ParameterError("engine", name, "one of exact, sector, mps or auto")
    try:
        return ENGINES[name](**options)
    except TypeError as err:
        raise ParameterError("engine options", options, f"options accepted by the {name} engine ({err})") from None


def run_engine(settings: EngineSettings):
    """The engine a run's trajectories use: ``get_engine(settings.engine, **settings.engine_options)``, told the run's
    horizon t_final and its time points where it uses them (the sector engine's choice between a block's
    eigendecomposition and Chebyshev, :func:`lru_mps.engines.sector.state.eig_pays`), and the run's array library where it takes one
    besides its batched store (the sector engine's Chebyshev blocks).  ``settings``: the run's
    :class:`~lru_mps.engines.protocol.EngineSettings`."""
    engine = get_engine(settings.engine, **settings.engine_options)
    for_horizon = getattr(engine, "for_horizon", None)
    engine = for_horizon(settings.horizon, len(settings.times)) if for_horizon is not None else engine
    on_backend = getattr(engine, "on_backend", None)
    return on_backend(settings.backend) if on_backend is not None and settings.backend != "numpy" else engine



def batch_store(engine: Engine):
    """The batched store class the engine names (``engine.batch_store()``), or None (it runs one state at a time)."""
    return engine.batch_store()
