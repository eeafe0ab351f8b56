"""How an ensemble is run: the time grid, trajectories, seed, engine, estimator (everything but the physics)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, Mapping

import numpy as np

from ..defaults import MPS, RUN
from ..engines import batch_store, choose_engine, get_engine
from ..engines.common.arraylib import BACKENDS, ArrayLib
from ..engines.exact.feedback import FEEDBACK_PATHS
from ..errors import require
from ..physics.model import INIT_STATES, ArraySpec
from ..physics.rules import resolve_estimator
from ..physics.units import to_time

#: the MPS options a user sets: `lru-mps simulate`'s and a study's --dt, --order, --max-bond, --cutoff (a study's
#: TOML keys); unset ones come from lru_mps.defaults.MPS
MPS_USER_OPTIONS = ("dt", "order", "max_bond", "cutoff")
#: engine options that only the MPS engine takes (dropped for the exact engines)
MPS_ONLY_OPTIONS = MPS_USER_OPTIONS + ("kernel", "track_energy")


def mps_options(given: Mapping, J_hz: float) -> dict:
    """The MPS options set in ``given`` (a missing or None one is not set), ``dt`` with its unit parsed (1/J,
    or e.g. '2ns', '0.005/J', at the hopping ``J_hz``).  The engine takes the others from
    :data:`lru_mps.defaults.MPS` and checks every range (:class:`~lru_mps.engines.mps.state.MPSOptions`)."""
    out = {k: given[k] for k in MPS_USER_OPTIONS if given.get(k) is not None}
    if "dt" in out:
        out["dt"] = to_time(out["dt"], "dt", J_hz)
    return out


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
    """How an ensemble is run (everything but the physics); build it with :func:`make_settings`."""

    times: np.ndarray
    trajectories: int = RUN["trajectories"]
    seed: int = RUN["seed"]
    engine: str = "exact"
    estimator: str = "sampled"
    inits: tuple[str, ...] = INIT_STATES
    engine_options: dict = field(default_factory=dict)
    #: advance the trajectories of a block together where the engine has a batched store (same numbers to rounding)
    batched: bool = True
    #: array library of the batched engines: numpy, torch[:cpu|:cuda] or cupy (lru_mps.engines.common.arraylib)
    backend: str = RUN["backend"]
    #: feedback measurements: "fast" (the store's feedback trains where it offers them, lru_mps.mcwf.trains) or
    #: "reference" (one stop of the trajectory loop per measurement: the path the fast one is tested against)
    feedback: str = FEEDBACK_PATHS[0]
    #: thinning factor of the thermal sample's hot tail (1 = off; lru_mps.run.thermal_sample.thin_hot_tail)
    hot_tail: float = RUN["hot_tail"]
    #: odds factor of the leakage start's rows with a thermally excited array (1 = natural;
    #: lru_mps.run.thermal_sample.stratified_levels)
    leakage_thermal_odds: float = RUN["leakage_thermal_odds"]
    #: sampled rows with a sharp excitation number integrate their hardware decay out (lru_mps.mcwf.integrated_decay)
    integrate_decay: bool = RUN["integrate_decay"]
    #: the thermal start drawn by strata with a fixed allocation (lru_mps.run.thermal_sample.ThermalStrata)
    thermal_strata: bool = RUN["thermal_strata"]

    def __post_init__(self):
        require(int(self.trajectories) == self.trajectories and self.trajectories >= 1, "trajectories",
                self.trajectories, "an integer >= 1")
        require(int(self.seed) == self.seed and self.seed >= 0, "seed", self.seed, "an integer >= 0")
        self.trajectories = int(self.trajectories)
        self.seed = int(self.seed)
        require(self.backend in BACKENDS, "backend", self.backend, f"one of {', '.join(BACKENDS)}")
        require(self.feedback in FEEDBACK_PATHS, "feedback", self.feedback, f"one of {', '.join(FEEDBACK_PATHS)}")
        require(isinstance(self.hot_tail, (int, float)) and 1.0 <= float(self.hot_tail) < math.inf, "hot_tail",
                self.hot_tail, "a number >= 1 (1: every thermal sample runs)")
        self.hot_tail = float(self.hot_tail)
        odds = self.leakage_thermal_odds
        require(isinstance(odds, (int, float)) and 0.0 < float(odds) < math.inf, "leakage_thermal_odds", odds,
                "a number > 0 (1: the natural thermal sample; 8: excited arrays at 8x their natural odds)")
        self.leakage_thermal_odds = float(odds)
        require(isinstance(self.integrate_decay, (bool, np.bool_)), "integrate_decay", self.integrate_decay,
                "true or false")
        self.integrate_decay = bool(self.integrate_decay)
        require(isinstance(self.thermal_strata, (bool, np.bool_)), "thermal_strata", self.thermal_strata,
                "true or false")
        self.thermal_strata = bool(self.thermal_strata)
        if self.backend != "numpy":
            ArrayLib(self.backend)  # installed, and a GPU where one is named


#: the options of a run as a user sets them (``simulate``'s keywords, ``lru-mps simulate``'s options), with their
#: defaults: the one list :func:`make_settings` and :func:`~lru_mps.run.simulate.simulate` take
RUN_OPTIONS = {
    "init": RUN["init"],  # 'all', one initial state or a list of them
    "t_final": RUN["t_final"],  # 1/J, or with a unit ('30us', '1000/J')
    "time_points": RUN["time_points"],
    "trajectories": RUN["trajectories"],
    "seed": RUN["seed"],
    "engine": RUN["engine"],  # exact, sector, mps or auto
    "estimator": RUN["estimator"],  # sampled, branch or auto
    "engine_options": None,  # MPS: dt, order, max_bond, cutoff, kernel (unset ones from lru_mps.defaults.MPS)
    "batched": True,
    "backend": RUN["backend"],
    "feedback": FEEDBACK_PATHS[0],
    "hot_tail": RUN["hot_tail"],
    "leakage_thermal_odds": RUN["leakage_thermal_odds"],
    "integrate_decay": RUN["integrate_decay"],
    "thermal_strata": RUN["thermal_strata"],
}


def make_settings(spec: ArraySpec, **options) -> RunSettings:
    """Validated run settings from the options of :data:`RUN_OPTIONS` (the others at their defaults): 'auto'
    resolved, MPS options completed from :data:`lru_mps.defaults.MPS`.

    ``t_final`` in 1/J or with a unit ('30us', '1000/J').  Options that only
    the MPS engine takes are dropped for the exact engines.
    """
    unknown = sorted(set(options) - set(RUN_OPTIONS))
    require(not unknown, unknown[0] if unknown else "", options.get(unknown[0]) if unknown else None,
            f"an option of a run: {', '.join(RUN_OPTIONS)}")
    o = {**RUN_OPTIONS, **options}
    engine, engine_options = o["engine"], o["engine_options"]
    if engine == "auto":
        engine, _ = choose_engine(spec)
    require(spec.is_chain or engine in ("exact", "sector"), "engine", engine, "exact or sector on a graph geometry "
            f"({spec.geometry.name if spec.geometry is not None else ''}: the MPS engine and the per-trajectory "
            "policy, which may hand rows to it, need a chain)")
    options = dict(engine_options or {})
    if engine == "mps":
        options = {**MPS, **{k: v for k, v in options.items() if v is not None}}
    else:
        options = {k: v for k, v in options.items() if k not in MPS_ONLY_OPTIONS}
    return RunSettings(
        times=time_grid(to_time(o["t_final"], "t_final", spec.J_hz), o["time_points"]),
        trajectories=o["trajectories"],
        seed=o["seed"],
        engine=engine,
        estimator=resolve_estimator(spec, o["estimator"]),
        inits=resolve_inits(o["init"]),
        engine_options=options,
        **{k: o[k] for k in ("batched", "backend", "feedback", "hot_tail", "leakage_thermal_odds", "integrate_decay",
                             "thermal_strata")},
    )


def feedback_path(spec: ArraySpec, settings: RunSettings) -> str:
    """Which path a run's feedback measurements take (for summaries).

    ``fast``: a batched store that offers feedback trains
    (:mod:`lru_mps.mcwf.trains`; branch estimator: periodic feedback as
    matrix powers of the one-period map, random feedback in the eigenbasis
    of H_eff; sampled estimator: the measurements between events without
    loop stops); ``reference``: one stop of the trajectory loop per
    measurement (stores without trains, ``feedback = "reference"``, or a
    readout error at the reset site, whose reports the loop draws); ``none``: no feedback measurements (dissipation or no reset).
    """
    if spec.reset.kind not in ("periodic", "random"):
        return "none"
    store = batch_store(get_engine(settings.engine, **settings.engine_options)) if settings.batched else None
    fast = settings.feedback == "fast" and store is not None and store.offers("feedback_trains")
    return "fast" if fast and spec.readout is None else "reference"


def with_options(spec: ArraySpec, settings: RunSettings, **options) -> RunSettings:
    """``settings`` with some run options (:data:`RUN_OPTIONS`) replaced; the others, its time grid included, kept."""
    kept = {"init": settings.inits, "t_final": float(settings.times[-1]), "time_points": len(settings.times),
            "trajectories": settings.trajectories, "seed": settings.seed, "engine": settings.engine,
            "estimator": settings.estimator, "engine_options": settings.engine_options, "batched": settings.batched,
            "backend": settings.backend, "feedback": settings.feedback, "hot_tail": settings.hot_tail,
            "leakage_thermal_odds": settings.leakage_thermal_odds, "integrate_decay": settings.integrate_decay,
            "thermal_strata": settings.thermal_strata}
    assert set(kept) == set(RUN_OPTIONS)
    new = make_settings(spec, **{**kept, **options})
    if "t_final" not in options and "time_points" not in options:
        new.times = settings.times
    return new
