"""The tolerance study's plan: the error kinds it sweeps, their spreads and units, and the distinct ensembles.

Read from the study's config (``studies/tolerance.toml`` and the user's options): the kinds (``kinds``), each
kind's spreads S (energies in J; the hopping spread a fraction X), the lengths, and the ensembles: one per
distinct spec, S = 0 shared by every kind (the same ensemble, run once).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...errors import require
from ...physics.units import to_energy, to_fraction
from ..base import parse_lengths
from ..common import as_list, positive_int, spec_of
from ..config import Config

#: error kind -> the config key of its spread values (the kind is the model key of `lru-mps simulate`)
SWEEPS = {"e2_spread": "e2_spreads", "frequency_noise": "frequency_noises", "hopping_spread": "hopping_spreads"}
#: kinds whose spreads are dimensionless fractions (the others are energies)
FRACTIONS = ("hopping_spread",)
NOTES = {"hopping_spread": "per-bond couplings J_l = J (1 + eps_l), eps_l ~ N(0, X): spreads X are fractions "
                           "(spreads_fraction, spreads_percent; doubling value_fraction, value_percent); not in the "
                           "default kinds (--kinds e2_spread,frequency_noise,hopping_spread)"}
LABELS = {"e2_spread": "leakage-level detuning spread", "frequency_noise": "quasi-static frequency noise",
          "hopping_spread": "per-bond coupling spread"}


def units_of(kind: str, J_hz: float, J_prop: float) -> tuple[tuple[str, float], ...]:
    """(unit, factor) of a kind's spreads: energies in J, MHz and J_prop; the hopping spread as a fraction and in %."""
    if kind in FRACTIONS:
        return (("fraction", 1.0), ("percent", 100.0))
    return (("J", 1.0), ("MHz", J_hz / 1e6), ("Jprop", 1.0 / J_prop))


def _kinds(cfg: dict) -> list[str]:
    kinds = as_list(cfg, "kinds")
    for k in kinds:
        require(k in SWEEPS, "kinds", kinds, f"error kinds among {', '.join(SWEEPS)}")
        require(cfg["model"].get(k) in (None, 0, "0"), k, cfg["model"].get(k),
                f"not set in the model table: the tolerance study sweeps it (use {SWEEPS[k]})")
    return list(dict.fromkeys(kinds))


def _spreads(cfg: dict, kind: str, spec) -> list[tuple[str, float]]:
    """(text, S in units of J, or a fraction for hopping_spread) of the kind's spreads, sorted; S = 0 first if given."""
    values = [(str(v), to_fraction(str(v), SWEEPS[kind]) if kind in FRACTIONS else
               to_energy(str(v), SWEEPS[kind], spec.J_hz, Ubar=spec.Ubar)) for v in as_list(cfg, SWEEPS[kind])]
    for text, x in values:
        require(math.isfinite(x) and x >= 0, SWEEPS[kind], text, "spreads >= 0")
    out, seen = [], set()
    for text, x in sorted(values, key=lambda tv: tv[1]):
        if x not in seen:
            seen.add(x)
            out.append((text, x))
    return out


@dataclass(frozen=True)
class TolerancePlan:
    """What the study runs: the error ``kinds``, the ``lengths``, each kind's ``spreads`` [(text, S)] (S in J, or
    a fraction for the FRACTIONS kinds; sorted, each once), ``spec0`` (the first length, no spread: the units of
    the spreads and the study's hardware), the stored ``time_points`` and the odds of the leakage start's
    excited interiors (``leakage_thermal_odds``)."""

    kinds: list
    lengths: list
    spreads: dict
    spec0: object
    time_points: int
    odds: float

    @property
    def n_spreads(self) -> int:
        """The dataset's spread axis: the most spreads of a kind."""
        return max(len(v) for v in self.spreads.values())

    def ensembles(self) -> dict:
        """{(L, kind or None at S = 0, S): [(kind, spread index, text), ...]}: one ensemble per distinct spec, the
        shortest array first (the paper's working point); S = 0 is shared by every kind."""
        points = {}
        for L in self.lengths:
            for kind in self.kinds:
                for pi, (text, x) in enumerate(self.spreads[kind]):
                    key = (L, None if x == 0 else kind, x)
                    points.setdefault(key, []).append((kind, pi, text))
        return points


def plan_of(cfg: dict) -> TolerancePlan:
    """The study's :class:`TolerancePlan` from its config."""
    kinds = _kinds(cfg)
    lengths = parse_lengths(cfg["lengths"])
    T = positive_int(cfg, "time_points", 3)
    odds = Config(cfg).number("leakage_thermal_odds", min=1, default=1.0)
    spec0 = spec_of(cfg, length=lengths[0])
    return TolerancePlan(kinds, lengths, {k: _spreads(cfg, k, spec0) for k in kinds}, spec0, T, odds)
