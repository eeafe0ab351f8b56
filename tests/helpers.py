"""Small helpers shared by the tests: one trajectory unbatched, many batched, and how two results differ."""

import numpy as np

from lru_mps.mcwf.records import TrajectoryRecord
from lru_mps.run.trajectories import run_trajectories


def one(spec, settings, index, realization=None, **kw):
    """Trajectory ``index`` on the engine's ordinary states, one at a time (unbatched): {init: record}."""
    return run_trajectories(spec, settings, [index], realization, batched=False, **kw)[0]


def batched(spec, settings, indices, realization=None, **kw):
    """Trajectories ``indices`` through the engine's batched store: [{init: record}, ...]."""
    return run_trajectories(spec, settings, indices, realization, batched=True, **kw)


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
