"""What trajectories leave behind: their records, and their events kept as arrays (no object per measurement).

At high feedback rates a trajectory makes G t_final measurements (6,000 at
G = 30 J and t = 200/J); one :class:`Event` object each would cost more than
the measurements themselves.  :class:`EventLog` keeps, in the order they
happen, jumps (one entry each: they are rare), measurements (one entry per
batch of rows measured together: arrays of rows, times and outcomes) and
trains of outcome-0 measurements of the branch estimator (periodic: first
time, count and period; Poisson: the times).  :meth:`EventLog.events` builds
one row's :class:`Event` list on demand, with the times the trajectory loop
used (a periodic train's times are the same ordered sums as the clock's).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Event:
    """One event of a trajectory: a jump of ``channel`` or a feedback measurement with ``outcome``."""

    time: float
    channel: str
    site: int
    outcome: int | None = None


class EventLog:
    """What happened to B rows, in order; measurements on ``site`` (the reset site) unless one names its own."""

    def __init__(self, B: int, site: int):
        self.B = B
        self.site = site
        self._jumps: list[tuple[int, int, Event]] = []  # (sequence number, row, event)
        self._measured: list[tuple] = []  # (seq, rows, times, outcomes, site)
        self._trains: list[tuple[int, int, object]] = []  # (seq, row, times or (first, count, period))
        self._seq = 0
        self._by_row: dict[int, list] | None = None

    def jump(self, b: int, time: float, channel: str, site: int) -> None:
        self._jumps.append((self._seq, b, Event(time, channel, site)))
        self._seq += 1

    def measured(self, rows: np.ndarray, times: np.ndarray, outcomes: np.ndarray, site: int | None = None) -> None:
        """Measurements of ``rows`` at ``times`` (copied) with ``outcomes`` on ``site`` (None: the log's)."""
        self._measured.append((self._seq, np.array(rows), np.array(times, dtype=float), np.array(outcomes),
                               self.site if site is None else int(site)))
        self._seq += 1

    def periodic_train(self, rows: np.ndarray, first: np.ndarray, count: np.ndarray, period: float) -> None:
        """Outcome-0 measurements of each row at first, first + period, ... (count of them, summed in order)."""
        for b, f, c in zip(rows, first, count):
            self._trains.append((self._seq, int(b), (float(f), int(c), float(period))))
        self._seq += 1

    def poisson_train(self, rows: np.ndarray, times: list[np.ndarray]) -> None:
        """Outcome-0 measurements of each row at its ``times``."""
        for b, t in zip(rows, times):
            self._trains.append((self._seq, int(b), np.asarray(t, dtype=float)))
        self._seq += 1

    def count(self, b: int) -> int:
        """How many events row b has (without building them)."""
        n = sum(1 for _, r, _ in self._jumps if r == b)
        n += sum(int(np.count_nonzero(rows == b)) for _, rows, _, _, _ in self._measured)
        for _, r, what in self._trains:
            if r == b:
                n += what[1] if isinstance(what, tuple) else len(what)
        return n

    def events(self, b: int) -> list[Event]:
        """Row b's events in the order they happened."""
        if self._by_row is None:
            self._index()
        parts = sorted(self._by_row.get(b, []), key=lambda p: p[0])
        out: list[Event] = []
        for _, kind, what in parts:
            if kind == "jump":
                out.append(what)
            elif kind == "measured":
                out.append(Event(what[0], "measurement", what[2], what[1]))
            else:
                out += [Event(float(t), "measurement", self.site, 0) for t in _train_times(what)]
        return out

    def _index(self) -> None:
        by_row: dict[int, list] = {}
        for seq, b, ev in self._jumps:
            by_row.setdefault(b, []).append((seq, "jump", ev))
        for seq, rows, times, outcomes, site in self._measured:
            for b, t, o in zip(rows.tolist(), times.tolist(), outcomes.tolist()):
                by_row.setdefault(b, []).append((seq, "measured", (t, int(o), site)))
        for seq, b, what in self._trains:
            by_row.setdefault(b, []).append((seq, "train", what))
        self._by_row = by_row


def _train_times(what) -> np.ndarray:
    if not isinstance(what, tuple):
        return what
    first, count, period = what
    steps = np.full(count, period)
    steps[0] = first
    return np.add.accumulate(steps)


class TrajectoryRecord:
    """What one trajectory leaves behind, on the time grid (1/J).

    ``populations[k, l, m]`` = probability of level m on site l at times[k]
    (unnormalized weights in branch mode); ``coherence[k]`` = <sigma^-_1> in
    the frame of the coding qubit, exp(+i w_q t) rho_1[1, 0] with w_q from
    :meth:`ArraySpec.qubit_frequency` (dressed; docs/physics.md §7).
    ``events``: the jumps and measurements in order (built on first access
    from the batch's :class:`~lru_mps.mcwf.records.EventLog`).
    """

    def __init__(self, times, populations, coherence, events=None, final_state=None, diagnostics=None,
                 log: EventLog | None = None, row: int = 0):
        self.times = times
        self.populations = populations
        self.coherence = coherence
        self.final_state = final_state
        self.diagnostics = {} if diagnostics is None else diagnostics
        self._events = None if events is None else list(events)
        self._log, self._row = log, row

    @property
    def events(self) -> list[Event]:
        if self._events is None:
            self._events = self._log.events(self._row) if self._log is not None else []
        return self._events

    def event_count(self) -> int:
        """len(events), without building them."""
        if self._events is None and self._log is not None:
            return self._log.count(self._row)
        return len(self.events)
