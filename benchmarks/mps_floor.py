"""One MPS trajectory against the arithmetic it does: wall time vs the LAPACK/BLAS floor (issue 13).

For each case, one trajectory runs through the ordinary entry point
(``run_trajectories``, default MPS settings unless ``--dt/--order`` say
otherwise) and is timed.  A second, untimed run of the same trajectory
replays every ``--every``-th Trotter step gate by gate and records what the
kernel computes there: the shape of every charge block it SVDs and of every
theta product.  The *floor* is the time LAPACK (gesdd) and BLAS (zgemm), called
from compiled code, take for exactly those SVDs and products (plus the 9x9
gate applied to every theta), scaled to all steps.  ``ratio`` = trajectory / floor (CPU times, so that a
loaded machine does not distort it):
what the trajectory costs beyond its own arithmetic (loop, observables,
jump-time search, ...).  Below 1 where the kernel's own small-block SVD
(compiled Jacobi) beats LAPACK's call overhead.

    python benchmarks/mps_floor.py                 # the issue's single-trajectory cases
    python benchmarks/mps_floor.py --cases L10_G130 --every 5
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import numpy as np
from numba import njit
from threadpoolctl import threadpool_limits

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from lru_mps.defaults import MPS  # noqa: E402
from lru_mps.engines.mps import kernels  # noqa: E402
from lru_mps.engines.mps import MPSState  # noqa: E402
from lru_mps.physics.model import ArraySpec  # noqa: E402
from lru_mps.run.settings import make_settings  # noqa: E402
from lru_mps.run.trajectories import run_trajectories  # noqa: E402

CASES = {
    # name: (model options, init, t_final, estimator)
    "L10_G130": (dict(length=10, disorder=0, conditions="ideal", reset="dissipation", rate="130J"), "leakage", 40.0,
                 "branch"),
    "L40_qubit": (dict(length=40, disorder=0, conditions="ideal", reset="dissipation", rate="0.5J"), "qubit", 20.0,
                  "branch"),
    "L12_realistic": (dict(length=12, conditions="realistic"), "leakage", 20.0, "sampled"),
    "L30_realistic": (dict(length=30, conditions="realistic"), "leakage", 10.0, "sampled"),
}


def shapes_of_step(state: MPSState, dt: float, log: list) -> None:
    """Evolve ``state`` by one step gate by gate, logging (kind, m, k, n): kind 0 an SVD block m x n, kind 1 a
    charge block of the theta product (m x k)(k x n), kind 2 the gate (9 x 9)(9 x n)."""
    g, eng = state.prop.gates, state.prop.engine
    gates = g.step(dt)
    state.move_centre(state.prop.L - 1)
    disc, maxb = 0.0, 1
    for s, b in enumerate(g.bonds):
        A, B = state.arrs[b], state.arrs[b + 1]
        a, c = A.shape[0], B.shape[2]
        log.append((2, 9, 9, a * c))
        rk = (np.asarray(state.qs[b])[:, None] + state.pc[None, :]).ravel()
        mk = np.asarray(state.qs[b + 1])
        ck = (np.asarray(state.qs[b + 2])[None, :] - state.pc[:, None]).ravel()
        for key in np.unique(rk):
            r, m, q = int(np.sum(rk == key)), int(np.sum(mk == key)), int(np.sum(ck == key))
            if m and q:  # theta's block: (rows of this charge) x (bond) x (columns)
                log.append((1, r, m, q))
        for key in np.unique(rk):  # after the gate: the split's blocks
            r, q = int(np.sum(rk == key)), int(np.sum(ck == key))
            if q:
                log.append((0, r, 0, q))
        d, mb = kernels.sweep(state.arrs, state.qs, state.pc, gates[s:s + 1], g.bonds[s:s + 1], g.right[s:s + 1],
                              eng.cutoff, eng.max_bond)
        disc, maxb = disc + d, max(maxb, mb)
    state.swept(disc, maxb)


@njit(cache=True)
def lapack_time(kinds, ms, ks, ns, mats, reps):
    """Run the logged SVDs (gesdd) and products (zgemm) ``reps`` times; returns a checksum."""
    acc = 0.0
    for _ in range(reps):
        for i in range(kinds.size):
            X = mats[i]
            if kinds[i] == 0:
                U, S, Vh = np.linalg.svd(X, full_matrices=False)
                acc += S[0]
            else:
                Y = np.ones((ks[i], ns[i]), dtype=np.complex128)
                acc += np.dot(X, Y)[0, 0].real
    return acc


def floor_seconds(log: list) -> float:
    """Seconds LAPACK/BLAS take for the logged operations (random complex matrices of those shapes)."""
    from numba.typed import List

    rng = np.random.default_rng(0)
    arr = np.array(log, dtype=np.int64)
    mats = List()
    for kind, m, k, n in log:
        shape = (m, n) if kind == 0 else (m, k)
        mats.append(np.ascontiguousarray(rng.normal(size=shape) + 1j * rng.normal(size=shape)))
    args = (arr[:, 0].copy(), arr[:, 1].copy(), arr[:, 2].copy(), arr[:, 3].copy(), mats)
    lapack_time(*args, 1)
    reps = max(1, int(2e5 // max(len(log), 1)))
    t0 = time.process_time()
    lapack_time(*args, reps)
    return (time.process_time() - t0) / reps


def run_case(name: str, every: int, options: dict) -> dict:
    model, init, t_final, estimator = CASES[name]
    spec = ArraySpec.from_user(**model)
    settings = make_settings(spec, init=init, t_final=t_final, time_points=21, trajectories=1, seed=1,
                             engine="mps", estimator=estimator, engine_options=options)
    run_trajectories(spec, make_settings(spec, init=init, t_final=0.2, time_points=2, trajectories=1, seed=1,
                                         engine="mps", estimator=estimator, engine_options=options), [0])
    t0, c0 = time.perf_counter(), time.process_time()
    (rec,) = run_trajectories(spec, settings, [0], batched=False)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    steps = rec[init].diagnostics["steps"]
    log: list = []
    plain = MPSState.evolve
    counter = [0]

    def evolve(self, dt):
        counter[0] += 1
        if counter[0] % every:
            plain(self, dt)
        else:
            shapes_of_step(self, dt, log)

    MPSState.evolve = evolve
    try:
        run_trajectories(spec, settings, [0], batched=False)
    finally:
        MPSState.evolve = plain
    recorded = counter[0] // every
    floor = floor_seconds(log) * counter[0] / max(recorded, 1)
    n_svd = sum(1 for x in log if x[0] == 0) / max(recorded, 1)
    return dict(case=name, steps=steps, wall_s=wall, cpu_s=cpu, floor_s=floor, ms_step=cpu / steps * 1e3,
                floor_ms_step=floor / steps * 1e3, ratio=cpu / floor, svd_blocks_per_step=n_svd,
                max_bond=rec[init].diagnostics["max_bond"], events=len(rec[init].events))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--every", type=int, default=10, help="record the shapes of every n-th step")
    ap.add_argument("--dt", type=float, default=None)
    ap.add_argument("--order", type=int, default=None)
    args = ap.parse_args(argv)
    options = {k: v for k, v in (("dt", args.dt), ("order", args.order)) if v is not None}
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, python {platform.python_version()}, "
          f"numpy {np.__version__}; BLAS threads = 1; MPS settings {dict(MPS, **options)}")
    print("times are CPU times of the process (on a loaded machine the wall time is longer; both printed)")
    print(f"{'case':>14} {'steps':>6} {'wall s':>7} {'cpu s':>7} {'ms/step':>8} {'floor ms/step':>14} {'cpu/floor':>10} "
          f"{'SVD blocks/step':>15} {'chi':>4} {'events':>6}")
    with threadpool_limits(limits=1, user_api="blas"):
        for name in args.cases.split(","):
            r = run_case(name, args.every, options)
            print(f"{r['case']:>14} {r['steps']:6d} {r['wall_s']:7.2f} {r['cpu_s']:7.2f} {r['ms_step']:8.3f} {r['floor_ms_step']:14.3f} "
                  f"{r['ratio']:10.2f} {r['svd_blocks_per_step']:15.1f} {r['max_bond']:4d} {r['events']:6d}",
                  flush=True)


if __name__ == "__main__":
    main()
