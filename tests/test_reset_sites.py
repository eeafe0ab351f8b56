"""Several reset sites on one array (LRUs on a grid's boundary): every reset site carries the reset's channels.

The numbering puts the reset sites last (Geometry.resets of them); one reset site is the chain's convention, bit for
bit (tests/test_geometry.py, the pinned values).  Checked here against things written independently of the
trajectory loop: the measurement map built by hand from one-site operators, the one-excitation master equation
against the full Lindblad reference, each site's N = 1 rate against the late decay of that master equation, and the
engines per trajectory (sector = exact = batched exact, with measurements on both reset sites).  The ensemble
against the Lindblad reference under realistic conditions is a row of the combination test
(tests/test_combinations.py::test_reset_sites_case_right).
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers import batched, one, qubit_rate_and_late_slope, records_differ
from lru_mps.errors import ParameterError
from lru_mps.physics import geometry as geo
from lru_mps.physics import operators as ops
from lru_mps.physics.conditions import Conditions, Reset
from lru_mps.physics.model import ArraySpec
from lru_mps.references import lindblad
from lru_mps.references.single_excitation import qubit_population_n1
from lru_mps.run.settings import RunSettings, time_grid


def _two_resets(reset="periodic", rate="0.05J", **kw) -> ArraySpec:
    """A 2 x 2 grid, the qubit at (1, 1), LRUs on its two neighbours (1, 2) and (2, 1)."""
    return ArraySpec.from_user(geometry="grid:2x2", start_site="1,1", reset_site="1,2; 2,1", reset=reset, rate=rate,
                               **kw)


def test_reset_sites_are_numbered_last_and_named_as_the_user_gave_them():
    spec = _two_resets(conditions="ideal")
    g = spec.geometry
    assert spec.reset_sites == (2, 3) and g.resets == 2
    assert [g.coords[k] for k in spec.reset_sites] == [(0, 1), (1, 0)]  # in the user's order
    assert g.coords[0] == (0, 0) and not spec.is_chain and spec.transit_hops == 1
    assert g.as_dict()["geometry_resets"] == 2 and "geometry_resets" not in geo.grid(2, 2).as_dict()
    assert [(ch.name, ch.site) for ch in spec.channels()] == []  # ideal periodic: no Lindblad channel
    diss = _two_resets("dissipation", "0.3J", conditions="ideal")
    assert [(ch.name, ch.site) for ch in diss.channels()] == [("dissipation", 2), ("dissipation", 3)]
    # the same list as a Python list of coordinates
    assert ArraySpec.from_user(geometry="grid:2x2", start_site="1,1", reset_site=[(1, 2), (2, 1)],
                               conditions="ideal").geometry == g
    # a chain with two reset sites is not the chain the chain-only methods take
    two_ends = geo.chain(4).relabel(1, [0, 3])
    assert two_ends.resets == 2 and not two_ends.is_chain


@pytest.mark.parametrize("kw, name", [
    (dict(reset="random"), "reset"),
    (dict(reset_site="1,2; 1,2"), "reset_site"),
    (dict(reset_site="1,2; 1,1"), "reset_site"),
    (dict(reset_site="1,2; 3,3"), "reset_site"),
    (dict(engine="mps"), "engine"),
])
def test_refusals_name_the_option(kw, name):
    from lru_mps.run.simulate import simulate

    engine = kw.pop("engine", None)
    opts = dict(geometry="grid:2x2", start_site="1,1", reset_site="1,2; 2,1", conditions="ideal")
    opts.update(kw)
    with pytest.raises(ParameterError) as err:
        spec = ArraySpec.from_user(**opts)
        simulate(spec, engine=engine, trajectories=2, t_final=10.0, time_points=3)
    assert err.value.name == name


def test_the_measurement_map_measures_every_reset_site():
    """The Lindblad reference's periodic map with two reset sites is rho -> sum_{n, m} P_n^(r1) P_m^(r2) rho (...)^dag
    with P_n = |0><n| built here from one-site operators; it preserves the trace, and it equals the two one-site
    maps applied one after the other."""
    spec = _two_resets(conditions="ideal")
    L = spec.L
    rng = np.random.default_rng(3)
    A = rng.normal(size=(3 ** L, 3 ** L)) + 1j * rng.normal(size=(3 ** L, 3 ** L))
    rho = A @ A.conj().T
    rho /= np.trace(rho)

    def site_map(site, r):
        out = 0
        for n in range(3):
            P = np.kron(np.kron(np.eye(3 ** site), ops.reset_op(n)), np.eye(3 ** (L - 1 - site)))
            out = out + P @ r @ P.conj().T
        return out

    want = site_map(3, site_map(2, rho))
    got = sum(P @ rho @ P.conj().T for P in (K.toarray() for K in lindblad._measurement_operators(spec)))
    np.testing.assert_allclose(got, want, atol=1e-14)
    assert np.trace(got).real == pytest.approx(1.0, abs=1e-13)
    assert len(lindblad._measurement_operators(spec)) == 9


@pytest.mark.parametrize("kind, rate", [("dissipation", 0.3), ("periodic", 0.2)])
def test_single_excitation_reference_with_two_reset_sites(kind, rate):
    """The N = 1 master equation's <n_1>(t) equals the full Lindblad reference's, two reset sites, with noise."""
    spec = ArraySpec(L=4, geometry=geo.grid(2, 2).relabel(0, [1, 2]), reset=Reset(kind, rate),
                     conditions=Conditions(T1q=300.0, Tphi=200.0), hopping_spread=0.2)
    real = spec.draw_realization(np.random.default_rng(5))
    times = np.linspace(0.0, 60.0, 13)
    ref = lindblad.lindblad_observables(spec, real, "qubit", times, t0_nodes=8).populations[:, 0, 1]
    np.testing.assert_allclose(qubit_population_n1(spec, real, times, t0_nodes=8), ref, atol=1e-9)


@pytest.mark.parametrize("kind, rate", [("dissipation", "0.04J"), ("periodic", "0.03J")])
def test_each_sites_qubit_rate_with_boundary_resets(kind, rate):
    """A 2 x 3 grid with LRUs at two corners ((1, 3) and (2, 3)), six realizations: the exact N = 1 Gamma_1 of the
    start sites two hops from the LRUs ((1, 1), (2, 1)) against the late decay of the one-excitation master equation
    (fitted over [T1, 3 T1]) to 2 % (measured <= 0.3 %), where the qubit mode holds >= 0.9 of the start's weight.
    (A start next to an LRU hybridizes with it: the slope of <n_1> then mixes modes of near rates, by up to 3 %.)
    Power: with the reset on the first corner alone the rate moves by > 10 % for at least a third of the starts."""
    from lru_mps.analysis.rates import qubit_rates

    checked, moved = 0, 0
    for seed in range(6):
        for start in ("1,1", "2,1"):
            spec = ArraySpec.from_user(geometry="grid:2x3", start_site=start, reset_site="1,3; 2,3", reset=kind,
                                       rate=rate, conditions="ideal", disorder="200MHz")
            real = spec.draw_realization(np.random.default_rng(100 + seed))
            got = qubit_rate_and_late_slope(spec, real)
            if got is None:
                continue
            gamma1, slope = got
            assert slope == pytest.approx(gamma1, rel=0.02), (seed, start, slope, gamma1)
            g = spec.geometry
            first_only = spec.replace(geometry=geo.Geometry(g.name, g.L, g.edges, g.coords, g.labels, 1))
            try:
                moved += abs(qubit_rates(first_only, real).gamma1 / gamma1 - 1) > 0.1
            except ParameterError:  # under the round-off floor with one LRU: moved by far more than 10 %
                moved += 1
            checked += 1
    assert checked >= 8 and moved >= checked // 3


def test_sector_exact_and_batched_follow_each_other_with_two_reset_sites():
    """2 x 3 grid, LRUs at (1, 3) and (2, 3), 250 mK, noise, periodic feedback with a readout error: sector = exact =
    batched exact per record (1e-8), with measurements on both reset sites among the events."""
    spec = ArraySpec.from_user(geometry="grid:2x3", reset_site="1,3; 2,3", conditions="realistic", reset="periodic",
                               rate="0.5J", t1="30/J", tphi="20/J", temperature="250mK", hopping_spread="5%",
                               readout_error=0.05)
    times = time_grid(20.0, 5)
    ex = RunSettings(times=times, seed=9, engine="exact")
    se = RunSettings(times=times, seed=9, engine="sector")
    rows = batched(spec, ex, [0, 1])
    sites = set()
    for i in range(2):
        a, b = one(spec, ex, i), one(spec, se, i)
        assert records_differ(a, b, tol=1e-8) == [], i
        assert records_differ(a, rows[i], tol=1e-8) == [], i
        sites |= {e.site for r in a.values() for e in r.events if e.channel == "measurement"}
    assert sites == {4, 5}


def test_the_command_line_names_every_reset_site():
    """`lru-mps simulate --geometry lru-grid:2x2 --start-site 2,2`: the layout's four LRU ends are the reset sites,
    listed in the JSON as the user types sites (reset_site: the last of them, as on one reset site)."""
    import json

    from click.testing import CliRunner

    from lru_mps_cli.main import main

    res = CliRunner().invoke(main, ["simulate", "--geometry", "lru-grid:2x2", "--start-site", "2,2", "--conditions",
                                    "ideal", "--trajectories", "2", "--t-final", "50/J", "--time-points", "3", "--json"])
    assert res.exit_code == 0, res.output
    p = json.loads(res.output)
    p = p.get("parameters", p)
    assert p["start_site"] == "2,2" and p["transit_hops"] == 2
    assert p["reset_sites"] == ["-1,1", "-1,2", "4,1", "4,2"] and p["reset_site"] == "4,2"
    assert p["reset_layout_sites"] == [9, 10, 11, 12]
