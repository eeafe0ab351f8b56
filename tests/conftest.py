import os

import numpy as np
import pytest


def long_scale() -> float:
    """Scale factor for the long validation runs (CI sets LRU_MPS_LONG_SCALE < 1)."""
    return float(os.environ.get("LRU_MPS_LONG_SCALE", "1"))


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
