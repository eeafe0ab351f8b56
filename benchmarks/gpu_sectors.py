"""The sector engine's Chebyshev propagation on the CPU and on a GPU: the routing study's big sectors.

The sectors a leakage start with thermal excitations lives in at 100 mK on the
routing study's layouts (corner LRUs, arms of two transmons; the first coding
site as the start, one disorder realization, the same as benchmarks/chebyshev.py):
N = 4 on the 5x5 layout (33 transmons, 57,816 states) and N = 6 on the 4x4
layout (24 transmons, 412,896 states).  Each path evolves m random
normalized rows of the sector (``--rows`` on a GPU, ``--cpu-rows`` for the
CPU library paths) by ``--time`` (1/J; about r t sparse products,
r = 81 and 115 J, the half-widths of the two spectra), each evolution from a fresh
start (no kept sub-step reused), best of ``--repeats``, after one warm-up
evolution (compilation, the GPU's context and sparse-library setup):

    numba       the compiled kernel (lru_mps.engines.sector.chebyshev, the engine's default), one row (the
                engine runs rows one at a time: m rows cost m times as much)
    scipy       the library path (lru_mps.engines.sector.array_chebyshev) on numpy: scipy's sparse products,
                all rows in one sparse matrix-matrix product per order
    torch:cpu   the same on torch's CPU tensors (only if asked: --paths)
    torch:cuda  the same on a CUDA GPU (torch.sparse_csr, cuSPARSE), skipped with a line where there is none
    cupy        the same on cupyx.scipy.sparse, skipped with a line where cupy is not installed

Every CPU path runs on one core (one BLAS thread, one torch thread).  The
table gives the seconds of one evolution of all rows, seconds per row, ms per
sparse product (per row product for numba; per matrix-matrix product for the
others), the speedup per row over numba and the largest difference of the
first row from numba's (the two expansions agree to rounding).

    python benchmarks/gpu_sectors.py                                   # both sectors, all paths present
    python benchmarks/gpu_sectors.py --sectors 5x5:4 --time 1 --cpu-rows 1,4 --repeats 1   # a quick CPU look
    python benchmarks/gpu_sectors.py --time 5 --rows 1,16,64 --json /tmp/gpu_sectors.json  # on a GPU machine

Measured timings depend on the machine's load: say what else was running.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import sys
import time

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from lru_mps.engines.sector.array_chebyshev import ArrayChebyshevBlock  # noqa: E402
from lru_mps.engines.sector.chebyshev import ChebyshevBlock  # noqa: E402
from lru_mps.engines.sector.engine import sector_hamiltonian  # noqa: E402
from lru_mps.physics import geometry as G  # noqa: E402
from lru_mps.physics.model import ArraySpec  # noqa: E402

PATHS = ("numba", "scipy", "torch:cpu", "torch:cuda", "cupy")
DEFAULT_PATHS = "numba,scipy,torch:cuda,cupy"


def sector(R: int, N: int):
    """H_eff of the N sector of the R x R routing layout at 100 mK (first coding site as the start)."""
    g = G.lru_grid(R, R, "corners", 2)
    spec = ArraySpec.from_user(geometry=g.relabel(G.coding_sites(g)[0], list(g.reset_sites)), temperature="100mK")
    return sector_hamiltonian(spec, spec.draw_realization(np.random.default_rng(1)), N)


def missing(path: str) -> str | None:
    """Why ``path`` cannot run here (None: it can)."""
    if path in ("numba", "scipy"):
        return None
    lib = path.partition(":")[0]
    if importlib.util.find_spec(lib) is None:
        return f"{lib} is not installed"
    if path == "torch:cuda":
        import torch

        if not torch.cuda.is_available():
            return "no CUDA GPU"
    if path == "cupy":
        try:
            import cupy

            cupy.cuda.runtime.getDeviceCount()
        except Exception as err:  # (no driver, no device)
            return f"no GPU for cupy ({type(err).__name__})"
    return None


def _starts(n: int, m: int, seed: int) -> np.ndarray:
    """m random normalized rows (n, m), column j drawn from seed (seed, j): the same first row for every m."""
    cols = []
    for j in range(m):
        rng = np.random.default_rng([seed, j])
        x = rng.normal(size=n) + 1j * rng.normal(size=n)
        cols.append(x / np.linalg.norm(x))
    return np.stack(cols, axis=1)


def bench(H, path: str, rows: int, t: float, repeats: int, reference: np.ndarray | None) -> dict:
    """One path's best time to evolve ``rows`` fresh rows by t, and its first row's difference from ``reference``."""
    n = H.shape[0]
    blk = ChebyshevBlock(H) if path == "numba" else ArrayChebyshevBlock(H, "numpy" if path == "scipy" else path)
    warm = _starts(n, rows, 99)
    blk.apply(warm[:, 0] if path == "numba" else warm, min(t, 0.05 * blk.tau_s))  # warm-up (a few products)
    best, first = np.inf, None
    for rep in range(repeats):
        x = _starts(n, rows, rep)
        before = blk.products
        t0 = time.perf_counter()
        y = blk.apply(x[:, 0] if path == "numba" else x, t)  # (a host result: the device's work is done)
        seconds = time.perf_counter() - t0
        products = blk.products - before
        best = min(best, seconds)
        if rep == 0:
            first = y if path == "numba" else y[:, 0]
    out = dict(path=path, rows=rows, seconds=best, per_row=best / rows, products=products,
               ms_per_product=1e3 * best / products, first_row=first)
    out["max_diff"] = None if reference is None else float(np.abs(first - reference).max())
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sectors", default="5x5:4,4x4:6", help="RxR:N items (5x5:4: 57,816 states; 4x4:6: 412,896)")
    ap.add_argument("--time", type=float, default=20.0, help="evolution time per run (1/J)")
    ap.add_argument("--rows", default="1,16", help="rows evolved together on a GPU (comma-separated)")
    ap.add_argument("--cpu-rows", default="1", help="rows evolved together by the CPU library paths (scipy, torch:cpu)")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--paths", default=DEFAULT_PATHS, help=f"some of {', '.join(PATHS)}")
    ap.add_argument("--json", default=None, help="write the rows of the table here")
    a = ap.parse_args()
    paths = [p.strip() for p in a.paths.split(",") if p.strip()]
    bad = [p for p in paths if p not in PATHS]
    if bad:
        ap.error(f"--paths: {', '.join(bad)} not among {', '.join(PATHS)}")
    rows = [int(r) for r in a.rows.split(",")]
    cpu_rows = [int(r) for r in a.cpu_rows.split(",")]
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores; CPU paths on one core; "
          f"t = {a.time:g}/J, best of {a.repeats}")
    runnable = []
    for p in paths:
        why = missing(p)
        if why is None:
            runnable.append(p)
        else:
            print(f"{p}: skipped ({why})")
    if any(p.startswith("torch") for p in runnable):
        import torch

        torch.set_num_threads(1)
        print(f"torch {torch.__version__}" + (f", {torch.cuda.get_device_name()}" if "torch:cuda" in runnable else ""))
    head = (f"{'layout':>6} {'N':>2} {'states':>8} {'nonzeros':>10} {'path':>10} {'rows':>5} {'s/evolution':>12} "
            f"{'s/row':>9} {'ms/product':>11} {'vs numba':>9} {'max diff':>9}")
    print(head)
    table = []
    with threadpool_limits(1):
        for item in a.sectors.split(","):
            size, N = item.split(":")
            R = int(size.split("x")[0])
            t0 = time.perf_counter()
            H = sector(R, int(N))
            print(f"  ({size} N = {N}: {H.shape[0]:,} states built in {time.perf_counter() - t0:.1f} s)", flush=True)
            ref, numba_row = None, float("nan")
            for path in runnable:
                for m in ([1] if path == "numba" else cpu_rows if path in ("scipy", "torch:cpu") else rows):
                    b = bench(H, path, m, a.time, a.repeats, ref)
                    if path == "numba":
                        ref, numba_row = b["first_row"], b["per_row"]
                    speed = numba_row / b["per_row"]
                    diff = "" if b["max_diff"] is None else f"{b['max_diff']:.1e}"
                    print(f"{size:>6} {N:>2} {H.shape[0]:>8,} {H.nnz:>10,} {path:>10} {m:>5} {b['seconds']:>12.3f} "
                          f"{b['per_row']:>9.4f} {b['ms_per_product']:>11.3f} {speed:>8.1f}x {diff:>9}", flush=True)
                    table.append({**b, "layout": size, "N": int(N), "states": H.shape[0], "nonzeros": H.nnz})
    if a.json:
        rows_out = [{k: v for k, v in r.items() if k != "first_row"} for r in table]
        with open(a.json, "w") as f:
            json.dump({"machine": platform.machine(), "cores": os.cpu_count(), "time": a.time, "rows": rows_out}, f,
                      indent=1)


if __name__ == "__main__":
    main()
