"""The base of every state store: capabilities declared one way, and what stores of ordinary states share.

A *state store* holds the states of a batch's rows for the trajectory loop
(:class:`lru_mps.mcwf.store_protocol.StateStore` lists its methods).  Optional
capabilities are declared in :attr:`BatchStore.capabilities` (the loop asks
:meth:`BatchStore.offers`, never ``getattr``):

``advance_regular``
    ``advance_regular(rows, counts, floors)``: many steps of dt in one call
    (integrating stores; :mod:`lru_mps.mcwf.loop`).
``feedback_trains``
    the store builds :mod:`lru_mps.mcwf.trains` feedback trains
    (attribute ``feedback_trains``, None where a run's settings do not use
    them).

Jumps and feedback resets act on one row at a time; a store that holds a
row as an ordinary state (:class:`~lru_mps.mcwf.states.TrajectoryState`)
applies them with :func:`jump` and :func:`reset`, the one arithmetic the
unbatched states use, and observes them with :func:`observe_states` and
:func:`site_level_populations`.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ...physics import operators as ops


class BatchStore:
    """A state store's declared capabilities and its choice of store per array library."""

    #: the optional capabilities this store offers (module docstring)
    capabilities: frozenset[str] = frozenset()

    @classmethod
    def offers(cls, capability: str) -> bool:
        """Whether this store offers ``capability``."""
        return capability in cls.capabilities

    #: whether the store holds N-blocks 0..N_max of its rows (a run then groups its rows by N_max)
    by_number: bool = False

    @classmethod
    def largest_number(cls, spec) -> int | None:
        """The largest initial excitation number N_max of a row this store holds for ``spec`` (None: every row;
        rows above it run one at a time on the engine's ordinary states)."""
        return None

    @classmethod
    def for_backend(cls, backend: str) -> type:
        """The store that runs on ``backend`` (numpy, torch, cupy): this one, unless a store says otherwise."""
        return cls


def jump(state, channel) -> None:
    """A jump channel's operator on an ordinary state, renormalized."""
    state.apply_local(channel.op, channel.site)
    state.scale(1.0 / math.sqrt(state.norm2()))


@lru_cache(maxsize=None)
def _transfer(target: int, outcome: int) -> np.ndarray:
    """|target><outcome| on one qutrit, made once per pair (read-only): the feedback's reset operator."""
    op = np.outer(ops.ket(target), ops.ket(outcome).conj())
    op.setflags(write=False)
    return op


def reset(state, outcome: int, site: int, normalize: bool, target: int = 0) -> None:
    """|target><outcome| on ``site`` of an ordinary state (the feedback reset: target 0; with a readout error
    target = x(m, n), lru_mps.physics.readout), renormalized if ``normalize``."""
    state.apply_local(_transfer(int(target), int(outcome)), site)
    if normalize:
        state.scale(1.0 / math.sqrt(state.norm2()))


def observe_states(states, L: int) -> tuple[np.ndarray, np.ndarray]:
    """Site populations (m, L, 3) and rho_1[1, 0] (m,) of ordinary states, as the loop records them."""
    pops = np.array([s.site_populations() for s in states]).reshape(len(states), L, 3)
    rho10 = np.array([s.site_rdm(0)[1, 0] for s in states], dtype=complex)
    return pops, rho10


def site_level_populations(states, site: int) -> np.ndarray:
    """Level populations (m, 3) of site ``site`` of ordinary states."""
    return np.array([s.site_populations()[site] for s in states]).reshape(len(states), 3)
