"""A trajectory's thermal start: the J = 0 Gibbs sample of sites 2..L, stratified and thinned, with its weight.

Under realistic conditions every trajectory starts from a product state
sampled from the single-site Gibbs weights of sites 2..L
(:meth:`~lru_mps.physics.model.ArraySpec.thermal_probabilities`).  Two
unbiased ways to spend the trajectories where the variance is
(docs/physics.md §6.5), each returning a weight that the row carries:

* :func:`stratified_levels` (``leakage_thermal_odds`` r): a leakage
  start's rows whose array holds a thermal excitation are rare (3 % at
  L = 3, 14 % at L = 8, 100 mK) but carry most of the variance of
  P_star^(L): a thermal excitation can block the stack, whose leakage then
  stays until it decays by itself, so such a row's P_star^(L) is ~0 or ~1
  (measured per-row spread of the T_star fit 14x that of an empty-array
  row at L = 4, 18x at L = 8).  They are drawn at r times their natural
  odds, with weights that make E[weight x value] the ensemble value.  Each
  row picks its stratum at random (rows stay independent, so the jackknife
  errors stay right); the empty rows' weights then grow, and where they
  carry most of the mean (the leakage lifetime at L >= 10) the odds cost
  more than they buy.  A stratum picked by a low-discrepancy sequence over
  the indices removed that cost but made the block jackknife see count
  fluctuations the total does not have (tau_L's error 1.65x the scatter over
  24 seeds at L = 8): not used.
  Neyman allocation: r = (spread of excited rows) / (spread of empty
  ones), per unit cost.
* :func:`thin_hot_tail` (``hot_tail`` f): Russian roulette on the rows with
  at least :data:`~lru_mps.defaults.HOT_TAIL_FROM` thermal excitations.
"""

from __future__ import annotations

import numpy as np

from ..defaults import HOT_TAIL_FROM
from ..physics.model import ArraySpec, Realization


def thermal_start(spec: ArraySpec, real: Realization, init: str, rng: np.random.Generator,
                  settings) -> tuple[np.ndarray, float]:
    """Levels of sites 1..L (site 1: 0, prepared separately) and the row's weight, drawn from ``rng``.

    Natural Gibbs sample (``spec.thermal_levels``: L - 1 uniforms) unless
    the settings stratify this initial state (:func:`stratified_levels`:
    L + 2 uniforms), then the hot tail's roulette (one more uniform for a
    tail row when ``hot_tail`` > 1).  With both off the draws are those of every earlier
    version (the same numbers, bit for bit).
    """
    odds = settings.leakage_thermal_odds if init == "leakage" else 1.0
    if odds != 1.0:
        levels, weight = stratified_levels(spec.thermal_probabilities(real)[1:], rng.random(spec.L + 2), odds)
    else:
        levels, weight = spec.thermal_levels(real, rng), 1.0
    levels, tail = thin_hot_tail(levels, rng, settings.hot_tail)
    return levels, weight * tail


def stratified_levels(p: np.ndarray, u: np.ndarray, odds: float) -> tuple[np.ndarray, float]:
    """Levels of sites 1..L from per-site Gibbs weights ``p`` (L - 1, 3) of sites 2..L, stratified: (levels, weight).

    The strata are "interior empty" (sites 2..L-1 in |0>, natural
    probability P0 = prod_l p_l0) and "interior excited" (1 - P0); the reset
    site L is drawn from its own weights in either (a thermal excitation
    there is reset at the first measurement and blocks nothing).  The row is
    excited with probability q, q/(1 - q) = odds (1 - P0)/P0, if u[0] < q,
    with weight (1 - P0)/q, else empty with weight P0/(1 - q).  An excited
    interior is drawn exactly from the Gibbs weights conditioned on at least
    one excitation: the first excited site k with probability
    prod_{j<k} p_j0 (1 - p_k0) / (1 - P0) (u[1]), its level 1 or 2 in
    proportion p_k1 : p_k2 (u[2]), the sites after k from their own weights
    (u[3 + j] for site j + 2).  ``u``: L + 2 uniforms.
    """
    n = p.shape[0]
    levels = np.zeros(n + 1, dtype=int)
    cum = np.cumsum(p, axis=1)[:, :2]
    levels[n] = int((u[2 + n] > cum[n - 1]).sum())  # the reset site, from its own weights
    inner = p[:-1]
    P0 = float(np.prod(inner[:, 0]))
    excited = 1.0 - P0
    if excited <= 0.0:  # L = 2 (no interior) or 0 K: one stratum, the natural sample
        return levels, 1.0
    q = odds * excited / (odds * excited + P0)
    if u[0] >= q:
        return levels, P0 / (1.0 - q)
    first = np.cumprod(np.concatenate(([1.0], inner[:-1, 0]))) * (1.0 - inner[:, 0])  # P(first excited = k)
    k = min(int(np.searchsorted(np.cumsum(first), u[1] * excited, side="right")), n - 2)
    while first[k] == 0.0:  # rounding at the top end: the last site that can be the first excited one
        k -= 1
    levels[k + 1] = 1 if u[2] * (1.0 - inner[k, 0]) < inner[k, 1] else 2
    levels[k + 2:n] = (u[3 + k + 1:2 + n][:, None] > cum[k + 1:n - 1]).sum(axis=1)
    return levels, excited / q


def thin_hot_tail(levels: np.ndarray, rng: np.random.Generator, factor: float) -> tuple[np.ndarray, float]:
    """Russian roulette on the thermal sample's hot tail: (levels to run, the row's weight).

    A row whose array holds at least :data:`~lru_mps.defaults.HOT_TAIL_FROM`
    thermal excitations (|2> counts 2) costs most (the largest sectors;
    BENCHMARKS.md) and is rare (2 % at L = 20, 100 mK).  With ``factor`` f > 1
    it runs with probability 1/f (one more uniform from its stream) and
    weight f; otherwise it contributes 0: it runs with weight 0 from the
    empty array, the cheapest row.  E[weight x value] is the ensemble value
    (unbiased); the tail's share of the variance grows by f, its share of
    the cost shrinks by f.  f = 1 draws nothing (the numbers of today).
    """
    if factor == 1.0 or int(np.sum(levels)) < HOT_TAIL_FROM:
        return levels, 1.0
    if rng.random() * factor < 1.0:
        return levels, factor
    return np.zeros_like(levels), 0.0
