"""The studies' default configurations (``<name>.toml``) and the analysis notebook.

Installed as the package ``lru_mps_studies`` so that an installed lru-mps
reads the same TOML files as a checkout: they are the single source of every
study's defaults.  Copy one, edit it and pass it with ``--config``.
"""
