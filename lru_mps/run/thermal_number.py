"""A thermal start drawn by its number of thermal excitations at cost-aware odds (``thermal_strata = "cost"``).

On a large array the thermal sample's rows differ most in cost: a row with n thermal excitations beside the
start's N0 (2 for the leakage start, 1 for the qubit and coherence starts) runs in the N = N0 + n sector, whose
states grow ~L^n and whose Chebyshev cost per unit time is its states times its width (~N U).  On the routing
study's 4x4 layout at 100 mK (24 transmons) the rows with n >= 3 are 2.7 % of the Gibbs sample and about two
thirds of its cost (docs/benchmarks.md).  This sampler draws each row's n from fixed odds

    q_n  =  a W_n + (1 - a) W_n / sqrt(c_n) / sum_m (W_m / sqrt(c_m)),        c_n = d(L, N0 + n) (N0 + n)

(W_n the nominal Gibbs weight of n, averaged over realizations as
:func:`~lru_mps.run.thermal_sample.nominal_probabilities` does; d(L, N) the sector's states; the second term is
the Neyman allocation for strata of equal spread per row, with the cost of each; a = :data:`DEFENSIVE` keeps every
number at least at half its natural odds), then the configuration of sites 2..L from its realization's Gibbs
weights conditioned on that n, and the row carries the weight P_i = W_n(realization) / q_n.  E_q[P] = sum_n W_n
= 1 (over the numbers the run's engine holds: :func:`~lru_mps.run.thermal_sample.thermal_cap`), and the run's
estimate is the ratio sum y_i / sum P_i of :class:`~lru_mps.run.statistics.StratifiedAccumulator` with one
stratum: self-normalized importance sampling, unbiased as the number of rows grows, its error the delta method's
var(y - R P) / n.  Rows stay independent (each draws its own n), so the jackknife applies, and unlike a
fixed allocation no stratum needs a minimum of rows: a hot number can get a fraction of a row's odds.
Self-normalized, the weight's spread costs only through (x - R)^2, not x^2 (the mean's square), which is what
makes thinning the expensive rows pay where a Russian roulette on them (``hot_tail``) does not.  Measured over
16 seeds of the routing study at 100 mK (docs/benchmarks.md), T1, T2 and tau_1 errors hold and the means agree
with the natural sample's, but tau_L's errors fail (one run low and sure of itself, short of the rare rows that
carry the late leakage): for exploration, not the default.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: the share of the odds drawn from the Gibbs weights themselves (a defensive mixture: q_n >= DEFENSIVE W_n, so
#: a row's weight is at most ~1 / DEFENSIVE and a class is drawn at least half as often as in the natural sample).
#: The pure cost odds (0) thin the hot numbers by sqrt(c_n / c_0), 5-30x on the routing layouts: the classes that
#: carry the late leakage (a thermal excitation on the stack's path blocks it) were then drawn ~once in 64 rows,
#: and T_star came out 25 % low in 3 seeds of 64 rows on the 3x3 layout at 100 mK (docs/benchmarks.md)
DEFENSIVE = 0.5


@dataclass(frozen=True)
class NumberOdds:
    """The odds of a run's thermal numbers (see the module): ``odds[n]`` the probability q_n that a row draws n
    thermal excitations on sites 2..L (0 for a number the engine does not hold), ``nominal[n]`` its nominal Gibbs
    weight W_n and ``cost[n]`` the cost model c_n.  It has the interface of
    :class:`~lru_mps.run.thermal_sample.ThermalStrata` with one stratum (every row in it, ``plan`` all 0; its
    group -1: a mix of classes, so the resolved rule asks for the carriers a class it did not draw may have)."""

    odds: tuple
    nominal: tuple
    cost: tuple
    plan: np.ndarray
    #: every configuration can be drawn (none is left to a shared stratum below a stated weight)
    stated_weight: float = 0.0
    groups: tuple = (-1,)

    @property
    def n_strata(self) -> int:
        return 1

    @property
    def n_sites(self) -> int:
        """No site is enumerated: every site 2..L is drawn from its own (conditioned) Gibbs weights."""
        return 0

    def draw(self, s: int, p: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, float]:
        """Levels of sites 1..L (site 1: 0) and the row's weight W_n / q_n: u[0] picks n from the odds, u[2 + j]
        the level of site j + 2 given the number left to place (``u``: 2 + L - 1 uniforms; ``p`` (L - 1, 3) the
        realization's Gibbs weights of sites 2..L)."""
        q = np.asarray(self.odds)
        cum = np.cumsum(q)
        n = min(int(np.searchsorted(cum, u[0] * cum[-1], side="right")), len(q) - 1)
        while q[n] == 0.0:  # rounding at the top end: the last number with odds
            n -= 1
        levels, weight = conditioned_levels(p, n, u[2:2 + p.shape[0]])
        return levels, weight / float(q[n])


def tail_distributions(p: np.ndarray, n: int) -> np.ndarray:
    """D[j, m] = P(the levels of sites j.. sum to m), m = 0..n, for independent sites with level weights ``p``
    (K, 3) (|2> counts 2); D[K] is the empty sum (1 at m = 0)."""
    K = p.shape[0]
    D = np.zeros((K + 1, n + 1))
    D[K, 0] = 1.0
    for j in range(K - 1, -1, -1):
        D[j] = p[j, 0] * D[j + 1]
        D[j, 1:] += p[j, 1] * D[j + 1, :-1]
        D[j, 2:] += p[j, 2] * D[j + 1, :-2]
    return D


def conditioned_levels(p: np.ndarray, n: int, u: np.ndarray) -> tuple[np.ndarray, float]:
    """(levels of sites 1..K+1 with site 1 at 0, W_n): a configuration of K sites with weights ``p`` (K, 3) drawn
    conditioned on its levels summing to n (site by site: level l at site j with probability
    p[j, l] D[j+1, m - l] / D[j, m], m the number left), and W_n = P(sum = n) = D[0, n]."""
    D = tail_distributions(p, n)
    levels = np.zeros(p.shape[0] + 1, dtype=int)
    m = n
    for j in range(p.shape[0]):
        if m == 0:
            break
        w = np.array([p[j, l] * D[j + 1, m - l] if m - l >= 0 else 0.0 for l in range(3)])
        c = np.cumsum(w)
        level = min(int(np.searchsorted(c, u[j] * c[-1], side="right")), 2)
        while w[level] == 0.0:
            level -= 1
        levels[j + 1] = level
        m -= level
    return levels, float(D[0, n])


def cost_model(L: int, N: int) -> float:
    """c: the Chebyshev cost per unit time of a row in the N sector of L qutrits, in units of one state: its
    states (the sparse products' size) times N (its spectral width, ~N U)."""
    from ..engines.sector.state import sector_dimension

    return float(sector_dimension(L, N)) * max(N, 1)


def build_odds(L: int, W: np.ndarray, start: int, trajectories: int) -> NumberOdds:
    """The :class:`NumberOdds` of a run on L sites: ``W`` the nominal weights of the numbers n = 0..top it holds
    (top: the sector engine's cap, else every possible one, 2 (L - 1)), the defensive mixture of W_n and
    W_n / sqrt(c(L, start + n)) (module docstring)."""
    W = np.asarray(W, dtype=float)
    c = np.array([cost_model(L, start + n) for n in range(len(W))])
    q = W / np.sqrt(c)
    q = DEFENSIVE * W / W.sum() + (1.0 - DEFENSIVE) * q / q.sum()
    return NumberOdds(tuple(float(x) for x in q), tuple(float(x) for x in W), tuple(float(x) for x in c),
                      np.zeros(int(trajectories), dtype=np.int64))
