"""Every combination of options is refused with one line or right: a pairwise covering array against the Lindblad
reference (docs/validation: "the combination test").

The options (FACTORS) are the reset kind, the conditions, the temperature (0, 100, 300 mK), a device file with
per-site T1 and Tphi, each spread and disorder pattern, the hopping profile, the thermal bath, the readout (an error, a confusion
matrix), integrate-decay, the thermal strata (off, the short arrays, all arrays, by number at cost-aware odds), the estimator and the engine (exact, sector, auto; the MPS engine is checked per
trajectory against the exact one at L = 5 below, at L = 3 it is 40x slower than the exact engine).  :func:`covering_cases` builds a set of cases in which
every pair of values of two options appears at least once (a greedy covering array, deterministic).  Each case
is, at L = 3 and one fixed realization:

* refused, where :func:`expected_refusal` (written here from the physics, not from the package's rule book) says
  it must be: with one line (a ParameterError) that names the option at fault; a case the package refuses that
  the physics allows fails, and so does a case it runs that the physics refuses;
* or run, and its headline curves (P_star^(L), <n_1>, C) compared with the Lindblad reference of the same spec
  and realization: every resolved point within 4 standard errors (n mu / carrier >= 100, as
  tests/test_vs_reference.py), and the window sum over t > 0 within 3.5 jackknife errors (16 blocks).  Each
  error is combined with the resolution of n rows, carrier / n per point: a class of rows rarer than 1/n (a
  readout's false report, a removal in ideal conditions) is often not drawn at all, and then moves the mean by
  up to its weight without showing in the sample's own error (measured: an ideal periodic-feedback case, 500
  rows, no removal drawn, <n_1> 0.0044 above the reference with a standard error of 1e-5).

Power: the window sum's 3 sigma, as a fraction of the reference's window sum, is the smallest bias the case
detects.  The full form (LRU_MPS_LONG_SCALE=1, FULL trajectories per case) asserts it is <= 5 % for every curve
that carries signal; the reduced form (CI) asserts the same detection projected to the full form's count
(sigma ~ 1/sqrt(n)), so a case whose variance grew would fail in CI too.  Measured: see POWER below.

A coupling graph does not fit at L = 3: test_graph_case_right runs a 2 x 2 grid (start and reset on opposite
corners, from the user's options) for every reset kind with feedback or dissipation and the exact and sector engines
with the same checks; test_refusals_name_the_option also asks the MPS engine for a graph (refused, naming the engine).
Several reset sites (LRUs on both neighbours of the qubit on that grid) run in test_reset_sites_case_right.

Separately, at L = 5 (past the Lindblad reference) the sector and auto engines follow the exact engine per
trajectory on cases of the array with events (test_engines_agree_per_trajectory_L5).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from conftest import long_scale
from lru_mps.analysis.decay import reference_curves
from lru_mps.errors import ParameterError
from lru_mps.physics.model import ArraySpec
from lru_mps.references.lindblad import lindblad_observables
from lru_mps.run.simulate import simulate

#: option -> its values (the first is the default); a case is one value per option
FACTORS = {
    "reset": ("periodic", "random", "dissipation", "none"),
    "conditions": ("realistic", "ideal"),
    "temperature": ("100mK", "0", "300mK"),
    "device": (False, True),
    "disorder": ("box", "e2_spread", "frequency_noise", "hopping_spread", "gaussian", "quasiperiodic", "alternating"),
    "thermal_bath": (False, True),
    "readout": ("ideal", "error", "confusion"),
    "integrate_decay": (False, True),
    "thermal_strata": (False, True, "all", "cost"),  # "all" takes the long arrays too; at L = 3 the same enumeration;
    # "cost": each row's number of thermal excitations at cost-aware odds (lru_mps.run.thermal_number)
    "estimator": ("auto", "sampled", "branch"),
    "engine": ("exact", "sector", "auto"),
    "hopping_profile": ("uniform", "transfer", "linear"),
}
#: pairs of option values that the model refuses outright (a readout needs feedback measurements; a device file
#: gives every frequency and coupling, so there is no pattern or profile to draw): kept out of the covering array, refused by
#: test_refusals_name_the_option
EXCLUDED = [({"readout": r, "reset": k}, f"readout_{r}") for r in ("error", "confusion") for k in ("dissipation", "none")] \
    + [({"device": True, "disorder": d}, "disorder_pattern") for d in ("gaussian", "quasiperiodic", "alternating")] \
    + [({"device": True, "hopping_profile": p}, "hopping_profile") for p in ("transfer", "linear")]


def _allowed(case: dict) -> bool:
    return not any(all(case.get(k) == v for k, v in pair.items()) for pair, _ in EXCLUDED)
#: a device at the paper's working point with per-site T1 and Tphi (different rates on every site)
DEVICE = {
    "frequencies": ["7512MHz", "7468MHz", "7530MHz"],
    "anharmonicities": ["274MHz", "185.95MHz", "310.1MHz"],
    "couplings": ["5.1MHz", "4.9MHz"],
    "t1": ["10us", "14us", "8us"],
    "tphi": ["8us", "6us", "12us"],
}
CONFUSION = "0.9,0.06,0.04; 0.05,0.9,0.05; 0.03,0.07,0.9"
CURVES = {"leakage_array": "leakage", "qubit_population": "qubit", "qubit_coherence": "coherence"}
CARRIER = {"leakage_array": 1.0, "qubit_population": 1.0, "qubit_coherence": 0.5}
T_FINAL, POINTS = 300.0, 16
#: trajectories per case in the full form; the reduced form runs FULL * long_scale() ** 2.5 (12000: a periodic
#: feedback case at 300 mK with a bath and a confusion readout projects its coherence window's 3 sigma to 5.6 % at
#: 8000, from 250 rows)
FULL = 12000
#: the smallest relative bias a window sum must detect at 3 sigma in the full form
POWER = 0.05


def covering_cases(factors: dict, seed: int = 7) -> list[dict]:
    """A pairwise covering array: cases in which every pair of values of two factors appears at least once.

    Greedy (AETG-like): each new case starts from the uncovered pair of the two factors with the most values,
    then fills the other factors one at a time with the value that covers most uncovered pairs (ties broken by
    a seeded generator, so the set is the same every run).
    """
    names = list(factors)
    rng = np.random.default_rng(seed)
    uncovered = {(a, va, b, vb) for a, b in itertools.combinations(names, 2)
                 for va in factors[a] for vb in factors[b] if _allowed({a: va, b: vb})}
    cases = []
    while uncovered:
        a, va, b, vb = max(uncovered, key=lambda p: (len(factors[p[0]]) * len(factors[p[2]]), repr(p)))
        case = {a: va, b: vb}
        for name in [n for n in names if n not in case]:
            best, score = None, -1
            for value in rng.permutation(len(factors[name])):
                v = factors[name][value]
                if not _allowed({**case, name: v}):
                    continue
                s = sum((x, case[x], name, v) in uncovered or (name, v, x, case[x]) in uncovered for x in case)
                if s > score:
                    best, score = v, s
            case[name] = best
        cases.append({n: case[n] for n in names})
        uncovered -= {(x, case[x], y, case[y]) for x, y in itertools.combinations(names, 2)}
    return cases


CASES = covering_cases(FACTORS)


def test_the_cases_cover_every_pair():
    for a, b in itertools.combinations(FACTORS, 2):
        seen = {(c[a], c[b]) for c in CASES}
        allowed = {(x, y) for x, y in itertools.product(FACTORS[a], FACTORS[b]) if _allowed({a: x, b: y})}
        assert seen == allowed, (a, b, allowed - seen)
    assert all(_allowed(c) for c in CASES) and len(CASES) <= 40


def build_spec(case: dict) -> ArraySpec:
    kw = dict(reset=case["reset"], rate="0.3J" if case["reset"] == "dissipation" else "0.05J",
              conditions=case["conditions"], temperature=case["temperature"], thermal_bath=case["thermal_bath"])
    d = case["disorder"]
    if d in ("e2_spread", "frequency_noise"):
        kw[d] = "0.05J"
    elif d == "hopping_spread":
        kw[d] = "0.1"
    elif d != "box":
        kw["disorder_pattern"] = d
    if case["hopping_profile"] != "uniform":
        kw["hopping_profile"] = "linear:0.6:1.4" if case["hopping_profile"] == "linear" else "transfer"
    if case["readout"] == "error":
        kw["readout_error"] = 0.06
    elif case["readout"] == "confusion":
        kw["readout_confusion"] = CONFUSION
    if case["device"]:
        return ArraySpec.from_user(device=dict(DEVICE), **kw)
    return ArraySpec.from_user(length=3, **kw)


def expected_refusal(case: dict, spec: ArraySpec) -> str | None:
    """The option the physics says must be refused for this case (or None), written from the model, not the code.

    * the branch estimator is exact only where no event raises the excitation number (a readout error's false
      report writes an excitation into the reset site; a bath at T > 0 heats) and every site dephases at one
      rate (its dephasing clock runs at site 1's);
    """
    if case["estimator"] == "branch":
        finite_t1 = case["device"] or case["conditions"] == "realistic"
        heats = case["thermal_bath"] and case["temperature"] != "0" and finite_t1
        tphi = [ch.rate for ch in spec.channels() if ch.name == "dephasing"]
        if case["readout"] != "ideal" or heats or len(set(tphi)) > 1:
            return "estimator"
    return None


def _run(case: dict, n: int):
    """(spec, result) or (spec, ParameterError) of a case."""
    try:
        spec = build_spec(case)
    except ParameterError as err:
        return None, err
    real = spec.draw_realization(np.random.default_rng(11))
    try:
        res = simulate(spec, realization=real, t_final=T_FINAL, time_points=POINTS, trajectories=n, seed=5,
                       engine=case["engine"], estimator=case["estimator"], integrate_decay=case["integrate_decay"],
                       thermal_strata=case["thermal_strata"])
    except ParameterError as err:
        return spec, err
    return (spec, real), res


def _window(res, curve: np.ndarray, name: str) -> tuple[float, float, float]:
    """(window sum of the ensemble, of the reference, jackknife sigma of the ensemble's) over t > 0."""
    parts = res.leave_one_out()
    B = len(parts)
    w = res.times > 0
    total = float(res.observable(name).mean[w].sum())
    sums = np.array([p.observable(name).mean[w].sum() for p in parts])
    sigma = float(np.sqrt((B - 1) / B * np.sum((sums - sums.mean()) ** 2))) if B > 1 else 0.0
    return total, float(curve[w].sum()), sigma


def _trajectories() -> int:
    """FULL at LRU_MPS_LONG_SCALE=1; the reduced form (0.25) runs FULL / 32 = 375."""
    return max(250, int(FULL * long_scale() ** 2.5))


@pytest.mark.long
@pytest.mark.parametrize("k", range(len(CASES)), ids=[f"case{k}" for k in range(len(CASES))])
def test_case_refused_or_right(k):
    case = CASES[k]
    n = _trajectories()
    spec_real, res = _run(case, n)
    spec = spec_real[0] if isinstance(spec_real, tuple) else spec_real
    assert spec is not None, (case, str(res))  # the builder refuses only the EXCLUDED pairs
    want = expected_refusal(case, spec)
    if isinstance(res, ParameterError):
        msg = str(res)
        assert "\n" not in msg, msg
        assert want is not None, f"refused, but the physics allows it: {case}: {msg}"
        assert want in msg, (want, msg)
        return
    assert want is None, f"ran, but it must be refused ({want}): {case}"
    _assert_right(*spec_real, res, n, case)


def _assert_right(spec, real, res, n, case):
    """The case's headline curves against the Lindblad reference of the same spec and realization: every resolved
    point within 4 standard errors (with the 1/n floor), the window sum within 3.5 jackknife errors, and the power
    projected to the full form."""
    refs = {i: lindblad_observables(spec, real, i, res.times, t0_nodes=200) for i in CURVES.values()}
    curves = reference_curves(refs)
    scale = (n / FULL) ** 0.5
    for name in CURVES:
        ms, expected = res.observable(name), curves[name]
        use = (n * np.abs(expected) / CARRIER[name] >= 100) & (res.times > 0)
        floor = CARRIER[name] / n  # what a class of rows rarer than 1/n, undrawn, can move the mean by
        dev = np.abs(ms.mean - expected)[use]
        bound = 4.0 * np.hypot(ms.sem[use], floor)
        assert np.all(dev <= bound), (name, case, float(np.max(dev / bound * 4)))
        total, ref, sigma = _window(res, expected, name)
        if ref < 1e-3 * res.times.size:  # no signal in this curve (e.g. a coherence that is gone)
            continue
        w_floor = floor * int(np.count_nonzero(res.times > 0))
        assert abs(total - ref) <= 3.5 * math.hypot(sigma, w_floor), (name, case, total, ref, sigma, w_floor)
        assert 3.0 * sigma * scale / ref <= POWER, (name, case, "detects", 3.0 * sigma * scale / ref)


def test_refusals_name_the_option():
    """The refused cases and the excluded pairs are refused at once (no run), with one line naming the option."""
    for pair, key in EXCLUDED:
        case = {**{k: v[0] for k, v in FACTORS.items()}, **pair}
        with pytest.raises(ParameterError) as err:
            build_spec(case)
        assert err.value.name == key and "\n" not in str(err.value), str(err.value)
    refused = 0
    for case in CASES:
        spec = build_spec(case)
        want = expected_refusal(case, spec)
        if want is None:
            continue
        with pytest.raises(ParameterError) as err:
            simulate(spec, t_final=1.0, time_points=2, trajectories=1, engine=case["engine"],
                     estimator=case["estimator"], integrate_decay=case["integrate_decay"])
        assert want in str(err.value) and "\n" not in str(err.value), (want, str(err.value))
        refused += 1
    assert 0 < refused < len(CASES)
    # a coupling graph: the MPS engine needs a chain (one line naming the engine, before any run)
    with pytest.raises(ParameterError) as err:
        simulate(_graph_spec("periodic"), t_final=1.0, time_points=2, trajectories=1, engine="mps")
    assert err.value.name == "engine" and "\n" not in str(err.value), str(err.value)
    # a pattern along the chain's site numbers has no meaning on a graph (nor on a chain renumbered from its middle):
    # refused naming the pattern; the patterns drawn site by site run there
    for pattern in ("quasiperiodic", "alternating"):
        for where in (dict(geometry="grid:2x2"), dict(length=5, start_site=3)):
            with pytest.raises(ParameterError) as err:
                ArraySpec.from_user(disorder_pattern=pattern, **where)
            assert err.value.name == "disorder_pattern" and "\n" not in str(err.value), str(err.value)
        assert ArraySpec.from_user(length=5, disorder_pattern=pattern).disorder_pattern == pattern
    assert ArraySpec.from_user(geometry="grid:2x2", disorder_pattern="gaussian").geometry is not None


#: the coupling graph at the covering array's L = 3 does not fit: a 2 x 2 grid, start and reset on opposite corners
#: (given as the user types them), realistic conditions at 100 mK, the file's rates
GRAPH_RESETS = ("periodic", "random", "dissipation")
GRAPH_ENGINES = ("exact", "sector")


def _graph_spec(reset: str) -> ArraySpec:
    return ArraySpec.from_user(geometry="grid:2x2", start_site="1,1", reset_site="2,2", reset=reset,
                               rate="0.3J" if reset == "dissipation" else "0.05J", conditions="realistic",
                               temperature="100mK")


@pytest.mark.long
@pytest.mark.parametrize("engine", GRAPH_ENGINES)
@pytest.mark.parametrize("reset", GRAPH_RESETS)
def test_graph_case_right(reset, engine):
    """A 2 x 2 grid x reset kind x engine against the Lindblad reference, with test_case_refused_or_right's checks
    (reduced form: a few hundred trajectories)."""
    spec = _graph_spec(reset)
    assert spec.geometry is not None and spec.transit_hops == 2
    real = spec.draw_realization(np.random.default_rng(11))
    n = _trajectories()
    res = simulate(spec, realization=real, t_final=T_FINAL, time_points=POINTS, trajectories=n, seed=5,
                   engine=engine)
    _assert_right(spec, real, res, n, {"geometry": "grid:2x2", "reset": reset, "engine": engine})


#: several reset sites (LRUs): the 2 x 2 grid with the qubit at (1, 1) and LRUs on both its neighbours, realistic at
#: 100 mK; periodic feedback (with a readout error) and engineered dissipation (random feedback is refused by name)
RESET_SITES_CASES = {"periodic": dict(rate="0.05J"), "periodic, readout": dict(rate="0.05J", readout_error=0.05),
                     "dissipation": dict(rate="0.3J")}


@pytest.mark.long
@pytest.mark.parametrize("engine", GRAPH_ENGINES)
@pytest.mark.parametrize("name", RESET_SITES_CASES)
def test_reset_sites_case_right(name, engine):
    """Two reset sites x reset kind x engine against the Lindblad reference (every reset site's channels), with
    test_case_refused_or_right's checks."""
    spec = ArraySpec.from_user(geometry="grid:2x2", start_site="1,1", reset_site="1,2; 2,1",
                               reset=name.split(",")[0], conditions="realistic", temperature="100mK",
                               **RESET_SITES_CASES[name])
    assert spec.reset_sites == (2, 3) and spec.transit_hops == 1
    real = spec.draw_realization(np.random.default_rng(11))
    n = _trajectories()
    res = simulate(spec, realization=real, t_final=T_FINAL, time_points=POINTS, trajectories=n, seed=5,
                   engine=engine)
    _assert_right(spec, real, res, n, {"reset_sites": 2, "case": name, "engine": engine})


@pytest.mark.long
def test_device_graph_case_right():
    """A device file on a graph (tests/test_device_file.py's 4-site triangle with a tail, its per-site T1 and Tphi,
    80 mK), periodic feedback, spreads drawn on top (one coupling per edge), the sector engine: against the Lindblad
    reference with test_case_refused_or_right's checks."""
    from test_device_file import GRAPH

    spec = ArraySpec.from_device(GRAPH, reset="periodic", rate="0.05J", hopping_spread="5%", e2_spread="2MHz")
    assert spec.geometry is not None and spec.device.edges == spec.geometry.edges
    real = spec.draw_realization(np.random.default_rng(11))
    n = _trajectories()
    res = simulate(spec, realization=real, t_final=T_FINAL, time_points=POINTS, trajectories=n, seed=5,
                   engine="sector")
    _assert_right(spec, real, res, n, {"device": "graph", "reset": "periodic", "engine": "sector"})


#: L = 5 (sector, MPS) and L = 7 (auto: its per-trajectory policy starts at L = 7) cases with events the Lindblad
#: reference cannot reach: a readout error and a bath at 300 mK on a linear hopping profile, random feedback with a confusion matrix and
#: spreads, engineered dissipation with a quasiperiodic pattern and frequency noise
ENGINE_CASES = {
    "readout, bath": dict(readout_error=0.06, thermal_bath=True, temperature="300mK", rate="0.1J",
                          hopping_profile="linear:0.7:1.3"),
    "random, confusion, spreads": dict(reset="random", rate="0.1J", readout_confusion=CONFUSION, temperature="300mK",
                                       e2_spread="0.05J", hopping_spread="0.1"),
    "dissipation, quasiperiodic": dict(reset="dissipation", rate="0.3J", disorder_pattern="quasiperiodic",
                                       temperature="300mK", frequency_noise="0.05J"),
}


@pytest.mark.long
@pytest.mark.parametrize("name", ENGINE_CASES)
def test_engines_agree_per_trajectory(name):
    """The sector, auto and MPS engines give the exact engine's trajectories (the same seeds): sector and auto to
    1e-9 (exact propagation both), MPS to 1e-4 (its Trotter step and truncation; measured <= 3.4e-6).  The MPS
    engine runs in the full form only (30 s a case) and on one case reduced."""
    run = dict(t_final=100.0, time_points=6, trajectories=6, seed=3, estimator="sampled", workers=1)
    engines = {"sector": (5, 1e-9), "auto": (7, 1e-9)}
    if long_scale() >= 1.0 or name == "readout, bath":
        engines["mps"] = (5, 1e-4)
    exact = {}
    for engine, (L, tol) in engines.items():
        spec = ArraySpec.from_user(length=L, **ENGINE_CASES[name])
        if L not in exact:
            res = simulate(spec, engine="exact", **run)
            exact[L] = {o: res.observable(o).mean for o in CURVES}
        if engine == "mps" and long_scale() < 1.0:  # reduced: the first 2 trajectories to 40/J
            short = {**run, "t_final": 40.0, "trajectories": 2}
            ref, res = simulate(spec, engine="exact", **short), simulate(spec, engine="mps", **short)
            for o in CURVES:
                assert np.max(np.abs(res.observable(o).mean - ref.observable(o).mean)) <= tol, (engine, o)
            continue
        res = simulate(spec, engine=engine, **run)
        if engine == "auto":
            assert res.settings.engine == "auto" and res.diagnostics  # the per-trajectory policy ran
        for o in CURVES:
            assert np.max(np.abs(res.observable(o).mean - exact[L][o])) <= tol, (engine, o)
