"""The sector engine's batched store gives the sector engine's one-at-a-time trajectories.

The batch (lru_mps.engines.sector.batch) is the exact batch's algorithm on the sector bases N = 0..N_max
(lru_mps.engines.sector.kept_basis).  Checked here: its basis is the exact batch's sorted 3^L basis reordered
(every map and block the same under the permutation), its trajectories are the unbatched sector engine's to
1e-10 (populations, coherence, every event) on chains and on a routing layout, sampled and branch, and rows whose
sectors are too large for it run one at a time, bit for bit as without the batch.  (The tolerance and the
short runs: tests/test_batched.py's reasons; a row that differs by more than 1e-10 is held to ten times its own
one-ulp sensitivity, helpers.rounding_divergence.)
"""

import numpy as np
import pytest

from helpers import batched, differ_beyond_rounding, one
from lru_mps.engines.exact.sorted_basis import SortedBasis
from lru_mps.engines.sector.batch import BATCH_MAX_DIM, SectorBatch
from lru_mps.engines.sector.engine import sector_dimension
from lru_mps.engines.sector.kept_basis import SectorKeptBasis
from lru_mps.physics import geometry as geo
from lru_mps.physics import operators as ops
from lru_mps.physics.conditions import Conditions, Reset
from lru_mps.physics.model import ArraySpec
from lru_mps.physics.rules import number_can_grow
from lru_mps.run.settings import RunSettings, time_grid
from lru_mps.run.trajectories import draw

NOISY = Conditions(T1q=50.0, Tphi=30.0, temperature_K=0.3)


def _compare(spec, estimator, n=12, times=None, seed=3):
    """The sector batch vs the sector engine one row at a time on n indices; returns the number of events."""
    times = time_grid(60.0, 31) if times is None else times
    settings = RunSettings(times=times, trajectories=n, seed=seed, engine="sector", estimator=estimator)
    got = batched(spec, settings, range(n))
    events = 0
    for i in range(n):
        ref = one(spec, settings, i)
        problems = differ_beyond_rounding(got[i], ref, spec, settings, i)
        assert not problems, (i, problems[:3])
        events += sum(len(r.events) for r in ref.values())
    return events


def _permutation(L: int, nmax: int):
    """Sector-basis position -> sorted-basis position of the same configuration, and both bases."""
    sec, srt = SectorKeptBasis(L, nmax), SortedBasis(L, nmax)
    digits = 3 ** np.arange(L - 1, -1, -1)
    key_srt = {int(k): j for j, k in enumerate(digits @ srt.levels)}
    return np.array([key_srt[int(k)] for k in digits @ sec.levels]), sec, srt


@pytest.mark.parametrize("edges", [None, ((0, 1), (1, 2), (2, 3), (0, 3), (1, 3))])
def test_the_kept_sectors_are_the_sorted_basis_reordered(edges):
    L, nmax = 4, 3
    perm, sec, srt = _permutation(L, nmax)
    assert sec.dim == srt.dim and sorted(perm) == list(range(srt.dim))
    for sl_a, sl_b in zip(sec.slices, srt.slices):  # each block onto the same block
        assert set(perm[sl_a]) == set(range(sl_b.start, sl_b.stop))
    assert np.array_equal(sec.levels, srt.levels[:, perm]) and np.array_equal(sec.M, srt.M[perm])
    for m in range(3):
        for k in range(3):
            for site in range(L):
                try:
                    src_b, dst_b = srt.transfer(m, k, site)
                except RuntimeError:
                    with pytest.raises(RuntimeError):
                        sec.transfer(m, k, site)
                    continue
                src_a, dst_a = sec.transfer(m, k, site)
                assert dict(zip(perm[src_a], perm[dst_a])) == dict(zip(src_b, dst_b))
    for op, site in ((ops.a, 0), (ops.n, 2), (np.outer(ops.ket(0), ops.ket(2)), 3)):
        a, b = sec.local(op, site).toarray(), srt.local(op, site).toarray()
        assert np.array_equal(a, b[np.ix_(perm, perm)])
    rng = np.random.default_rng(1)
    sites = [rng.normal(size=3) + 1j * rng.normal(size=3) for _ in range(L)]
    assert np.allclose(sec.product(sites), srt.product(sites)[perm], rtol=1e-15, atol=0)
    # (hopping entries: sqrt((n_l + 1) n_m) in one root here, the product of the two ladder operators' roots there)
    for n, (ha, hb) in enumerate(zip(sec.hopping(edges), srt.hopping(edges))):
        p = perm[sec.slices[n]] - srt.slices[n].start
        assert np.array_equal(ha != 0, hb[np.ix_(p, p)] != 0) and np.allclose(ha, hb[np.ix_(p, p)], rtol=1e-15, atol=0)
    for n, (ba, bb) in enumerate(zip(sec.bonds(edges), srt.bonds(edges))):
        p = perm[sec.slices[n]] - srt.slices[n].start
        assert np.array_equal(ba != 0, bb[:, p][:, :, p] != 0)
        assert np.allclose(ba, bb[:, p][:, :, p], rtol=1e-15, atol=0)


@pytest.mark.parametrize("L", [3, 4])
@pytest.mark.parametrize("reset", ["periodic", "random", "dissipation", "none"])
def test_sampled_rows_with_noise_and_temperature(L, reset):
    spec = ArraySpec(L=L, W=4.0, reset=Reset(reset, 0.3 if reset != "none" else 0.0), conditions=NOISY)
    assert SectorBatch.largest_number(spec) == 2 * L  # a hot bath: every sector, all of them small
    assert _compare(spec, "sampled") > 150


@pytest.mark.parametrize("reset", ["periodic", "random"])
def test_branch_rows_with_the_feedback_trains(reset):
    spec = ArraySpec(L=5, W=4.0, reset=Reset(reset, 0.5), conditions=Conditions())
    assert _compare(spec, "branch", n=6) > 0


@pytest.mark.parametrize("conditions,estimator", [("ideal", "branch"), ("realistic", "sampled")])
def test_a_routing_layout(conditions, estimator):
    """The 2 x 2 grid with an LRU of one transmon at each corner (8 sites, four reset sites)."""
    layout = geo.lru_grid(2, 2, "corners", 1)
    spec = ArraySpec.from_user(length=layout.L, geometry=layout, conditions=conditions)
    assert _compare(spec, estimator, n=8, times=time_grid(200.0, 21)) > 0


def test_rows_over_the_limit_run_one_at_a_time(monkeypatch):
    """L = 12 holds N <= 2 (78 states; N = 3 has 352): a hot start's N = 3 rows run on the ordinary sector states,
    bit for bit, and the batch sees only the others."""
    L = 12
    assert sector_dimension(L, 2) <= BATCH_MAX_DIM < sector_dimension(L, 3)
    spec = ArraySpec(L=L, W=4.0, reset=Reset("periodic", 0.3), conditions=Conditions(T1q=200.0, temperature_K=0.15))
    assert SectorBatch.largest_number(spec) == 2
    seen = []
    original = SectorBatch.__init__

    def spy(self, spec, settings, reals, I, products, nmax, backend="numpy"):
        seen.append(int(np.max(nmax)))
        original(self, spec, settings, reals, I, products, nmax, backend)

    monkeypatch.setattr(SectorBatch, "__init__", spy)
    settings = RunSettings(times=time_grid(30.0, 16), trajectories=40, seed=5, engine="sector", estimator="sampled")
    got = batched(spec, settings, range(40))
    assert seen and max(seen) <= 2
    over = sum(draw(spec, settings, i).nmax > 2 for i in range(40))
    assert 0 < over < 40 and len(seen) >= 1
    for i in range(40):
        problems = differ_beyond_rounding(got[i], one(spec, settings, i), spec, settings, i)
        assert not problems, (i, problems[:3])


def test_a_bath_that_raises_n_on_a_long_array_is_not_batched():
    spec = ArraySpec(L=12, thermal_bath=True, conditions=Conditions(T1q=200.0, temperature_K=0.15))
    assert number_can_grow(spec) and SectorBatch.largest_number(spec) == -1
    assert SectorBatch.largest_number(ArraySpec(L=4, thermal_bath=True, conditions=NOISY)) == 8
