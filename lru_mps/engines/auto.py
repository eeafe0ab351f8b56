"""The per-trajectory engine policy: the fixed-N sector engine where a trajectory's sectors are small, MPS otherwise.

Every channel lowers or keeps the excitation number N and H_eff conserves
it, so a trajectory never leaves the sectors N <= N0 of its sampled initial
product state (N0 = the sum of the largest level on each site: 2 for |2> on
the qubit, 1 for the coherence state, plus the thermal levels).  The sector
engine holds it exactly; its cost grows with the dimension of the N0 sector
(the coefficient of x^N0 in (1 + x + x^2)^L), the MPS engine's does not.  So
each trajectory (index, initial state) is given to the sector engine when
that dimension is at most ``sector_max_dim`` and to the MPS engine otherwise:
the choice depends on the trajectory's seed (through its thermal sample) and
the settings only, never on the batch, the worker or the run it is part of.

With a thermal bath (:mod:`lru_mps.physics.bath`) heating raises N, so a
trajectory may climb to any sector N >= N0; the sector engine follows it
there (a raising jump opens the next sector), and the choice is made on the
largest sector it could reach, N = max(N0, L) (the dimension peaks at
N = L): such trajectories go to the sector engine where that sector has at
most ``sector_max_dim`` states (L <= 14 at the default), to MPS from the
start otherwise.  (A hand-over to MPS at the first sector that would
outgrow the sector engine is not implemented; docs/physics.md §5.1.)
"""

from __future__ import annotations

from ..errors import require
from .mps.engine import MPSEngine
from .sector.engine import EIG_MAX_DIM, SectorEngine, sector_dimension

#: above this many states in a trajectory's largest sector the MPS engine takes it
SECTOR_AUTO_MAX_DIM = 1_000_000

#: the diagnostics every trajectory of a per-trajectory run reports (the same keys for both engines)
DIAGNOSTIC_KEYS = ("engine_mps", "sector_dimension", "discarded_weight", "norm_error", "max_bond")


class PerTrajectoryEngine:
    """`--engine auto` at T > 0 on long arrays: sector or MPS, chosen per trajectory (module docstring).

    An :class:`~lru_mps.engines.protocol.Engine` without ``prepare``: the
    propagator comes from the engine :meth:`engine` names for a trajectory.
    """

    name = "auto"
    max_length = min(SectorEngine.max_length, MPSEngine.max_length)

    def __init__(self, sector_max_dim: int = SECTOR_AUTO_MAX_DIM, eig_max_dim: int = EIG_MAX_DIM, large: str = "chebyshev",
                 **mps_options):
        require(int(sector_max_dim) == sector_max_dim and sector_max_dim >= 1, "sector_max_dim", sector_max_dim,
                "an integer >= 1 (states of the largest sector a trajectory may have on the sector engine)")
        self.sector_max_dim = int(sector_max_dim)
        self.sector = SectorEngine(eig_max_dim=eig_max_dim, large=large)
        self.mps = MPSEngine(**mps_options)

    def batch_store(self) -> None:
        """None: each trajectory runs on its chosen engine's ordinary states."""
        return None

    def choose(self, L: int, nmax: int, grows: bool = False) -> str:
        """'sector' or 'mps' for a trajectory on L sites whose initial state reaches the sector N = nmax (``grows``:
        events may raise N, a thermal bath's heating: the largest sector from N = nmax up, N = max(nmax, L))."""
        N = max(nmax, L) if grows else nmax
        return "sector" if sector_dimension(L, N) <= self.sector_max_dim else "mps"

    def engine(self, name: str):
        return self.sector if name == "sector" else self.mps

    def diagnostics(self, name: str, L: int, nmax: int, diag: dict) -> dict:
        """A trajectory's diagnostics on the common keys (:data:`DIAGNOSTIC_KEYS`; 0 where an engine has none)."""
        out = {k: float(diag.get(k, 0.0)) for k in DIAGNOSTIC_KEYS}
        out["engine_mps"] = float(name == "mps")
        out["sector_dimension"] = float(sector_dimension(L, nmax))
        return out

    def check_diagnostics(self, diag: dict, label: str) -> None:
        """The MPS engine's checks (truncation, norm) on the trajectories it ran; the sector engine is exact."""
        if diag.get("engine_mps", 0.0):
            self.mps.check_diagnostics(diag, label)

    def describe(self) -> dict:
        return {"engine": self.name, "sector_max_dim": self.sector_max_dim, "sector": self.sector.describe(),
                "mps": self.mps.describe()}
