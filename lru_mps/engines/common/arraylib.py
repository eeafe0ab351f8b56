"""The array library of the batched engines: numpy (reference), torch or cupy (GPU).

``backend`` strings: ``numpy``; ``torch`` (CUDA when available, else CPU),
``torch:cpu``, ``torch:cuda``; ``cupy``.  Array functions are resolved once
through autoray (``get_lib_fn``); array creation and index arrays go through
:class:`ArrayLib` so that they land on the backend's device.  Results come
back to the host as numpy arrays (:meth:`ArrayLib.host`).
"""

from __future__ import annotations

import importlib

import numpy as np
from autoray import get_lib_fn, to_numpy

from ...errors import ParameterError

BACKENDS = ("numpy", "torch", "torch:cpu", "torch:cuda", "cupy")


class ArrayLib:
    """Array creation, transfers and autoray-resolved functions of one backend."""

    def __init__(self, backend: str = "numpy"):
        if backend not in BACKENDS:
            raise ParameterError("backend", backend, f"one of {', '.join(BACKENDS)}")
        name, _, device = backend.partition(":")
        try:
            self.mod = importlib.import_module(name)
        except ImportError:
            raise ParameterError("backend", backend, "an installed array library",
                                 f"pip install {name} (GPU runs need its CUDA build)") from None
        self.backend = backend
        self.name = name
        self.numpy = name == "numpy"
        self.device = None
        if name == "torch":
            if not device:
                device = "cuda" if self.mod.cuda.is_available() else "cpu"
            if device == "cuda" and not self.mod.cuda.is_available():
                raise ParameterError("backend", backend, "torch:cuda needs a CUDA GPU", "use torch:cpu or numpy")
            self.device = self.mod.device(device)
        for fn in ("matmul", "einsum", "exp", "conj", "real", "imag", "sum", "zeros_like", "multiply"):
            setattr(self, fn, get_lib_fn(name, fn))
        self.svd = get_lib_fn(name, "linalg.svd")
        self.transpose = get_lib_fn(name, "transpose")
        self.stack = get_lib_fn(name, "stack")

    def asarray(self, x, dtype: str | None = None):
        """x (numpy or a Python sequence) as an array of this backend, on its device."""
        a = np.asarray(x, dtype=dtype)
        if self.numpy:
            return a
        if self.name == "torch":
            return self.mod.as_tensor(a, device=self.device)
        return self.mod.asarray(a)

    def zeros(self, shape, dtype: str = "complex128"):
        if self.numpy:
            return np.zeros(shape, dtype=dtype)
        if self.name == "torch":
            return self.mod.zeros(tuple(shape), dtype=getattr(self.mod, dtype), device=self.device)
        return self.mod.zeros(shape, dtype=dtype)

    def index(self, idx):
        """An integer index array for this backend."""
        return idx if self.numpy else self.asarray(np.asarray(idx, dtype=np.int64))

    def host(self, x) -> np.ndarray:
        """x as a numpy array on the host."""
        return np.asarray(x) if self.numpy else to_numpy(x)

    def synchronize(self) -> None:
        """Wait for queued device work (for timing)."""
        if self.name == "torch" and self.device.type == "cuda":
            self.mod.cuda.synchronize()
        elif self.name == "cupy":
            self.mod.cuda.Device().synchronize()
