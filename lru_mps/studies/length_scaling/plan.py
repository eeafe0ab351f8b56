"""The length-scaling study's row plan: per length L, how long it runs and how many rows of which start.

Every number here is read from the study's config (``lru_mps/defaults.py``'s study defaults and the study
file): the final time (the transit plus the base time), the short and long arrays' trajectories per initial
state, the odds of the leakage start's excited interiors, the thermal strata and whether the leakage start
integrates its hardware decay out, and the ensembles (initial states, counts, options) one length runs.
Times in 1/J.
"""

from __future__ import annotations

from ...errors import require
from ..base import parse_lengths
from ..config import Config


def _t_final(spec, cfg) -> float:
    """Simulated time (1/J): ideal t_base + t_per_hop (L-1) T_prop; realistic (L-1) T_prop + realistic_t_after."""
    from ...physics.units import to_time

    transit = spec.transit_hops * spec.T_prop
    if not spec.conditions.ideal and cfg.get("realistic_t_after") is not None:
        return transit + to_time(cfg["realistic_t_after"], "realistic_t_after", spec.J_hz)
    return to_time(cfg["t_base"], "t_base", spec.J_hz) + float(cfg["t_per_hop"]) * transit


def _short(cfg: dict, L: int) -> bool:
    """Whether L is one of the realistic ``short_lengths`` (more trajectories, excited interiors oversampled)."""
    return bool(cfg.get("short_lengths")) and L in parse_lengths(cfg["short_lengths"])


def _trajectories(cfg: dict, L: int) -> int:
    """Trajectories at length L under realistic conditions: ``short_factor`` x ``trajectories`` on ``short_lengths``.

    The short arrays are cheap (L <= 8: 2-18 s for 240 trajectories on 2
    cores, against 2.5-3 min at L = 16-20) and are where T_star is read to a
    few per cent; the factor buys it there without touching the long arrays.
    """
    c = Config(cfg)
    n = c.integer("trajectories")
    if not _short(cfg, L):
        return n
    factor = c.number("short_factor", min=1, default=1,
                      allowed="a number >= 1 (trajectories on short_lengths = short_factor x trajectories)")
    return int(round(n * factor))


def _leakage_trajectories(cfg: dict, L: int) -> int:
    """Trajectories of the leakage start at L: ``long_leakage_factor`` x those of the qubit starts on the long lengths.

    At L >= 10 the leakage lifetimes need 3-7x the rows that T1 and T2 need
    for the same relative error (per-row spread of tau_1 and tau_L 0.6-1.2 of
    the mean, against the branch's T1 and T2 at 2.5 % with 240 rows;
    BENCHMARKS.md), so only the leakage start gets the factor.
    """
    n = _trajectories(cfg, L)
    if _short(cfg, L):
        return n
    c = Config(cfg)
    factor = c.number("long_leakage_factor", min=1, default=1, allowed="a number >= 1 (leakage-start trajectories "
                      "off short_lengths = long_leakage_factor x trajectories)")
    factor = c.factors("long_leakage_factor_at", others="long_leakage_factor").get(L, factor)
    return int(round(n * factor))


def _qubit_factor(cfg: dict, L: int) -> float:
    """The factor of the qubit and coherence starts' trajectories at L (``qubit_factor_at``; 1 where L is not named).

    At L = 3, the paper's working point, the spread of T1 between seeds
    comes mostly from the disorder realizations of the rows whose array is
    empty (the qubit's hybridization with site 2 sets how fast it leaks to
    the reset site; per realization <n_1> late in the run spreads 0.6 of its
    mean): only more realizations cut it, and at L = 3 a row costs ~5 ms.
    """
    return Config(cfg).factors("qubit_factor_at", others="1").get(L, 1.0)


def _qubit_trajectories(cfg: dict, L: int) -> int:
    """Trajectories of the qubit start at L: those of :func:`_trajectories` times ``qubit_factor_at``'s factor."""
    return int(round(_trajectories(cfg, L) * _qubit_factor(cfg, L)))


def _coherence_trajectories(cfg: dict, L: int) -> int:
    """Trajectories of the coherence start at L: ``long_coherence_factor`` x those of the qubit start on the long lengths.

    T2 is the sharpest realistic number (0.2-0.8 % at L >= 10 with 240 rows,
    BENCHMARKS.md, against the issue's 3 %), so the long arrays run fewer of
    its rows and spend the time on the leakage start.
    """
    n = _trajectories(cfg, L) * _qubit_factor(cfg, L)
    if _short(cfg, L):
        return int(round(n))
    factor = Config(cfg).number("long_coherence_factor", above=0, max=1, default=1, allowed="a number in (0, 1] "
                                "(coherence-start trajectories off short_lengths = long_coherence_factor x trajectories)")
    return max(2, int(round(n * factor)))


def _leakage_thermal_odds(cfg: dict, L: int) -> float:
    """The odds factor of the leakage start's excited interiors at L (``short_``/``long_leakage_thermal_odds``).

    The rows whose interior holds a thermal excitation carry most of the
    variance of T_star at L <= 8 and of the leakage lifetimes at every L
    (84-98 % of tau_L's at L = 10 and 20, BENCHMARKS.md); they also cost
    more (a larger sector), so the long arrays take smaller odds.
    """
    key = "short_leakage_thermal_odds" if _short(cfg, L) else "long_leakage_thermal_odds"
    return Config(cfg).number(key, above=0, default=1.0, allowed="a number > 0 (1 = the natural thermal sample)")


def _thermal_strata(cfg: dict, L: int) -> bool:
    """Whether the realistic ensembles at L draw their thermal start by strata (``short_thermal_strata``, the short
    arrays only; docs/physics.md §6.5).

    At L = 3 the leakage tail late in the run (t > ~600/J) is carried by the
    rows whose site 2 holds a thermal |1> (a blocked stack: 77 % of the exact
    P_star^(L) at 668/J, natural weight 2.6 %) and by rarer classes (a thermal
    |2>, 0.08 %); drawn at random they go undrawn or are few, and the error of
    the mean does not see it.  The strata give every interior configuration
    above :data:`~lru_mps.run.thermal_sample.STRATUM_MIN_WEIGHT` its rows.
    """
    from ...run.thermal_sample import MAX_SITES

    on = Config(cfg).boolean("short_thermal_strata", default=False)
    return on and _short(cfg, L) and 2 <= L - 1 <= MAX_SITES


def _integrate_decay(cfg: dict, L: int) -> bool:
    """Whether the leakage start's sampled rows integrate their hardware decay out at L (``long_leakage_integrate_decay``,
    the long arrays only).

    At L = 10 the rows with a thermally excited interior carried 95 % of
    tau_1's variance, each the random decay time of a blocked stack;
    integrating the decay clock out (:mod:`lru_mps.mcwf.integrated_decay`)
    cut their spread 4.6x for 2.6x their cost (BENCHMARKS.md).  The short
    arrays run on the exact engine's batch, where a decay-integrated row runs
    alone and costs ~30x a batched one.
    """
    on = Config(cfg).boolean("long_leakage_integrate_decay", default=False)
    short = cfg.get("short_leakage_integrate_decay", False)
    require(isinstance(short, (bool, str)), "short_leakage_integrate_decay", short,
            "true, false or lengths such as \"3\" or \"3:4\"")
    if isinstance(short, str):
        short = L in parse_lengths(short) if short.strip() else False
    return (on and not _short(cfg, L)) or (short and _short(cfg, L))


def _ensembles(cfg: dict, L: int, ideal: bool, n_real: int) -> list[tuple[str | list, int, float, float, bool]]:
    """The runs at one L: (initial states, trajectories, leakage odds, hot tail, decay integrated).

    Separate runs where the starts get different rows (on the long arrays the
    leakage start ``long_leakage_factor`` or its per-L ``long_leakage_factor_at``,
    the coherence start ``long_coherence_factor``; at the lengths of
    ``qubit_factor_at`` the qubit and coherence starts that factor); the leakage run thins its hot tail by ``long_leakage_hot_tail`` instead of
    ``hot_tail``: a thinned hot row carries weight f, and at L = 16 one such
    leakage row (four thermal excitations blocking the stack) doubled the
    spread of tau_L (BENCHMARKS.md), while running them all costs ~10 %.
    """
    hot = Config(cfg).number("hot_tail", min=1, default=1.0, allowed="a number >= 1 (1 = every hot row runs)")
    if ideal:
        return [("all", n_real, 1.0, hot, False)]
    n, n_leak, odds = _trajectories(cfg, L), _leakage_trajectories(cfg, L), _leakage_thermal_odds(cfg, L)
    n_coh = _coherence_trajectories(cfg, L)
    integrate = _integrate_decay(cfg, L)
    n = _qubit_trajectories(cfg, L)
    if n_leak == n == n_coh:
        return [("all", n, odds, hot, integrate)]
    leak_hot = Config(cfg).number("long_leakage_hot_tail", min=1, default=hot,
                                  allowed="a number >= 1 (1 = every hot row runs)") if not _short(cfg, L) else hot
    qubits = [(["qubit", "coherence"], n, 1.0, hot, False)] if n_coh == n else \
        [("qubit", n, 1.0, hot, False), ("coherence", n_coh, 1.0, hot, False)]
    return [("leakage", n_leak, odds, float(leak_hot), integrate)] + qubits


#: the config key of each condition's lengths (the same whether the condition runs alone or with the other)
