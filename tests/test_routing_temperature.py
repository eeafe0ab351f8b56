"""`lru-mps study routing` at temperature: two layouts at 100 mK beside 0 K, and one left out.

The run: the 2x2 and 3x3 grids (12 and 17 transmons) at 0 and 100 mK with thermal_max_sites = 17, and the 2x5
grid (18 transmons: run at 0 K only), with the sector engine's limit lowered to the N = 3 sector of the 3x3
layout (952 states), so that a leakage start holds at most one thermal excitation and both layouts leave an
appreciable Gibbs mass out at 100 mK (4 % and 8 %; at the engine's own limit the 2x2 layout leaves none and the
3x3 one 4e-9).  Checked: the table's row per layout and temperature with its thermal mass left out, the summary's
``by_temperature`` (the mass, the verdict at each temperature, the baseline beside it) against the dataset, and
the figure of the maps at every temperature side by side.

Cost: one small study, ~35-50 s on one core (8 realizations, 16 trajectories, 21 time points).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from lru_mps.analysis.routing import ETA_PAYS, removal_verdict
from lru_mps.studies import run_study
from lru_mps.studies.base import StudyContext, kept_figures

#: the run's overrides on --quick (its windows and windows' points)
OVERRIDES = {"grids": "2x2,3x3,2x5", "temperatures": "0,100mK", "thermal_max_sites": 17, "realizations": 8,
             "trajectories": 16, "time_points": 21}
HOT, COLD = "realistic 100 mK", "realistic 0 mK"


@pytest.fixture(scope="module")
def hot(tmp_path_factory):
    """(StudyResult, {figure name: figure as saved}) of the run (module doc)."""
    import lru_mps.engines.sector.state as sector_engine

    with pytest.MonkeyPatch.context() as mp, kept_figures() as kept:
        mp.setattr(sector_engine, "MAX_SECTOR_DIM", sector_engine.sector_dimension(17, 3))
        res = run_study("routing", StudyContext(out=tmp_path_factory.mktemp("routing-hot"), workers=1,
                                                quiet=True), quick=True, overrides=OVERRIDES)
    return res, {f.get_label(): f for f in kept}


def _n(res, gi: int) -> int:
    return int(res.dataset["grid_rows"].values[gi] * res.dataset["grid_cols"].values[gi])


def test_the_summary_per_temperature(hot):
    """``by_temperature``: per realistic temperature, whether each layout ran, its thermal mass left out (the
    largest of its points' in the dataset; 0 at 0 K and where every start fits; null with the reason where it did
    not run) and the verdict: removal_verdict of the sites' eta, the median tau_L against the baseline's; the
    existing verdict (ideal) kept as it was."""
    res, _ = hot
    s, ds = res.summary, res.dataset
    assert list(s["by_temperature"]) == [COLD, HOT]
    cold, warm = s["by_temperature"][COLD], s["by_temperature"][HOT]
    assert cold["temperature_K"] == 0.0 and warm["temperature_K"] == pytest.approx(0.1)
    assert cold["run"] == [True, True, True] and warm["run"] == [True, True, False]
    assert cold["thermal_mass_dropped"] == [0.0, 0.0, 0.0] and "not_run_reason" not in cold
    dropped = ds["thermal_mass_dropped"].sel(condition=HOT).values
    for gi in (0, 1):
        assert warm["thermal_mass_dropped"][gi] == pytest.approx(np.nanmax(dropped[gi, :_n(res, gi)]), rel=1e-12)
        assert 0.01 < warm["thermal_mass_dropped"][gi] < 0.2
    assert warm["thermal_mass_dropped"][2] is None and "thermal_max_sites = 17" in warm[
        "thermal_mass_dropped_reason"][2]
    assert "thermal_max_sites = 17" in warm["not_run_reason"][2] and warm["not_run_reason"][:2] == [None, None]
    for label, entry in s["by_temperature"].items():
        v = entry["routing"]
        eta = ds["removal_efficiency"].sel(condition=label).values
        want = removal_verdict([eta[gi, :_n(res, gi)] if entry["run"][gi] else [] for gi in range(3)],
                               s["grid_sizes"])
        assert {k: v[k] for k in want} == want and "eta over 0.5" in v["criterion"]
        base = float(ds["baseline_leakage_lifetime_array_J"].sel(condition=label))
        assert v["baseline_tau_J"] == pytest.approx(base) and v["baseline_eta"] == pytest.approx(
            float(ds["baseline_removal_efficiency"].sel(condition=label)))
        tau = ds["leakage_lifetime_array_J"].sel(condition=label).values
        for gi in range(3):
            if entry["run"][gi]:
                assert v["median_tau_J"][gi] == pytest.approx(np.median(tau[gi, :_n(res, gi)]))
                assert v["median_tau_over_baseline"][gi] == pytest.approx(v["median_tau_J"][gi] / base)
                assert v["pays"][gi] == (v["median_eta"][gi] > ETA_PAYS)
    assert warm["routing"]["pays"][2] is None and "thermal_max_sites" in warm["routing"]["pays_reason"][2]
    if warm["routing"]["stops_paying_at"] is None:
        assert "not run" in warm["routing"]["stops_paying_at_reason"]
    assert s["routing"]["criterion"].startswith("the median coding site's ideal leakage lifetime")  # (ideal, as was)


def test_the_table_has_a_row_per_layout_and_temperature(hot):
    """The table's section at each temperature: a row per layout and temperature with its thermal mass left out
    (as in the summary), the 2x5 layout's 100 mK row saying why it did not run, the baseline and where routing
    stops paying at each temperature."""
    res, _ = hot
    s, table = res.summary, res.table
    section = table[table.index("at each temperature, under the hardware"):]
    for label, T in ((COLD, "0 mK"), (HOT, "100 mK")):
        entry = s["by_temperature"][label]
        for gi, size in enumerate(s["grid_sizes"]):
            row = re.search(rf"^ +{T} +{size} (.*)$", section, re.M)
            assert row is not None, (T, size)
            mass = entry["thermal_mass_dropped"][gi]
            if mass is None:
                assert row.group(1).startswith("not run: 18 transmons, over thermal_max_sites = 17")
            elif mass == 0:
                assert row.group(1).split()[0] == "0"
            else:
                assert float(row.group(1).split()[0]) == pytest.approx(mass, rel=0.05)
        assert re.search(rf"^ +{T} baseline \(one L = 3 array per qubit\): eta", section, re.M)
        assert re.search(rf"^ +{T} routing stops paying at: ", section, re.M)
    assert "left out: at most" in table  # (the 100 mK block's own line, as before)


def test_the_maps_at_each_temperature_side_by_side(hot):
    """maps_by_temperature: a column per layout and temperature it ran at (each layout's 0 mK beside its 100 mK,
    the 2x5 layout at 0 mK only, said in the title), a colour bar per row (tau_L, ..., eta), every panel drawn a
    resolved value; the figures read (tests/test_figures.py's checks); the pages per condition as before."""
    from test_figures import all_faults

    _, figs = hot
    assert set(figs) == {"maps_ideal", "maps_realistic_0_mK", "maps_realistic_100_mK", "maps_by_temperature",
                         "leakage_lifetime_vs_grid"}
    fig = figs["maps_by_temperature"]
    panels = [ax for ax in fig.axes if getattr(ax, "_colorbar", None) is None]
    titles = {ax.get_subplotspec().colspan.start: ax.get_title() for ax in panels if ax.get_title()}
    assert [titles[c] for c in sorted(titles)] == ["2 x 2, 0 mK", "2 x 2, 100 mK", "3 x 3, 0 mK", "3 x 3, 100 mK",
                                                   "2 x 5, 0 mK"]
    rows = {round(ax.get_position().y0, 3) for ax in panels}
    bars = [ax for ax in fig.axes if getattr(ax, "_colorbar", None) is not None]
    assert len(bars) == len(rows) >= 2 and any("removal efficiency" in b.get_ylabel() for b in bars)
    head = fig._suptitle.get_text()
    assert "2x5 grid at 100 mK not run" in head and "stops paying at" in head and "100 mK:" in head
    hot_panels = [ax for ax in panels if ax.get_visible() and ax.get_subplotspec().colspan.start in (1, 3)]
    assert len(hot_panels) >= 4  # (tau_L and eta at 100 mK on both layouts at least)
    faults = [f"{name}: {f}" for name, f_ in figs.items() for f in all_faults(f_)]
    assert not faults, "\n".join(faults)


def test_the_removal_verdict():
    """Routing pays at a temperature where the median site's eta is over 1/2; it stops at the first grid where it
    does not; a grid without a resolved site has None."""
    v = removal_verdict([[0.9, 0.7, 0.4], [0.6, 0.4, np.nan], [np.nan], []], ["a", "b", "c", "d"])
    assert v["paying_share"] == [pytest.approx(2 / 3), 0.5, None, None]
    assert v["median_eta"] == [0.7, 0.5, None, None] and v["pays"] == [True, False, None, None]
    assert v["stops_paying_at"] == "b"
    assert removal_verdict([[0.8]], ["a"])["stops_paying_at"] is None
