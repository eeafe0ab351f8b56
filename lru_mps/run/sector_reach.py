"""Whether a sector-engine run's events keep its rows inside the engine's reach, judged before the run starts.

The sector engine holds a row in its N sector; a sector of more than
:data:`~lru_mps.engines.sector.state.MAX_SECTOR_DIM` states does not fit
(on L = 24 sites N <= 7, on L = 33 N <= 5).  A thermal start over that
limit is left out of the sample (:func:`lru_mps.run.thermal_sample.thermal_cap`),
but an *event* can raise a row's N while it runs: a thermal bath's heating
a^dag (rate gamma_l nbar_l per site, :mod:`lru_mps.physics.bath`) and a
readout's false report at a reset site (an empty site reported as |n>
gets |n> written into it, rate G p(n|0) per reset site,
:mod:`lru_mps.physics.readout`).  A row raised past the limit cannot go on
(a graph has no other engine), and the run stops there
(:meth:`~lru_mps.engines.sector.state.SectorPropagator.check_raised`),
possibly hours in.  :func:`check_rows_stay_in_reach` refuses such a run
before it starts, where the expected number of rows so raised is not small.

The estimate (:func:`expected_rows_raised`): site 1 holds its start's level
(2 for a leakage start, 1 otherwise; its decay only lowers N), the other
sites their thermal Gibbs weights (nominal, averaged over realizations; at
T = 0 empty), independent, as at J = 0 (hopping conserves N).  An event of
size dN at rate R that lands in [0, t_final] raises a row past the limit
N_max when N > N_max - dN before it, so a row expects

    t_final * sum_events R * P(N_max - dN < N <= N_max)

such events.  Decays are left out (they only lower N) and the thermal
sample is the stationary one of the bath at the same temperature, so this
is an estimate from above for the rows that keep their start's
excitations, not a bound for every row.
"""

from __future__ import annotations

import numpy as np

from ..errors import require
from ..physics import bath as baths
from ..physics.model import ArraySpec
from ..physics.rules import number_raisers
from .thermal_sample import nominal_probabilities, number_distribution, start_number

#: a run is refused before it starts where more than this many of its rows are expected to be raised past the
#: sector engine's limit by an event (the run would stop at the first of them)
RAISED_ROWS_MAX = 0.05


def raising_events(spec: ArraySpec) -> list[tuple[str, int, float]]:
    """(option, dN, rate in J) of every event that raises N: the thermal bath's heating (+1 at each site, rate
    gamma_l nbar_l) and a readout's false reports (+n at each reset site, rate G p(n|0) for n = 1, 2, periodic or
    random feedback)."""
    events = []
    if spec.thermal_bath:
        events += [("thermal_bath", 1, up) for _, _, up in baths.rates(spec) if up > 0]
    if spec.readout is not None and spec.reset.kind in ("periodic", "random"):
        for n in (1, 2):
            rate = spec.reset.rate * float(spec.readout[0][n])
            if rate > 0:
                events += [("readout_error", n, rate)] * len(spec.reset_sites)
    return events


def others_number(spec: ArraySpec, n_max: int) -> np.ndarray:
    """P(N of sites 2..L = n), n = 0..n_max: their thermal Gibbs weights averaged over realizations (all empty at
    T = 0)."""
    if spec.conditions.temperature_K == 0.0:
        return np.eye(1, n_max + 1).ravel()
    return number_distribution(nominal_probabilities(spec), n_max)


def raised_per_row(spec: ArraySpec, t_final: float, init: str, n_max: int, option: str | None = None,
                   others: np.ndarray | None = None) -> float:
    """The expected number of events that raise a row of start ``init`` from N <= ``n_max`` past it within
    ``t_final`` (1/J): the estimate of the module docstring (decays left out: from above for a row that keeps its
    start's excitations); ``option`` keeps the events of that option only; ``others``: :func:`others_number`, if
    already at hand."""
    events = [(dn, rate) for name, dn, rate in raising_events(spec) if option in (None, name)]
    if not events:
        return 0.0
    others = others_number(spec, n_max) if others is None else others
    n1 = start_number(init)
    p = np.zeros(n_max + 1)  # N = n1 + N_others over the starts that fit
    p[n1:] = others[:n_max + 1 - n1]
    return float(t_final * sum(rate * p[max(0, n_max - dn + 1):].sum() for dn, rate in events))


def expected_rows_raised(spec: ArraySpec, settings, option: str | None = None) -> float:
    """The expected number of the run's rows that an event raises past the sector engine's limit
    (:func:`raised_per_row` summed over the rows; for small values the chance that any row is); 0 where the run is
    not on the sector engine, no event raises N or every sector fits.  ``option``: that option's events only."""
    if getattr(settings, "engine", None) != "sector" or not raising_events(spec):
        return 0.0
    from ..engines.sector import state as sector

    n_max = sector.largest_number(spec.L, sector.MAX_SECTOR_DIM)
    if n_max is None:
        return 0.0
    t_final, others = float(settings.times[-1]), others_number(spec, n_max)
    return float(sum(settings.trajectories * raised_per_row(spec, t_final, init, n_max, option, others)
                     for init in settings.inits))


def check_rows_stay_in_reach(spec: ArraySpec, settings) -> None:
    """Refuse, before any work, a sector-engine run whose events are expected to raise more than
    :data:`RAISED_ROWS_MAX` of its rows past the engine's limit, naming the option whose events raise the most."""
    expected = expected_rows_raised(spec, settings)
    if expected <= RAISED_ROWS_MAX:
        return
    from ..engines.sector import state as sector

    n_max = sector.largest_number(spec.L, sector.MAX_SECTOR_DIM)
    options = sorted({name for name, _, _ in raising_events(spec)},
                     key=lambda name: expected_rows_raised(spec, settings, name))
    option = options[-1]
    value = True if option == "thermal_bath" else f"p(1|0) = {spec.readout[0][1]:g}, p(2|0) = {spec.readout[0][2]:g}"
    graph = spec.geometry is not None and not spec.geometry.is_chain
    require(False, option, value,
            f"sector-engine runs whose events keep their rows within the engine's limit (N <= {n_max} on "
            f"L = {spec.L} sites, {sector.MAX_SECTOR_DIM:,} states): here the run's "
            f"{settings.trajectories * len(settings.inits)} rows would be raised past it about {expected:.3g} times "
            f"within t_final = {float(settings.times[-1]):.4g}/J (more than {RAISED_ROWS_MAX:g} is refused: the run "
            f"would stop at the first; what raises N: "
            + "; ".join(number_raisers(spec)) + ")",
            "fewer sites, a lower temperature, a shorter t_final or fewer trajectories" if graph else
            "--engine auto: a row raised past the sector engine's size is handed over to MPS")
