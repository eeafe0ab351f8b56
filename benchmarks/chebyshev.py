"""Time per sparse product of the sector engine's Chebyshev kernel on the routing grids' large sectors.

The sectors a leakage start with thermal excitations lives in at 100 mK (the first start site of the 5x5 and 4x4
layouts with corner LRUs, one realization): N = 4 on the 5x5 layout (57,816 states), N = 5 and 6 on the 4x4
(91,080 and 412,896).  One core; a random normalized vector per run (a fresh start, so no kept sub-step is
reused); the best of --repeats evolutions by --time (1/J), divided by the number of products (r t).

    python benchmarks/chebyshev.py
    python benchmarks/chebyshev.py --sectors 5x5:4 --time 40 --repeats 3

Measured timings depend on the machine's load: say what else was running.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
from threadpoolctl import threadpool_limits

from lru_mps.engines.sector.chebyshev import ChebyshevBlock
from lru_mps.engines.sector.engine import sector_hamiltonian
from lru_mps.physics import geometry as G
from lru_mps.physics.model import ArraySpec


def bench(R: int, N: int, t: float, repeats: int) -> dict:
    g = G.lru_grid(R, R, "corners", 2)
    spec = ArraySpec.from_user(geometry=g.relabel(G.coding_sites(g)[0], list(g.reset_sites)), temperature="100mK")
    H = sector_hamiltonian(spec, spec.draw_realization(np.random.default_rng(1)), N)
    blk = ChebyshevBlock(H)
    rng = np.random.default_rng(0)
    best = np.inf
    for _ in range(repeats):
        x = rng.normal(size=H.shape[0]) + 1j * rng.normal(size=H.shape[0])
        x /= np.linalg.norm(x)
        t0 = time.perf_counter()
        blk.apply(x, t)
        best = min(best, time.perf_counter() - t0)
    return {"states": H.shape[0], "nonzeros": H.nnz, "products": blk.r * t, "seconds": best}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sectors", default="5x5:4,4x4:5,4x4:6", help="RxR:N items")
    ap.add_argument("--time", type=float, default=20.0, help="evolution time per run (1/J)")
    ap.add_argument("--repeats", type=int, default=2)
    a = ap.parse_args()
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores; one thread")
    print(f"{'layout':>6} {'N':>2} {'states':>8} {'nonzeros':>10} {'ms/product':>11} {'ns/nonzero':>11}")
    with threadpool_limits(1):
        for item in a.sectors.split(","):
            size, N = item.split(":")
            R = int(size.split("x")[0])
            b = bench(R, int(N), a.time, a.repeats)
            per = b["seconds"] / b["products"]
            print(f"{size:>6} {N:>2} {b['states']:>8,} {b['nonzeros']:>10,} {1e3 * per:>11.3f} "
                  f"{1e9 * per / b['nonzeros']:>11.2f}", flush=True)


if __name__ == "__main__":
    main()
