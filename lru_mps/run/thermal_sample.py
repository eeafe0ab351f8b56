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
* :class:`ThermalStrata` (``thermal_strata``): a fixed allocation of the
  rows to the configurations of sites 2..L (strata), so that every
  configuration above a stated weight is drawn by construction;
  the row carries its stratum's natural probability and the ensemble
  statistics combine the strata (:class:`~lru_mps.run.statistics.StratifiedAccumulator`).
  Enumerated for 3 <= L <= :data:`MAX_SITES` + 1 (``thermal_strata`` true or
  "all"); on a longer array (``thermal_strata = "all"`` only) a stratum is a
  configuration of the :data:`MAX_SITES` sites next to the qubit (sites
  2..MAX_SITES+1, those whose thermal excitation blocks the stack), the
  sites after them drawn from their own Gibbs weights in every stratum: the
  row's stratum probability is the product over the stratified sites only
  (the natural rest integrates out of every stratum's mean).
* :class:`~lru_mps.run.thermal_number.NumberOdds` (``thermal_strata = "cost"``):
  each row's number of thermal excitations drawn at odds ~ Gibbs weight /
  sqrt(its sector's cost), weighted back (self-normalized); for large arrays,
  where the rows' costs differ by orders of magnitude.
"""

from __future__ import annotations

import functools
import itertools
import json
from dataclasses import dataclass

import numpy as np

from ..defaults import HOT_TAIL_FROM
from ..errors import require
from ..physics.model import ArraySpec, Realization
from .thermal_number import NumberOdds, build_odds, tail_distributions

#: a configuration of sites 2..L with at least this nominal weight gets a stratum of its own (the others
#: share one stratum, drawn from their Gibbs weights); docs/physics.md §6.5
STRATUM_MIN_WEIGHT = 1e-7
#: rows every stratum gets at least (the number of trajectory blocks: each block then holds every stratum, so that
#: the leave-one-block-out estimates keep every stratum); fewer only when the run has under 4 x this per stratum
STRATUM_MIN_ROWS = 16
#: at most this many strata of their own (the most probable configurations)
MAX_STRATA = 64
#: the most sites (2..L) whose configurations are enumerated into strata (3^6 = 729 of them: L <= 7)
MAX_SITES = 6
#: strata of a long array (L > MAX_SITES + 1): its most probable configuration of sites 2..MAX_SITES+1 (the empty
#: one) and one shared stratum of the others.  An own stratum of small weight would hold its STRATUM_MIN_ROWS rows
#: with a thermal excitation, which at L = 10 cost ~7x an empty row's (a larger sector, the decay integrated out):
#: more strata spend the CPU where the allocation did not ask for it (docs/benchmarks.md)
LONG_STRATA = 2
#: realizations (from a fixed stream) over which the nominal weights that set the allocation are averaged
NOMINAL_REALIZATIONS = 32


def thermal_start(spec: ArraySpec, real: Realization, init: str, rng: np.random.Generator,
                  settings) -> tuple[np.ndarray, float]:
    """Levels of sites 1..L (site 1: 0, prepared separately) and the row's weight, drawn from ``rng``.

    Natural Gibbs sample (``spec.thermal_levels``: L - 1 uniforms) unless
    the settings stratify this initial state (:func:`stratified_levels`:
    L + 2 uniforms), then the hot tail's roulette (one more uniform for a
    tail row when ``hot_tail`` > 1).  With both off the draws are those of every earlier
    version (the same numbers, bit for bit).  A run with ``thermal_strata``
    draws from its row's stratum instead (:meth:`ThermalStrata.draw`: 2 uniforms; see :func:`thermal_start_row`).
    """
    return thermal_start_row(spec, real, init, rng, settings, None)[:2]


def thermal_start_row(spec: ArraySpec, real: Realization, init: str, rng: np.random.Generator, settings,
                      index: int | None) -> tuple[np.ndarray, float, int | None, float]:
    """As :func:`thermal_start`, for trajectory ``index``: (levels, weight, stratum, stratum probability).

    Under ``thermal_strata`` (:func:`strata_for`) the row's stratum is fixed by its index (the run's plan) and
    its weight is the stratum's natural probability P(s | realization); the hot tail is not thinned there (the
    short arrays it applies to are cheap, and the strata's estimate stays exactly normalized).  Otherwise the
    stratum is None and the probability 1.
    """
    strata = strata_for(spec, settings, init) if index is not None else None
    cap = thermal_cap(spec, settings, init)
    if strata is not None:
        s = int(strata.plan[index])
        natural = spec.L - 1 - strata.n_sites  # sites after the stratified ones (long arrays), one uniform each
        levels, prob = strata.draw(s, spec.thermal_probabilities(real)[1:], rng.random(2 + natural))
        _check_cap(spec, levels, cap, init, "thermal_strata", settings.thermal_strata)
        return levels, prob, s, prob  # (no hot tail's roulette: a stratified start is normalized exactly)
    odds = settings.leakage_thermal_odds if init == "leakage" else 1.0
    if odds != 1.0:
        levels, weight = stratified_levels(spec.thermal_probabilities(real)[1:], rng.random(spec.L + 2), odds)
        _check_cap(spec, levels, cap, init, "leakage_thermal_odds", odds)
    else:
        levels, weight = spec.thermal_levels(real, rng), 1.0
        if cap is not None and int(levels.sum()) > cap:  # the Gibbs sample conditioned on a start the engine holds
            require(excess_mass(spec.thermal_probabilities(real)[1:], cap) < MAX_EXCESS, "temperature",
                    f"{1e3 * spec.conditions.temperature_K:g} mK", f"thermal starts that fit the sector engine's "
                    f"limit with probability > {1 - MAX_EXCESS:g} on L = {spec.L} sites", "a lower temperature")
            while int(levels.sum()) > cap:
                levels = spec.thermal_levels(real, rng)
    levels, tail = thin_hot_tail(levels, rng, settings.hot_tail)
    return levels, weight * tail, None, 1.0


#: the largest share of a realization's thermal starts that the cap of :func:`thermal_cap` may leave out (above it
#: the run is refused: the conditioned sample would be another array's, and drawing it would loop); the share
#: left out is reported whatever it is (``thermal_mass_dropped``)
MAX_EXCESS = 0.5


def start_number(init: str) -> int:
    """The largest excitation number site 1 brings into a start (|2>: 2; |1> and (|0> + |1>)/sqrt 2: 1)."""
    return 2 if init == "leakage" else 1


def thermal_cap(spec: ArraySpec, settings, init: str) -> int | None:
    """The most thermal excitations (|2> counts 2) that a start of ``init`` may hold on the run's engine, or None
    where every start fits (docs/physics.md §6.5).

    Only the sector engine has such a limit: a start whose N sector has more than
    :data:`~lru_mps.engines.sector.state.MAX_SECTOR_DIM` states does not fit it (on a graph no other engine
    takes it; on a chain ``engine = "auto"`` gives such rows to MPS).  There the thermal sample is drawn
    conditioned on at most this many excitations (:func:`thermal_start_row`), and every row reports the mass
    of the Gibbs sample left out, :func:`excess_mass` (``thermal_mass_dropped``).
    """
    if getattr(settings, "engine", None) != "sector" or spec.conditions.temperature_K == 0.0:
        return None
    from ..engines.sector import state as sector

    n_max = sector.largest_number(spec.L, sector.MAX_SECTOR_DIM)
    return None if n_max is None else n_max - start_number(init)


def number_distribution(p: np.ndarray, n_max: int) -> np.ndarray:
    """P(sum of the levels = n), n = 0..n_max, for independent sites with level weights ``p`` (n_sites, 3) (|2>
    counts 2; the mass above n_max is left out of the array)."""
    return tail_distributions(np.asarray(p, dtype=float).reshape(-1, 3), n_max)[0]


def excess_mass(p: np.ndarray, cap: int) -> float:
    """P(sum of the levels > cap) for independent sites with Gibbs weights ``p`` (n, 3): the thermal starts that
    :func:`thermal_cap` leaves out (|2> counts 2)."""
    return float(max(0.0, 1.0 - number_distribution(p, cap).sum()))


def _check_cap(spec: ArraySpec, levels: np.ndarray, cap: int | None, init: str, option: str, value) -> None:
    """A weighted thermal sample (strata, odds) cannot be conditioned on the engine's cap: refused by name."""
    require(cap is None or int(levels.sum()) <= cap, option, value,
            f"the natural sample where a thermal start can exceed the sector engine's limit (the {init} start drew "
            f"{int(levels.sum())} thermal excitations on L = {spec.L} sites, at most {cap} fit)",
            "the natural thermal sample conditions on the starts that fit")


@dataclass(frozen=True)
class ThermalStrata:
    """The strata of a run's thermal start and its row plan (docs/physics.md §6.5).

    A stratum is a configuration of sites 2..K+1 (``configs[s]``, one level per
    site, K = :attr:`n_sites`: L - 1, or :data:`MAX_SITES` on a long array,
    whose sites after K+1 are drawn from their own Gibbs weights in every
    stratum), or, for the last stratum when ``rest`` is not empty, every
    configuration listed there (drawn in proportion to its Gibbs weight).
    ``counts[s]`` rows go to stratum s, interleaved over the indices
    (``plan[i]``: the stratum of trajectory i) so that every contiguous block
    of trajectories holds each stratum in proportion.  ``nominal[s]``: the
    stratum's weight averaged over :data:`NOMINAL_REALIZATIONS` realizations
    (it sets the allocation only; the rows carry their own realization's
    probability).  ``stated_weight``: every configuration of larger nominal
    weight has a stratum of its own.  ``groups[s]``: strata that differ only
    at the reset site share a group (their rows are alike after the first
    measurement; the resolved mask uses it), -1 for the shared stratum.
    """

    configs: tuple
    rest: tuple  # the configurations of the shared last stratum (empty: no such stratum)
    counts: tuple
    nominal: tuple
    stated_weight: float
    plan: np.ndarray
    groups: tuple = ()

    @property
    def n_strata(self) -> int:
        return len(self.counts)

    @property
    def n_sites(self) -> int:
        """K: the stratified sites 2..K+1 (L - 1 on a short array, :data:`MAX_SITES` on a long one)."""
        return len(self.configs[0] if self.configs else self.rest[0])

    def probability(self, s: int, p: np.ndarray) -> float:
        """P(stratum s | realization) from the Gibbs weights ``p`` (L - 1, 3) of sites 2..L (the stratified
        sites' product; the sites after them are natural)."""
        configs = [self.configs[s]] if s < len(self.configs) else self.rest
        return float(sum(_config_probability(p, c) for c in configs))

    def draw(self, s: int, p: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, float]:
        """Levels of sites 1..L in stratum s and P(s | realization); u[0] picks the configuration in a shared
        stratum (in proportion to its Gibbs weight), u[2 + j] the level of site K + 2 + j from its own Gibbs
        weights (a long array's sites after the stratified ones; ``u``: 2 + L - 1 - K uniforms)."""
        levels = np.zeros(p.shape[0] + 1, dtype=int)
        K = self.n_sites
        if p.shape[0] > K:  # the natural rest, as ArraySpec.thermal_levels draws a site
            cum = np.cumsum(p[K:], axis=1)[:, :2]
            levels[K + 1:] = (u[2:2 + p.shape[0] - K][:, None] > cum).sum(axis=1)
        if s < len(self.configs):
            config = self.configs[s]
            prob = _config_probability(p, config)
        else:
            if K < p.shape[0]:  # a long array's shared stratum (hundreds of configurations): one product per row
                w = np.prod(p[np.arange(K), _as_array(self.rest)], axis=1)
            else:
                w = np.array([_config_probability(p, c) for c in self.rest])
            prob = float(w.sum())
            k = min(int(np.searchsorted(np.cumsum(w), u[0] * prob, side="right")), len(self.rest) - 1)
            while k > 0 and w[k] == 0.0:  # rounding at the top end
                k -= 1
            config = self.rest[k]
        levels[1:K + 1] = config
        return levels, float(prob)


@functools.lru_cache(maxsize=8)
def _as_array(configs: tuple) -> np.ndarray:
    return np.array(configs, dtype=int)


def _config_probability(p: np.ndarray, config) -> float:
    return float(np.prod(p[np.arange(len(config)), list(config)]))


def strata_for(spec: ArraySpec, settings, init: str):
    """The run's strata for initial state ``init`` (None: the thermal start is not stratified): a
    :class:`ThermalStrata` or, with ``thermal_strata = "cost"``, a
    :class:`~lru_mps.run.thermal_number.NumberOdds` (one stratum, the rows' numbers at cost-aware odds).

    Stratified when ``settings.thermal_strata`` is on, the array is warm and
    3 <= L <= :data:`MAX_SITES` + 1 (the configurations of sites 2..L are
    enumerated), or, with ``thermal_strata = "all"``, L > :data:`MAX_SITES` + 1
    (the configurations of sites 2..MAX_SITES+1, the rest natural; a true
    ``thermal_strata`` leaves a long array's sample natural, as it always did).
    The allocation's excited strata take ``leakage_thermal_odds`` times their
    share for the leakage start.
    """
    on = getattr(settings, "thermal_strata", False)
    if on == "cost" and spec.conditions.temperature_K > 0.0:  # every site drawn by its number, at cost-aware odds
        return number_odds(spec, settings, init)
    if not on or spec.conditions.temperature_K == 0.0 or spec.L - 1 < 2:
        return None
    if spec.L - 1 > MAX_SITES and on != "all":
        return None
    odds = settings.leakage_thermal_odds if init == "leakage" else 1.0
    key = json.dumps(spec.as_dict(), sort_keys=True, default=str)
    return _strata(key, spec, int(settings.trajectories), float(odds))


_CACHE: dict = {}


def number_odds(spec: ArraySpec, settings, init: str) -> NumberOdds:
    """The run's :class:`~lru_mps.run.thermal_number.NumberOdds` for ``init``: the nominal weights of the numbers
    0..cap (the sector engine's cap, else every possible one), kept per (spec, start number, cap, trajectories)."""
    cap = thermal_cap(spec, settings, init)
    start = start_number(init)
    k = ("cost", json.dumps(spec.as_dict(), sort_keys=True, default=str), start, cap, int(settings.trajectories))
    return _cached(k, lambda: build_odds(spec.L, number_distribution(
        nominal_probabilities(spec), 2 * (spec.L - 1) if cap is None else int(cap)), start, int(settings.trajectories)))


def _cached(k, build):
    """``_CACHE[k]``, built by ``build()`` the first time (at most 32 kept: every row of a run asks for it)."""
    if k not in _CACHE:
        if len(_CACHE) >= 32:
            _CACHE.clear()
        _CACHE[k] = build()
    return _CACHE[k]


def _strata(key: str, spec: ArraySpec, trajectories: int, odds: float) -> ThermalStrata:
    """:func:`build_strata`, kept per (spec, trajectories, odds): every row of a run asks for its plan."""
    return _cached((key, trajectories, odds),
                   lambda: build_strata(spec, trajectories, odds, min(spec.L - 1, MAX_SITES)))


def nominal_probabilities(spec: ArraySpec) -> np.ndarray:
    """Gibbs weights of sites 2..L, averaged over realizations drawn from a fixed stream (allocation only)."""
    rng = np.random.default_rng(np.random.SeedSequence(20261128))
    return np.mean([spec.thermal_probabilities(spec.draw_realization(rng))[1:]
                    for _ in range(NOMINAL_REALIZATIONS)], axis=0)


def build_strata(spec: ArraySpec, trajectories: int, odds: float = 1.0, sites: int | None = None) -> ThermalStrata:
    """Strata, allocation and row plan for ``trajectories`` rows (see :class:`ThermalStrata`).

    ``sites`` K: the stratified sites 2..K+1 (default L - 1, every site; K < L - 1: a long array, whose every
    stratified site is interior, so that no two strata differ only at the reset site and each own stratum is
    its own group; at most :data:`LONG_STRATA` strata).  Own strata: the configurations of sites 2..K+1 of
    nominal weight >= :data:`STRATUM_MIN_WEIGHT`,
    most probable first, at most S_max = max(2, min(:data:`MAX_STRATA`, n // (4 x 16))) strata in all (the
    minimum allocations take at most a quarter of the rows); the rest share one stratum.  Every stratum gets
    m = min(:data:`STRATUM_MIN_ROWS`, n // (4 S)) rows (at least 1), the rest of the rows go in
    proportion to nominal weight x (``odds`` for a stratum with a thermal excitation), by largest remainders.
    """
    n = int(trajectories)
    K = spec.L - 1 if sites is None else int(sites)
    long = K < spec.L - 1
    p = nominal_probabilities(spec)[:K]
    configs = list(itertools.product(range(3), repeat=K))
    weights = np.array([_config_probability(p, c) for c in configs])
    # own strata in order of weight, an excited interior (sites 2..L-1) taking the odds: for the leakage start a
    # thermal excitation there blocks the stack and carries the late curve
    priority = weights * np.array([odds if any(c if long else c[:-1]) else 1.0 for c in configs])
    order = np.argsort(-priority, kind="stable")
    big = [int(j) for j in order if weights[j] >= STRATUM_MIN_WEIGHT]
    s_max = max(2, min(MAX_STRATA, n // (4 * STRATUM_MIN_ROWS)))  # a quarter of the rows on the minimum allocation
    if long:
        s_max = min(s_max, LONG_STRATA)
    own = big if len(big) == len(configs) and len(big) <= s_max else big[: s_max - 1]
    chosen = set(own)
    rest_idx = [int(j) for j in order if int(j) not in chosen]
    nominal = list(weights[own]) + ([float(weights[rest_idx].sum())] if rest_idx else [])
    S = len(nominal)
    m = max(1, min(STRATUM_MIN_ROWS, n // (4 * S)))
    m = min(m, n // S)
    # the odds go to every stratum with a thermal excitation: its rows are sampled (not on the branch), and a
    # stratum with an excited reset site carries the late leakage through few of them
    excited = [any(configs[j]) for j in own] + ([True] if rest_idx else [])
    share = np.array([w * (odds if e else 1.0) for w, e in zip(nominal, excited)])
    exact = (n - m * S) * share / share.sum()
    counts = np.full(S, m) + np.floor(exact).astype(int)
    left = n - int(counts.sum())
    if left > 0:
        counts[np.argsort(-(exact - np.floor(exact)), kind="stable")[:left]] += 1
    # stratum s's j-th row at quantile (j + u_s) / n_s, u_s = frac((s + 1) x golden ratio): strata with equal
    # counts interleave instead of meeting at the same positions
    offsets = ((np.arange(S) + 1) * 0.6180339887498949) % 1.0
    keys = np.concatenate([(np.arange(c) + offsets[s]) / c for s, c in enumerate(counts) if c > 0])
    owner = np.concatenate([np.full(c, s) for s, c in enumerate(counts) if c > 0])
    plan = owner[np.lexsort((owner, keys))]
    if long:  # no stratified site is the reset site: every own stratum its own group
        groups = tuple(range(len(own))) + ((-1,) if rest_idx else ())
    else:
        interiors = sorted({configs[j][:-1] for j in own})
        groups = tuple(interiors.index(configs[j][:-1]) for j in own) + ((-1,) if rest_idx else ())
    stated = float(weights[rest_idx].max()) if rest_idx else 0.0
    return ThermalStrata(tuple(configs[j] for j in own), tuple(configs[j] for j in rest_idx),
                         tuple(int(c) for c in counts), tuple(float(w) for w in nominal), stated, plan, groups)


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
