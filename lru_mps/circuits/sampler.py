"""Sampling the Z memory with leaking data qubits: a batched Pauli-frame simulation with per-shot leakage masks,
decoded by matching (docs/physics.md §8, "The logical error per cycle").

stim's ``FlipSimulator`` runs a batch of shots through the circuit's
segments (:class:`~lru_mps.circuits.surface.Program`); between them this
module keeps, per shot and data qubit, whether it is leaked and its age
(rounds since it leaked), and acts on the Pauli frames through masks:

* at each round's start, after the data depolarization: every leaked qubit
  ages by one and returns with its kind's r at that age
  (:class:`~lru_mps.circuits.model.ReturnModel`), maximally mixed (a
  uniformly random Pauli: X and Z each with probability 1/2); then every
  unleaked data qubit leaks with probability ``leakage``, maximally mixed;
* after each layer of two-qubit gates: the partner of every leaked data
  qubit is fully depolarized (a uniformly random Pauli);
* before the final measurement: a leaked data qubit reads at random (X with
  probability 1/2).

The measure qubits are reset every round (the circuit's MR) and never leak.
The leaked share of the data qubits is recorded at every round's start
after the returns (before the new leaks), the quantity of
:func:`~lru_mps.circuits.model.steady_leaked_fraction`.  The start of the
memory is the steady state (``initial = "steady"``: ages drawn from
p S(a)/(1 + p D)) or no leakage (``"none"``).  The detection events go to
pymatching's ``decode_batch`` with the leakage-free circuit's detector
error model; a shot fails where the prediction differs from the
observable's flip.

Shots run in chunks of :data:`CHUNK` with seeds from
``SeedSequence(seed, spawn_key=(chunk,))``, so the counts do not depend on
the number of worker processes (:func:`sample`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import stim

from ..errors import require
from ..run.executors import map_in_processes
from .model import ReturnModel
from .surface import Program, decoder

#: shots per chunk (the unit of seeding and of the process pool)
CHUNK = 16384
#: shots per frame-simulator batch within a chunk
BATCH = 4096
INITIAL = ("steady", "none")


@dataclass(frozen=True)
class Case:
    """One memory experiment: distance, rounds, physical error p, the added depolarizing probability per data qubit
    per round, the leakage probability per data qubit per round, how leaked qubits return, the initial leakage."""

    distance: int
    rounds: int
    p: float
    added: float
    leakage: float
    returns: ReturnModel
    initial: str = "steady"

    def __post_init__(self):
        require(self.initial in INITIAL, "initial_leakage", self.initial, f"one of {', '.join(INITIAL)}")


@lru_cache(maxsize=8)
def _program(distance: int, rounds: int, p: float, added: float) -> Program:
    return Program(distance, rounds, p, added)


@lru_cache(maxsize=8)
def _matcher(distance: int, rounds: int, p: float, added: float):
    prog = _program(distance, rounds, p, added)
    if prog.circuit.detector_error_model(decompose_errors=True).num_errors == 0:
        return None  # a noiseless circuit: the decoder predicts no flip
    return decoder(prog.circuit)


#: what one frame set costs (stim's set_pauli_flip, from Python) in entries of a broadcast mask (measured ~200):
#: fewer hits than entries / SET_COST go one by one, more through two masks
SET_COST = 200


def _random_pauli(sim: stim.FlipSimulator, rows: np.ndarray, values: np.ndarray, width: int,
                  rng: np.random.Generator, paulis: str = "XZ") -> None:
    """A uniformly random Pauli (I, X, Y, Z) on qubit ``rows[i]`` in the shots where ``values[i]`` is set
    (``paulis="X"``: I or X, a random Z-basis readout).  Few hits: each frame is set to a uniformly random Pauli
    (the frame times an independent uniform Pauli is one, whatever the frame was); many: X and Z each with
    probability 1/2 through masks over qubits 0..width-1 (stim's masks cost per entry)."""
    q, k = np.nonzero(values)
    if len(q) * SET_COST < len(paulis) * width * values.shape[1]:
        draws = rng.integers(0, 4 if paulis == "XZ" else 2, size=len(q))
        for qubit, shot, pauli in zip(rows[q].tolist(), k.tolist(), draws.tolist()):
            if pauli:
                sim.set_pauli_flip(pauli, qubit_index=qubit, instance_index=shot)
        return
    for pauli in paulis:
        mask = np.zeros((width, values.shape[1]), dtype=bool)
        mask[rows] = values & (rng.random(values.shape) < 0.5)
        sim.broadcast_pauli_errors(pauli=pauli, mask=mask)


def _initial_ages(case: Case, shape, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(leaked, age) at the first round's start: the steady state's ages or none."""
    leaked = np.zeros(shape, dtype=bool)
    age = np.zeros(shape, dtype=np.int64)
    if case.initial == "none" or case.leakage == 0.0:
        return leaked, age
    ages, probs = case.returns.steady_ages(case.leakage)
    cum = np.cumsum(probs)
    u = rng.random(shape)
    leaked = u < cum[-1]
    idx = np.searchsorted(cum, u[leaked], side="right")
    age[leaked] = ages[np.minimum(idx, len(ages) - 1)]
    return leaked, age


def run_batch(case: Case, shots: int, rng: np.random.Generator) -> dict:
    """One frame-simulator batch of ``shots``: {"failures", "shots", "leaked_sum", "leaked_sq"} (the last two: the
    sum over shots of each shot's leaked share of the data qubits, averaged over its rounds' starts, and of its
    square)."""
    prog = _program(case.distance, case.rounds, case.p, case.added)
    sim = stim.FlipSimulator(batch_size=shots, num_qubits=prog.num_qubits,
                             seed=int(rng.integers(0, 2**63 - 1)))
    data = prog.data
    nd = len(data)
    leaked, age = _initial_ages(case, (nd, shots), rng)
    share = np.zeros(shots)
    first = True
    on = case.leakage > 0.0 or bool(leaked.any())
    top = int(data.max()) + 1

    def apply(rows, values, paulis="XZ"):
        _random_pauli(sim, rows, values, int(rows.max()) + 1 if rows is not data else top, rng, paulis)

    for seg, hook in zip(prog.segments, prog.hooks):
        sim.do(seg)
        if hook is None or not on:
            continue
        if hook.kind == "round":
            if not first and leaked.any():
                age[leaked] += 1
                back = np.zeros_like(leaked)
                back[leaked] = rng.random(int(leaked.sum())) < case.returns.at_ages(age[leaked])
                leaked &= ~back
                if back.any():
                    apply(data, back)
            first = False
            share += leaked.sum(axis=0) / nd
            new = ~leaked & (rng.random((nd, shots)) < case.leakage)
            if new.any():
                leaked |= new
                age[new] = 0
                apply(data, new)
        elif hook.kind == "cx":
            hit = leaked[hook.data_pos]
            if hit.any():
                apply(hook.partners, hit)
        elif hook.kind == "final" and leaked.any():
            apply(data, leaked, "X")
    dets = sim.get_detector_flips().T
    obs = sim.get_observable_flips()[0]
    matcher = _matcher(case.distance, case.rounds, case.p, case.added)
    pred = np.zeros(shots, dtype=bool) if matcher is None else matcher.decode_batch(dets.astype(np.uint8))[:, 0] != 0
    share /= case.rounds
    return {"failures": int(np.sum(pred != obs)), "shots": int(shots), "leaked_sum": float(share.sum()),
            "leaked_sq": float(np.sum(share**2))}


def run_chunk(case: Case, shots: int, seed: int, chunk: int) -> dict:
    """One chunk of ``shots`` (<= CHUNK) with its own stream, SeedSequence(seed, spawn_key=(chunk,)): the summed
    counts of its batches."""
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(chunk,)))
    total = {"failures": 0, "shots": 0, "leaked_sum": 0.0, "leaked_sq": 0.0}
    done = 0
    while done < shots:
        n = min(BATCH, shots - done)
        out = run_batch(case, n, rng)
        for k in total:
            total[k] += out[k]
        done += n
    return total


def _chunks(shots: int) -> list[int]:
    require(not isinstance(shots, bool) and int(shots) == shots and shots >= 1, "shots", shots,
            "an integer >= 1 (shots per distance and case)")
    shots = int(shots)
    return [CHUNK] * (shots // CHUNK) + ([shots % CHUNK] if shots % CHUNK else [])


def summarize(raw: dict) -> dict:
    """Summed counts {"failures", "shots", "leaked_sum", "leaked_sq"} as {"failures", "shots", "leaked_fraction":
    {"value", "error"}}, the leaked share's error the standard error over shots."""
    n = raw["shots"]
    mean = raw["leaked_sum"] / n
    var = max(raw["leaked_sq"] / n - mean**2, 0.0)
    return {"failures": int(raw["failures"]), "shots": int(n),
            "leaked_fraction": {"value": mean, "error": math.sqrt(var / max(n - 1, 1))}}


def merge(parts: list[dict]) -> dict:
    """The sum of raw counts (in the order given: the same floats for the same order)."""
    return {k: sum(p[k] for p in parts) for k in ("failures", "shots", "leaked_sum", "leaked_sq")}


def sample(case: Case, shots: int, seed: int, workers: int = 1) -> dict:
    """``shots`` shots of ``case`` in chunks of CHUNK on up to ``workers`` processes (the package's pool,
    :func:`lru_mps.run.executors.map_in_processes`): {"failures", "shots", "leaked_fraction": {"value", "error"}}
    with the leaked share's error the standard error over shots."""
    return summarize(sample_many([(case, shots, seed)], workers)[0])


def sample_many(jobs: list[tuple], workers: int = 1, on_case=None) -> list[dict]:
    """The raw counts {"failures", "shots", "leaked_sum", "leaked_sq"} of every (case, shots, seed[, first chunk])
    of ``jobs``, their chunks in one pool (the numbers do not depend on ``workers`` or on the other jobs; a job's
    chunks are numbered from its first chunk, 0 by default, so that more shots of a case continue its streams);
    ``on_case(i, counts)`` is called as job i's last chunk finishes (e.g. to store it before the others end)."""
    items, owner = [], []
    for j, job in enumerate(jobs):
        case, shots, seed = job[:3]
        first = job[3] if len(job) > 3 else 0
        for i, n in enumerate(_chunks(shots)):
            items.append((case, n, int(seed), first + i))
            owner.append(j)
    parts: list[list[tuple[int, dict]]] = [[] for _ in jobs]
    need = [owner.count(j) for j in range(len(jobs))]
    out: list[dict | None] = [None] * len(jobs)

    def done(i, result):
        j = owner[i]
        parts[j].append((i, result))
        if len(parts[j]) == need[j]:  # summed in chunk order (the same floats whatever the completion order)
            out[j] = merge([r for _, r in sorted(parts[j], key=lambda x: x[0])])
            if on_case is not None:
                on_case(j, out[j])

    map_in_processes(run_chunk, items, workers, on_result=done)
    return out
