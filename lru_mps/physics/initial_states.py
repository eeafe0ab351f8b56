"""The prepared initial states: the coding qubit's state per initial-state name, and the product state of the array."""

from __future__ import annotations

import numpy as np

from . import operators as ops
from ..errors import ParameterError
from .model import INIT_STATES


def site1_state(init: str) -> np.ndarray:
    """The prepared state of the coding qubit (site 1) for an initial-state name."""
    if init == "leakage":
        return ops.ket(2)
    if init == "qubit":
        return ops.ket(1)
    if init == "coherence":
        return (ops.ket(0) + ops.ket(1)) / np.sqrt(2.0)
    raise ParameterError("init", init, f"one of {', '.join(INIT_STATES)}")


def product_state(init: str, levels: np.ndarray) -> list[np.ndarray]:
    """Site vectors of the initial product state: site 1 prepared, others in ``levels``."""
    sites = [ops.ket(int(k)) for k in levels]
    sites[0] = site1_state(init)
    return sites
