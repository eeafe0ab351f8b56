"""Results as labelled xarray Datasets (NetCDF) and JSON.

A simulation result becomes one Dataset with coordinates ``time_J`` (1/J) and
``site`` (1..L), variables ``<observable>_mean`` / ``<observable>_sem`` for
every observable, the per-site ``site_population`` / ``site_leakage`` for
each initial state that was run, and all parameters, run settings and decay
times as attributes.  On a graph (``spec.geometry``) the site coordinate is the
run's numbering (the start site 1, the reset site L) and carries, per site,
``site_row`` / ``site_col`` (1-based layout coordinates) and ``site_layout``
(the site's number in the layout's own order); the JSON has the same lists
under ``sites`` and the parameters name ``start_site`` and ``reset_site``.  Files are written atomically (temporary file + rename).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import xarray as xr

from ..analysis.decay import decay_times
from ..analysis.lifetimes import leakage_lifetimes
from ..atomic import atomic_target
from ..run.result import OBSERVABLE_INIT, SimulationResult
from ..physics.domains import edge_warnings
from ..physics.units import time_to_us
from ..analysis.numbers import with_parameter_reasons


def _settings_dict(result: SimulationResult) -> dict:
    s = result.settings
    return {
        "trajectories": s.trajectories,
        "completed_trajectories": result.completed,
        "seed": s.seed,
        "engine": s.engine,
        "estimator": s.estimator,
        "init": list(s.inits),
        "t_final_J": float(s.times[-1]),
        "time_points": len(s.times),
        **{f"engine_{k}": v for k, v in s.engine_options.items()},
        **({"integrate_decay": 1} if s.integrate_decay else {}),  # (absent when off: earlier outputs unchanged)
    }


def parameters(result: SimulationResult) -> dict:
    """Physics parameters and run settings of a result, JSON-friendly (with a device file: its path, too)."""
    device = result.spec.device
    source = {"device_file": device.source} if device is not None and device.source else {}
    return {**result.spec.as_dict(), **source, **_geometry_sites(result.spec), **_settings_dict(result),
            **diagnostics_summary(result)}


def _geometry_sites(spec) -> dict:
    """On a graph: the start and reset sites as the user types them (1-based 'r,c' coordinates and layout site
    numbers; with several reset sites also ``reset_sites`` and ``reset_layout_sites``, all of them) and the
    transit's hops (to the nearest reset site; absent on the default chain: earlier keys stay)."""
    g = spec.geometry
    if g is None:
        return {}
    out = {"start_site": f"{g.coords[0][0] + 1},{g.coords[0][1] + 1}", "start_layout_site": g.labels[0] + 1,
           "reset_site": f"{g.coords[-1][0] + 1},{g.coords[-1][1] + 1}", "reset_layout_site": g.labels[-1] + 1,
           "transit_hops": spec.transit_hops}
    if g.resets > 1:  # every reset site (``reset_site`` is the last of them)
        out["reset_sites"] = [f"{g.coords[k][0] + 1},{g.coords[k][1] + 1}" for k in g.reset_sites]
        out["reset_layout_sites"] = [g.labels[k] + 1 for k in g.reset_sites]
    return out


def site_coordinates(spec) -> dict | None:
    """Per-site coordinates of a graph, site k = 1..L in the spec's numbering (start first, reset last): the
    1-based row and column and the site's number in the layout's original order; None on the default chain."""
    g = spec.geometry
    if g is None:
        return None
    return {"site_row": [r + 1 for r, _ in g.coords], "site_col": [c + 1 for _, c in g.coords],
            "site_layout": [k + 1 for k in g.labels]}


def diagnostics_summary(result: SimulationResult) -> dict:
    """Worst engine diagnostics over all trajectories (MPS: discarded weight, bond, norm error, <H> drift)."""
    out = {}
    for diag in result.diagnostics.values():
        for key, values in diag.items():
            if len(values):
                out[f"max_{key}"] = max(out.get(f"max_{key}", -np.inf), float(np.max(values)))
    return out


def not_run(init: str, result: SimulationResult) -> str:
    """Why an observable of start ``init`` is not there: the run had no such start, and how to get it."""
    return (f"not measured: the run has no {init} start (it ran {', '.join(result.settings.inits)}); "
            f"run with --init {init} or --init all")


def decay_reason(name: str, result: SimulationResult, times: dict) -> str:
    """Why decay time ``name`` of ``result`` is None: its start did not run, or why it is not resolved and what would
    resolve it (:func:`lru_mps.analysis.decay.unresolved_reason`)."""
    from ..analysis.decay import DECAY_OBSERVABLE, unresolved_reason

    init = OBSERVABLE_INIT[DECAY_OBSERVABLE[name][0]]
    if init not in result.blocks:
        return not_run(init, result)
    return unresolved_reason(name, result, times) or "not resolved by these data (more trajectories resolve it)"


def decay_flags(d) -> list[str]:
    """The flags of a decay time (None: none; :attr:`lru_mps.analysis.decay.DecayTime.flags`: a poor fit)."""
    return [] if d is None else d.flags


def lifetime_reason(result: SimulationResult) -> str:
    """Why a result's leakage lifetimes are None (:func:`lru_mps.analysis.lifetimes.leakage_lifetimes`)."""
    if "leakage" not in result.blocks:
        return not_run("leakage", result)
    if result.spec.readout is not None:
        return ("not defined with a readout error (a false report makes a |2> at the reset site, so the leakage has "
                "a floor and its integral diverges)")
    return ("not defined with a thermal bath at T > 0 (heating makes |2> from |1> on every site, so the leakage has a "
            "thermal floor and its integral diverges)")


def to_json(result: SimulationResult) -> dict:
    """The JSON object of `lru-mps simulate --json`."""
    observables = {}
    for name, init in OBSERVABLE_INIT.items():
        if init in result.blocks:
            ms = result.observable(name)
            observables[name] = {"mean": ms.mean.tolist(), "sem": ms.sem.tolist()}
        else:
            observables[name] = None
    J_hz = result.spec.J_hz
    found = decay_times(result)
    times = {}
    for k, v in found.items():
        times[k] = v.as_json(J_hz) if v is not None else {"value_J": None, "error_J": None, "value_us": None,
                                                          "error_us": None, "reason": decay_reason(k, result, found)}
        flags = decay_flags(v)
        if flags:
            times[k]["flags"] = flags
    lifetimes = {k: (v.as_json(J_hz) if v is not None else None) for k, v in leakage_lifetimes(result).items()}
    missing = lifetime_reason(result)
    sites = site_coordinates(result.spec)
    return {
        "parameters": with_parameter_reasons(parameters(result)),
        **({"sites": sites} if sites is not None else {}),
        "time_J": result.times.tolist(),
        "observables": observables,
        **({"observables_reason": {k: None if v is not None else not_run(OBSERVABLE_INIT[k], result)
                                   for k, v in observables.items()}} if None in observables.values() else {}),
        "decay_times": times,
        **lifetimes,
        **{f"{k}_reason": missing for k, v in lifetimes.items() if v is None},
        **({"thermal_mass_dropped": dropped} if (dropped := result.thermal_mass_dropped()) is not None else {}),
        **({"warnings": notes} if (notes := edge_warnings(result.spec)) else {}),  # (absent inside the domain)
    }


def to_dataset(result: SimulationResult) -> xr.Dataset:
    """The result as an xarray Dataset (see module docstring)."""
    t = result.times
    coords = {"time_J": ("time_J", t, {"units": "1/J"}), "site": np.arange(1, result.spec.L + 1)}
    for name, values in (site_coordinates(result.spec) or {}).items():  # on a graph: where each site sits
        coords[name] = ("site", np.asarray(values), {"description": "1-based; site k of the run (start 1, reset L)"})
    data = {}
    for name, init in OBSERVABLE_INIT.items():
        if init in result.blocks:
            ms = result.observable(name)
            data[f"{name}_mean"] = ("time_J", ms.mean)
            data[f"{name}_sem"] = ("time_J", ms.sem)
    for init in result.blocks:
        for name in ("site_population", "site_leakage"):
            ms = result.site_resolved(init, name)
            data[f"{name}_{init}_mean"] = (("time_J", "site"), ms.mean)
            data[f"{name}_{init}_sem"] = (("time_J", "site"), ms.sem)
    for init, diag in result.diagnostics.items():
        for key, values in diag.items():
            data[f"{key}_{init}"] = ("trajectory", np.asarray(values, dtype=float))
    attrs = {k: _attr(v) for k, v in parameters(result).items()}
    attrs["time_us_per_J"] = time_to_us(1.0, result.spec.J_hz)
    for k, v in decay_times(result).items():
        for field, x in (v.as_json(result.spec.J_hz) if v else {"value_J": None}).items():
            attrs[f"{k}_{field}"] = _attr(x)
    for k, v in leakage_lifetimes(result).items():
        for field, x in (v.as_json(result.spec.J_hz) if v else {"value": None}).items():
            attrs[f"{k}_{field}"] = _attr(x)
    return xr.Dataset(data, coords=coords, attrs=attrs)


def _attr(v):
    """NetCDF attributes cannot hold None, bools or lists of strings."""
    if v is None:
        return "none"
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, float) and math.isinf(v):
        return "inf"
    if isinstance(v, (list, tuple)) and any(isinstance(x, (list, tuple)) for x in v):  # a matrix (readout_confusion)
        return json.dumps(v)
    if isinstance(v, (list, tuple)):  # (None in a list: a per-site time that is inf)
        return ",".join("inf" if x is None else str(x) for x in v)
    return v


def save_netcdf(result: SimulationResult, path: str | os.PathLike) -> Path:
    """Write the result's Dataset to ``path`` (NetCDF4 via h5netcdf, with :func:`physical_units`), atomically."""
    return write_dataset(to_dataset(result), path)


def write_dataset(ds: xr.Dataset, path: str | os.PathLike) -> Path:
    """Write ``ds`` with :func:`physical_units` to ``path`` (NetCDF4 via h5netcdf), atomically."""
    with atomic_target(path) as tmp:
        physical_units(ds).to_netcdf(tmp, engine="h5netcdf")
    return Path(path)


#: the units attribute of a variable that has none: a dimensionless number, or a label (text)
DIMENSIONLESS, LABEL = "1", "label"


def physical_units(ds: xr.Dataset) -> xr.Dataset:
    """``ds`` with every quantity in code units also in physical ones, and a units attribute on every variable.

    A variable or coordinate in 1/J (``units = "1/J"``) gets a sibling in
    microseconds (``T1_J`` -> ``T1_us``, ``time_J`` -> ``time_us``; the
    factor is the dataset's ``time_us_per_J``), one in J (an energy or a
    rate, ``units = "J"``) a sibling in MHz (f = E/2pi, from
    ``J_over_2pi_Hz``); where the dataset has no such factor, or the sibling
    exists, nothing is added.  A variable without units is dimensionless
    (``"1"``: populations, coherences, ratios, counts, masks) or a text label
    (``"label"``).  Values are not changed.
    """
    ds = ds.copy()
    us = ds.attrs.get("time_us_per_J")
    hz = ds.attrs.get("J_over_2pi_Hz")
    for name in list(ds.variables):
        var = ds[name]
        units = var.attrs.get("units")
        base = name[:-2] if name.endswith("_J") else name
        if units == "1/J" and isinstance(us, (int, float)) and f"{base}_us" not in ds.variables:
            _sibling(ds, name, f"{base}_us", float(us), "us")
        elif units == "J" and isinstance(hz, (int, float)) and f"{base}_MHz" not in ds.variables:
            _sibling(ds, name, f"{base}_MHz", float(hz) / 1e6, "MHz")
    for name in ds.variables:
        var = ds[name]
        if "units" not in var.attrs:
            var.attrs["units"] = "sites" if name in ("L", "site") else LABEL if var.dtype.kind in "USO" else DIMENSIONLESS
    return ds


def _sibling(ds: xr.Dataset, name: str, new: str, factor: float, units: str) -> None:
    """``new`` = ``name`` x factor in ``units``: a coordinate next to a coordinate, else a variable."""
    var = ds[name]
    value = (var.dims, np.asarray(var.values) * factor, {"units": units})
    if name in ds.coords:
        ds.coords[new] = value
    else:
        ds[new] = value


def load_dataset(path: str | os.PathLike) -> xr.Dataset:
    """Load a stored result (fully into memory, file closed)."""
    with xr.open_dataset(path, engine="h5netcdf") as ds:
        return ds.load()

