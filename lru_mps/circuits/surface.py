"""The rotated surface-code Z memory as stim builds it, cut where the leakage model acts (docs/physics.md §8,
"The logical error per cycle").

The circuit is stim's ``surface_code:rotated_memory_z`` at distance d over
``rounds`` rounds with all four of its noise parameters equal to the
physical error p (``after_clifford_depolarization``,
``before_round_data_depolarization``, ``before_measure_flip_probability``,
``after_reset_flip_probability``).  It is generated with a marker value in
place of the data depolarization so that the start of every round is found
in the flattened circuit (the DEPOLARIZE1 on the data qubits that opens a
round), then the marker is replaced by p; the LRU's added error, a
depolarizing probability per data qubit per round, follows it as a
DEPOLARIZE1 of its own.  The same circuit without leakage gives the
decoder's detector error model (:func:`decoder`): the decoder knows every
Pauli error of the circuit, the added one included, and nothing of leakage.

:class:`Program` holds the circuit as segments for a frame simulator, each
followed by where the leakage model acts: ``round`` (the round's start,
after the data depolarization: returns, then new leaks; the added error
follows them), ``cx`` (after a
layer of two-qubit gates: the partners of leaked data qubits are fully
depolarized) and ``final`` (before the data qubits' final measurement:
leaked ones read at random).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import stim

from ..errors import require

#: the marker that stands in for the data depolarization while the round starts are found (any value no other
#: noise parameter takes: it is compared exactly)
MARKER = 0.0123456789


def check_distance(d) -> int:
    """An odd code distance >= 3 (the rotated surface code's)."""
    ok = not isinstance(d, bool) and isinstance(d, (int, np.integer)) and d >= 3 and d % 2 == 1
    require(ok, "distances", d, "odd code distances >= 3, e.g. 3,5,7")
    return int(d)


def check_probability(name: str, p, upper: float = 1.0, closed: bool = False) -> float:
    """A probability in [0, upper) ([0, upper] with ``closed``), by the option's name."""
    try:
        x = float(p)
    except (TypeError, ValueError):
        x = float("nan")
    ok = isinstance(p, (int, float, np.floating, str)) and not isinstance(p, bool) and 0.0 <= x and \
        (x <= upper if closed else x < upper)
    require(ok, name, p, f"a probability in [0, {upper:g}{']' if closed else ')'}")
    return x


def memory_circuit(distance: int, rounds: int, p: float, added: float = 0.0, marked: bool = False) -> stim.Circuit:
    """The flattened Z-memory circuit: stim's generated circuit with all four noise parameters p, and a
    DEPOLARIZE1(added) on the data qubits after each round's data depolarization (none where added = 0).
    ``marked``: the data depolarization keeps the marker value (:data:`MARKER`) so that the rounds can be found
    (a marker of p = 0 is left in as DEPOLARIZE1(MARKER) and must be replaced: :class:`Program` does)."""
    check_distance(distance)
    require(int(rounds) == rounds and rounds >= 1, "rounds", rounds, "an integer >= 1")
    gen = stim.Circuit.generated("surface_code:rotated_memory_z", distance=distance, rounds=int(rounds),
                                 after_clifford_depolarization=p, before_round_data_depolarization=MARKER,
                                 before_measure_flip_probability=p, after_reset_flip_probability=p)
    out = stim.Circuit()
    for ins in gen.flattened():
        if ins.name == "DEPOLARIZE1" and ins.gate_args_copy() == [MARKER]:
            targets = ins.targets_copy()
            if marked:
                out.append(ins)
            elif p > 0:
                out.append("DEPOLARIZE1", targets, p)
            if added > 0 and not marked:
                out.append("DEPOLARIZE1", targets, added)
            continue
        out.append(ins)
    return out


def data_qubits(distance: int) -> np.ndarray:
    """The data qubits of the generated circuit: the targets of its final M (in order)."""
    circ = memory_circuit(distance, 1, 0.0)
    finals = [ins for ins in circ if ins.name == "M"]
    return np.array([t.value for t in finals[-1].targets_copy()], dtype=np.int64)


@dataclass
class Hook:
    """Where the leakage model acts after a segment: kind 'round', 'cx' or 'final'; for 'cx' the pairs'
    data-qubit positions (in :attr:`Program.data`) and their partners' qubit indices."""

    kind: str
    data_pos: np.ndarray | None = None
    partners: np.ndarray | None = None


class Program:
    """The Z-memory circuit of (distance, rounds, p, added) cut into segments for a frame simulator, each with its
    :class:`Hook` (module docstring)."""

    def __init__(self, distance: int, rounds: int, p: float, added: float = 0.0):
        self.distance, self.rounds, self.p, self.added = distance, int(rounds), float(p), float(added)
        self.data = data_qubits(distance)
        pos = {int(q): i for i, q in enumerate(self.data)}
        marked = memory_circuit(distance, rounds, p, marked=True)
        self.num_qubits = marked.num_qubits
        self.segments: list[stim.Circuit] = []
        self.hooks: list[Hook] = []
        seg = stim.Circuit()
        for ins in marked:
            name = ins.name
            if name == "DEPOLARIZE1" and ins.gate_args_copy() == [MARKER]:
                targets = ins.targets_copy()
                if self.p > 0:
                    seg.append("DEPOLARIZE1", targets, self.p)
                self._cut(seg, Hook("round"))
                seg = stim.Circuit()
                if self.added > 0:  # after the round's returns and leaks
                    seg.append("DEPOLARIZE1", targets, self.added)
                continue
            if name == "M" and sorted(t.value for t in ins.targets_copy()) == sorted(self.data.tolist()):
                self._cut(seg, Hook("final"))
                seg = stim.Circuit()
                seg.append(ins)
                continue
            seg.append(ins)
            if name in ("CX", "CZ", "CY", "SWAP"):
                t = [x.value for x in ins.targets_copy()]
                pairs = np.array(t, dtype=np.int64).reshape(-1, 2)
                dpos, partners = [], []
                for a, b in pairs:
                    for q, other in ((a, b), (b, a)):
                        if int(q) in pos:
                            dpos.append(pos[int(q)])
                            partners.append(int(other))
                self._cut(seg, Hook("cx", np.array(dpos, dtype=np.int64), np.array(partners, dtype=np.int64)))
                seg = stim.Circuit()
        self._cut(seg, None)
        n_rounds = sum(h is not None and h.kind == "round" for h in self.hooks)
        assert n_rounds == self.rounds, (n_rounds, self.rounds)
        self.circuit = memory_circuit(distance, rounds, p, added)
        self.num_detectors = self.circuit.num_detectors

    def _cut(self, seg: stim.Circuit, hook: Hook | None) -> None:
        self.segments.append(seg)
        self.hooks.append(hook)


def decoder(circuit: stim.Circuit):
    """pymatching's matcher for the leakage-free circuit's detector error model (decomposed into graphlike
    errors): the decoder of every case, leakage-unaware."""
    import pymatching

    dem = circuit.detector_error_model(decompose_errors=True)
    return pymatching.Matching.from_detector_error_model(dem)
