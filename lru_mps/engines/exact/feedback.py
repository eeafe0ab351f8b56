"""Feedback trains of the branch estimator on the exact batched store (docs/physics.md §4, §6).

In the removal-free branch every feedback measurement gives n = 0 and acts as
the projector P0 = |0><0| on the last site, without renormalization.  Between
two grid times a row therefore meets a fixed product of linear maps, which
this module applies in one call per grid interval (the capability
:class:`lru_mps.mcwf.store_protocol.FeedbackTrains` of
:class:`~lru_mps.engines.exact.batch.ExactBatch`):

* Periodic feedback at rate G: one period is the map F = P0 exp(-i H_eff/G).
  A row enters right after a measurement, i.e. inside the range of P0 (the
  states whose last site is |0>), which F maps into itself, so F is kept as
  the dense block F_n = [exp(-i H_n/G)]_{kept, kept} of every N-block n and
  realization (H_eff conserves N, P0 keeps it); k periods are the matrix
  power F_n^k, built by repeated squaring and cached per k.  Cost per grid
  interval: one small dense product per row, whatever G.
* Periodic feedback, sampled estimator (random outcomes, jumps): as long as
  the measurements give n = 0 and no jump comes, the state after j periods
  is F^j psi normalized, so a train of up to AHEAD_CHUNK periods costs a few
  array operations: the states after each period of all rows at once from
  the powers F^0..F^{C-1} (cached), the no-jump probability of each period
  and the Born probability of n = 0 from their norms, and the first period
  whose measurement gives n != 0 (u >= p_0) or in which the waiting-time
  threshold is reached.  The train stops before that period, which the
  trajectory loop then makes as usual (the same draws).
* Random feedback, sampled estimator: the loop steps the rows from one
  measurement to the next without its stops (:class:`PoissonSteps`): one
  exp(-i H_eff w) per row and step in the eigen form, the norms and the
  last site's populations, |0><0| and normalization where the outcome is 0.
* Random feedback: the waiting times differ, so the product has one factor
  per measurement; it is applied in the eigenbasis of H_n (H_n = V lam V^-1):
  z <- W (exp(-i lam w) * z) with W = V^-1 P0 V, a few array operations per
  measurement for all rows together, with no stop of the trajectory loop.

Both are exact (up to rounding: the tests compare them with the
one-measurement-at-a-time path to 1e-10).  Blocks whose eigenvectors are
too ill-conditioned (the rule of :mod:`lru_mps.engines.common.eigen`) use expm.
Energies in J, times in 1/J.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from numba import njit

from ..common.eigen import evolve_rows, expm_propagator

#: matrix powers F^k kept per period (the counts of a uniform grid take two values per run)
POWER_CACHE = 8


class ExactFeedbackTrains:
    """Trains of outcome-0 measurements for the rows of an exact batch (see the module docstring).

    ``store`` is an :class:`~lru_mps.engines.exact.batch.ExactBatch`, used
    through its row interface only (``amplitudes``, ``set_amplitudes``,
    ``realizations``, ``last_levels``) and its ``blocks``
    (:class:`~lru_mps.engines.exact.batch.BlockStack`: per N-block, the
    realizations that reach it, their eigendecompositions and propagators).
    """

    def __init__(self, store):
        self.store = store
        last = store.last_levels()
        #: per block: positions (inside the block) whose last site is in |0>, and in the store's rows
        self.kept = [np.nonzero(last[blk.sl] == 0)[0] for blk in store.blocks]
        self.cols = [blk.sl.start + kept for blk, kept in zip(store.blocks, self.kept)]
        self._maps: dict[float, list[np.ndarray]] = {}
        self._powers: dict[tuple[float, int], list[np.ndarray]] = {}
        self._poisson: list | None = None
        self._sampled: dict[tuple[float, int], tuple[list, list]] = {}

    def describe(self) -> str:
        return ("feedback map: periodic k periods as the matrix power of P0 exp(-i H_eff/G) per N-block; "
                "random feedback in the eigenbasis of H_eff")

    # ------------------------------------------------------------- periodic
    def _map(self, period: float) -> list[np.ndarray]:
        """Per block: F = [exp(-i H period)]_{kept, kept} for every realization of the block, (R_n, d', d')."""
        if period not in self._maps:
            maps = []
            for blk, kept in zip(self.store.blocks, self.kept):
                U = blk.matrices(period)
                maps.append(np.ascontiguousarray(U[:, kept][:, :, kept]))
            self._maps[period] = maps
        return self._maps[period]

    def _power(self, period: float, k: int) -> list[np.ndarray]:
        """Per block: F^k by repeated squaring (cached for a few k)."""
        key = (period, int(k))
        if key not in self._powers:
            base = self._map(period)
            out = None
            sq = [m.copy() for m in base]
            e = int(k)
            while e:
                if e & 1:
                    out = [s.copy() for s in sq] if out is None else [o @ s for o, s in zip(out, sq)]
                e >>= 1
                if e:
                    sq = [s @ s for s in sq]
            if len(self._powers) >= POWER_CACHE:
                self._powers.pop(next(iter(self._powers)))
            self._powers[key] = out
        return self._powers[key]

    def periodic(self, rows: np.ndarray, counts: np.ndarray, period: float) -> None:
        """|psi_b> <- F^{counts_b} |psi_b>, F = P0 exp(-i H_eff period), for rows just measured."""
        store = self.store
        rows = np.asarray(rows, dtype=np.intp)
        counts = np.asarray(counts)
        x = store.amplitudes(rows)
        rr = store.realizations(rows)
        for n, (blk, cols) in enumerate(zip(store.blocks, self.cols)):
            p = blk.pos[rr]
            v = x[:, cols]
            has = (p >= 0) & (counts > 0) & np.any(v != 0, axis=1)  # zero amplitudes stay zero
            if not has.any():
                continue
            for k in np.unique(counts[has]):
                s = np.nonzero(has & (counts == k))[0]
                v[s] = np.matmul(self._power(period, int(k))[n][p[s]], v[s][:, :, None])[:, :, 0]
            x[:, cols] = v
        store.set_amplitudes(rows, x)

    # ------------------------------------------------------ periodic, sampled
    def _sampled_data(self, period: float, n: int):
        """Per block: F^0..F^{n-1} (R_n, n, d', d') and exp(-i H period)[:, kept] (R_n, d, d')."""
        n = 1 << max(0, int(n) - 1).bit_length()  # a power of two >= n: few sizes to cache
        key = (period, n)
        if key not in self._sampled:
            powers, cols = [], []
            for blk, kept, F in zip(self.store.blocks, self.kept, self._map(period)):
                R, k = F.shape[0], F.shape[1]
                P = np.empty((R, n, k, k), dtype=complex)
                P[:, 0] = np.eye(k)
                have = 1
                while have < n:  # F^{have..2 have - 1} = F^have F^{0..have-1}
                    step = min(have, n - have)
                    Fh = F if have == 1 else P[:, have - 1] @ F
                    P[:, have:have + step] = Fh[:, None] @ P[:, :step]
                    have += step
                U = blk.matrices(period)
                powers.append(P)
                cols.append(np.ascontiguousarray(U[:, :, kept]))
            if len(self._sampled) >= 2:
                self._sampled.pop(next(iter(self._sampled)))
            self._sampled[key] = (powers, cols)
        return self._sampled[key]

    def sampled_periodic(self, rows: np.ndarray, counts: np.ndarray, period: float, uniforms: np.ndarray,
                         thresholds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Sampled estimator: up to counts_b periods (evolve 1/G, measure) of rows just measured (normalized).

        A period is done if its measurement gives n = 0 (uniforms[b, j] <
        p_0, the Born probability) and no jump comes in it (the no-jump
        probability since the call stays above thresholds[b]).  Returns
        (done_b, the no-jump probability over the done periods); row b is
        left normalized right after its last done period.
        """
        store = self.store
        rows = np.asarray(rows, dtype=np.intp)
        counts = np.asarray(counts, dtype=np.int64)
        m, n = len(rows), uniforms.shape[1]
        x = store.amplitudes(rows)
        rr = store.realizations(rows)
        powers, cols = self._sampled_data(period, n)  # F^0.. at least F^{n-1}
        nx = np.zeros((m, n))  # ||exp(-i H/G) F^j psi||^2: before the (j+1)-th measurement
        n0 = np.zeros((m, n))  # ||F^{j+1} psi||^2: after it, with n = 0
        parts = []
        for blk, kept, P, Uk in zip(store.blocks, self.kept, powers, cols):
            p = blk.pos[rr]
            sel = np.nonzero((p >= 0) & np.any(x[:, blk.sl] != 0, axis=1))[0]
            if not len(sel):
                continue
            y = x[sel][:, blk.sl.start + kept]
            Z = np.einsum("scij,sj->sci", P[p[sel], :n], y)
            Xi = np.einsum("sij,scj->sci", Uk[p[sel]], Z)
            a2 = Xi.real**2 + Xi.imag**2
            nx[sel] += a2.sum(axis=2)
            n0[sel] += a2[:, :, kept].sum(axis=2)
            parts.append((blk, kept, sel, Xi))
        before = np.concatenate([np.sum(np.abs(x) ** 2, axis=1)[:, None], n0[:, :-1]], axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            survival = np.cumprod(nx / before, axis=1)
            ok = (survival > thresholds[:, None]) & (uniforms < n0 / nx) & np.isfinite(survival)
        ok &= np.arange(n)[None, :] < counts[:, None]
        done = np.where(ok.all(axis=1), n, np.argmin(ok, axis=1))
        done = np.minimum(done, counts)
        moved = np.nonzero(done > 0)[0]
        S = np.ones(m)
        S[moved] = survival[moved, done[moved] - 1]
        if len(moved):
            last = done[moved] - 1
            norm = 1.0 / np.sqrt(n0[moved, last])
            new = x[moved].copy()
            for blk, kept, sel, Xi in parts:
                new[:, blk.sl] = 0.0
                at = np.full(m, -1)
                at[sel] = np.arange(len(sel))
                j = at[moved]
                here = j >= 0
                new[np.ix_(np.nonzero(here)[0], blk.sl.start + kept)] = (
                    Xi[j[here], last[here]][:, kept] * norm[here, None])
            x[moved] = new
            store.set_amplitudes(rows[moved], x[moved])
        return done, S

    def sampled_poisson(self, rows: np.ndarray) -> "PoissonSteps":
        """Sampled estimator, random feedback: the rows (just measured, normalized) as :class:`PoissonSteps`."""
        return PoissonSteps(self, rows)

    # --------------------------------------------------------------- random
    def _poisson_data(self):
        """Per block: W = V^-1 P0 V (R_n, d, d), and which realizations need expm."""
        if self._poisson is None:
            data = []
            for blk, kept in zip(self.store.blocks, self.kept):
                W = blk.Vinv[:, :, kept] @ blk.V[:, kept, :]
                data.append(W)
            self._poisson = data
        return self._poisson

    def poisson(self, rows: np.ndarray, waits: Sequence[np.ndarray]) -> None:
        """|psi_b> <- P0 U(w_K) ... P0 U(w_1) |psi_b>, U(w) = exp(-i H_eff w), (w_1..w_K) = waits[j]."""
        store = self.store
        rows = np.asarray(rows, dtype=np.intp)
        n = np.array([len(w) for w in waits], dtype=np.intp)
        order = np.argsort(-n, kind="stable")  # longest trains first: the active rows are a prefix
        rows, n = rows[order], n[order]
        K = int(n[0]) if len(n) else 0
        if K == 0:
            return
        w = np.zeros((len(rows), K))
        for j, i in enumerate(order):
            w[j, : n[j]] = waits[i]
        x = store.amplitudes(rows)
        rr = store.realizations(rows)
        for blk, kept, W in zip(store.blocks, self.kept, self._poisson_data()):
            p = blk.pos[rr]
            if not (p >= 0).any():
                continue
            sl = blk.sl
            here = (p >= 0) & np.any(x[:, sl] != 0, axis=1)  # zero amplitudes stay zero
            bad = here & blk.bad[np.maximum(p, 0)]
            good = np.nonzero(here & ~bad)[0]  # keeps the order: counts still non-increasing
            if len(good):
                x[good, sl] = _poisson_eigen(x[good, sl], blk, W, p[good], w[good], n[good], kept)
            for j in np.nonzero(bad)[0]:
                x[j, sl] = _poisson_expm(x[j, sl], blk.H[p[j]], w[j, : n[j]], kept)
        store.set_amplitudes(rows, x)


def _poisson_eigen(x, blk, W, p, w, n, kept) -> np.ndarray:
    """The trains of rows with counts n (non-increasing) in the eigenbasis of their blocks."""
    lam = blk.lam[p]  # (m, d)
    WT = np.ascontiguousarray(W[p].transpose(0, 2, 1))
    z = np.matmul(x[:, None, :], blk.Vinv[p].transpose(0, 2, 1))[:, 0, :]  # z = V^-1 x (row vectors)
    K = int(n[0])
    active = np.searchsorted(-n, -np.arange(K), side="left")  # rows with n > k: a prefix of this length
    z = _poisson_chain(np.ascontiguousarray(z), np.ascontiguousarray(lam), WT, np.ascontiguousarray(w, dtype=float),
                       active.astype(np.int64))
    out = np.matmul(z[:, None, :], blk.V[p].transpose(0, 2, 1))[:, 0, :]
    lost = np.ones(out.shape[1], dtype=bool)
    lost[kept] = False
    out[:, lost] = 0.0  # P0 was applied last: exactly zero outside its range
    return out


@njit(cache=True)
def _poisson_chain(z, lam, WT, w, active):
    """z_r <- (exp(-i lam_r w_rk) * z_r) W_r^T for k = 0..K-1 and the rows r < active[k], in place (row vectors
    in the eigenbasis: one waiting time's evolution, then P0).  Compiled: a train is thousands of d x d steps
    (d <= ~20), where one numpy call per step cost 37 of the rate sweep's 100 s."""
    d = z.shape[1]
    tmp = np.empty(d, dtype=np.complex128)
    for k in range(active.shape[0]):
        for r in range(active[k]):
            for i in range(d):
                tmp[i] = np.exp(-1j * lam[r, i] * w[r, k]) * z[r, i]
            for j in range(d):
                acc = 0j
                for i in range(d):
                    acc += tmp[i] * WT[r, i, j]
                z[r, j] = acc
    return z


def _poisson_expm(x, H, w, kept) -> np.ndarray:
    """One row's train with scipy's expm (ill-conditioned eigenvectors)."""
    mask = np.zeros(len(x), dtype=bool)
    mask[kept] = True
    for wk in w:
        x = expm_propagator(H, wk) @ x
        x[~mask] = 0.0
    return x


class PoissonSteps:
    """Rows of an exact batch stepped from one random-feedback measurement to the next (sampled estimator).

    Each row's occupied N-blocks (the feedback and the no-jump evolution keep
    N) are put side by side in one compact basis of D states (D the largest
    over the rows, padded with zeros), with the eigenvectors of its
    realization's blocks as one block-diagonal V, so a step is two batched
    products: y = V (exp(-i lam w) * (V^-1 x)).  :meth:`step` evolves the
    rows tentatively, :meth:`accept` keeps a step with outcome 0 (|0><0| on
    the last site, normalized), :meth:`finish` writes the states back.
    Blocks whose eigenvectors are too ill-conditioned use expm (V = 1, and
    exp(-i H w) per row and step).
    """

    def __init__(self, trains: ExactFeedbackTrains, rows: np.ndarray):
        store = trains.store
        self.store = store
        self.rows = np.asarray(rows, dtype=np.intp)
        x = store.amplitudes(self.rows)
        last = store.last_levels()
        rr = store.realizations(self.rows)
        m = len(self.rows)
        pieces = [[] for _ in range(m)]  # per row: (columns, block, position) of its occupied blocks
        for blk in store.blocks:
            p = blk.pos[rr]
            for j in np.nonzero((p >= 0) & np.any(x[:, blk.sl] != 0, axis=1))[0]:
                pieces[j].append((np.arange(blk.sl.start, blk.sl.stop), blk, int(p[j])))
        D = max((sum(len(c) for c, _, _ in pc) for pc in pieces), default=1)
        self.cols = np.zeros((m, D), dtype=np.intp)
        self.used = np.zeros((m, D), dtype=bool)
        self.VinvT = np.zeros((m, D, D), dtype=complex)
        self.VT = np.zeros((m, D, D), dtype=complex)
        self.lam = np.zeros((m, D), dtype=complex)
        self.expm: list[tuple[int, slice, np.ndarray]] = []
        for j, pc in enumerate(pieces):
            at = 0
            for c, blk, p in pc:
                d = len(c)
                sl = slice(at, at + d)
                self.cols[j, sl], self.used[j, sl] = c, True
                if blk.bad[p]:
                    self.VinvT[j, sl, sl] = self.VT[j, sl, sl] = np.eye(d)
                    self.expm.append((j, sl, blk.H[p]))
                else:
                    self.VinvT[j, sl, sl] = blk.Vinv[p].T
                    self.VT[j, sl, sl] = blk.V[p].T
                    self.lam[j, sl] = blk.lam[p]
                at += d
        self.x = np.where(self.used, x[np.arange(m)[:, None], self.cols], 0.0)
        lev = np.where(self.used, last[self.cols], -1)
        self.kept = (lev == 0).astype(float)
        self.last = np.stack([lev == o for o in range(3)], axis=2).astype(float)  # (m, D, 3)
        self.y = self.x.copy()

    def step(self, positions: np.ndarray, waits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Evolve rows ``positions`` by ``waits`` (1/J), tentatively: (squared norms, last-site populations (m, 3))."""
        every = len(positions) == len(self.rows)  # no gathers (positions are increasing)
        pick = (lambda a: a) if every else (lambda a: a[positions])
        phases = np.exp(-1j * pick(self.lam) * waits[:, None])
        y = evolve_rows(pick(self.x)[:, None, :], pick(self.VinvT), pick(self.VT), phases[:, None, :])[:, 0, :]
        for j, sl, H in self.expm:
            at = np.nonzero(positions == j)[0]
            if len(at):
                y[at[0], sl] = expm_propagator(H, waits[at[0]]) @ self.x[j, sl]
        if every:
            self.y = y
        else:
            self.y[positions] = y
        a2 = y.real**2 + y.imag**2
        return a2.sum(axis=1), np.einsum("md,mdk->mk", a2, pick(self.last))

    def accept(self, positions: np.ndarray) -> None:
        """Keep the last step of these rows, then |0><0| on the last site, normalized."""
        y = self.y[positions] * self.kept[positions]
        self.x[positions] = y / np.sqrt(np.einsum("md,md->m", y.real, y.real) + np.einsum("md,md->m", y.imag, y.imag))[
            :, None]

    def finish(self) -> None:
        """The rows' states (accepted steps only) back into the store."""
        store = self.store
        full = store.amplitudes(self.rows)
        r, c = np.nonzero(self.used)
        full[r, self.cols[r, c]] = self.x[r, c]
        store.set_amplitudes(self.rows, full)
