"""exp(-i H_eff t) on a large fixed-N sector over an array library (numpy/scipy, torch, cupy): the GPU path.

The expansion is the compiled one's (:mod:`lru_mps.engines.sector.chebyshev`):
H_eff = H - i Gamma of the sector, scaled to H' = (H_eff - c)/r with the same
centre c and half-width r, the same sub-steps tau_s (r tau_s <= RTAU_MAX), the
same Bessel coefficients a_k(r tau) (Jacobi-Anger, phase exp(-i c tau)
included, cut at TAIL), so

    exp(-i H_eff tau) v = sum_k a_k T_k(H') v,   T_{k+1} = 2 H' T_k - T_{k-1},

and r, c, tau in units of J (times in 1/J).  What differs is how the
recurrence is computed: written once over
:class:`~lru_mps.engines.common.arraylib.ArrayLib`, one sparse product per
order, H' = off + diag with ``off`` the real off-diagonal hopping as a sparse
CSR matrix of the backend (scipy.sparse for ``numpy``, torch.sparse_csr for
torch, cupyx.scipy.sparse for cupy) applied to the float64 view of the
complex states (real and imaginary parts side by side), ``diag`` the complex
diagonal (on-site energies minus i times the decay rates of the sector,
shifted by c).  A batch of rows of one sector, an (n, m) array, takes one
sparse matrix-matrix product per order; one row is the case m = 1.

Where things live.  On the device: the sector's sparse matrix and diagonal
(built once per sector block and realization), the recurrence's vectors, the
kept sub-step starts and the Chebyshev basis of the jump-time search
(:meth:`ArrayChebyshevBlock.apply`, as in the compiled block).  On the host:
the Bessel coefficients (a few hundred numbers per duration, compiled), the
trajectory state between evolutions (:class:`~lru_mps.engines.sector.state.
SectorState` holds numpy vectors), and with it every event, jump, norm,
population, reset and record of the trajectory loop; :meth:`apply` takes a
host array and returns one (a transfer of n complex numbers each way per
evolution, against about r t sparse products on the device).

Numbers: the expansion of the compiled kernel, summed in the library's order
(its sparse product), so the two agree to rounding (below 1e-16 on rows of
norm 1, measured on L = 6 and the routing layouts' sectors), not bit for bit; on one backend an evolution that reuses kept sub-steps gives the
numbers of a fresh one (the same recurrence and the same sums in the same
order), as the compiled block does.  ``numpy`` is the reference of this path
(scipy's sparse product on the CPU); the sector engine's default stays the
compiled block, the fastest path on a CPU for one row (docs/benchmarks.md, "GPU:
the sector engine").  torch on the CPU runs its own thread pool
(``torch.set_num_threads``; a run limits the BLAS threads only): on a shared
machine give it one thread, or its threads wait on each other.

Stops: a stop request (:func:`lru_mps.errors.check_stop`) is looked at
between orders of the recurrence (every piece of one sparse product; Python
holds control between them, a GPU's queued work is then abandoned), as the
compiled block looks at it between its pieces.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ...errors import check_stop
from ..common.arraylib import ArrayLib
from .chebyshev import BASIS_MAX, KEEP_STARTS, ChebyshevBlock


class ArrayChebyshevBlock(ChebyshevBlock):
    """exp(-i H_eff t) x for one sparse sector block on ``backend`` (see the module docstring).

    The scale, centre, sub-steps and coefficients are those of :class:`ChebyshevBlock` (this is one); the
    sparse products are the backend's.  :meth:`apply` takes x of shape (n,) (one row) or (n, m) (m rows of
    the sector) on the host and returns the evolved rows on the host.
    """

    def __init__(self, H: sp.csr_matrix, backend: str = "numpy"):
        super().__init__(H)
        xp = self.xp = ArrayLib(backend)
        self.backend = backend
        n = len(self.dr)
        # 2 H' (doubling is exact): the recurrence's 2 H' T_k in one product; the first order halves it
        self.A2 = xp.csr(self.indptr, self.indices, 2.0 * self.table[self.codes], (n, n))
        self.d2 = xp.asarray((2.0 * (self.dr + 1j * self.di))[:, None])
        self._dev_starts: list[tuple[np.ndarray, list]] = []
        self._dev_basis: tuple | None = None  # (starts list, index, [T_k]) of the last sub-step probed

    def _times_2h(self, a):
        """2 H' a for device rows a (n, m), complex."""
        xp = self.xp
        y = xp.complex_view(self.A2 @ xp.real_view(a))
        y += self.d2 * a
        return y

    def _recurrence(self, x, co: np.ndarray, keep: list | None = None):
        """sum_k co_k T_k(H') x on the device; T_k x for every k is appended to ``keep`` when it is a list."""
        K = len(co)
        self.products += K - 1
        out = complex(co[0]) * x
        if keep is not None:
            keep.append(x)
        if K == 1:
            return out
        a0 = x
        a1 = self._times_2h(a0)
        a1 *= 0.5
        out += complex(co[1]) * a1
        if keep is not None:
            keep.append(a1)
        for k in range(2, K):
            check_stop()
            a2 = self._times_2h(a1)
            a2 -= a0
            out += complex(co[k]) * a2
            if keep is not None:
                keep.append(a2)
            a0, a1 = a1, a2
        return out

    def _step_dev(self, x, tau: float):
        return self._recurrence(x, self.coefficients(tau))

    def _from_basis_dev(self, starts: list, k: int, tau: float):
        """The remainder step from sub-step start k of a kept evolution through that sub-step's Chebyshev basis
        T_k(H') x (kept on the device; built once, then each tau of a jump-time search costs a linear
        combination, summed as :meth:`_recurrence` sums: the same numbers on this backend)."""
        co = self.coefficients(tau)
        b = self._dev_basis
        if b is None or b[0] is not starts or b[1] != k:
            full = self.coefficients(self.tau_s)
            x = starts[k]
            K = max(len(full), len(co))
            if K * x.shape[0] * x.shape[1] > BASIS_MAX:
                return self._step_dev(x, tau)
            basis: list = []
            self._recurrence(x, full if len(full) == K else co, basis)
            b = self._dev_basis = (starts, k, basis)
        T = b[2]
        out = complex(co[0]) * T[0]
        for q in range(1, len(co)):
            out += complex(co[q]) * T[q]
        return out

    def apply(self, x: np.ndarray, t: float) -> np.ndarray:
        """exp(-i H_eff t) x (t in 1/J) for host rows x, (n,) or (n, m): floor(t / tau_s) sub-steps of tau_s, then
        the remainder, on the device; the result on the host."""
        x = np.asarray(x)
        if t <= 0.0:
            return x.copy()
        one = x.ndim == 1
        X = np.ascontiguousarray(x.reshape(len(x), -1), dtype=np.complex128)
        n_full, rem = self.substeps(t)
        starts = self._kept_starts(X)
        if starts is not None:
            k0 = min(n_full, len(starts) - 1)
            y = starts[k0]
            if k0 == n_full:  # a jump-time search inside a kept evolution
                return self._host(self._from_basis_dev(starts, k0, rem), one)
        else:
            k0, y = 0, self.xp.asarray(X)
            starts = [y]
            self._dev_starts.append((X.copy(), starts))
            del self._dev_starts[:-KEEP_STARTS]
        for k in range(k0, n_full):
            y = self._step_dev(y, self.tau_s)
            if len(starts) == k + 1:
                starts.append(y)
        return self._host(self._step_dev(y, rem), one)

    def _host(self, y, one: bool) -> np.ndarray:
        out = np.array(self.xp.host(y))
        return out[:, 0] if one else out

    def _kept_starts(self, X: np.ndarray):
        for v0, starts in reversed(self._dev_starts):
            if v0.shape == X.shape and np.array_equal(v0, X):
                return starts
        return None
