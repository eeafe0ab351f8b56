"""Package layout (metadata lives in pyproject.toml).

setuptools finds ``lru_mps`` and every subpackage under it, so a new
subpackage can never be left out of a wheel.  Two top-level folders keep the
names the design fixes and install under package names of their own:
``cli/`` (the click application, command ``lru-mps``) as ``lru_mps_cli``, and
``studies/`` (the studies' default TOML configurations, read by the program,
and the analysis notebook) as ``lru_mps_studies``.
"""

from setuptools import find_packages, setup

setup(
    packages=find_packages(include=["lru_mps", "lru_mps.*"]) + ["lru_mps_cli", "lru_mps_studies"],
    package_dir={"lru_mps_cli": "cli", "lru_mps_studies": "studies"},
    package_data={"lru_mps_studies": ["*.toml", "*.ipynb"]},
)
