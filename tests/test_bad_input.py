"""No wrong number from bad input: one line naming the parameter and what is allowed, or what the user meant.

Each test here is fast (seconds) and runs no study: the design study's
budget, the length-scaling study's lengths lists, the device file's units
and plausible values, the thermal bath on the command line, and the
readout's Kraus map against operators written out by hand (not by the
package's readout helpers, which feed both the trajectories and the
Lindblad reference).
"""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from lru_mps.errors import ParameterError, ParameterWarning
from lru_mps_cli.main import main


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _one_error_line(res) -> str:
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    (line,) = [x for x in res.output.splitlines() if x.startswith("Error:")]
    return line


def _no_compute(monkeypatch, module, name):
    """Make a study's compute step fail loudly, so a test sees whether the input was refused before it ran."""
    def started(*args, **kwargs):
        raise AssertionError("the study started")
    monkeypatch.setattr(module, name, started)


# ------------------------------------------------------------------ design: --budget
@pytest.mark.parametrize("budget", ["-1", "0", "-0.005", "2", "nan"])
def test_design_refuses_a_budget_that_is_not_a_probability(tmp_path, monkeypatch, budget):
    from lru_mps.studies.design import screen as design_screen

    _no_compute(monkeypatch, design_screen, "screen_leakage")
    res = cli("study", "design", "--budget", budget, "--out", tmp_path / "run", "--workers", "1")
    line = _one_error_line(res)
    assert line.startswith(f"Error: --budget={budget}") and "(0, 1]" in line, line


def test_design_refuses_a_bad_budget_from_the_study_file(tmp_path, monkeypatch):
    from lru_mps.studies.design import screen as design_screen
    from lru_mps.studies.base import StudyContext
    from lru_mps.studies import run_study

    _no_compute(monkeypatch, design_screen, "screen_leakage")
    config = tmp_path / "design.toml"
    config.write_text('study = "design"\nbudget = -0.01\n')
    with pytest.raises(ParameterError) as err:
        run_study("design", StudyContext(out=tmp_path / "run", workers=1), config_file=config)
    assert err.value.name == "budget" and "(0, 1]" in str(err.value)


# ------------------------------------------------------------------ length-scaling: which lengths list applies
def _length_scaling_config(tmp_path, monkeypatch, *args):
    """The config the length-scaling study would compute with, from the command line (its compute step replaced)."""
    from lru_mps.studies import length_scaling

    seen = {}

    def compute(cfg, ctx):
        seen["cfg"] = cfg
        seen["plan"] = length_scaling.lengths_of(cfg)
        raise ParameterError("conditions", cfg["conditions"], "(stopped by the test before it computes)")

    monkeypatch.setattr(length_scaling, "_compute", compute)
    out = tmp_path / f"run{len(list(tmp_path.glob('run*')))}"  # a folder per config (a folder holds one)
    res = cli("study", "length-scaling", "--out", out, "--workers", "1", *args)
    return res, seen


def test_realistic_conditions_run_at_the_realistic_lengths(tmp_path, monkeypatch):
    """The study's own compute step, stopped where it plans its ensembles: the lengths it would run."""
    from lru_mps.studies import length_scaling
    from lru_mps.studies.base import StudyContext

    seen = {"specs": []}
    real_spec_of = length_scaling.spec_of

    def spec_of(cfg, **changes):
        seen["specs"].append(changes)
        return real_spec_of(cfg, **changes)

    def plan(self, stages):
        seen["stages"] = stages
        raise ParameterError("conditions", "-", "(stopped by the test where the study plans its ensembles)")

    monkeypatch.setattr(length_scaling, "spec_of", spec_of)
    monkeypatch.setattr(StudyContext, "plan", plan)
    res = cli("study", "length-scaling", "--out", tmp_path / "run", "--workers", "1",
              "--conditions", "realistic", "--realistic-lengths", "3,5")
    assert "stopped by the test" in res.output, res.output
    assert seen["specs"] == [{"length": 3, "conditions": "realistic"}]  # the first (smallest) length it runs
    assert seen["stages"] == 2  # L = 3 and 5, not the ideal conditions' 15 lengths up to 40
    res, seen = _length_scaling_config(tmp_path, monkeypatch, "--conditions", "realistic", "--realistic-lengths", "3")
    assert seen["plan"] == (["realistic"], {"realistic": [3]})


def test_each_conditions_lengths_when_run_alone_or_both(tmp_path, monkeypatch):
    from lru_mps.studies import get_study
    from lru_mps.studies.base import load_config
    from lru_mps.studies.length_scaling import lengths_of

    study = get_study("length-scaling")
    plan = lambda **kw: lengths_of(load_config(study.NAME, study.DEFAULTS, None, kw))  # noqa: E731
    assert plan(conditions="realistic") == (["realistic"], {"realistic": [2, 3, 4, 5, 6, 8, 10, 12, 16, 20]})
    assert plan(conditions="ideal", lengths="2:4") == (["ideal"], {"ideal": [2, 3, 4]})
    assert plan(conditions="both", lengths="2:4", realistic_lengths="5") == (["ideal", "realistic"],
                                                                             {"ideal": [2, 3, 4], "realistic": [5]})
    res, seen = _length_scaling_config(tmp_path, monkeypatch, "--conditions", "ideal", "--lengths", "2,5")
    assert seen["plan"] == (["ideal"], {"ideal": [2, 5]})


@pytest.mark.parametrize("conditions, option, applies", [("realistic", "--lengths", "--realistic-lengths"),
                                                         ("ideal", "--realistic-lengths", "--lengths")])
def test_the_other_conditions_lengths_alone_are_refused(tmp_path, monkeypatch, conditions, option, applies):
    res, seen = _length_scaling_config(tmp_path, monkeypatch, "--conditions", conditions, option, "3")
    line = _one_error_line(res)
    assert line.startswith(f"Error: {option}=3 is not allowed") and f"({applies})" in line, line
    assert "cfg" not in seen


def test_a_study_file_with_only_the_other_conditions_lengths_is_refused(tmp_path, monkeypatch):
    from lru_mps.studies import length_scaling, run_study
    from lru_mps.studies.base import StudyContext

    _no_compute(monkeypatch, length_scaling, "_compute")
    config = tmp_path / "ls.toml"
    config.write_text('study = "length-scaling"\nconditions = "realistic"\nlengths = "6"\n')
    with pytest.raises(ParameterError) as err:
        run_study("length-scaling", StudyContext(out=tmp_path / "run", workers=1), config_file=config)
    assert err.value.name == "lengths" and "realistic_lengths" in str(err.value)


def test_the_help_says_which_lengths_list_applies():
    res = cli("study", "length-scaling", "--help")
    text = " ".join(res.output.split())
    assert "Lengths of the ideal conditions" in text and "Lengths of the realistic conditions" in text
    assert "--conditions realistic or both" in text


# ------------------------------------------------------------------ the device file: units and plausible values
CHIP = {"frequencies": ["7512MHz", "7468MHz", "7530MHz"], "anharmonicities": ["274MHz", "185.95MHz", "310.1MHz"],
        "couplings": ["5.1MHz", "4.9MHz"], "t1": ["16.7us", "20us", "15us"], "tphi": ["10us", "12us", "8us"],
        "temperature": "100mK"}


def _device_error(**changes) -> ParameterError:
    from lru_mps.physics.model import ArraySpec

    with pytest.raises(ParameterError) as err:
        ArraySpec.from_device({**CHIP, **changes})
    return err.value


@pytest.mark.parametrize("key, value, example", [
    ("frequencies", [7520, 7468, 7530], "'7520MHz' or '7.52GHz'"),      # was: 7520 J = 37.6 GHz transmons
    ("frequencies", ["7.52", "7.468", "7.53"], "'7.52GHz' or '7520MHz'"),  # was: refused naming anharmonicities
    ("anharmonicities", [274, 186, 310], "'274MHz'"),
    ("couplings", [5.1, 4.9], "'5.1MHz'"),
    ("t1", ["20", "20", "20"], "'20us' or '20/J'"),                    # was: T1 = 20/J = 0.64 us
    ("t1", 20, "'20us' or '20/J'"),
    ("tphi", [10.0, 12.0, 8.0], "'10us' or '10/J'"),
])
def test_device_values_without_a_unit_are_refused_naming_the_key(key, value, example):
    err = _device_error(**{key: value})
    assert err.name == f"device.{key}" and "has no unit" in str(err) and example in str(err), str(err)


def test_device_couplings_in_units_of_the_hopping_and_special_values_stay_allowed():
    from lru_mps.physics.model import ArraySpec

    spec = ArraySpec.from_device({**CHIP, "hopping": "5MHz", "couplings": ["1.02J", "0.98J"], "t1": "inf",
                                  "tphi": ["500/J", "400/J", "inf"], "temperature": 0})
    assert spec.device.couplings_hz == pytest.approx((5.1e6, 4.9e6))
    with pytest.raises(ParameterError) as err:  # a bare multiple of the hopping is not
        ArraySpec.from_device({**CHIP, "hopping": "5MHz", "couplings": [1.02, 0.98]})
    assert err.value.name == "device.couplings" and "'1.02J'" in str(err.value)
    with pytest.raises(ParameterError) as err:
        ArraySpec.from_device({**CHIP, "hopping": 5})
    assert err.value.name == "device.hopping" and "'5MHz'" in str(err.value)


@pytest.mark.parametrize("key, value", [
    ("frequencies", ["7512MHz", "37.6MHz", "7530MHz"]),  # what '7.52' (J) used to mean
    ("frequencies", ["7512MHz", "7468MHz", "37.6GHz"]),
    ("anharmonicities", ["274MHz", "25MHz", "310.1MHz"]),
    ("anharmonicities", ["274MHz", "800MHz", "310.1MHz"]),
    ("anharmonicities", ["274MHz", "-250MHz", "310.1MHz"]),  # the file's U_l is positive
    ("t1", "20ns"),
    ("tphi", ["10us", "50ns", "8us"]),
    ("temperature", "2K"),
])
def test_device_values_no_transmon_has_are_refused_naming_the_key(key, value):
    err = _device_error(**{key: value})
    assert err.name == f"device.{key}", str(err)
    assert str(err).startswith(f"device.{key}=")


def test_device_frequencies_in_units_of_j_are_checked_in_ghz():
    from lru_mps.physics.model import ArraySpec

    freqs = ["1500J", "1494J", "1506J"]
    assert ArraySpec.from_device({**CHIP, "hopping": "5MHz", "frequencies": freqs}).device.frequencies_hz[0] == 7.5e9
    err = _device_error(hopping="15MHz", couplings=["1J", "1J"], frequencies=freqs)  # 22.5 GHz
    assert err.name == "device.frequencies" and "1-20 GHz" in str(err)


def test_a_short_but_possible_coherence_time_warns_naming_the_key():
    from lru_mps.physics.model import ArraySpec

    with pytest.warns(ParameterWarning, match=r"device\.t1: T1 = 0\.5 us on site 2") as got:
        ArraySpec.from_device({**CHIP, "t1": ["16.7us", "500ns", "15us"]})
    # the command line prints it as one line
    import warnings

    import lru_mps_cli.main  # noqa: F401  (installs the CLI's warning format)

    w = got[0]
    assert warnings.formatwarning(w.message, w.category, w.filename, w.lineno) == f"Warning: {w.message}\n"


def test_cli_refuses_a_device_file_without_units_in_one_line(tmp_path):
    path = tmp_path / "chip.toml"
    path.write_text('frequencies = [7520, 7468, 7530]\nanharmonicities = ["274MHz", "185.95MHz", "310.1MHz"]\n'
                    'couplings = ["5.1MHz", "4.9MHz"]\n')
    line = _one_error_line(cli("simulate", "--device", path, "--trajectories", "1"))
    assert line.startswith("Error: device.frequencies=[7520, 7468, 7530] is not allowed") and "'7520MHz'" in line


# ------------------------------------------------------------------ the readout map against Kraus operators by hand
# docs/physics.md §4.4: after the projective measurement of n_L with true outcome m the readout reports n with
# p(n|m) and the feedback applies X_0n, the swap of |0> and |n> on site L (X_00 = 1):
#     K_mn = sqrt(p(n|m)) X_0n |m><m|_L.
# Written out here as explicit 3x3 matrices, without the package's readout helpers.
X0 = {0: np.eye(3),
      1: np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]),   # |0> <-> |1>
      2: np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])}   # |0> <-> |2>
PROJ = {m: np.diag([1.0 if k == m else 0.0 for k in range(3)]) for m in range(3)}
# a confusion matrix with every entry different (a map that mixes up m and n shows), entries multiples of 0.01
READOUT = ((0.90, 0.06, 0.04), (0.07, 0.88, 0.05), (0.02, 0.09, 0.89))


def _hand_kraus(P, L: int) -> list[np.ndarray]:
    """K_mn on the full space of L qutrits, site L the last (rightmost) Kronecker factor."""
    rest = np.eye(3 ** (L - 1))
    return [np.kron(rest, np.sqrt(P[m][n]) * X0[n] @ PROJ[m]) for m in range(3) for n in range(3)]


def _apply(ks, rho):
    return sum(K @ rho @ K.conj().T for K in ks)


def _random_rho(dim: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(dim, dim)) + 1j * rng.normal(size=(dim, dim))
    rho = A @ A.conj().T
    return rho / np.trace(rho)


def _dense(op) -> np.ndarray:
    return op.toarray() if hasattr(op, "toarray") else np.asarray(op)


@pytest.mark.parametrize("L", [1, 2])
def test_hand_kraus_operators_are_a_trace_preserving_reset(L):
    ks = _hand_kraus(READOUT, L)
    np.testing.assert_allclose(sum(K.conj().T @ K for K in ks), np.eye(3 ** L), atol=1e-14)
    # an ideal readout is today's reset |0><m|_L
    ideal = _hand_kraus(np.eye(3), 1)
    for m in range(3):
        np.testing.assert_array_equal(ideal[4 * m], np.outer(np.eye(3)[0], np.eye(3)[m]))


@pytest.mark.parametrize("L", [2])
def test_periodic_measurement_map_is_the_hand_kraus_map(L):
    from lru_mps.physics.model import ArraySpec
    from lru_mps.references.lindblad import _measurement_operators

    spec = ArraySpec.from_user(length=L, conditions="ideal", reset="periodic", readout_confusion=READOUT)
    ks = [_dense(K) for K in _measurement_operators(spec)]
    rho = _random_rho(3 ** L, 11)
    want = _apply(_hand_kraus(READOUT, L), rho)
    np.testing.assert_allclose(_apply(ks, rho), want, atol=1e-13)
    np.testing.assert_allclose(sum(K.conj().T @ K for K in ks), np.eye(3 ** L), atol=1e-13)  # trace preserving
    assert np.trace(_apply(ks, rho)) == pytest.approx(1.0, abs=1e-13)


@pytest.mark.parametrize("L", [2])
def test_random_feedback_lindblad_operators_are_the_hand_kraus_operators(L):
    from lru_mps.physics.model import ArraySpec

    def embed(op, site, L):
        return np.kron(np.kron(np.eye(3 ** site), op), np.eye(3 ** (L - site - 1)))

    G = 0.3
    spec = ArraySpec.from_user(length=L, conditions="ideal", reset="random", rate=f"{G}J", readout_confusion=READOUT)
    cs = [np.sqrt(ch.rate) * _dense(embed(ch.op, ch.site, L)) for ch in spec.channels() if ch.name.startswith("measure")]
    rho = _random_rho(3 ** L, 12)
    np.testing.assert_allclose(_apply(cs, rho), G * _apply(_hand_kraus(READOUT, L), rho), atol=1e-13)
    np.testing.assert_allclose(sum(c.conj().T @ c for c in cs), G * np.eye(3 ** L), atol=1e-13)  # H_eff: -iG/2


def test_trajectory_feedback_is_the_hand_kraus_map():
    """The trajectories' feedback as the loop makes it (Born outcome m, one uniform for the report, then
    |x><m|_L with the loop's target x): its average over the report's uniform is the hand-built map."""
    from lru_mps.mcwf.loop import _Loop
    from lru_mps.physics.model import ArraySpec

    spec = ArraySpec.from_user(length=2, conditions="ideal", reset="periodic", readout_confusion=READOUT)
    N = 1000  # uniforms at the midpoints of N bins: exact for p(n|m) in multiples of 1/100
    u = (np.arange(N) + 0.5) / N

    class Store:
        def apply_reset(self, rows, site, outcomes, normalize, targets=None):
            self.got = (np.asarray(outcomes), np.zeros(len(rows), int) if targets is None else np.asarray(targets))

    class Uniforms:
        def take(self, rows):
            return u[np.asarray(rows) % N]

    loop = type("FakeLoop", (), {})()
    loop.spec, loop.store, loop.uniforms = spec, Store(), Uniforms()
    R = np.zeros((3, 3))  # R[x, m]: the probability that the feedback after outcome m leaves site L in |x>
    for m in range(3):
        _Loop._reset_sampled(loop, np.arange(N), spec.L - 1, np.full(N, m))
        outcomes, targets = loop.store.got
        assert np.all(outcomes == m)
        R[:, m] = np.bincount(targets, minlength=3) / N
    rho = _random_rho(3, 13)  # L = 1 suffices: the feedback acts on site L alone
    ket = np.eye(3)
    traj = sum(R[x, m] * np.outer(ket[x], ket[m]) @ rho @ np.outer(ket[m], ket[x]) for x in range(3) for m in range(3))
    np.testing.assert_allclose(traj, _apply(_hand_kraus(READOUT, 1), rho), atol=1e-12)
    np.testing.assert_allclose(R.sum(axis=0), 1.0)


# ------------------------------------------------------------------ --thermal-bath on the command line
def _simulate_json(monkeypatch, *args) -> tuple[dict, list]:
    """`lru-mps simulate ... --json` in process: its JSON object and the spec it ran (recorded on the way)."""
    import json

    import lru_mps.run.simulate as run_simulate

    specs = []
    real = run_simulate.simulate

    def recording(spec, **kwargs):
        specs.append(spec)
        return real(spec, **kwargs)

    monkeypatch.setattr(run_simulate, "simulate", recording)
    res = cli("simulate", "-L", "3", "--json", "--workers", "1", *args)
    assert res.exit_code == 0, res.output
    return json.loads(res.output.strip().splitlines()[-1]), specs


def test_thermal_bath_option_reaches_the_spec_and_heats_the_array(monkeypatch):
    """--thermal-bath from the command line: the JSON parameters and the spec's channels say so (heating at
    T > 0), and the array's leakage, which without a bath decays to nothing (hardware decay and the reset only
    take excitations out), settles on a thermal floor with it: heating sqrt(gamma nbar) a^dag makes |2> from
    |1> (nbar = 0.95 at 7.5 GHz and 500 mK; T1 = 100/J, so 800/J is eight T1)."""
    run = ("--init", "leakage", "--temperature", "500mK", "--t1", "100/J", "--tphi", "inf", "--t-final", "800/J",
           "--time-points", "17", "--trajectories", "128", "--seed", "1")
    hot, specs = _simulate_json(monkeypatch, "--thermal-bath", *run)
    assert hot["parameters"]["thermal_bath"] is True and hot["parameters"]["estimator"] == "sampled"
    names = {ch.name for ch in specs[-1].channels()}
    assert specs[-1].thermal_bath and "heating" in names and "decay" in names
    cold, specs = _simulate_json(monkeypatch, *run)
    assert "thermal_bath" not in cold["parameters"] or cold["parameters"]["thermal_bath"] is False
    assert "heating" not in {ch.name for ch in specs[-1].channels()}
    late = slice(-6, None)  # t >= 550/J: five T1 and more
    bath = np.mean(hot["observables"]["leakage_array"]["mean"][late])
    bath_sem = np.max(hot["observables"]["leakage_array"]["sem"][late])
    none = np.max(cold["observables"]["leakage_array"]["mean"][late])
    assert none < 1e-4, none  # decayed and reset away
    assert bath > none + 4 * bath_sem and bath > 0.1, (bath, bath_sem, none)
    # at T = 0 the bath has no heating channel: it is the hardware decay alone
    zero, specs = _simulate_json(monkeypatch, "--thermal-bath", "--temperature", "0", "--trajectories", "2",
                                 "--t-final", "10/J", "--time-points", "3", "--init", "leakage")
    assert zero["parameters"]["thermal_bath"] is True and "heating" not in {ch.name for ch in specs[-1].channels()}


def test_the_typed_config_reader_names_the_key_and_the_range():
    """Every study key is read through one checked reader: a wrong type or a value out of range is one line naming
    the key and what is allowed (never a traceback from float('x'))."""
    from lru_mps.studies.config import Config

    c = Config({"n": 240, "x": 1.5, "flag": True, "odds": "eight", "bad": float("nan"), "table": {"20": 5}})
    assert c.integer("n") == 240 and c.number("x", min=1) == 1.5 and c.boolean("flag") is True
    assert c.number("missing", default=2.0) == 2.0 and c.factors("table", others="f") == {20: 5.0}
    for call, key, allowed in ((lambda: c.number("odds", min=1), "odds", "a number >= 1"),
                               (lambda: c.number("bad"), "bad", "a number"),
                               (lambda: c.number("x", above=0, max=1), "x", "a number > 0 and <= 1"),
                               (lambda: c.integer("x"), "x", "an integer >= 1"),
                               (lambda: c.boolean("n"), "n", "true or false"),
                               (lambda: c.number("missing"), "missing", "a value"),
                               (lambda: Config({"t": {"1": 2}}).factors("t", others="f"), "t.1", "a length L >= 2")):
        with pytest.raises(ParameterError) as err:
            call()
        assert err.value.name == key and err.value.allowed.startswith(allowed), (key, err.value.allowed)


# ------------------------------------------------------------------ refusals from any worker
#: bad inputs of `simulate`, with the line each is refused with; some are refused where a block runs (a worker:
#: the exact engine's length, the MPS options), some before (the graph, the sector's reach)
WORKER_REFUSALS = [
    (("--engine", "exact", "-L", "8"),
     "Error: --length=8 is not allowed: L <= 7 for the exact engine (use --engine mps or sector for long arrays)"),
    (("--engine", "mps", "--dt", "0"), "Error: --dt=0 is not allowed: a time step > 0 (units of 1/J)"),
    (("--engine", "mps", "--max-bond", "0"), "Error: --max-bond=0 is not allowed: an integer >= 1"),
    (("--engine", "mps", "--geometry", "grid:2x2"),
     "Error: --engine=mps is not allowed: exact or sector on a graph geometry (grid:2x2: the MPS engine and the "
     "per-trajectory policy, which may hand rows to it, need a chain)"),
]


@pytest.fixture
def dask_scheduler():
    """A local Dask cluster of two worker processes (the address `--scheduler` takes)."""
    distributed = pytest.importorskip("dask.distributed", reason="dask.distributed is in the test extras; install it")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as c:
        yield c.scheduler_address


def test_a_parameter_error_survives_pickling():
    """A refusal raised in a worker process reaches the parent by pickle: the same error, fields and line (an
    exception pickles as cls(*args), here the message alone, which ParameterError.__init__ does not take: the
    parent printed a 52-line TypeError and BrokenProcessPool)."""
    import pickle

    err = ParameterError("length", 8, "L <= 7 for the exact engine", "use --engine mps")
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is ParameterError and str(back) == str(err)
    assert (back.name, back.value, back.allowed, back.hint) == (err.name, err.value, err.allowed, err.hint)


def test_a_refusal_is_the_same_line_from_any_worker(dask_scheduler, monkeypatch):
    """In process (--workers 1), from a pool's worker process (--workers 2) and from a Dask worker (--scheduler):
    one line, exit 2, the same each way (one test for all the inputs: one cluster, on one xdist worker)."""
    from lru_mps.run import executors

    clients = []  # (the command's Dask clients, closed here: the command line leaves its own to the process's end)
    monkeypatch.setattr(executors, "client_for", lambda s, _make=executors.client_for: clients.append(_make(s))
                        or clients[-1])
    try:
        for args, line in WORKER_REFUSALS:
            run = ("simulate", *args, "--trajectories", "4", "--time-points", "3", "--t-final", "10/J")
            for where in (("--workers", "1"), ("--workers", "2"), ("--scheduler", dask_scheduler)):
                assert _one_error_line(cli(*run, *where)) == line, (args, where)
    finally:
        for client in clients:
            if client is not None:
                client.close()
