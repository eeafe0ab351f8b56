"""Single-qutrit operators (levels |0>, |1>, |2>; |2> is leakage).

``a`` is the bosonic annihilation operator truncated to three levels:
a|1> = |0>, a|2> = sqrt(2)|1>.
"""

from __future__ import annotations

import numpy as np

D = 3  #: local dimension of a transmon (qutrit)

a = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, np.sqrt(2.0)], [0.0, 0.0, 0.0]], dtype=complex)
adag = a.conj().T
n = np.diag([0.0, 1.0, 2.0]).astype(complex)
#: leakage projector |2><2| = n (n - 1) / 2
leak = np.diag([0.0, 0.0, 1.0]).astype(complex)
#: qubit lowering operator sigma^- = |0><1|
sigma_minus = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], dtype=complex)
identity = np.eye(D, dtype=complex)


def ket(level: int) -> np.ndarray:
    """Basis vector |level> of one qutrit."""
    v = np.zeros(D, dtype=complex)
    v[level] = 1.0
    return v


def projector(level: int) -> np.ndarray:
    """|level><level| on one qutrit."""
    return np.outer(ket(level), ket(level).conj())


def reset_op(level: int) -> np.ndarray:
    """|0><level|: the feedback reset after measuring ``level``."""
    return np.outer(ket(0), ket(level).conj())
