"""What the trajectory loop needs from the states of its rows: the state-store protocol (docs/physics.md §4, §6).

The loop (:func:`lru_mps.mcwf.loop.run_rows`) keeps the states of a batch of
B rows in a *state store* and talks to it only through the methods of
:class:`StateStore`: evolve under H_eff = H - (i/2) sum_k c_k^dag c_k,
squared norms, jumps, the feedback's measurement and reset on the last site,
the observables it records, all of the unnormalized states; times in 1/J.
Every engine's batched store derives from
:class:`~lru_mps.engines.common.store.BatchStore` and implements it, as does
:class:`~lru_mps.mcwf.states.StateList` over ordinary states.

A store may also offer the feedback trains (:class:`FeedbackTrains`, with
:class:`PoissonSteps` for random feedback and the sampled estimator): a row's
measurements between two grid times in one call instead of one stop each
(:mod:`lru_mps.mcwf.trains`).
"""

from __future__ import annotations

from typing import Protocol, Sequence

import numpy as np


class StateStore(Protocol):
    """What the loop needs from the states of B rows (quantities of the unnormalized states).

    Every store derives from :class:`~lru_mps.engines.common.store.BatchStore`
    (optional capabilities: ``offers(name)``).
    """

    #: None if evolve is exact for any duration; else the integrator's step (1/J)
    time_step: float | None

    def evolve(self, rows: np.ndarray, durations, grid_step: float | None) -> None:
        """|psi_b> <- exp(-i H_eff d_b) |psi_b> (``durations``: one float or one per row; ``grid_step``: a hint
        that this is the first advance of a grid interval of that length)."""

    def norm2(self, rows: np.ndarray | None) -> np.ndarray:
        """<psi_b|psi_b> of the rows (all if None)."""

    def scale(self, rows: np.ndarray | None, factors: np.ndarray) -> None:
        """|psi_b> <- f_b |psi_b>."""

    def snapshot(self, rows: np.ndarray):
        """A copy of the rows' states (to find a jump time inside the step that follows)."""

    def probe(self, b: int, snapshot, j: int):
        """Row b evolving from position j of ``snapshot``: an object with ``norm2_after(tau)`` and
        ``commit(tau)`` (which leaves row b in the state at tau), to find a jump time."""

    def populations(self, b: int) -> np.ndarray:
        """Level populations (L, 3) of row b (for the jump channel weights)."""

    def rdm(self, b: int, site: int) -> np.ndarray:
        """One-site density matrix (3, 3) of row b."""

    def apply_jump(self, b: int, channel: int) -> None:
        """Apply channel ``channel``'s operator to row b and renormalize."""

    def observe(self, rows: np.ndarray):
        """Site populations (m, L, 3), rho_1[1, 0] (m,) and the squared norms (m,) used to normalize them."""

    def reset_populations(self, rows: np.ndarray, site: int) -> np.ndarray:
        """Level populations (m, 3) of the reset site ``site`` (an index of ``spec.reset_sites``)."""

    def apply_reset(self, rows: np.ndarray, site: int, outcomes: np.ndarray, normalize: bool, targets=None) -> None:
        """|k_b><o_b| on the reset site ``site`` of each row, k_b = targets[b] (default 0: the reset; a readout
        error gives x(m, n), :mod:`lru_mps.physics.readout`), then renormalize if ``normalize``."""

    def diagnostics(self) -> list[dict]:
        """Per-row engine diagnostics."""

    def state(self, b: int):
        """Row b as an ordinary state object (a copy)."""


class FeedbackTrains(Protocol):
    """A store's optional capability ``feedback_trains`` (declared in its ``capabilities``; the attribute
    ``feedback_trains`` is None where a run's settings do not use them).

    The branch estimator's measurements all give n = 0, so between two grid
    times a row's feedback is a fixed sequence of linear maps: the loop hands
    every measurement after the first of a grid interval to the store in one
    call, instead of stopping at each.  With the sampled estimator the
    measurements up to the first that brings an event (an outcome n != 0 or
    a jump before it) go through the store (periodic: powers of the map;
    random: :class:`PoissonSteps`), and the loop makes the event itself.  Rows enter right after a measurement (their last site is in
    |0>); P0 = |0><0| on the last site.
    """

    def periodic(self, rows: np.ndarray, counts: np.ndarray, period: float) -> None:
        """|psi_b> <- (P0 exp(-i H_eff period))^{counts_b} |psi_b> (counts_b >= 1; period in 1/J)."""

    def poisson(self, rows: np.ndarray, waits: Sequence[np.ndarray]) -> None:
        """|psi_b> <- P0 exp(-i H_eff w_K) ... P0 exp(-i H_eff w_1) |psi_b>, (w_1..w_K) = waits[j] (1/J)."""

    def sampled_periodic(self, rows: np.ndarray, counts: np.ndarray, period: float, uniforms: np.ndarray,
                         thresholds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Sampled estimator, rows just measured (normalized): up to counts_b periods (evolve, measure) while the
        measurement gives n = 0 (uniforms[b, j] < p_0) and no jump comes (the no-jump probability since the
        call stays above thresholds[b]).  Returns (periods done, their no-jump probability); rows left
        normalized after their last done period."""

    def sampled_poisson(self, rows: np.ndarray):
        """Sampled estimator, random feedback: a :class:`PoissonSteps` of the rows (just measured, normalized)."""

    def describe(self) -> str:
        """How the store applies the trains (for the run summary)."""


class PoissonSteps(Protocol):
    """Rows of a store stepping from one random-feedback measurement to the next (sampled estimator).

    Positions index the rows given to ``sampled_poisson``; the store keeps
    their states until :meth:`finish`.
    """

    def step(self, positions: np.ndarray, waits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Evolve the rows by waits (1/J), tentatively: (squared norms (m,), last-site populations (m, 3))."""

    def accept(self, positions: np.ndarray) -> None:
        """Keep the last step of these rows and apply |0><0| on the last site, normalized (outcome 0)."""

    def finish(self) -> None:
        """Put the rows' states (the accepted steps only) back into the store."""
