"""Trajectory throughput: unbatched engine, batched engine, QuTiP 5 mcsolve (issue: Throughput).

Part 1, paper parameters (ArraySpec.from_user(length=L, conditions='realistic'):
W/2pi = 100 MHz, J/2pi = 5 MHz, T1q = 16.7 us, Tphi = 10 us, 100 mK; periodic
feedback at 0.03 J), t = 0..200/J on 201 points, every trajectory with its own
disorder realization and thermal sample, the three initial states of every
index, one core:
  (a) the unbatched engine, ``run.blocks.run_block`` over all blocks;
  (b) ``run_trajectories(..., batched=True)`` over the same kind of indices;
and the largest difference of the accumulated means of (a) and (b) over the
indices both ran.

Part 2, against QuTiP 5 ``mcsolve`` on the same physics: H in the rotating
frame (``exact.hamiltonian_eff(spec, real, hermitian_only=True)``), collapse
operators sqrt(rate) op embedded with ``exact.embed`` from ``spec.channels()``.
Periodic feedback is not a Lindblad channel, so BOTH codes use random feedback
at 0.03 J here (three Lindblad operators sqrt(G)|0><n|_L; lru-mps unravels
them as Poisson-timed measurements, QuTiP as jumps: the same master equation).
QuTiP cannot vary H per trajectory, so both use ONE disorder realization
(``disorder_rng(seed, 0)``).  Initial state: |2> on site 1, sites 2..L in the
thermal (J = 0 Gibbs) product state -- lru-mps samples one product eigenstate
per trajectory; QuTiP gets the same kind of sample as a mixed initial ensemble
(MCSolver.run with a list of (state, weight) and trajectories per state), so
both average plain samples.  Both record the level populations of every site and
<sigma^-_1> on the grid; QuTiP runs with its default integrator options.
Timed on one core (QuTiP map='serial') and on all cores (QuTiP
map='parallel', lru-mps in as many worker processes), BLAS pinned to 1 thread
everywhere.  The mean leakage sum_l <|2><2|_l>(t) of the two codes is
compared in units of its combined standard error: the largest such ratio
over the grid, and the ratio for the time-integrated leakage int P* dt (its
standard error from the per-trajectory integrals).  The pointwise maximum
is only meaningful when every point's standard error is: at a few hundred
QuTiP trajectories the first jumps (the hardware decay of |2>, ~1 % of
trajectories by t = 2/J) may not have happened yet, and QuTiP's sample
standard error there is that of its smooth no-jump evolution (~1e-5), which
makes the ratio large at t < 5/J although the two agree; the integrated
leakage's error is well estimated at every count.

A trajectory is one initial state of one index (an index of lru-mps runs three).

QuTiP is not a dependency of lru-mps: ``pip install qutip`` (5.x) for part 2.

Run:  python benchmarks/throughput.py                  (~25 min on 2 cores, QuTiP dominates)
      python benchmarks/throughput.py --quick          (a few minutes, fewer trajectories)
      python benchmarks/throughput.py --skip-qutip
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from threadpoolctl import threadpool_limits

from lru_mps.run.blocks import n_blocks, run_block
from lru_mps.run.seeding import disorder_rng
from lru_mps.run.settings import make_settings
from lru_mps.run.trajectories import run_trajectories
from lru_mps.physics.model import ArraySpec
from lru_mps.run.statistics import ObservableAccumulator

T_FINAL, POINTS, RATE = 200.0, 201, "0.03J"


def _one_thread():
    threadpool_limits(limits=1, user_api="blas")


# ------------------------------------------------------------------ part 1
def _accumulate(spec, settings, records):
    accs = {name: ObservableAccumulator(len(settings.times), spec.L) for name in settings.inits}
    for rec in records:
        for name, r in rec.items():
            accs[name].add(r.populations, r.coherence)
    return accs


def bench_paper(L: int, n_unbatched: int, n_batched: int):
    spec = ArraySpec.from_user(length=L, conditions="realistic", rate=RATE)
    inits = 3
    # (a) unbatched: run_block over every block of a run of n_unbatched indices
    st_a = make_settings(spec, t_final=T_FINAL, time_points=POINTS, trajectories=n_unbatched, seed=0)
    t0 = time.perf_counter()
    blocks = [run_block(spec, st_a, b) for b in range(n_blocks(n_unbatched))]
    t_a = time.perf_counter() - t0
    acc_a = {name: ObservableAccumulator(POINTS, L) for name in st_a.inits}
    for blk in blocks:
        for name, acc in blk.accumulators.items():
            acc_a[name].merge(acc)
    # (b) batched, n_batched indices (the first n_unbatched of them are those of (a))
    st_b = make_settings(spec, t_final=T_FINAL, time_points=POINTS, trajectories=n_batched, seed=0)
    with threadpool_limits(limits=1, user_api="blas"):
        t0 = time.perf_counter()
        recs = run_trajectories(spec, st_b, range(n_batched), batched=True)
        t_b = time.perf_counter() - t0
    acc_b = _accumulate(spec, st_b, recs[:n_unbatched])
    dev = 0.0
    for name in acc_a:
        for key in ("leakage_array", "qubit_population"):
            dev = max(dev, float(np.abs(acc_a[name].get(key).mean - acc_b[name].get(key).mean).max()))
        dev = max(dev, float(np.abs(acc_a[name].z - acc_b[name].z).max() / n_unbatched))
    return inits * n_unbatched / t_a, inits * n_batched / t_b, dev


# ------------------------------------------------------------------ part 2
def _qutip_problem(L: int, seed: int = 0):
    spec = ArraySpec.from_user(length=L, conditions="realistic", reset="random", rate=RATE)
    real = spec.draw_realization(disorder_rng(seed, 0))
    return spec, real


def _lru_leakage_sums(L: int, indices, seed: int = 0, batched: bool = True):
    """Sum and sum of squares of sum_l <|2><2|_l>(t) over the given trajectories (one process)."""
    _one_thread()
    spec, real = _qutip_problem(L, seed)
    st = make_settings(spec, init="leakage", t_final=T_FINAL, time_points=POINTS, trajectories=max(indices) + 1, seed=seed)
    recs = run_trajectories(spec, st, indices, real, batched=batched)
    leak = np.array([r["leakage"].populations[:, :, 2].sum(axis=1) for r in recs])
    area = _areas(leak)
    return len(indices), leak.sum(axis=0), (leak**2).sum(axis=0), area.sum(), (area**2).sum()


def _areas(leak: np.ndarray) -> np.ndarray:
    """Each trajectory's time-integrated leakage, int_0^T sum_l <|2><2|_l> dt (1/J), on the grid."""
    return np.trapezoid(leak, np.linspace(0.0, T_FINAL, POINTS), axis=-1)


def _mean_sem(n: int, s: float, s2: float):
    mean = s / n
    return mean, np.sqrt(np.clip(s2 / n - mean**2, 0, None) / max(n - 1, 1))


def lru_vs_qutip_side(L: int, ntraj: int, cores: int, batched: bool = True):
    """Time ntraj lru-mps trajectories on ``cores`` processes; mean and sem of the leakage and of its integral."""
    t0 = time.perf_counter()
    if cores == 1:
        parts = [_lru_leakage_sums(L, list(range(ntraj)), batched=batched)]
    else:
        chunks = [list(range(ntraj))[k::cores] for k in range(cores)]
        with ProcessPoolExecutor(cores, initializer=_one_thread) as pool:
            parts = list(pool.map(_lru_leakage_sums, [L] * cores, chunks, [0] * cores, [batched] * cores))
    dt = time.perf_counter() - t0
    n = sum(p[0] for p in parts)
    mean, sem = _mean_sem(n, sum(p[1] for p in parts), sum(p[2] for p in parts))
    area = _mean_sem(n, sum(p[3] for p in parts), sum(p[4] for p in parts))
    return n / dt, mean, sem, area


def qutip_side(L: int, ntraj: int, cores: int):
    import qutip

    from lru_mps.physics import operators as ops
    from lru_mps.engines.exact import embed, hamiltonian_eff

    spec, real = _qutip_problem(L)
    dims = [[3] * L, [3] * L]

    def q(m):
        return qutip.Qobj(m, dims=dims)

    # the thermal product states of sites 2..L, sampled as lru-mps samples them, as a mixed
    # initial ensemble: (state, fraction of trajectories), run with that many trajectories each
    rng = np.random.default_rng(1)
    counts: dict[tuple, int] = {}
    for _ in range(ntraj):
        levels = tuple(int(x) for x in spec.thermal_levels(real, rng))
        counts[levels] = counts.get(levels, 0) + 1
    t0 = time.perf_counter()
    H = q(hamiltonian_eff(spec, real, hermitian_only=True))
    c_ops = [q(np.sqrt(ch.rate) * embed(ch.op, ch.site, L)) for ch in spec.channels()]
    states = [(qutip.tensor([qutip.basis(3, 2)] + [qutip.basis(3, k) for k in lv[1:]]), c / ntraj)
              for lv, c in counts.items()]
    e_ops = [q(embed(ops.projector(m), l, L)) for l in range(L) for m in range(3)]
    e_ops.append(q(embed(ops.sigma_minus, 0, L)))
    e_ops.append(q(sum(embed(ops.leak, l, L) for l in range(L))))
    options = {"progress_bar": False, "map": "serial" if cores == 1 else "parallel", "store_states": False,
               "keep_runs_results": True}
    if cores > 1:
        options["num_cpus"] = cores
    with threadpool_limits(limits=1, user_api="blas"):
        solver = qutip.MCSolver(H, c_ops, options=options)
        res = solver.run(states, np.linspace(0, T_FINAL, POINTS), ntraj=list(counts.values()), e_ops=e_ops, seeds=1)
    dt = time.perf_counter() - t0
    n = res.num_trajectories
    mean = np.real(np.asarray(res.average_expect[-1]))
    sem = np.real(np.asarray(res.std_expect[-1])) / np.sqrt(n)
    area = _areas(np.real(np.asarray(res.runs_expect[-1])))
    return n / dt, mean, sem, n, (area.mean(), area.std(ddof=1) / np.sqrt(n))


def _parse_ntraj(text: str) -> dict[int, int]:
    return {int(k): int(v) for k, v in (item.split("=") for item in text.split(","))}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lengths", default="3,6")
    ap.add_argument("--unbatched", default="3=48,6=16", help="indices for (a), per L")
    ap.add_argument("--batched", default="3=1024,6=512", help="indices for (b), per L")
    ap.add_argument("--qutip-ntraj", default="3=2000,6=200", help="QuTiP trajectories per L")
    ap.add_argument("--lru-unbatched-ntraj", type=int, default=100, help="unbatched lru-mps trajectories in part 2")
    ap.add_argument("--cores", default=f"1,{os.cpu_count() or 1}")
    ap.add_argument("--skip-qutip", action="store_true")
    ap.add_argument("--quick", action="store_true", help="fewer trajectories everywhere")
    args = ap.parse_args()
    lengths = [int(x) for x in args.lengths.split(",")]
    n_a, n_b, n_q = _parse_ntraj(args.unbatched), _parse_ntraj(args.batched), _parse_ntraj(args.qutip_ntraj)
    cores = sorted({int(c) for c in args.cores.split(",")})
    if args.quick:
        n_a = {L: max(4, n // 4) for L, n in n_a.items()}
        n_b = {L: max(16, n // 4) for L, n in n_b.items()}
        n_q = {L: max(20, n // 10) for L, n in n_q.items()}

    qutip_version = None
    if not args.skip_qutip:
        try:
            import qutip

            qutip_version = qutip.__version__
        except ImportError:
            print("QuTiP is not installed (it is not a dependency of lru-mps): pip install qutip  -- skipping part 2\n")

    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, python {platform.python_version()}, "
          f"numpy {np.__version__}, scipy {__import__('scipy').__version__}"
          + (f", qutip {qutip_version}" if qutip_version else "") + "; BLAS threads = 1")
    print(f"t = 0..{T_FINAL:g}/J, {POINTS} points; trajectories/s, one trajectory = one initial state\n")

    print("Part 1: paper parameters (realistic, periodic feedback 0.03 J), own disorder per trajectory, "
          "3 initial states per index, 1 core")
    print(f"{'L':>3} {'unbatched/s':>12} {'(n)':>6} {'run_batch/s':>12} {'(n)':>6} {'batch/unbatched':>16} "
          f"{'max|mean diff|':>15}")
    for L in lengths:
        ra, rb, dev = bench_paper(L, n_a[L], n_b[L])
        print(f"{L:3d} {ra:12.1f} {3 * n_a[L]:6d} {rb:12.1f} {3 * n_b[L]:6d} {rb / ra:15.1f}x {dev:15.1e}",
              flush=True)

    if qutip_version is None:
        return
    print("\nPart 2: vs QuTiP mcsolve -- random feedback 0.03 J (both codes), realistic, ONE disorder realization, "
          "leakage initial state (thermal sites 2..L)")
    print(f"{'L':>3} {'cores':>5} {'ntraj':>6} {'qutip/s':>9} {'unbatched/s':>12} {'run_batch/s':>12} "
          f"{'batch/qutip':>12} {'unbatched/qutip':>16} {'max|dP*|/sigma':>15} {'d(int P*)/sigma':>16}")
    for L in lengths:
        for c in cores:
            rq, mq, sq, nq, aq = qutip_side(L, n_q[L], c)
            ru, *_ = lru_vs_qutip_side(L, min(args.lru_unbatched_ntraj, n_q[L]), c, batched=False)
            rl, ml, sl, al = lru_vs_qutip_side(L, n_q[L], c, batched=True)
            z = float(np.max(np.abs(mq - ml) / np.sqrt(sq**2 + sl**2 + 1e-30)))
            z_area = float((al[0] - aq[0]) / np.hypot(al[1], aq[1]))
            print(f"{L:3d} {c:5d} {nq:6d} {rq:9.2f} {ru:12.1f} {rl:12.1f} {rl / rq:11.0f}x {ru / rq:15.1f}x "
                  f"{z:15.2f} {z_area:16.2f}", flush=True)


if __name__ == "__main__":
    main()
