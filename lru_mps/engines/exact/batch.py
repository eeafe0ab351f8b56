"""Batched exact states: the rows of a batch held together on the kept N-blocks.

The state store of the trajectory loop (:mod:`lru_mps.mcwf.loop`) for
``--engine exact``; the loop itself (stops, thresholds, measurements,
records) lives there.

How the state is held
---------------------
H_eff conserves the excitation number N and no event raises it (decay,
dissipation and the feedback reset lower N, dephasing keeps it), so a
trajectory never leaves the N-blocks at or below the largest N of its initial
state.  The 3^L basis is sorted by N (stably, so each block keeps the natural
order of :class:`~lru_mps.engines.exact.ExactPropagator`), and a batch holds
only the blocks 0..N_max that its trajectories can reach (at T = 0 the leakage
state has N = 2: 1 + L + L(L+1)/2 amplitudes instead of 3^L).  Rows are
ordered (realization, initial state), so block n of all rows is an (R, I, d_n)
array.

Each realization prepares only the blocks it can reach: for block n the
eigendecompositions H_n = V diag(lam) V^-1 of all realizations that reach it
are computed in one stacked call, and the propagator of the grid step,
U_n = V diag(exp(-i lam dt)) V^-1, once per run.  A grid step is one batched
matmul (R_n, I, d) @ (R_n, d, d) per block.  Stretches of any other length (a
measurement inside the step, the rest of a step after a jump, an irregular
grid) use the eigen form V (exp(-i lam tau) * (V^-1 x)) with one duration per
row, as the unbatched engine does; blocks whose eigenvectors are too
ill-conditioned use scipy's expm, by the unbatched engine's rule.  A row whose
squared norm has fallen below its threshold at the end of a stretch gets the
crossing time by the loop's root finding
(:func:`lru_mps.mcwf.kernels.crossing_time`), from the state saved before the
stretch.

The array code calls functions resolved once through autoray
(``get_lib_fn``), so evolution, norms and observables can run on torch or
cupy arrays (``backend=``); eigendecompositions, root finding and random
numbers stay in numpy.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import scipy.linalg as sla

from ..protocol import EngineSettings
from ..common.arraylib import ArrayLib
from ..common.eigen import decompose_stack, evolve_eigen, evolve_rows, expm_propagator, propagator_stack
from ..common.store import BatchStore, jump
from ...physics.rules import number_can_grow
from .feedback import ExactFeedbackTrains
from .sorted_basis import SortedBasis


# --------------------------------------------------------------------- basis
class _Ops(ArrayLib):
    """The backend's array functions (autoray), plus numpy fast paths for norms and populations."""

    def take(self, idx):
        """An index array for this backend."""
        return self.index(idx)

    def norm2(self, x) -> np.ndarray:
        """<psi|psi> of every row of x (m, D), on the host."""
        if self.numpy:
            xf = np.ascontiguousarray(x).view(np.float64)
            return np.einsum("ij,ij->i", xf, xf)
        return self.host(self.sum(self.real(x * self.conj(x)), axis=1))

    def weights(self, x, M, M2) -> np.ndarray:
        """|x|^2 @ M (site level populations of every row), on the host."""
        if self.numpy:
            xf = np.ascontiguousarray(x).view(np.float64)
            return np.square(xf) @ M2
        return self.host(self.matmul(self.real(x * self.conj(x)), self.asarray(M)))


class BlockStack:
    """exp(-i H_n t) of one N-block for the realizations that reach it, stacked.

    ``sl``: the block's columns in the store's rows; ``reals``/``pos``: the
    realizations that reach it and each realization's position in the stack
    (-1: none); ``H``, ``lam``, ``V``, ``Vinv``, ``bad`` (R_n, ...): the
    blocks and their eigendecompositions (``bad``: expm, common.eigen's rule).
    """

    def __init__(self, sl: slice, reals: np.ndarray, R: int, H: np.ndarray, dt_ref: float, xp: _Ops):
        self.sl = sl
        self.d = sl.stop - sl.start
        self.reals = np.asarray(reals, dtype=np.intp)
        self.full = len(self.reals) == R
        self.pos = np.full(R, -1, dtype=np.intp)
        self.pos[self.reals] = np.arange(len(self.reals))
        self.H = H
        lam, V, Vinv, bad = decompose_stack(H)
        self.bad = bad
        self.bad_pos = np.nonzero(bad)[0]
        self.lam, self.V, self.Vinv = lam, V, Vinv
        U = self.matrices(dt_ref)
        self.x_lam = xp.asarray(lam)
        self.x_VT = xp.asarray(np.ascontiguousarray(V.transpose(0, 2, 1)))
        self.x_VinvT = xp.asarray(np.ascontiguousarray(Vinv.transpose(0, 2, 1)))
        self.x_UT = xp.asarray(np.ascontiguousarray(U.transpose(0, 2, 1)))

    def matrices(self, t: float) -> np.ndarray:
        """exp(-i H_n t) of every realization of the block (R_n, d, d), by the rule of common.eigen."""
        return propagator_stack(self.lam, self.V, self.Vinv, self.bad, self.H, t)

    def expm_rows(self, x, p: int, t: float, xp):
        """Row vectors x (..., d) of realization position p evolved by t with expm (an ill-conditioned block)."""
        return xp.matmul(x, xp.asarray(expm_propagator(self.H[p], t).T))


# --------------------------------------------------------------------- store
class ExactBatch(BatchStore):
    """The exact states of a batch's rows, on the kept N-blocks (a state store of :mod:`lru_mps.mcwf.loop`).

    Rows are ordered (realization, initial state): row b belongs to realization
    b // I of ``reals`` (R realizations, I rows each).
    """

    #: exact propagation: any stretch in one go
    time_step = None
    #: feedback trains for the loop (:mod:`lru_mps.engines.exact.feedback`)
    capabilities = frozenset({"feedback_trains"})
    #: the basis of the kept N-blocks (:class:`~lru_mps.engines.exact.sorted_basis.KeptBasis`): here the sorted 3^L
    #: space; the sector batch builds it from the sector bases
    kept_basis = SortedBasis
    by_number = True

    def __init__(self, spec, settings: EngineSettings, reals, I: int, products, nmax: np.ndarray, backend: str = "numpy"):
        xp = self.xp = _Ops(backend)
        self.spec = spec
        L = self.L = spec.L
        self.R, self.I = len(reals), I
        B = self.B = self.R * I
        self.ridx = np.arange(B) // I
        self.channels = spec.jump_channels()
        times = np.asarray(settings.times, dtype=float)

        nmax_r = np.zeros(self.R, dtype=int)
        np.maximum.at(nmax_r, self.ridx, np.asarray(nmax, dtype=int))
        if number_can_grow(spec):  # false reports (physics.readout), a bath's heating (physics.bath): every block
            nmax_r[:] = 2 * L
        basis = self.basis = self.kept_basis(L, int(nmax_r.max()))
        self.reals = list(reals)
        psi = np.zeros((B, basis.dim), dtype=complex)
        for b, sites in enumerate(products):
            psi[b] = basis.product(sites)
        self.psi = xp.asarray(psi)
        self.spare = xp.asarray(np.zeros_like(psi))
        self.a_rdm1, self.a_rdm0 = xp.take(basis.rdm_1), xp.take(basis.rdm_0)

        # the most common grid step: its propagator is precomputed
        steps = np.diff(np.concatenate([[0.0], times]))
        steps = steps[steps > 0]
        self.dt_ref = 1.0
        if len(steps):
            vals, counts = np.unique(steps, return_counts=True)
            self.dt_ref = float(vals[np.argmax(counts)])

        # block n of realization r exists for n <= N_max(r); H_eff = hopping + diagonal on-site terms
        edges = None if spec.geometry is None else spec.edges()  # a coupling graph's bonds (None: the chain's)
        hop = basis.hopping(edges)
        # per-bond couplings J_l (hopping spread): sum_l J_l (bond l's block), per realization
        Js = np.array([spec.couplings(real) for real in reals]) if any(real.J is not None for real in reals) else None
        diag = np.empty((self.R, L, 3), dtype=complex)
        dense = set()
        for r, real in enumerate(reals):
            on = spec.onsite_terms(real)
            diag[r] = np.diagonal(on, axis1=1, axis2=2)
            if np.count_nonzero(on - diag[r][:, :, None] * np.eye(3)):
                dense.add(r)
        self.blocks: list[BlockStack] = []
        for n in range(basis.nmax + 1):
            rs = np.nonzero(nmax_r >= n)[0]
            lev = basis.levels[:, basis.slices[n]]
            dn = diag[rs]
            acc = dn[:, 0, lev[0]]
            for l in range(1, L):  # summed in site order, as hamiltonian_eff adds its terms
                acc = acc + dn[:, l, lev[l]]
            hn = hop[n][None, :, :] if Js is None else np.einsum("rb,bij->rij", Js[rs], basis.bonds(edges)[n])
            H = hn + acc[:, :, None] * np.eye(lev.shape[1])
            for j, r in enumerate(rs):
                if r in dense:  # an on-site term that is not diagonal: build it as the exact engine does
                    H[j] = basis.dense_block(spec, reals[r], n)
            self.blocks.append(BlockStack(basis.slices[n], rs, self.R, H, self.dt_ref, xp))
        self._jump_data = self._prepare_jumps()
        #: the loop's fast path for the branch estimator's feedback (None: one stop per measurement)
        self.feedback_trains = ExactFeedbackTrains(self) if settings.feedback == "fast" else None

    # ------------------------------------------------------------ evolution
    def _bulk(self, src, dst, dur: float) -> None:
        """dst <- exp(-i H_eff dur) src for every row: one batched matmul per block."""
        xp = self.xp
        s3 = src.reshape(self.R, self.I, -1)
        d3 = dst.reshape(self.R, self.I, -1)
        use_ref = dur == self.dt_ref
        for blk in self.blocks:
            sl = blk.sl
            x = s3[:, :, sl] if blk.full else s3[xp.take(blk.reals), :, sl]
            if use_ref and blk.full and xp.numpy:
                np.matmul(x, blk.x_UT, out=d3[:, :, sl])
                continue
            if use_ref:
                y = xp.matmul(x, blk.x_UT)
            else:
                y = evolve_rows(x, blk.x_VinvT, blk.x_VT, xp.exp(-1j * blk.x_lam * dur)[:, None, :], xp)
                for j in blk.bad_pos:
                    y[j] = blk.expm_rows(x[j], j, dur, xp)
            if blk.full:
                d3[:, :, sl] = y
            else:
                d3[xp.take(blk.reals), :, sl] = y

    def _rows(self, x, rows: np.ndarray, durs: np.ndarray):
        """exp(-i H_eff dur_j) x_j for the rows ``rows`` (x: their amplitudes), eigen form."""
        xp = self.xp
        out = xp.zeros_like(x)
        rr = self.ridx[rows]
        for blk in self.blocks:
            sl = blk.sl
            p = blk.pos[rr]
            reach = p >= 0
            if xp.numpy:  # a block of zeros stays zero: skip it (the same numbers)
                reach &= np.any(x[:, sl] != 0, axis=1)
            sel = np.nonzero(reach)[0]
            if len(sel) == 0:
                continue
            ps = p[sel]
            xs = x[xp.take(sel), sl]
            tps = xp.take(ps)
            phases = xp.exp(-1j * blk.x_lam[tps] * xp.asarray(durs[sel])[:, None])
            y = evolve_rows(xs[:, None, :], blk.x_VinvT[tps], blk.x_VT[tps], phases[:, None, :], xp)[:, 0, :]
            for j in np.nonzero(blk.bad[ps])[0]:
                y[j] = blk.expm_rows(xs[j], ps[j], durs[sel[j]], xp)
            out[xp.take(sel), sl] = y
        return out

    def evolve(self, rows: np.ndarray, durations, grid_step: float | None = None) -> None:
        """|psi_b> <- exp(-i H_eff d_b) |psi_b> for the rows, exactly.

        On the first advance of a grid interval (``grid_step``) with at least a
        quarter of the batch moving by exactly one grid step, every row is
        multiplied by the precomputed grid-step propagator (one batched matmul
        per block) and the others are put back or recomputed; otherwise each
        row takes its own duration in the eigen form.
        """
        xp = self.xp
        rows = np.asarray(rows, dtype=np.intp)
        dur = np.broadcast_to(np.asarray(durations, dtype=float), (len(rows),))
        grid = dur == grid_step if grid_step is not None else np.zeros(len(rows), dtype=bool)
        if grid_step is not None and 4 * int(np.count_nonzero(grid)) >= self.B:
            self._bulk(self.psi, self.spare, grid_step)
            self.psi, self.spare = self.spare, self.psi
            before = self.spare
            moving = np.zeros(self.B, dtype=bool)
            moving[rows] = True
            still = np.nonzero(~moving)[0]
            if len(still):
                self.psi[xp.take(still)] = before[xp.take(still)]
            other = rows[~grid]
            if len(other):
                self.psi[xp.take(other)] = self._rows(before[xp.take(other)], other, dur[~grid])
            return
        tr = xp.take(rows)
        self.psi[tr] = self._rows(self.psi[tr], rows, dur)

    def snapshot(self, rows: np.ndarray):
        """The rows' amplitudes (a copy, on the host), for a jump time inside the next stretch."""
        return np.array(self.xp.host(self.psi[self.xp.take(rows)]))

    def probe(self, b: int, snapshot, j: int) -> "_Crossing":
        """Row b's evolution from position j of ``snapshot`` in the eigen form, for the jump time."""
        return _Crossing(self, b, snapshot[j])

    # ------------------------------------------------------------- rows, for the feedback trains
    def amplitudes(self, rows: np.ndarray) -> np.ndarray:
        """The rows' amplitudes on the kept basis (m, dim), a host copy."""
        return np.array(self.xp.host(self.psi[self.xp.take(rows)]))

    def set_amplitudes(self, rows: np.ndarray, x: np.ndarray) -> None:
        """Put amplitudes (m, dim) into the rows."""
        self.psi[self.xp.take(rows)] = self.xp.asarray(x)

    def realizations(self, rows: np.ndarray) -> np.ndarray:
        """The realization (index into ``reals``) of each row."""
        return self.ridx[rows]

    def last_levels(self) -> np.ndarray:
        """The level of the last site in every kept basis state (dim,)."""
        return self.basis.levels[self.L - 1]

    # ------------------------------------------------------------- norms
    def norm2(self, rows: np.ndarray | None = None) -> np.ndarray:
        """<psi|psi> of the rows (all if None), on the host."""
        xp = self.xp
        return xp.norm2(self.psi if rows is None else self.psi[xp.take(rows)])

    def scale(self, rows: np.ndarray | None, factors: np.ndarray) -> None:
        """|psi_b> <- factor_b |psi_b> for the rows (all if None)."""
        xp = self.xp
        f = xp.asarray(factors)[:, None]
        if rows is None:
            self.psi *= f
        else:
            tr = xp.take(rows)
            self.psi[tr] = self.psi[tr] * f

    # ----------------------------------------------------------------- events
    def _prepare_jumps(self):
        """Each channel's operator on the kept basis (sparse); None if some op^dag op is not diagonal."""
        if not self.channels:
            return None
        for ch in self.channels:
            m = ch.op.conj().T @ ch.op
            if np.count_nonzero(m - np.diag(np.diagonal(m))):
                return None
        return SimpleNamespace(ops=[self.basis.local(ch.op, ch.site) for ch in self.channels])

    def populations(self, b: int) -> np.ndarray:
        """Level populations (L, 3) of row b."""
        x = np.array(self.xp.host(self.psi[b]))
        return ((x.real**2 + x.imag**2) @ self.basis.M).reshape(self.L, 3)

    def state(self, b: int):
        """Row b as an ordinary state (a copy): an ExactState on the full 3^L space (the basis's ``ordinary``)."""
        return self.basis.ordinary(np.array(self.xp.host(self.psi[b])), self.spec, self.reals[self.ridx[b]])

    def rdm(self, b: int, site: int) -> np.ndarray:
        """One-site density matrix of row b."""
        return self.state(b).site_rdm(site)

    def apply_jump(self, b: int, channel: int) -> None:
        """Channel ``channel``'s operator on row b, then renormalize."""
        xp = self.xp
        jd = self._jump_data
        if jd is None:  # some op^dag op is not diagonal: on the full space
            ch = self.channels[channel]
            state = self.state(b)
            jump(state, ch)
            self.psi[b] = xp.asarray(self.basis.kept(state))
            return
        x = np.array(xp.host(self.psi[b]))
        new = jd.ops[channel] @ x
        new = new * (1.0 / math.sqrt(float(np.vdot(new, new).real)))
        self.psi[b] = xp.asarray(new)

    def reset_populations(self, rows: np.ndarray, site: int) -> np.ndarray:
        """Unnormalized level populations (m, 3) of the reset site ``site``, rows ``rows``."""
        xp = self.xp
        return xp.weights(self.psi[xp.take(rows)], *self.basis.site_columns(site))

    def apply_reset(self, rows: np.ndarray, site: int, outcomes: np.ndarray, normalize: bool, targets=None) -> None:
        """|k_b><o_b| on the reset site ``site`` of each row, k_b = targets[b] (default 0: the reset), then
        renormalize if ``normalize``."""
        xp, basis = self.xp, self.basis
        tr = xp.take(rows)
        x = self.psi[tr]
        new = xp.zeros_like(x)
        targets = np.zeros(len(rows), dtype=int) if targets is None else np.asarray(targets)
        for o in range(3):
            for k in range(3):
                sel = np.nonzero((outcomes == o) & (targets == k))[0]
                if len(sel) == 0:
                    continue
                src, dst = basis.transfer(o, k, site)
                ts = xp.take(sel)
                block = new[ts]
                block[:, xp.take(dst)] = x[ts][:, xp.take(src)]
                new[ts] = block
        if normalize:
            new = new * xp.asarray(1.0 / np.sqrt(xp.norm2(new)))[:, None]
        self.psi[tr] = new

    def observe(self, rows: np.ndarray):
        """Site populations (m, L, 3), rho_1[1, 0] (m,) and squared norms (the populations of site 1 summed)."""
        xp = self.xp
        everyone = 2 * len(rows) >= self.B  # compute for all rows rather than gather most of them
        x = self.psi if everyone else self.psi[xp.take(rows)]
        pops = xp.weights(x, self.basis.M, self.basis.M2)
        rho10 = xp.host(xp.sum(x[:, self.a_rdm1] * xp.conj(x[:, self.a_rdm0]), axis=1))
        if everyone:
            pops, rho10 = pops[rows], rho10[rows]
        pops = pops.reshape(len(rows), self.L, 3)
        return pops, rho10, pops[:, 0, :].sum(axis=1)

    def diagnostics(self) -> list[dict]:
        """Per-row engine diagnostics (none for exact propagation)."""
        return [{} for _ in range(self.B)]


class _Crossing:
    """exp(-i H_eff tau) of one row's amplitudes from a snapshot, in the eigen form of its occupied blocks."""

    def __init__(self, store: ExactBatch, b: int, before: np.ndarray):
        self.store, self.b, self.before = store, b, before
        r = int(store.ridx[b])
        idx, Vs, lams, zs, self.expm_parts = [], [], [], [], []
        for blk in store.blocks:
            p = blk.pos[r]
            if p < 0:
                continue
            x = before[blk.sl]
            if not np.any(x):
                continue
            if blk.bad[p]:
                self.expm_parts.append((blk.sl, blk.H[p], x))
            else:
                idx.append(np.arange(blk.sl.start, blk.sl.stop))
                Vs.append(blk.V[p])
                lams.append(blk.lam[p])
                zs.append(blk.Vinv[p] @ x)
        self.has_eig = bool(Vs)
        if Vs:  # the occupied blocks as one block-diagonal matrix
            self.idx = np.concatenate(idx)
            self.V = Vs[0] if len(Vs) == 1 else sla.block_diag(*Vs)
            self.lam = np.concatenate(lams)
            self.z = np.concatenate(zs)

    def evolved(self, tau: float) -> np.ndarray:
        out = np.zeros_like(self.before)
        if self.has_eig:
            out[self.idx] = evolve_eigen(self.V, self.lam, self.z, tau)
        for sl, H, x in self.expm_parts:
            out[sl] = expm_propagator(H, tau) @ x
        return out

    def norm2_after(self, tau: float) -> float:
        v = self.evolved(tau)
        return float(np.vdot(v, v).real)

    def commit(self, tau: float) -> None:
        self.store.psi[self.b] = self.store.xp.asarray(self.evolved(tau))
