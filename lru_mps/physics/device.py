"""A real chip: the device file (``--device FILE.toml``, ``ArraySpec.from_device``; docs/physics.md §3.2).

Format (TOML; site 1 is the coding qubit, site L the reset site; every value
takes the units the command line takes, :mod:`lru_mps.physics.units`)::

    frequencies = ["7512MHz", "7468MHz", "7530MHz"]      # w_l/2pi, L values
    anharmonicities = ["274MHz", "185.95MHz", "310.1MHz"] # U_l/2pi, E2_l = 2 w_l - U_l
    couplings = ["5.1MHz", "4.9MHz"]                      # J_l/2pi per bond, L - 1 values (or hopping = "5MHz")
    t1 = ["16.7us", "20us", "15us"]                       # optional: one value or L values
    tphi = ["10us", "12us", "8us"]                        # optional: one value or L values
    temperature = "100mK"                                 # optional

An array on a coupling graph gives its bonds instead of ``couplings``: ``edges
= [[1, 2, "5.1MHz"], [2, 3, "4.9MHz"], [1, 3, "5.0MHz"]]`` (sites numbered
1..L as the frequencies, J_ij/2pi with a unit; J is their mean), and
``reset_sites = [3]`` names the site carrying the LRU (default: site L), or
several (``[3, 4]``: LRUs on several sites, each with the reset's channels).
Site 1 stays the coding qubit.  The spec numbers the sites so that site 1 is
index 0 and the reset sites the last (:meth:`Device.geometry`,
:meth:`Device.renumbered`); a chain's file without them is the chain, bit for
bit.

Physics.  H = sum_l [w_l n_l - (U_l/2) n_l (n_l - 1)] + sum_l J_l (a_l^dag
a_{l+1} + h.c.) with the file's values, hardware decay sqrt(1/T1_l) a_l and
dephasing sqrt(2/Tphi_l) n_l on site l.  L is the number of frequencies.
The unit J is ``hopping`` if given (then ``couplings`` may be left out:
J_l = J on every bond), else the mean of ``couplings`` (which then need a
frequency unit).  As in the paper's recipe, the rotating frame is at the
mean frequency wbar = mean(w_l): dw_l = w_l - wbar, and Ubar = mean(U_l)
(so the leakage level E2_l = 2 dw_l - U_l is -Ubar on average; the paper's
recipe has it -Ubar on every site).  Populations do not depend on the frame,
and the coherence is taken at the dressed qubit frequency (docs/physics.md
§7).  The thermal start uses each site's own lab frequency w_l and
E2_l = 2 w_l - U_l.  In the spec W = 0 and the pattern is the box (nothing
is drawn); the fabrication/tuning spreads (``e2_spread``,
``frequency_noise``, ``hopping_spread``) are drawn on top of the file's
values as on top of the paper's recipe (:func:`lru_mps.physics.disorder.spreads`).

Validation: every key is known, the required ones are there, the lists have
L (frequencies, anharmonicities; t1 and tphi: 1 or L) or L - 1 (couplings)
values, every dimensionful value carries its unit (a bare number, 7520 or
"7520", is refused: it would be read as a multiple of J or 1/J; multiples of
J written out, "1.02J" or "500/J", stay allowed, and so do a temperature 0
and a time inf), every value parses and is physical (w_l, U_l, J_l > 0 and
finite, U_l < w_l so that |2> lies above |1>, T1_l and Tphi_l > 0 or inf,
temperature >= 0) and inside the domain of a transmon that the command line
uses too (:mod:`lru_mps.physics.domains`, one set of rules: w_l/2pi in
1-20 GHz, U_l/2pi in 50-500 MHz, positive: the |1>-|2> transition lies U_l
below the |0>-|1> one; Ubar = mean(U_l) >= 10 J; T1_l and Tphi_l >= 100 ns;
temperature under 1 K).  The edges of that domain (a T1_l or Tphi_l under
1 us, Ubar under 20 J, above 300 mK) warn when the spec is built
(``ArraySpec.from_device``).  An error names the key as ``device.KEY``.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from . import domains
from ..errors import ParameterError, require
from .chip import FIXED_OPTIONS, Device, check_spec, refuse_fixed  # noqa: F401 (the device's names, here too)
from .units import parse_frequency_hz, time_to_us, to_energy, to_kelvin, to_time

KEYS = ("frequencies", "anharmonicities", "couplings", "hopping", "t1", "tphi", "temperature", "edges", "reset_sites")
#: the keys whose values need a unit (a bare number would be a multiple of J or of 1/J)
DIMENSIONFUL = ("frequencies", "anharmonicities", "couplings", "hopping", "t1", "tphi")
#: the kind of quantity of each dimensionful key (for :func:`lru_mps.physics.domains.example`)
KINDS = {"frequencies": "frequency", "anharmonicities": "anharmonicity", "couplings": "coupling",
         "hopping": "coupling", "t1": "time", "tphi": "time"}
def load(device) -> Device:
    """A :class:`Device` from a path to a TOML file, a dict with the file's keys, or a Device (as is)."""
    if isinstance(device, Device):
        return device
    if isinstance(device, Mapping):
        return parse(dict(device))
    path = Path(device)
    require(path.is_file(), "device", str(device), "an existing device file (TOML)")
    with open(path, "rb") as fh:
        try:
            data = tomllib.load(fh)
        except tomllib.TOMLDecodeError as err:
            raise ParameterError("device", str(device), f"a valid TOML file ({err})") from None
    return parse(data, str(device))


def parse(data: dict, source: str | None = None) -> Device:
    """Check and convert a device file's table (module docstring); errors name the key as ``device.KEY``."""
    where = f"in {source}" if source else "in the device table"

    def fail(key, value, allowed):
        raise ParameterError(f"device.{key}", value, allowed, where)

    for key in data:
        if key not in KEYS:
            fail(key, data[key], f"not a key of a device file (its keys: {', '.join(KEYS)})")
    for key in ("frequencies", "anharmonicities"):
        if key not in data:
            fail(key, "missing", "a required key: one value per site, site 1 the coding qubit, site L the reset site")
    if "couplings" in data and "edges" in data:
        fail("edges", data["edges"], "edges in place of couplings (each edge carries its own J_ij), not both")
    if "couplings" not in data and "hopping" not in data and "edges" not in data:
        fail("couplings", "missing", "a required key: J_l/2pi of every bond, L - 1 values (or hopping = '5MHz', "
                                     "the same on every bond; or edges = [[1, 2, '5MHz'], ...] for a graph)")
    raw = data["frequencies"]
    if not isinstance(raw, list) or len(raw) < 2:
        fail("frequencies", raw, "a list of L >= 2 frequencies w_l/2pi, one per site (e.g. ['7512MHz', '7468MHz'])")
    L = len(raw)

    def values(key, n, convert, allowed, scalar=False, what="site"):
        v = data[key]
        items = [v] if scalar and not isinstance(v, list) else v
        if not isinstance(items, list) or len(items) not in ((1, n) if scalar else (n,)):
            fail(key, v, allowed)
        out = []
        for i, x in enumerate(items):
            at = f"{what} {i + 1}: " if len(items) > 1 else ""
            bare = domains.bare_number(x) if key in DIMENSIONFUL else None
            if bare is not None:
                fail(key, v, f"values with a unit ({at}{x!r} has no unit; write "
                             f"{domains.example(KINDS[key], bare, key == 'couplings' and 'hopping' in data)})")
            try:
                out.append(float(convert(x)))
            except ParameterError as err:
                fail(key, v, f"{err.allowed} ({at}{x!r})")
        return out

    if "hopping" in data:
        J_hz = values("hopping", 1, lambda x: parse_frequency_hz(x, "hopping"),
                      "one frequency J/2pi with a unit, e.g. '5MHz'", scalar=True)[0]
        if not (math.isfinite(J_hz) and J_hz > 0):
            fail("hopping", data["hopping"], "J/2pi > 0 and finite, e.g. '5MHz'")
    edges = None
    if "edges" in data:
        edges, couplings = _edges(data["edges"], L, J_hz if "hopping" in data else None, fail)
        if "hopping" not in data:
            J_hz = float(np.mean(couplings))
    elif "couplings" in data:
        conv = (lambda x: parse_frequency_hz(x, "couplings")) if "hopping" not in data else \
            (lambda x: _hz(x, J_hz))
        unit = "" if "hopping" in data else "; with a unit: J is their mean"
        couplings = values("couplings", L - 1, conv, f"L - 1 = {L - 1} couplings J_l/2pi, one per bond (L = {L} "
                           f"from frequencies{unit})", what="bond")
        if not all(math.isfinite(c) and c > 0 for c in couplings):
            fail("couplings", data["couplings"], "couplings J_l/2pi > 0 and finite")
        if "hopping" not in data:
            J_hz = float(np.mean(couplings))
    else:
        couplings = [J_hz] * (L - 1)
    freqs = values("frequencies", L, lambda x: _hz(x, J_hz), f"L = {L} frequencies w_l/2pi, one per site")
    anh = values("anharmonicities", L, lambda x: _hz(x, J_hz),
                 f"L = {L} anharmonicities U_l/2pi, one per site (L from frequencies)")
    if not all(math.isfinite(f) and f > 0 for f in freqs):
        fail("frequencies", raw, "frequencies w_l/2pi > 0 and finite")
    for i, f in enumerate(freqs):
        if f not in domains.FREQUENCY:
            fail("frequencies", raw, f"transmon frequencies w_l/2pi in {domains.FREQUENCY.text()} (site {i + 1}: "
                                     f"{raw[i]!r} = {f / 1e9:.6g} GHz), e.g. '7.5GHz'")
    if not all(math.isfinite(u) and 0 < u < f for u, f in zip(anh, freqs)):
        fail("anharmonicities", data["anharmonicities"], "0 < U_l < w_l and finite on every site, positive: "
                                                         "U_l/2pi = 250MHz puts |2> at E2_l = 2 w_l - U_l, "
                                                         "the |1>-|2> transition U_l below the |0>-|1> one")
    for i, u in enumerate(anh):
        if u not in domains.ANHARMONICITY:
            fail("anharmonicities", data["anharmonicities"],
                 f"transmon anharmonicities U_l/2pi in {domains.ANHARMONICITY.text()}, positive (site {i + 1}: "
                 f"{data['anharmonicities'][i]!r} = {u / 1e6:.6g} MHz), e.g. '250MHz'")
    try:
        domains.require_ubar(float(np.mean(anh)) / J_hz, "anharmonicities", data["anharmonicities"], J_hz)
    except ParameterError as err:
        fail("anharmonicities", data["anharmonicities"], err.allowed)
    hw = {}
    for key in ("t1", "tphi"):
        if key in data:
            times = values(key, L, lambda x: to_time(x, key, J_hz),
                           f"one time or L = {L} times, one per site (e.g. '16.7us', '500/J', inf)", scalar=True)
            if not all(t > 0 for t in times):
                fail(key, data[key], "times > 0 (inf: none)")
            floor = domains.COHERENCE_US[0]  # (the edge, under 1 us, warns with the spec: domains.edge_warnings)
            for i, t in enumerate(times):
                us = time_to_us(t, J_hz)
                site = f"site {i + 1}" if len(times) > 1 else "every site"
                if domains.below(us, floor):
                    fail(key, data[key], f"transmon times of at least {floor * 1e3:g} ns ({site}: {us * 1e3:.3g} ns), "
                                         f"e.g. '16.7us'")
            hw[key] = times[0] if len(times) == 1 else tuple(times)
    temperature = None
    if "temperature" in data:
        temperature = values("temperature", 1, lambda x: to_kelvin(x, "temperature"),
                             "one temperature, e.g. '100mK' or 0", scalar=True)[0]
        if not (math.isfinite(temperature) and temperature >= 0):
            fail("temperature", data["temperature"], "a temperature >= 0 K")
        try:
            domains.require_temperature_K(temperature, "temperature", data["temperature"])
        except ParameterError as err:
            fail("temperature", data["temperature"], err.allowed)
    reset_sites = None
    if "reset_sites" in data:
        v = data["reset_sites"]
        if not isinstance(v, list) or not v or any(isinstance(x, bool) or not isinstance(x, int) or not 2 <= x <= L
                                                  for x in v) or len(set(v)) != len(v):
            fail("reset_sites", v, f"site numbers in 2..{L} in a list, each once, e.g. [{L}] or [{L - 1}, {L}] "
                                   "(site 1 is the coding qubit)")
        reset_sites = None if v == [L] else tuple(x - 1 for x in v)
    dev = Device(J_hz=J_hz, frequencies_hz=tuple(freqs), anharmonicities_hz=tuple(anh), couplings_hz=tuple(couplings),
                 T1=hw.get("t1"), Tphi=hw.get("tphi"), temperature_K=temperature, source=source, edges=edges,
                 reset_sites=reset_sites)
    try:
        dev.geometry()
    except ParameterError as err:
        fail("edges", data.get("edges"), err.allowed)
    return dev


def _edges(raw, L: int, J_hz: float | None, fail) -> tuple[tuple, list]:
    """((i, j) 0-based, J_ij/2pi in Hz) of a device file's ``edges`` (J_hz: the file's hopping, if it gives one)."""
    allowed = (f"a list of bonds [i, j, J_ij] between sites 1..{L} (i != j, each pair once), J_ij/2pi with a unit, "
               "e.g. [[1, 2, '5.1MHz'], [2, 3, '4.9MHz']]")
    if not isinstance(raw, list) or not raw:
        fail("edges", raw, allowed)
    pairs, couplings = [], []
    for e in raw:
        if not isinstance(e, list) or len(e) != 3 or not all(isinstance(x, int) and not isinstance(x, bool)
                                                              for x in e[:2]):
            fail("edges", raw, f"{allowed} (not a bond: {e!r})")
        i, j = e[0] - 1, e[1] - 1
        if not (0 <= i < L and 0 <= j < L and i != j) or tuple(sorted((i, j))) in pairs:
            fail("edges", raw, f"{allowed} (bond {e!r})")
        if domains.bare_number(e[2]) is not None:
            fail("edges", raw, f"J_ij with a unit (bond {e!r}: write '{domains.bare_number(e[2]):g}MHz')")
        try:
            c = parse_frequency_hz(e[2], "edges") if J_hz is None else _hz(e[2], J_hz)
        except ParameterError as err:
            fail("edges", raw, f"{err.allowed} (bond {e!r})")
        if not (math.isfinite(c) and c > 0):
            fail("edges", raw, f"J_ij/2pi > 0 and finite (bond {e!r})")
        pairs.append(tuple(sorted((i, j))))
        couplings.append(c)
    return tuple(pairs), couplings


def _hz(value, J_hz: float) -> float:
    """f = omega/2pi in Hz from a value with a frequency unit (exact: '7512MHz' -> 7.512e9) or in units of J."""
    try:
        return parse_frequency_hz(value)
    except ParameterError:
        return to_energy(value, "frequency", J_hz) * J_hz
