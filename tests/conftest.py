import os

import numpy as np
import pytest


def long_scale() -> float:
    """Scale factor for the long validation runs (default 0.25, the reduced form CI runs; LRU_MPS_LONG_SCALE=1 for the full runs)."""
    return float(os.environ.get("LRU_MPS_LONG_SCALE", "0.25"))


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
