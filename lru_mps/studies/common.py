"""Helpers of the sweep studies (rate, disorder, hopping, dynamics): config access, ensembles, plot style.

Ensembles run the branch estimator (docs/physics.md §6.5): in ideal
conditions it is exact per disorder realization, with ``realizations``
evolutions, each with its own disorder realization; otherwise
``trajectories`` per point, those whose array starts empty on the branch
(the removals integrated out, dephasing sampled), the thermal ones sampled.  Every ensemble goes through :func:`lru_mps.run.simulate.simulate`
with the study's work folder as store (and ``ctx.run_options``: workers, Dask
client, progress), so an interrupted study resumes and a rerun reuses all
finished work.
"""

from __future__ import annotations

import math

import numpy as np

from ..analysis.decay import DECAY_OBSERVABLE
from ..defaults import MODEL
from ..errors import require
from ..physics.model import ArraySpec
from ..physics.units import time_to_us
from ..run.settings import mps_options
from ..run.simulate import simulate
from .base import MODEL_KEYS, StudyContext, finite_or_none

#: optimal rates the paper reads off its L = 3 numerics (units of J; Fig. 2c and the random-feedback figure)
PAPER_OPTIMA_J = {
    "periodic": {"low": 0.03, "high": 30.0},
    "random": {"low": 0.055, "high": 60.0},
    "dissipation": {"low": 0.04, "high": 130.0},
}

#: the decay times a study reports: T_prop (the formula) and the fitted ones (analysis.decay.DECAY_OBSERVABLE)
FITTED = tuple(DECAY_OBSERVABLE)
DECAYS = ("T_star", "T_prop", "T1", "T2")
assert set(DECAYS) == set(FITTED) | {"T_prop"}
#: fitted decay time -> (observable, factor of the fitted curve), as in lru_mps.analysis.decay
CURVES = {"T_star": ("leakage_array", 1.0), "T1": ("qubit_population", 1.0), "T2": ("qubit_coherence", 2.0)}

#: below this many state updates (trajectories x stops) an ensemble runs in-process
_POOL_MIN_WORK = 4000


def model_of(cfg: dict, **changes) -> dict:
    """The config's model table with ``changes`` (keys checked against the options of lru-mps simulate)."""
    model = {**cfg.get("model", {}), **changes}
    unknown = [k for k in model if k not in MODEL_KEYS]
    require(not unknown, "model", unknown, f"keys among {', '.join(MODEL_KEYS)}")
    return model


def spec_of(cfg: dict, **changes) -> ArraySpec:
    """The spec of the model table with ``changes`` (swept value, conditions)."""
    model = model_of(cfg, **changes)
    return ArraySpec.from_user(**{k: model[k] for k in MODEL_KEYS if k in model and model[k] is not None})


def refuse_readout(cfg: dict, study: str, why: str, hint: str) -> None:
    """Stop a study that cannot take a readout error at the reset site (``readout_error``/``readout_confusion``
    in its model table), with one line naming the key, the study and why."""
    from ..physics.readout import confusion

    model = cfg["model"]
    if confusion(model.get("readout_error"), model.get("readout_confusion")) is None:  # the spec's rule for "off"
        return
    key = "readout_error" if model.get("readout_confusion") is None else "readout_confusion"
    require(False, key, model.get(key), f"none on the {study} ({why})", hint)


def refuse_bath(cfg: dict, study: str, why: str) -> None:
    """Stop a study that cannot take a thermal bath (``thermal_bath`` in its model table), with one line naming
    the key, the study and why (docs/physics.md §5.1)."""
    value = cfg["model"].get("thermal_bath")
    require(not value, "thermal_bath", value, f"off on the {study} ({why})",
            "see the bath's leakage floor with `lru-mps simulate --thermal-bath` or `lru-mps study dynamics`")


def conditions_of(cfg: dict, allow_both: bool) -> list[str]:
    """The conditions a study runs: ["ideal"], ["realistic"] or both (model.conditions; default: lru-mps simulate's)."""
    cond = cfg["model"].get("conditions", MODEL["conditions"])
    allowed = ("ideal", "realistic", "both") if allow_both else ("ideal", "realistic")
    require(cond in allowed, "conditions", cond, " or ".join(allowed),
            None if allow_both else f"the {cfg['study']} study runs one set of conditions at a time")
    return ["ideal", "realistic"] if cond == "both" else [cond]


def positive_int(cfg: dict, key: str, minimum: int = 1) -> int:
    """``cfg[key]`` as an integer >= ``minimum`` (:meth:`~lru_mps.studies.config.Config.integer`)."""
    from .config import Config

    return Config(cfg).integer(key, min=minimum)


def as_list(cfg: dict, key: str) -> list:
    value = cfg[key]
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    require(isinstance(value, (list, tuple)) and len(value) >= 1, key, value, "a non-empty list")
    return list(value)


def ensemble_settings(spec: ArraySpec, cfg: dict) -> tuple[str, int]:
    """(estimator, number of evolutions): the branch, per realization when ideal, else ``trajectories``; sampled
    ``trajectories`` where the branch is not exact (a readout error at the reset site, docs/physics.md §4.4)."""
    from ..physics.rules import resolve_estimator

    if resolve_estimator(spec, "auto") == "sampled":
        return "sampled", positive_int(cfg, "trajectories")
    if spec.conditions.ideal:
        return "branch", positive_int(cfg, "realizations")
    return "branch", positive_int(cfg, "trajectories")


def evolution_kind(ideal: bool) -> str:
    """What one evolution of an ensemble is, for tables: a disorder realization (ideal) or a trajectory."""
    return "disorder realizations (exact branch)" if ideal else "trajectories"


def run_ensemble(spec: ArraySpec, cfg: dict, ctx: StudyContext, label: str, *, init, t_final: float, time_points: int,
                 **extra):
    """One resumable ensemble through :func:`simulate` (store = the study's work folder).

    ``extra``: further keyword arguments of :func:`simulate` (e.g. ``leakage_thermal_odds``).
    """
    estimator, n = ensemble_settings(spec, cfg)
    # the cost of an evolution is ~ one state update per stop: time points and measurements
    stops = time_points + spec.reset.measurements(t_final)
    n_init = (3 if init == "all" else 1) if isinstance(init, str) else len(init)
    options = ctx.run_options(label)  # workers, store, progress and (Dask) client
    if n * stops * n_init < _POOL_MIN_WORK and options.get("client") is None:
        options["workers"] = 1  # a process pool costs more than it saves (numbers do not depend on workers)
    return simulate(
        spec,
        init=init,
        t_final=t_final,
        time_points=time_points,
        trajectories=n,
        seed=positive_int(cfg, "seed", 0),
        engine=cfg["engine"],
        estimator=estimator,
        engine_options=mps_options(cfg, spec.J_hz),
        **options,
        **extra,
    )


def us_per_J(spec: ArraySpec) -> float:
    return time_to_us(1.0, spec.J_hz)


def nan_if_none(x) -> float:
    x = finite_or_none(x)
    return math.nan if x is None else x


def json_list(a) -> list:
    return [finite_or_none(x) for x in np.asarray(a, dtype=float).ravel()]


def pyplot():
    """matplotlib.pyplot, imported when a figure is drawn (the backend is the caller's choice)."""
    import matplotlib.pyplot as plt

    return plt


#: matplotlib rc settings of the sweep studies' figures
PLOT_STYLE = {
    "font.size": 10,
    "axes.labelsize": 10,
    "axes.titlesize": 10,
    "legend.fontsize": 8,
    "xtick.direction": "in",
    "ytick.direction": "in",
    "xtick.top": False,
    "ytick.right": True,
    "axes.grid": True,
    "grid.alpha": 0.25,
    "savefig.dpi": 200,
}


def dataset_attrs(spec: ArraySpec, cfg: dict, **extra) -> dict:
    """NetCDF attributes of a study's dataset: the spec (no None, inf as text), study, seed, engine, units."""
    out = {}
    for k, v in spec.as_dict().items():
        if v is None:
            v = "inf" if k in ("T1q_J", "Tphi_J") else "none"
        elif isinstance(v, float) and math.isinf(v):
            v = "inf"
        elif isinstance(v, list) and k.startswith(("T1q", "Tphi", "device_")):  # per site (a device file's)
            v = ",".join("inf" if x is None else str(x) for x in v)
        out[k] = v
    out.pop("rate_J", None)
    if spec.device is not None and spec.device.source:
        out["device_file"] = spec.device.source
    out.update({
        "study": cfg["study"],
        "seed": int(cfg["seed"]),
        "engine": str(cfg["engine"]),
        "time_us_per_J": us_per_J(spec),
        "quick": int(bool(cfg.get("quick", False))),
    })
    out.update(extra)
    return out




#: the legend entry of a point that ran but is not resolved (:func:`mark_unresolved`)
UNRESOLVED_LABEL = "not resolved (x at the axis; reason in summary.json)"


def unresolved_handle():
    """The legend handle of the unresolved marks (:func:`mark_unresolved`)."""
    from matplotlib.lines import Line2D

    return Line2D([], [], ls="none", marker="x", color="0.3")


def mark_unresolved(ax, x, color, marker: str = "x", axis: str = "x", level: int = 0) -> None:
    """Mark the abscissae ``x`` of points that ran but are not resolved: an x at the bottom of the axes, in the
    series' color (not dropped silently); ``axis`` = "y": ``x`` are ordinates, marked at the left edge; ``level``:
    the series' row of marks (0 at the edge, each next one a little further in), so that two series' marks at one
    point do not hide each other."""
    x = np.asarray(x, dtype=float)
    x = x[np.isfinite(x)]
    if not x.size:
        return
    edge = np.full(x.size, 0.02 + 0.04 * level)
    if axis == "y":
        ax.plot(edge, x, ls="none", marker="x", color=color, ms=7, mew=1.5, transform=ax.get_yaxis_transform(),
                clip_on=False)
        return
    ax.plot(x, edge, ls="none", marker="x", color=color, ms=7, mew=1.5,
            transform=ax.get_xaxis_transform(), clip_on=False)
