"""Progress of long runs: stage k of n, trajectories, rate and time left (tqdm).

A study runs many ensembles ("stages"); each reports (done, total)
trajectories as they finish.  :class:`Progress` shows two lines on stderr
(or a notebook widget through ``tqdm.auto``): the stages of the whole run
with its elapsed and estimated remaining time, and the trajectories of the
current stage with their rate.  A disabled Progress does nothing, which is
what the command line uses with ``--json`` or when stderr is not a terminal.

    from lru_mps.run.progress import Progress
    ctx = StudyContext(out="runs/ls", progress=Progress())
"""

from __future__ import annotations

from typing import Callable


class Progress:
    """Progress bars for a run of one or more stages (tqdm; silent when ``enabled`` is False)."""

    def __init__(self, enabled: bool = True, notebook: bool = False):
        self.enabled = enabled
        self._tqdm = None
        if enabled:
            if notebook:
                from tqdm.auto import tqdm
            else:
                from tqdm import tqdm
            self._tqdm = tqdm
        self.stages = None  # the outer bar (created by plan or the first stage)
        self.current = None  # the trajectory bar of the running stage
        self._planned = 0
        self._count = 0

    def plan(self, stages: int) -> None:
        """Announce how many stages the run has (more may follow: a minimiser's evaluations)."""
        self._planned = max(0, int(stages))
        if self.enabled and self.stages is not None:
            self.stages.total = max(self._planned, self._count)
            self.stages.refresh()

    def stage(self, label: str) -> Callable[[int, int], None]:
        """Start the next stage; returns its callback ``(done, total)`` in trajectories."""
        self._count += 1
        if not self.enabled:
            return _ignore
        if self.stages is None and self._planned > 1:
            self.stages = self._tqdm(total=self._planned, unit="stage", position=0, dynamic_ncols=True,
                                     bar_format="{desc} [{elapsed} elapsed, about {remaining} left]")
        if self.stages is not None:
            total = max(self._planned, self._count)
            self.stages.total = total
            self.stages.n = self._count - 1  # finished stages: the time estimate is per finished stage
            self.stages.set_description_str(f"stage {self._count}/{total}: {label}", refresh=True)
        if self.current is not None:
            self.current.close()
        self.current = self._tqdm(total=None, desc=label, unit="traj", position=1 if self.stages else 0,
                                  leave=self.stages is None, dynamic_ncols=True)
        bar = self.current

        def update(done: int, total: int) -> None:
            if bar.total != total:
                bar.total = total
            bar.n = done
            bar.refresh()

        return update

    def close(self) -> None:
        """Finish the bars (the stage count reaches its total)."""
        if self.current is not None:
            self.current.close()
            self.current = None
        if self.stages is not None:
            self.stages.n = self._count
            self.stages.total = self._count
            self.stages.refresh()
            self.stages.close()
            self.stages = None

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _ignore(done: int, total: int) -> None:
    return None
