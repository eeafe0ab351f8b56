"""References the engines are checked against, not used by a simulation run.

``lindblad``: the density-matrix (Lindblad) reference for L <= 4, periodic
feedback averaged over its phase.  Public API: ``lindblad_observables(spec,
realization, init, times)``.
"""
