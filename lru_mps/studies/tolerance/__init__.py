"""Study ``tolerance``: how precisely must a chip be tuned.

T_star, T_prop, T1, T2 (:func:`lru_mps.analysis.decay.decay_times`) and the
leakage lifetimes tau_1, tau_L and the removal efficiency
(:func:`lru_mps.analysis.lifetimes.leakage_lifetimes`) against each
fabrication/tuning error of docs/physics.md §3.1:

``e2_spread``        the leakage levels' residual detuning, E2_l = E2 + delta_l,
                     delta_l ~ N(0, S) (default 0..10 J_prop);
``frequency_noise``  a quasi-static frequency offset s_l ~ N(0, S) of each
                     site per trajectory (slow flux noise; E2_l moves by 2 s_l;
                     default 0..5 J_prop, see below).

``hopping_spread``   per-bond couplings J_l = J (1 + eps_l), eps_l ~ N(0, X):
                     X is a fraction (spreads_fraction, spreads_percent
                     instead of J, MHz, J_prop); not in the default kinds
                     (``--kinds e2_spread,frequency_noise,hopping_spread``).

For every error kind, length L and spread S one ensemble of the branch
estimator (three initial states, realistic conditions by default) runs to
(L-1) T_prop + ``t_after``.  Common random numbers: every point uses the same
seed, so trajectory i has the same box draws (the spread's normals come
after them in the disorder stream) and the same event streams at every S;
the differences between points are sharper than the errors of each point.
S = 0 is the same ensemble for both kinds (run once; bit for bit the run
without the option).

The doubling spread (docs/physics.md §8, "Tolerance"): a stack hop across a
detuning Delta is a two-level problem with coupling J_prop, whose largest
transfer is 1/(1 + (Delta/2J_prop)^2), so the hop (and T_star) slows by a
factor that grows quadratically at small detuning.  Per kind and L,
T_star(S) = T0 (1 + (S/S_2)^2) is fitted (weighted least squares,
absolute sigma), and S_2, the spread at which T_star doubles, is reported
with its error and the fit's reduced chi^2; where the fitted S_2 lies beyond
the largest spread (or T_star does not grow), the largest spread is a lower
bound (``bound`` = "lower").  The fit takes the spreads up to the first where
T_star reaches ``fit_ratio`` x T_star(0) (the onset: realistic T_star bends
over towards T1q/2).  Next to it ``crossing``, model-free: where T_star first
reaches 2 T_star(0), interpolated linearly between the bracketing spreads
(the answer where the fit's chi^2 says the form does not hold).  A fit
through exactly two spreads has no degree of freedom: its S_2 has no error
(null, ``error_reason`` says why).  ``holds`` names which of the two to read
(:func:`~lru_mps.analysis.tolerance.which_holds`).  The same for tau_L.
"""

from __future__ import annotations

from ...physics.units import to_time
from ..base import TIME_UNITS, Study, StudyContext, StudyOption
from ..common import run_ensemble, spec_of
from . import report
from .assemble import assemble
from .plan import FRACTIONS, LABELS, NOTES, SWEEPS, TolerancePlan, plan_of, units_of  # noqa: F401 (the study's kinds)
from .points import TolerancePoint, ensemble_numbers

HELP = """T_star, T_prop, T1, T2 and the leakage lifetimes vs fabrication/tuning errors.

How precisely must a chip be tuned: the decay times against --e2-spread (the
leakage levels' residual detuning, 0..10 J_prop, J_prop = 2 J^2/Ubar = 0.2 MHz
at the paper's point) and --frequency-noise (quasi-static flux noise,
0..5 J_prop: it detunes neighbouring leakage levels by 2(s_l - s_l+1), twice
the e2 spread's reach), at L = 3 and 6, realistic conditions, the same seed
at every spread.  Per error and L the summary gives the spread at which
T_star doubles (fit T0 (1 + (S/S_2)^2)), or a lower bound.  The per-bond
coupling spread (--hopping-spreads, fractions 0,5%,0.1) runs with --kinds
...,hopping_spread.  Options: --e2-spreads, --frequency-noises (e.g.
0,2Jprop,400kHz), --hopping-spreads, --lengths, --kinds.
Default: 9.5 minutes on one core (720 trajectories per point; --quick: seconds).
"""


class Tolerance(Study):
    """The tolerance study (module docstring)."""

    NAME = "tolerance"
    OPTIONS = (
        StudyOption("e2_spreads", "Leakage-level detuning spreads S, e.g. 0,1Jprop,2Jprop,400kHz (J_prop = 2 J^2/Ubar)."),
        StudyOption("frequency_noises", "Quasi-static frequency-noise spreads, e.g. 0,1Jprop,100kHz."),
        StudyOption("hopping_spreads", "Per-bond coupling spreads X (fractions), e.g. 0,5%,0.1 (with --kinds ...,hopping_spread)."),
        StudyOption("kinds", "Error kinds to sweep: e2_spread,frequency_noise,hopping_spread."),
        StudyOption("lengths", "Lengths, e.g. 3,6."),
    )
    SWEPT = {"length": ("lengths",)}
    REFUSES_DEVICE = "it runs at several array lengths L (lengths), which the device file fixes"
    TIME_UNITS = TIME_UNITS
    HELP = HELP

    def compute(self, cfg: dict, ctx: StudyContext):
        """One ensemble per distinct spec (S = 0 shared by every kind), its numbers given to every point it stands
        for: (dataset, summary)."""
        plan = plan_of(cfg)
        ensembles = plan.ensembles()
        ctx.plan(len(ensembles))
        points = [p for key, where in ensembles.items() for p in _points(cfg, ctx, plan, key, where)]
        return assemble(cfg, plan, points)

    def table(self, summary: dict) -> str:
        return report.table(summary)

    def plot(self, ds, summary: dict, figdir) -> list:
        return report.plot(ds, summary, figdir)


def _points(cfg: dict, ctx: StudyContext, plan: TolerancePlan, key: tuple, where: list) -> list[TolerancePoint]:
    """The points of one ensemble (``key`` = (L, kind or None at S = 0, S); ``where``: the (kind, spread index,
    text) it stands for, the first one's text its option): run to (L-1) T_prop + ``t_after``."""
    L, kind, _ = key
    text = where[0][2]
    spec = spec_of(cfg, length=L, **({kind: text} if kind is not None else {}))
    t_final = spec.transit_hops * spec.T_prop + to_time(cfg["t_after"], "t_after", spec.J_hz)
    label = f"L={L} " + (f"{kind}={text}" if kind is not None else "no spread")
    res = run_ensemble(spec, cfg, ctx, label, init="all", t_final=t_final, time_points=plan.time_points,
                       leakage_thermal_odds=plan.odds)
    times, lives, mix, reasons = ensemble_numbers(res)
    return [TolerancePoint(k, L, pi, times, lives, mix, reasons) for k, pi, _ in where]


STUDIES = {Tolerance.NAME: Tolerance()}
