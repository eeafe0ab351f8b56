#!/bin/bash
# GPU check of the batched engines, as run on a lent GPU machine (see BENCHMARKS.md).
# MPS on a GPU runs the padded store (lru_mps/engines/mps/padded.py); numpy runs the compiled row store.
# Needs the wheels of autoray, quimb, cotengra and cytoolz in .whl/ (that machine has no registry);
# writes logs under $OUT.  Each part has its own time limit so that a slow part cannot eat the lease.
set -u
OUT=${OUT:-/tmp/gpu_check}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD:$PWD/tests PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python3 -c "import torch, numpy, scipy; print('torch', torch.__version__, 'numpy', numpy.__version__, 'scipy', scipy.__version__, torch.cuda.get_device_name())"
echo "== GPU tests (tests/test_mps_batch.py -k gpu)"
timeout 100 python3 -m pytest -q -p no:cacheprovider tests/test_mps_batch.py -k gpu 2>&1 | tail -4
echo "== exact engine, L = 6 realistic, numpy vs torch:cuda"
timeout 90 python3 - <<'PY' 2>&1 | tee "$OUT/exact.txt"
import time
import numpy as np
from threadpoolctl import threadpool_limits
from lru_mps.engines.common.arraylib import ArrayLib
from helpers import records_differ  # tests/helpers.py
from lru_mps.run.settings import make_settings
from lru_mps.run.trajectories import run_trajectories
from lru_mps.physics.model import ArraySpec
spec = ArraySpec.from_user(length=6, conditions="realistic")
st = make_settings(spec, t_final=200.0, time_points=101, trajectories=512, seed=0)
with threadpool_limits(1):
    for backend, n in (("numpy", 256), ("torch:cuda", 256), ("torch:cuda", 512)):
        run_trajectories(spec, st, range(4), batched=True, backend=backend)
        t = time.perf_counter(); recs = run_trajectories(spec, st, range(n), batched=True, backend=backend, batch_size=n)
        ArrayLib(backend).synchronize(); dt = time.perf_counter() - t
        if backend == "numpy":
            ref = recs
        else:
            bad = sum(bool(records_differ(a, b, tol=1e-10)) for a, b in zip(recs, ref))
            print(f"  {bad} of {min(n, len(ref))} indices differ from numpy beyond 1e-10")
        print(f"exact L=6 {backend:>10} batch {n:4d}: {3 * n / dt:8.1f} trajectories/s")
PY
echo "== MPS, L = 30, ideal"
timeout 160 python3 benchmarks/mps_batch.py --backend torch:cuda --conditions ideal --rows 64,256,1024 --steps 40 \
  --unbatched 16 --quimb 0 --json "$OUT/mps_ideal.json" 2>&1 | tail -7 | tee "$OUT/mps_ideal.txt"
echo "== MPS, L = 30, realistic"
timeout 110 python3 benchmarks/mps_batch.py --backend torch:cuda --conditions realistic --rows 64,256 --steps 40 \
  --unbatched 16 --quimb 0 --json "$OUT/mps_realistic.json" 2>&1 | tail -6 | tee "$OUT/mps_realistic.txt"
echo "== MPS, L = 30, numpy (compiled row store) on this machine's CPU (same rows as the GPU's first)"
timeout 70 python3 benchmarks/mps_batch.py --backend numpy --conditions ideal,realistic --rows 64 --steps 40 \
  --unbatched 0 --quimb 0 --json "$OUT/mps_cpu.json" 2>&1 | tail -6 | tee "$OUT/mps_cpu.txt"
