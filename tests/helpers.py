"""Small helpers shared by the tests: one trajectory unbatched, many batched, how two results differ (and how far
rounding alone moves a trajectory), and the leakage lifetimes of a stored study's point."""

import dataclasses
from pathlib import Path

import numpy as np

from lru_mps.mcwf.records import TrajectoryRecord
from lru_mps.run.trajectories import draw, run_trajectories


def one(spec, settings, index, realization=None, **kw):
    """Trajectory ``index`` on the engine's ordinary states, one at a time (unbatched): {init: record}."""
    return run_trajectories(spec, settings, [index], realization, batched=False, **kw)[0]


def batched(spec, settings, indices, realization=None, **kw):
    """Trajectories ``indices`` through the engine's batched store: [{init: record}, ...]."""
    return run_trajectories(spec, settings, indices, realization, batched=True, **kw)


def records_differ(a: dict[str, TrajectoryRecord], b: dict[str, TrajectoryRecord], tol: float = 1e-10) -> list[str]:
    """How two ``{init: record}`` results differ beyond ``tol`` (populations, coherence, events); [] if they agree."""
    if set(a) != set(b):
        return [f"initial states {sorted(a)} != {sorted(b)}"]
    problems = []
    for init in a:
        ra, rb = a[init], b[init]
        dp = float(np.max(np.abs(ra.populations - rb.populations)))
        dc = float(np.max(np.abs(ra.coherence - rb.coherence)))
        if not dp <= tol:
            problems.append(f"{init}: populations differ by {dp:.3g}")
        if not dc <= tol:
            problems.append(f"{init}: coherence differs by {dc:.3g}")
        if len(ra.events) != len(rb.events):
            problems.append(f"{init}: {len(ra.events)} != {len(rb.events)} events")
            continue
        for ea, eb in zip(ra.events, rb.events):
            if (ea.channel, ea.site, ea.outcome) != (eb.channel, eb.site, eb.outcome) or not abs(ea.time - eb.time) <= tol:
                problems.append(f"{init}: event {ea} != {eb}")
                break
    return problems


#: how many times its own one-ulp sensitivity two equivalent computations of a trajectory may differ by: measured
#: batched vs unbatched on the noisy L = 4 chain without reset of tests/test_sector_batch.py (12 trajectories, three
#: starts each), the ratio of their difference to the one-ulp divergence is at most 2.5 (0.01-1 for most)
ROUNDING_FACTOR = 10.0


def rounding_divergence(spec, settings, index, realization=None, **kw) -> float:
    """How far the unbatched trajectory ``index`` moves when its realization's detunings move by one ulp: the
    largest change of a population or the coherence, at any time.

    A quantum trajectory amplifies a rounding difference at every jump (a jump time that moves by dt moves the state
    by ~U dt), so two computations of it that differ only in rounding (a batched and an unbatched store, two BLAS
    kernels) drift apart by about this much, whatever their order of operations; a wrong operator or step moves it
    by far more.  Raises if the perturbed trajectory takes other events (a row too chaotic to compare at all).
    """
    real = realization if realization is not None else draw(spec, settings, index).realization
    ref = one(spec, settings, index, real, **kw)
    moved = one(spec, settings, index, dataclasses.replace(real, dw=np.nextafter(real.dw, np.inf)), **kw)
    worst = 0.0
    for init, r in ref.items():
        m = moved[init]
        same = [(e.channel, e.site, e.outcome) for e in r.events] == [(e.channel, e.site, e.outcome) for e in m.events]
        assert same, f"trajectory {index} ({init}): one ulp of the detunings changes its events; compare a shorter run"
        worst = max(worst, float(np.max(np.abs(r.populations - m.populations))),
                    float(np.max(np.abs(r.coherence - m.coherence))))
    return worst


def differ_beyond_rounding(got, ref, spec, settings, index, realization=None, tol: float = 1e-10, **kw) -> list[str]:
    """:func:`records_differ` of ``got`` against the unbatched ``ref`` of trajectory ``index`` at ``tol``, or, where
    they differ by more, at :data:`ROUNDING_FACTOR` times the trajectory's own rounding sensitivity
    (:func:`rounding_divergence`): [] if they agree within what rounding explains."""
    problems = records_differ(got, ref, tol=tol)
    if not problems:
        return []
    scale = ROUNDING_FACTOR * rounding_divergence(spec, settings, index, realization, **kw)
    return [] if scale <= tol else [p + f" (rounding scale {scale:.3g})" for p in records_differ(got, ref, tol=scale)]


#: the JSON keys of each leakage lifetime quantity (issue 23; ``as_json`` of analysis.lifetimes)
LIFETIME_KEYS = {"leakage_lifetime_qubit": {"value_J", "error_J", "value_us", "error_us", "tail_J", "tail"},
                 "leakage_lifetime_array": {"value_J", "error_J", "value_us", "error_us", "tail_J", "tail"},
                 "removal_efficiency": {"value", "error"}}


def window_sum(res, name: str, window) -> tuple[float, float]:
    """(the sum of observable ``name`` over the times ``window`` (a mask), its jackknife error over the result's
    blocks of trajectories)."""
    total = float(np.sum(res.observable(name).mean[window]))
    parts = np.array([np.sum(r.observable(name).mean[window]) for r in res.leave_one_out()])
    return total, float(np.sqrt((parts.size - 1) / parts.size * np.sum((parts - parts.mean()) ** 2)))


def load_study(folder) -> tuple[dict, dict, object]:
    """(resolved config, summary.json, results.nc) of a stored study."""
    import json

    from lru_mps.io.datasets import load_dataset
    from lru_mps.studies.base import read_config

    return read_config(folder), json.loads((Path(folder) / "summary.json").read_text()), load_dataset(
        Path(folder) / "results.nc")


def stored_lifetimes(folder, spec, cfg: dict, **kw) -> dict:
    """{name: as_json} of ``leakage_lifetimes(simulate(spec, ...))`` with a study's settings: seed, engine and
    its options from the study's ``cfg``, the branch estimator (unless ``kw`` names one), and ``kw`` (init,
    t_final, time_points, trajectories, ...).  The ensemble is loaded from the study's store (``folder``/work), which costs nothing,
    and the call fails if that writes a block: the study ran the point with other settings."""
    from lru_mps.analysis.lifetimes import leakage_lifetimes
    from lru_mps.run.simulate import simulate
    from lru_mps.run.settings import mps_options

    def blocks():
        return {str(p): p.stat().st_mtime_ns for p in (Path(folder) / "work").rglob("block_*.npz")}

    before = blocks()
    kw.setdefault("estimator", "branch")
    res = simulate(spec, seed=int(cfg["seed"]), engine=cfg["engine"], engine_options=mps_options(cfg, spec.J_hz),
                   cache=Path(folder) / "work", **kw)
    assert blocks() == before, "the study did not run this ensemble (other settings)"
    return {k: v.as_json(spec.J_hz) for k, v in leakage_lifetimes(res).items()}


def check_lifetimes(s_points: dict, ds_points, want: dict, ideal: bool):
    """One point of a study: its summary's tau_1, tau_L, eta (``s_points``: {name: JSON}) are ``want`` (as JSON:
    :func:`stored_lifetimes`), its dataset's variables (``ds_points``: the dataset at the point) hold the same
    numbers; in ideal conditions eta = 1 within its error, else 0 < eta < 1 (hardware decay ends some leakage)."""
    for k, keys in LIFETIME_KEYS.items():
        assert set(s_points[k]) == keys and s_points[k] == want[k], (k, s_points[k], want[k])
    for k in ("leakage_lifetime_qubit", "leakage_lifetime_array"):
        assert s_points[k]["value_J"] > 0 and s_points[k]["tail"] in ("fit", "bound", "lower bound")
        assert float(ds_points[f"{k}_J"]) == s_points[k]["value_J"]
        assert float(ds_points[f"{k}_error_J"]) == s_points[k]["error_J"]
    eta = s_points["removal_efficiency"]
    assert float(ds_points["removal_efficiency"]) == eta["value"]
    assert float(ds_points["removal_efficiency_error"]) == eta["error"]
    if ideal:  # no hardware decay: the reset site ends all the leakage
        assert abs(eta["value"] - 1.0) <= eta["error"] + 1e-12, eta
    else:
        assert 0.0 < eta["value"] < 1.0


def qubit_rate_and_late_slope(spec, real):
    """(qubit_rates' Gamma_1, the late decay rate of the one-excitation master equation's <n_1>(t) fitted over
    [T1, 3 T1]) of a start whose qubit mode holds >= 0.9 of its weight; None for a hybridized start (the slope then
    mixes modes of near rates).  One clock phase: the same late rate."""
    import numpy as np

    from lru_mps.analysis.rates import qubit_rates
    from lru_mps.references.single_excitation import qubit_population_n1

    E, V = np.linalg.eigh(spec.one_particle_hamiltonian(real))
    if np.max(V[0] ** 2) < 0.9:
        return None
    r = qubit_rates(spec, real)
    assert r.method == "exact" and r.gamma1 > r.floor
    times = np.linspace(0.0, 3.0 / r.gamma1, 301)
    n1 = qubit_population_n1(spec, real, times, t0_nodes=1)
    late = times >= 1.0 / r.gamma1
    return r.gamma1, -np.polyfit(times[late], np.log(n1[late]), 1)[0]
