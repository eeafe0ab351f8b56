"""Batched trajectories for the exact backend: many trajectories advanced at once.

:func:`run_batch` returns, for every trajectory index, the records of
``TrajectoryRunner(spec, settings, realization).run(index)`` (equal to
rounding, ~1e-13; tested to 1e-10), but advances the states of many
trajectories (every initial state of every index of a chunk) in vectorised
calls instead of one trajectory at a time.

How the state is held
---------------------
H_eff conserves the excitation number N and no event raises it (decay,
dissipation and the feedback reset lower N, dephasing keeps it), so a
trajectory never leaves the N-blocks at or below the largest N of its initial
state.  The 3^L basis is sorted by N (stably, so each block keeps the natural
order of :class:`~lru_mps.backends.exact.ExactPropagator`), and a batch holds
only the blocks 0..N_max that its trajectories can reach (at T = 0 the leakage
state has N = 2: 1 + L + L(L+1)/2 amplitudes instead of 3^L).  Indices are
grouped into chunks of similar N_max.  Rows are ordered (realization, initial
state), so block n of all rows is an (R, I, d_n) array.

Each realization prepares only the blocks it can reach: for block n the
eigendecompositions H_n = V diag(lam) V^-1 of all realizations that reach it
are computed in one stacked call, and the propagator of the grid step,
U_n = V diag(exp(-i lam dt)) V^-1, once per run.  A grid step is one batched
matmul (R_n, I, d) @ (R_n, d, d) per block.  Stretches of any other length (a
measurement inside the step, the rest of a step after a jump, an irregular
grid) use the eigen form V (exp(-i lam tau) * (V^-1 x)) with one duration per
row, as the unbatched engine does; blocks whose eigenvectors are too
ill-conditioned use scipy's expm, by the unbatched engine's rule.

Why the numbers are those of the unbatched engine
-------------------------------------------------
Every row has its own random stream (``event_rng(seed, index, init)``) and
measurement clock (the very :class:`~lru_mps.trajectory._MeasurementClock` of
the unbatched algorithm) and draws from it in the same order: thermal levels,
clock, first threshold, then events in time order (a jump: channel, then the
new threshold; a measurement: outcome, then for random feedback the next
clock time).  The batch replays the stops of
:func:`~lru_mps.trajectory.run_trajectory` row by row: each grid interval is
cut at the row's measurement times; every stop renormalizes the state and
divides the threshold by the squared norm (sampled estimator); a grid point is
recorded before a measurement at the same time; a row whose squared norm has
fallen below its threshold at the end of a stretch gets the crossing time by
the same ``brentq`` call from the state saved before the stretch, then jumps
by the rule of :func:`~lru_mps.trajectory._jump` (the same function on a
full-space view of the row if a channel's op^dag op is not diagonal).  Only
the order of additions inside sums and matrix products differs.

The array code calls functions resolved once through autoray
(``get_lib_fn``), so evolution, norms and observables could run on torch or
cupy arrays (``backend=``); eigendecompositions, root finding and random
numbers stay in numpy.  numpy is the reference and the only tested backend.
"""

from __future__ import annotations

import math
from functools import lru_cache, reduce
from types import SimpleNamespace
from typing import Iterable, Sequence

import numpy as np
import scipy.linalg as sla
from autoray import get_lib_fn, to_numpy
from scipy.optimize import brentq

from . import operators as ops
from . import trajectory as _traj
from .backends.exact import _COND_LIMIT, MAX_LENGTH, ExactState, embed, embed_bond, number_of_excitations
from .errors import ParameterError, require
from .model import ArraySpec, Realization, product_state
from .trajectory import ESTIMATORS, Event, TrajectoryRecord

#: trajectory indices advanced together (rows = indices x initial states)
DEFAULT_BATCH = 256


def run_batch(
    spec: ArraySpec,
    settings,
    indices: Iterable[int],
    realization: Realization | None = None,
    *,
    batch_size: int | None = None,
    backend: str = "numpy",
) -> list[dict[str, TrajectoryRecord]]:
    """Trajectories ``indices`` of a run, batched: one ``{init: record}`` per index, in order.

    The records of ``[TrajectoryRunner(spec, settings, realization).run(i) for i in indices]``
    (to rounding) for ``settings.engine == 'exact'``: both estimators, every
    reset kind, hardware noise and temperature.  ``realization`` fixes the
    disorder of every trajectory, as in :class:`~lru_mps.ensemble.TrajectoryRunner`.
    Up to ``batch_size`` indices (default :data:`DEFAULT_BATCH`) are advanced
    together; the numbers depend on it only through rounding (and not at all
    for a fixed call).  Call it with one BLAS thread
    (``threadpoolctl.threadpool_limits(1)``), as run_block does.
    """
    require(settings.engine == "exact", "engine", settings.engine, "'exact' for the batched runner")
    require(
        spec.L <= MAX_LENGTH,
        "length",
        spec.L,
        f"L <= {MAX_LENGTH} for the exact engine (3^L states)",
        "use --engine mps or sector for long arrays",
    )
    if settings.estimator not in ESTIMATORS:
        raise ParameterError("estimator", settings.estimator, "sampled or branch")
    batch_size = DEFAULT_BATCH if batch_size is None else batch_size
    require(int(batch_size) == batch_size and batch_size >= 1, "batch_size", batch_size, "an integer >= 1")
    batch_size = int(batch_size)
    entries = [_Entry.draw(spec, settings, int(i), realization) for i in indices]
    out: list = [None] * len(entries)
    for chunk in _chunks([e.nmax for e in entries], batch_size):
        records = _Batch(spec, settings, [entries[j] for j in chunk], realization is not None, backend).run()
        for j, rec in zip(chunk, records):
            out[j] = rec
    return out


def _chunks(nmax: Sequence[int], batch_size: int) -> list[list[int]]:
    """Positions grouped by N_max (a batch holds blocks 0..N_max), at most batch_size each.

    A new chunk starts when the current one is full, or when N_max grows and
    the current chunk already holds a quarter of batch_size (small groups of
    rare large N_max ride along with the next).
    """
    order = sorted(range(len(nmax)), key=lambda j: nmax[j])
    chunks: list[list[int]] = []
    cur: list[int] = []
    for j in order:
        if cur and (len(cur) >= batch_size or (nmax[j] > nmax[cur[-1]] and 4 * len(cur) >= batch_size)):
            chunks.append(cur)
            cur = []
        cur.append(j)
    if cur:
        chunks.append(cur)
    return chunks


class _Entry:
    """One trajectory index: its realization and, per initial state, stream, clock, threshold, state.

    Drawn as TrajectoryRunner.run and run_trajectory draw them, in their order:
    the disorder from its own stream, then per initial state the thermal
    levels, the measurement clock and the first threshold.
    """

    __slots__ = ("index", "real", "wq", "rngs", "clocks", "thresholds", "states", "nmax")

    @classmethod
    def draw(cls, spec: ArraySpec, settings, index: int, realization: Realization | None) -> "_Entry":
        from .ensemble import disorder_rng, event_rng

        self = cls()
        self.index = index
        real = realization if realization is not None else spec.draw_realization(disorder_rng(settings.seed, index))
        self.real = real
        self.wq = spec.qubit_frequency(real)
        jumps = settings.estimator == "sampled" and bool(spec.jump_channels())
        N_nat = number_of_excitations(spec.L)
        self.rngs, self.clocks, self.thresholds, self.states = [], [], [], []
        self.nmax = 0
        for init in settings.inits:
            rng = event_rng(settings.seed, index, init)
            levels = spec.thermal_levels(real, rng)
            # = reduce(np.kron, ...) of ExactPropagator.state, same products in the same order
            vec = reduce(np.multiply.outer, product_state(init, levels)).reshape(-1).astype(complex)
            self.nmax = max(self.nmax, int(N_nat[np.nonzero(vec)[0]].max()))
            self.clocks.append(_traj._MeasurementClock(spec, rng))
            self.thresholds.append(rng.random() if jumps else 0.0)
            self.rngs.append(rng)
            self.states.append(vec)
        return self


# --------------------------------------------------------------------- basis
class _Basis:
    """The 3^L basis sorted by N (stable), cut after block nmax, with local maps on it."""

    def __init__(self, L: int, nmax: int):
        D = 3**L
        levels = np.indices((3,) * L).reshape(L, -1)
        N = number_of_excitations(L)
        perm = np.argsort(N, kind="stable")
        inv = np.empty(D, dtype=np.intp)
        inv[perm] = np.arange(D)
        offsets = np.concatenate([[0], np.cumsum(np.bincount(N, minlength=2 * L + 1))])
        self.L = L
        self.nmax = nmax
        self.dim = int(offsets[nmax + 1])
        #: natural (ExactState) index of every kept sorted position
        self.keep = perm[: self.dim]
        self.slices = [slice(int(offsets[n]), int(offsets[n + 1])) for n in range(nmax + 1)]
        self.natural = [perm[s] for s in self.slices]
        lev = levels[:, self.keep]  # (L, dim)
        self.levels = lev
        # level populations of every site: |psi|^2 @ M, M[s, 3 l + m] = [level of site l in s is m];
        # M2 acts on the float view (re, im interleaved) of psi
        M = np.zeros((self.dim, 3 * L))
        M[np.arange(self.dim)[:, None], 3 * np.arange(L)[None, :] + lev.T] = 1.0
        self.M = M
        self.M2 = np.repeat(M, 2, axis=0)
        self.M2_last = np.ascontiguousarray(self.M2[:, 3 * (L - 1) :])
        # coherence of site 1: rho[1, 0] = sum_k psi(1, k) conj(psi(0, k))
        a1 = np.nonzero(lev[0] == 1)[0]
        self.rdm_1 = a1
        self.rdm_0 = inv[self.keep[a1] - 3 ** (L - 1)]
        # feedback reset |0><o| on the last site: new[dst] = old[src]
        self.reset_src, self.reset_dst = [], []
        for o in range(3):
            src = np.nonzero(lev[L - 1] == o)[0]
            self.reset_src.append(src)
            self.reset_dst.append(inv[self.keep[src] - o])


@lru_cache(maxsize=16)
def _hopping_blocks(L: int, nmax: int) -> tuple[np.ndarray, ...]:
    """The hopping part of H (no disorder) on each N-block, natural order within a block.

    Built from the same sparse terms as exact.hamiltonian_eff, so the entries are identical.
    """
    bond = np.kron(ops.adag, ops.a) + np.kron(ops.a, ops.adag)
    H = reduce(lambda x, y: x + y, [embed_bond(bond, l, L) for l in range(L - 1)]).tocsr()
    basis = _Basis(L, nmax)
    return tuple(H[idx][:, idx].toarray() for idx in basis.natural)


class _Ops:
    """Array functions of one backend, resolved once through autoray, plus numpy fast paths."""

    def __init__(self, backend: str):
        self.backend = backend
        self.numpy = backend == "numpy"
        for name in ("matmul", "exp", "conj", "real", "imag", "sum", "zeros_like", "asarray", "multiply"):
            setattr(self, name, get_lib_fn(backend, name))

    def take(self, idx):
        """An index array for this backend."""
        return idx if self.numpy else self.asarray(idx)

    def host(self, x) -> np.ndarray:
        return np.asarray(x) if self.numpy else to_numpy(x)

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


class _BlockStack:
    """exp(-i H_n t) of one N-block for the realizations that reach it, stacked."""

    def __init__(self, sl: slice, reals: np.ndarray, R: int, H: np.ndarray, dt_ref: float, xp: _Ops):
        self.sl = sl
        self.d = sl.stop - sl.start
        self.reals = np.asarray(reals, dtype=np.intp)
        self.full = len(self.reals) == R
        self.pos = np.full(R, -1, dtype=np.intp)
        self.pos[self.reals] = np.arange(len(self.reals))
        m, d = len(self.reals), self.d
        self.H = H
        lam, V = np.linalg.eig(H)
        bad = np.zeros(m, dtype=bool)
        try:
            Vinv = np.linalg.inv(V)
        except np.linalg.LinAlgError:
            Vinv = np.empty_like(V)
            for j in range(m):
                try:
                    Vinv[j] = np.linalg.inv(V[j])
                except np.linalg.LinAlgError:
                    Vinv[j] = np.eye(d)
                    bad[j] = True
        if d > 1:
            # the unbatched rule, cond_2(V) < limit; the bound ||V||_F ||V^-1||_F >= cond_2(V)
            # settles almost every case without an SVD
            bound = np.linalg.norm(V, axis=(1, 2)) * np.linalg.norm(Vinv, axis=(1, 2))
            for j in np.nonzero(~bad & ~(bound < _COND_LIMIT))[0]:
                bad[j] = not (np.linalg.cond(V[j]) < _COND_LIMIT)
        self.bad = bad
        self.bad_pos = np.nonzero(bad)[0]
        self.lam, self.V, self.Vinv = lam, V, Vinv
        U = V @ (np.exp(-1j * lam * dt_ref)[:, :, None] * Vinv)
        for j in self.bad_pos:
            U[j] = sla.expm(-1j * dt_ref * H[j])
        self.x_lam = xp.asarray(lam)
        self.x_VT = xp.asarray(np.ascontiguousarray(V.transpose(0, 2, 1)))
        self.x_VinvT = xp.asarray(np.ascontiguousarray(Vinv.transpose(0, 2, 1)))
        self.x_UT = xp.asarray(np.ascontiguousarray(U.transpose(0, 2, 1)))


# --------------------------------------------------------------------- batch
class _Batch:
    """The rows (index, initial state) of a chunk of entries, advanced together over the time grid."""

    def __init__(self, spec: ArraySpec, settings, entries: Sequence[_Entry], fixed: bool, backend: str):
        xp = self.xp = _Ops(backend)
        self.spec = spec
        self.times = np.asarray(settings.times, dtype=float)
        self.inits = tuple(settings.inits)
        self.sampled = settings.estimator == "sampled"
        self.channels = spec.jump_channels()
        self.jumps = self.sampled and bool(self.channels)
        L = self.L = spec.L
        n_idx, n_init = len(entries), len(self.inits)
        self.n_idx = n_idx
        # rows ordered (entry, init); row b belongs to realization b // I (a single one if fixed)
        self.R = 1 if fixed else n_idx
        self.I = n_idx * n_init if fixed else n_init
        B = self.B = n_idx * n_init
        self.ridx = np.arange(B) // self.I
        reals = [entries[0].real] if fixed else [e.real for e in entries]

        self.wq = np.repeat([e.wq for e in entries], n_init)
        self.rngs = [rng for e in entries for rng in e.rngs]
        self.clocks = [c for e in entries for c in e.clocks]
        self.thr = np.array([x for e in entries for x in e.thresholds], dtype=float)
        self.clock = np.array([c.next for c in self.clocks], dtype=float)
        self.t = np.zeros(B)
        self.events: list[list[Event]] = [[] for _ in range(B)]

        nmax_r = np.zeros(self.R, dtype=int)
        np.maximum.at(nmax_r, self.ridx, np.repeat([e.nmax for e in entries], n_init))
        basis = self.basis = _Basis(L, int(nmax_r.max()))
        psi = np.zeros((B, basis.dim), dtype=complex)
        for b, vec in enumerate(v for e in entries for v in e.states):
            psi[b] = vec[basis.keep]
        self.psi = xp.asarray(psi)
        self.spare = xp.asarray(np.zeros_like(psi))
        self.a_rdm1, self.a_rdm0 = xp.take(basis.rdm_1), xp.take(basis.rdm_0)

        # the most common grid step: its propagator is precomputed
        steps = np.diff(np.concatenate([[0.0], self.times]))
        steps = steps[steps > 0]
        self.dt_ref = 1.0
        if len(steps):
            vals, counts = np.unique(steps, return_counts=True)
            self.dt_ref = float(vals[np.argmax(counts)])

        # block n of realization r exists for n <= N_max(r); H_eff = hopping + diagonal on-site terms
        hop = _hopping_blocks(L, basis.nmax)
        diag = np.empty((self.R, L, 3), dtype=complex)
        dense = set()
        for r, real in enumerate(reals):
            on = spec.onsite_terms(real)
            diag[r] = np.diagonal(on, axis1=1, axis2=2)
            if np.count_nonzero(on - diag[r][:, :, None] * np.eye(3)):
                dense.add(r)
        self.blocks: list[_BlockStack] = []
        for n in range(basis.nmax + 1):
            rs = np.nonzero(nmax_r >= n)[0]
            lev = basis.levels[:, basis.slices[n]]
            dn = diag[rs]
            acc = dn[:, 0, lev[0]]
            for l in range(1, L):  # summed in site order, as hamiltonian_eff adds its terms
                acc = acc + dn[:, l, lev[l]]
            H = hop[n][None, :, :] + acc[:, :, None] * np.eye(lev.shape[1])
            for j, r in enumerate(rs):
                if r in dense:  # an on-site term that is not diagonal: build it as the exact engine does
                    from .backends.exact import hamiltonian_eff

                    idx = basis.natural[n]
                    H[j] = hamiltonian_eff(spec, reals[r]).toarray()[np.ix_(idx, idx)]
            self.blocks.append(_BlockStack(basis.slices[n], rs, self.R, H, self.dt_ref, xp))

        self._jump_data = self._prepare_jumps()
        T = len(self.times)
        self.pops = np.zeros((B, T, L, 3))
        self.coh = np.zeros((B, T), dtype=complex)

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
                z = xp.matmul(x, blk.x_VinvT)
                z = z * xp.exp(-1j * blk.x_lam * dur)[:, None, :]
                y = xp.matmul(z, blk.x_VT)
                for j in blk.bad_pos:
                    y[j] = xp.matmul(x[j], xp.asarray(sla.expm(-1j * dur * blk.H[j]).T))
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
            p = blk.pos[rr]
            sel = np.nonzero(p >= 0)[0]
            if len(sel) == 0:
                continue
            ps = p[sel]
            sl = blk.sl
            xs = x[xp.take(sel), sl]
            tps = xp.take(ps)
            z = xp.matmul(xs[:, None, :], blk.x_VinvT[tps])[:, 0, :]
            z = z * xp.exp(-1j * blk.x_lam[tps] * xp.asarray(durs[sel])[:, None])
            y = xp.matmul(z[:, None, :], blk.x_VT[tps])[:, 0, :]
            for j in np.nonzero(blk.bad[ps])[0]:
                y[j] = xp.matmul(xs[j], xp.asarray(sla.expm(-1j * durs[sel[j]] * blk.H[ps[j]]).T))
            out[xp.take(sel), sl] = y
        return out

    def _crossing(self, before: np.ndarray, r: int, dur: float, thr: float):
        """The state at the threshold crossing inside a stretch ``dur`` from ``before``, and its time.

        trajectory._advance for an exact state: brentq on ||exp(-i H_eff tau) before||^2 - thr.
        """
        idx, Vs, lams, zs, expm_parts = [], [], [], [], []
        for blk in self.blocks:
            p = blk.pos[r]
            if p < 0:
                continue
            x = before[blk.sl]
            if not np.any(x):
                continue
            if blk.bad[p]:
                expm_parts.append((blk.sl, blk.H[p], x))
            else:
                idx.append(np.arange(blk.sl.start, blk.sl.stop))
                Vs.append(blk.V[p])
                lams.append(blk.lam[p])
                zs.append(blk.Vinv[p] @ x)
        if Vs:  # the occupied blocks as one block-diagonal matrix
            idx = np.concatenate(idx)
            V = Vs[0] if len(Vs) == 1 else sla.block_diag(*Vs)
            lam = np.concatenate(lams)
            z = np.concatenate(zs)

        def evolved(tau):
            out = np.zeros_like(before)
            if Vs:
                out[idx] = V @ (np.exp(-1j * lam * tau) * z)
            for sl, H, x in expm_parts:
                out[sl] = sla.expm(-1j * tau * H) @ x
            return out

        def excess(tau):
            v = evolved(tau)
            return float(np.vdot(v, v).real) - thr

        tau = brentq(excess, 0.0, dur, xtol=1e-12 * max(1.0, dur), rtol=1e-14)
        return evolved(tau), tau

    # ----------------------------------------------------------------- events
    def _prepare_jumps(self):
        """Per channel: the diagonal of op^dag op and op on the kept basis; None if some op^dag op is not diagonal."""
        if not self.channels:
            return None
        diags = []
        for ch in self.channels:
            m = ch.op.conj().T @ ch.op
            if np.count_nonzero(m - np.diag(np.diagonal(m))):
                return None
            diags.append(np.real(np.diagonal(m)))
        keep = self.basis.keep
        return SimpleNamespace(
            diag=np.array(diags),
            rates=np.array([ch.rate for ch in self.channels]),
            sites=np.array([ch.site for ch in self.channels]),
            ops=[embed(ch.op, ch.site, self.L)[keep][:, keep].tocsr() for ch in self.channels],
        )

    def _jump_row(self, b: int, x: np.ndarray, t: float) -> np.ndarray:
        """A jump of row b at time t, as trajectory._jump: channel ~ rate <op^dag op>, apply, renormalize."""
        jd = self._jump_data
        if jd is None:
            full = np.zeros(3**self.L, dtype=complex)
            full[self.basis.keep] = x
            state = ExactState(SimpleNamespace(L=self.L), full)
            _traj._jump(state, self.channels, self.rngs[b], self.events[b], t)
            return state.psi[self.basis.keep]
        pops = ((x.real**2 + x.imag**2) @ self.basis.M).reshape(self.L, 3)
        weights = jd.rates * np.einsum("ck,ck->c", jd.diag, pops[jd.sites])
        weights = np.clip(weights, 0.0, None)
        u = self.rngs[b].random() * weights.sum()
        k = min(int(np.searchsorted(np.cumsum(weights), u, side="right")), len(self.channels) - 1)
        ch = self.channels[k]
        new = jd.ops[k] @ x
        new = new * (1.0 / math.sqrt(float(np.vdot(new, new).real)))
        self.events[b].append(Event(t, ch.name, ch.site))
        return new

    def _measure(self, rows: np.ndarray) -> None:
        """Feedback measurement of n_L and |0><n| for each row (as trajectory._measure), then the next clock time."""
        xp = self.xp
        basis = self.basis
        tr = xp.take(rows)
        x = self.psi[tr]
        m = len(rows)
        if self.sampled:
            p = np.clip(xp.weights(x, basis.M[:, 3 * (self.L - 1) :], basis.M2_last), 0.0, None)
            p = p / p.sum(axis=1, keepdims=True)
            cum = np.cumsum(p, axis=1)
            u = np.array([self.rngs[b].random() for b in rows])
            # searchsorted(cum, u, side='right') per row
            outcome = np.minimum((cum <= u[:, None]).sum(axis=1), 2)
        else:
            outcome = np.zeros(m, dtype=int)
        new = xp.zeros_like(x)
        for o in range(3):
            sel = np.nonzero(outcome == o)[0]
            if len(sel) == 0:
                continue
            ts = xp.take(sel)
            block = new[ts]
            block[:, xp.take(basis.reset_dst[o])] = x[ts][:, xp.take(basis.reset_src[o])]
            new[ts] = block
        if self.sampled:
            new = new * xp.asarray(1.0 / np.sqrt(xp.norm2(new)))[:, None]
        self.psi[tr] = new
        last = self.L - 1
        for j, b in enumerate(rows):
            self.events[b].append(Event(self.t[b], "measurement", last, int(outcome[j])))
            clock = self.clocks[b]
            clock.advance()
            self.clock[b] = clock.next

    def _record(self, k: int, record: np.ndarray) -> None:
        """Populations and coherence of the rows ``record`` (mask) at times[k]."""
        xp = self.xp
        rows = np.nonzero(record)[0]
        everyone = 2 * len(rows) >= self.B  # compute for all rows rather than gather most of them
        x = self.psi if everyone else self.psi[xp.take(rows)]
        pops = xp.weights(x, self.basis.M, self.basis.M2)
        m = pops.shape[0]
        norm = pops[:, 0:3].sum(axis=1) if self.sampled else np.ones(m)
        rho10 = xp.host(xp.sum(x[:, self.a_rdm1] * xp.conj(x[:, self.a_rdm0]), axis=1))
        coh = rho10 / norm * np.exp(1j * self.wq[rows if not everyone else slice(None)] * self.times[k])
        pops = (pops / norm[:, None]).reshape(m, self.L, 3)
        if everyone:
            pops, coh = pops[rows], coh[rows]
        self.pops[rows, k] = pops
        self.coh[rows, k] = coh

    # ------------------------------------------------------------ main loop
    def run(self) -> list[dict[str, TrajectoryRecord]]:
        xp = self.xp
        B = self.B
        times = self.times
        for k in range(len(times)):
            tk = times[k]
            dk = tk - (times[k - 1] if k > 0 else 0.0)
            active = np.ones(B, dtype=bool)  # rows that have not recorded times[k] yet
            first = True
            while True:
                tgt = np.minimum(tk, self.clock)  # the next stop of every row
                dur = tgt - self.t
                ev = active & (self.t < tgt)
                n2 = None  # squared norms of all rows, when known
                if ev.any():
                    ev_rows = np.nonzero(ev)[0]
                    grid = ev & (dur == dk)
                    if first and 4 * int(np.count_nonzero(grid)) >= B:
                        # every row by one grid step, then redo the rows that stop elsewhere
                        self._bulk(self.psi, self.spare, dk)
                        self.psi, self.spare = self.spare, self.psi
                        before, before_pos = self.spare, None
                        still = np.nonzero(~ev)[0]
                        if len(still):
                            self.psi[xp.take(still)] = before[xp.take(still)]
                        other = np.nonzero(ev & ~grid)[0]
                        if len(other):
                            self.psi[xp.take(other)] = self._rows(before[xp.take(other)], other, dur[other])
                        if self.jumps:
                            n2 = xp.norm2(self.psi)
                    else:
                        before = self.psi[xp.take(ev_rows)]
                        before_pos = np.full(B, -1)
                        before_pos[ev_rows] = np.arange(len(ev_rows))
                        self.psi[xp.take(ev_rows)] = self._rows(before, ev_rows, dur[ev_rows])
                    if self.jumps:
                        n2_ev = n2[ev_rows] if n2 is not None else xp.norm2(self.psi[xp.take(ev_rows)])
                        crossed = ~(n2_ev > self.thr[ev_rows])
                        for b in ev_rows[crossed]:
                            b = int(b)
                            xb = np.array(xp.host(before[b] if before_pos is None else before[before_pos[b]]))
                            new, tau = self._crossing(xb, int(self.ridx[b]), float(dur[b]), float(self.thr[b]))
                            t_new = min(self.t[b] + tau, tgt[b])
                            new = self._jump_row(b, new, t_new)
                            self.psi[b] = xp.asarray(new)
                            self.thr[b] = self.rngs[b].random()
                            self.t[b] = t_new
                            if n2 is not None:
                                n2[b] = float(np.vdot(new, new).real)
                        reached = ev_rows[~crossed]
                    else:
                        reached = ev_rows
                    self.t[reached] = tgt[reached]
                arrived = active & (self.t >= tgt)
                if self.jumps and arrived.any():
                    # every stop: renormalize; P(no jump yet) carries over to the threshold
                    if arrived.all():
                        if n2 is None:
                            n2 = xp.norm2(self.psi)
                        self.thr /= n2
                        self.psi *= xp.asarray(1.0 / np.sqrt(n2))[:, None]
                    else:
                        rows = np.nonzero(arrived)[0]
                        tr = xp.take(rows)
                        x = self.psi[tr]
                        n2r = n2[rows] if n2 is not None else xp.norm2(x)
                        self.thr[rows] = self.thr[rows] / n2r
                        self.psi[tr] = x * xp.asarray(1.0 / np.sqrt(n2r))[:, None]
                record = arrived & (tk <= self.clock)
                if record.any():
                    self._record(k, record)
                    active &= ~record
                measure = arrived & ~(tk <= self.clock)
                if measure.any():
                    self._measure(np.nonzero(measure)[0])
                if not active.any():
                    break
                first = False
        return self._records()

    def _records(self) -> list[dict[str, TrajectoryRecord]]:
        n_init = len(self.inits)
        return [
            {
                init: TrajectoryRecord(
                    times=self.times,
                    populations=self.pops[j * n_init + q],
                    coherence=self.coh[j * n_init + q],
                    events=self.events[j * n_init + q],
                    final_state=None,
                    diagnostics={},
                )
                for q, init in enumerate(self.inits)
            }
            for j in range(self.n_idx)
        ]


def records_differ(a: dict[str, TrajectoryRecord], b: dict[str, TrajectoryRecord], tol: float = 1e-10) -> list[str]:
    """How two ``{init: record}`` results differ beyond ``tol`` (populations, coherence, events); [] if they agree."""
    if set(a) != set(b):
        return [f"initial states {sorted(a)} != {sorted(b)}"]
    problems = []
    for init in a:
        ra, rb = a[init], b[init]
        dp = float(np.max(np.abs(ra.populations - rb.populations)))
        dc = float(np.max(np.abs(ra.coherence - rb.coherence)))
        if not dp <= tol:
            problems.append(f"{init}: populations differ by {dp:.3g}")
        if not dc <= tol:
            problems.append(f"{init}: coherence differs by {dc:.3g}")
        if len(ra.events) != len(rb.events):
            problems.append(f"{init}: {len(ra.events)} != {len(rb.events)} events")
            continue
        for ea, eb in zip(ra.events, rb.events):
            if (ea.channel, ea.site, ea.outcome) != (eb.channel, eb.site, eb.outcome) or not abs(ea.time - eb.time) <= tol:
                problems.append(f"{init}: event {ea} != {eb}")
                break
    return problems
