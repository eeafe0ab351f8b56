"""What the routing study reads off its maps: each site's typical qubit lifetimes and whether routing pays.

A grid of coding transmons routes a leakage stack to the LRUs on its boundary (docs/physics.md §3.4).  Two
numbers per coding site decide whether that beats one array per qubit:

``typical_time``       T1 (or T2) of a site in ideal conditions from the exact N = 1 rates of each disorder
                       realization (:func:`lru_mps.analysis.rates.qubit_rates`): the typical value
                       exp(<ln T>), with the standard error of the mean of ln T over the realizations (the
                       rates spread over decades, as on the chain; the arithmetic mean would be one
                       realization's).
``window_lifetimes``   tau_1, tau_L in ideal conditions as the integrals up to t_final, lower bounds.  On a grid
                       the disorder-averaged leakage decays slower than any exponential (measured on a 2 x 2
                       grid with corner LRUs: P_star^(L)(t) ~ 1/t from 10^4 to 8 x 10^4 / J, a few
                       realizations whose stack is all but trapped), so the mean lifetime grows with the window
                       (1,220/J at t_final = 10^4/J, 2,160/J at 8 x 10^4/J) and an exponential tail, or a
                       T_star, fitted to it would be a number of the window, not of the array.
``routing_verdict``    routing pays at a site where its leakage lives shorter than leakage on its own:
                       tau_L < T1q/2 (``|2>`` decays at 2/T1q; a lifetime above it means the hardware, not the
                       LRUs, ends most leakage).  With the ideal lower bound of tau_L the verdict "does not
                       pay" is certain and "pays" holds up to t_final.  Per grid: the share of coding sites
                       that pay and the median site's tau_L; the grid size at which routing stops paying is the
                       first (in the order given) whose median site no longer pays.
``removal_verdict``    the same question under the hardware, at one temperature of the array: routing pays at a
                       site whose LRUs end more than half of its leakage before the hardware does (removal
                       efficiency eta > 1/2).  With a removal rate Gamma competing with the decay of ``|2>`` at
                       2/T1q, eta = Gamma / (Gamma + 2/T1q), so eta > 1/2 is the ideal criterion 1/Gamma < T1q/2
                       read off the realistic ensembles (their tau_L holds the hardware's decay and lies under
                       T1q/2 whatever the LRUs do).  The median site decides per grid, as above.
"""

from __future__ import annotations

import math

import numpy as np


def typical_time(gammas) -> tuple[float, float]:
    """(exp(<ln 1/Gamma>), its standard error) of per-realization rates ``gammas`` (units of J; > 0, finite ones
    used); (nan, nan) without any, error nan with one."""
    g = np.asarray(gammas, dtype=float)
    g = g[np.isfinite(g) & (g > 0)]
    if not g.size:
        return math.nan, math.nan
    logs = -np.log(g)
    value = float(np.exp(logs.mean()))
    if g.size < 2:
        return value, math.nan
    return value, value * float(logs.std(ddof=1) / math.sqrt(g.size))


def window_lifetimes(result) -> dict:
    """tau_1, tau_L (1/J) as the integrals of P_star^(1), P_star^(L) up to t_final (Simpson's rule; tail 'lower
    bound': none added), with the jackknife error over the result's blocks, and the removal efficiency
    (:func:`lru_mps.analysis.lifetimes.leakage_lifetimes`' other entries)."""
    from scipy.integrate import simpson

    from .lifetimes import LIFETIME_OBSERVABLE, jackknifed_total, leakage_lifetimes

    def up_to_t_final(res, obs, window):
        return float(simpson(res.observable(obs).mean, x=res.times)), 0.0, "lower bound"

    out = leakage_lifetimes(result)
    if out[next(iter(LIFETIME_OBSERVABLE))] is None:
        return out
    out.update({name: jackknifed_total(result, obs, up_to_t_final) for name, obs in LIFETIME_OBSERVABLE.items()})
    return out


#: the removal efficiency above which the LRUs end most of a site's leakage before the hardware (removal_verdict)
ETA_PAYS = 0.5


def routing_verdict(tau_by_grid: list, limit: float, names: list[str]) -> dict:
    """Whether routing pays on each grid: ``tau_by_grid[g]`` the coding sites' leakage lifetimes tau_L (1/J, nan
    where not resolved), ``limit`` T1q/2 (1/J), ``names`` the grids' names in the order given.

    Returns {"paying_share": [share of the resolved sites with tau_L < limit per grid], "median_tau_J": [...],
    "pays": [median < limit per grid (None where no site is resolved)], "stops_paying_at": the first grid whose
    median does not pay (None where every grid pays)}."""
    shares, medians, pays = [], [], []
    for taus in tau_by_grid:
        t = np.asarray(taus, dtype=float)
        t = t[np.isfinite(t)]
        if not t.size or not math.isfinite(limit):
            shares.append(None)
            medians.append(None if not t.size else float(np.median(t)))
            pays.append(None)
            continue
        shares.append(float(np.mean(t < limit)))
        medians.append(float(np.median(t)))
        pays.append(bool(medians[-1] < limit))
    stops = next((names[i] for i, p in enumerate(pays) if p is False), None)
    return {"paying_share": shares, "median_tau_J": medians, "pays": pays, "stops_paying_at": stops}


def removal_verdict(eta_by_grid: list, names: list[str]) -> dict:
    """Whether routing pays on each grid under the hardware at one temperature: ``eta_by_grid[g]`` the coding
    sites' removal efficiencies eta (the share of the leakage the LRUs end before the hardware; nan where not
    resolved or not run), ``names`` the grids' names in the order given (module doc: eta > :data:`ETA_PAYS`).

    Returns {"paying_share": [share of the resolved sites with eta > 1/2 per grid], "median_eta": [...], "pays":
    [median > 1/2 per grid (None where no site is resolved)], "stops_paying_at": the first grid whose median does
    not pay (None where every grid resolved pays)}."""
    shares, medians, pays = [], [], []
    for etas in eta_by_grid:
        e = np.asarray(etas, dtype=float)
        e = e[np.isfinite(e)]
        if not e.size:
            shares.append(None)
            medians.append(None)
            pays.append(None)
            continue
        shares.append(float(np.mean(e > ETA_PAYS)))
        medians.append(float(np.median(e)))
        pays.append(bool(medians[-1] > ETA_PAYS))
    stops = next((names[i] for i, p in enumerate(pays) if p is False), None)
    return {"paying_share": shares, "median_eta": medians, "pays": pays, "stops_paying_at": stops}
