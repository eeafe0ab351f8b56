"""Fewer Trotter steps at equal accuracy?  Splittings of exp(-i H_eff t) compared on dense matrices (issue 13).

At small L (the 3^L space is dense) every splitting's one-step operator is
built exactly and applied to the leakage state; the error is the largest
deviation of the normalized site populations from exp(-i H_eff t) on a grid
of 20 (10) times.  No jumps: what differs is the propagation.

* ``frontier``: the engine's step (order:dt of ``--cases``) to t = 1000/J at
  L = 3, 4, 5, two disorder draws each: the small-L half of the frontier whose
  L = 12 half is benchmarks/convergence.py (the default must meet 1e-4).

* ``tebd``: the engine's own step (BondGates.step: bond terms with the on-site
  terms shared between bonds, the S2 sweep, Suzuki order 4; the gates are the
  ones the MPS engine applies).
* ``interaction``: an interaction-picture splitting: the on-site part H0
  (anharmonicity, detunings, decay: diagonal) exactly, exp(-i H0 tau/2) on both
  sides of a sweep of hopping-only bond gates, composed to order 4 the same way.
  Same number of two-site gates per step.
* ``family``: the one-parameter family of symmetric 5-stage order-4
  compositions (a1, a2, 1 - 2a1 - 2a2, a2, a1) with 2a1^3 + 2a2^3 + a3^3 = 0,
  scanned over a1: the best member against Suzuki's (a1 = a2).

    python benchmarks/splittings.py                 # all three (about 3 minutes)
    python benchmarks/splittings.py --parts interaction --L 5 --t-final 50
"""

from __future__ import annotations

import argparse
import os
import platform
import sys

import numpy as np
import scipy.linalg as sla

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from lru_mps.engines.exact import embed, embed_bond, hamiltonian_eff  # noqa: E402
from lru_mps.engines.mps.tebd import BondGates, bond_hamiltonians, trotter_fractions  # noqa: E402
from lru_mps.physics.model import ArraySpec  # noqa: E402


def populations(psi: np.ndarray, L: int) -> np.ndarray:
    """Normalized site populations (L, 3) of a state vector of the 3^L space."""
    p = (np.abs(psi) ** 2).reshape((3,) * L)
    return np.array([p.sum(axis=tuple(a for a in range(L) if a != l)) for l in range(L)]) / p.sum()


def sweep_operator(bond_ops: list, tau: float, edges: np.ndarray | None = None) -> np.ndarray:
    """One S2 sweep of length tau: bonds L-2..1 half, bond 0 whole, bonds 1..L-2 half (the engine's order);
    ``edges``: a diagonal applied for tau/2 before and after (the interaction splitting's H0)."""
    L = len(bond_ops) + 1
    S = np.eye(bond_ops[0].shape[0], dtype=complex)
    if edges is not None:
        S = np.exp(-0.5j * tau * edges)[:, None] * S
    for b, w in [(b, 0.5) for b in range(L - 2, 0, -1)] + [(0, 1.0)] + [(b, 0.5) for b in range(1, L - 1)]:
        S = sla.expm(-1j * w * tau * bond_ops[b]) @ S
    if edges is not None:
        S = np.exp(-0.5j * tau * edges)[:, None] * S
    return S


def composed(bond_ops, dt, fractions, edges=None) -> np.ndarray:
    U = np.eye(bond_ops[0].shape[0], dtype=complex)
    for f in fractions:
        U = sweep_operator(bond_ops, f * dt, edges) @ U
    return U


def error(U, psi0, ref, n_per, L) -> float:
    psi, worst = psi0.copy(), 0.0
    for r in ref:
        for _ in range(n_per):
            psi = U @ psi
        worst = max(worst, float(np.abs(populations(psi, L) - r).max()))
    return worst


def engine_step(spec, real, order: int, dt: float) -> np.ndarray:
    """The MPS engine's one-step operator on the 3^L space: its schedule and gates (BondGates.step)."""
    gates = BondGates(bond_hamiltonians(spec, real), order)
    U = np.eye(3 ** spec.L, dtype=complex)
    for b, G in zip(gates.bonds, gates.step(dt)):
        U = embed_bond(G, b, spec.L).toarray() @ U
    return U


def leakage_state(L: int) -> np.ndarray:
    psi0 = np.zeros(3 ** L, dtype=complex)
    psi0[2 * 3 ** (L - 1)] = 1.0  # |2, 0, ..., 0>: leakage on the coding transmon
    return psi0


def frontier(args) -> None:
    """Largest |dP| over t = 0..t_long of each order:dt at each L (worst of the disorder draws)."""
    cases = [(int(c.split(":")[0]), float(c.split(":")[1])) for c in args.cases.split(",")]
    lengths = [int(x) for x in args.lengths.split(",")]
    grid = np.linspace(0.0, args.t_long, 21)[1:]
    worst = np.zeros((len(cases), len(lengths)))
    for j, L in enumerate(lengths):
        spec = ArraySpec.from_user(length=L, conditions=args.conditions)
        for seed in range(100, 100 + args.realizations):
            real = spec.draw_realization(np.random.default_rng(seed))
            w, V = np.linalg.eig(hamiltonian_eff(spec, real).toarray())
            psi0 = leakage_state(L)
            c = np.linalg.solve(V, psi0)
            ref = [populations(V @ (np.exp(-1j * w * t) * c), L) for t in grid]
            for i, (order, dt) in enumerate(cases):
                n_per = int(round(grid[0] / dt))
                if abs(n_per * dt - grid[0]) > 1e-9:
                    raise SystemExit(f"dt = {dt} does not divide the grid step {grid[0]:g}")
                Un = np.linalg.matrix_power(engine_step(spec, real, order, dt), n_per)
                worst[i, j] = max(worst[i, j], error(Un, psi0, ref, 1, L))
    print(f"frontier: max |dP| to t = {args.t_long:g}/J, leakage state, worst of {args.realizations} draws per L")
    print(f"{'order':>5} {'dt':>7} {'sweeps/(1/J)':>12} " + " ".join(f"{'L = ' + str(L):>9}" for L in lengths))
    for (order, dt), row in zip(cases, worst):
        print(f"{order:5d} {dt:7.4g} {len(trotter_fractions(order)) / dt:12.0f} "
              + " ".join(f"{x:9.2e}" for x in row), flush=True)


def family(a1: float) -> list[tuple]:
    """The order-4 members (a1, a2, a3, a2, a1) of the symmetric 5-stage compositions with this a1."""
    a2 = np.polynomial.Polynomial([0.0, 1.0])
    roots = (2 * a1 ** 3 + 2 * a2 ** 3 + (1 - 2 * a1 - 2 * a2) ** 3).roots()
    return [(a1, r.real, 1 - 2 * a1 - 2 * r.real, r.real, a1) for r in roots if abs(r.imag) < 1e-12]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--parts", default="frontier,interaction,family")
    ap.add_argument("--lengths", default="3,4,5", help="frontier: array lengths")
    ap.add_argument("--realizations", type=int, default=2, help="frontier: disorder draws per length")
    ap.add_argument("--t-long", type=float, default=1000.0, help="frontier: evolution time (1/J)")
    ap.add_argument("--cases", default="4:0.01,4:0.0125,6:0.02,6:0.025", help="frontier: order:dt pairs")
    ap.add_argument("--L", type=int, default=4, help="interaction, family: array length")
    ap.add_argument("--t-final", type=float, default=100.0, help="interaction, family: evolution time (1/J)")
    ap.add_argument("--dts", default="0.005,0.01,0.02,0.04", help="interaction: steps")
    ap.add_argument("--conditions", default="realistic")
    args = ap.parse_args(argv)
    parts = args.parts.split(",")
    print(f"machine: {platform.machine()}, python {platform.python_version()}; {args.conditions} conditions, "
          "paper disorder, leakage state; max |dP| against exp(-i H_eff t)")
    if "frontier" in parts:
        frontier(args)
    L = args.L
    spec = ArraySpec.from_user(length=L, conditions=args.conditions)
    real = spec.draw_realization(np.random.default_rng(100))
    psi0 = leakage_state(L)
    grid = np.linspace(0.0, args.t_final, 11)[1:]
    H = hamiltonian_eff(spec, real).toarray()
    ref = [populations(sla.expm(-1j * H * t) @ psi0, L) for t in grid]
    if "interaction" in parts:
        onsite = spec.onsite_terms(real)
        h0 = sum(embed(onsite[l], l, L) for l in range(L)).diagonal()
        hops = [embed_bond(spec.bond_term(), b, L).toarray() for b in range(L - 1)]
        print(f"interaction picture: L = {L}, t = {args.t_final:g}/J, order 4 (5 S2 sweeps per step)")
        print(f"{'dt':>7} {'tebd':>10} {'interaction':>12} {'ratio':>6}")
        for dt in (float(x) for x in args.dts.split(",")):
            n_per = int(round(grid[0] / dt))
            e_tebd = error(engine_step(spec, real, 4, dt), psi0, ref, n_per, L)
            e_int = error(composed(hops, dt, trotter_fractions(4), h0), psi0, ref, n_per, L)
            print(f"{dt:7.4g} {e_tebd:10.2e} {e_int:12.2e} {e_int / e_tebd:6.2f}", flush=True)
    if "family" in parts:
        dt = 0.02
        n_per = int(round(grid[0] / dt))
        bonds = [embed_bond(h, b, L).toarray() for b, h in enumerate(bond_hamiltonians(spec, real))]
        suzuki = error(composed(bonds, dt, trotter_fractions(4)), psi0, ref, n_per, L)
        scan = [(error(composed(bonds, dt, fr), psi0, ref, n_per, L), fr) for a1 in np.linspace(-0.3, 0.7, 21)
                for fr in family(a1)]
        best, fr = min(scan)
        print(f"5-stage order-4 family, L = {L}, t = {args.t_final:g}/J, dt = {dt}: Suzuki {suzuki:.2e}; best of "
              f"{len(scan)} other members {best:.2e} at (a1, a2, a3) = ({fr[0]:.4f}, {fr[1]:.4f}, {fr[2]:.4f}) "
              f"(Suzuki: a1 = a2 = {trotter_fractions(4)[0]:.4f})")


if __name__ == "__main__":
    main()
