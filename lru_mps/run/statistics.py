"""Streaming ensemble statistics merged by exact sums.

Each trajectory adds its record to an :class:`ObservableAccumulator`; two
accumulators over disjoint sets of trajectories merge by adding their sums
(counts, sums, sums of squares), never by averaging averages.

Observables (docs/physics.md §7), per time point:

``leakage_array``     P_star^(L) = sum_l <|2><2|_l>
``leakage_site1``     P_star^(1) = <|2><2|_1>
``qubit_population``  <n_1>
``qubit_coherence``   C = |<sigma^-_1>| in the coding qubit's frame, the
                      trajectory average taken as a complex number first.
``site_population``   <n_l> per site, ``site_leakage`` <|2><2|_l> per site.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SCALARS = ("leakage_array", "leakage_site1", "qubit_population")
OBSERVABLES = SCALARS + ("qubit_coherence",)
SITE_RESOLVED = ("site_population", "site_leakage")


def _scalars(populations: np.ndarray) -> dict[str, np.ndarray]:
    """Scalar and per-site observables of one record's populations (T, L, 3)."""
    n_sites = populations[:, :, 1] + 2.0 * populations[:, :, 2]
    leak = populations[:, :, 2]
    return {
        "leakage_array": leak.sum(axis=1),
        "leakage_site1": leak[:, 0],
        "qubit_population": n_sites[:, 0],
        "site_population": n_sites,
        "site_leakage": leak,
    }


@dataclass
class MeanSem:
    """A mean with its standard error (same shape)."""

    mean: np.ndarray
    sem: np.ndarray


class ObservableAccumulator:
    """Sums over trajectories of the observables of one initial state."""

    def __init__(self, n_times: int, L: int):
        self.count = 0
        self.sums = {k: np.zeros(n_times) for k in SCALARS}
        self.sums.update({k: np.zeros((n_times, L)) for k in SITE_RESOLVED})
        self.squares = {k: np.zeros_like(v) for k, v in self.sums.items()}
        self.z = np.zeros(n_times, dtype=complex)
        self.z2 = np.zeros(n_times, dtype=complex)
        self.zabs2 = np.zeros(n_times)

    def add(self, populations: np.ndarray, coherence: np.ndarray) -> None:
        """Add one trajectory's record."""
        self.count += 1
        for k, v in _scalars(populations).items():
            self.sums[k] += v
            self.squares[k] += v * v
        self.z += coherence
        self.z2 += coherence * coherence
        self.zabs2 += np.abs(coherence) ** 2

    def merge(self, other: "ObservableAccumulator") -> "ObservableAccumulator":
        """Add another accumulator's sums into this one (returns self)."""
        self.count += other.count
        for k in self.sums:
            self.sums[k] += other.sums[k]
            self.squares[k] += other.squares[k]
        self.z += other.z
        self.z2 += other.z2
        self.zabs2 += other.zabs2
        return self

    def state(self) -> dict[str, np.ndarray]:
        """All sums as a flat dict of arrays (for storage and resuming)."""
        out = {"count": np.array(self.count)}
        for k in self.sums:
            out[f"sum_{k}"] = self.sums[k]
            out[f"sumsq_{k}"] = self.squares[k]
        out.update(sum_z=self.z, sum_z2=self.z2, sum_zabs2=self.zabs2)
        return out

    @classmethod
    def from_state(cls, state: dict) -> "ObservableAccumulator":
        """Rebuild an accumulator from :meth:`state` (e.g. loaded from disk)."""
        T, L = state["sum_site_population"].shape
        acc = cls(T, L)
        acc.count = int(state["count"])
        for k in acc.sums:
            acc.sums[k] = np.array(state[f"sum_{k}"], dtype=float)
            acc.squares[k] = np.array(state[f"sumsq_{k}"], dtype=float)
        acc.z = np.array(state["sum_z"], dtype=complex)
        acc.z2 = np.array(state["sum_z2"], dtype=complex)
        acc.zabs2 = np.array(state["sum_zabs2"], dtype=float)
        return acc

    def get(self, name: str) -> MeanSem:
        """Mean and standard error of an observable over the trajectories so far."""
        n = self.count
        if n == 0:
            raise ValueError("no trajectories accumulated")
        if name == "qubit_coherence":
            return self._coherence()
        mean = self.sums[name] / n
        if n < 2:
            return MeanSem(mean, np.zeros_like(mean))
        var = np.clip(self.squares[name] / n - mean**2, 0.0, None) * n / (n - 1)
        return MeanSem(mean, np.sqrt(var / n))

    def _coherence(self) -> MeanSem:
        """|mean z| and its error along the direction of the mean (delta method)."""
        n = self.count
        zbar = self.z / n
        mod = np.abs(zbar)
        if n < 2:
            return MeanSem(mod, np.zeros_like(mod))
        u = np.where(mod > 0, zbar / np.where(mod > 0, mod, 1.0), 1.0)
        # Var(Re(u* z)) with (Re w)^2 = (|w|^2 + Re(w^2)) / 2
        second = 0.5 * (self.zabs2 / n + np.real(np.conj(u) ** 2 * self.z2 / n))
        var = np.clip(second - mod**2, 0.0, None) * n / (n - 1)
        return MeanSem(mod, np.sqrt(var / n))
