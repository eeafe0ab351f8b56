"""The rule book: which estimators and shortcuts are exact for a case, and why (docs/physics.md §6.5).

Every entry point (``simulate``, the studies, the per-trajectory engine, the
command line and the summaries) asks these functions and nothing else, so
each question has one owner:

* :func:`number_raisers` / :func:`number_can_grow`: can an event raise the
  excitation number N?  Read off the channels' operators (a non-removing
  channel that is not diagonal in the levels: a bath's heating a^dag) and
  the readout at the reset site (a false report writes ``|1>`` or ``|2>`` into
  an empty site).  The engines size their state spaces by it.
* :func:`branch_verdict`: is the removal-free branch estimator exact?  It
  needs every event to lower N (a removal) or keep it with a
  number-conserving operator, and, where dephasing is sampled on the
  branch's clock, one dephasing rate on every site (the clock runs at site
  1's rate; where another site dephases at another rate the weights are
  heavy-tailed and their standard errors do not hold).
* :func:`resolve_estimator`: 'auto' resolved to the branch where it is
  exact, else 'sampled'; an explicit 'branch' that is not exact is refused
  with one line naming the options and the reason.
* :func:`integrated_decay_rate`: the one decay rate gamma that lets a row
  integrate its hardware decay out, or None with the reason
  (:func:`integrated_decay_verdict`).
* :func:`guided_rows_verdict`: may the branch's thermal qubit rows be guided (importance-sampled jumps on a
  clock set from the state), or must they be sampled?
* :func:`estimator_label`: the words a summary uses for the estimator.
* :func:`symmetric_sites_verdict`: do start sites that a symmetry of the layout maps onto each other share one
  ensemble (so that a study runs one of them for all)?

Rates in J.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ParameterError
from . import operators as ops

#: the trajectory estimators (docs/physics.md §6.5); 'auto' resolves to one of them
ESTIMATORS = ("sampled", "branch")
#: channel names whose events keep N (dephasing) or lower it by what the integrated-decay log records
DECAY_LOG_CHANNELS = ("decay", "dephasing", "dissipation")


@dataclass(frozen=True)
class Verdict:
    """Whether a rule holds for a case (``ok``) and why, in plain words (``reason``)."""

    ok: bool
    reason: str

    def __bool__(self) -> bool:
        return self.ok


def number_raisers(spec) -> list[str]:
    """Why an event can raise the excitation number N in ``spec`` (plain words; empty: it cannot)."""
    out = []
    if spec.readout is not None:
        out.append("a readout error at the reset site (--readout-error, --readout-confusion: a false report writes |1> "
                   "or |2> into an empty site)")
    raising = sorted({ch.name for ch in spec.channels()
                      if not ch.removes and np.count_nonzero(ch.op - np.diag(np.diagonal(ch.op)))})
    for name in raising:
        out.append("the thermal bath's heating a^dag (--thermal-bath)" if name == "heating" else f"the {name} channel")
    return out


def number_can_grow(spec) -> bool:
    """Whether an event can raise the excitation number N (:func:`number_raisers`)."""
    return bool(number_raisers(spec))


def dephasing_rates(spec) -> np.ndarray:
    """The dephasing rate 2/Tphi_l of every site (J; 0 where a site does not dephase)."""
    rates = np.zeros(spec.L)
    for ch in spec.channels():
        if ch.name == "dephasing":
            rates[int(ch.site)] = ch.rate
    return rates


def branch_verdict(spec) -> Verdict:
    """Is the removal-free branch estimator exact for ``spec``? (docs/physics.md §6.5).

    Exact where no event raises N (a removal then ends the observed
    excitation for good) and, if dephasing is sampled on the branch's clock,
    where every site dephases at one rate.
    """
    raisers = number_raisers(spec)
    if raisers:
        return Verdict(False, "an event can raise the excitation number: " + "; ".join(raisers))
    rates = dephasing_rates(spec)
    if rates.any() and not np.all(rates == rates[0]):
        return Verdict(False, "the sites dephase at different rates (Tphi per site): the branch samples dephasing "
                              "on a clock at site 1's rate, and elsewhere its weights are heavy-tailed, with "
                              "standard errors that do not hold")
    if spec.conditions.ideal:
        return Verdict(True, "ideal conditions: exact ensemble average per realization")
    return Verdict(True, "no event raises the excitation number: removals end the observed excitation, thermal "
                         "rows and dephasing are sampled with exact weights")


def resolve_estimator(spec, estimator: str) -> str:
    """'auto' -> the branch where :func:`branch_verdict` holds, else 'sampled'; refuse a branch that is not exact."""
    if estimator == "auto":
        return "branch" if branch_verdict(spec) else "sampled"
    if estimator not in ESTIMATORS:
        raise ParameterError("estimator", estimator, "one of auto, sampled, branch")
    if estimator == "branch":
        verdict = branch_verdict(spec)
        if not verdict:
            raise ParameterError("estimator", estimator, f"'branch' only where it is exact, and here {verdict.reason}",
                                 "use --estimator sampled or auto")
    return estimator


def guided_rows_verdict(spec) -> Verdict:
    """May the branch estimator guide its thermal qubit rows (docs/physics.md §6.5, guided thermal rows)?

    A guided row proposes its jumps on a Poisson clock whose rate is set from the state at each tick and at
    each removal by a measurement; between those times the rate is fixed.  That is exact only if the clock
    covers every channel that can fire before the next re-rate.  Engineered dissipation at the reset site
    breaks it: the row starts with the reset site empty (its removal hazard G <n_L> is 0 at t = 0, so the clock
    is set without it, and in ideal conditions to 0, never to tick), then the thermal excitation hops there
    and is removed at a rate the clock does not propose (measured at L = 3, 300 mK, G = 0.3 J: <n_1> 0.66
    against the master equation's 0.94 at 300/J).  There the thermal rows are sampled.
    """
    if any(ch.name == "dissipation" for ch in spec.channels()):
        return Verdict(False, "engineered dissipation: its removal hazard starts at 0 on the empty reset site, "
                              "and the guided clock, set from the state, would not propose it")
    return Verdict(True, "removals by measurement re-rate the clock; hardware decay and dephasing act from t = 0")


def estimator_label(spec, estimator: str, measurements: bool) -> str:
    """The summary's words for ``estimator`` on ``spec`` (``measurements``: the reset has a feedback clock)."""
    if estimator != "branch":
        return "sampled (every event drawn: exact for every case)"
    clock = "exact per realization and measurement time, the measurement times sampled" if measurements \
        else "exact per realization"
    if spec.conditions.ideal:
        return f"removal-free branch ({clock}; ideal conditions)"
    return (f"removal-free branch ({clock}; realistic conditions: rows with a thermally excited array sampled, "
            "the qubit's with guided jumps; dephasing on a clock with exact weights)")


def integrated_decay_verdict(spec) -> Verdict:
    """Can a row integrate its hardware decay out (docs/physics.md §6.5, :mod:`lru_mps.mcwf.integrated_decay`)?

    It needs one decay rate on every site through a_l (the decay hazard gamma N
    is then the same for every state with N excitations), no readout error and
    no channel that changes N where the row's log does not record it.
    """
    chans = spec.channels()
    decays = [ch for ch in chans if ch.name == "decay"]
    if len(decays) != spec.L:
        return Verdict(False, "not every site decays")
    if spec.readout is not None:
        return Verdict(False, "a readout error at the reset site changes N where the row's log does not record it")
    if len({float(ch.rate) for ch in decays}) != 1 or any(not np.array_equal(ch.op, ops.a) for ch in decays):
        return Verdict(False, "the sites decay at different rates (T1 per site, or a thermal bath)")
    other = sorted({ch.name for ch in chans if ch.name not in DECAY_LOG_CHANNELS and not ch.name.startswith("measure")})
    if other:
        return Verdict(False, f"the {', '.join(other)} channel changes N where the row's log does not record it")
    return Verdict(True, "one decay rate on every site: the decay hazard is gamma N whatever the state")


def integrated_decay_rate(spec) -> float | None:
    """gamma (J) if the spec's hardware decay can be integrated out (:func:`integrated_decay_verdict`), else None."""
    if not integrated_decay_verdict(spec):
        return None
    return float(next(ch.rate for ch in spec.channels() if ch.name == "decay"))


def symmetric_sites_verdict(spec) -> Verdict:
    """Do two start sites that a symmetry of the layout maps onto each other (with its reset sites:
    :meth:`~lru_mps.physics.geometry.Geometry.symmetries`) have one ensemble (docs/physics.md §3.4)?

    The ensemble of a start site averages over the disorder, the thermal start and the events; a symmetry p
    of the graph that keeps the set of reset sites maps every realization of the array started at site s onto
    one started at p(s) with the same probability when every site and every edge draws the same distribution
    independently of its number: a pattern drawn site by site (box, gaussian) with the spreads, one T1 and
    one Tphi on every site, a uniform hopping profile and no device file (whose sites each have their own
    values).  The two ensembles are then equal in distribution: one run stands for both.
    """
    if spec.device is not None:
        return Verdict(False, "a device file gives every site its own frequency, anharmonicity and rates")
    from . import disorder

    if spec.disorder_pattern not in disorder.SITE_PATTERNS:
        return Verdict(False, f"the {spec.disorder_pattern} pattern runs along the site numbers")
    if isinstance(spec.conditions.T1q, tuple) or isinstance(spec.conditions.Tphi, tuple):
        return Verdict(False, "T1 or Tphi differs between sites")
    if spec.profile() is not None:
        return Verdict(False, "a hopping profile gives each bond its own coupling")
    return Verdict(True, "every site and edge draws the same distribution: a symmetry of the layout with its reset "
                         "sites maps one start site's ensemble onto the other's")
