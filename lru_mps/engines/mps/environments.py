"""Compiled full contractions of a TEBD row (numba): one-site density matrices, <H> and <psi|psi>.

A row is the representation of :mod:`lru_mps.engines.mps.tebd` (tensors
A_l[chi_l, 3, chi_{l+1}], the right boundary summed); these (and the copy of a row) run
once per recorded time point or jump, not per gate, so they sit apart from the per-gate kernels
of :mod:`lru_mps.engines.mps.kernels`.  Use them from :mod:`~lru_mps.engines.mps.tebd`.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.typed import List


@njit(cache=True)
def environments(arrs, h_bonds, with_energy):
    """One-site density matrices rho_l[i, j] = <psi|(|j><i|)_l|psi> (L, 3, 3), <psi|H|psi> and <psi|psi>.

    Full contractions from both ends (no canonical form assumed; the right
    boundary summed, see the module docstring).  The energy is the sum of the
    bond terms ``h_bonds`` (only if ``with_energy``).
    """
    L = len(arrs)
    Ls = List()
    Ls.append(np.ones((1, 1), dtype=np.complex128))
    for l in range(L):
        A = arrs[l]
        a, b = A.shape[0], A.shape[2]
        X = np.dot(np.ascontiguousarray(Ls[l].T), A.reshape(a, 3 * b)).reshape(a * 3, b)
        Ls.append(np.dot(np.ascontiguousarray(X.T), np.conj(A.reshape(a * 3, b))))
    d = arrs[L - 1].shape[2]
    Rs = List()
    for l in range(L + 1):
        Rs.append(np.ones((d, d), dtype=np.complex128))
    for l in range(L - 1, -1, -1):
        A = arrs[l]
        a, b = A.shape[0], A.shape[2]
        Y = np.dot(A.reshape(a * 3, b), Rs[l + 1]).reshape(a, 3 * b)
        Rs[l] = np.dot(Y, np.ascontiguousarray(np.conj(A.reshape(a, 3 * b)).T))
    rho = np.zeros((L, 3, 3), dtype=np.complex128)
    for l in range(L):
        A = arrs[l]
        a, b = A.shape[0], A.shape[2]
        Z = np.dot(np.ascontiguousarray(Ls[l].T), A.reshape(a, 3 * b)).reshape(a * 3, b)
        W = np.dot(Z, Rs[l + 1]).reshape(a, 3, b)
        Ac = np.conj(A)
        for i in range(3):
            for j in range(3):
                acc = 0j
                for x in range(a):
                    for y in range(b):
                        acc += W[x, i, y] * Ac[x, j, y]
                rho[l, i, j] = acc
    energy = 0.0
    if with_energy:
        for l in range(L - 1):
            A, B = arrs[l], arrs[l + 1]
            a, k, c = A.shape[0], A.shape[2], B.shape[2]
            th = np.dot(A.reshape(a * 3, k), B.reshape(k, 3 * c)).reshape(a, 9, c)
            h = h_bonds[l]
            ht = np.zeros((a, 9, c), dtype=np.complex128)
            for m in range(9):
                for n in range(9):
                    if h[m, n] != 0:
                        for x in range(a):
                            for y in range(c):
                                ht[x, m, y] += h[m, n] * th[x, n, y]
            Z = np.dot(np.ascontiguousarray(Ls[l].T), ht.reshape(a, 9 * c)).reshape(a * 9, c)
            W = np.dot(Z, Rs[l + 2]).reshape(a, 9, c)
            acc = 0j
            for x in range(a):
                for m in range(9):
                    for y in range(c):
                        acc += W[x, m, y] * np.conj(th[x, m, y])
            energy += acc.real
    full = Ls[L].sum().real
    return rho, energy, full


@njit(cache=True)
def copy_row(arrs, qs):
    """An independent copy of a row's tensors and charges."""
    a2, q2 = List(), List()
    for A in arrs:
        a2.append(A.copy())
    for q in qs:
        q2.append(q.copy())
    return a2, q2
