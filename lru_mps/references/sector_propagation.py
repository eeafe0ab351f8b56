"""The main solver's propagation of one charge sector q = N_ket - N_bra of the Lindblad reference
(:mod:`lru_mps.references.lindblad`): the sector's Liouvillian, measurement map and feedback period 1/G, in the
eigenbasis of the Liouvillian where it has one (scipy's expm of each step where not, by the engines' rule
:func:`lru_mps.engines.common.eigen.decompose`), kept for the next call of the same matrices; and the vectors of
the sector carried along a time grid (units of 1/J) through the periodic measurements t0 + k/G, averaged over the
midpoint nodes t0."""

from __future__ import annotations

import hashlib

import numpy as np
import scipy.linalg as sla

from ..engines.common import eigen
from ..engines.common.eigen import decompose


def _measurement_counts(times: np.ndarray, offsets: np.ndarray, period: float) -> np.ndarray:
    """counts[i, j] = number of measurement times t0_j + k/G (k >= 0) strictly before times[i]."""
    if not np.isfinite(period):
        return np.zeros((len(times), len(offsets)), dtype=int)
    t = times[:, None]
    c = np.maximum(np.ceil((t - offsets) / period), 0.0)
    c -= (c > 0) & (offsets + (c - 1) * period >= t)  # exact in floating point:
    c += offsets + c * period < t  # t0 + (c-1)/G < t <= t0 + c/G
    return c.astype(int)


#: matrix exponentials a sector without an eigenbasis keeps (least recently used dropped)
EXPM_CACHE = 8
#: sectors (eigendecompositions) kept for the next call (least recently used dropped), and their largest size
SECTOR_CACHE, SECTOR_CACHE_MAX_DIM = 4, 2000
_SECTORS: dict[bytes, "_Sector"] = {}


def _sector(liouvillian: np.ndarray, measurement: np.ndarray, period: float, injection=None) -> "_Sector":
    """The charge sector of these matrices, from the cache if the same matrices were decomposed before.

    The initial states of one realization (leakage, qubit, coherence) share
    the sector q = 0, and its eigendecomposition is most of a reference's
    cost at L = 4 (1107 x 1107); the key is a digest of the matrices
    themselves (and the eigen rule's limit), so a hit is the same sector, bit for bit.
    """
    if len(liouvillian) > SECTOR_CACHE_MAX_DIM:
        return _Sector(liouvillian, measurement, period, injection)
    h = hashlib.blake2b(digest_size=32)
    for m in (liouvillian, measurement, np.float64(period)) + (() if injection is None else (injection,)):
        h.update(np.ascontiguousarray(m).tobytes())
    key = h.digest() + bytes([injection is None]) + str((liouvillian.shape, eigen.COND_LIMIT)).encode()
    sector = _SECTORS.pop(key, None)
    if sector is None:
        sector = _Sector(liouvillian, measurement, period, injection)
        if len(_SECTORS) >= SECTOR_CACHE:
            _SECTORS.pop(next(iter(_SECTORS)))
    _SECTORS[key] = sector  # most recently used last
    return sector


class _Sector:
    """One charge sector: Liouvillian, measurement and one feedback period, in the eigenbasis if possible."""

    def __init__(self, liouvillian: np.ndarray, measurement: np.ndarray, period: float, injection=None):
        self.generator = liouvillian
        self.period = period
        if np.allclose(liouvillian, -liouvillian.conj().T, rtol=0, atol=1e-13 * max(1.0, np.abs(liouvillian).max())):
            w, V, Vinv = decompose(1j * liouvillian, hermitian=True)  # unitary dynamics: normal, V unitary
            parts = (-1j * w, V, Vinv)
        else:
            parts = decompose(liouvillian, hermitian=False)
        self.eig = parts is not None
        if self.eig:
            self.lam, self.V, self.Vinv = parts
            self.measure_matrix = self.Vinv @ measurement @ self.V
        else:
            self.measure_matrix = measurement
        self.inject_matrix = injection if injection is None or not self.eig else self.Vinv @ injection @ self.V
        self._powers: dict[int, np.ndarray] = {}
        self._expm: dict[float, np.ndarray] = {}

    def to_coords(self, x: np.ndarray) -> np.ndarray:
        return self.Vinv @ x if self.eig else x

    def from_coords(self, y: np.ndarray) -> np.ndarray:
        return self.V @ y if self.eig else y

    def evolve(self, Y: np.ndarray, dt) -> np.ndarray:
        """Columns of Y evolved by dt (a scalar or one time per column)."""
        dt = np.broadcast_to(np.asarray(dt, dtype=float), (Y.shape[1],))
        if self.eig:
            return np.exp(self.lam[:, None] * dt[None, :]) * Y
        out = np.empty_like(Y)
        for step in np.unique(dt):
            cols = dt == step
            out[:, cols] = self._propagator(float(step)) @ Y[:, cols]
        return out

    def _propagator(self, step: float) -> np.ndarray:
        """expm(generator * step), the last EXPM_CACHE of them kept (the grid step and the period recur)."""
        P = self._expm.pop(step, None)
        if P is None:
            P = sla.expm(self.generator * step)
            if len(self._expm) >= EXPM_CACHE:
                self._expm.pop(next(iter(self._expm)))
        self._expm[step] = P  # most recently used last
        return P

    def measure(self, Y: np.ndarray) -> np.ndarray:
        return self.measure_matrix @ Y

    def inject(self, Y: np.ndarray) -> np.ndarray:
        return self.inject_matrix @ Y

    def periods(self, Y: np.ndarray, k: int) -> np.ndarray:
        """k times (evolve one period 1/G, then measure)."""
        if k == 0:
            return Y
        if k not in self._powers:
            if len(self._powers) >= EXPM_CACHE:  # (a cached sector serves many calls: keep a few powers)
                self._powers.pop(next(iter(self._powers)))
            one = self.measure(self.evolve(np.eye(len(self.generator), dtype=complex), self.period))
            self._powers[k] = np.linalg.matrix_power(one, k)
        return self._powers[k] @ Y


def _propagate(sector: _Sector, x0: np.ndarray, times, offsets, counts, inject=None) -> np.ndarray:
    """Sector vectors at the grid times, averaged over the t0 nodes, shape (T, n).

    All nodes are carried together from grid time to grid time; in each
    interval [t_prev, t) a node meets d = 0, 1, 2, ... measurements (the
    nodes differ by at most one), evolved as: to the first measurement,
    measure, d - 1 full periods, then on to t.  ``inject[i]``: the injection
    map acts after recording at times[i] (the grid holds every boundary).
    """
    Y = np.repeat(sector.to_coords(x0)[:, None], len(offsets), axis=1)
    out = np.empty((len(times), len(x0)), dtype=complex)
    t_prev, c_prev = 0.0, np.zeros(len(offsets), dtype=int)
    for i, t in enumerate(times):
        d = counts[i] - c_prev
        for dd in np.unique(d):
            cols = d == dd
            if dd == 0:
                Y[:, cols] = sector.evolve(Y[:, cols], t - t_prev)
                continue
            first = offsets[cols] + c_prev[cols] * sector.period
            last = offsets[cols] + (counts[i, cols] - 1) * sector.period
            y = sector.measure(sector.evolve(Y[:, cols], first - t_prev))
            Y[:, cols] = sector.evolve(sector.periods(y, dd - 1), t - last)
        out[i] = sector.from_coords(Y.mean(axis=1))
        if inject is not None and inject[i]:
            Y = sector.inject(Y)
        t_prev, c_prev = t, counts[i]
    return out
