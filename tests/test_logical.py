"""The surface-code memory with leaking data qubits (lru_mps.circuits) and the logical study (docs/physics.md §8,
"The logical error per cycle").

* Leakage off, the circuit is stim's own generated circuit, instruction for instruction, and the sampler's logical
  failures agree with stim's detector sampler decoded the standard way, within 4 combined standard errors.
* A constant return probability: the batched frame sampler against an independent implementation written here (a
  per-shot tableau simulation: a leaked qubit is reset in the tableau and its gates skipped, where the sampler
  keeps Pauli frames and randomizes them), within 4 combined standard errors.
* Age dependence has power: a two-step S(k) (no return in the first cycle, then r) and its geometric fit give
  eps apart by more than 4 combined standard errors, and each one's leaked share is its own p D/(1 + p D).
* The error bar: the pull of eps over independent seeds has a spread of 1 within 4 of its standard errors.
* The array row takes S(k), the tail and the added error from the qec study's computation (a synthetic qec
  summary goes through unchanged: r_k = 1 - S(k+1)/S(k), 0 where S rises); long: the real qec study's numbers.
* Bad input is refused with one line naming the option.
"""

from __future__ import annotations

import ast
import json
import math
import random
from pathlib import Path

import numpy as np
import pytest
import stim
from click.testing import CliRunner

from conftest import long_scale
from lru_mps.circuits import (Case, Program, ReturnModel, decoder, memory_circuit, per_cycle, return_probabilities,
                              sample)
from lru_mps.circuits.sampler import CHUNK
from lru_mps.circuits.surface import MARKER, data_qubits
from lru_mps.errors import ParameterError
from lru_mps_cli.main import main

ROOT = Path(__file__).resolve().parents[1]


def _z(a: dict, b: dict) -> float:
    """(a - b) in combined standard errors of two {"value", "error"}."""
    return (a["value"] - b["value"]) / math.hypot(a["error"], b["error"])


def _eps(failures: int, shots: int, rounds: int) -> dict:
    return per_cycle(failures, shots, rounds)


# ------------------------------------------------------------------ the pieces
def test_per_cycle_conversion_and_its_error():
    """eps = (1 - (1 - 2 P_L)^(1/R)) / 2 with the derivative's error; one round: eps = P_L."""
    e = per_cycle(100, 1000, 10)
    assert e["value"] == pytest.approx((1 - 0.8 ** 0.1) / 2)
    h = 1e-7
    slope = ((1 - (0.8 - 2 * h) ** 0.1) / 2 - (1 - 0.8 ** 0.1) / 2) / h
    assert e["error"] == pytest.approx(slope * math.sqrt(0.1 * 0.9 / 1000), rel=1e-5)
    assert per_cycle(37, 1000, 1)["value"] == pytest.approx(0.037)
    assert per_cycle(600, 1000, 5)["value"] is None and per_cycle(0, 1000, 5)["error"] > 0


def test_return_probabilities_are_exact_ratios():
    """r_k = 1 - S(k+1)/S(k) exactly; 0 where S rises, with the leakage-cycles this leaves out; the tail after K."""
    S = [1.0, 0.3, 0.32, 0.1, 0.05]
    out = return_probabilities(S, tail_ratio=0.4)
    r = out["model"].r
    assert r[0] == pytest.approx(0.7) and r[1] == 0.0 and r[2] == pytest.approx(1 - 0.1 / 0.32)
    assert r[3] == pytest.approx(0.5) and out["model"].tail == pytest.approx(0.6) and out["rises"] == [1]
    model_S = out["model"].survival(4)
    assert out["left_out"] == pytest.approx(sum(np.array(S[1:]) - model_S[1:])) and out["left_out"] > 0
    D = ReturnModel.constant(0.25).mean_duration
    assert D == pytest.approx(3.0)
    ages, probs = ReturnModel((0.0,), 0.5).steady_ages(0.01)
    assert probs.sum() == pytest.approx(0.01 * 2 / (1 + 0.01 * 2), rel=1e-8)


def test_the_circuit_is_stims_own():
    """Leakage off and no added error, the circuit is stim's generated rotated Z memory with all four noise
    parameters p, instruction for instruction (flattened)."""
    for d, rounds, p in ((3, 9, 1e-3), (5, 4, 2e-3)):
        ours = memory_circuit(d, rounds, p)
        theirs = stim.Circuit.generated("surface_code:rotated_memory_z", distance=d, rounds=rounds,
                                        after_clifford_depolarization=p, before_round_data_depolarization=p,
                                        before_measure_flip_probability=p, after_reset_flip_probability=p).flattened()
        assert ours == theirs
    # the sampler's segments, put back together, are the decoder's circuit (the added error included)
    prog = Program(3, 4, 1e-3, 0.002)
    whole = stim.Circuit()
    for seg in prog.segments:
        whole += seg
    assert whole == memory_circuit(3, 4, 1e-3, 0.002) == prog.circuit
    assert [h.kind for h in prog.hooks if h is not None].count("round") == 4


def test_leakage_off_equals_stims_sampling():
    """The frame sampler with leakage 0 against stim's detector sampler and pymatching on the same circuit."""
    d, rounds, p, n = 3, 9, 5e-3, 40000
    ours = sample(Case(d, rounds, p, 0.0, 0.0, ReturnModel.constant(1.0)), n, seed=11)
    circ = memory_circuit(d, rounds, p)
    dets, obs = circ.compile_detector_sampler(seed=12).sample(n, separate_observables=True)
    theirs = int(np.sum(decoder(circ).decode_batch(dets)[:, 0] != obs[:, 0]))
    assert ours["leaked_fraction"]["value"] == 0.0
    a, b = _eps(ours["failures"], n, rounds), _eps(theirs, n, rounds)
    assert abs(_z(a, b)) < 4, (a, b)
    assert 200 < theirs < n / 4  # a regime with failures enough to compare


def test_more_shots_continue_a_cases_streams():
    """A second pass of shots numbered after the first pass's chunks adds up to the same counts as one longer run;
    the extra shots meet the target error with a 20 % margin (relative error ~ 1/sqrt(shots P_L))."""
    from lru_mps.circuits.sampler import merge, sample_many
    from lru_mps.studies.logical import extra_shots

    case = Case(3, 3, 2e-3, 0.0, 0.01, ReturnModel.constant(0.5))
    one, two = sample_many([(case, CHUNK, 5, 0), (case, 300, 5, 1)])
    (whole,) = sample_many([(case, CHUNK + 300, 5, 0)])
    assert merge([one, two]) == whole
    raw = {"failures": 10, "shots": 1000}
    rel = per_cycle(10, 1000, 1)["error"] / per_cycle(10, 1000, 1)["value"]
    assert extra_shots(raw, 1, 0.1, 10**6) == math.ceil(1000 * (rel / 0.1) ** 2 * 1.2) - 1000
    assert extra_shots(raw, 1, 0.5, 10**6) == 0 and extra_shots(raw, 1, 0.1, 5000) == 4000
    assert extra_shots(raw, 1, None, 10**6) == 0


def test_counts_do_not_depend_on_the_workers():
    """Shots in chunks with their own streams: one process and two give the same counts."""
    case = Case(3, 3, 2e-3, 0.0, 0.01, ReturnModel.constant(0.5))
    one = sample(case, 2 * CHUNK + 100, seed=5, workers=1)
    two = sample(case, 2 * CHUNK + 100, seed=5, workers=2)
    assert one == two


# ------------------------------------------------------------------ an independent implementation
def independent_failures(distance: int, rounds: int, p: float, leakage: float, r: float, shots: int,
                         seed: int) -> tuple[int, float]:
    """The same leakage model written differently: one shot at a time in stim's TableauSimulator (states, not Pauli
    frames).  A leaking or returning qubit is reset in the tableau (returning: then X with probability 1/2, a
    maximally mixed qubit); a two-qubit gate with a leaked qubit is skipped and its partner gets one of I, X, Y, Z
    drawn uniformly; a leaked qubit's final readout is replaced by a random bit.  The measurement record goes
    through stim's measurement-to-detection converter and the same decoder.  Returns (failures, mean leaked share
    at the rounds' starts after the returns)."""
    marked = memory_circuit(distance, rounds, p, marked=True)
    plain = memory_circuit(distance, rounds, p)
    data = [int(q) for q in data_qubits(distance)]
    rnd = random.Random(seed)
    meas = np.zeros((shots, plain.num_measurements), dtype=bool)
    share = 0.0
    for s in range(shots):
        sim = stim.TableauSimulator()
        sim.set_num_qubits(marked.num_qubits)
        leaked: set[int] = set()
        record: list[bool] = []
        started = False
        for ins in marked:
            name = ins.name
            if name == "DEPOLARIZE1" and ins.gate_args_copy() == [MARKER]:
                if p > 0:
                    sim.do(stim.CircuitInstruction("DEPOLARIZE1", ins.targets_copy(), [p]))
                if started:
                    for q in sorted(leaked):
                        if rnd.random() < r:
                            leaked.discard(q)
                            sim.reset(q)
                            if rnd.random() < 0.5:
                                sim.x(q)
                started = True
                share += len(leaked) / len(data) / rounds
                for q in data:
                    if q not in leaked and rnd.random() < leakage:
                        leaked.add(q)
                        sim.reset(q)
            elif name == "CX":
                t = [x.value for x in ins.targets_copy()]
                for a, b in zip(t[::2], t[1::2]):
                    if a in leaked or b in leaked:
                        other = b if a in leaked else a
                        k = rnd.randrange(4)  # I, X, Y or Z, uniformly
                        if k:
                            getattr(sim, "xyz"[k - 1])(other)
                    else:
                        sim.cx(a, b)
            elif name in ("M", "MR"):
                t = [x.value for x in ins.targets_copy()]
                sim.do(ins)
                bits = sim.current_measurement_record()[-len(t):]
                if name == "M":
                    bits = [rnd.random() < 0.5 if q in leaked else m for q, m in zip(t, bits)]
                record.extend(bits)
            elif name not in ("DETECTOR", "OBSERVABLE_INCLUDE", "QUBIT_COORDS", "SHIFT_COORDS", "TICK"):
                sim.do(ins)
        meas[s] = record
    dets, obs = plain.compile_m2d_converter().convert(measurements=meas, separate_observables=True)
    pred = decoder(plain).decode_batch(dets)
    return int(np.sum(pred[:, 0] != obs[:, 0])), share / shots


@pytest.mark.parametrize("distance, shots", [(3, 1500)])
def test_constant_return_against_an_independent_implementation(distance, shots):
    """A constant return probability, starting without leakage: the frame sampler's eps and leaked share against
    the tableau implementation's, within 4 combined standard errors."""
    rounds, p, leakage, r = 3, 5e-3, 0.03, 0.4
    ours = sample(Case(distance, rounds, p, 0.0, leakage, ReturnModel.constant(r), initial="none"), 20 * shots, 3)
    fails, share = independent_failures(distance, rounds, p, leakage, r, shots, seed=4)
    a, b = _eps(ours["failures"], ours["shots"], rounds), _eps(fails, shots, rounds)
    assert abs(_z(a, b)) < 4, (a, b)
    assert b["value"] > 5 * b["error"]  # leakage makes most of the failures here: a comparison with power
    # the leaked share: the tableau's from its shots' binomial spread (a share is a mean of per-round counts)
    err = math.sqrt(share / (len(data_qubits(distance)) * shots))
    assert abs(ours["leaked_fraction"]["value"] - share) < 4 * math.hypot(ours["leaked_fraction"]["error"], err)


@pytest.mark.long
def test_constant_return_against_an_independent_implementation_d5():
    """The same at d = 5 (the tableau implementation takes ~10 ms a shot there)."""
    shots = max(200, int(2000 * long_scale()))
    rounds, p, leakage, r = 5, 3e-3, 0.02, 0.4
    ours = sample(Case(5, rounds, p, 0.0, leakage, ReturnModel.constant(r), initial="none"), 20 * shots, 7)
    fails, _ = independent_failures(5, rounds, p, leakage, r, shots, seed=8)
    a, b = _eps(ours["failures"], ours["shots"], rounds), _eps(fails, shots, rounds)
    assert abs(_z(a, b)) < 4, (a, b)


# ------------------------------------------------------------------ age dependence, steady state, error bars
def geometric_fit(S: np.ndarray) -> float:
    """The geometric S(k) = q^k fitted to S(k), k >= 1, by least squares of ln S through S(0) = 1: the return
    probability 1 - q."""
    k = np.arange(1, len(S))
    return 1.0 - math.exp(float(np.sum(k * np.log(S[1:])) / np.sum(k * k)))


def test_a_two_step_survival_is_not_its_geometric_fit():
    """No return in the first cycle, then r = 0.5: eps differs from that of the geometric fit to its S(k) (k = 1..10)
    by more than 4 combined standard errors, and each leaked share is its own p D/(1 + p D) within 4 errors."""
    d, p, leakage, n = 3, 1e-3, 0.01, 20000
    two = ReturnModel((0.0,), 0.5)
    fit = ReturnModel.constant(geometric_fit(two.survival(10)))
    out = {}
    for name, model, seed in (("two", two, 1), ("fit", fit, 2)):
        res = sample(Case(d, 3 * d, p, 0.0, leakage, model), n, seed)
        D = model.mean_duration
        lf = res["leaked_fraction"]
        assert abs(lf["value"] - leakage * D / (1 + leakage * D)) < 4 * lf["error"], (name, lf, D)
        out[name] = _eps(res["failures"], n, 3 * d)
    assert two.mean_duration == pytest.approx(2.0) and fit.mean_duration < 1.5
    assert _z(out["two"], out["fit"]) > 4, out


@pytest.mark.parametrize("model", [ReturnModel((0.7, 0.03, 0.5), 0.3), ReturnModel.constant(0.05)])
def test_steady_leaked_share_is_p_D_over_1_plus_p_D(model):
    """Starting in the steady state, the leaked share at every round's start is p D/(1 + p D) (the renewal
    argument of the QEC view), for an age-dependent r_k and a slow constant one, within 4 standard errors."""
    leakage = 0.02
    res = sample(Case(3, 30, 1e-3, 0.0, leakage, model), 4000, seed=9)
    D = model.mean_duration
    lf = res["leaked_fraction"]
    assert abs(lf["value"] - leakage * D / (1 + leakage * D)) < 4 * lf["error"], (lf, D)


def test_the_error_bar_is_the_spread_over_seeds():
    """eps over 100 seeds: the pulls (eps_i - mean)/error_i have a spread of 1 within 4 of its standard errors
    (1/sqrt(2 (n - 1)))."""
    case = Case(3, 6, 2e-3, 0.0, 0.01, ReturnModel.constant(0.5))
    eps = [_eps(sample(case, 600, seed=100 + i)["failures"], 600, 6) for i in range(100)]
    v = np.array([e["value"] for e in eps])
    e = np.array([e["error"] for e in eps])
    pulls = (v - v.mean()) / e * math.sqrt(len(v) / (len(v) - 1))
    assert abs(pulls.std(ddof=1) - 1.0) < 4 / math.sqrt(2 * (len(v) - 1)), pulls.std(ddof=1)


# ------------------------------------------------------------------ the study
def _cli(*args):
    return CliRunner().invoke(main, ["study", "logical", *[str(a) for a in args]])


def test_the_study_reports_every_point_with_its_inputs(tmp_path):
    """--json prints the summary: every point with distance, lru, leakage and logical_error_per_cycle {value,
    error}; each kind with return_probability and added_error; Lambda, the sweep; a rerun resumes with the same
    numbers; the bare transmon's error per cycle stated beside p, with the warning on the paper's hardware."""
    out = tmp_path / "run"
    alone = tmp_path / "alone.toml"  # the shots alone (no second pass to a target error)
    alone.write_text('study = "logical"\ntarget_error = {}\n')
    args = ["--lrus", "none,reset", "--distances", "3", "--shots", "1500", "--leakage-sweep", "0,3e-3",
            "--sweep-distance", "3", "--out", out, "--json", "--workers", "1", "--config", alone]
    res = _cli(*args)
    assert res.exit_code == 0, res.output
    s = json.loads(res.output)
    assert {(p["distance"], p["lru"], p["leakage"]) for p in s["points"]} == \
        {(3, k, l) for k in ("none", "reset") for l in (0.0, 1e-3, 3e-3)}
    for p in s["points"]:
        assert set(p["logical_error_per_cycle"]) == {"value", "error"} and p["rounds"] == 9
    assert s["lrus"]["reset"]["return_probability"] == 1.0 and s["lrus"]["reset"]["added_error"]["p_total"] == 0.0
    none = s["lrus"]["none"]
    assert none["return_probability"] == pytest.approx(-math.expm1(-1.0 / 50.0)) and none["T1_leakage_us"] == 50.0
    assert s["hardware"]["bare_error_per_cycle"]["p_total"]["value"] == pytest.approx(0.00746, rel=1e-2)
    assert not s["hardware"]["above_threshold"] and s["sweep"]["break_even"]["value"] is None
    assert (out / "figures" / "logical.png").exists() and (out / "results.nc").exists()
    again = _cli(*args)
    assert json.loads(again.output)["points"] == s["points"]
    assert all(p["shots"] == 1500 and p["extra_shots"] == 0 for p in s["points"])
    paper = _cli("--lrus", "reset", "--distances", "3", "--shots", "200", "--leakage-sweep", "0", "--sweep-distance",
                 "3", "--t1", "16.7us", "--tphi", "10us", "--out", tmp_path / "paper", "--json", "--workers", "1",
                 "--config", alone)
    ps = json.loads(paper.output)
    assert ps["hardware"]["above_threshold"] and "threshold" in ps["warning"]
    assert ps["hardware"]["bare_error_per_cycle"]["p_total"]["value"] == pytest.approx(0.0755, abs=5e-4)


def test_the_array_row_is_the_qec_studys(tmp_path, monkeypatch):
    """The array's r_k, tail, D and added error are those of the qec study's computation (replaced here by a
    synthetic summary: the study passes its numbers through, r_k = 1 - S(k+1)/S(k) exactly, 0 where S rises,
    the depolarizing p of added_T1_T2_fit's p_total, the curve-based added error beside it)."""
    from lru_mps.studies import qec, run_study
    from lru_mps.studies.base import StudyContext

    S = [0.3, 0.31, 0.1, 0.04]
    fake = {"leakage_survival": {"mean": S, "sem": [0.01] * 4, "tail": {"method": "fit", "S_end": 0.04,
                                                                         "ratio": 0.5}},
            "mean_leakage_cycles": {"value": 0.79, "error": 0.02},
            "error_per_cycle": {"added_T1_T2_fit": {"p_total": {"value": 0.004, "error": 0.001}},
                                "added": {"p_total": {"value": 0.1, "error": 0.01}}},
            "parameters": {"length": 3}}
    seen = []
    monkeypatch.setattr(qec.Qec, "compute", lambda self, cfg, ctx: seen.append(cfg) or (None, fake))
    res = run_study("logical", StudyContext(out=tmp_path / "run"), overrides={
        "lrus": "array", "distances": "3", "shots": 300, "leakage_sweep": "1e-3", "sweep_distance": 3,
        "trajectories": 77, "target_error": {}})
    arr = res.summary["lrus"]["array"]
    assert arr["return_probability"] == pytest.approx([0.7, 0.0, 1 - 0.1 / 0.31, 0.6])
    assert arr["return_probability_tail"] == pytest.approx(0.5) and arr["rises"] == [1]
    assert arr["added_error"]["p_total"] == 0.004 and arr["added_error"]["p_x"] == pytest.approx(0.004 / 3)
    assert arr["added_error"]["curve_based"]["p_total"]["value"] == 0.1 and arr["mean_leakage_cycles"]["value"] == 0.79
    cfg = seen[0]
    assert cfg["study"] == "qec" and cfg["trajectories"] == 77 and cfg["direct_realizations"] == 0
    assert cfg["model"]["t1"] == "100us" and cfg["cycle_time"] == "1us"


@pytest.mark.long
def test_the_array_row_is_the_qec_studys_own_run(tmp_path):
    """The real thing: the logical study's array row against `study qec` run on the same options into its folder
    (the qec ensemble's blocks are shared): S(k) and the added errors equal."""
    from lru_mps.studies import run_study
    from lru_mps.studies.base import StudyContext

    out = tmp_path / "run"
    res = run_study("logical", StudyContext(out=out), quick=True, overrides={
        "lrus": "array", "distances": "3", "shots": 300, "leakage_sweep": "1e-3", "sweep_distance": 3,
        "target_error": {}})
    q = run_study("qec", StudyContext(out=out / "qec"), quick=True, overrides={
        "t1": "100us", "tphi": "200us", "direct_realizations": 0, "injection": 1e-3}).summary
    arr = res.summary["lrus"]["array"]
    assert arr["survival"][1:] == q["leakage_survival"]["mean"]
    assert arr["added_error"]["p_total"] == q["error_per_cycle"]["added_T1_T2_fit"]["p_total"]["value"]
    assert arr["added_error"]["curve_based"] == q["error_per_cycle"]["added"]


@pytest.mark.parametrize("args, shown", [
    (["--distances", "4"], "--distances=4 is not allowed: odd code distances >= 3"),
    (["--distances", "1,3"], "--distances=1,3 is not allowed: odd code distances >= 3"),
    (["--physical-error", "-0.1"], "--physical-error=-0.1 is not allowed: a probability in [0, 0.5)"),
    (["--physical-error", "1"], "--physical-error=1 is not allowed: a probability in [0, 0.5)"),
    (["--leakage", "1"], "--leakage=1 is not allowed: a probability in [0, 1)"),
    (["--leakage-sweep", "0,2"], "--leakage-sweep=0,2 is not allowed: a probability in [0, 1)"),
    (["--removal", "0.5"], "--removal=0.5 is not allowed: one kind of --lrus none or reset"),
    (["--removal", "0.5", "--lrus", "array"], "--removal=0.5 is not allowed: one kind of --lrus none or reset"),
    (["--removal", "1.5", "--lrus", "none"], "--removal=1.5 is not allowed: a probability per round in (0, 1]"),
    (["--added-error", "0.01", "--lrus", "none,reset"], "--added-error=0.01 is not allowed: one kind in --lrus"),
    (["--lrus", "array,magic"], "--lrus=array,magic is not allowed: LRU kinds among none,array,reset"),
])
def test_bad_input_is_one_line_naming_the_option(tmp_path, monkeypatch, args, shown):
    """Refused before anything runs, in one line naming the option."""
    from lru_mps.studies import qec

    monkeypatch.setattr(qec.Qec, "compute", lambda *a: (_ for _ in ()).throw(AssertionError("the qec ran")))
    res = _cli(*args, "--out", tmp_path / "x")
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    (line,) = [x for x in res.output.splitlines() if x.startswith("Error:")]
    assert line.startswith(f"Error: {shown}"), line


def test_the_calibration_options_define_one_row(tmp_path):
    """--lrus none --removal R --added-error E: the one row, with R and E as given (the constant r's D)."""
    alone = tmp_path / "alone.toml"
    alone.write_text('study = "logical"\ntarget_error = {}\n')
    res = _cli("--lrus", "none", "--removal", "0.25", "--added-error", "0.002", "--distances", "3", "--shots", "300",
               "--leakage-sweep", "1e-3", "--sweep-distance", "3", "--out", tmp_path / "c", "--json", "--workers", "1",
               "--config", alone)
    assert res.exit_code == 0, res.output
    s = json.loads(res.output)
    assert list(s["lrus"]) == ["none"] and s["lrus"]["none"]["return_probability"] == 0.25
    assert s["lrus"]["none"]["added_error"]["p_total"] == 0.002
    assert s["lrus"]["none"]["mean_leakage_cycles"]["value"] == pytest.approx(3.0)
    with pytest.raises(ParameterError) as err:
        Case(3, 3, 1e-3, 0.0, 1e-3, ReturnModel.constant(0.5), initial="later")
    assert err.value.name == "initial_leakage"


def test_circuits_never_reach_into_the_engines():
    """lru_mps/circuits imports the base modules, the package's process pool and itself only."""
    allowed = ("lru_mps.errors", "lru_mps.run.executors", "lru_mps.circuits")
    for path in (ROOT / "lru_mps" / "circuits").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level:
                target = "lru_mps." + ("circuits." if node.level == 1 else "") + (node.module or "")
                assert target.startswith(allowed), (path.name, target)
            elif isinstance(node, ast.Import):
                assert not any(a.name.startswith("lru_mps") for a in node.names), path.name
