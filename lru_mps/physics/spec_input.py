"""A spec from values with units, as a user types them, or from a real chip's device file.

:class:`SpecInput` holds the constructors of :class:`~lru_mps.physics.model.ArraySpec`
(a base of it): :meth:`~SpecInput.from_user` converts every quantity with its
unit ('5MHz', '0.03J', '2Jprop', '16.7us', '100mK', '5%') to the model's
internal units (energies and rates in J, times in 1/J, J/2pi in Hz) and
applies every default of :data:`lru_mps.defaults.MODEL`;
:meth:`~SpecInput.from_device` takes L, J, w_l, U_l and J_l from a device file
(:mod:`lru_mps.physics.device`).  The spec validates the result itself.

Both hold a user's values to the physical domain of :mod:`lru_mps.physics.domains` (the rules the device file
reads too): the frequency, the anharmonicity, T1, Tphi and the temperature need their unit (a bare number is
refused with what it would have meant), each must be a transmon's, and Ubar must be large against J; a value at
the edge of its domain warns (:class:`~lru_mps.errors.ParameterWarning`) once the spec is built.  A spec built
directly (internal units) is the expert's path and is held to the model's own checks only.
"""

from __future__ import annotations

import math
from typing import Self

from . import device as devices
from . import domains
from . import geometry as geometries
from . import readout as readouts
from .conditions import Reset, resolve
from ..defaults import MODEL
from ..errors import ParameterError, require
from .units import parse_frequency_hz, to_energy, to_fraction, to_rate


class SpecInput:
    """The constructors of :class:`~lru_mps.physics.model.ArraySpec` from user values (a base of it, no fields)."""

    @classmethod
    def from_user(cls, length=None, hopping=None, anharmonicity=None, frequency=None, disorder=None,
                  reset=MODEL["reset"], rate=MODEL["rate"], conditions=MODEL["conditions"], t1=None, tphi=None,
                  temperature=None, e2_spread=MODEL["e2_spread"], frequency_noise=MODEL["frequency_noise"],
                  disorder_pattern=MODEL["disorder_pattern"], hopping_spread=MODEL["hopping_spread"],
                  readout_error=MODEL["readout_error"], readout_confusion=MODEL["readout_confusion"],
                  device=None, thermal_bath=MODEL["thermal_bath"], hopping_profile=MODEL["hopping_profile"],
                  geometry=MODEL["geometry"], start_site=MODEL["start_site"], reset_site=MODEL["reset_site"]) -> Self:
        """Build a spec from values with units as a user types them (defaults: :data:`lru_mps.defaults.MODEL`).

        ``length``, ``hopping``, ``anharmonicity``, ``frequency`` and
        ``disorder``: None (or left out) takes the default.  ``device`` (a
        device file's path or its table as a dict) builds the spec with
        :meth:`from_device`; those five are then refused unless None.

        ``conditions`` is 'ideal' (no noise, 0 K) or 'realistic' (the paper's
        hardware, :data:`lru_mps.defaults.REALISTIC`: T1q = 16.7 us,
        Tphi = 10 us, 100 mK); ``t1``, ``tphi`` and ``temperature`` override
        either.  ``frequency`` (wbar/2pi), ``anharmonicity`` (Ubar/2pi), ``t1``,
        ``tphi`` and ``temperature`` need their unit ('7.5GHz', '250MHz' or '50J',
        '16.7us' or '500/J', '100mK'; 0 and inf none) and a transmon's value
        (:mod:`lru_mps.physics.domains`: 1-20 GHz, 50-500 MHz and Ubar >= 10 J,
        at least 100 ns, under 1 K; the edges warn).  ``e2_spread`` and ``frequency_noise`` are energies (standard
        deviations; '50kHz', '0.5J', or multiples of J_prop = 2 J^2/Ubar like
        '2Jprop'); ``disorder_pattern`` is box, gaussian, quasiperiodic or
        alternating (:mod:`lru_mps.physics.disorder`); ``hopping_spread`` is the
        relative std X of J_l = J (1 + eps_l), a bare fraction or a percentage
        ('0.05', '5%'); ``hopping_profile`` the engineered nominal couplings
        (uniform, transfer, 'linear:A:B' or a list of L - 1 relative values, mean 1:
        :mod:`lru_mps.physics.hopping_profile`).  ``readout_error`` (the
        symmetric error EPS) or ``readout_confusion`` (P[m][n] = p(n|m)): the
        feedback measurement's readout (:mod:`lru_mps.physics.readout`; 0/None: ideal).
        ``thermal_bath``: the bath of :mod:`lru_mps.physics.bath` on every site (off by default).
        ``geometry``: the coupling graph, ``chain`` (the paper's, bit for bit), ``ladder:N`` or ``grid:RxC``
        (:mod:`lru_mps.physics.geometry`; a graph fixes L: ``length`` None takes its number of sites, another
        value is refused); ``start_site`` (the coding qubit) and ``reset_site``: a 1-based site number in the
        layout's order or a 1-based coordinate 'r,c' (None: the layout's first and last site); the layout is
        relabelled so that the start site is index 0 and the reset site the last (:meth:`Geometry.relabel`).
        """
        graph = not _is_chain_text(geometry) or start_site is not None or reset_site is not None
        if device is not None:
            require(not graph, "geometry", geometry if not _is_chain_text(geometry) else
                    f"chain start_site={start_site} reset_site={reset_site}",
                    "none with a device file: the file gives its array (couplings along a chain, or edges and "
                    "reset_sites for a graph; site 1 is the coding qubit)")
            devices.refuse_fixed(length=length, hopping=hopping, anharmonicity=anharmonicity, frequency=frequency,
                                 disorder=disorder)
            return cls.from_device(device, reset=reset, rate=rate, conditions=conditions, t1=t1, tphi=tphi,
                                   temperature=temperature, e2_spread=e2_spread, frequency_noise=frequency_noise,
                                   disorder_pattern=disorder_pattern, hopping_spread=hopping_spread,
                                   readout_error=readout_error, readout_confusion=readout_confusion,
                                   thermal_bath=thermal_bath, hopping_profile=hopping_profile)
        length_given = length
        length, hopping, anharmonicity, frequency, disorder = (MODEL[k] if v is None else v for k, v in (
            ("length", length), ("hopping", hopping), ("anharmonicity", anharmonicity), ("frequency", frequency),
            ("disorder", disorder)))
        try:
            L = int(length)
        except (TypeError, ValueError):
            raise ParameterError("length", length, "an integer L >= 2") from None
        if isinstance(length, float) and length != L:
            raise ParameterError("length", length, "an integer L >= 2")
        g = None
        if graph:
            if not _is_chain_text(geometry):
                layout = geometries.parse(geometry)
                require(length_given is None or L == layout.L, "length", length_given,
                        f"L = {layout.L}, the number of sites of the geometry {layout.name} (a graph fixes L)",
                        "leave the length out")
                L = layout.L
            g = geometries.from_user(geometry, L, start_site, reset_site)
        J_hz = parse_frequency_hz(hopping, "hopping")
        require(math.isfinite(J_hz) and J_hz > 0, "hopping", hopping, "J/2pi > 0, e.g. '5MHz'")
        hardware = _hardware(conditions, t1, tphi, temperature, J_hz)
        reset_rate = to_rate(rate, "rate", J_hz) if reset != "none" else 0.0
        Ubar = domains.anharmonicity(anharmonicity, "anharmonicity", J_hz)  # (before Jprop)
        by_hopping = anharmonicity == MODEL["anharmonicity"] and hopping != MODEL["hopping"]  # the one typed
        domains.require_ubar(Ubar, *(("hopping", hopping) if by_hopping else ("anharmonicity", anharmonicity)), J_hz)
        spec = cls(
            L=L,
            J_hz=J_hz,
            Ubar=Ubar,
            wbar=domains.frequency(frequency, "frequency", J_hz),
            W=to_energy(disorder, "disorder", J_hz),
            reset=Reset(reset, reset_rate),
            conditions=hardware,
            e2_spread=to_energy(e2_spread, "e2_spread", J_hz, Ubar=Ubar),
            frequency_noise=to_energy(frequency_noise, "frequency_noise", J_hz, Ubar=Ubar),
            disorder_pattern=disorder_pattern,
            hopping_spread=to_fraction(hopping_spread, "hopping_spread", "a relative spread 0 <= X < 0.25"),
            readout=readouts.confusion(readout_error, readout_confusion),
            thermal_bath=thermal_bath,
            hopping_profile=hopping_profile,
            geometry=g,
        )
        domains.warn(spec)
        return spec

    @classmethod
    def from_device(cls, device, reset=MODEL["reset"], rate=MODEL["rate"], conditions=MODEL["conditions"], t1=None,
                    tphi=None, temperature=None, e2_spread=MODEL["e2_spread"],
                    frequency_noise=MODEL["frequency_noise"], disorder_pattern=MODEL["disorder_pattern"],
                    hopping_spread=MODEL["hopping_spread"], readout_error=MODEL["readout_error"],
                    readout_confusion=MODEL["readout_confusion"], thermal_bath=MODEL["thermal_bath"],
                    hopping_profile=MODEL["hopping_profile"]) -> Self:
        """A real chip's spec from its device file (a path, or its table as a dict; :mod:`lru_mps.physics.device`).

        L, the unit J (``hopping``, else the mean of ``couplings``), w_l, U_l
        and J_l come from the file; the frame is wbar = mean(w_l) and Ubar =
        mean(U_l) (units of J).  T1, Tphi (one value or one per site) and the
        temperature come from the file; those it lacks take the values of
        ``conditions`` (realistic: the paper's; ideal: none, 0 K), and ``t1``,
        ``tphi``, ``temperature`` override both.  The other options are those
        of :meth:`from_user`, in the device's J (``rate='0.03J'``); the spreads
        are drawn on top of the file's values; ``disorder_pattern`` must be box and
        ``hopping_profile`` uniform (the file gives every coupling).  A file with ``edges`` or ``reset_sites``
        is an array on a graph: its sites numbered with the coding qubit (site 1) first and the reset site last.
        """
        dev = devices.load(device)
        g = dev.geometry()  # None: a chain with its reset at site L (the file's order, bit for bit)
        if g is not None:
            dev = dev.renumbered(g)
        J_hz, Ubar = dev.J_hz, dev.Ubar
        spec = cls(
            L=dev.L, J_hz=J_hz, Ubar=Ubar, wbar=dev.wbar, W=0.0,
            reset=Reset(reset, to_rate(rate, "rate", J_hz) if reset != "none" else 0.0),
            conditions=_hardware(conditions, t1, tphi, temperature, J_hz, dev.hardware()),
            e2_spread=to_energy(e2_spread, "e2_spread", J_hz, Ubar=Ubar),
            frequency_noise=to_energy(frequency_noise, "frequency_noise", J_hz, Ubar=Ubar),
            disorder_pattern=disorder_pattern,
            hopping_spread=to_fraction(hopping_spread, "hopping_spread", "a relative spread 0 <= X < 0.25"),
            readout=readouts.confusion(readout_error, readout_confusion),
            device=dev,
            thermal_bath=thermal_bath,
            hopping_profile=hopping_profile,
            geometry=g,
        )
        domains.warn(spec)
        return spec


def _hardware(conditions, t1, tphi, temperature, J_hz: float, given: dict | None = None):
    """The spec's Conditions (:func:`~lru_mps.physics.conditions.resolve`), the typed overrides ``t1``, ``tphi``
    and ``temperature`` first held to their domain (:mod:`lru_mps.physics.domains`: a unit, T1 and Tphi of at least
    100 ns, under 1 K)."""
    for name, value in (("t1", t1), ("tphi", tphi)):
        if value is not None:
            domains.coherence_time(value, name, J_hz)
    if temperature is not None:
        domains.temperature(temperature)
    return resolve(conditions, t1, tphi, temperature, J_hz, given)


def _is_chain_text(geometry) -> bool:
    """The default chain: None or the text 'chain' (a Geometry object is the user's graph)."""
    return geometry is None or (isinstance(geometry, str) and geometry.strip().lower() == "chain")
