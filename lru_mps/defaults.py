"""Every default of lru-mps, in one place.

The command line (``lru-mps simulate``, ``lru-mps study``), the studies, the
Python API (:meth:`lru_mps.physics.model.ArraySpec.from_user`,
:func:`lru_mps.run.simulate.simulate`, the engines) and the notebook all read
their defaults from here, so the same physics gives the same numbers whatever
the entry point.  A study's own settings (lengths, rates, realizations, ...)
live in its TOML file in ``studies/`` (installed as ``lru_mps_studies``);
model options a study file does not set take the values of :data:`MODEL`.

Values are written as a user types them (units as in :mod:`lru_mps.physics.units`;
a bare number means units of J for energies and rates, 1/J for times).
"""

from __future__ import annotations

#: The model (docs/physics.md §1-§5): the paper's parameters, at its working
#: point (L = 3, periodic feedback at 0.03 J) under realistic conditions.
MODEL = {
    "length": 3,
    "hopping": "5MHz",          # J/2pi; sets the unit of energies (J) and times (1/J)
    "anharmonicity": "250MHz",  # Ubar/2pi = 50 J
    "frequency": "7.5GHz",      # wbar/2pi = 1500 J
    "disorder": "100MHz",       # W/2pi = 20 J, full width of the box distribution
    "reset": "periodic",
    "rate": "0.03J",
    "conditions": "realistic",
    # fabrication and tuning errors (docs/physics.md §3.1), off by default (off = the paper's recipe, bit for bit)
    "e2_spread": "0",           # std of the leakage levels' residual detuning delta_l (E2_l = E2 + delta_l)
    "frequency_noise": "0",     # std of a quasi-static offset s_l of each site's frequency (w_l and E2_l/2 shift)
    "disorder_pattern": "box",  # box | gaussian | quasiperiodic | alternating
    "hopping_spread": "0",      # relative std X of the per-bond couplings, J_l = J (1 + eps_l), eps_l ~ N(0, X)
    # the engineered nominal couplings P_l (mean 1, docs/physics.md §3.3): uniform (the paper, bit for bit),
    # transfer, linear:A:B, or a list of L - 1 relative couplings
    "hopping_profile": "uniform",
    # the feedback measurement's readout at the reset site (docs/physics.md §4.4), off by default (off = bit for bit):
    # symmetric error EPS (p(n|m) = 1 - EPS for n = m, EPS/2 for n != m), or a confusion matrix P[m][n] = p(n|m)
    "readout_error": 0.0,
    "readout_confusion": None,
    # a thermal bath on every site (docs/physics.md §5.1), off by default (off = bit for bit): decay
    # sqrt(gamma (1 + nbar)) a and heating sqrt(gamma nbar) a^dag, gamma = 1/T1, nbar at the qubit frequency
    "thermal_bath": False,
    # the coupling graph (docs/physics.md §3.4): chain (the paper, bit for bit), ladder:N or grid:RxC; a graph fixes L.
    # The start (qubit) and reset sites: a 1-based site number in the layout's order or a 1-based coordinate "r,c";
    # None = the layout's first and last site
    "geometry": "chain",
    "start_site": None,
    "reset_site": None,
}

#: The paper's hardware figures, applied by ``conditions = "realistic"`` (docs/physics.md §5).
REALISTIC = {
    "t1": "16.7us",             # T1q of every transmon
    "tphi": "10us",             # pure dephasing time Tphi (T2q = 1/(1/2T1q + 1/Tphi) = 7.7 us)
    "temperature": "100mK",     # of the thermal initial state of sites 2..L
}

#: One ensemble (``lru-mps simulate``, :func:`lru_mps.run.simulate.simulate`).
RUN = {
    "init": "all",
    "t_final": "1000/J",
    "time_points": 201,
    "trajectories": 500,
    "seed": 0,
    "engine": "auto",
    "estimator": "auto",
    "backend": "numpy",
    # thinning of the thermal sample's hot tail (rows with >= HOT_TAIL_FROM thermal excitations run with
    # probability 1/hot_tail and weight hot_tail; 1 = off): lru_mps.run.thermal_sample.thin_hot_tail
    "hot_tail": 1.0,
    # the leakage start's rows with a thermally excited array are drawn with this many times their natural odds
    # (weights keep every mean exact; 1 = the natural Gibbs sample): lru_mps.run.thermal_sample.stratified_levels
    "leakage_thermal_odds": 1.0,
    # sampled rows with a sharp excitation number carry the hardware decay clock's survival as a weight instead of
    # sampling the decay times (exact, less variance; False = sample them): lru_mps.mcwf.integrated_decay
    "integrate_decay": False,
    # the thermal start drawn by strata (the interior's configurations, a fixed allocation; the statistics combine
    # the strata; False = one sample): lru_mps.run.thermal_sample.ThermalStrata
    "thermal_strata": False,
}
#: thermal excitations (|2> counts 2) from which a row belongs to the hot tail (the rows that cost most)
HOT_TAIL_FROM = 3

#: The MPS engine: time step (1/J), Trotter order, maximum bond dimension, absolute singular-value cutoff.
#: Order 4 at dt = 0.01/J is the cheapest setting measured to keep the site populations within 1e-4 of the
#: exact engines up to t = 1000/J at L = 3-5 and 12 (BENCHMARKS.md: the accuracy/cost frontier).
MPS = {
    "dt": 0.01,
    "order": 4,
    "max_bond": 64,
    "cutoff": 1e-12,
}
#: Trotter orders the TEBD kernel has (lru_mps/engines/mps/tebd.py): Suzuki 2 and 4, Kahan-Li 6
MPS_ORDERS = (2, 4, 6)
