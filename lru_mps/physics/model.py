"""The disordered transmon array: parameters, disorder, channels and local terms.

Physics (see docs/physics.md §1-§5).  L qutrits, site 1 (index 0) is the
coding qubit, site L (index L-1) is the reset site.  In the frame rotating at
wbar N the Hamiltonian is

    H = sum_l [dw_l n_l - (U_l/2) n_l (n_l - 1)] + sum_l J_l (a_l^dag a_{l+1} + h.c.)

with dw_l uniform in [-W/2, W/2] and U_l = Ubar + 2 dw_l, so that the leakage
energy E2 = 2 w_l - U_l is the same on every site (the paper's recipe; other
disorder patterns and the fabrication/tuning spreads: :mod:`.disorder`), and
J_l = J = 1 on every bond unless a ``hopping_profile`` sets the nominal couplings P_l (mean 1,
:mod:`.hopping_profile`) and/or ``hopping_spread`` draws J_l = P_l (1 + eps_l).
Everything here is in units of J (energies, rates) and 1/J (times); ``J_hz``
= J/2pi in Hz only sets the conversion to physical units and the thermal
energies; values with units ('5MHz', '0.03J') become a spec through
:mod:`lru_mps.physics.spec_input` (``ArraySpec.from_user``, ``from_device``).

The continuous jump channels c_k = sqrt(rate_k) op_k act on one site each;
the no-jump generator is H_eff = H - (i/2) sum_k c_k^dag c_k.  Every term of
H_eff is either on one site or on one bond, which is what all three state
representations (dense, fixed-N sector, MPS/MPO) are built from.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

import numpy as np

from . import bath as baths
from . import device as devices
from . import disorder
from . import geometry as geometries
from . import hopping_profile as profiles
from . import operators as ops
from . import readout as readouts
from .bath import H_PLANCK, K_BOLTZMANN
from .conditions import Conditions, Reset
from ..defaults import MODEL
from ..errors import require
from .hamiltonian_terms import HamiltonianTerms
from .spec_input import SpecInput
from .units import parse_frequency_hz, to_energy, to_fraction

INIT_STATES = ("leakage", "qubit", "coherence")

#: the default model (lru_mps.defaults.MODEL) in internal units: J/2pi in Hz, energies in J
_J_HZ = parse_frequency_hz(MODEL["hopping"], "hopping")
_DEFAULT = {
    "L": int(MODEL["length"]),
    "Ubar": to_energy(MODEL["anharmonicity"], "anharmonicity", _J_HZ),
    "wbar": to_energy(MODEL["frequency"], "frequency", _J_HZ),
    "W": to_energy(MODEL["disorder"], "disorder", _J_HZ),
    "e2_spread": to_energy(MODEL["e2_spread"], "e2_spread", _J_HZ),
    "frequency_noise": to_energy(MODEL["frequency_noise"], "frequency_noise", _J_HZ),
    "hopping_spread": to_fraction(MODEL["hopping_spread"], "hopping_spread"),
}


@dataclass(frozen=True)
class Realization:
    """One disorder realization: detunings dw_l and anharmonicities U_l (units of J).

    ``frequency_offset``: the quasi-static frequency noise s_l included in
    ``dw`` (None: none).  It is part of the Hamiltonian but not of the qubit
    frequency an experiment calibrates (:meth:`ArraySpec.qubit_frequency`).
    ``J``: the per-bond couplings J_l of bonds (l, l+1), shape (L-1,), units
    of J (None: uniform J_l = 1, the paper); see :attr:`hoppings`.  ``edges``:
    the bonds of a coupling graph (:mod:`.geometry`; None: the chain's
    (l, l+1)); ``J`` then holds one coupling per edge, in their order.
    """

    dw: np.ndarray
    U: np.ndarray
    frequency_offset: np.ndarray | None = None
    J: np.ndarray | None = None
    edges: tuple | None = None

    def __post_init__(self):
        if self.J is not None:
            J = np.asarray(self.J, dtype=float)
            require(J.shape == (self.n_bonds,) and bool(np.all(np.isfinite(J) & (J > 0))), "realization",
                    f"J = {self.J}", f"per-bond couplings J_l > 0, one per bond ({self.n_bonds} of them; units of J)")

    @property
    def L(self) -> int:
        return len(self.dw)

    @property
    def n_bonds(self) -> int:
        """The number of bonds: L - 1 on the chain, the graph's edges otherwise."""
        return self.L - 1 if self.edges is None else len(self.edges)

    @property
    def hoppings(self) -> np.ndarray:
        """J_l of every bond (units of J): ``J``, or ones when uniform."""
        return np.ones(self.n_bonds) if self.J is None else np.asarray(self.J, dtype=float)

    @property
    def calibrated_dw(self) -> np.ndarray:
        """The detunings without the quasi-static frequency noise (what a calibration sees)."""
        return self.dw if self.frequency_offset is None else self.dw - self.frequency_offset


@dataclass(frozen=True)
class Channel:
    """A continuous jump channel c = sqrt(rate) op acting on ``site`` (0-based).

    ``removes`` says whether the jump lowers the excitation number N (a thermal bath's ``heating``
    a^dag raises it: ``removes`` is False, and the op is not diagonal).
    """

    name: str
    site: int
    op: np.ndarray = field(repr=False)
    rate: float
    removes: bool


@dataclass(frozen=True)
class ArraySpec(SpecInput, HamiltonianTerms):
    """Everything that defines the physics of one ensemble (units of J).

    ``L`` sites, hopping ``J_hz`` = J/2pi in Hz, mean anharmonicity ``Ubar``,
    mean frequency ``wbar``, disorder width ``W`` (full width of the box),
    the last-site ``reset`` and the hardware ``conditions``; the
    fabrication/tuning errors ``e2_spread`` (std of the leakage levels'
    residual detuning), ``frequency_noise`` (std of a quasi-static frequency
    offset), ``hopping_spread`` (relative std of the per-bond couplings) and
    the ``disorder_pattern`` (box, gaussian, quasiperiodic, alternating), see
    :mod:`lru_mps.physics.disorder` (off by default); ``hopping_profile``,
    the engineered nominal couplings P_l of the bonds, mean 1 (``uniform``,
    ``linear:A:B``, ``transfer`` or a tuple of L - 1 relative values; see
    :mod:`lru_mps.physics.hopping_profile`);
    ``readout``, the feedback measurement's confusion matrix P[m][n] = p(n|m)
    (a tuple of tuples; None = an ideal readout), see :mod:`.readout`;
    ``device``, a real chip's values (:class:`~lru_mps.physics.device.Device`,
    None = the paper's recipe): then L, J_hz, Ubar = mean(U_l) and wbar =
    mean(w_l) are the device's, W = 0, and every realization is the file's
    values with the spreads on top (build it with :meth:`from_device`);
    ``thermal_bath``: decay sqrt(gamma (1 + nbar)) a and heating
    sqrt(gamma nbar) a^dag on every site (:mod:`.bath`; False = decay alone).
    ``geometry``: the coupling graph (:class:`~lru_mps.physics.geometry.Geometry`,
    L of its sites, start site 0, reset site L - 1; None = the chain, bit for
    bit): the couplings are then one per edge (:meth:`edges`), the spread
    draws one eps per edge, and a profile or a device file needs a chain.

    Constructed directly, every field is in internal units and the defaults
    are those of :data:`lru_mps.defaults.MODEL` converted, except
    ``conditions``, which is ideal (no noise, 0 K) unless given;
    :meth:`from_user` takes values with units and applies every default of
    :data:`~lru_mps.defaults.MODEL` (realistic conditions included), and
    :meth:`from_device` a device file (both from the base
    :class:`~lru_mps.physics.spec_input.SpecInput`).
    """

    L: int = _DEFAULT["L"]
    J_hz: float = _J_HZ
    Ubar: float = _DEFAULT["Ubar"]
    wbar: float = _DEFAULT["wbar"]
    W: float = _DEFAULT["W"]
    reset: Reset = field(default_factory=Reset)
    conditions: Conditions = field(default_factory=Conditions)
    e2_spread: float = _DEFAULT["e2_spread"]
    frequency_noise: float = _DEFAULT["frequency_noise"]
    disorder_pattern: str = MODEL["disorder_pattern"]
    hopping_spread: float = _DEFAULT["hopping_spread"]
    readout: tuple | None = None
    device: devices.Device | None = None
    thermal_bath: bool = bool(MODEL["thermal_bath"])
    hopping_profile: str | tuple = MODEL["hopping_profile"]
    geometry: geometries.Geometry | None = None

    def __post_init__(self):
        require(isinstance(self.L, (int, np.integer)) and self.L >= 2, "length", self.L, "an integer L >= 2")
        require(math.isfinite(self.J_hz) and self.J_hz > 0, "hopping", self.J_hz, "J/2pi > 0 Hz")
        require(math.isfinite(self.Ubar) and self.Ubar > 0, "anharmonicity", self.Ubar, "Ubar > 0 (units of J)")
        require(math.isfinite(self.wbar) and self.wbar > 0, "frequency", self.wbar, "wbar > 0 (units of J)")
        require(math.isfinite(self.W) and self.W >= 0, "disorder", self.W, "W >= 0 (units of J)")
        require(self.disorder_pattern in disorder.PATTERNS, "disorder_pattern", self.disorder_pattern,
                f"one of {', '.join(disorder.PATTERNS)}")
        if self.disorder_pattern != "gaussian":  # bounded |dw_l| <= W/2 (the gaussian's condition: disorder.check)
            require(self.W < self.Ubar, "disorder", self.W,
                    f"W < Ubar = {self.Ubar:g} J, so that every anharmonicity U_l = Ubar + 2 dw_l stays positive")
        dev = self.device  # the spreads' positivity: from the smallest U_l and w_l of a device
        disorder.check(self.Ubar if dev is None else float(np.min(dev.U)), self.wbar if dev is None else
                       float(np.min(dev.w)), self.W, self.disorder_pattern, self.e2_spread, self.frequency_noise,
                       self.hopping_spread)
        object.__setattr__(self, "hopping_profile", profiles.parse(self.hopping_profile))
        profiles.couplings(self.hopping_profile, self.L)  # an explicit list: L - 1 of them
        require(dev is None or profiles.is_uniform(self.hopping_profile), "hopping_profile",
                profiles.describe(self.hopping_profile), "uniform with a device file (the file gives every coupling)")
        self._check_geometry()
        if dev is not None:
            devices.check_spec(dev, self.L, self.J_hz, self.Ubar, self.wbar, self.W, self.disorder_pattern)
        if self.conditions.per_site:  # one T1, Tphi per site: L of them
            self.conditions.t1_sites(self.L), self.conditions.tphi_sites(self.L)
        if self.readout is not None:
            object.__setattr__(self, "readout", readouts.check(self.readout))
        readouts.check_reset(self.readout, self.reset.kind)
        require(isinstance(self.thermal_bath, (bool, np.bool_)), "thermal_bath", self.thermal_bath, "True or False")

    def _check_geometry(self) -> None:
        g = geometries.parse(self.geometry)  # (the text 'chain': None, the default chain)
        object.__setattr__(self, "geometry", g)
        if g is None:
            return
        require(g.L == self.L, "geometry", g.name, f"a graph of L = {self.L} sites (the spec's length)",
                f"it has {g.L}: set L = {g.L}")
        require(g.resets == 1 or self.reset.kind in ("periodic", "dissipation", "none"), "reset", self.reset.kind,
                f"periodic or dissipation with {g.resets} reset sites (random feedback at several sites would need a "
                "Poisson clock per site; the trajectory algorithm has one)")
        if not g.is_chain:
            require(self.disorder_pattern in disorder.SITE_PATTERNS, "disorder_pattern", self.disorder_pattern,
                    f"{' or '.join(disorder.SITE_PATTERNS)} on the graph {g.name} (the {self.disorder_pattern} pattern "
                    "runs along a chain's site numbers l = 1..L, which a graph does not have)")
            require(profiles.is_uniform(self.hopping_profile), "hopping_profile", profiles.describe(
                self.hopping_profile), f"uniform on the graph {g.name} (a profile is a chain's, bond by bond)")
            dev = self.device
            require(dev is None or dev.edges == g.edges, "geometry", g.name,
                    "the device file's own graph with a device file (ArraySpec.from_device numbers it)")

    # ------------------------------------------------------------------ input
    # from_user and from_device (values with units, a device file): SpecInput, lru_mps/physics/spec_input.py
    def replace(self, **changes) -> "ArraySpec":
        """A copy with some fields changed (validated again)."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values.update(changes)
        return ArraySpec(**values)

    def as_dict(self) -> dict:
        """Flat, JSON-friendly description (units in the key names)."""
        return {
            "L": int(self.L),
            "J_over_2pi_Hz": self.J_hz,
            "Ubar_J": self.Ubar,
            "wbar_J": self.wbar,
            "W_J": self.W,
            "reset": self.reset.kind,
            "rate_J": self.reset.rate,
            "T1q_J": _json_float(self.conditions.T1q),
            "Tphi_J": _json_float(self.conditions.Tphi),
            "temperature_K": self.conditions.temperature_K,
            **self._errors_dict(),
            **(self.device.as_dict() if self.device is not None else {}),  # (absent without: earlier keys stay)
            **(self.geometry.as_dict() if self.geometry is not None else {}),  # (likewise)
        }

    def _errors_dict(self) -> dict:
        """The fabrication/tuning errors, only those on, so that the keys of earlier runs stay valid."""
        out = {}
        if self.disorder_pattern != MODEL["disorder_pattern"]:
            out["disorder_pattern"] = self.disorder_pattern
        if self.e2_spread != _DEFAULT["e2_spread"]:
            out["e2_spread_J"] = self.e2_spread
        if self.frequency_noise != _DEFAULT["frequency_noise"]:
            out["frequency_noise_J"] = self.frequency_noise
        if self.hopping_spread != _DEFAULT["hopping_spread"]:
            out["hopping_spread"] = self.hopping_spread
        if not profiles.is_uniform(self.hopping_profile):
            out["hopping_profile"] = profiles.as_json(self.hopping_profile)
        if self.readout is not None:  # P[m][n] = p(n|m)
            out["readout_confusion"] = [list(r) for r in self.readout]
        if self.thermal_bath:
            out["thermal_bath"] = True
        return out

    # ---------------------------------------------------------------- physics
    @property
    def J_prop(self) -> float:
        """Stack hopping J_prop = 2 J^2 / Ubar (units of J), nominal J (bond l's is 2 J_l^2/U with a hopping spread)."""
        return 2.0 / self.Ubar

    @property
    def T_prop(self) -> float:
        """Propagation time T_prop = pi / (2 J_prop) (units of 1/J)."""
        return math.pi / (2.0 * self.J_prop)

    @property
    def transit_hops(self) -> int:
        """Hops from the start site (index 0) to the reset site (index L - 1): L - 1 on the chain, the graph
        distance to the nearest reset site on a :attr:`geometry` (the transit of the leakage takes transit_hops
        T_prop)."""
        return self.L - 1 if self.geometry is None else self.geometry.reset_distance(0)

    @property
    def reset_sites(self) -> tuple:
        """The indices of the sites that carry the reset channels: (L - 1,) on the chain, a graph's last
        :attr:`~lru_mps.physics.geometry.Geometry.resets` indices (docs/physics.md §3.4)."""
        return (self.L - 1,) if self.geometry is None else self.geometry.reset_sites

    def draw_realization(self, rng: np.random.Generator) -> Realization:
        """Resonant-E2 disorder: dw_l ~ U[-W/2, W/2], U_l = Ubar + 2 dw_l (box pattern, no spreads).

        Other patterns, then the e2 spread (U_l -> U_l - delta_l) and the
        frequency noise (dw_l -> dw_l + s_l), drawn after the pattern and only
        when on: :func:`lru_mps.physics.disorder.draw`; last the per-bond
        couplings J_l (:func:`lru_mps.physics.disorder.hoppings`), only when on,
        times the profile's nominal P_l (:meth:`profile`).
        """
        if self.device is not None:  # the file's values, the spreads on top
            dw, U, offset, J = self.device.realization(rng, self.e2_spread, self.frequency_noise, self.hopping_spread)
            return Realization(dw=dw, U=U, frequency_offset=offset, J=J, edges=self._real_edges())
        dw, U, offset = disorder.draw(self.L, self.Ubar, self.W, rng, self.disorder_pattern, self.e2_spread,
                                      self.frequency_noise)
        J = (disorder.hoppings(self.L, self.hopping_spread, rng) if self.geometry is None else
             disorder.hoppings(self.L, self.hopping_spread, rng, bonds=len(self.edges())))  # one eps per edge
        P = self.profile()
        if P is not None:
            J = P if J is None else P * J
        return Realization(dw=dw, U=U, frequency_offset=offset, J=J, edges=self._real_edges())

    def profile(self) -> np.ndarray | None:
        """The nominal couplings P_l of the hopping profile, mean 1 (units of J); None when uniform."""
        return profiles.couplings(self.hopping_profile, self.L)

    def clean_realization(self) -> Realization:
        """The disorder-free array (dw = 0, U = Ubar); a device's own values, without spreads."""
        if self.device is not None:
            return Realization(dw=self.device.dw, U=self.device.U, J=self.device.J, edges=self._real_edges())
        dw = np.zeros(self.L)
        return Realization(dw=dw, U=np.full(self.L, self.Ubar), J=self.profile(), edges=self._real_edges())

    def channels(self) -> list[Channel]:
        """All Lindblad channels of the master equation (reset and hardware noise).

        Random feedback appears here as its three Lindblad operators
        ``sqrt(G) |0><n|_L``; the trajectory algorithm unravels those as
        measurements at Poisson times instead (see :meth:`jump_channels`).
        """
        chans: list[Channel] = []
        G = self.reset.rate
        for last in self.reset_sites:  # the reset's channels on each reset site (one on the chain: L - 1)
            if self.reset.kind == "dissipation":
                chans.append(Channel("dissipation", last, ops.a, G, True))
            elif self.reset.kind == "random" and self.readout is None:
                for k in range(3):
                    chans.append(Channel(f"measure{k}", last, ops.reset_op(k), G, k > 0))
            elif self.reset.kind == "random":  # sqrt(G p(n|m)) |x(m, n)><m|_L (physics.readout)
                for p, k, m in readouts.kraus(self.readout):
                    op = np.outer(ops.ket(k), ops.ket(m))
                    chans.append(Channel(f"measure{m}{k}", last, op, G * p, k < m))
        T1, Tphi = self.conditions.t1_sites(self.L), self.conditions.tphi_sites(self.L)  # one per site
        if self.thermal_bath:  # sqrt(gamma (1 + nbar)) a and sqrt(gamma nbar) a^dag (physics.bath; no a^dag at T = 0)
            for l, down, up in baths.rates(self):
                chans += [Channel("decay", l, ops.a, down, True)] + ([Channel("heating", l, ops.adag, up, False)]
                                                                      if up > 0 else [])
        else:
            chans += [Channel("decay", l, ops.a, 1.0 / float(T1[l]), True) for l in range(self.L)
                      if math.isfinite(T1[l])]
        chans += [Channel("dephasing", l, ops.n, 2.0 / float(Tphi[l]), False) for l in range(self.L)
                  if math.isfinite(Tphi[l])]
        return chans

    def qubit_frequency(self, real: Realization, frame: str = "dressed") -> float:
        """The coding qubit's frequency in the rotating frame (units of J).

        ``dressed`` (default): the eigenfrequency of the single-excitation mode
        of H with the largest weight on site 1, i.e. the qubit frequency an
        experiment calibrates (dw_1 plus the hopping shift ~ J^2/(dw_1 - dw_2)).
        ``bare``: dw_1.  The coherence C(t) is taken in the frame rotating at
        this frequency; with the bare frequency the realization average would
        dephase in ``~ |dw_1 - dw_2| / J^2`` ~ 10/J from the spread of hopping
        shifts alone.

        Both are computed without the quasi-static frequency noise
        (``real.calibrated_dw``): a calibration measures the qubit's mean
        frequency, not each shot's offset, so the noise on site 1 dephases the
        ensemble (docs/physics.md §3.1), as the thermal excitations do.
        """
        dw = real.calibrated_dw
        if frame == "bare":
            return float(dw[0])
        require(frame == "dressed", "qubit_frame", frame, "dressed or bare")
        if self.is_chain:
            from scipy.linalg import eigh_tridiagonal

            lam, vec = eigh_tridiagonal(dw, self.couplings(real))
        else:  # a graph: the dense N = 1 block
            lam, vec = np.linalg.eigh(self.one_particle_hamiltonian(real, dw))
        return float(lam[np.argmax(np.abs(vec[0]) ** 2)])

    def jump_channels(self) -> list[Channel]:
        """The channels unravelled by waiting-time jumps (all but random feedback).

        Random feedback has sum_n P_n^dag P_n = 1, so its jumps come at Poisson
        times of rate G whatever the state, with Born-rule outcomes: the
        trajectory algorithm schedules them as measurements, and they add only
        a constant -iG/2 to H_eff, which is left out.
        """
        return [ch for ch in self.channels() if not ch.name.startswith("measure")]

    # ---------------------------------------------------------- initial state
    def thermal_levels(self, real: Realization, rng: np.random.Generator) -> np.ndarray:
        """Sample the J = 0 Gibbs product state of sites 2..L (level per site).

        Energies E_1 = h f_l, E_2 = h (2 f_l - U_l/2pi) with the true (lab)
        frequencies f_l = (wbar + dw_l) J/2pi.  Site 1 gets level 0 here (it
        is prepared separately).  Always consumes L-1 uniforms from ``rng``.
        """
        u = rng.random(self.L - 1)
        levels = np.zeros(self.L, dtype=int)
        T = self.conditions.temperature_K
        if T == 0.0:
            return levels
        p = self.thermal_probabilities(real)
        cum = np.cumsum(p[1:], axis=1)
        levels[1:] = (u[:, None] > cum[:, :2]).sum(axis=1)
        return levels

    def thermal_probabilities(self, real: Realization) -> np.ndarray:
        """Single-site Gibbs weights, shape (L, 3) (row 0 is site 1, unused)."""
        T = self.conditions.temperature_K
        f1 = (self.wbar + real.dw) * self.J_hz
        f2 = (2.0 * (self.wbar + real.dw) - real.U) * self.J_hz
        if T == 0.0:
            p = np.zeros((self.L, 3))
            p[:, 0] = 1.0
            return p
        beta_h = H_PLANCK / (K_BOLTZMANN * T)
        e = np.stack([np.zeros(self.L), f1, f2], axis=1) * beta_h
        w = np.exp(-(e - e.min(axis=1, keepdims=True)))
        return w / w.sum(axis=1, keepdims=True)


def _json_float(x):
    """inf -> None; a per-site tuple -> a list of them."""
    if isinstance(x, tuple):
        return [_json_float(v) for v in x]
    return None if math.isinf(x) else x

