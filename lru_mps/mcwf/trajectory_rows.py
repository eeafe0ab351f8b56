"""A trajectory's row of the loop: its random streams, clocks and how it runs (docs/physics.md §6.4, §6.5).

:func:`start_row` draws a row's measurement clock and first threshold from
its stream in the order the algorithm fixes (after its thermal levels) and
decides, for the branch estimator, whether the row follows the branch (with
a dephasing clock), is guided, or is sampled.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..physics.model import ArraySpec
from .kernels import MeasurementClock


@dataclass
class Row:
    """The per-trajectory state of the algorithm: random stream, clock, jump threshold, qubit frequency (J).

    ``branch`` rows follow the removal-free branch (docs/physics.md §6.5):
    no waiting-time jumps, every measurement gives n = 0, nothing
    renormalized.  A branch row with ``clock_rate`` Lambda > 0 samples its
    number-conserving jumps (dephasing) at the times of a Poisson clock of
    rate Lambda drawn from ``clock_rng``, and carries the importance weight
    of that choice: the recorded values are <psi|O|psi> x exp(log_weight + Lambda t).
    """

    rng: np.random.Generator
    clock: MeasurementClock
    threshold: float
    qubit_frequency: float
    branch: bool = False
    clock_rate: float = 0.0
    clock_rng: np.random.Generator | None = None
    #: the row's weight from its initial state's sampling (1; see lru_mps.run.thermal_sample.thin_hot_tail)
    weight: float = 1.0
    #: a thermal row of the branch estimator whose jumps are guided by this observable ('qubit', 'leakage'):
    #: every jump channel on its clock (rate set at each tick), measurement outcomes drawn (kernels.guide_weights)
    guided: str | None = None


def start_row(spec: ArraySpec, rng: np.random.Generator, estimator: str, qubit_frequency: float,
              clock_rate: float | None = 0.0, weight: float = 1.0, guided: str | None = None) -> Row:
    """A row's clock and first threshold, drawn in this order from its stream (after its thermal levels).

    ``estimator`` is the run's; ``clock_rate`` (:func:`~lru_mps.mcwf.kernels.branch_clock` of the row's
    initial state) says how a row of the branch estimator runs: None = sampled, else on the branch with a
    dephasing clock of that rate (J; 0 = none), whose times and choices come from a child stream of ``rng``
    (``rng.spawn``: the row's own numbers do not move).  In branch mode the measurement clock is the stream's
    only consumer from here on, so it may draw its waiting times ahead (the same numbers).
    """
    guided = guided if estimator == "branch" and clock_rate is None else None
    branch = estimator == "branch" and (clock_rate is not None or guided is not None)
    clock = MeasurementClock(spec, rng)
    jumps = not branch and bool(spec.jump_channels())
    row = Row(rng, clock, rng.random() if jumps else 0.0, qubit_frequency, branch, weight=float(weight),
              guided=guided)
    clock.draw_ahead = branch and guided is None  # a guided row's stream also draws measurement outcomes
    if guided is not None:
        row.clock_rng = rng.spawn(1)[0]  # its rate is set from its state when the loop starts
    elif branch and clock_rate > 0.0:
        row.clock_rate = float(clock_rate)
        row.clock_rng = rng.spawn(1)[0]
    return row
