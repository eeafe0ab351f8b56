"""The result of an ensemble: block sums of every observable, and what is needed to reproduce it."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import ParameterError
from ..physics.model import ArraySpec
from .settings import RunSettings
from .statistics import MeanSem, ObservableAccumulator

#: which initial state each observable is measured on (docs/physics.md §7)
OBSERVABLE_INIT = {
    "leakage_array": "leakage",
    "leakage_site1": "leakage",
    "qubit_population": "qubit",
    "qubit_coherence": "coherence",
}


@dataclass
class SimulationResult:
    """Ensemble statistics of one run, plus everything needed to reproduce it.

    ``blocks[init][b]`` holds the sums over the trajectories of block b
    (contiguous index ranges, :func:`lru_mps.run.blocks.block_of`);
    ``accumulators`` are their totals.  Blocks give jackknife errors for
    derived quantities such as fitted decay times, whose time points are
    correlated.
    """

    spec: ArraySpec
    settings: RunSettings
    blocks: dict[str, list[ObservableAccumulator]]
    #: per-trajectory engine diagnostics {init: {name: array over trajectories}} (MPS: truncation, norm, Trotter)
    diagnostics: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)

    @property
    def accumulators(self) -> dict[str, ObservableAccumulator]:
        out = {}
        for init, blocks in self.blocks.items():
            total = blocks[0].empty() if blocks else ObservableAccumulator(len(self.times), self.spec.L)
            for b in blocks:
                total.merge(b)
            out[init] = total
        return out

    def leave_one_out(self) -> list["SimulationResult"]:
        """Results with one block left out each (for jackknife errors); [] if fewer than 2 blocks."""
        n_blocks = min(len(b) for b in self.blocks.values())
        if n_blocks < 2:
            return []
        return [
            SimulationResult(self.spec, self.settings, {k: v[:j] + v[j + 1 :] for k, v in self.blocks.items()})
            for j in range(n_blocks)
        ]

    @property
    def times(self) -> np.ndarray:
        """The time grid (1/J)."""
        return self.settings.times

    @property
    def completed(self) -> int:
        return min(acc.count for acc in self.accumulators.values())

    def observable(self, name: str) -> MeanSem:
        """Mean and standard error of an observable on the time grid."""
        if name in OBSERVABLE_INIT:
            init = OBSERVABLE_INIT[name]
            if init not in self.blocks:
                raise ParameterError("observable", name, f"needs the '{init}' initial state in the run")
            return self.accumulators[init].get(name)
        raise ParameterError("observable", name, f"one of {', '.join(OBSERVABLE_INIT)}")

    def thermal_mass_dropped(self) -> float | None:
        """The Gibbs mass of the thermal starts left out because the sector engine cannot hold them, averaged over
        the rows (the largest over the initial states), or None where every start fits
        (:func:`lru_mps.run.thermal_sample.thermal_cap`).  Every population of the ensemble then stands for the
        array conditioned on the starts that fit: it differs from the full ensemble's by at most this mass
        (docs/physics.md §6.5)."""
        masses = [float(np.mean(d["thermal_mass_dropped"])) for d in self.diagnostics.values()
                  if "thermal_mass_dropped" in d and len(d["thermal_mass_dropped"])]
        return max(masses) if masses else None

    def site_resolved(self, init: str, name: str = "site_population") -> MeanSem:
        """Per-site ``<n_l>`` ('site_population') or ``<|2><2|_l>`` ('site_leakage'), shape (T, L)."""
        return self.accumulators[init].get(name)


def assemble(spec: ArraySpec, settings: RunSettings, blocks: list) -> SimulationResult:
    """Merge block results (:class:`lru_mps.run.blocks.BlockResult`, in block order) into a SimulationResult."""
    blocks = sorted(blocks, key=lambda b: b.index)
    per_init = {name: [b.accumulators[name] for b in blocks] for name in settings.inits}
    diag: dict[str, dict[str, np.ndarray]] = {}
    for b in blocks:
        for name, d in b.diagnostics.items():
            for key, values in d.items():
                prev = diag.setdefault(name, {}).get(key)
                diag[name][key] = np.asarray(values) if prev is None else np.concatenate([prev, values])
    return SimulationResult(spec, settings, per_init, diag)
