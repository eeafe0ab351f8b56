"""Batched qutrit MPS: the rows of a batch advance together, one compiled TEBD call per step for all.

The state store of :mod:`lru_mps.mcwf.loop` for ``--engine mps`` (lean
kernel).  Every row is an ordinary :class:`~lru_mps.engines.mps.MPSState`
(its own tensors, bond charges and bond dimensions: nothing is padded); the
store keeps their tensor lists in one numba list, so that a Trotter step of
all rows is one call of :func:`lru_mps.engines.mps.kernels.sweep_rows`, the very
sweep an unbatched state runs, row after row in compiled code.  A row's
numbers are therefore those of the unbatched engine, bit for bit; a batch of
one pays nothing for being a batch.  Everything else (observables, jumps,
feedback resets, diagnostics) is done on the row's state object.

At rest every row has its orthogonality centre on the last site, where the
reset acts, so the squared norm of a row is ||A_{L-1}||^2 and a feedback
measurement is local.  Rows advance by the loop's steps (steps of dt, the last
one of a stretch shortened): the steps before a stretch's last one in one
compiled call (:meth:`MPSBatch.advance_regular`, guarded by a bound on what a
step keeps of the norm), the others singly; a row whose squared norm falls
below its threshold during a single step is probed from a copy taken before it.

On a backend other than numpy (torch, cupy: a GPU) the engine's store is the
padded store of :mod:`lru_mps.engines.mps.padded` (:meth:`MPSBatch.for_backend`).
"""

from __future__ import annotations

import time

import numpy as np
from numba.typed import List

from ...errors import check_stop
from .padded import PaddedMPSBatch
from .state import DISCARDED_WEIGHT_WARN, MPSOptions, MPSState, the_last as _the_last
from .store import MPSStore
from ..protocol import EngineSettings
from ..common.probe import CopyProbe
from ..common.store import observe_states, reset, site_level_populations
from .kernels import last_norms, sweep_rows, sweep_rows_steps

#: the share of a row's norm one step's truncation may remove (as the discarded-weight warning)
TRUNCATION_MARGIN = DISCARDED_WEIGHT_WARN

#: seconds a compiled call of the batch's steps aims at (:meth:`MPSBatch._pieces`), so that a signal is handled soon
CALL_S = 0.1


class MPSBatch(MPSStore):
    """The MPS states of a batch's rows (a state store of :mod:`lru_mps.mcwf.loop`).

    Rows are ordered (realization, initial state): row b belongs to
    realization b // I of ``reals``.  Engine options come from
    ``settings.engine_options`` (those of :class:`~lru_mps.engines.mps.state.MPSOptions`).
    """


    #: many steps of dt in one compiled call
    capabilities = frozenset({"advance_regular"})

    @classmethod
    def for_backend(cls, backend: str) -> type[MPSStore]:
        """This store on numpy; the padded store (:mod:`~lru_mps.engines.mps.padded`) on any other backend."""
        return cls if backend == "numpy" else PaddedMPSBatch

    def __init__(self, spec, settings: EngineSettings, reals, I: int, products, nmax, backend: str = "numpy"):
        self.spec = spec
        L = self.L = spec.L
        self.engine = MPSOptions(**settings.engine_options)
        self.dt = self.time_step = self.engine.dt
        self.R, self.I = len(reals), I
        self.B = self.R * I
        self.ridx = np.arange(self.B) // I
        self.channels = spec.jump_channels()
        self.props = [self.engine.prepare(spec, real) for real in reals]
        self.states = [self.props[int(self.ridx[b])].state(sites) for b, sites in enumerate(products)]
        self.rows_arrs, self.rows_qs = List(), List()
        for s in self.states:
            self.rows_arrs.append(s.arrs)
            self.rows_qs.append(s.qs)
        self.pcs = np.array([s.pc for s in self.states], dtype=np.int64).reshape(self.B, 3)
        self._gates: dict[float, object] = {}
        #: per row, the lower bound on what one step of dt keeps of the squared norm, less the truncation margin
        self.kept = np.array([p.gates.norm_kept(self.dt) for p in self.props])[self.ridx] * (1.0 - TRUNCATION_MARGIN)
        self.last = L - 1
        #: seconds one step of one row took in the last compiled call (:meth:`_pieces`); a first guess
        self._row_step_s = 1e-2

    # ------------------------------------------------------------ evolution
    def step(self, rows: np.ndarray, dt) -> None:
        """One Trotter step of the rows: dt for all of them, or one step length per row."""
        if np.ndim(dt) == 0:
            gates = self._step_gates(float(dt))
            gidx = self.ridx[rows]
        else:
            gates = List([self.props[int(r)].gates.step(float(t)) for r, t in zip(self.ridx[rows], dt)])
            gidx = np.arange(len(rows))
        g, eng = self.props[0].gates, self.engine
        disc = np.zeros(self.B)
        maxb = np.ones(self.B, dtype=np.int64)
        rows, gidx = rows.astype(np.int64), gidx.astype(np.int64)
        for part in self._pieces(len(rows))[1]:  # (calls of about CALL_S seconds: a signal is handled between them)
            start = time.perf_counter()
            sweep_rows(self.rows_arrs, self.rows_qs, self.pcs, rows[part], gates, gidx[part], g.bonds, g.right,
                       eng.cutoff, eng.max_bond, disc, maxb)
            self._timed(time.perf_counter() - start, len(rows[part]))
        for r in rows:
            self.states[r].swept(disc[r], maxb[r])

    def _step_gates(self, dt: float):
        """The gates of a step of length dt of every realization (numba list, cached for a few lengths)."""
        gates = self._gates.get(dt)
        if gates is None:
            gates = List([p.gates.step(dt) for p in self.props])
            if len(self._gates) > 8:
                self._gates.clear()
            self._gates[dt] = gates
        return gates

    def advance_regular(self, rows: np.ndarray, counts: np.ndarray, floors: np.ndarray) -> np.ndarray:
        """Up to counts[j] steps of dt for row rows[j], in compiled calls, stopping before a step that could
        take its squared norm to floors[j] or below; returns the steps taken (m,).

        The test before each step uses a rigorous lower bound on the norm a
        step keeps (:meth:`~lru_mps.engines.mps.tebd.BondGates.norm_kept`, less
        TRUNCATION_MARGIN for the truncation), so no row crosses its jump
        threshold inside this call: the loop takes the step where it might,
        from a snapshot.  The numbers are those of single steps, bit for bit.
        The calls are sized by :meth:`_pieces` (a signal is handled between
        them); they share the truncation sums, so no number depends on them.
        """
        rows, floors = np.asarray(rows, dtype=np.int64), np.asarray(floors, dtype=float)
        counts = np.asarray(counts, dtype=np.int64)
        gates = self._step_gates(self.dt)
        g, eng = self.props[0].gates, self.engine
        disc = np.zeros(self.B)
        maxb = np.ones(self.B, dtype=np.int64)
        done = np.zeros(len(rows), dtype=np.int64)
        going = np.arange(len(rows))
        while len(going):
            steps, parts = self._pieces(len(going))
            left = []
            for part in parts:
                check_stop()  # (a signal whose KeyboardInterrupt was lost, e.g. while numba compiled)
                j = going[part]
                chunk = np.minimum(counts[j] - done[j], steps)
                took = np.zeros(len(j), dtype=np.int64)
                start = time.perf_counter()
                sweep_rows_steps(self.rows_arrs, self.rows_qs, self.pcs, rows[j], gates,
                                 self.ridx[rows[j]].astype(np.int64), g.bonds, g.right, eng.cutoff, eng.max_bond,
                                 disc, maxb, chunk, floors[j], self.kept[rows[j]], took)
                self._timed(time.perf_counter() - start, int(took.sum()))
                done[j] += took
                left.append(j[(took == chunk) & (done[j] < counts[j])])
            going = np.concatenate(left)
        for j, r in enumerate(rows):
            if done[j]:
                self.states[r].swept(disc[r], maxb[r], done[j])
        crossed = np.nonzero(done > 0)[0]
        if len(crossed):
            low = self.norm2(rows[crossed]) <= floors[crossed]
            if low.any():
                raise RuntimeError(f"MPS truncation removed more than {TRUNCATION_MARGIN:g} of a row's norm in one "
                                   "step (its jump time is lost): raise --max-bond or lower --cutoff")
        return done

    def _pieces(self, n: int) -> tuple[int, list[slice]]:
        """How the next steps of n rows go to compiled calls: (steps per row and call, the calls' slices of rows).

        Each call is to take about :data:`CALL_S` seconds at the speed measured
        so far (:meth:`_timed`: seconds per step of one row), so that Python
        runs between the calls and a signal (Ctrl-C, SIGTERM) is handled
        within a fraction of a second: one step of a batch of a long, hot
        array's rows takes seconds, and a grid interval of them minutes.
        Rows are independent, so the pieces change no number.
        """
        per_call = CALL_S / self._row_step_s  # row-steps a call may take
        if per_call >= n:
            return int(min(1 << 20, per_call // n)), [slice(0, n)]
        m = max(1, int(per_call))
        return 1, [slice(lo, lo + m) for lo in range(0, n, m)]

    def _timed(self, seconds: float, row_steps: int) -> None:
        """Book a compiled call's time in the seconds per row-step that :meth:`_pieces` sizes the next calls with:
        up at once to a slower call's, down halfway to a faster one's (rows differ in cost: a cold row's bonds are
        small, so a call of them alone would size the next call of hot ones far too long)."""
        if row_steps > 0:
            now = seconds / row_steps
            self._row_step_s = max(now if now > self._row_step_s else 0.5 * (self._row_step_s + now), 1e-7)

    # ------------------------------------------------------------ rows in and out
    def set_row(self, b: int, state: MPSState) -> None:
        """Make ``state`` (centre moved to the last site) row b."""
        self.held = None
        state.move_centre(self.last)
        self.states[b] = state
        self.rows_arrs[b] = state.arrs
        self.rows_qs[b] = state.qs
        self.pcs[b] = state.pc

    def snapshot(self, rows: np.ndarray) -> list[MPSState]:
        """Copies of the rows' states before a step."""
        return [self.states[b].copy() for b in rows]

    def probe(self, b: int, snapshot, j: int) -> CopyProbe:
        """Row b as it was before the step, to find its jump time inside the step."""
        return CopyProbe(snapshot[j], lambda state: self.set_row(b, state))

    # ------------------------------------------------------------ the store interface
    def norm2(self, rows: np.ndarray | None = None) -> np.ndarray:
        """<psi|psi> of the rows (all if None): ||A_{L-1}||^2."""
        idx = np.arange(self.B) if rows is None else np.asarray(rows)
        return last_norms(self.rows_arrs, idx.astype(np.int64))

    def scale(self, rows: np.ndarray | None, factors: np.ndarray) -> None:
        self.held = None
        for b, f in zip(range(self.B) if rows is None else rows, factors):
            self.states[b].scale(float(f))

    def row_state(self, b: int) -> MPSState:
        """Row b's state itself (not a copy)."""
        return self.states[b]

    def populations(self, b: int) -> np.ndarray:
        """Level populations (L, 3) of row b (tracks <H>, as MPSState.site_populations does)."""
        return self._row(b).site_populations()

    def state(self, b: int) -> MPSState:
        return self.states[b].copy()

    def observe(self, rows: np.ndarray):
        """Site populations (m, L, 3), rho_1[1, 0] (m,) and squared norms (as the loop's StateList gives them)."""
        pops, rho10 = observe_states([self.states[b] for b in rows], self.L)
        return pops, rho10, self.norm2(rows)

    def reset_populations(self, rows: np.ndarray, site: int) -> np.ndarray:
        """Level populations (m, 3) of the reset site, the last (tracks <H>, as site_populations does)."""
        _the_last(site, self.last)
        return site_level_populations([self.states[b] for b in rows], site)

    def apply_reset(self, rows: np.ndarray, site: int, outcomes: np.ndarray, normalize: bool, targets=None) -> None:
        """|k_b><o_b| (k_b = targets[b], default 0) on the reset site, the last (the centre), of each row, then
        renormalize if ``normalize``."""
        _the_last(site, self.last)
        self.held = None
        targets = np.zeros(len(rows), dtype=int) if targets is None else targets
        for b, o, k in zip(rows, outcomes, targets):
            s = self.states[b]
            reset(s, o, self.last, normalize, k)
            self.pcs[b] = s.pc

    def diagnostics(self) -> list[dict]:
        """Per-row MPSState.diagnostics(): truncation, bonds, Trotter drift, steps, norm error."""
        return [s.diagnostics() for s in self.states]

