"""Compile the numba kernels into their on-disk cache (``cache=True``): run by tests/conftest.py under xdist.

Started in the background by the xdist controller, which otherwise idles:
the workers then load the MPS and Chebyshev kernels from the cache instead of
both compiling them at once when each first needs them (about 45 s of one
core each in a fresh install).  A few short trajectories through the public
API, ideal and realistic (the trajectory loop's two kinds of calls),
unbatched and batched, and the exact batch's random-feedback trains.  Any failure only means a cold cache: the tests
compile what they need as before.
"""

import os
import threading
import time

from lru_mps.physics.anderson import lyapunov_exponent
from lru_mps.physics.model import ArraySpec
from lru_mps.run.settings import RunSettings, time_grid
from lru_mps.run.trajectories import run_trajectories


def _die_with_parent() -> None:
    """Exit as soon as the pytest process that started this one is gone (killed, interrupted)."""
    parent = os.getppid()

    def watch():
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


def main() -> None:
    _die_with_parent()
    lyapunov_exponent(20.0, n_sites=8, realizations=2, rng=0)  # the transfer-matrix kernel every study summary uses
    for conditions in ("ideal", "realistic"):
        spec = ArraySpec.from_user(length=4, conditions=conditions, reset="periodic", rate="1J")
        for engine, options, batches in (("mps", {}, (False, True)), ("sector", {"eig_max_dim": 1}, (False,))):
            settings = RunSettings(times=time_grid(0.2, 2), seed=0, engine=engine, engine_options=options)
            for batched in batches:
                run_trajectories(spec, settings, [0, 1], batched=batched)
    # the exact batch's random-feedback trains (branch estimator, ideal: the rate sweep's path)
    spec = ArraySpec.from_user(length=3, conditions="ideal", reset="random", rate="1J")
    run_trajectories(spec, RunSettings(times=time_grid(5.0, 2), seed=0, engine="exact", estimator="branch"), [0, 1])


if __name__ == "__main__":
    main()
