"""lru-mps: quantum-trajectory simulations of a passive leakage removal unit.

A coding transmon at the end of a disordered transmon array (docs/physics.md).
Units: energies and rates in J, times in 1/J (J/2pi = 5 MHz by default).

The names most notebooks need are available here (imported on first use):

    from lru_mps import ArraySpec, simulate, decay_times, save_netcdf
    spec = ArraySpec.from_user(length=3, reset="dissipation", rate="0.04J", conditions="ideal")
    result = simulate(spec, t_final="1000/J", trajectories=200)
    decay_times(result)["T_star"]

Layers (each imports only from those before it): physics -> engines ->
references (the Lindblad reference) -> mcwf (the trajectory algorithm) -> run
-> analysis -> io -> studies; the command line (lru_mps_cli) sits on top.
"""

from importlib import import_module

__version__ = "0.1.0"

#: public name -> module that defines it
_EXPORTS = {
    "ParameterError": "lru_mps.errors",
    "ArraySpec": "lru_mps.physics.model",
    "Conditions": "lru_mps.physics.conditions",
    "Realization": "lru_mps.physics.model",
    "Reset": "lru_mps.physics.conditions",
    "simulate": "lru_mps.run.simulate",
    "SimulationResult": "lru_mps.run.result",
    "decay_times": "lru_mps.analysis.decay",
    "leakage_lifetimes": "lru_mps.analysis.lifetimes",
    "mean_leakage_cycles": "lru_mps.analysis.qec",
    "qubit_rates": "lru_mps.analysis.rates",
    "fit_localization_length": "lru_mps.analysis.localization",
    "asymptotic_localization_length": "lru_mps.analysis.localization",
    "to_dataset": "lru_mps.io.datasets",
    "save_netcdf": "lru_mps.io.datasets",
    "load_dataset": "lru_mps.io.datasets",
    "run_study": "lru_mps.studies",
    "StudyContext": "lru_mps.studies",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'lru_mps' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_EXPORTS))
