"""Exact <n_1>(t) of the qubit state in the one-excitation sector, for any L (docs/physics.md §5, §12).

Physics.  The qubit state |1> on site 1 with the array empty (T = 0) has
N = 1, and no channel raises N, so its density matrix is the L x L block
rho_ab (a, b the site of the excitation) plus the vacuum.  Only the block
matters for <n_1> = rho_11: every removal (hardware decay, a reset outcome
n = 1, dissipation) leaves the vacuum, where n_1 = 0.  In the frame
rotating at wbar (units of J, hbar = 1) the block obeys

    d rho/dt = -i [H1, rho] - rho / T1q - (2/Tphi) (rho - diag rho) + (reset terms)

with H1 = sum_l dw_l |l><l| + J_l (|l><l+1| + h.c.) (U does not enter at
N = 1), hardware decay sqrt(1/T1q) a_l on every site (the block shrinks as
e^{-t/T1q}: a_l^dag a_l sums to N = 1), dephasing sqrt(2/Tphi) n_l
(n_l = |l><l| here: the off-diagonal elements decay at 2/Tphi, the
populations stay), and the reset on site L.  With one T1_l, Tphi_l per site
(a device file's), element rho_ab decays at (g_a + g_b)/2 with g_l = 1/T1_l
(-1/2 {sum_l g_l |l><l|, rho}), and off the diagonal also at
(k_a + k_b)/2 with k_l = 2/Tphi_l; one value everywhere gives the rates above.
The reset:

* dissipation sqrt(G) a_L: -(G/2) {|L><L|, rho};
* random feedback at rate G: G (P0 rho P0 - rho), P0 = 1 - |L><L| (outcome 1
  removes the excitation);
* periodic feedback: rho -> P0 rho P0 at t0 + k/G, the phase t0 averaged over
  [0, 1/G) by the midpoint rule with ``t0_nodes`` nodes (as
  :mod:`lru_mps.references.lindblad`; a measurement at a grid time acts after
  the value is recorded).

The Liouvillian (L^2 x L^2) is exponentiated once per time step (periodic
feedback: diagonalized once, the measurement a matrix in its eigenbasis).  This
is the exact ensemble value of the qubit state per disorder realization at
T = 0; under a thermal start it misses the rows with thermal excitations
(spectators of the qubit up to hopping: no cross-Kerr term in the model),
which is how the length-scaling study's T1 at 100 mK is checked against it
at long L (``tests/test_qubit_saturation.py``).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import expm

from ..physics.model import ArraySpec, Realization


def qubit_population_n1(spec: ArraySpec, real: Realization, times, t0_nodes: int = 16) -> np.ndarray:
    """Exact <n_1>(t) (T = 0) of the qubit state on ``times`` (1/J, uniform grid from 0), one realization."""
    times = np.asarray(times, dtype=float)
    L = spec.L
    dt = float(times[1] - times[0]) if len(times) > 1 else 0.0
    if len(times) > 2 and not np.allclose(np.diff(times), dt, rtol=1e-9, atol=1e-12):
        raise ValueError("qubit_population_n1 needs a uniform time grid")
    c = spec.conditions
    T1, Tphi = c.t1_sites(L), c.tphi_sites(L)
    g = np.where(np.isfinite(T1), 1.0 / T1, 0.0)  # decay rate of site l
    k = np.where(np.isfinite(Tphi), 2.0 / Tphi, 0.0)  # dephasing rate of site l
    H = spec.one_particle_hamiltonian(real)  # diag(dw) + J_b on every bond (i, j) (the chain's (l, l+1))
    eye = np.eye(L)
    # vec(rho) row-major: vec(A rho B) = (A kron B^T) vec(rho)
    liou = -1j * (np.kron(H, eye) - np.kron(eye, H.T))
    pair = 0.5 * (k[:, None] + k[None, :])  # rho_ab, a != b: at (k_a + k_b)/2 (2/Tphi when uniform)
    liou -= np.diag((pair * (1.0 - eye)).reshape(-1))  # dephasing: the off-diagonals
    liou -= np.diag((0.5 * (g[:, None] + g[None, :])).reshape(-1))  # decay: rho_ab at (g_a + g_b)/2 (1/T1q uniform)
    last = np.zeros((L, L))  # the projector on the reset sites (the chain's: site L)
    last[list(spec.reset_sites), list(spec.reset_sites)] = 1.0
    keep = np.kron(eye - last, eye - last)  # P0 rho P0
    kind, G = spec.reset.kind, spec.reset.rate
    if kind == "dissipation":
        liou -= 0.5 * G * (np.kron(last, eye) + np.kron(eye, last))
    elif kind == "random":
        liou += G * (keep - np.eye(L * L))
    rho0 = np.zeros(L * L, dtype=complex)
    rho0[0] = 1.0
    if kind != "periodic":
        return _record(rho0, expm(liou * dt), len(times), L)
    # periodic: the Liouvillian in its eigenbasis (one decomposition; checked against expm below)
    lam, V = np.linalg.eig(liou)
    Vinv = np.linalg.inv(V)
    if np.linalg.norm(V @ np.diag(lam) @ Vinv - liou) > 1e-8 * max(1.0, np.linalg.norm(liou)):
        raise ArithmeticError("single_excitation: the Liouvillian's eigenbasis is too ill-conditioned")
    measure = Vinv @ keep @ V
    first = V[0, :]
    x0 = Vinv @ rho0
    period = 1.0 / G
    out = np.zeros(len(times))
    for t0 in (np.arange(t0_nodes) + 0.5) * period / t0_nodes:
        out += _periodic(x0, lam, measure, first, times, t0, period)
    return out / t0_nodes


def _record(v: np.ndarray, step: np.ndarray, n: int, L: int) -> np.ndarray:
    out = np.empty(n)
    for k in range(n):
        out[k] = v[0].real
        v = step @ v
    return out


def _periodic(x, lam, measure, first, times, t0, period) -> np.ndarray:
    """One phase t0, in the Liouvillian's eigenbasis: evolve between the grid times and the measurements
    (P0 rho P0), recording rho_11."""
    events = [(float(t), 0) for t in times]
    k = 0
    while t0 + k * period <= times[-1]:
        events.append((t0 + k * period, 1))
        k += 1
    events.sort()  # a measurement at a grid time sorts after the record (0 < 1)
    out, now = [], 0.0
    for t, what in events:
        if t > now:
            x = x * np.exp(lam * (t - now))
        now = t
        if what == 0:
            out.append(float((first @ x).real))
        else:
            x = measure @ x
    return np.array(out)
