#!/bin/bash
# MPS part of gpu_check.sh alone (batched MPS on the GPU vs unbatched and numpy-batched on the same machine).
set -u
OUT=${OUT:-/tmp/gpu_check}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
timeout 130 python3 benchmarks/mps_batch.py --backend torch:cuda --conditions ideal --rows 64,256,1024 --steps 40 \
  --unbatched 16 --quimb 0 --json "$OUT/mps_ideal.json" 2>&1 | tail -7 | tee "$OUT/mps_ideal.txt"
timeout 110 python3 benchmarks/mps_batch.py --backend torch:cuda --conditions realistic --rows 64,256 --steps 40 \
  --unbatched 16 --quimb 0 --json "$OUT/mps_realistic.json" 2>&1 | grep -v Warn | tail -6 | tee "$OUT/mps_realistic.txt"
timeout 60 python3 benchmarks/mps_batch.py --backend numpy --conditions ideal,realistic --rows 64 --steps 40 \
  --unbatched 0 --quimb 0 --json "$OUT/mps_cpu.json" 2>&1 | tail -6 | tee "$OUT/mps_cpu.txt"
