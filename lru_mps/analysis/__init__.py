"""Analysis of results: exponential fits, decay times, per-realization qubit rates and the localization length."""
