"""Trajectories per second of the sector engine (and the MPS engine, and QuTiP's mcsolve where it can run).

Realistic conditions (the paper's T1q, Tphi, 100 mK), periodic feedback at
0.03 J, the default grid (201 points) to t = 1000/J unless --t-final says
otherwise; one core (one BLAS thread), trajectories run one index at a time
through run_trajectories, i.e. exactly as a block of a study runs them.
A "trajectory" is one row (index, initial state); the mean time per row and
its spread over the sampled initial states (whose largest sector N0 sets the
cost) are printed per L, with the mix of N0.

    python benchmarks/sector.py                      # L = 10, 20, 40, 24 indices each
    python benchmarks/sector.py --lengths 20 --indices 60 --t-final 1000
    python benchmarks/sector.py --engines sector,mps --lengths 10 --indices 2 --t-final 5
    python benchmarks/sector.py --qutip --lengths 4,6   # QuTiP mcsolve (if installed), L <= 8
    python benchmarks/sector.py --thermal-bath --engines auto,mps --lengths 16 --indices 2 --t-final 100

Measured timings depend on the machine's load: say what else was running.
"""

from __future__ import annotations

import argparse
import collections
import os
import time

import numpy as np
from threadpoolctl import threadpool_limits

from lru_mps.physics.model import ArraySpec
from lru_mps.run.settings import make_settings
from lru_mps.run.trajectories import draw, run_trajectories


def bench(L: int, engine: str, indices: int, t_final: float, time_points: int, temperature: str, seed: int,
          verbose: bool = False, options: dict | None = None, thermal_bath: bool = False) -> dict:
    spec = ArraySpec.from_user(length=L, temperature=temperature, thermal_bath=thermal_bath)
    settings = make_settings(spec, engine=engine, t_final=t_final, time_points=time_points, trajectories=indices,
                             seed=seed, engine_options=options)
    run_trajectories(spec, settings, [0])  # warm-up: compiled kernels, sector bases
    per_n = collections.defaultdict(list)
    total, rows, handed = 0.0, 0, 0
    for i in range(indices):
        d = draw(spec, settings, i)
        t0 = time.perf_counter()
        recs = run_trajectories(spec, settings, [i])[0]
        dt = time.perf_counter() - t0
        handed += sum(int(r.diagnostics.get("handed_over", 0)) for r in recs.values())
        total += dt
        rows += len(settings.inits)
        per_n[d.nmax].append(dt / len(settings.inits))
        if verbose:
            print(f"  L={L} index {i}: N0 per initial state {d.nmax_per_init}, {dt:.3f} s", flush=True)
    return {"L": L, "engine": settings.engine, "rows": rows, "seconds": total, "per_row": total / rows, "handed": handed,
            "by_nmax": {n: (len(v), float(np.mean(v))) for n, v in sorted(per_n.items())}}


def bench_qutip(L: int, ntraj: int, t_final: float, time_points: int, seed: int) -> dict | None:
    """QuTiP mcsolve against the sector engine on one model mcsolve can run: engineered dissipation at the
    reset site instead of feedback (mcsolve has no measurement clock), noise, 0 K, |2> on the qubit."""
    try:
        import qutip
    except ImportError:
        return None
    spec = ArraySpec.from_user(length=L, reset="dissipation", rate="0.03J", temperature=0)
    ours = make_settings(spec, engine="sector", init="leakage", t_final=t_final, time_points=time_points,
                         trajectories=ntraj, seed=seed)
    run_trajectories(spec, ours, [0])
    t0 = time.perf_counter()
    run_trajectories(spec, ours, range(ntraj))
    sector_per_row = (time.perf_counter() - t0) / ntraj
    real = spec.draw_realization(np.random.default_rng(seed))
    from lru_mps.physics import operators as ops

    dims = [3] * L

    def site(op, l):
        return qutip.tensor([qutip.Qobj(op) if k == l else qutip.qeye(3) for k in range(L)])

    h = spec.onsite_terms(real)
    H = sum(site(np.real(np.diag(np.diagonal(h[l]))).astype(complex), l) for l in range(L))
    H += sum(site(ops.adag, l) * site(ops.a, l + 1) + site(ops.a, l) * site(ops.adag, l + 1) for l in range(L - 1))
    c_ops = [np.sqrt(ch.rate) * site(ch.op, ch.site) for ch in spec.jump_channels()]
    psi0 = qutip.tensor([qutip.basis(3, 2)] + [qutip.basis(3, 0)] * (L - 1))
    times = np.linspace(0, t_final, time_points)
    t0 = time.perf_counter()
    qutip.mcsolve(H, psi0, times, c_ops, e_ops=[site(ops.n, 0)], ntraj=ntraj, options={"progress_bar": False})
    dt = time.perf_counter() - t0
    return {"L": L, "engine": "qutip-mcsolve", "rows": ntraj, "seconds": dt, "per_row": dt / ntraj, "dims": dims,
            "sector_per_row": sector_per_row}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lengths", default="10,20,40")
    ap.add_argument("--engines", default="auto", help="sector, mps or auto (per trajectory, what a run uses)")
    ap.add_argument("--indices", type=int, default=24, help="trajectory indices per L (3 rows each)")
    ap.add_argument("--t-final", type=float, default=1000.0)
    ap.add_argument("--time-points", type=int, default=201)
    ap.add_argument("--temperature", default="100mK")
    ap.add_argument("--thermal-bath", action="store_true", help="a thermal bath on every site (heating raises N: "
                    "auto hands sector rows over to MPS past its limit)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--qutip", action="store_true", help="also QuTiP mcsolve (L <= 8; needs qutip installed)")
    ap.add_argument("--verbose", action="store_true", help="one line per trajectory index")
    ap.add_argument("--eig-max-dim", type=int, default=None, help="sector engine: eigendecomposition up to this size")
    args = ap.parse_args()
    print(f"# one core; load average at start {os.getloadavg()[0]:.2f}; t_final = {args.t_final}/J, "
          f"{args.time_points} points, {args.temperature}" + (", thermal bath" if args.thermal_bath else ""))
    with threadpool_limits(limits=1, user_api="blas"):
        for L in [int(x) for x in args.lengths.split(",")]:
            for engine in args.engines.split(","):
                opts = {"eig_max_dim": args.eig_max_dim} if args.eig_max_dim and engine in ("sector", "auto") else None
                r = bench(L, engine, args.indices, args.t_final, args.time_points, args.temperature, args.seed,
                          args.verbose, opts, args.thermal_bath)
                mix = ", ".join(f"N0={n}: {c} idx {t:.3f} s/row" for n, (c, t) in r["by_nmax"].items())
                print(f"L={L:3d} {r['engine']:6s} {r['rows']:5d} rows  {r['per_row']:.4f} s/row  "
                      f"{1.0 / r['per_row']:.2f} rows/s   [{mix}]" + (f" {r['handed']} handed over" if r["handed"] else ""),
                      flush=True)
            if args.qutip and L <= 8:
                q = bench_qutip(L, 3 * args.indices, args.t_final, args.time_points, args.seed)
                print(f"L={L:3d} qutip  " + ("not installed" if q is None else
                                             f"{q['rows']:5d} rows  {q['per_row']:.4f} s/row (mcsolve), "
                                             f"{q['sector_per_row']:.4f} s/row (sector engine, same model: "
                                             f"dissipation reset, 0 K, |2> on the qubit)"), flush=True)
    print(f"# load average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
