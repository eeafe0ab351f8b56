"""Fixed-seed results of the exact and sector engines are bit-identical to those of commit 97e26e2.

The numbers in data/pinned_97e26e2.json were computed on that commit (before
the trajectory loop, the engines and the package layout were restructured):
a SHA-256 of the ensemble means and standard errors of every observable and
of the per-site populations, for exact (batched) and sector (one state at a
time) runs with hardware noise, a hot array, every reset kind and both
estimators.  A restructuring must not change a single bit of them.
"""

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from lru_mps.physics.model import ArraySpec
from lru_mps.run.ensemble import simulate

PINS = json.loads((Path(__file__).parent / "data" / "pinned_97e26e2.json").read_text())
OBS = ("leakage_array", "leakage_site1", "qubit_population", "qubit_coherence")


def _digest(result) -> str:
    h = hashlib.sha256()
    for name in OBS:
        ms = result.observable(name)
        h.update(np.ascontiguousarray(ms.mean, dtype=np.float64).tobytes())
        h.update(np.ascontiguousarray(ms.sem, dtype=np.float64).tobytes())
    for init in sorted(result.blocks):
        h.update(np.ascontiguousarray(result.site_resolved(init).mean, dtype=np.float64).tobytes())
    return h.hexdigest()


@pytest.mark.parametrize("name", sorted(PINS))
def test_bit_identical_to_pinned(name):
    case = PINS[name]
    result = simulate(ArraySpec.from_user(**case["spec"]), **case["run"])
    for obs in OBS:
        mean = result.observable(obs).mean
        assert float(mean[-1]).hex() == case["values"][obs]["last_mean"], obs
        assert float(mean[len(mean) // 2]).hex() == case["values"][obs]["mid_mean"], obs
    assert _digest(result) == case["sha256"]
