"""Running ensembles: settings, seeding, blocks of trajectories, executors (processes, Dask), the resumable block cache."""
