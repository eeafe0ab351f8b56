"""Padded batched MPS for array libraries on a GPU (torch, cupy): one batched SVD per gate for all rows.

The MPS engine's store on a backend other than numpy
(:meth:`~lru_mps.engines.mps.batch.MPSBatch.for_backend`).  Site l of all B rows is one array A_l[B, chi_l, 3, chi_{l+1}],
every row zero-padded to the largest bond of the batch; each row keeps its own
bond dimensions (``chi[b, l]``), truncation decisions and diagnostics.  The
rows run the schedule of :mod:`lru_mps.engines.mps.tebd` (the same gates); a gate
contracts theta = A_b A_{b+1} for all rows (one batched matmul), applies the
rows' gates and splits theta with one batched *dense* SVD (no charge blocks:
few large calls are what a GPU does well).  Padding adds only exact zeros: a
row's singular values are those of its own theta plus zeros, so the rule of
:func:`lru_mps.engines.mps.svd.truncation` keeps the same values as the
unbatched split; the columns beyond a row's own bond are masked to zero.
Rows whose bonds differ a lot are bucketed (``pad_tolerance``).

At rest every row has its centre on the last site.  Everything but the
evolution (observables, jumps, resets, diagnostics) is done on the host, on
the row as an :class:`~lru_mps.engines.mps.MPSState` (without charge labels),
with the kernels of :mod:`~lru_mps.engines.mps.tebd`.  The truncation bookkeeping
reads the singular values on the host (one small copy per gate).
"""

from __future__ import annotations

import math

import numpy as np
from numba.typed import List

from ..protocol import EngineSettings
from ..common.arraylib import ArrayLib
from .state import MPSOptions, MPSState, the_last as _the_last
from .store import MPSStore
from ..common.probe import CopyProbe
from ..common.store import observe_states, reset
from .svd import truncations
from .tebd import NO_CHARGE, product_row


class PaddedMPSBatch(MPSStore):
    """The MPS states of a batch's rows as padded arrays of one array library (a state store of the loop)."""

    #: pad a gate's thetas to one shape unless that costs this many times the rows' own SVDs (None: by backend)
    pad_tolerance: float | None = None

    def __init__(self, spec, settings: EngineSettings, reals, I: int, products, nmax, backend: str = "numpy"):
        xp = self.xp = ArrayLib(backend)
        if self.pad_tolerance is None:  # fewer, larger calls pay on a GPU
            self.pad_tolerance = 1.5 if xp.numpy else 8.0
        self.spec = spec
        L = self.L = spec.L
        self.engine = MPSOptions(**settings.engine_options)
        self.dt = self.time_step = self.engine.dt
        self.R, self.I = len(reals), I
        B = self.B = self.R * I
        self.ridx = np.arange(B) // I
        self.channels = spec.jump_channels()
        self.props = [self.engine.prepare(spec, real) for real in reals]
        self.chi = np.ones((B, L + 1), dtype=int)
        self.disc = np.zeros(B)
        self.maxb = np.ones(B, dtype=int)
        self.steps = np.zeros(B, dtype=int)
        self.drift = np.zeros(B)
        self.eref = np.full(B, np.nan)  # <H> at the start of the current unitary stretch (nan: none yet)
        self.arrays = [xp.zeros((B, 1, 3, 1)) for _ in range(L)]
        for b, sites in enumerate(products):
            self.set_row(b, MPSState(self.props[int(self.ridx[b])], *product_row(sites, False)), keep_diag=True)
        self._stacks: dict[float, object] = {}

    # ------------------------------------------------------------ gates
    def _gates(self, rows: np.ndarray, dt):
        """The schedule's gates of the rows: (R, 1, 1, n, 9, 9) for one dt (all realizations), or (m, 1, n, 9, 9)."""
        xp = self.xp
        if np.ndim(dt) == 0:
            key = float(dt)
            st = self._stacks.get(key)
            if st is None:
                st = xp.asarray(np.stack([p.gates.step(key) for p in self.props])[:, None, None])
                if len(self._stacks) > 8:
                    self._stacks.clear()
                self._stacks[key] = st
            if len(rows) == self.B:
                return st
            return st[:, 0][xp.index(self.ridx[rows])]
        return xp.asarray(np.stack([self.props[int(r)].gates.step(float(t)) for r, t in zip(self.ridx[rows], dt)])[:, None])

    # ------------------------------------------------------------ sweep
    @staticmethod
    def cost(a, k, c):
        """Flops of one row's gate on bonds (a, k, c): theta = A B, the gate, the SVD (m n min(m, n))."""
        return 27 * a * k * c + 81 * a * c + 9 * a * c * np.minimum(3 * a, 3 * c)

    def buckets(self, al: np.ndarray, km: np.ndarray, cr: np.ndarray, a: int, k: int, c: int) -> list:
        """Groups of rows (positions, a_g, k_g, c_g) whose gates run together on tensors trimmed to those bonds.

        One group (the whole padded batch, positions None) unless padding would
        cost more than ``pad_tolerance`` times the rows' own work; else rows
        with similar bonds are bucketed greedily by cost.
        """
        own = self.cost(al, km, cr)
        if len(al) * self.cost(a, k, c) <= self.pad_tolerance * own.sum():
            return [(None, a, k, c)]
        keys, inv, counts = np.unique((al << 20) + (km << 10) + cr, return_inverse=True, return_counts=True)
        owns = np.bincount(inv, weights=own, minlength=len(keys)).tolist()
        pa, pk, pc = (keys >> 20).tolist(), ((keys >> 10) & 1023).tolist(), (keys & 1023).tolist()
        counts = counts.tolist()

        def c1(x, y, z):  # cost on Python ints (this loop runs once per gate)
            return 27 * x * y * z + 81 * x * z + 9 * x * z * 3 * min(x, z)

        tol = self.pad_tolerance
        order = sorted(range(len(pa)), key=lambda p: c1(pa[p], pk[p], pc[p]))
        bucket = np.empty(len(pa), dtype=int)
        dims, ga, gk, gc, n, o = [], 0, 0, 0, 0, 0.0
        for p in order:
            na, nk, nc = max(ga, pa[p]), max(gk, pk[p]), max(gc, pc[p])
            if n and (n + counts[p]) * c1(na, nk, nc) > tol * (o + owns[p]):
                dims.append((ga, gk, gc))
                na, nk, nc, n, o = pa[p], pk[p], pc[p], 0, 0.0
            bucket[p] = len(dims)
            ga, gk, gc, n, o = na, nk, nc, n + counts[p], o + owns[p]
        dims.append((ga, gk, gc))
        rb = bucket[inv.reshape(-1)]
        srt = np.argsort(rb, kind="stable")
        cuts = np.cumsum(np.bincount(rb, minlength=len(dims)))[:-1]
        return [(pos, x, y, z) for pos, (x, y, z) in zip(np.split(srt, cuts), dims)]

    def _split(self, arrs, chi, rows_h, b: int, G, to_right: bool) -> None:
        """Apply gate G to bond (b, b+1) of the rows held in ``arrs`` and split by SVD."""
        xp = self.xp
        A, Bm = arrs[b], arrs[b + 1]
        m, a, _, k = A.shape
        c = Bm.shape[3]
        eng = self.engine
        al, km, cr = chi[:, b], chi[:, b + 1], chi[:, b + 2]
        rank = 3 * np.minimum(al, cr)  # len(S) of each row's own theta
        keep = np.empty(m, dtype=int)
        parts = []
        for pos, ga, gk, gc in self.buckets(al, km, cr, a, k, c):
            grouped = pos is None and G.ndim == 5  # (R, 1, 1, 9, 9): all rows, realizations in order
            if pos is None:
                X, Y, mg, Gg = A[:, :ga, :, :gk], Bm[:, :gk, :, :gc], m, G
            else:
                ix = xp.index(pos)
                X, Y, mg = A[ix, :ga, :, :gk], Bm[ix, :gk, :, :gc], len(pos)
                Gg = G.reshape(self.R, 1, 9, 9)[xp.index(self.ridx[rows_h[pos]])] if G.ndim == 5 else G[ix]
            theta = xp.matmul(X.reshape(mg, ga * 3, gk), Y.reshape(mg, gk, 3 * gc)).reshape(mg, ga, 9, gc)
            if grouped:
                theta = xp.matmul(Gg, theta.reshape(self.R, self.I, ga, 9, gc)).reshape(mg, ga, 9, gc)
            else:
                theta = xp.matmul(Gg, theta)
            U, S, Vh = xp.svd(theta.reshape(mg, ga * 3, 3 * gc), full_matrices=False)
            Sh = np.ascontiguousarray(xp.host(S), dtype=float)
            kp, lost = truncations(Sh, (rank if pos is None else rank[pos]).astype(np.int64), eng.cutoff,
                                   eng.max_bond)
            self.disc[rows_h if pos is None else rows_h[pos]] += lost
            K = Sh.shape[1]
            cols = np.arange(K)[None, :]
            kg = int(kp.max())
            if kp.min() < kg:  # rows that keep fewer: zero their extra columns
                md = xp.asarray((cols[:, :kg] < kp[:, None]).astype(float))
                U, S, Vh = U[:, :, :kg] * md[:, None, :], S[:, :kg] * md, Vh[:, :kg, :] * md[:, :, None]
            elif kg < K:
                U, S, Vh = U[:, :, :kg], S[:, :kg], Vh[:, :kg, :]
            if to_right:
                lt, rt = U.reshape(mg, ga, 3, kg), (S[:, :, None] * Vh).reshape(mg, kg, 3, gc)
            else:
                lt, rt = (U * S[:, None, :]).reshape(mg, ga, 3, kg), Vh.reshape(mg, kg, 3, gc)
            keep[slice(None) if pos is None else pos] = kp
            parts.append((pos, ga, gc, kg, lt, rt))
        kmax = int(keep.max())
        if len(parts) == 1 and parts[0][0] is None and (parts[0][1], parts[0][2]) == (a, c):
            arrs[b], arrs[b + 1] = parts[0][4], parts[0][5]
        else:
            left, right = xp.zeros((m, a, 3, kmax)), xp.zeros((m, kmax, 3, c))
            for pos, ga, gc, kg, lt, rt in parts:
                ix = slice(None) if pos is None else xp.index(pos)
                left[ix, :ga, :, :kg] = lt
                right[ix, :kg, :, :gc] = rt
            arrs[b], arrs[b + 1] = left, right
        chi[:, b + 1] = keep
        self.maxb[rows_h] = np.maximum(self.maxb[rows_h], keep)

    def step(self, rows: np.ndarray, dt) -> None:
        """One Trotter step of the rows: the engine's dt for all of them, or one step length per row."""
        everyone = len(rows) == self.B
        arrs = list(self.arrays) if everyone else self._take(rows)
        chi = self.chi if everyone else self.chi[rows]
        G = self._gates(rows, dt)
        g = self.props[0].gates
        for s, (b, right) in enumerate(zip(g.bonds.tolist(), g.right.tolist())):
            self._split(arrs, chi, rows, b, G[..., s, :, :], right)
        self.steps[rows] += 1
        if everyone:
            self.arrays = arrs
        else:
            self._put(rows, arrs, chi)

    # ------------------------------------------------------------ rows in and out
    def _take(self, rows: np.ndarray) -> list:
        """The rows' tensors, trimmed to their largest bonds (copies)."""
        c = self.chi[rows].max(axis=0)
        ix = self.xp.index(rows)
        return [A[ix][:, : c[l], :, : c[l + 1]] for l, A in enumerate(self.arrays)]

    def _put(self, rows: np.ndarray, arrs: list, chi: np.ndarray) -> None:
        """Write the rows' tensors back, padding the batch (or them) to a common shape."""
        xp = self.xp
        ix = xp.index(rows)
        for l, (A, X) in enumerate(zip(self.arrays, arrs)):
            a, c = max(A.shape[1], X.shape[1]), max(A.shape[3], X.shape[3])
            if (a, c) != (A.shape[1], A.shape[3]):
                Z = xp.zeros((self.B, a, 3, c))
                Z[:, : A.shape[1], :, : A.shape[3]] = A
                A = self.arrays[l] = Z
            if (a, c) != (X.shape[1], X.shape[3]):
                Z = xp.zeros((len(rows), a, 3, c))
                Z[:, : X.shape[1], :, : X.shape[3]] = X
                X = Z
            A[ix] = X
        self.chi[rows] = chi

    def row_state(self, b: int, arrays=None, chi=None, j: int | None = None) -> MPSState:
        """Row b as an unbatched MPSState (host copies, no charge labels; centre on the last site), from the
        store or from position j of a snapshot (arrays, chi)."""
        arrays, chi, j = (self.arrays, self.chi, b) if arrays is None else (arrays, chi, j)
        c = chi[j]
        arrs = List([np.ascontiguousarray(self.xp.host(A[j, : c[l], :, : c[l + 1]]), dtype=complex)
                     for l, A in enumerate(arrays)])
        qs = List([np.zeros(n, dtype=np.int64) for n in c])
        diag = {"discarded_weight": float(self.disc[b]), "max_bond": int(self.maxb[b]),
                "energy_drift": float(self.drift[b]), "steps": int(self.steps[b])}
        s = MPSState(self.props[int(self.ridx[b])], arrs, qs, NO_CHARGE, self.L - 1, diag)
        s.energy_ref = None if math.isnan(self.eref[b]) else float(self.eref[b])
        return s

    def set_row(self, b: int, state: MPSState, keep_diag: bool = False) -> None:
        """Put an MPSState back into row b (centre moved to the last site) with its diagnostics."""
        self.held = None
        state.move_centre(self.L - 1)
        arrs = state.tensors()
        chi = np.array([[1] + [A.shape[2] for A in arrs]])
        self._put(np.array([b]), [self.xp.asarray(A[None]) for A in arrs], chi)
        if not keep_diag:
            self.keep_diagnostics(b, state)

    def keep_diagnostics(self, b: int, state: MPSState) -> None:
        d = state.diag
        self.disc[b], self.maxb[b], self.steps[b] = d["discarded_weight"], d["max_bond"], d["steps"]
        self.drift[b] = d["energy_drift"]
        self.eref[b] = np.nan if state.energy_ref is None else state.energy_ref

    # ------------------------------------------------------------ the store interface
    def snapshot(self, rows: np.ndarray):
        """The rows' tensors, bonds and diagnostics before a step."""
        return self._take(rows), self.chi[rows].copy(), [self.row_diag(b) for b in rows]

    def row_diag(self, b: int) -> tuple:
        return self.disc[b], self.maxb[b], self.steps[b], self.drift[b], self.eref[b]

    def probe(self, b: int, snapshot, j: int) -> CopyProbe:
        """Row b as it was before the step (an MPSState), to find its jump time inside the step."""
        arrays, chi, diags = snapshot
        now = self.row_diag(b)
        self.disc[b], self.maxb[b], self.steps[b], self.drift[b], self.eref[b] = diags[j]
        before = self.row_state(b, arrays, chi, j)
        self.disc[b], self.maxb[b], self.steps[b], self.drift[b], self.eref[b] = now
        return CopyProbe(before, lambda state: self.set_row(b, state))

    def norm2(self, rows: np.ndarray | None = None) -> np.ndarray:
        """<psi|psi> of the rows (all if None): ||A_{L-1}||^2, on the host."""
        xp = self.xp
        C = self.arrays[-1] if rows is None else self.arrays[-1][xp.index(rows)]
        return np.asarray(xp.host(xp.sum(xp.real(C * xp.conj(C)), axis=(1, 2, 3))), dtype=float)

    def scale(self, rows: np.ndarray | None, factors: np.ndarray) -> None:
        self.held = None
        xp = self.xp
        f = xp.asarray(np.asarray(factors, dtype=float))[:, None, None, None]
        if rows is None:
            self.arrays[-1] = self.arrays[-1] * f
        else:
            ix = xp.index(rows)
            self.arrays[-1][ix] = self.arrays[-1][ix] * f

    def populations(self, b: int) -> np.ndarray:
        """Level populations (L, 3) of row b (tracks <H>, as MPSState.site_populations does)."""
        state = self._row(b)
        pops = state.site_populations()
        self.keep_diagnostics(b, state)
        return pops

    def state(self, b: int) -> MPSState:
        return self.row_state(b)

    def observe(self, rows: np.ndarray):
        """Site populations (m, L, 3), rho_1[1, 0] (m,) and squared norms, from the rows on the host."""
        states = [self.row_state(b) for b in rows]
        pops, rho10 = observe_states(states, self.L)
        for b, s in zip(rows, states):
            self.keep_diagnostics(b, s)
        return pops, rho10, np.array([s.norm2() for s in states])

    def reset_populations(self, rows: np.ndarray, site: int) -> np.ndarray:
        """Level populations (m, 3) of the reset site, the last (tracks <H>, as site_populations does)."""
        _the_last(site, self.L - 1)
        return np.array([self.populations(b)[site] for b in rows]).reshape(len(rows), 3)

    def apply_reset(self, rows: np.ndarray, site: int, outcomes: np.ndarray, normalize: bool, targets=None) -> None:
        """|k_b><o_b| (k_b = targets[b], default 0) on the reset site, the last, of each row, then renormalize if
        ``normalize``."""
        _the_last(site, self.L - 1)
        targets = np.zeros(len(rows), dtype=int) if targets is None else targets
        for b, o, k in zip(rows, outcomes, targets):
            state = self.row_state(b)
            reset(state, o, self.L - 1, normalize, k)
            self.set_row(b, state)

    def diagnostics(self) -> list[dict]:
        """Per-row MPSState.diagnostics(): truncation, bonds, Trotter drift, steps, norm error."""
        return [self.row_state(b).diagnostics() for b in range(self.B)]
