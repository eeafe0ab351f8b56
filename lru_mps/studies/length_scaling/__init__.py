"""Study `length-scaling`: T_prop, T_star, T1, T2 and the localization length vs L.

Physics (docs/physics.md §8, §10, §11).  For each array length L and each
condition (ideal, realistic) one ensemble is run from the three initial
states with the branch estimator (docs/physics.md §6.5): in ideal
conditions one exact evolution per disorder realization, in realistic
conditions ``trajectories`` per L, the empty-array ones on the branch
(removals integrated out, dephasing on a clock), the thermal ones of the
qubit state guided, the others sampled, the thermal hot tail thinned
(``hot_tail``); on the short arrays the thermal start is drawn by strata
(``short_thermal_strata``: every configuration of sites 2..L above a stated
weight gets its rows, docs/physics.md §6.5), and a curve's points that a
stratum carries through too few rows are NaN with a mask.  Per L it reports

* T_prop = pi / (2 J_prop) (formula) and the transit (L-1) T_prop;
* T_star, T1, T2 from fits A exp(-t/tau) of the ensemble curves P_star^(L),
  <n_1> and 2C (T_star over t > (L-1) T_prop, T1 and T2 over t > T_prop;
  jackknife errors);
* in ideal conditions, per realization, the qubit's decay rates from the
  removal-free branch (:mod:`lru_mps.analysis.localization`): exact in the N = 1
  sector where double precision resolves them, and continued in log space
  past the floating-point floor (the study says where), so T1 far beyond any
  simulated time is still measured; their typical value exp<ln T1>;
* the localization length xi from ln T1_typ = a + L/xi, next to the
  strong-disorder value 1/xi = 2 ln(W/J) - 3 and the transfer-matrix value
  at the qubit's energies (the Lyapunov exponent averaged over the qubit
  modes' energies of the realizations); and the linear growth of T_star with L.

Ensembles (the curves and their fits) run up to ``ensemble_max_length``;
the per-realization rates, which cost an L x L eigenproblem or a log-space
recursion, are computed at every length.  The simulated time grows with L (t_final = t_base + t_per_hop (L-1) T_prop)
so that the late-time window covers the slow leakage tail; under realistic
conditions every decay is bounded by the hardware (T1 -> T1q, T2 -> T2q,
a leakage stack decays by itself in T1q/2), so there it runs to
(L-1) T_prop + ``realistic_t_after``.  Realistic conditions run on
``realistic_lengths`` (default L = 2..6, 8, 10, 12, 16, 20; ``lengths`` are the ideal ones, also
when ``conditions`` is one of them alone): exact engine to L = 6, then the per-trajectory policy of
``--engine auto`` (the exact fixed-N sector engine for every trajectory whose
thermal sample keeps its largest sector small, which at 100 mK is nearly
all of them, MPS for the rest; the summary gives the mix per L).  The
realistic summary adds the hardware limits T1q, T2q = 1/(1/(2 T1q) +
1/Tphi) and T1q/2 (the lifetime of |2>) and where leakage removal stops
paying: the first L whose T_star is not below T1q/2, next to the estimate
1 + T1q/(2 T_prop) from the transit time alone.
"""

from __future__ import annotations

from ...analysis.rates import qubit_rates
from ...errors import require
from ...run.seeding import disorder_rng
from ...run.settings import mps_options, resolve_inits
from ...run.simulate import simulate
from ..base import TIME_UNITS, Study, StudyContext, StudyOption, parse_lengths
from ..common import ensemble_settings, spec_of
from .assemble import _realistic_summary, assemble  # noqa: F401 (_realistic_summary: read by tests)
from .plan import _ensembles, _t_final, _thermal_strata
from .points import CURVES, PointBuilder, Realizations, ScalingPoint  # noqa: F401 (CURVES: the curves kept)
from .report import plot as report_plot, table as report_table

HELP = """T_prop, T_star, T1, T2 and the localization length xi vs the array length L.

Decay times of leakage and of the qubit for arrays of L = 2..40 transmons
in ideal conditions (per-realization qubit rates from the removal-free
branch, past the floating-point floor by a log-space continuation; xi from
ln T1_typical = a + L/xi against the transfer-matrix and strong-disorder
values) and L = 2..6, 8, 10, 12, 16, 20 under realistic conditions (T1q,
Tphi, 100 mK; trajectories of the branch estimator on the exact engine,
then on the sector or MPS engine per trajectory), with the hardware limits T1q, T2q and where
leakage removal stops paying.  Extends paper Fig. 3c,f to long arrays.
--lengths are the ideal conditions' lengths and --realistic-lengths the
realistic ones, also when --conditions runs only one of them.
--quick: seconds.
"""


LENGTH_KEYS = {"ideal": "lengths", "realistic": "realistic_lengths"}


def lengths_of(cfg: dict) -> tuple[list[str], dict[str, list[int]]]:
    """The conditions the study runs and the lengths of each: ``lengths`` for ideal conditions,
    ``realistic_lengths`` for realistic ones, whether a condition runs alone or both run."""
    require(cfg["conditions"] in ("ideal", "realistic", "both"), "conditions", cfg["conditions"],
            "ideal, realistic or both")
    conds = ["ideal", "realistic"] if cfg["conditions"] == "both" else [cfg["conditions"]]
    return conds, {c: parse_lengths(cfg[LENGTH_KEYS[c]]) for c in conds}


def check_given(cfg: dict, given: set) -> None:
    """Refuse a lengths list the user set for conditions the study does not run, where the list of the conditions
    it runs was left at its default (``given``: the keys the user set, in a file or as options)."""
    if cfg["conditions"] == "both":
        return
    runs = LENGTH_KEYS[cfg["conditions"]]
    other = next(k for k in LENGTH_KEYS.values() if k != runs)
    require(other not in given or runs in given, other, cfg[other],
            f"the lengths of the {'realistic' if other == 'realistic_lengths' else 'ideal'} conditions only; "
            f"with conditions = {cfg['conditions']} the lengths are {runs} (--{runs.replace('_', '-')})")


def _compute(cfg: dict, ctx: StudyContext):
    """The ensembles and per-realization rates of every length, a point per condition and length: (dataset,
    summary)."""

    conds, lengths = lengths_of(cfg)
    all_L = sorted(set().union(*(lengths[c] for c in conds)))
    T = int(cfg["time_points"])
    n_real = int(cfg["realizations"])
    seed = int(cfg["seed"])
    spec0 = spec_of(cfg, length=all_L[0], conditions=conds[0])
    ctx.plan(sum(1 for c in conds for L in lengths[c] if L <= int(cfg["ensemble_max_length"])))
    points = [_point(cfg, ctx, cond, L, (T, n_real, seed)) for cond in conds for L in lengths[cond]]
    return assemble(cfg, spec0, conds, lengths, points)


def _point(cfg: dict, ctx: StudyContext, cond: str, L: int, counts: tuple) -> ScalingPoint:
    """The point of conditions ``cond`` at length ``L`` (``counts``: time points, realizations, seed): in ideal
    conditions the qubit's exact rates of each realization (at every L), then the ensembles of
    :func:`~lru_mps.studies.length_scaling.plan._ensembles` up to ``ensemble_max_length``."""
    T, n_real, seed = counts
    spec = spec_of(cfg, length=L, conditions=cond)
    ideal = spec.conditions.ideal
    rates = None
    if ideal:
        rates = Realizations.of([qubit_rates(spec, spec.draw_realization(disorder_rng(seed, i)))
                                 for i in range(n_real)])
    point = PointBuilder(cond, L, rates)
    if L > int(cfg["ensemble_max_length"]):
        return point.point()
    for init, n_traj, odds, hot, integrate in _ensembles(cfg, L, ideal, n_real):
        res = simulate(
            spec,
            init=init,
            t_final=_t_final(spec, cfg),
            time_points=T,
            trajectories=n_traj,
            seed=seed,
            engine=cfg["engine"],
            estimator=ensemble_settings(spec, {"realizations": n_real, "trajectories": cfg["trajectories"]})[0],
            engine_options=mps_options(cfg, spec.J_hz),
            hot_tail=hot,
            leakage_thermal_odds=odds,
            integrate_decay=integrate,
            thermal_strata=_thermal_strata(cfg, L) and not ideal,
            **ctx.run_options(f"{cond} L={L}" + ("" if init == "all" else f" {'+'.join(resolve_inits(init))}")),
        )
        point.add(spec, res, T)
    return point.point()


class LengthScaling(Study):
    """The length-scaling study (module docstring)."""

    NAME = "length-scaling"
    OPTIONS = (
        StudyOption("lengths", "Lengths of the ideal conditions, e.g. 2:40, 2:40:2 or 2,4,8,16,32."),
        StudyOption("realistic_lengths", "Lengths of the realistic conditions (with --conditions realistic or both), e.g. 2:8."),
    )
    SWEPT = {"length": ("lengths", "realistic_lengths")}
    REFUSES_DEVICE = "it sweeps the array length L, which the device file fixes"
    HELP = HELP
    TIME_UNITS = TIME_UNITS

    def check_given(self, cfg: dict, given: set) -> None:
        check_given(cfg, given)

    def compute(self, cfg: dict, ctx: StudyContext):
        return _compute(cfg, ctx)

    def table(self, summary: dict) -> str:
        return report_table(summary, summary["parameters"]["J_over_2pi_Hz"])

    def plot(self, dataset, summary: dict, figdir) -> list:
        return report_plot(dataset, summary, figdir)


STUDIES = {LengthScaling.NAME: LengthScaling()}
