"""The TEBD kernel (engines/mps/tebd.py, kernels.py, svd.py): the small-block SVD, the charge-block split and
its truncation rule, the schedule, and charge blocks against no symmetry on the same trajectory.  ~10 s."""

import numpy as np
import pytest

from lru_mps.engines.mps import tebd
from lru_mps.engines.exact import ExactPropagator
from lru_mps.engines.mps import MPSEngine, MPSState
from lru_mps.engines.mps import kernels as mps_kernels
from lru_mps.engines.mps import svd as mps_svd
from lru_mps.physics import operators as ops
from lru_mps.physics.conditions import Conditions, Reset
from lru_mps.physics.model import ArraySpec


from lru_mps.physics.initial_states import product_state
def jacobi_svd(M):
    """Thin SVD M = U diag(S) Vh by the kernel's one-sided Jacobi (singular values unsorted)."""
    (m, n), k, J = M.shape, min(M.shape), mps_svd.JACOBI_MAX
    U, Vh = np.zeros((m, k), dtype=np.complex128), np.zeros((k, n), dtype=np.complex128)
    S = mps_svd._jacobi_block(M, np.arange(m), np.arange(n), np.empty(J * max(m, n), dtype=np.complex128),
                              np.empty(J * J, dtype=np.complex128), np.empty(J), np.empty(k), U, Vh, 0)
    return U, S.copy(), Vh


def _random(rng, shape, spectrum=None):
    M = rng.normal(size=shape) + 1j * rng.normal(size=shape)
    if spectrum is not None:
        U, _, Vh = np.linalg.svd(M, full_matrices=False)
        M = (U * spectrum) @ Vh
    return M


@pytest.mark.parametrize("shape", [(1, 1), (1, 4), (4, 1), (2, 2), (3, 5), (5, 3), (5, 5), (9, 4)])
def test_jacobi_svd_matches_lapack(shape):
    """Reconstruction, orthonormal vectors and the singular values of LAPACK, for random, graded (1 .. 1e-14)
    and rank-deficient matrices (rank deficiency drives overlaps to ~1e-160: the rotation must stay unitary)."""
    rng = np.random.default_rng(sum(shape))
    k = min(shape)
    graded = np.logspace(0, -14, k)
    deficient = np.r_[np.ones(max(k - 1, 1)), np.zeros(k - max(k - 1, 1))]
    for spectrum in (None, graded, deficient):
        M = _random(rng, shape, spectrum)
        U, S, Vh = jacobi_svd(M)
        assert np.abs((U * S) @ Vh - M).max() < 1e-14 * max(1.0, np.abs(M).max())
        assert np.abs(U.conj().T @ U - np.diag((S > 0).astype(float))).max() < 1e-13
        assert np.abs(Vh @ Vh.conj().T - np.eye(k)).max() < 1e-13
        assert np.abs(np.sort(S) - np.sort(np.linalg.svd(M, compute_uv=False))).max() < 1e-14


@pytest.mark.parametrize("rows, cols, keys", [(12, 10, 4), (40, 30, 2), (30, 40, 1)])
def test_block_split_is_the_dense_split(rows, cols, keys):
    """A block-diagonal theta (charges on rows and columns): the blocks' pooled singular values are the dense
    ones; the rule keeps those above the cutoff, at most max_bond, and counts the rest as discarded weight.
    Small blocks go through the Jacobi SVD, large ones (the last two cases) through LAPACK, either side
    absorbing the singular values."""
    rng = np.random.default_rng(3)
    rkey = rng.integers(0, keys, rows)
    ckey = rng.integers(0, keys, cols)
    M = _random(rng, (rows, cols)) * (rkey[:, None] == ckey[None, :])
    M[rkey == min(1, keys - 1)] *= 1e-7  # a block of small values
    dense = np.linalg.svd(M, compute_uv=False)
    for cutoff, max_bond, absorb_right in ((1e-12, 64, True), (1e-6, 64, False), (1e-12, 4, True)):
        left, right, qk, disc, kept = mps_svd.block_svd(M, rkey, ckey, cutoff, max_bond, absorb_right)
        n_dense = min(max(int(np.sum(dense > cutoff)), 1), max_bond)
        assert kept == n_dense
        assert disc == pytest.approx(np.sum(dense[n_dense:] ** 2), rel=1e-10, abs=1e-28)  # dense: noise ~1e-16
        iso = left if absorb_right else right.conj().T
        assert np.abs(iso.conj().T @ iso - np.eye(kept)).max() < 1e-13  # isometry
        assert np.abs(left @ right - M).max() <= np.sqrt(disc) + 1e-13
        for t in range(kept):  # every new index carries the charge of its rows and columns
            assert set(rkey[np.abs(left[:, t]) > 0]) <= {qk[t]} and set(ckey[np.abs(right[t]) > 0]) <= {qk[t]}


@pytest.mark.parametrize("a, k, c", [(2, 3, 2), (9, 12, 10), (14, 20, 11)])
def test_gated_theta_is_the_gate_on_the_two_site_tensor(a, k, c):
    """theta[x, (i, j), y] = sum_k A[x, i, k] B[k, j, y], then the 9 x 9 gate on (i, j): by compiled loops
    (small) and by one BLAS product per charge block (large), against einsum, for A and B with the charge
    structure of a TEBD row (A[x, i, k] = 0 unless q_x + i = q_k, B[k, j, y] = 0 unless q_k + j = q_y) and
    for one charge (no symmetry)."""
    assert (a * k * c > mps_kernels.LOOPS_MAX) == (a > 2)  # both paths
    rng = np.random.default_rng(a)
    pc = tebd.LEVEL_CHARGE
    G = _random(rng, (9, 9))
    for charged in (True, False):
        qa, qk, qc = (np.sort(rng.integers(0, 4, n)) * charged for n in (a, k, c))
        A = _random(rng, (a, 3, k)) * (qa[:, None, None] + pc[None, :, None] * charged == qk[None, None, :])
        B = _random(rng, (k, 3, c)) * (qk[:, None, None] + pc[None, :, None] * charged == qc[None, None, :])
        assert np.count_nonzero(A) and np.count_nonzero(B)
        rkey, ckey = (qa[:, None] + pc * charged).ravel(), (qc[None, :] - pc[:, None] * charged).ravel()
        theta = np.einsum("xik,kjy->xijy", A, B).reshape(a, 9, c)
        out = mps_kernels.gated_theta(A, B, G, rkey, qk, ckey)
        assert np.abs(out - np.einsum("mn,xny->xmy", G, theta)).max() < 1e-13


def test_norm_kept_bounds_every_step():
    """What one Trotter step keeps of ||psi||^2 is at least BondGates.norm_kept(dt) (the bound that lets the
    batch take steps in one call without missing a jump): strong decay and dephasing, dissipation at the end,
    states with several excitations."""
    spec = ArraySpec(L=5, reset=Reset("dissipation", 20.0), conditions=Conditions(T1q=5.0, Tphi=3.0))
    real = spec.draw_realization(np.random.default_rng(1))
    prop = MPSEngine(dt=0.02, order=4).prepare(spec, real)
    kept = prop.gates.norm_kept(0.02)
    assert 0.0 < kept < 1.0
    worst = 1.0
    for levels in ([2, 0, 1, 0, 2], [1, 1, 1, 1, 1], [0, 0, 0, 0, 2]):
        s = MPSState(prop, *tebd.product_row(product_state("leakage", np.array(levels)), True))
        for _ in range(200):
            before = s.norm2()
            s.evolve(0.02)
            worst = min(worst, s.norm2() / before)
            s.scale(1.0 / np.sqrt(s.norm2()))
    assert kept * (1 - 1e-12) <= worst < 1.0


@pytest.mark.parametrize("order", tebd.ORDERS)
def test_schedule_gives_every_bond_the_whole_step(order):
    """Merging gates keeps the composition: each bond's fractions add up to 1, the centre ends on site L-1."""
    for L in (2, 3, 6):
        bonds, fractions, right = tebd.schedule(L, order)
        for b in range(L - 1):
            assert fractions[bonds == b].sum() == pytest.approx(1.0, abs=1e-14)
        assert np.all(bonds[1:] != bonds[:-1])
        assert bonds[-1] == L - 2 and right[-1]
    assert sum(tebd.trotter_fractions(6)) == pytest.approx(1.0, abs=1e-15)


def test_charge_blocks_and_no_symmetry_give_the_same_states():
    """The same trajectory (steps, decay jumps, dephasing, a reset |0><2|, renormalizations) with charge
    blocks and without any: the states agree to rounding, from a Fock state and from the coherence state
    (a superposition of N and N+1, held with two indices on the right boundary)."""
    spec = ArraySpec(L=5, reset=Reset("periodic", 0.3), conditions=Conditions(T1q=50.0, Tphi=30.0))
    real = spec.draw_realization(np.random.default_rng(4))
    prop = MPSEngine(dt=0.02, order=4).prepare(spec, real)
    ex = ExactPropagator(spec, real)
    for init in ("leakage", "coherence"):
        sites = product_state(init, np.array([0, 1, 0, 2, 0]))
        states = [MPSState(prop, *tebd.product_row(sites, sym)) for sym in (True, False)]
        ref = ex.state(sites)
        for op, site in ((ops.a, 1), (ops.n, 3), (ops.reset_op(2), 3), (ops.a, 0)):
            for s in states:
                for _ in range(25):
                    s.evolve(0.02)
                s.apply_local(op, site)
                s.scale(1.0 / np.sqrt(s.norm2()))
            ref.evolve(0.5)
            ref.apply_local(op, site)
            ref.scale(1.0 / np.sqrt(ref.norm2()))
            assert np.abs(states[0].dense() - states[1].dense()).max() < 1e-12
            assert np.abs(states[0].dense() - ref.dense()).max() < 1e-4  # the Trotter error of order 4 at dt = 0.02
        assert np.abs(states[0].site_rdm(0) - states[1].site_rdm(0)).max() < 1e-12
        assert states[0].diagnostics()["norm_error"] < 1e-12


def test_an_operator_without_a_charge_drops_the_symmetry():
    """(|0> + |1>)(<0| + <1|) on a site has no definite charge: the state continues without blocks, as a state
    that never had them does, and as the exact engine does (to the Trotter error)."""
    spec = ArraySpec(L=4, reset=Reset("dissipation", 0.3))
    real = spec.draw_realization(np.random.default_rng(1))
    sites = product_state("leakage", np.zeros(4, int))
    prop = MPSEngine(dt=0.02, order=4).prepare(spec, real)
    states = [prop.state(sites), MPSState(prop, *tebd.product_row(sites, False))]
    ref = ExactPropagator(spec, real).state(sites)
    mix = np.array([[1, 1, 0], [1, 1, 0], [0, 0, 1]], dtype=complex)
    assert tebd.operator_charge(mix) is None and states[0].pc.any()
    for s in states + [ref]:
        for _ in range(2):
            if s is ref:
                s.evolve(0.4)
            else:
                for _ in range(20):
                    s.evolve(0.02)
            s.apply_local(mix, 2)
    assert not states[0].pc.any()
    assert np.abs(states[0].dense() - states[1].dense()).max() < 1e-12
    assert np.abs(states[0].dense() - ref.dense()).max() < 1e-4
