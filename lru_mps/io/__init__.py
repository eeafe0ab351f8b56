"""Output: atomic files, xarray/NetCDF datasets and JSON, text summaries."""
