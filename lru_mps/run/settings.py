"""How an ensemble is run: the time grid, trajectories, seed, engine, estimator (everything but the physics)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Callable, Iterable, Mapping

import numpy as np

from ..defaults import MPS, RUN
from ..engines import batch_store, choose_engine, get_engine
from ..engines.common.arraylib import BACKENDS, ArrayLib
from ..engines.protocol import FEEDBACK_PATHS, EngineSettings
from ..errors import require
from ..mcwf.trains import trains_apply
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


@dataclass(frozen=True)
class RunOption:
    """A plain run option, declared once on its :class:`RunSettings` field: what it is, its check, its cache key.

    ``check(name, value)`` returns the value as the run holds it or raises
    :class:`~lru_mps.errors.ParameterError` naming the option;
    ``key(settings)`` is the option's entry in a run's cache key
    (:func:`lru_mps.run.cache.run_key`), None where it adds none (an option
    at its neutral value adds none, so the keys of runs made before it
    existed stay valid); an option without ``key`` never changes a run's
    numbers beyond rounding.
    """

    doc: str
    check: Callable[[str, object], object]
    key: Callable[["RunSettings"], object] | None = None


def _option(default, doc: str, check: Callable[[str, object], object], key=None):
    """A :class:`RunSettings` field that is a plain run option (its :class:`RunOption` in the field's metadata)."""
    return field(default=default, metadata={"run_option": RunOption(doc, check, key)})


def _integer(lowest: int) -> Callable[[str, object], int]:
    def check(name, value):
        require(isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
                and int(value) == value and value >= lowest, name, value, f"an integer >= {lowest}")
        return int(value)
    return check


def _boolean(name, value) -> bool:
    require(isinstance(value, (bool, np.bool_)), name, value, "true or false")
    return bool(value)


def _number(lowest: float, inclusive: bool, allowed: str) -> Callable[[str, object], float]:
    def check(name, value):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and float(value) < math.inf \
            and (float(value) >= lowest if inclusive else float(value) > lowest)
        require(ok, name, value, allowed)
        return float(value)
    return check


def _one_of(choices: tuple[str, ...]) -> Callable[[str, object], str]:
    def check(name, value):
        require(value in choices, name, value, f"one of {', '.join(choices)}")
        return value
    return check


def _backend(name, value) -> str:
    value = _one_of(BACKENDS)(name, value)
    if value != "numpy":
        ArrayLib(value)  # installed, and a GPU where one is named
    return value


def _batched_key(settings: "RunSettings") -> bool:
    return settings.batched and batch_store(get_engine(settings.engine, **settings.engine_options)) is not None


def _integrate_decay_key(settings: "RunSettings") -> str | None:
    if not settings.integrate_decay:
        return None
    from ..mcwf.integrated_decay import INTEGRATE_MAX_DIM  # (the rule that picks the rows: a change of it changes the key)

    return f"Fock rows in sectors of <= {INTEGRATE_MAX_DIM} states"


#: the thermal_strata values that are words: "all" (the long arrays' strata too) and "cost" (the rows' thermal
#: numbers at cost-aware odds: lru_mps.run.thermal_number)
STRATA_WORDS = ("all", "cost")


def _strata_choice(name, value) -> bool | str:
    """``thermal_strata``: false, true (the short arrays, L <= 7), "all" (the long arrays too) or "cost"."""
    if isinstance(value, str):
        require(value in STRATA_WORDS, name, value, 'true, false, "all" or "cost"')
        return value
    return _boolean(name, value)


def _thermal_strata_key(settings: "RunSettings") -> str | None:
    if not settings.thermal_strata:
        return None
    if settings.thermal_strata == "cost":
        from .thermal_number import DEFENSIVE

        return (f"thermal numbers at odds {DEFENSIVE:g} W_n + {1 - DEFENSIVE:g} W_n / sqrt(states x N) of their "
                "sector, self-normalized")
    from .thermal_sample import LONG_STRATA, MAX_SITES, STRATUM_MIN_ROWS, STRATUM_MIN_WEIGHT

    key = f"configurations of sites 2..L >= {STRATUM_MIN_WEIGHT} (L <= {MAX_SITES + 1}), >= {STRATUM_MIN_ROWS} rows each"
    if settings.thermal_strata == "all":  # (a true one keeps the key it always had: its long arrays stay natural)
        key += f"; longer: of sites 2..{MAX_SITES + 1} in {LONG_STRATA} strata, the rest natural"
    return key


@dataclass
class RunSettings:
    """How an ensemble is run (everything but the physics); build it with :func:`make_settings`.

    The fields after ``engine_options`` are the plain run options: each is
    declared once, here (its default, its check and its cache-key entry in a
    :class:`RunOption`), and :data:`RUN_OPTIONS`, :func:`with_options`, the
    cache key and the option table of :func:`~lru_mps.run.simulate.simulate`
    are read from these declarations.  The others are resolved from what a
    user types by :func:`make_settings` (``times`` from t_final and
    time_points, ``inits`` from init, ``engine`` and ``estimator`` with
    'auto' resolved, ``engine_options`` completed).
    """

    times: np.ndarray
    trajectories: int = _option(RUN["trajectories"], "trajectories per initial state, each with its own disorder "
                                "realization", _integer(1), key=lambda s: s.trajectories)
    seed: int = _option(RUN["seed"], "seed of the run (trajectory i draws from SeedSequence(seed, (i, ...)))",
                        _integer(0), key=lambda s: s.seed)
    engine: str = "exact"
    estimator: str = "sampled"
    inits: tuple[str, ...] = INIT_STATES
    engine_options: dict = field(default_factory=dict)
    batched: bool = _option(True, "advance the trajectories of a block together where the engine has a batched "
                            "store (the same numbers to rounding)", _boolean, key=_batched_key)
    backend: str = _option(RUN["backend"], "array library of the batched engines and of the sector engine's "
                           "Chebyshev blocks: numpy, torch[:cpu|:cuda] or cupy (lru_mps.engines.common.arraylib; not "
                           "bit for bit the numbers of numpy)", _backend,
                           key=lambda s: s.backend if s.backend != "numpy" else None)
    feedback: str = _option(FEEDBACK_PATHS[0], "feedback measurements: 'fast' (the store's feedback trains where "
                            "the run can use them, lru_mps.mcwf.trains) or 'reference' (one stop of the trajectory "
                            "loop per measurement: the path the fast one is tested against)", _one_of(FEEDBACK_PATHS))
    hot_tail: float = _option(RUN["hot_tail"], "thinning factor f of the thermal sample's hot tail: such a row runs "
                              "with probability 1/f and weight f (1 = off; lru_mps.run.thermal_sample.thin_hot_tail)",
                              _number(1.0, True, "a number >= 1 (1: every thermal sample runs)"),
                              key=lambda s: s.hot_tail if s.hot_tail != 1.0 else None)
    leakage_thermal_odds: float = _option(
        RUN["leakage_thermal_odds"], "odds factor r of the leakage start's rows with a thermally excited array, "
        "weights keeping every mean exact (1 = natural; lru_mps.run.thermal_sample.stratified_levels)",
        _number(0.0, False, "a number > 0 (1: the natural thermal sample; 8: excited arrays at 8x their natural odds)"),
        key=lambda s: s.leakage_thermal_odds if s.leakage_thermal_odds != 1.0 and "leakage" in s.inits else None)
    integrate_decay: bool = _option(RUN["integrate_decay"], "sampled rows with a sharp excitation number carry the "
                                    "survival of their hardware decay clock instead of sampling it "
                                    "(lru_mps.mcwf.integrated_decay)", _boolean, key=_integrate_decay_key)
    thermal_strata: bool | str = _option(RUN["thermal_strata"], "the thermal start drawn by strata with a fixed "
                                         "allocation (lru_mps.run.thermal_sample.ThermalStrata; true: L = 3..7; "
                                         "'all': also longer arrays, by the configuration of sites 2..7; "
                                         "'cost': every array, each row's number of thermal excitations drawn at "
                                         "cost-aware odds and weighted back, lru_mps.run.thermal_number)",
                                         _strata_choice, key=_thermal_strata_key)

    #: why engine = 'auto' chose ``engine`` (:func:`lru_mps.engines.choose_engine`: the one place it is resolved;
    #: "" where the engine was named); a description, not an option (it changes no number)
    engine_reason: str = ""

    def __post_init__(self):
        for name, option in plain_options().items():
            setattr(self, name, option.check(name, getattr(self, name)))
        for other, neutral in (("leakage_thermal_odds", 1.0), ("hot_tail", 1.0)):  # (they would weight it twice)
            require(self.thermal_strata != "cost" or getattr(self, other) == neutral, other, getattr(self, other),
                    f"{neutral:g} with thermal_strata = 'cost' (its odds already weight the thermal sample "
                    "by number and cost)")

    def for_engines(self) -> EngineSettings:
        """What the engines read of this run (a typed value of their own layer)."""
        return EngineSettings(engine=self.engine, engine_options=dict(self.engine_options),
                              times=np.asarray(self.times, dtype=float), feedback=self.feedback,
                              backend=self.backend)


def plain_options() -> dict[str, RunOption]:
    """The plain run options, by name, in their field order: the declarations on :class:`RunSettings`."""
    return {f.name: f.metadata["run_option"] for f in fields(RunSettings) if "run_option" in f.metadata}


#: the options a make_settings resolves (not fields of RunSettings as typed), with their defaults
_RESOLVED_OPTIONS = {
    "init": RUN["init"],  # 'all', one initial state or a list of them
    "t_final": RUN["t_final"],  # 1/J, or with a unit ('30us', '1000/J')
    "time_points": RUN["time_points"],
    "engine": RUN["engine"],  # exact, sector, mps or auto
    "estimator": RUN["estimator"],  # sampled, branch or auto
    "engine_options": None,  # MPS: dt, order, max_bond, cutoff, kernel (unset ones from lru_mps.defaults.MPS)
}

#: the options of a run as a user sets them (``simulate``'s keywords, ``lru-mps simulate``'s options), with their
#: defaults: the one list :func:`make_settings` and :func:`~lru_mps.run.simulate.simulate` take (the resolved
#: ones, then the plain ones of :class:`RunSettings`)
RUN_OPTIONS = {**{k: _RESOLVED_OPTIONS[k] for k in ("init", "t_final", "time_points")},
               **{f.name: f.default for f in fields(RunSettings) if f.name in ("trajectories", "seed")},
               **{k: _RESOLVED_OPTIONS[k] for k in ("engine", "estimator", "engine_options")},
               **{f.name: f.default for f in fields(RunSettings)
                  if "run_option" in f.metadata and f.name not in ("trajectories", "seed")}}


def options_table() -> str:
    """The plain run options as a text table (name, default, what it is): the docstring of
    :func:`~lru_mps.run.simulate.simulate` and the manual read it."""
    rows = [f"``{name}`` (default {RUN_OPTIONS[name]!r}): {option.doc}." for name, option in plain_options().items()]
    return "\n".join(rows)


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
    engine, engine_options, reason = o["engine"], o["engine_options"], ""
    if engine == "auto":
        engine, reason = choose_engine(spec)
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
        engine=engine,
        estimator=resolve_estimator(spec, o["estimator"]),
        inits=resolve_inits(o["init"]),
        engine_options=options,
        engine_reason=reason,
        **{k: o[k] for k in plain_options()},
    )


def feedback_path(spec: ArraySpec, settings: RunSettings) -> str:
    """Which path a run's feedback measurements take (for summaries).

    ``fast``: a batched store that offers feedback trains
    (:mod:`lru_mps.mcwf.trains`; branch estimator: periodic feedback as
    matrix powers of the one-period map, random feedback in the eigenbasis
    of H_eff; sampled estimator: the measurements between events without
    loop stops); ``reference``: one stop of the trajectory loop per
    measurement (stores without trains, ``feedback = "reference"``, a
    readout error at the reset site, whose reports the loop draws, or several
    reset sites); ``none``: no feedback measurements (dissipation or no reset).
    The rule is the loop's own (:func:`lru_mps.mcwf.trains.trains_apply`).
    """
    if spec.reset.kind not in ("periodic", "random"):
        return "none"
    store = batch_store(get_engine(settings.engine, **settings.engine_options)) if settings.batched else None
    offered = settings.feedback == "fast" and store is not None and store.offers("feedback_trains")
    # (a store that holds only some rows, the sector batch: "fast" where it holds the leakage start's N = 2)
    offered = offered and (store.largest_number(spec) is None or store.largest_number(spec) >= 2)
    return "fast" if trains_apply(spec, offered) else "reference"


def with_options(spec: ArraySpec, settings: RunSettings, **options) -> RunSettings:
    """``settings`` with some run options (:data:`RUN_OPTIONS`) replaced; the others, its time grid included, kept."""
    kept = {"init": settings.inits, "t_final": float(settings.times[-1]), "time_points": len(settings.times),
            "engine": settings.engine, "estimator": settings.estimator, "engine_options": settings.engine_options,
            **{name: getattr(settings, name) for name in plain_options()}}
    new = make_settings(spec, **{**kept, **options})
    if "engine" not in options:
        new.engine_reason = settings.engine_reason
    if "t_final" not in options and "time_points" not in options:
        new.times = settings.times
    return new
