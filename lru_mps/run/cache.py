"""The resumable block cache: finished blocks of trajectories on disk, one file each.

A run is identified by a key, a hash of everything that determines its
numbers (the physics spec, the run settings, a fixed realization if any).
Each finished block is written atomically (temporary file + rename) as
``<folder>/<key>/block_NNN.npz``; a repeated run loads the blocks that exist
and computes only the missing ones.  Because a trajectory's numbers depend
only on (seed, index, init) and blocks are merged in block order, a resumed
run ends with exactly the numbers of an uninterrupted one.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np

from ..atomic import atomic_target, atomic_write_bytes
from ..physics.model import ArraySpec, Realization
from .blocks import BlockResult
from .settings import RunSettings, plain_options


def run_key(spec: ArraySpec, settings: RunSettings, realization: Realization | None = None) -> tuple[str, dict]:
    """A short stable hash of everything that determines a run's numbers, and the description it hashes."""
    desc = {
        "spec": spec.as_dict(),
        "times": [float(x) for x in settings.times],
        "engine": settings.engine,
        "estimator": settings.estimator,
        "inits": list(settings.inits),
        "engine_options": {k: settings.engine_options[k] for k in sorted(settings.engine_options)},
    }
    for name, option in plain_options().items():  # each option's entry as it declares it (none where neutral)
        entry = option.key(settings) if option.key is not None else None
        if entry is not None:
            desc[name] = entry
    if settings.engine in ("sector", "auto"):  # (the rule that picks a block's propagator: a change of it changes the key)
        from ..engines.sector.engine import block_rule

        desc["sector_blocks"] = block_rule()
    if realization is not None:
        desc["realization"] = [list(map(float, realization.dw)), list(map(float, realization.U))]
        if realization.J is not None:  # per-bond couplings (absent when uniform: earlier keys stay valid)
            desc["realization"].append(list(map(float, realization.J)))
    text = json.dumps(desc, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16], desc


class BlockCache:
    """A folder of finished blocks of trajectories (on disk), keyed by run."""

    def __init__(self, folder: str | os.PathLike):
        self.folder = Path(folder)

    def _dir(self, key: str) -> Path:
        return self.folder / key

    def describe(self, key: str, desc: dict) -> None:
        """Write a human-readable manifest of the run once."""
        path = self._dir(key) / "manifest.json"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(path, (json.dumps(desc, indent=1, default=str) + "\n").encode())

    def load(self, key: str, block: int) -> BlockResult | None:
        path = self._dir(key) / f"block_{block:03d}.npz"
        if not path.exists():
            return None
        with np.load(path, allow_pickle=False) as data:
            return BlockResult.from_arrays({k: data[k] for k in data.files})

    def save(self, key: str, result: BlockResult) -> None:
        with atomic_target(self._dir(key) / f"block_{result.index:03d}.npz", suffix=".npz") as tmp:
            np.savez(tmp, **result.to_arrays())
