"""Batched qutrit MPS: the rows of a batch as padded tensors, one TEBD sweep for all.

The state store of :mod:`lru_mps.batched` for ``--engine mps`` (lean kernel).
It runs the sweep of :class:`~lru_mps.engines.mps.MPSState` (sequential
Strang sweep right-to-left then left-to-right, Suzuki order 4, SVD splits
with an absolute cutoff and a maximum bond) on all rows of a batch at once.

Representation.  Site l of all B rows is one array A_l[B, chi_l, 3, chi_{l+1}],
every row zero-padded to the largest bond of the batch; each row keeps its own
bond dimensions (``chi[b, l]``), truncation decisions and diagnostics.  At
rest every row is in mixed canonical form with its orthogonality centre on the
last site, where the reset acts, so the squared norm of a row is
||A_{L-1}[b]||^2 and a feedback measurement is local.

Why it gives the unbatched numbers.  A two-site gate contracts theta = A_b
A_{b+1} for all rows (one batched matmul), applies the rows' gates (the very
matrices of :meth:`MPSPropagator.gates`, scipy's expm, broadcast over the rows
of a realization) and splits theta with one batched SVD.  Padding adds only
exact zeros: a row's singular values are those of its own unpadded theta plus
zeros, so each row keeps ``min(#(S > cutoff) or 1, max_bond, rank bound)``
singular values exactly as the unbatched split does; the columns beyond a
row's own bond are masked to zero.  The singular vectors may differ from the
unbatched ones by a gauge (phases, rotations within degenerate values), which
leaves every observable unchanged up to rounding.  Rows advance by the steps
of trajectory._advance (steps of dt, the last one shortened, with the same
float arithmetic); rows whose step length differs are stepped in separate
groups.  A row whose squared norm falls below its threshold during a step is
taken out as an :class:`MPSState`, the crossing is found by the same brentq
search from the state before the step, and the jump is applied by
trajectory._jump on that state; then it goes back into the batch.

Backends.  The arrays may be numpy (default), torch or cupy arrays: every
bulk operation (matmul, einsum, SVD, masks) is resolved through autoray.  The
truncation bookkeeping reads the singular values on the host (one small copy
per gate); root finding, jumps and random numbers stay on the host.
"""

from __future__ import annotations

import math

import numpy as np

from .arraylib import ArrayLib
from .mps import SUZUKI_P, MPSEngine, MPSState
from .probe import CopyProbe


class MPSBatch:
    """The MPS states of a batch's rows (a state store of :mod:`lru_mps.batched`).

    Rows are ordered (realization, initial state): row b belongs to
    realization b // I of ``reals``.  Engine options come from
    ``settings.engine_options`` (those of :class:`MPSEngine`).
    """

    max_length = MPSEngine.max_length
    #: pad a gate's thetas to one shape unless that costs this many times the rows' own SVDs (None: by backend)
    pad_tolerance: float | None = None

    def __init__(self, spec, settings, reals, I: int, products, nmax, backend: str = "numpy"):
        xp = self.xp = ArrayLib(backend)
        if self.pad_tolerance is None:  # fewer, larger calls pay on a GPU
            self.pad_tolerance = 1.5 if xp.numpy else 8.0
        self.spec = spec
        L = self.L = spec.L
        self.engine = MPSEngine(**settings.engine_options)
        self.dt = self.time_step = self.engine.dt
        self.R, self.I = len(reals), I
        B = self.B = self.R * I
        self.ridx = np.arange(B) // I
        self.channels = spec.jump_channels()
        self.props = [self.engine.prepare(spec, real) for real in reals]
        # per-row truncation and diagnostics (host)
        self.chi = np.ones((B, L + 1), dtype=int)
        self.disc = np.zeros(B)
        self.maxb = np.ones(B, dtype=int)
        self.steps = np.zeros(B, dtype=int)
        self.drift = np.zeros(B)
        self.eref = np.full(B, np.nan)  # <H> at the start of the current unitary stretch (nan: none yet)
        self.track = self.engine.track_energy and all(p.hermitian for p in self.props)
        if self.track:
            self.h_bonds = [xp.asarray(np.stack([p.h_bonds[l] for p in self.props])[:, None]) for l in range(L - 1)]
        site = np.zeros((B, L, 3), dtype=complex)
        for b, sites in enumerate(products):
            site[b] = np.stack(sites)
        self.arrays = [xp.asarray(np.ascontiguousarray(site[:, l, None, :, None])) for l in range(L)]
        self._stacks: dict[float, list] = {}
        self._jumping = None  # (row, MPSState) between the weights and the operator of a jump

    # ------------------------------------------------------------ gates
    def _stack(self, tau: float) -> list:
        """exp(-i tau h_b) of every realization, as (R, 1, 9, 9) arrays per bond (cached per tau)."""
        key = round(tau, 15)
        st = self._stacks.get(key)
        if st is None:
            per = [p.gates(tau) for p in self.props]
            st = [self.xp.asarray(np.stack([g[b].reshape(9, 9) for g in per])[:, None]) for b in range(self.L - 1)]
            if len(self._stacks) > 16:
                self._stacks.clear()
            self._stacks[key] = st
        return st

    def _gates(self, rows: np.ndarray, taus) -> list:
        """Gates exp(-i tau h_b) of the rows: (m, 1, 9, 9) per bond (or (R, 1, 1, 9, 9) for all rows).

        ``taus``: one float for all rows (gates cached per tau for every
        realization), or one duration per row (each row's realization only).
        """
        if np.ndim(taus) == 0:
            st = self._stack(float(taus))
            if len(rows) == self.B:
                return [g[:, None] for g in st]
            return [g[self.xp.index(self.ridx[rows])] for g in st]
        per = [self.props[int(r)].gates(float(t)) for r, t in zip(self.ridx[rows], taus)]
        return [self.xp.asarray(np.stack([g[b].reshape(9, 9) for g in per])[:, None]) for b in range(self.L - 1)]

    # ------------------------------------------------------------ sweep
    @staticmethod
    def _cost(a, k, c):
        """Flops of one row's gate on bonds (a, k, c): theta = A B, the gate, the SVD (m n min(m, n))."""
        return 27 * a * k * c + 81 * a * c + 9 * a * c * np.minimum(3 * a, 3 * c)

    def _buckets(self, al: np.ndarray, km: np.ndarray, cr: np.ndarray, a: int, k: int, c: int) -> list:
        """Groups of rows (positions, a_g, k_g, c_g) whose gates run together on tensors trimmed to those bonds.

        One group (the whole padded batch, positions None) unless padding would
        cost more than ``pad_tolerance`` times the rows' own work; else rows
        with similar bonds are bucketed greedily by cost.
        """
        cost = self._cost
        own = cost(al, km, cr)
        if len(al) * cost(a, k, c) <= self.pad_tolerance * own.sum():
            return [(None, a, k, c)]
        keys, inv, counts = np.unique((al << 20) + (km << 10) + cr, return_inverse=True, return_counts=True)
        owns = np.bincount(inv, weights=own, minlength=len(keys)).tolist()
        pa, pk, pc = (keys >> 20).tolist(), ((keys >> 10) & 1023).tolist(), (keys & 1023).tolist()
        counts = counts.tolist()

        def c1(x, y, z):  # _cost on Python ints (this loop runs once per gate)
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
        for pos, ga, gk, gc in self._buckets(al, km, cr, a, k, c):
            if pos is None:
                X, Y, mg = A, Bm, m
                if (ga, gk, gc) != (a, k, c):
                    X, Y = A[:, :ga, :, :gk], Bm[:, :gk, :, :gc]
                if G.ndim == 5:  # (R, 1, 1, 9, 9): all rows, realizations in order
                    Gg, grouped = G, True
                else:
                    Gg, grouped = G, False
            else:
                ix = xp.index(pos)
                X, Y, mg = A[ix, :ga, :, :gk], Bm[ix, :gk, :, :gc], len(pos)
                if G.ndim == 5:  # gather the rows' realizations
                    Gg = G.reshape(self.R, 1, 9, 9)[xp.index(self.ridx[rows_h[pos]])]
                else:
                    Gg = G[ix]
                grouped = False
            theta = xp.matmul(X.reshape(mg, ga * 3, gk), Y.reshape(mg, gk, 3 * gc)).reshape(mg, ga, 9, gc)
            if grouped:
                theta = xp.matmul(Gg, theta.reshape(self.R, self.I, ga, 9, gc)).reshape(mg, ga, 9, gc)
            else:
                theta = xp.matmul(Gg, theta)
            U, S, Vh = xp.svd(theta.reshape(mg, ga * 3, 3 * gc), full_matrices=False)
            Sh = xp.host(S)
            rk = rank if pos is None else rank[pos]
            kp = np.maximum(np.count_nonzero(Sh > eng.cutoff, axis=1), 1)
            kp = np.minimum(np.minimum(kp, eng.max_bond), rk)
            K = Sh.shape[1]
            cols = np.arange(K)[None, :]
            lost = (cols >= kp[:, None]) & (cols < rk[:, None])
            if lost.any():
                hit = rows_h if pos is None else rows_h[pos]
                self.disc[hit] += np.sum(np.where(lost, Sh, 0.0) ** 2, axis=1)
            kg = int(kp.max())
            if kp.min() < kg:  # rows that keep fewer: zero their extra columns
                md = xp.asarray((cols[:, :kg] < kp[:, None]).astype(float))
                U = U[:, :, :kg] * md[:, None, :]
                S = S[:, :kg] * md
                Vh = Vh[:, :kg, :] * md[:, :, None]
            elif kg < K:
                U, S, Vh = U[:, :, :kg], S[:, :kg], Vh[:, :kg, :]
            if to_right:
                lt, rt = U.reshape(mg, ga, 3, kg), (S[:, :, None] * Vh).reshape(mg, kg, 3, gc)
            else:
                lt, rt = (U * S[:, None, :]).reshape(mg, ga, 3, kg), Vh.reshape(mg, kg, 3, gc)
            if pos is None:
                keep[:] = kp
            else:
                keep[pos] = kp
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

    def _strang(self, arrs, chi, rows_h, half, full) -> None:
        L = self.L
        for b in range(L - 2, 0, -1):
            self._split(arrs, chi, rows_h, b, half[b], to_right=False)
        self._split(arrs, chi, rows_h, 0, full[0], to_right=True)
        for b in range(1, L - 1):
            self._split(arrs, chi, rows_h, b, half[b], to_right=True)

    def _step(self, rows: np.ndarray, dt) -> None:
        """One Trotter step (order 2 or 4, as MPSState.evolve) of the rows ``rows``.

        ``dt``: the engine's step for all of them, or one step length per row
        (the last, shortened steps of stretches, which rarely coincide).
        """
        everyone = len(rows) == self.B
        arrs = list(self.arrays) if everyone else self._take(rows)
        chi = self.chi if everyone else self.chi[rows]
        fracs = (1.0,) if self.engine.order == 2 else (SUZUKI_P, SUZUKI_P, 1.0 - 4.0 * SUZUKI_P, SUZUKI_P, SUZUKI_P)
        for frac in fracs:
            tau = frac * dt  # as MPSState.evolve computes it, per row when dt is an array
            half = self._gates(rows, tau / 2.0)
            full = self._gates(rows, tau)
            self._strang(arrs, chi, rows, half, full)
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

    def row_state(self, b: int) -> MPSState:
        """Row b as an unbatched MPSState (unpadded copies; centre on the last site)."""
        c = self.chi[b]
        arrs = [np.array(self.xp.host(A[b, : c[l], :, : c[l + 1]])) for l, A in enumerate(self.arrays)]
        return self._state(b, arrs)

    def _state(self, b: int, arrs: list) -> MPSState:
        diag = {"discarded_weight": float(self.disc[b]), "max_bond": int(self.maxb[b]),
                "energy_drift": float(self.drift[b]), "steps": int(self.steps[b])}
        s = MPSState(self.props[int(self.ridx[b])], arrs, centre=self.L - 1, diag=diag)
        s._energy_ref = None if math.isnan(self.eref[b]) else float(self.eref[b])
        return s

    def set_row(self, b: int, state: MPSState) -> None:
        """Put an MPSState back into row b (centre moved to the last site)."""
        self._jumping = None
        state.move_centre(self.L - 1)
        rows = np.array([b])
        chi = np.array([[1] + [A.shape[2] for A in state.arrays]])
        self._put(rows, [self.xp.asarray(A[None]) for A in state.arrays], chi)
        d = state.diag
        self.disc[b], self.maxb[b], self.steps[b] = d["discarded_weight"], d["max_bond"], d["steps"]
        self.drift[b] = d["energy_drift"]
        self.eref[b] = np.nan if state._energy_ref is None else state._energy_ref

    # ------------------------------------------------------------ the store interface
    def evolve(self, rows: np.ndarray, steps, grid_step: float | None = None) -> None:
        """One Trotter step of length steps[j] (at most dt) for each row: the regular steps together, all
        shortened ones (the ends of stretches, which rarely coincide) together with a length each."""
        self._jumping = None
        rows = np.asarray(rows, dtype=np.intp)
        steps = np.broadcast_to(np.asarray(steps, dtype=float), (len(rows),))
        regular = steps == self.dt
        if regular.all():
            self._step(rows, self.dt)
            return
        if regular.any():
            self._step(rows[regular], self.dt)
        self._step(rows[~regular], steps[~regular])

    def snapshot(self, rows: np.ndarray):
        """The rows' tensors, bonds and diagnostics before a step."""
        return self._take(rows), self.chi[rows].copy(), self._diag_rows(rows)

    def _diag_rows(self, rows):
        return self.disc[rows].copy(), self.maxb[rows].copy(), self.steps[rows].copy(), self.drift[rows].copy()

    def _before_state(self, b: int, j: int, before) -> MPSState:
        """Row b (position j of the snapshot) as it was before the step."""
        arrs, chi, (disc, maxb, steps, drift) = before
        c = chi[j]
        state = self._state(b, [np.array(self.xp.host(A[j, : c[l], :, : c[l + 1]])) for l, A in enumerate(arrs)])
        state.diag.update(discarded_weight=float(disc[j]), max_bond=int(maxb[j]), steps=int(steps[j]),
                          energy_drift=float(drift[j]))
        return state

    def probe(self, b: int, snapshot, j: int) -> CopyProbe:
        """Row b as it was before the step (an MPSState), to find its jump time inside the step."""
        return CopyProbe(self._before_state(b, j, snapshot), lambda state: self.set_row(b, state))

    def norm2(self, rows: np.ndarray | None = None) -> np.ndarray:
        """<psi|psi> of the rows (all if None): ||A_{L-1}||^2, on the host."""
        xp = self.xp
        C = self.arrays[-1] if rows is None else self.arrays[-1][xp.index(rows)]
        return np.asarray(xp.host(xp.sum(xp.real(C * xp.conj(C)), axis=(1, 2, 3))), dtype=float)

    def scale(self, rows: np.ndarray | None, factors: np.ndarray) -> None:
        self._jumping = None
        xp = self.xp
        f = xp.asarray(np.asarray(factors, dtype=float))[:, None, None, None]
        if rows is None:
            self.arrays[-1] = self.arrays[-1] * f
        else:
            ix = xp.index(rows)
            self.arrays[-1][ix] = self.arrays[-1][ix] * f

    def _row(self, b: int) -> MPSState:
        """Row b as an MPSState, kept between the calls of one jump (weights, then the operator)."""
        if self._jumping is None or self._jumping[0] != b:
            self._jumping = (b, self.row_state(b))
        return self._jumping[1]

    def populations(self, b: int) -> np.ndarray:
        """Level populations (L, 3) of row b (tracks <H>, as MPSState.site_populations does)."""
        return self._row(b).site_populations()

    def rdm(self, b: int, site: int) -> np.ndarray:
        return self._row(b).site_rdm(site)

    def apply_jump(self, b: int, channel: int) -> None:
        """The channel's operator on row b (as an MPSState), renormalized, put back into the batch."""
        state = self._row(b)
        ch = self.channels[channel]
        state.apply_local(ch.op, ch.site)
        state.scale(1.0 / math.sqrt(state.norm2()))
        self.set_row(b, state)
        self._jumping = None

    def state(self, b: int) -> MPSState:
        return self.row_state(b)

    def last_populations(self, rows: np.ndarray) -> np.ndarray:
        """Unnormalized level populations (m, 3) of the last site (tracks <H>, as site_populations does)."""
        xp = self.xp
        self._track_energy(rows)
        C = self.arrays[-1][xp.index(rows)]
        return np.asarray(xp.host(xp.sum(xp.real(C * xp.conj(C)), axis=(1, 3))), dtype=float)

    def reset_last(self, rows: np.ndarray, outcomes: np.ndarray, normalize: bool) -> None:
        """|0><o_b| on the last site (the centre) of each row, then renormalize if ``normalize``."""
        self._jumping = None
        xp = self.xp
        ix = xp.index(rows)
        C = self.arrays[-1][ix]
        picked = C[xp.index(np.arange(len(rows))), :, xp.index(np.asarray(outcomes)), :]  # (m, chi, 1)
        new = xp.zeros(tuple(C.shape))
        new[:, :, 0, :] = picked
        if normalize:
            n2 = np.asarray(xp.host(xp.sum(xp.real(new * xp.conj(new)), axis=(1, 2, 3))), dtype=float)
            new = new * xp.asarray(1.0 / np.sqrt(n2))[:, None, None, None]
        self.arrays[-1][ix] = new
        self.eref[rows] = np.nan  # apply_local starts a new unitary stretch

    def _environments(self, rows: np.ndarray):
        """Site-population diagonals (m, L, 3), rho_1 (m, 3, 3) and per-bond <h_b> of the rows."""
        xp = self.xp
        ix = xp.index(rows)
        L = self.L
        m = len(rows)
        A = [X[ix] for X in self.arrays]
        pops = []
        C = A[L - 1]
        pops.append(xp.sum(xp.real(C * xp.conj(C)), axis=(1, 3)))
        R = xp.einsum("xaib,xcib->xac", C, xp.conj(C))
        Rs = {L - 2: R}
        rho0 = None
        if L == 1:
            rho0 = xp.einsum("xaib,xajb->xij", C, xp.conj(C))
        for l in range(L - 2, -1, -1):
            X = A[l]
            a, b = X.shape[1], X.shape[3]
            T = xp.matmul(X.reshape(m, a * 3, b), R).reshape(m, a, 3, b)
            Xc = xp.conj(X)
            pops.append(xp.sum(xp.real(T * Xc), axis=(1, 3)))
            if l == 0:
                rho0 = xp.einsum("xaic,xajc->xij", T, Xc)
            R = xp.matmul(T.reshape(m, a, 3 * b), xp.transpose(Xc.reshape(m, a, 3 * b), (0, 2, 1)))
            Rs[l - 1] = R
        pops = xp.host(xp.stack(pops[::-1], axis=1))
        return A, Rs, np.asarray(pops, dtype=float), np.asarray(xp.host(rho0))

    def _energies(self, rows, A, Rs) -> np.ndarray:
        """<psi|H|psi> of the rows from the bond terms and the right environments."""
        xp = self.xp
        m = len(rows)
        gi = xp.index(self.ridx[rows])
        E = 0.0
        for l in range(self.L - 1):
            X, Y = A[l], A[l + 1]
            a, k, c = X.shape[1], X.shape[3], Y.shape[3]
            theta = xp.matmul(X.reshape(m, a * 3, k), Y.reshape(m, k, 3 * c)).reshape(m, a, 9, c)
            phi = xp.matmul(self.h_bonds[l][gi], theta)  # (m, a, 9, c)
            if l + 1 <= self.L - 2:  # the environment right of site l + 1
                phi = xp.matmul(phi, Rs[l + 1][:, None])
            E = E + xp.sum(xp.real(phi * xp.conj(theta)), axis=(1, 2, 3))
        return np.asarray(xp.host(E), dtype=float)

    def _track_energy(self, rows: np.ndarray, env=None) -> None:
        """MPSState._track_energy for the rows: drift of <H>/<psi|psi> over unitary stretches."""
        if not self.track:
            return
        A, Rs, pops, _ = env if env is not None else self._environments(rows)
        e = self._energies(rows, A, Rs) / pops[:, 0, :].sum(axis=1)
        ref = self.eref[rows]
        new = np.isnan(ref)
        self.eref[rows[new]] = e[new]
        old = rows[~new]
        self.drift[old] = np.maximum(self.drift[old], np.abs(e[~new] - ref[~new]))

    def observe(self, rows: np.ndarray):
        """Site populations (m, L, 3), rho_1[1, 0] (m,) and squared norms (populations of site 1 summed)."""
        env = self._environments(rows)
        self._track_energy(rows, env)
        _, _, pops, rho0 = env
        return pops, rho0[:, 1, 0], pops[:, 0, :].sum(axis=1)

    def diagnostics(self) -> list[dict]:
        """Per-row MPSState.diagnostics(): truncation, bonds, Trotter drift, steps, norm error."""
        xp = self.xp
        T = None
        for A in self.arrays:  # <psi|psi> by full contraction, all rows
            Ac = xp.conj(A)
            T = xp.einsum("xaib,xaic->xbc", A, Ac) if T is None else xp.einsum("xac,xaib,xcid->xbd", T, A, Ac)
        full = np.asarray(xp.host(xp.real(T)), dtype=float).reshape(self.B)
        n2 = self.norm2()
        err = np.abs(full - n2) / np.maximum(n2, 1e-300)
        return [{"discarded_weight": float(self.disc[b]), "max_bond": int(self.maxb[b]),
                 "energy_drift": float(self.drift[b]), "steps": int(self.steps[b]), "norm_error": float(err[b])}
                for b in range(self.B)]
