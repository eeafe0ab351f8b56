"""The Monte-Carlo wave-function algorithm, written once for every state backend.

Physics (docs/physics.md §4, §6).  Between events the (unnormalized) state
evolves with exp(-i H_eff t).  Continuous channels (engineered dissipation,
hardware decay and dephasing) are unravelled by the waiting-time method: draw
r ~ U(0,1), evolve until the squared norm falls to r, pick the channel k with
probability proportional to rate_k <op_k^dag op_k>, apply it, renormalize,
draw a new r.  Feedback measurements of n_L interrupt the evolution at their
times: t0 + k/G with t0 ~ U[0, 1/G) (periodic) or Poisson times of rate G
(random feedback, whose Lindblad form has a state-independent total rate G
and Born-rule outcomes); the outcome n is drawn with the Born probability and
|0><n|_L is applied.

Two estimators share this code:

``sampled``
    the usual unravelling: every event is sampled; observables are
    expectation values of the normalized state.
``branch``
    the removal-free branch: no waiting-time jumps are drawn and every
    measurement is taken to give n = 0 (|0><0|_L applied without
    renormalizing).  The squared norm of the branch is the probability that
    nothing has removed an excitation, and observables are recorded as
    unnormalized expectation values <psi|O|psi>.  When every removal empties
    the observed quantity for good (ideal conditions: no hardware noise,
    T = 0), this is the exact ensemble average for the given disorder
    realization and measurement times, with no sampling noise from the
    removal events.  :func:`branch_is_exact` decides that.

The algorithm talks to the state only through :class:`TrajectoryState`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from scipy.optimize import brentq

from .physics import operators as ops
from .errors import ParameterError
from .physics.model import ArraySpec, Realization

ESTIMATORS = ("sampled", "branch")


class TrajectoryState(Protocol):
    """What the trajectory algorithm needs from a state representation.

    All quantities are of the unnormalized state |psi>.
    """

    #: None if :meth:`evolve` is exact for any duration (the jump time is then
    #: located by root finding); else the integrator's step in 1/J (the jump
    #: time is resolved to one step).
    time_step: float | None

    def evolve(self, dt: float) -> None:
        """|psi> <- exp(-i H_eff dt) |psi>."""

    def norm2(self) -> float:
        """<psi|psi>."""

    def site_populations(self) -> np.ndarray:
        """Unnormalized level populations of every site, shape (L, 3): <psi| (|m><m|)_l |psi>."""

    def site_rdm(self, site: int) -> np.ndarray:
        """Unnormalized reduced density matrix of one site (3, 3): rho[i, j] = <psi| (|j><i|)_site |psi>."""

    def apply_local(self, op: np.ndarray, site: int) -> None:
        """|psi> <- op_site |psi> (op a 3x3 matrix, site 0-based)."""

    def scale(self, factor: float) -> None:
        """|psi> <- factor |psi>."""

    def copy(self) -> "TrajectoryState":
        """An independent copy."""


@dataclass
class Event:
    """One event of a trajectory: a jump of ``channel`` or a feedback measurement with ``outcome``."""

    time: float
    channel: str
    site: int
    outcome: int | None = None


@dataclass
class TrajectoryRecord:
    """What one trajectory leaves behind, on the time grid.

    ``populations[k, l, m]`` = probability of level m on site l at times[k]
    (unnormalized weights in branch mode); ``coherence[k]`` = <sigma^-_1> in
    the frame of the coding qubit, exp(+i w_q t) rho_1[1, 0] with w_q from
    :meth:`ArraySpec.qubit_frequency` (dressed by default).
    """

    times: np.ndarray
    populations: np.ndarray
    coherence: np.ndarray
    events: list[Event] = field(default_factory=list)
    final_state: object | None = None
    diagnostics: dict = field(default_factory=dict)


def branch_is_exact(spec: ArraySpec) -> bool:
    """True when the removal-free branch gives the exact ensemble average.

    That needs every event to remove the observed quantity for good: no
    hardware decay or dephasing and no thermal excitations (ideal conditions).
    """
    return spec.conditions.ideal


def check_estimator(spec: ArraySpec, estimator: str) -> str:
    """Resolve 'auto' and refuse the branch estimator where it is not exact."""
    if estimator == "auto":
        return "branch" if branch_is_exact(spec) else "sampled"
    if estimator not in ESTIMATORS:
        raise ParameterError("estimator", estimator, "one of auto, sampled, branch")
    if estimator == "branch" and not branch_is_exact(spec):
        raise ParameterError(
            "estimator",
            estimator,
            "'branch' only in ideal conditions (no T1q/Tphi noise, temperature 0)",
            "hardware noise and thermal excitations make events that do not remove the observed "
            "quantity; use --estimator sampled",
        )
    return estimator


class _MeasurementClock:
    """Feedback-measurement times: periodic with random phase, or Poisson."""

    def __init__(self, spec: ArraySpec, rng: np.random.Generator):
        self.kind = spec.reset.kind
        self.rate = spec.reset.rate
        self.rng = rng
        if self.kind == "periodic":
            self.next = rng.uniform(0.0, 1.0 / self.rate)
        elif self.kind == "random":
            self.next = rng.exponential(1.0 / self.rate)
        else:
            self.next = math.inf

    def advance(self) -> None:
        if self.kind == "periodic":
            self.next += 1.0 / self.rate
        else:
            self.next += self.rng.exponential(1.0 / self.rate)


def _advance(state, duration: float, threshold: float):
    """Evolve by ``duration`` unless the squared norm reaches ``threshold`` first.

    Returns (state, elapsed, jumped).  The evolution is cut into steps: one
    step for exact backends (``time_step`` None), steps of at most
    ``time_step`` for integrators.  When a step crosses the threshold, the
    crossing time inside it is found by root finding from the state saved
    before the step (the norm is non-increasing), so the jump time has no
    step-size bias beyond the integrator's own error.
    """
    if duration <= 0.0:
        return state, 0.0, False
    dt = state.time_step or duration
    elapsed = 0.0
    while elapsed < duration:
        step = min(dt, duration - elapsed)
        if duration - elapsed - step < 1e-12 * dt:
            step = duration - elapsed
        before = state.copy()
        state.evolve(step)
        if state.norm2() > threshold:
            elapsed += step
            continue

        def excess(tau):
            s = before.copy()
            s.evolve(tau)
            return s.norm2() - threshold

        tau = brentq(excess, 0.0, step, xtol=1e-12 * max(1.0, step), rtol=1e-14)
        before.evolve(tau)
        return before, elapsed + tau, True
    return state, duration, False


def run_trajectory(
    state: TrajectoryState,
    spec: ArraySpec,
    realization: Realization,
    times: np.ndarray,
    rng: np.random.Generator,
    estimator: str = "sampled",
    keep_final_state: bool = False,
    qubit_frequency: float | None = None,
) -> TrajectoryRecord:
    """Evolve one trajectory from ``state`` (normalized) over the grid ``times`` (1/J).

    ``rng`` is this trajectory's own stream; it is consumed in a fixed order
    (measurement clock, then events as they happen), so a trajectory's result
    depends only on its seed.
    """
    if estimator not in ESTIMATORS:
        raise ParameterError("estimator", estimator, "sampled or branch")
    times = np.asarray(times, dtype=float)
    channels = spec.jump_channels()
    last = spec.L - 1
    clock = _MeasurementClock(spec, rng)
    sampled = estimator == "sampled"
    T = len(times)
    populations = np.zeros((T, spec.L, 3))
    coherence = np.zeros(T, dtype=complex)
    events: list[Event] = []
    w_q = spec.qubit_frequency(realization) if qubit_frequency is None else qubit_frequency

    threshold = rng.random() if sampled and channels else 0.0
    t = 0.0
    k = 0
    while k < T:
        t_next = min(times[k], clock.next)
        while t < t_next:
            state, elapsed, jumped = _advance(state, t_next - t, threshold)
            t = t_next if not jumped else t + elapsed
            if jumped:
                t = min(t, t_next)
                _jump(state, channels, rng, events, t)
                threshold = rng.random()
        if sampled and channels:
            # renormalize at every stop: P(no jump yet) carries over to r
            n2 = state.norm2()
            threshold /= n2
            state.scale(1.0 / math.sqrt(n2))
        if times[k] <= clock.next:
            norm = state.norm2() if sampled else 1.0
            populations[k] = state.site_populations() / norm
            coherence[k] = state.site_rdm(0)[1, 0] / norm * np.exp(1j * w_q * times[k])
            k += 1
        else:
            _measure(state, last, rng, events, t, sampled)
            clock.advance()
    diagnostics = state.diagnostics() if hasattr(state, "diagnostics") else {}
    return TrajectoryRecord(
        times=times,
        populations=populations,
        coherence=coherence,
        events=events,
        final_state=state if keep_final_state else None,
        diagnostics=diagnostics,
    )


def _jump(state, channels, rng, events, t) -> None:
    """Pick a channel with probability ~ rate <op^dag op>, apply it, renormalize."""
    pops = state.site_populations()
    weights = np.array([ch.rate * _occupation_weight(ch, pops, state) for ch in channels])
    weights = np.clip(weights, 0.0, None)
    total = weights.sum()
    u = rng.random() * total
    idx = int(np.searchsorted(np.cumsum(weights), u, side="right"))
    idx = min(idx, len(channels) - 1)
    ch = channels[idx]
    state.apply_local(ch.op, ch.site)
    state.scale(1.0 / math.sqrt(state.norm2()))
    events.append(Event(t, ch.name, ch.site))


def _occupation_weight(ch, pops, state) -> float:
    """<op^dag op> on the channel's site (from the populations when op^dag op is diagonal)."""
    m = ch.op.conj().T @ ch.op
    if np.count_nonzero(m - np.diag(np.diagonal(m))) == 0:
        return float(np.real(np.diagonal(m)) @ pops[ch.site])
    return float(np.real(np.trace(m @ state.site_rdm(ch.site))))


def _measure(state, site, rng, events, t, sampled) -> None:
    """Feedback measurement of n on ``site`` followed by |0><n|."""
    if not sampled:
        state.apply_local(ops.reset_op(0), site)
        events.append(Event(t, "measurement", site, 0))
        return
    p = np.clip(state.site_populations()[site], 0.0, None)
    p = p / p.sum()
    outcome = int(np.searchsorted(np.cumsum(p), rng.random(), side="right"))
    outcome = min(outcome, 2)
    state.apply_local(ops.reset_op(outcome), site)
    state.scale(1.0 / math.sqrt(state.norm2()))
    events.append(Event(t, "measurement", site, outcome))
