"""Run ensembles of trajectories: seeding, disorder per trajectory, accumulation.

Trajectory i (0-based) of a run with ``seed`` draws its disorder realization
from SeedSequence(seed, spawn_key=(i, 0)) and its thermal sample, measurement
clock and events for initial state ``init`` from SeedSequence(seed,
spawn_key=(i, 1, code(init))).  The numbers of a trajectory therefore depend
only on (seed, i, init), never on the order or the process it runs in, and
the three initial states of trajectory i share one disorder realization.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Iterable

import numpy as np
from threadpoolctl import threadpool_limits

from ..engines import choose_engine, get_engine
from ..engines.arraylib import BACKENDS, ArrayLib
from ..batched import batch_supported, run_batch
from ..defaults import MPS, RUN
from ..errors import ParameterError, require
from ..physics.model import INIT_STATES, ArraySpec, Realization, product_state
from .statistics import ObservableAccumulator, MeanSem
from ..trajectory import TrajectoryRecord, check_estimator, run_trajectory
from ..physics.units import to_time

INIT_CODE = {name: k for k, name in enumerate(INIT_STATES)}

#: which initial state each observable is measured on
OBSERVABLE_INIT = {
    "leakage_array": "leakage",
    "leakage_site1": "leakage",
    "qubit_population": "qubit",
    "qubit_coherence": "coherence",
}


def disorder_rng(seed: int, index: int) -> np.random.Generator:
    """The disorder stream of trajectory ``index``."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(index, 0)))


def event_rng(seed: int, index: int, init: str) -> np.random.Generator:
    """The thermal-sample and event stream of trajectory ``index`` for ``init``."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(index, 1, INIT_CODE[init])))


def time_grid(t_final: float, time_points: int) -> np.ndarray:
    """Uniform grid 0..t_final (1/J) with ``time_points`` points."""
    require(math.isfinite(t_final) and t_final > 0, "t_final", t_final, "a finite time > 0 (units of 1/J)")
    require(int(time_points) == time_points and time_points >= 2, "time_points", time_points, "an integer >= 2")
    return np.linspace(0.0, float(t_final), int(time_points))


def resolve_inits(init: str | Iterable[str]) -> tuple[str, ...]:
    """'all' or one name or a list of names -> tuple of initial-state names."""
    if isinstance(init, str):
        init = INIT_STATES if init == "all" else (init,)
    init = tuple(init)
    for name in init:
        require(name in INIT_STATES, "init", name, f"one of {', '.join(INIT_STATES)} or all")
    return init


@dataclass
class RunSettings:
    """How an ensemble is run (everything but the physics)."""

    times: np.ndarray
    trajectories: int = RUN["trajectories"]
    seed: int = RUN["seed"]
    engine: str = "exact"
    estimator: str = "sampled"
    inits: tuple[str, ...] = INIT_STATES
    engine_options: dict = field(default_factory=dict)
    #: advance the trajectories of a block together (exact and MPS engines; same numbers to rounding)
    batched: bool = True
    #: array library of the batched engines: numpy, torch[:cpu|:cuda] or cupy (lru_mps.engines.arraylib)
    backend: str = RUN["backend"]

    def __post_init__(self):
        require(
            int(self.trajectories) == self.trajectories and self.trajectories >= 1,
            "trajectories",
            self.trajectories,
            "an integer >= 1",
        )
        require(int(self.seed) == self.seed and self.seed >= 0, "seed", self.seed, "an integer >= 0")
        self.trajectories = int(self.trajectories)
        self.seed = int(self.seed)
        require(self.backend in BACKENDS, "backend", self.backend, f"one of {', '.join(BACKENDS)}")
        if self.backend != "numpy":
            ArrayLib(self.backend)  # installed, and a GPU where one is named


class TrajectoryRunner:
    """Runs single trajectories of one spec with one engine, reusing propagators."""

    def __init__(self, spec: ArraySpec, settings: RunSettings, realization: Realization | None = None):
        self.spec = spec
        self.settings = settings
        self.engine = get_engine(settings.engine, **settings.engine_options)
        require(
            spec.L <= self.engine.max_length,
            "length",
            spec.L,
            f"L <= {self.engine.max_length} for the {settings.engine} engine",
        )
        self.fixed_realization = realization
        self._fixed_prop = None

    def realization(self, index: int) -> Realization:
        if self.fixed_realization is not None:
            return self.fixed_realization
        return self.spec.draw_realization(disorder_rng(self.settings.seed, index))

    def propagator(self, real: Realization):
        if self.fixed_realization is not None:
            if self._fixed_prop is None:
                self._fixed_prop = self.engine.prepare(self.spec, real)
            return self._fixed_prop
        return self.engine.prepare(self.spec, real)

    def run(self, index: int, inits: Iterable[str] | None = None, keep_final_state: bool = False) -> dict[str, TrajectoryRecord]:
        """Trajectory ``index`` for each initial state: {init: record}."""
        real = self.realization(index)
        prop = self.propagator(real)
        out = {}
        for init in inits or self.settings.inits:
            rng = event_rng(self.settings.seed, index, init)
            levels = self.spec.thermal_levels(real, rng)
            state = prop.state(product_state(init, levels))
            out[init] = run_trajectory(
                state,
                self.spec,
                real,
                self.settings.times,
                rng,
                estimator=self.settings.estimator,
                keep_final_state=keep_final_state,
            )
        return out


#: trajectories are accumulated in this many contiguous blocks (jackknife errors)
MAX_BLOCKS = 16


def block_of(index: int, trajectories: int) -> int:
    """Block of trajectory ``index``: contiguous index ranges, at most MAX_BLOCKS."""
    n_blocks = min(MAX_BLOCKS, trajectories)
    return index * n_blocks // trajectories


@dataclass
class SimulationResult:
    """Ensemble statistics of one run, plus everything needed to reproduce it.

    ``blocks[init][b]`` holds the sums over the trajectories of block b
    (contiguous index ranges, see :func:`block_of`); ``accumulators`` are
    their totals.  Blocks give jackknife errors for derived quantities such
    as fitted decay times, whose time points are correlated.
    """

    spec: ArraySpec
    settings: RunSettings
    blocks: dict[str, list[ObservableAccumulator]]
    #: per-trajectory engine diagnostics {init: {name: array over trajectories}} (MPS: truncation, norm, Trotter)
    diagnostics: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)

    @property
    def accumulators(self) -> dict[str, ObservableAccumulator]:
        out = {}
        for init, blocks in self.blocks.items():
            total = ObservableAccumulator(len(self.times), self.spec.L)
            for b in blocks:
                total.merge(b)
            out[init] = total
        return out

    def leave_one_out(self) -> list["SimulationResult"]:
        """Results with one block left out each (for jackknife errors); [] if fewer than 2 blocks."""
        n_blocks = min(len(b) for b in self.blocks.values())
        if n_blocks < 2:
            return []
        return [
            SimulationResult(self.spec, self.settings, {k: v[:j] + v[j + 1 :] for k, v in self.blocks.items()})
            for j in range(n_blocks)
        ]

    @property
    def times(self) -> np.ndarray:
        return self.settings.times

    @property
    def completed(self) -> int:
        return min(acc.count for acc in self.accumulators.values())

    def observable(self, name: str) -> MeanSem:
        """Mean and standard error of an observable on the time grid."""
        if name in OBSERVABLE_INIT:
            init = OBSERVABLE_INIT[name]
            if init not in self.blocks:
                raise ParameterError("observable", name, f"needs the '{init}' initial state in the run")
            return self.accumulators[init].get(name)
        raise ParameterError("observable", name, f"one of {', '.join(OBSERVABLE_INIT)}")

    def site_resolved(self, init: str, name: str = "site_population") -> MeanSem:
        """Per-site <n_l> ('site_population') or <|2><2|_l> ('site_leakage'), shape (T, L)."""
        return self.accumulators[init].get(name)


#: engine options that only the MPS engine takes (dropped for the exact engines)
MPS_ONLY_OPTIONS = ("dt", "order", "max_bond", "cutoff", "kernel", "track_energy")


@dataclass
class BlockResult:
    """Sums over the trajectories of one block, per initial state, plus engine diagnostics."""

    index: int
    accumulators: dict[str, ObservableAccumulator]
    diagnostics: dict[str, dict[str, np.ndarray]]
    trajectories: int

    def to_arrays(self) -> dict[str, np.ndarray]:
        out = {"index": np.array(self.index), "trajectories": np.array(self.trajectories)}
        for init, acc in self.accumulators.items():
            out.update({f"acc/{init}/{k}": v for k, v in acc.state().items()})
        for init, diag in self.diagnostics.items():
            out.update({f"diag/{init}/{k}": np.asarray(v) for k, v in diag.items()})
        return out

    @classmethod
    def from_arrays(cls, arrays) -> "BlockResult":
        accs: dict[str, dict] = {}
        diags: dict[str, dict] = {}
        for key in arrays:
            if key.startswith("acc/"):
                _, init, name = key.split("/", 2)
                accs.setdefault(init, {})[name] = arrays[key]
            elif key.startswith("diag/"):
                _, init, name = key.split("/", 2)
                diags.setdefault(init, {})[name] = np.asarray(arrays[key])
        return cls(
            int(arrays["index"]),
            {init: ObservableAccumulator.from_state(st) for init, st in accs.items()},
            diags,
            int(arrays["trajectories"]),
        )


def block_range(block: int, trajectories: int) -> range:
    """Trajectory indices of ``block`` (contiguous; see :func:`block_of`)."""
    idx = [i for i in range(trajectories) if block_of(i, trajectories) == block]
    return range(idx[0], idx[-1] + 1)


def n_blocks(trajectories: int) -> int:
    return block_of(trajectories - 1, trajectories) + 1


def run_block(
    spec: ArraySpec,
    settings: RunSettings,
    block: int,
    realization: Realization | None = None,
    on_trajectory: Callable[[], None] | None = None,
) -> BlockResult:
    """Run the trajectories of one block (one BLAS thread)."""
    runner = TrajectoryRunner(spec, settings, realization)
    T = len(settings.times)
    accs = {name: ObservableAccumulator(T, spec.L) for name in settings.inits}
    diagnostics: dict[str, dict[str, list]] = {name: {} for name in settings.inits}
    indices = block_range(block, settings.trajectories)
    # The matrices here are small: one BLAS thread per process is fastest, and
    # several spinning BLAS threads on a loaded machine can be 100x slower.
    with threadpool_limits(limits=1, user_api="blas"):
        if settings.batched and batch_supported(settings):

            records = iter(run_batch(spec, settings, indices, realization, backend=settings.backend))
            run_one = lambda i: next(records)  # noqa: E731  (already computed, in index order)
        else:
            run_one = runner.run
        for i in indices:
            for name, rec in run_one(i).items():
                accs[name].add(rec.populations, rec.coherence)
                for key, value in rec.diagnostics.items():
                    diagnostics[name].setdefault(key, []).append(value)
                if rec.diagnostics:
                    runner.engine.check_diagnostics(rec.diagnostics, f"trajectory {i} ({name})")
            if on_trajectory is not None:
                on_trajectory()
    diag = {name: {k: np.asarray(v) for k, v in d.items()} for name, d in diagnostics.items() if d}
    return BlockResult(block, accs, diag, len(indices))


def make_settings(
    spec: ArraySpec,
    *,
    init=RUN["init"],
    t_final=RUN["t_final"],
    time_points: int = RUN["time_points"],
    trajectories: int = RUN["trajectories"],
    seed: int = RUN["seed"],
    engine: str = RUN["engine"],
    estimator: str = RUN["estimator"],
    engine_options: dict | None = None,
    batched: bool = True,
    backend: str = RUN["backend"],
) -> RunSettings:
    """Validated run settings: 'auto' resolved, MPS options completed from :data:`lru_mps.defaults.MPS`.

    ``t_final`` in 1/J or with a unit ('30us', '1000/J').  Options that only
    the MPS engine takes are dropped for the exact engines.
    """
    if engine == "auto":
        engine, _ = choose_engine(spec)
    options = dict(engine_options or {})
    if engine == "mps":
        options = {**MPS, **{k: v for k, v in options.items() if v is not None}}
    else:
        options = {k: v for k, v in options.items() if k not in MPS_ONLY_OPTIONS}
    return RunSettings(
        times=time_grid(to_time(t_final, "t_final", spec.J_hz), time_points),
        trajectories=trajectories,
        seed=seed,
        engine=engine,
        estimator=check_estimator(spec, estimator),
        inits=resolve_inits(init),
        engine_options=options,
        batched=batched,
        backend=backend,
    )


def assemble(spec: ArraySpec, settings: RunSettings, blocks: list[BlockResult]) -> SimulationResult:
    """Merge block results (in block order) into a SimulationResult."""
    blocks = sorted(blocks, key=lambda b: b.index)
    per_init = {name: [b.accumulators[name] for b in blocks] for name in settings.inits}
    diag: dict[str, dict[str, np.ndarray]] = {}
    for b in blocks:
        for name, d in b.diagnostics.items():
            for key, values in d.items():
                prev = diag.setdefault(name, {}).get(key)
                diag[name][key] = np.asarray(values) if prev is None else np.concatenate([prev, values])
    return SimulationResult(spec, settings, per_init, diag)


def simulate(
    spec: ArraySpec,
    *,
    init: str | Iterable[str] = RUN["init"],
    t_final=RUN["t_final"],
    time_points: int = RUN["time_points"],
    trajectories: int = RUN["trajectories"],
    seed: int = RUN["seed"],
    engine: str = RUN["engine"],
    estimator: str = RUN["estimator"],
    realization: Realization | None = None,
    engine_options: dict | None = None,
    progress: Callable[[int, int], None] | None = None,
    workers: int = 1,
    store=None,
    client=None,
    batched: bool = True,
    backend: str = RUN["backend"],
) -> SimulationResult:
    """Run one ensemble: ``trajectories`` trajectories, each with its own disorder.

    Defaults: :data:`lru_mps.defaults.RUN` (the same as ``lru-mps simulate``).
    Times in 1/J, or with a unit (``t_final='30us'``).  ``realization`` fixes the disorder for every trajectory
    (used for checks against the density-matrix reference).  ``estimator``
    is 'sampled', 'branch' (removal-free branch, exact in ideal conditions)
    or 'auto' (branch where exact).  ``engine`` is exact, sector, mps or
    auto (:func:`lru_mps.engines.choose_engine`); ``engine_options`` go to
    the engine (MPS: dt, order, max_bond, cutoff, kernel; unset ones from
    :data:`lru_mps.defaults.MPS`).

    The trajectories run in up to 16 contiguous blocks; ``workers`` > 1 runs
    blocks in a process pool.  With ``store`` (a :class:`lru_mps.run.cache.RunStore`
    or a folder), every finished block is saved atomically and a repeated
    call skips the saved ones, so an interrupted run resumes and ends with
    exactly the numbers of an uninterrupted one.  ``client`` (a
    dask.distributed Client or a scheduler address) runs the blocks on a Dask
    cluster instead.  With ``batched`` (default) the exact and MPS engines advance
    the trajectories of a block together (:mod:`lru_mps.batched`; the same
    numbers per trajectory to rounding: ~1e-13 exact, ~1e-10 MPS), with the
    array library ``backend`` ('numpy'; 'torch' or 'cupy' put the bulk array
    work on a GPU).  ``progress(done, total)`` is called as trajectories finish.
    """
    from .executors import run_blocks

    settings = make_settings(
        spec,
        init=init,
        t_final=t_final,
        time_points=time_points,
        trajectories=trajectories,
        seed=seed,
        engine=engine,
        estimator=estimator,
        engine_options=engine_options,
        batched=batched,
        backend=backend,
    )
    blocks = run_blocks(spec, settings, realization=realization, workers=workers, store=store, progress=progress,
                        client=client)
    return assemble(spec, settings, blocks)
