"""A real readout at the reset site (issue 22 item 4; docs/physics.md §4.4, lru_mps/physics/readout.py).

The feedback measurement's true outcome m is reported as n with p(n|m) and the
feedback applies X_0n, the swap of |0> and |n> on site L: Kraus operators
sqrt(p(n|m)) X_0n |m><m|_L.  Checked here:

* off is today's run bit for bit (EPS = 0 and the identity matrix are no
  readout at all: no extra random number, the same path; the pinned values of
  tests/test_pinned.py hold the numbers of earlier commits);
* the trajectories agree with the Lindblad reference (which gains the same
  maps) at L = 3 (periodic and random feedback, symmetric EPS = 0.1, ideal
  hardware, so that every excitation beyond the initial one is injected by a
  false report) and L = 2 (an asymmetric confusion matrix, hardware noise and
  a hot array): P_star^(L), <n_1> and the site-L populations within 4
  standard errors at the resolved points; the readout moves the reference by
  many standard errors there, so ignoring it fails;
* a closed form: one isolated reset site under periodic measurement with
  decay (the measure-and-swap chain's stationary state, averaged over the
  period), against the reference and the trajectories;
* the branch estimator is refused with a clear error, auto picks sampled;
  bad values give one line naming the parameter (API, CLI, study TOML);
* the sector and MPS engines follow the exact engine's trajectory through
  the N-raising operators |1><0|_L and |2><0|_L of false reports.

Cost (one core, measured): ~55 s in all, each test under 8 s (numba caches warm).
"""

import math

import numpy as np
import pytest
from click.testing import CliRunner

from helpers import batched, one, records_differ
from lru_mps.analysis.decay import reference_curves
from lru_mps.engines.exact.state import ExactState
from lru_mps.engines.sector.engine import SectorEngine
from lru_mps.errors import ParameterError
from lru_mps.physics.rules import branch_verdict
from lru_mps.physics import operators as ops
from lru_mps.physics import readout as readouts
from lru_mps.physics.conditions import Conditions, Reset
from lru_mps.physics.model import ArraySpec, Realization
from lru_mps.physics.initial_states import product_state
from lru_mps.references.lindblad import lindblad_observables
from lru_mps.run.cache import run_key
from lru_mps.run.settings import RunSettings, feedback_path, make_settings, time_grid
from lru_mps.run.simulate import simulate

NSIG = 4.0
#: compare where the reference says this many trajectories carry the value (then the sem is reliable)
CARRIERS = 40
T0_NODES = 400
CONFUSION = [[0.9, 0.06, 0.04], [0.1, 0.85, 0.05], [0.05, 0.15, 0.8]]


# ------------------------------------------------------------------------------------------ off = today
@pytest.mark.parametrize("reset", ["periodic", "random"])
def test_off_is_todays_run_bit_for_bit(reset):
    base = ArraySpec.from_user(length=3, reset=reset, rate="0.2J", t1="300/J", tphi="300/J", temperature="300mK")
    for off in (ArraySpec.from_user(length=3, reset=reset, rate="0.2J", t1="300/J", tphi="300/J",
                                    temperature="300mK", readout_error=0),
                base.replace(readout=((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)))):
        assert off.readout is None and off == base and off.as_dict() == base.as_dict()
        for feedback in ("fast", "reference"):
            kw = dict(t_final=40.0, time_points=5, trajectories=12, seed=5, estimator="sampled", feedback=feedback,
                      workers=1)
            a, b = simulate(base, **kw), simulate(off, **kw)
            assert run_key(a.spec, a.settings)[0] == run_key(b.spec, b.settings)[0]
            for name in ("leakage_array", "qubit_population", "qubit_coherence"):
                assert np.array_equal(a.observable(name).mean, b.observable(name).mean), name
                assert np.array_equal(a.observable(name).sem, b.observable(name).sem), name
    on = base.replace(readout=readouts.symmetric(0.05))
    assert "readout_confusion" in on.as_dict() and run_key(on, make_settings(on))[0] != run_key(base, make_settings(base))[0]
    # the feedback trains stay on when off; a readout error takes the reference path
    settings = make_settings(base, estimator="sampled")
    assert feedback_path(base, settings) == "fast" and feedback_path(on, settings) == "reference"


# ------------------------------------------------------------------------------- against the reference
def _compare(ms, expected, n, allowance, carrier=1.0):
    """Within NSIG sem (+ the reference's t0-quadrature error) where >= CARRIERS trajectories carry the value."""
    use = n * np.abs(expected) / carrier >= CARRIERS
    dev = np.abs(ms.mean - expected)[use]
    assert np.all(dev <= NSIG * ms.sem[use] + allowance + 1e-12), (np.max(dev / (NSIG * ms.sem[use] + 1e-12)),
                                                                    ms.mean, expected, ms.sem)
    return use


def _check(spec, real, trajectories, t_final, seed=7):
    res = simulate(spec, realization=real, t_final=t_final, time_points=9, trajectories=trajectories, seed=seed,
                   engine="exact", init=("leakage", "qubit"), workers=1)
    assert res.settings.estimator == "sampled"  # auto: the branch is not exact with a readout error
    refs = {i: lindblad_observables(spec, real, i, res.times, t0_nodes=T0_NODES) for i in ("leakage", "qubit")}
    curves = reference_curves(refs)
    ideal = spec.replace(readout=None)
    plain = reference_curves({i: lindblad_observables(ideal, real, i, res.times, t0_nodes=T0_NODES)
                              for i in ("leakage", "qubit")})
    quad = 1.0 / (2 * T0_NODES) if spec.reset.kind == "periodic" else 0.0
    compared, moved = 0, {}
    for name in ("leakage_array", "qubit_population"):
        ms = res.observable(name)
        compared += int(np.count_nonzero(_compare(ms, curves[name], trajectories, quad)))
        moved[name] = float(np.max(np.abs(curves[name] - plain[name]) / (ms.sem + 1e-12)))
    plain_pops = {i: lindblad_observables(ideal, real, i, res.times, t0_nodes=T0_NODES).populations[:, -1]
                  for i in refs}
    for init, ref in refs.items():
        sites = {}
        for key, pops in (("with", ref.populations[:, -1]), ("without", plain_pops[init])):  # site L
            sites[key] = {"site_population": (pops[:, 1] + 2 * pops[:, 2], 2.0), "site_leakage": (pops[:, 2], 1.0)}
        for what, (expected, carrier) in sites["with"].items():
            last = _Site(res.site_resolved(init, what))
            compared += int(np.count_nonzero(_compare(last, expected, trajectories, 2 * quad, carrier)))
            moved[f"{init}/{what}_L"] = float(np.max(np.abs(expected - sites["without"][what][0]) / (last.sem + 1e-12)))
    assert compared >= 30, compared
    # the readout matters here: the reference without it is far outside the bands (measured: 2-9 sem on the
    # headline quantities, 7-12 on the site-L ones)
    assert max(moved.values()) > 10.0 and sum(v > 5.0 for v in moved.values()) >= 3, moved
    return res, curves


class _Site:
    """The last site's column of a site-resolved mean/sem."""

    def __init__(self, ms):
        self.mean, self.sem = np.asarray(ms.mean)[:, -1], np.asarray(ms.sem)[:, -1]


@pytest.mark.parametrize("reset", ["periodic", "random"])
def test_trajectories_agree_with_lindblad_L3(reset):
    spec = ArraySpec.from_user(length=3, conditions="ideal", reset=reset, rate="0.1J", readout_error=0.1)
    real = spec.draw_realization(np.random.default_rng(21))
    res, curves = _check(spec, real, trajectories=1000, t_final=200.0)
    # the false reports inject leakage: the array holds more than the initial |2> at first
    assert curves["leakage_array"].max() > 1.01


@pytest.mark.parametrize("reset", ["periodic", "random"])
def test_trajectories_agree_with_lindblad_L2_matrix_hot(reset):
    spec = ArraySpec.from_user(length=2, conditions="realistic", reset=reset, rate="0.2J", t1="200/J", tphi="300/J",
                               temperature="300mK", readout_confusion=CONFUSION)
    real = spec.draw_realization(np.random.default_rng(5))
    _check(spec, real, trajectories=1000, t_final=120.0)


# ------------------------------------------------------------------------------------------ closed form
def _isolated_site(P, gamma: float, tau: float) -> np.ndarray:
    """Site-L populations of one isolated qutrit with decay gamma (|2> -> |1> at 2 gamma, |1> -> |0> at gamma),
    measured every tau with the readout P, averaged over the phase of the clock (a late fixed time).

    Between measurements (a = exp(-gamma s)): p2 -> a^2 p2, p1 -> a p1 + 2 (a - a^2) p2.  A measurement maps the
    populations with R[k, m] = sum_n p(n|m) [X_0n(m) = k].  The populations q right after a measurement are
    the stationary vector of R E(tau); the average over the period replaces a, a^2 by their means A1, A2.
    """
    def E(a1, a2):
        return np.array([[1.0, 1.0 - a1, 1.0 - 2.0 * a1 + a2], [0.0, a1, 2.0 * (a1 - a2)], [0.0, 0.0, a2]])

    a = math.exp(-gamma * tau)
    A1 = (1.0 - a) / (gamma * tau) if gamma > 0 else 1.0
    A2 = (1.0 - a * a) / (2.0 * gamma * tau) if gamma > 0 else 1.0
    w, v = np.linalg.eig(readouts.population_map(P) @ E(a, a * a))
    q = np.real(v[:, np.argmin(np.abs(w - 1.0))])
    q /= q.sum()
    return E(A1, A2) @ q


def test_symmetric_error_without_decay_is_eps_over_two():
    """No decay: q0 = 1 - EPS after every measurement, and the chain is stationary from the first one."""
    for eps in (0.05, 0.2, 2 / 3):
        np.testing.assert_allclose(_isolated_site(readouts.symmetric(eps), 0.0, 2.0), [1 - eps, eps / 2, eps / 2],
                                   atol=1e-9)


def test_isolated_reset_site_matches_the_closed_form():
    """L = 2 with site 1 far detuned (|1>: 40 J, |2>: 80 J apart, U = 200 J): site L is one qutrit measured every
    2/J with EPS = 0.4 and decaying at 1/T1q = 0.2 J.  From the empty reset site (qubit start, T = 0) the false
    reports build up |1> and |2> populations that the closed form gives; the reference agrees to the
    hybridization (J/40 J)^2 ~ 6e-4, the trajectories within 4 standard errors."""
    eps, G, T1 = 0.4, 0.5, 5.0
    spec = ArraySpec(L=2, Ubar=200.0, W=40.0, reset=Reset("periodic", G), conditions=Conditions(T1q=T1),
                     readout=readouts.symmetric(eps))
    real = Realization(dw=np.array([-20.0, 20.0]), U=np.array([200.0, 200.0]))
    expected = _isolated_site(spec.readout, 1.0 / T1, 1.0 / G)
    assert expected[1] > 0.05 and expected[2] > 0.02  # injected, and not eps/2: the decay moves |2> to |1>
    assert abs(expected[2] - eps / 2) > 0.05
    times = np.linspace(0.0, 60.0, 13)
    late = times >= 20.0  # 10 periods: stationary (q1, q2 converge like EPS^k)
    ref = lindblad_observables(spec, real, "qubit", times, t0_nodes=T0_NODES).populations[late, 1]
    assert np.max(np.abs(ref - expected)) < 3e-3, (ref, expected)
    n = 1500
    res = simulate(spec, realization=real, t_final=60.0, time_points=13, trajectories=n, seed=3, engine="exact",
                   init="qubit", estimator="auto", workers=1)
    for what, value in (("site_leakage", expected[2]), ("site_population", expected[1] + 2 * expected[2])):
        # the late points' mean, with its jackknife error over the trajectory blocks (the points share trajectories)
        got = float(np.asarray(res.site_resolved("qubit", what).mean)[late, 1].mean())
        parts = np.array([np.asarray(r.site_resolved("qubit", what).mean)[late, 1].mean() for r in res.leave_one_out()])
        B = parts.size
        sigma = float(np.sqrt((B - 1) / B * np.sum((parts - parts.mean()) ** 2)))
        assert B >= 8 and abs(got - value) <= NSIG * sigma + 3e-3, (what, got, value, sigma)


# ------------------------------------------------------------------------------------------- estimator and input
def test_branch_is_refused_and_auto_picks_sampled():
    spec = ArraySpec.from_user(length=3, conditions="ideal", reset="periodic", readout_error=0.02)
    assert not branch_verdict(spec) and branch_verdict(spec.replace(readout=None))
    assert make_settings(spec).estimator == "sampled"
    assert make_settings(spec.replace(readout=None)).estimator == "branch"
    with pytest.raises(ParameterError) as err:
        make_settings(spec, estimator="branch")
    assert err.value.name == "estimator" and "readout error" in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(ParameterError, match="readout error"):
        simulate(spec, estimator="branch", trajectories=1, t_final=1.0, time_points=2)


@pytest.mark.parametrize("kwargs,name,text", [
    (dict(readout_error=-0.01), "readout_error", "EPS in [0, 2/3]"),
    (dict(readout_error=0.7), "readout_error", "EPS in [0, 2/3]"),
    (dict(readout_error="x"), "readout_error", "a number EPS"),
    (dict(readout_confusion=[[0.9, 0.1, 0.1], [0, 1, 0], [0, 0, 1]]), "readout_confusion", "rows that sum to 1"),
    (dict(readout_confusion=[[1.2, -0.2, 0], [0, 1, 0], [0, 0, 1]]), "readout_confusion", "entries p(n|m) in [0, 1]"),
    (dict(readout_confusion=[[1, 0], [0, 1]]), "readout_confusion", "a 3x3 matrix"),
    (dict(readout_confusion=CONFUSION, readout_error=0.1), "readout_confusion", "not together"),
    (dict(readout_error=0.1, reset="dissipation"), "readout_error", "needs a feedback measurement"),
])
def test_bad_values_are_one_clear_line(kwargs, name, text):
    with pytest.raises(ParameterError) as err:
        ArraySpec.from_user(**kwargs)
    assert err.value.name == name and text in str(err.value) and "\n" not in str(err.value), str(err.value)


def test_cli_and_study_toml(tmp_path):
    from lru_mps_cli.main import main
    from lru_mps.studies.base import load_config
    from lru_mps.studies.common import spec_of

    res = CliRunner().invoke(main, ["simulate", "--trajectories", "1", "--readout-error", "0.9"])
    assert res.exit_code == 2 and "Traceback" not in res.output
    (line,) = [x for x in res.output.splitlines() if x.startswith("Error:")]
    assert line.startswith("Error: --readout-error=0.9 is not allowed: EPS in [0, 2/3]"), line
    res = CliRunner().invoke(main, ["simulate", "--trajectories", "1", "--readout-confusion", "1,0,0;0,1,0;0,0.5,0.4"])
    assert res.exit_code == 2 and "--readout-confusion=1,0,0;0,1,0;0,0.5,0.4 is not allowed: rows that sum to 1" \
        in res.output
    res = CliRunner().invoke(main, ["simulate", "--trajectories", "2", "--length", "2", "--t-final", "20/J",
                                    "--time-points", "3", "--readout-error", "0.05", "--workers", "1"])
    assert res.exit_code == 0, res.output
    assert "readout at the reset site: symmetric error EPS=0.05" in res.output
    assert "estimator=sampled" in res.output and "reference path" in res.output
    for opt in ("--readout-error", "--readout-confusion"):
        assert opt in CliRunner().invoke(main, ["study", "dynamics", "--help"]).output
    toml = tmp_path / "d.toml"
    toml.write_text('study = "dynamics"\n[model]\nreadout_confusion = [[0.9, 0.06, 0.04], [0.1, 0.85, 0.05], '
                    '[0.05, 0.15, 0.8]]\n')
    from lru_mps.studies.base import study_defaults

    cfg = load_config("dynamics", study_defaults("dynamics")[0], toml, {})
    assert spec_of(cfg).readout == tuple(tuple(r) for r in CONFUSION)
    cfg = load_config("dynamics", study_defaults("dynamics")[0], None, {"readout_error": 0.02})
    assert spec_of(cfg).readout == readouts.symmetric(0.02)


# ------------------------------------------------------------------------------------------- engines
@pytest.mark.parametrize("op", [np.outer(ops.ket(1), ops.ket(0)), np.outer(ops.ket(2), ops.ket(0)),
                                np.outer(ops.ket(2), ops.ket(1))])
def test_sector_state_raises_n_at_the_reset_site(op):
    """|1><0|_L, |2><0|_L (false reports) and |2><1|_L on a superposition of sectors, against the dense vector."""
    spec = ArraySpec.from_user(length=4, conditions="ideal", reset="periodic", readout_error=0.1)
    real = spec.draw_realization(np.random.default_rng(1))
    prop = SectorEngine().prepare(spec, real)
    sites = [np.asarray(v, dtype=complex) for v in product_state("coherence", [0, 1, 0, 0])]
    state = prop.state(sites)
    state.evolve(3.0)  # spread the excitations (the last site gets amplitude in every level reachable)
    dense = ExactState(spec, state.dense())
    state.apply_local(op, spec.L - 1)
    dense.apply_local(op, spec.L - 1)
    assert max(state.vecs) > 2  # a new, higher sector was made
    np.testing.assert_allclose(state.dense(), dense.psi, atol=1e-14)
    assert state.norm2() > 1e-6


@pytest.mark.parametrize("reset", ["periodic", "random"])
def test_sector_and_mps_follow_the_exact_trajectory(reset):
    """Same events (with the injected excitations) and observables as the exact engine, trajectory by trajectory;
    the batched exact and MPS stores as their unbatched states."""
    spec = ArraySpec.from_user(length=4, conditions="realistic", reset=reset, rate="1J", t1="100/J", tphi="100/J",
                               temperature=0, readout_error=0.3)
    times = time_grid(12.0, 4)
    ex = RunSettings(times=times, seed=9, engine="exact")
    se = RunSettings(times=times, seed=9, engine="sector")
    mp = RunSettings(times=times, seed=9, engine="mps", engine_options={"dt": 0.01, "order": 4})
    raised = 0
    ex_batch, mp_batch = batched(spec, ex, [0, 1]), batched(spec, mp, [0, 1])
    for i in range(2):
        a, b = one(spec, ex, i), one(spec, se, i)
        assert records_differ(a, b, tol=1e-8) == [], (reset, i)
        assert records_differ(a, ex_batch[i], tol=1e-8) == [], (reset, i)
        c = one(spec, mp, i)
        assert records_differ(a, c, tol=1e-5) == [], (reset, i)
        assert records_differ(c, mp_batch[i], tol=1e-10) == [], (reset, i)
        raised += sum(int(np.any(r.populations[1:, -1, 0] < 0.5)) for r in a.values())
    assert raised >= 1  # some trajectory had an injected excitation on the reset site at a grid time (T = 0)


@pytest.mark.parametrize("study, words", [("rate-sweep", "rate sweep"), ("qec", "qec study")])
def test_studies_that_cannot_take_a_readout_error_say_why(tmp_path, study, words):
    """The rate sweep (the reference path at up to 100 J would take hours) and the QEC study (the readout injects
    leakage, so S(k) has a floor and D diverges) refuse a readout error with one line naming it and the study."""
    from lru_mps.errors import ParameterError
    from lru_mps.studies import run_study
    from lru_mps.studies.base import StudyContext

    with pytest.raises(ParameterError, match=f"readout_error.*{words}"):
        run_study(study, StudyContext(out=tmp_path, workers=1), overrides=dict(readout_error=0.02), quick=True)


def test_lifetimes_are_not_defined_with_a_readout_error():
    """A false report makes a |2> at the reset site: the leakage has a floor, so the lifetimes are None, and the
    summary says why instead of printing an integral that grows with t_final."""
    from lru_mps.analysis.lifetimes import leakage_lifetimes
    from lru_mps.io.summary import format_summary

    spec = ArraySpec.from_user(length=2, conditions="ideal", readout_error=0.1)
    res = simulate(spec, init="leakage", t_final=20.0, time_points=5, trajectories=4)
    assert all(v is None for v in leakage_lifetimes(res).values())
    assert "not defined with a readout error" in format_summary(res)
    # with the readout ideal the same run has them
    assert all(v is not None for v in leakage_lifetimes(simulate(spec.replace(readout=None), init="leakage",
               t_final=20.0, time_points=5, trajectories=4)).values())
