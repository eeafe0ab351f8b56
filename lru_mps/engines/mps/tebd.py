"""The TEBD kernel of the qutrit MPS engine, once: gates, Trotter schedule, split and truncation, environments.

Physics.  H_eff = sum_b h_b is split into bond terms: h_b = J (a_b^dag a_{b+1}
+ h.c.) plus the on-site terms of H_eff (anti-Hermitian channel parts
included) shared between the bonds of each site (half each for interior
sites, all of it for the end sites).  One second-order step is the symmetric
sweep

    S2(dt) = G_{L-2}(dt/2) ... G_1(dt/2) G_0(dt) G_1(dt/2) ... G_{L-2}(dt/2),

G_b(tau) = exp(-i tau h_b), applied right-to-left then left-to-right, so the
orthogonality centre ends on site L where the reset acts.  Fourth order is
Suzuki's S4(dt) = S2(p dt)^2 S2((1-4p) dt) S2(p dt)^2, p = 1/(4 - 4^(1/3));
sixth order is Kahan and Li's symmetric composition of nine S2 sweeps.
Consecutive gates on the same bond (the ends of successive S2 sweeps) are
merged into one, exp(-i a h) exp(-i b h) = exp(-i (a+b) h): a step is a
*schedule* of (bond, time fraction, direction) entries (:func:`schedule`).
Local Trotter error O(dt^(p+1)) per step for order p.

Representation.  A row (one trajectory's state) is a list of tensors
A_l[chi_l, 3, chi_{l+1}] and a list of bond *charges*: every bond index
carries the number of excitations to its left, q.  H_eff conserves the
excitation number N (on-site terms are diagonal, hopping moves one quantum),
so every tensor is block-sparse, A_l[a, n, b] = 0 unless q_b = q_a + n, and
each two-site theta is block-diagonal in q_a + n_b: the split does one SVD per
charge block (few excitations, tiny blocks) instead of one of the whole
theta.  The right boundary bond holds one index per total N present (two for
the coherence initial state, a superposition of N and N + 1); the state is
the sum over it, so environments start from a matrix of ones there (cross
terms between different N vanish in every N-conserving quantity, and give
the coherence rho_1[1, 0]); such a superposition needs up to twice the bond
of the same state without labels, in smaller blocks.  Rows are built from
product states (:func:`product_row`) or from a list of configurations with
their amplitudes (:func:`row_from_configurations`: the hand-over of a sector
state, by block SVDs on the configurations).  A state whose gates or local operators do not
conserve N (not produced by the model; kept for generality) runs with all
charges zero, i.e. one dense block.

Split and truncation (:func:`~lru_mps.engines.mps.svd.block_svd`): the singular values of all blocks
are pooled; those above the *absolute* cutoff are kept (at least one), at
most ``max_bond`` of them, largest first; the discarded weight is the sum of
the squares of the others (identical to one SVD of the dense theta, whose
singular values are the blocks' together).

Everything that runs per gate is compiled with numba (a declared dependency
of the package), in :mod:`lru_mps.engines.mps.kernels` and its block SVD, :mod:`lru_mps.engines.mps.svd`:
the time per gate is the time of its SVDs (a compiled Jacobi SVD for the
tiny blocks, LAPACK for larger ones) and of its theta (compiled loops for
small ones, one BLAS product per charge block for larger ones: the rows,
bond indices and columns of one charge only meet each other) plus a few
microseconds, with or without a batch.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg as sla
from numba.typed import List

from ...defaults import MPS_ORDERS
from ...errors import require
from .kernels import move_centre

__all__ = ["ORDERS", "SUZUKI_P", "LEVEL_CHARGE", "NO_CHARGE", "trotter_fractions", "schedule", "bond_hamiltonians",
           "conserves_charge", "operator_charge", "BondGates", "product_row", "row_from_configurations",
           "apply_local"]

SUZUKI_P = 1.0 / (4.0 - 4.0 ** (1.0 / 3.0))
#: physical charge of the levels |0>, |1>, |2> (excitation number), and the charges of a state without symmetry
LEVEL_CHARGE = np.array([0, 1, 2], dtype=np.int64)
NO_CHARGE = np.zeros(3, dtype=np.int64)


# ------------------------------------------------------------------ the schedule
#: Kahan and Li's symmetric composition of nine S2 sweeps of order 6 (Hairer, Lubich, Wanner, GNI, V.3.2)
KAHAN_LI_6 = (0.39216144400731413928, 0.33259913678935943860, -0.70624617255763935981, 0.08221359629355080023,
              0.79854399093482996340)
ORDERS = MPS_ORDERS


def trotter_fractions(order: int) -> tuple[float, ...]:
    """Time fractions of the S2 sweeps of one step: (1,) for order 2, Suzuki's five for order 4,
    Kahan and Li's nine for order 6."""
    if order == 2:
        return (1.0,)
    if order == 4:
        p = SUZUKI_P
        return (p, p, 1.0 - 4.0 * p, p, p)
    g = KAHAN_LI_6
    return g + g[-2::-1]


def schedule(L: int, order: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The gates of one step: bonds, time fractions (of dt) and directions (True: the centre moves right).

    The S2 sweeps of :func:`trotter_fractions` one after another, consecutive
    gates on one bond merged (the merged gate moves the centre the way the
    later one does).  Starts with the centre on site L-1 and leaves it there.
    """
    entries: list[list] = []
    for f in trotter_fractions(order):
        sweep = [(b, 0.5 * f, False) for b in range(L - 2, 0, -1)] + [(0, f, True)]
        sweep += [(b, 0.5 * f, True) for b in range(1, L - 1)]
        for b, x, right in sweep:
            if entries and entries[-1][0] == b:
                entries[-1][1] += x
                entries[-1][2] = right
            else:
                entries.append([b, x, right])
    bonds = np.array([e[0] for e in entries], dtype=np.int64)
    return bonds, np.array([e[1] for e in entries]), np.array([e[2] for e in entries], dtype=np.bool_)


def bond_hamiltonians(spec, real) -> np.ndarray:
    """h_b (L-1, 9, 9), acting on sites b, b+1, with the on-site terms split between bonds (units of J); a chain only."""
    require(getattr(spec, "is_chain", True), "engine", "mps", "a chain for the MPS engine (its bonds are (l, l+1))",
            "use the exact or sector engine on a graph geometry")
    L = spec.L
    onsite = spec.onsite_terms(real)
    hop = spec.bond_terms(real)
    eye = np.eye(3)
    out = np.zeros((max(L - 1, 0), 9, 9), dtype=complex)
    for b in range(L - 1):
        wl = 1.0 if b == 0 else 0.5
        wr = 1.0 if b + 1 == L - 1 else 0.5
        out[b] = hop[b] + wl * np.kron(onsite[b], eye) + wr * np.kron(eye, onsite[b + 1])
    return out


def conserves_charge(h: np.ndarray) -> bool:
    """Whether the bond terms (..., 9, 9) conserve n_b + n_{b+1} (block-diagonal by charge)."""
    n = np.add.outer(LEVEL_CHARGE, LEVEL_CHARGE).reshape(9)
    return not np.any(np.abs(h[..., n[:, None] != n[None, :]]) > 0.0)


def operator_charge(op: np.ndarray) -> int | None:
    """The charge delta of a one-site operator (op[i, j] != 0 only for i - j = delta), None if it has none."""
    i, j = np.nonzero(op)
    deltas = set((i - j).tolist())
    if not deltas:
        return 0
    return deltas.pop() if len(deltas) == 1 else None


class BondGates:
    """The gates of one realization's schedule, exp(-i tau h_b), per step length (cached)."""

    #: step lengths cached (root finding asks for many)
    CACHE = 64

    def __init__(self, h_bonds: np.ndarray, order: int):
        self.h = h_bonds
        self.L = len(h_bonds) + 1
        self.bonds, self.fractions, self.right = schedule(self.L, order)
        self.symmetric = conserves_charge(h_bonds)
        self._cache: dict[float, np.ndarray] = {}
        # Gamma_b = i (h_b - h_b^dag) >= 0: d||psi||^2/dtau = -<Gamma_b> >= -lambda_max ||psi||^2 under a gate of
        # positive length; one of negative length does not lower the norm
        decay = np.linalg.eigvalsh(1j * (h_bonds - h_bonds.conj().transpose(0, 2, 1)))[:, -1] if len(h_bonds) else []
        self.decay_rate = float(sum(max(f, 0.0) * max(decay[b], 0.0) for b, f in zip(self.bonds, self.fractions)))

    def norm_kept(self, dt: float) -> float:
        """A lower bound on ||psi||^2 after / before one step of length dt: exp(-dt sum_s max(f_s, 0) lambda_max(
        Gamma_{b_s})), Gamma_b = i (h_b - h_b^dag) the decay part of the bond term (exact for the product of
        gates; truncation is not included)."""
        return math.exp(-dt * self.decay_rate)

    def step(self, dt: float) -> np.ndarray:
        """(n_gates, 9, 9) array of exp(-i f_s dt h_{b_s}) for the schedule's entries s."""
        key = float(dt)
        g = self._cache.get(key)
        if g is None:
            taus = self.fractions * key
            g = np.ascontiguousarray(sla.expm(-1j * taus[:, None, None] * self.h[self.bonds]))
            if len(self._cache) >= self.CACHE:
                self._cache.clear()
            self._cache[key] = g
        return g


# ------------------------------------------------------------------ rows
def product_row(site_vectors, symmetric: bool):
    """A product state as a row (tensors, bond charges, level charges), canonical with its centre on site L-1.

    A site vector with several levels (the coherence state) makes bonds with
    one index per reachable charge; the row is then brought to canonical form.
    """
    pc = LEVEL_CHARGE if symmetric else NO_CHARGE
    arrs, qs = List(), List()
    q = np.zeros(1, dtype=np.int64)
    qs.append(q)
    for v in site_vectors:
        v = np.asarray(v, dtype=complex).reshape(3)
        levels = np.nonzero(v)[0]
        new = np.unique(np.add.outer(q, pc[levels]).ravel())
        A = np.zeros((len(q), 3, len(new)), dtype=complex)
        for x, qa in enumerate(q):
            for n in levels:
                A[x, n, np.searchsorted(new, qa + pc[n])] += v[n]
        arrs.append(A)
        qs.append(new)
        q = new
    if any(A.shape[0] > 1 or A.shape[2] > 1 for A in arrs):  # not yet canonical
        move_centre(arrs, qs, pc, 0, len(arrs) - 1)
    return arrs, qs, pc, len(arrs) - 1


def _unique_rows(rest: np.ndarray) -> tuple[int, np.ndarray]:
    """(number of distinct rows, index of each row's class) of an int8 array (m, w)."""
    if rest.shape[1] == 0:
        return 1, np.zeros(len(rest), dtype=np.int64)
    keys = np.ascontiguousarray(rest).view(np.dtype((np.void, rest.shape[1]))).ravel()
    uniq, inverse = np.unique(keys, return_inverse=True)
    return len(uniq), inverse.ravel()


def row_from_configurations(occ, amplitudes, symmetric: bool, cutoff: float, max_bond: int):
    """The MPS row (tensors, bond charges, level charges, centre, discarded weight, largest bond) of the state
    sum_j amplitudes[j] |occ[j]> (``occ``: (m, L) levels 0-2, distinct rows; ``amplitudes``: (m,) complex).

    ``symmetric``: bond charges (the lean kernel's charge blocks); else every charge 0 and a last bond of one
    index (the quimb kernel).  The tensors are left isometries up to site L - 2; site L - 1 holds the norm.

    The hand-over of a sector trajectory to the MPS engine (:mod:`lru_mps.engines.auto`)
    starts MPS from the sector engine's exact state: a vector on the
    configurations of one or a few fixed-N sectors (up to ~10^6 of them), far
    too many sites for the full 3^L vector.  The row is built by successive
    block SVDs from the left, on the configurations alone.  After site k the
    bond carries the charge n_left = n_1 + ... + n_k (the bond charges of a
    row), so the matrix to split at each cut is
    block diagonal: block n' has the rows (a, n_k) with charge(a) + n_k = n' and
    the columns the distinct remainders (n_{k+1}, ..., n_L) that follow them.
    Its SVD gives the isometry A_k and the next step's matrix S V^dag; the last
    bond carries one index per total N present (its charge), as a product row
    with several sectors does, and holds the norm (mixed canonical form with the
    centre on site L - 1).

    Singular values of the normalized state above ``cutoff`` are kept (the
    engine's absolute cutoff), at most ``max_bond`` per cut, largest first; the
    discarded weight is returned for the trajectory's diagnostics.  The memory
    is that of the dense blocks (bond dimension x remainders), at most a few
    times the sector vector's for the physical (low-entanglement) states handed
    over.
    """
    occ = np.asarray(occ, dtype=np.int8)
    amps = np.asarray(amplitudes, dtype=complex).ravel()
    require(occ.ndim == 2 and occ.shape[0] == amps.size and occ.shape[1] >= 1, "configurations", occ.shape,
            "occupations (m, L) with one amplitude per row")
    require(bool(np.all((occ >= 0) & (occ <= 2))), "configurations", "levels outside 0-2", "qutrit levels 0, 1, 2")
    keep = amps != 0
    occ, amps = occ[keep], amps[keep]
    norm = math.sqrt(float(np.vdot(amps, amps).real))
    require(norm > 0, "state", "the zero vector", "a state with some nonzero amplitude")
    L = occ.shape[1]
    # blocks of the current cut: left charge n -> (matrix R (chi_n, columns), remainders (columns, L - k))
    blocks = {0: (amps[None, :] / norm, occ)}
    left = {0: np.arange(1)}  # positions of block n's indices on the current (left) bond
    arrs, qs = List(), List()
    qs.append(np.zeros(1, dtype=np.int64))
    discarded, largest = 0.0, 1
    for k in range(L):
        pieces: dict[int, list] = {}
        for n, (R, rest) in sorted(blocks.items()):
            for s in range(3):
                sel = np.nonzero(rest[:, 0] == s)[0]
                if sel.size:
                    pieces.setdefault(n + s, []).append((n, s, R[:, sel], rest[sel, 1:]))
        mats = {}
        for n2, plist in sorted(pieces.items()):
            ncol, inverse = _unique_rows(np.concatenate([p[3] for p in plist]))
            M = np.zeros((sum(p[2].shape[0] for p in plist), ncol), dtype=complex)
            rows, r0, c0 = [], 0, 0
            for n, s, Rc, rest in plist:
                M[r0:r0 + Rc.shape[0], inverse[c0:c0 + Rc.shape[1]]] = Rc  # distinct remainders per (n, s, a)
                rows.append((n, s, r0, Rc.shape[0]))
                r0, c0 = r0 + Rc.shape[0], c0 + Rc.shape[1]
            uniq = np.empty((ncol, L - k - 1), dtype=np.int8)
            uniq[inverse] = np.concatenate([p[3] for p in plist])
            mats[n2] = (M, rows, uniq)
        chi_left = sum(len(v) for v in left.values())
        if k == L - 1:  # the last site: one column per total N, the norm stays here
            charges = np.array(sorted(mats), dtype=np.int64)
            A = np.zeros((chi_left, 3, len(charges)), dtype=complex)
            for j, n2 in enumerate(charges):
                M, rows, _ = mats[int(n2)]
                for n, s, r0, cnt in rows:
                    A[left[n], s, j] = M[r0:r0 + cnt, 0] * norm
            arrs.append(A)
            qs.append(charges)
            break
        svds = {n2: np.linalg.svd(M, full_matrices=False) for n2, (M, _, _) in mats.items()}
        values = np.concatenate([S for _, S, _ in svds.values()])
        order = np.argsort(-values, kind="stable")
        kept_n = max(1, min(int(max_bond), int(np.count_nonzero(values > cutoff))))
        kept = np.zeros(values.size, dtype=bool)
        kept[order[:kept_n]] = True
        discarded += float(np.sum(values[~kept] ** 2))
        blocks, new_left, charges, pos, start = {}, {}, [], 0, 0
        A = np.zeros((chi_left, 3, kept_n), dtype=complex)
        for n2, (U, S, Vh) in svds.items():
            keep_b = kept[start:start + S.size]
            start += S.size
            if not keep_b.any():
                continue
            idx = np.arange(pos, pos + int(keep_b.sum()))
            M, rows, uniq = mats[n2]
            for n, s, r0, cnt in rows:
                A[left[n][:, None], s, idx[None, :]] = U[r0:r0 + cnt][:, keep_b]
            blocks[n2] = (S[keep_b, None] * Vh[keep_b], uniq)
            new_left[n2] = idx
            charges += [n2] * idx.size
            pos += idx.size
        arrs.append(A)
        qs.append(np.array(charges, dtype=np.int64))
        left = new_left
        largest = max(largest, kept_n)
    if not symmetric:
        arrs[L - 1] = np.ascontiguousarray(arrs[L - 1].sum(axis=2, keepdims=True))
        for l in range(L + 1):
            qs[l] = np.zeros(arrs[l].shape[0] if l < L else 1, dtype=np.int64)
    return arrs, qs, (LEVEL_CHARGE if symmetric else NO_CHARGE), L - 1, discarded, largest


def apply_local(arrs, qs, pc, centre: int, op: np.ndarray, site: int):
    """op (3x3) on ``site`` of a row: the centre moves there; the charges right of it shift by op's charge.

    Returns (centre, level charges): an operator without a definite charge
    switches the row to no symmetry (all charges zero).
    """
    centre = move_centre(arrs, qs, pc, centre, site)
    arrs[site] = np.ascontiguousarray(np.einsum("ij,ajb->aib", op, arrs[site]))
    delta = operator_charge(op) if pc[1] else 0
    if delta is None:
        pc = NO_CHARGE
        for l in range(len(qs)):
            qs[l] = np.zeros_like(qs[l])
    elif delta:
        for l in range(site + 1, len(qs)):
            qs[l] = qs[l] + delta
    return centre, pc
