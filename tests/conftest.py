import os

import numpy as np
import pytest


def long_scale() -> float:
    """Scale factor for the long validation runs (default 0.25, the reduced form CI runs; LRU_MPS_LONG_SCALE=1 for the full runs)."""
    return float(os.environ.get("LRU_MPS_LONG_SCALE", "0.25"))


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture(autouse=True)
def _one_blas_thread():
    """Small matrices: one BLAS thread (threaded OpenBLAS on a busy 2-core machine is 10-100x slower)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield
