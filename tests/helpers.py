"""Small helpers shared by the tests: one trajectory unbatched, many batched."""

from lru_mps.run.trajectories import run_trajectories


def one(spec, settings, index, realization=None, **kw):
    """Trajectory ``index`` on the engine's ordinary states, one at a time (unbatched): {init: record}."""
    return run_trajectories(spec, settings, [index], realization, batched=False, **kw)[0]


def batched(spec, settings, indices, realization=None, **kw):
    """Trajectories ``indices`` through the engine's batched store: [{init: record}, ...]."""
    return run_trajectories(spec, settings, indices, realization, batched=True, **kw)
