"""`lru-mps study routing`: the layouts, the outputs, each map point against its own ensemble, the verdict, bad input,
and the maps' error bars against the scatter over seeds.

Cost: the quick study (~70 s of CPU, once: the session's, conftest.quick_study); the calibration over seeds (long: 4 seeds reduced,
~5 min on one core; 16 full).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from conftest import copy_study, long_scale
from helpers import LIFETIME_KEYS, check_lifetimes, load_study, stored_lifetimes
from lru_mps.analysis.rates import qubit_rates
from lru_mps.analysis.routing import routing_verdict, typical_time, window_lifetimes
from lru_mps.errors import ParameterError
from lru_mps.physics import geometry as geo
from lru_mps.run.simulate import simulate
from lru_mps.run.trajectories import disorder_rng
from lru_mps.studies import run_study, study_names
from lru_mps.studies.base import StudyContext
from lru_mps.studies.common import spec_of
from lru_mps.studies.routing import REALISTIC_RUN, _conditions, _t_final


@pytest.fixture(scope="module")
def quick(quick_study):
    res, _ = quick_study("routing")  # the session's run (conftest), shared with tests/test_gaps.py, test_figures.py
    return res.out, res


# ------------------------------------------------------------------------------------------- the layouts
def test_lru_grid_layouts():
    """Arms of lru_arm transmons leave the boundary outward; their ends are the reset sites, numbered last."""
    g = geo.lru_grid(3, 3)
    assert g.L == 9 + 4 * 2 and g.resets == 4 and g.reset_sites == (13, 14, 15, 16)
    assert [g.coords[k] for k in g.reset_sites] == [(-2, 0), (-2, 2), (4, 0), (4, 2)]
    assert geo.coding_sites(g) == list(range(9)) and g.coords[:9] == geo.grid(3, 3).coords
    deg = g.degrees()
    assert list(deg[list(g.reset_sites)]) == [1] * 4 and deg[0] == 3 and deg[4] == 4  # a corner: 2 + its arm
    assert g.reset_distance(4) == 4 and g.reset_distance(0) == 2
    sides = geo.lru_grid(5, 5, "sides", 1)
    assert sides.resets == 4 and sorted(sides.coords[k] for k in sides.reset_sites) == [(-1, 2), (2, -1), (2, 5),
                                                                                         (5, 2)]
    boundary = geo.lru_grid(4, 4, "boundary", 3)
    assert boundary.resets == 12 and boundary.L == 16 + 12 * 3
    assert geo.parse("lru-grid:4x4:boundary:3") == boundary and geo.parse("lru-grid:3x3") == g
    relabelled = g.relabel(4, list(g.reset_sites))  # the study's renumbering: the start first, the resets last
    assert relabelled.coords[0] == (1, 1) and relabelled.reset_sites == g.reset_sites
    assert [relabelled.coords[k] for k in relabelled.reset_sites] == [g.coords[k] for k in g.reset_sites]
    for bad, name in (("lru-grid:1x3", "geometry"), ("lru-grid:3x3:edge", "lrus")):
        with pytest.raises(ParameterError) as err:
            geo.parse(bad)
        assert err.value.name == name
    for kw, name in ((dict(lrus="edges"), "lrus"), (dict(arm=0), "lru_arm"), (dict(arm=9), "lru_arm")):
        with pytest.raises(ParameterError) as err:
            geo.lru_grid(3, 3, **kw)
        assert err.value.name == name


def _is_symmetry(g, p) -> bool:
    return ({tuple(sorted((p[i], p[j]))) for i, j in g.edges} == set(g.edges)
            and {p[k] for k in g.reset_sites} == set(g.reset_sites))


def test_layout_symmetries_and_site_classes():
    """The symmetries of a layout with its LRUs are exactly its automorphisms that keep the reset sites: against a
    brute force over all permutations of a 2 x 3 grid with a reset corner and of a 2 x 2 grid with four one-transmon LRUs, and on the routing layouts the
    dihedral group of the square (8; 4 for a 3 x 4 grid), each one an automorphism, closed under composition; the
    coding sites fall into the classes of the square's symmetry."""
    import itertools

    for g, n in ((geo.grid(2, 3), 1), (geo.lru_grid(2, 2, "corners", 1), 8)):  # (grid: the reset corner (2, 3))
        brute = sorted(p for p in itertools.permutations(range(g.L)) if _is_symmetry(g, p))
        assert sorted(g.symmetries()) == brute and len(brute) == n and g.symmetries()[0] == tuple(range(g.L))
    assert len(geo.grid(3, 3).symmetries()) == 2  # the reset corner keeps the diagonal only
    for (R, C, place, arm), n_sym, sizes in [((3, 3, "corners", 2), 8, [4, 4, 1]), ((4, 4, "corners", 2), 8, [4, 8, 4]),
                                             ((5, 5, "corners", 2), 8, [4, 8, 4, 4, 4, 1]),
                                             ((3, 4, "corners", 2), 4, [4, 4, 2, 2]),
                                             ((5, 5, "sides", 1), 8, [4, 8, 4, 4, 4, 1]),
                                             ((4, 4, "boundary", 3), 8, [4, 8, 4])]:
        lay = geo.lru_grid(R, C, place, arm)
        autos = lay.symmetries()
        assert len(autos) == n_sym and len(set(autos)) == n_sym and all(_is_symmetry(lay, p) for p in autos)
        group = set(autos)
        assert all(tuple(a[b[k]] for k in range(lay.L)) in group for a in autos for b in autos)
        classes = lay.site_classes(geo.coding_sites(lay))
        assert [len(c) for c in classes] == sizes and sorted(sum(classes, [])) == geo.coding_sites(lay)
    corners = geo.lru_grid(3, 3).site_classes(range(9))
    assert corners == [[0, 2, 6, 8], [1, 3, 5, 7], [4]]
    # one LRU at a corner: the diagonal through it is the only symmetry
    one = geo.lru_grid(3, 3)
    single = geo.Geometry("one-lru", one.L, one.edges, one.coords, None, 1)
    assert len(single.symmetries()) == 2


def test_a_symmetry_maps_a_start_sites_array_onto_its_images():
    """The physics behind one ensemble per class: a realization of the layout started at one corner, carried by a
    symmetry onto the layout started at another corner (every site's dw, U and every edge's coupling moved with
    it), has the same qubit rates (exact N = 1) and the same leakage dynamics (the stack's no-jump norm under the
    LRUs' dissipation and its population on the qubit, sector engine) to rounding; started on a site that is not an image (the arm's first transmon) they differ.  The
    rule says when every realization is as probable as its image (symmetric_sites_verdict)."""
    from lru_mps.analysis.rates import graph_rates_floored
    from lru_mps.physics.model import ArraySpec, Realization
    from lru_mps.physics.rules import symmetric_sites_verdict
    from lru_mps.engines import get_engine

    g = geo.lru_grid(2, 2)
    autos = g.symmetries()

    def spec_at(k):
        return ArraySpec.from_user(geometry=g.relabel(k, list(g.reset_sites)), reset="dissipation", rate="0.2J",
                                   conditions="ideal", hopping_spread="10%")

    a = spec_at(0)
    real = a.draw_realization(np.random.default_rng(3))
    assert real.J is not None

    def carried(p, k):
        """real moved by the site permutation p (original numbering) onto the layout started at site k."""
        b = spec_at(k)
        old_of = {o: n for n, o in enumerate(a.geometry.labels)}  # original site -> index in a
        src = [old_of[next(o for o in range(g.L) if p[o] == b.geometry.labels[n])] for n in range(b.L)]
        edge_of = {e: i for i, e in enumerate(a.geometry.edges)}
        J = [real.J[edge_of[tuple(sorted((src[i], src[j])))]] for i, j in b.geometry.edges]
        return b, Realization(dw=real.dw[src], U=real.U[src], J=np.array(J), edges=b.geometry.edges)

    def leakage(spec, r, t):
        """(no-jump norm, stack population on the qubit) of the leakage start under the LRUs' dissipation"""
        st = get_engine("sector").prepare(spec, r).state([np.eye(3)[2]] + [np.eye(3)[0]] * (spec.L - 1))
        st.evolve(t)
        return st.norm2(), st.site_populations()[0, 2]

    ref = graph_rates_floored(a, real)
    curve = [leakage(a, real, t) for t in (20.0, 200.0)]
    assert 0.05 < curve[1][0] < 0.95  # (the stack is on its way out: a curve that tells)
    images = [p for p in autos if p[0] != 0]
    assert {p[0] for p in images} == {1, 2, 3}
    for p in images:
        b, moved = carried(p, p[0])
        assert graph_rates_floored(b, moved)[:2] == pytest.approx(ref[:2], rel=1e-9)
        assert np.allclose([leakage(b, moved, t) for t in (20.0, 200.0)], curve, rtol=1e-9, atol=1e-12)
    # not a symmetry: the same array started on the arm's first transmon (not an image of the corner) differs
    arm = next(k for k in range(g.L) if g.coords[k] == (-1, 0))
    b, moved = carried(tuple(range(g.L)), arm)  # the same array, started on the arm's first transmon
    assert abs(graph_rates_floored(b, moved)[0] / ref[0] - 1) > 1e-3
    assert abs(leakage(b, moved, 200.0)[0] / curve[1][0] - 1) > 1e-3
    # the rule: the disorder, T1 and Tphi the same on every site; not a device file's nor a per-site T1
    from lru_mps.physics.conditions import Conditions

    assert symmetric_sites_verdict(a) and symmetric_sites_verdict(spec_at(1).replace(
        conditions=Conditions(T1q=60.0, Tphi=90.0, temperature_K=0.1)))
    assert symmetric_sites_verdict(a.replace(disorder_pattern="gaussian"))
    per_site = a.replace(conditions=Conditions(T1q=tuple(50.0 + k for k in range(a.L)), Tphi=90.0))
    assert not symmetric_sites_verdict(per_site) and "T1" in symmetric_sites_verdict(per_site).reason


# -------------------------------------------------------------------------------------------- the study
def test_quick_routing_outputs(quick):
    out, res = quick
    cfg, s, ds = load_study(out)
    assert s == json.loads(json.dumps(res.summary, default=float)) and "routing" in study_names()
    assert s["grid_sizes"] == ["2x2", "3x3"] and s["conditions"] == ["ideal", "realistic 0 mK", "realistic 100 mK"]
    assert s["n_sites"] == [12, 17] and s["n_lrus"] == [4, 4]
    assert ds["T_star_J"].dims == ("grid", "site", "condition") and ds.sizes["site"] == 9
    assert ds["T1_typical_J"].dims == ("grid", "site")
    assert [len(rows) for rows in s["sites"]] == [4, 9]
    # every site's coordinates, 1-based in the summary, 0-based in the dataset; the 2x2 grid's padding is -1
    assert [(p["row"], p["col"]) for p in s["sites"][1]] == [(r, c) for r in (1, 2, 3) for c in (1, 2, 3)]
    assert list(ds["row"].values[0]) == [0, 0, 1, 1, -1, -1, -1, -1, -1]
    # 100 mK on the 2x2 layout (12 transmons) only: quick's thermal_max_sites = 12, the 3x3's points say why
    assert bool(ds["run"].values[0, :4, 2].all()) and not ds["run"].values[1, :, 2].any()
    assert "thermal_max_sites" in s["sites"][1][0]["conditions"]["realistic 100 mK"]["not_run"]
    assert np.isnan(ds["T1_J"].values[1, :, 2]).all()
    assert set(s["baseline"]) == set(s["conditions"]) and s["baseline"]["ideal"]["T_star"]["value_J"] > 0
    v = s["routing"]
    assert v["stops_paying_at"] in (None, "2x2", "3x3") and len(v["paying_share"]) == 2
    assert s["T_leak_own"]["value_us"] == pytest.approx(16.7 / 2)
    for name in ("maps_ideal", "maps_realistic_0_mK", "maps_realistic_100_mK", "leakage_lifetime_vs_grid"):
        assert (out / "figures" / f"{name}.png").stat().st_size > 1000
    assert "routing stops paying at" in res.table and "baseline, one L = 3 array per qubit" in res.table


def test_each_map_point_is_its_own_ensemble(quick):
    """A map point is the ensemble of leakage, qubit and coherence started on that site, run once for the sites a
    symmetry of the layout maps onto each other (on the first of them, ``ensemble_of``): its lifetimes equal those
    of simulate() on the layout renumbered with that site first (read from the study's store: the call fails if it
    would compute anything), at every site of the 2x2 grid and a corner, an edge and the centre of the 3x3 one,
    each condition; the typical T1, T2 are exp(<ln T>) of qubit_rates over the same realizations."""
    out, _ = quick
    cfg, s, ds = load_study(out)
    assert s["symmetry"]["used"] and s["symmetry"]["classes"] == [1, 3]
    assert list(ds["ensemble_site"].values[0, :4]) == [0] * 4
    assert list(ds["ensemble_site"].values[1]) == [0, 1, 0, 1, 4, 1, 0, 1, 0]
    assert s["sites"][1][8]["ensemble_of"] == {"row": 1, "col": 1} and s["sites"][1][4]["ensemble_of"] == {
        "row": 2, "col": 2}
    checked = 0
    for gi, (R, C) in enumerate([(2, 2), (3, 3)]):
        g = geo.lru_grid(R, C, cfg["lrus"], cfg["lru_arm"])
        sites = range(4) if R == 2 else [8, 5, 4]
        for si in sites:
            spec_geo = g.relabel(int(ds["ensemble_site"].values[gi, si]), list(g.reset_sites))
            for ci, (label, cond, temp) in enumerate(_conditions(cfg)):
                if not ds["run"].values[gi, si, ci]:
                    continue
                spec = spec_of(cfg, geometry=spec_geo, conditions=cond, **({} if temp is None else
                                                                          {"temperature": temp}))
                n = cfg["realizations"] if cond == "ideal" else cfg["trajectories"]
                run = dict(init="all", t_final=_t_final(spec, cfg), time_points=cfg["time_points"], trajectories=n)
                point = s["sites"][gi][si]["conditions"][label]
                if cond == "ideal":  # the integrals up to t_final, no T_star (a grid's ideal leakage: no exponential)
                    res = simulate(spec, seed=cfg["seed"], engine=cfg["engine"], estimator="branch",
                                   cache=out / "work", **run)
                    want = {k: v.as_json(spec.J_hz) for k, v in window_lifetimes(res).items()}
                    assert all(point[k]["tail"] == "lower bound" and point[k]["tail_J"] == 0.0
                               for k in ("leakage_lifetime_qubit", "leakage_lifetime_array"))
                    assert point["T_star"]["value_J"] is None and "slower than any exponential" in \
                        point["T_star"]["reason"]
                    assert point["T1"]["value_J"] == s["sites"][gi][si]["T1_typical"]["value_J"]
                else:
                    want = stored_lifetimes(out, spec, cfg, **run, **REALISTIC_RUN)
                check_lifetimes({k: point[k] for k in LIFETIME_KEYS}, ds.isel(grid=gi, site=si, condition=ci), want,
                                cond == "ideal")
                checked += 1
            spec = spec_of(cfg, geometry=spec_geo, conditions="ideal")
            T1 = [qubit_rates(spec, spec.draw_realization(disorder_rng(cfg["seed"], i))).T1
                  for i in range(cfg["realizations"])]
            assert float(ds["T1_typical_J"].values[gi, si]) == pytest.approx(math.exp(np.mean(np.log(T1))), rel=1e-9)
    assert checked == 4 * 3 + 3 * 2


def test_a_rerun_reuses_every_ensemble(quick, tmp_path):
    """Rerunning the quick study into its folder computes nothing (every block stored) and gives the same summary."""
    _, res = quick
    out = copy_study(res.out, tmp_path / "routing")  # (the session's folder is shared)
    blocks = {str(p): p.stat().st_mtime_ns for p in (out / "work").rglob("block_*.npz")}
    again = run_study("routing", StudyContext(out=out, workers=1), quick=True)
    assert {str(p): p.stat().st_mtime_ns for p in (out / "work").rglob("block_*.npz")} == blocks
    assert json.dumps(again.summary, default=float) == json.dumps(res.summary, default=float)


def test_starts_over_the_sector_limit_are_left_out_and_reported(tmp_path, monkeypatch):
    """With the sector engine's limit lowered to the 2x2 layout's N = 3 sector (a leakage start holds at most one
    thermal excitation), 100 mK runs to the end instead of stopping at the first start over it, and every 100 mK
    point reports the Gibbs mass left out: the mean over the ensemble's rows of each realization's mass above the
    cap (lru_mps.run.thermal_sample.excess_mass), in the summary, the dataset and the table; none at 0 K."""
    import lru_mps.engines.sector.state as sector_engine
    from lru_mps.engines.sector.engine import sector_dimension

    monkeypatch.setattr(sector_engine, "MAX_SECTOR_DIM", sector_dimension(12, 3))
    res = run_study("routing", StudyContext(out=tmp_path / "r", workers=1), quick=True,
                    overrides={"grids": "2x2", "realizations": 2, "trajectories": 8, "time_points": 11})
    _, s, ds = load_study(tmp_path / "r")
    masses = [p["conditions"]["realistic 100 mK"]["thermal_mass_dropped"] for p in s["sites"][0]]
    assert all(0.001 < m < 0.1 for m in masses)
    np.testing.assert_allclose(ds["thermal_mass_dropped"].sel(condition="realistic 100 mK").values[0, :4], masses)
    assert all("thermal_mass_dropped" not in p["conditions"]["realistic 0 mK"] for p in s["sites"][0])
    assert np.isnan(ds["thermal_mass_dropped"].sel(condition="realistic 0 mK").values).all()
    assert "left out: at most" in res.table


def test_the_verdict():
    """Routing pays where the median site's tau_L is under T1q/2; it stops at the first grid where it does not."""
    v = routing_verdict([[10.0, 20.0, 30.0], [40.0, 60.0, np.nan], [np.nan]], 50.0, ["a", "b", "c"])
    assert v["paying_share"] == [1.0, 0.5, None] and v["median_tau_J"] == [20.0, 50.0, None]
    assert v["pays"] == [True, False, None] and v["stops_paying_at"] == "b"
    assert routing_verdict([[1.0]], 2.0, ["a"])["stops_paying_at"] is None
    t, e = typical_time([1e-3, 1e-5, np.inf, 0.0])  # the finite positive rates only
    assert t == pytest.approx(1e4) and e == pytest.approx(1e4 * np.std(np.log([1e3, 1e5]), ddof=1) / math.sqrt(2))


@pytest.mark.parametrize("over, name", [
    (dict(geometry="grid:3x3"), "geometry"),
    (dict(reset_site="1"), "reset_site"),
    (dict(length=5), "length"),
    (dict(grids="3x3,1x4"), "grids"),
    (dict(grids="3x3,3x3"), "grids"),
    (dict(lrus="edges"), "lrus"),
    (dict(lru_arm=0), "lru_arm"),
    (dict(temperatures="0,-5mK"), "temperatures"),
    (dict(reset="random"), "reset"),
    (dict(thermal_sample="gibbs"), "thermal_sample"),
])
def test_bad_input_names_the_key(tmp_path, over, name):
    with pytest.raises(ParameterError) as err:
        run_study("routing", StudyContext(out=tmp_path / "x", workers=1), quick=True,
                  overrides={"grids": "2x2", **over})
    assert err.value.name == name


# ------------------------------------------------------------------------------- error bars over seeds
@pytest.mark.long
def test_map_errors_hold_over_seeds(tmp_path):
    """The maps' stated errors against the scatter of the same maps over independent seeds, at the default study's
    counts per class of sites (realizations, trajectories; shorter windows, 1000/J + 10 hops T_prop ideal and
    20 us realistic) on the 2x3 grid with corner LRUs (two classes: the corners and the middles), ideal and
    realistic at 0 K: per class and quantity z = (value - mean over seeds) / error, scaled by sqrt(K/(K-1)); the
    pooled mean of z^2 lies inside the chi-square band of its degrees of freedom (0.1 %-99.9 %) for tau_L and
    tau_1 (ideal: the integrals up to t_final), T1 and T2 (ideal: the typical values of the exact rates;
    realistic: the fits).  Measured over 16 seeds at the default's 256 realizations and 256 trajectories: ideal
    0.83, 0.72 (tau_L, tau_1), 1.12 (T1, T2); realistic 0.62, 1.13 (tau_L, tau_1), 1.15, 0.94 (T1, T2).  At 64
    realizations the ideal tau_L's came out at 2.12, at 128-192 trajectories the realistic tau_L's and tau_1's at
    1.3-2.0 (rare, heavily weighted rows): why the default runs 256 of each."""
    from scipy.stats import chi2

    from lru_mps.studies import get_study
    from lru_mps.studies.base import load_config

    K = 16 if long_scale() >= 1.0 else 4
    study = get_study("routing")
    over = dict(grids="2x3", temperatures="0", time_points=41, t_base="1000/J", t_per_hop=10.0,
                realistic_t_after="20us")
    values = {}
    for k in range(K):  # (the study's numbers without its files and figures)
        cfg = load_config("routing", study.DEFAULTS, None, {**over, "seed": 400 + k})
        s = study.compute(cfg, StudyContext(out=tmp_path / f"s{k}", workers=1))[1]
        assert s["symmetry"]["classes"] == [2]
        firsts = [i for i, p in enumerate(s["sites"][0]) if p["ensemble_of"] == {"row": p["row"], "col": p["col"]}]
        for label in s["conditions"]:
            for si in firsts:
                rec = s["sites"][0][si]["conditions"][label]
                for q in ("leakage_lifetime_array", "leakage_lifetime_qubit", "T1", "T2"):
                    values.setdefault((label, q), []).append((si, rec[q]["value_J"], rec[q]["error_J"]))
    measured = {}
    for (label, q), rows in values.items():
        z2, df = 0.0, 0
        for si in {r[0] for r in rows}:
            pairs = [(v, e) for s_, v, e in rows if s_ == si]
            if any(v is None or e is None for v, e in pairs):
                continue
            v, e = np.array(pairs, dtype=float).T
            z2 += float(np.sum(((v - v.mean()) / e) ** 2)) * K / (K - 1)
            df += K - 1
        assert df == 2 * (K - 1), (label, q)  # both classes resolved at every seed
        measured[(label, q)] = z2 / df
    print({f"{label} {q}": round(m, 2) for (label, q), m in measured.items()})
    for (label, q), m in measured.items():
        lo, hi = chi2.ppf(0.001, 2 * (K - 1)) / (2 * (K - 1)), chi2.ppf(0.999, 2 * (K - 1)) / (2 * (K - 1))
        assert lo < m < hi, (label, q, m, lo, hi)
