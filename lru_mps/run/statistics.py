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
    """A mean with its standard error (same shape); ``resolved`` (stratified runs): where the error can be trusted."""

    mean: np.ndarray
    sem: np.ndarray
    resolved: np.ndarray | None = None


#: a stratum whose rows carry a point through at least this many effective rows ((sum |y|)^2 / sum y^2) resolves it
CARRIERS_MIN = 3.0
#: ... or the carriers it may lack (3 sqrt(c) + 3 more of their size, c effective carriers seen) move the estimate by
#: at most this many of its standard errors: a comparison at 4 standard errors then holds with them drawn
UNSEEN_SIGMAS = 2.0


class ObservableAccumulator:
    """Sums over trajectories of the observables of one initial state."""

    def __init__(self, n_times: int, L: int):
        self._init(n_times, L)

    def empty(self) -> "ObservableAccumulator":
        """An accumulator of the same kind and shape with no trajectories."""
        T, L = self.sums["site_population"].shape[-2:]
        return ObservableAccumulator(T, L)

    def _init(self, n_times: int, L: int):
        self.count = 0
        self.sums = {k: np.zeros(n_times) for k in SCALARS}
        self.sums.update({k: np.zeros((n_times, L)) for k in SITE_RESOLVED})
        self.squares = {k: np.zeros_like(v) for k, v in self.sums.items()}
        self.z = np.zeros(n_times, dtype=complex)
        self.z2 = np.zeros(n_times, dtype=complex)
        self.zabs2 = np.zeros(n_times)

    def add(self, populations: np.ndarray, coherence: np.ndarray, stratum=None) -> None:
        """Add one trajectory's record (``stratum``: for a stratified accumulator only)."""
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
        """Rebuild an accumulator from :meth:`state` (e.g. loaded from disk); a stratified one from its own state."""
        if "stratum_count" in state:
            return StratifiedAccumulator.from_state(state)
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


class StratifiedAccumulator:
    """Sums per stratum of a stratified thermal start (docs/physics.md §6.5), merged by addition.

    Row i of stratum s (n_s rows) carries y_i = P_i w_i f_i: P_i the natural
    probability of its stratum given its realization, w_i its other weights
    (branch norm, clocks, hot tail), f_i its value.  The estimate is the ratio

        R = sum_s (sum_{i in s} y_i / n_s) / sum_s (sum_{i in s} P_i / n_s),

    whose denominator has expectation 1 (sum_s P(s | r) = 1 for every
    realization): R is normalized exactly (R = 1 where every row's value is 1)
    and, with P independent of the realization, it is sum_s W_s mean_s.  Its
    variance (delta method, strata independent with fixed n_s):
    sum_s var_s(y - R P) / n_s / (sum_s P_s)^2.  A point is resolved where
    every stratum has at least 2 rows and either carries the point through
    :data:`CARRIERS_MIN` effective rows ((sum |y|)^2 / sum y^2) or could not
    move it by more than :data:`UNSEEN_SIGMAS` errors with the carriers it
    may lack, 3 sqrt(c) + 3 more of the size it has (where it has none: 3 of
    the size of its reset-site siblings' carriers, else a share 3/n_s of its
    rows at the curve's initial value).
    """

    def __init__(self, n_times: int, L: int, n_strata: int, groups=None):
        S = int(n_strata)
        self.n_strata = S
        #: strata that differ only at the reset site share a group (-1: none); see :meth:`_resolved`
        self.groups = np.full(S, -1, dtype=int) if groups is None or len(groups) == 0 else np.asarray(groups, int)
        self.counts = np.zeros(S, dtype=np.int64)
        self.sum_p = np.zeros(S)
        self.sum_p2 = np.zeros(S)
        shapes = {k: (n_times,) for k in SCALARS}
        shapes.update({k: (n_times, L) for k in SITE_RESOLVED})
        self.sums = {k: np.zeros((S,) + v) for k, v in shapes.items()}
        self.squares = {k: np.zeros_like(v) for k, v in self.sums.items()}
        self.cross = {k: np.zeros_like(v) for k, v in self.sums.items()}  # sum P y
        self.absolute = {k: np.zeros_like(v) for k, v in self.sums.items()}  # sum |y|
        self.z = np.zeros((S, n_times), dtype=complex)
        self.z2 = np.zeros((S, n_times), dtype=complex)
        self.zabs2 = np.zeros((S, n_times))
        self.zabs = np.zeros((S, n_times))
        self.pz = np.zeros((S, n_times), dtype=complex)

    @property
    def count(self) -> int:
        return int(self.counts.sum())

    def empty(self) -> "StratifiedAccumulator":
        T, L = self.sums["site_population"].shape[-2:]
        return StratifiedAccumulator(T, L, self.n_strata, self.groups)

    def add(self, populations: np.ndarray, coherence: np.ndarray, stratum=None) -> None:
        """Add one trajectory's record; ``stratum`` = (s, P(s | realization))."""
        s, p = stratum
        self.counts[s] += 1
        self.sum_p[s] += p
        self.sum_p2[s] += p * p
        for k, v in _scalars(populations).items():
            self.sums[k][s] += v
            self.squares[k][s] += v * v
            self.cross[k][s] += p * v
            self.absolute[k][s] += np.abs(v)
        self.z[s] += coherence
        self.z2[s] += coherence * coherence
        self.zabs2[s] += np.abs(coherence) ** 2
        self.zabs[s] += np.abs(coherence)
        self.pz[s] += p * coherence

    def _fields(self):
        return ("counts", "sum_p", "sum_p2", "z", "z2", "zabs2", "zabs", "pz")

    def merge(self, other: "StratifiedAccumulator") -> "StratifiedAccumulator":
        for f in self._fields():
            setattr(self, f, getattr(self, f) + getattr(other, f))
        for d in ("sums", "squares", "cross", "absolute"):
            mine, theirs = getattr(self, d), getattr(other, d)
            for k in mine:
                mine[k] = mine[k] + theirs[k]
        return self

    def state(self) -> dict[str, np.ndarray]:
        out = {"stratum_count": self.counts.copy(), "stratum_sum_p": self.sum_p, "stratum_sum_p2": self.sum_p2,
               "stratum_group": self.groups.copy()}
        for k in self.sums:
            out[f"sum_{k}"] = self.sums[k]
            out[f"sumsq_{k}"] = self.squares[k]
            out[f"sump_{k}"] = self.cross[k]
            out[f"sumabs_{k}"] = self.absolute[k]
        out.update(sum_z=self.z, sum_z2=self.z2, sum_zabs2=self.zabs2, sum_zabs=self.zabs, sump_z=self.pz)
        return out

    @classmethod
    def from_state(cls, state: dict) -> "StratifiedAccumulator":
        S, T, L = state["sum_site_population"].shape
        acc = cls(T, L, S, state.get("stratum_group"))
        acc.counts = np.array(state["stratum_count"], dtype=np.int64)
        acc.sum_p = np.array(state["stratum_sum_p"], dtype=float)
        acc.sum_p2 = np.array(state["stratum_sum_p2"], dtype=float)
        for k in acc.sums:
            acc.sums[k] = np.array(state[f"sum_{k}"], dtype=float)
            acc.squares[k] = np.array(state[f"sumsq_{k}"], dtype=float)
            acc.cross[k] = np.array(state[f"sump_{k}"], dtype=float)
            acc.absolute[k] = np.array(state[f"sumabs_{k}"], dtype=float)
        acc.z = np.array(state["sum_z"], dtype=complex)
        acc.z2 = np.array(state["sum_z2"], dtype=complex)
        acc.zabs2 = np.array(state["sum_zabs2"], dtype=float)
        acc.zabs = np.array(state["sum_zabs"], dtype=float)
        acc.pz = np.array(state["sump_z"], dtype=complex)
        return acc

    def _norm(self):
        """Rows per stratum (shape (S, 1...) broadcastable), the present strata and sum_s P_s."""
        n = self.counts.astype(float)
        present = n > 0
        nn = np.where(present, n, 1.0)
        return n, present, nn, float(np.sum(self.sum_p[present] / nn[present]))

    def get(self, name: str) -> MeanSem:
        """Mean, standard error and resolved mask of an observable (ratio estimator, class docstring)."""
        if self.count == 0:
            raise ValueError("no trajectories accumulated")
        if name == "qubit_coherence":
            return self._coherence()
        n, present, nn, norm = self._norm()
        extra = (slice(None),) + (None,) * (self.sums[name].ndim - 1)
        n_, nn_, p_ = n[extra], nn[extra], present[extra]
        ybar = np.where(p_, self.sums[name] / nn_, 0.0)
        pbar = (self.sum_p / nn)[extra]
        mean = ybar.sum(axis=0) / norm
        second = (self.squares[name] - 2.0 * mean * self.cross[name] + mean**2 * self.sum_p2[extra]) / nn_
        first = ybar - mean * pbar
        var_s = np.clip(second - first**2, 0.0, None) * np.where(n_ > 1, n_ / np.where(n_ > 1, n_ - 1.0, 1.0), 0.0)
        var = np.sum(np.where(p_, var_s / nn_, 0.0), axis=0) / norm**2
        sem = np.sqrt(var)
        carriers = _carriers(self.absolute[name], self.squares[name])
        return MeanSem(mean, sem, self._resolved(carriers, self.absolute[name], pbar, norm, np.abs(mean[0]), sem))

    def _resolved(self, carriers, absolute, pbar, norm, start, sem) -> np.ndarray:
        """Where every stratum has >= 2 rows and carries the point through >= CARRIERS_MIN effective rows, or
        the carriers it may lack (3 sqrt(c) + 3 more of the size it has, c those it has) would not move the estimate
        by more than UNSEEN_SIGMAS x its error.  The shared stratum (group -1) may lack a class it did not draw:
        at least a share 3/n_s of its rows at the curve's initial value.  A
        stratum with no carrier takes the size (relative to its probability) of the largest carriers of the strata
        that differ from it only at the reset site (its rows are theirs after the first measurement), else the
        curve's initial value for a share 3/n_s of its rows."""
        n, present, nn, _ = self._norm()
        extra = (slice(None),) + (None,) * (carriers.ndim - 1)
        enough = (n >= 2)[extra]
        typical = np.where(carriers > 0, absolute / np.where(carriers > 0, carriers, 1.0), 0.0)
        relative = typical / np.where(pbar > 0, pbar, 1.0)  # a carrier's value per unit probability
        sibling = np.zeros_like(typical)
        for g in set(self.groups.tolist()) - {-1}:
            members = self.groups == g
            sibling[members] = relative[members].max(axis=0)
        blind = pbar * np.where(sibling > 0, CARRIERS_MIN * sibling / nn[extra],
                                start * np.minimum(1.0, CARRIERS_MIN / nn[extra]))
        # with c carriers seen, up to ~c + 3 sqrt(c) + 3 could have been expected (a Poisson count's upper 3 sigma)
        unseen = np.where(carriers > 0, (3.0 * np.sqrt(carriers) + 3.0) * typical / nn[extra], blind)
        # the shared stratum mixes configurations: the carriers it lacks may be of a class it did not draw
        shared = (self.groups == -1)[extra]
        unseen = np.where(shared, np.maximum(unseen, pbar * start * np.minimum(1.0, CARRIERS_MIN / nn[extra])),
                          unseen)
        ok = enough & ((carriers >= CARRIERS_MIN) | (unseen / norm <= UNSEEN_SIGMAS * sem))
        return np.all(ok, axis=0)

    def _coherence(self) -> MeanSem:
        """|R_z| and its error along the direction of R_z (delta method), R_z the complex ratio estimate."""
        n, present, nn, norm = self._norm()
        n_, nn_, p_ = n[:, None], nn[:, None], present[:, None]
        zbar_s = np.where(p_, self.z / nn_, 0.0)
        pbar = (self.sum_p / nn)[:, None]
        zbar = zbar_s.sum(axis=0) / norm
        mod = np.abs(zbar)
        u = np.where(mod > 0, zbar / np.where(mod > 0, mod, 1.0), 1.0)
        p2 = self.sum_p2[:, None]
        # a = z - zbar P per row: E|a|^2 and E[a^2]
        abs2 = (self.zabs2 - 2.0 * np.real(np.conj(zbar) * self.pz) + mod**2 * p2) / nn_
        sq = (self.z2 - 2.0 * zbar * self.pz + zbar**2 * p2) / nn_
        second = 0.5 * (abs2 + np.real(np.conj(u) ** 2 * sq))
        first = np.real(np.conj(u) * (zbar_s - zbar * pbar))
        var_s = np.clip(second - first**2, 0.0, None) * np.where(n_ > 1, n_ / np.where(n_ > 1, n_ - 1.0, 1.0), 0.0)
        sem = np.sqrt(np.sum(np.where(p_, var_s / nn_, 0.0), axis=0)) / norm
        carriers = _carriers(self.zabs, self.zabs2)
        return MeanSem(mod, sem, self._resolved(carriers, self.zabs, pbar, norm, mod[0], sem))


def _carriers(sum_abs: np.ndarray, sum_sq: np.ndarray) -> np.ndarray:
    """Effective rows (sum |y|)^2 / sum y^2 per stratum (0 where every row is 0)."""
    return np.where(sum_sq > 0, sum_abs**2 / np.where(sum_sq > 0, sum_sq, 1.0), 0.0)


def make_accumulator(n_times: int, L: int, strata=None):
    """A plain accumulator, or a stratified one for ``strata`` (:class:`~lru_mps.run.thermal_sample.ThermalStrata`)."""
    if strata is None:
        return ObservableAccumulator(n_times, L)
    return StratifiedAccumulator(n_times, L, strata.n_strata, strata.groups)
