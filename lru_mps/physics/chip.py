"""A real chip's values (:class:`Device`: what a device file gives, in Hz and 1/J; docs/physics.md §3.2) and what
they fix in a spec (:func:`check_spec`, :func:`refuse_fixed`).  The file that gives them, its format and its
reading: :mod:`lru_mps.physics.device`."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from . import disorder
from . import geometry as geometries
from ..errors import require

#: the model options a device file fixes, and what of the model each one would set
FIXED_OPTIONS = {
    "length": "the array length L (the number of its frequencies)",
    "hopping": "the unit J (its hopping, or the mean of its couplings)",
    "anharmonicity": "every site's anharmonicity U_l",
    "frequency": "every site's frequency w_l",
    "disorder": "every site's detuning (there is no disorder to draw)",
}



@dataclass(frozen=True)
class Device:
    """A device file's values: frequencies, anharmonicities and couplings f/2pi in Hz, the unit ``J_hz`` = J/2pi
    in Hz, T1 and Tphi in 1/J (one float, one per site, or None where the file has none), ``temperature_K``
    (None: not in the file) and ``source``, the file it came from (not part of the physics)."""

    J_hz: float
    frequencies_hz: tuple
    anharmonicities_hz: tuple
    couplings_hz: tuple
    T1: float | tuple | None = None
    Tphi: float | tuple | None = None
    temperature_K: float | None = None
    source: str | None = field(default=None, compare=False)
    #: a graph's bonds (i, j), 0-based, in the order of ``couplings_hz``; None: the chain (l, l+1)
    edges: tuple | None = None
    #: the LRU's site, 0-based (None: the last); after :meth:`renumbered` always None (the reset is the last site)
    #: the reset sites' 0-based indices in the file's order (None: the last site alone)
    reset_sites: tuple | None = None

    @property
    def L(self) -> int:
        return len(self.frequencies_hz)

    @property
    def w(self) -> np.ndarray:
        """w_l in units of J (lab frame)."""
        return np.asarray(self.frequencies_hz, dtype=float) / self.J_hz

    @property
    def wbar(self) -> float:
        """The frame: mean(w_l) in units of J."""
        return float(np.mean(self.w))

    @property
    def dw(self) -> np.ndarray:
        """dw_l = w_l - wbar in units of J."""
        return self.w - self.wbar

    @property
    def U(self) -> np.ndarray:
        """U_l in units of J."""
        return np.asarray(self.anharmonicities_hz, dtype=float) / self.J_hz

    @property
    def Ubar(self) -> float:
        return float(np.mean(self.U))

    @property
    def J(self) -> np.ndarray | None:
        """J_l per bond in units of J, None when every bond has J_l = J exactly (the paper's uniform hopping)."""
        J = np.asarray(self.couplings_hz, dtype=float) / self.J_hz
        return None if bool(np.all(J == 1.0)) else J

    def geometry(self):
        """The file's coupling graph numbered for a spec (site 1 index 0, the reset sites the last:
        :meth:`~lru_mps.physics.geometry.Geometry.relabel`), or None for a chain with its reset at site L."""
        resets = [self.L - 1] if self.reset_sites is None else list(self.reset_sites)
        if self.edges is None and resets == [self.L - 1]:
            return None
        g = geometries.Geometry("device", self.L, self.bonds, tuple((0, k) for k in range(self.L)))
        return g.relabel(0, resets[0] if len(resets) == 1 else resets)

    @property
    def bonds(self) -> tuple:
        """The bonds (i, j) in the order of ``couplings_hz``: the graph's edges, or the chain's (l, l+1)."""
        return self.edges if self.edges is not None else tuple((l, l + 1) for l in range(self.L - 1))

    def renumbered(self, g) -> "Device":
        """This device with its sites in the order of the geometry ``g`` (``g.labels[k]``: the file's index of site
        k) and its couplings in the order of ``g.edges``."""
        order = list(g.labels)
        coupling = {tuple(sorted(e)): c for e, c in zip(self.bonds, self.couplings_hz)}
        couplings = tuple(coupling[tuple(sorted((order[i], order[j])))] for i, j in g.edges)

        def sites(v):
            return v if v is None or not isinstance(v, tuple) else tuple(v[o] for o in order)

        return dataclasses.replace(self, frequencies_hz=sites(self.frequencies_hz),
                                   anharmonicities_hz=sites(self.anharmonicities_hz), couplings_hz=couplings,
                                   T1=sites(self.T1), Tphi=sites(self.Tphi), edges=tuple(g.edges),
                                   reset_sites=None if g.resets == 1 else tuple(g.reset_sites))

    def hardware(self) -> dict:
        """The file's hardware figures for :func:`lru_mps.physics.conditions.resolve` (None where not given)."""
        return {"T1q": self.T1, "Tphi": self.Tphi, "temperature_K": self.temperature_K}

    def as_dict(self) -> dict:
        """The file's Hamiltonian in Hz (f = omega/2pi), flat keys (the hardware is in the spec's T1q_J, Tphi_J,
        temperature_K)."""
        out = {"device_frequencies_Hz": list(self.frequencies_hz),
               "device_anharmonicities_Hz": list(self.anharmonicities_hz),
               "device_couplings_Hz": list(self.couplings_hz)}
        if self.edges is not None:  # (a chain's file: the keys of before)
            out["device_edges"] = [list(e) for e in self.edges]
        return out

    def describe(self) -> str:
        """One line for a summary: the file, w_l/2pi, U_l/2pi, J_l/2pi in MHz and what the unit J is."""
        def mhz(v):
            return ", ".join(f"{x / 1e6:.6g}" for x in v)
        return (f"device{' ' + self.source if self.source else ''}: w_l/2pi = {mhz(self.frequencies_hz)} MHz  "
                f"U_l/2pi = {mhz(self.anharmonicities_hz)} MHz  J_l/2pi = {mhz(self.couplings_hz)} MHz  "
                f"(J/2pi = {self.J_hz / 1e6:.6g} MHz; frame at mean(w_l))")

    def extent(self) -> tuple[float, float, float]:
        """(max |dw_l|, max U_l, max J_l) in units of J, for the time-step check."""
        J = self.J
        return float(np.max(np.abs(self.dw))), float(np.max(self.U)), 1.0 if J is None else float(np.max(J))

    def realization(self, rng: np.random.Generator, e2_spread: float = 0.0, frequency_noise: float = 0.0,
                    hopping_spread: float = 0.0) -> tuple:
        """(dw, U, s, J) of one trajectory: the file's values with the spreads drawn on top (docs/physics.md
        §3.1, steps 2-4; nothing is drawn for a spread that is off): J_l = J_l,file (1 + eps_l)."""
        dw, U, offset = disorder.spreads(self.dw, self.U, rng, e2_spread, frequency_noise)
        eps = disorder.hoppings(self.L, hopping_spread, rng, bonds=None if self.edges is None else len(self.edges))
        J = self.J
        if eps is not None:
            J = eps if J is None else J * eps
        return dw, U, offset, J


def check_spec(dev: Device, L, J_hz, Ubar, wbar, W, pattern) -> None:
    """A spec with a device has the device's L, J/2pi, Ubar, wbar, W = 0 and the box pattern: refuse any other."""
    for key, have, want in (("length", L, dev.L), ("hopping", J_hz, dev.J_hz), ("anharmonicity", Ubar, dev.Ubar),
                            ("frequency", wbar, dev.wbar), ("disorder", W, 0.0)):
        require(have == want, key, have, f"{want:g}: the device file fixes {FIXED_OPTIONS[key]}",
                "leave it out with a device")
    require(pattern == "box", "disorder_pattern", pattern,
            "box (the default) with a device file: it gives every site's frequency, there is no pattern to draw")


def refuse_fixed(**given) -> None:
    """Refuse the model options a device file fixes (``given``: name -> value, None = not given)."""
    for key, value in given.items():
        require(value is None, key, value, f"not with a device file: it fixes {FIXED_OPTIONS[key]}",
                "leave it out, or change the file")
