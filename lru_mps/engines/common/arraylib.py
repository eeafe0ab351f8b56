"""The array library of the batched engines: numpy (reference), torch or cupy (GPU).

``backend`` strings: ``numpy``; ``torch`` (CUDA when available, else CPU),
``torch:cpu``, ``torch:cuda``; ``cupy``.  Array functions are resolved once
through autoray (``get_lib_fn``); array creation and index arrays go through
:class:`ArrayLib` so that they land on the backend's device.  Results come
back to the host as numpy arrays (:meth:`ArrayLib.host`).
"""

from __future__ import annotations

import importlib
import sys
from contextlib import contextmanager

import numpy as np
from autoray import get_lib_fn, to_numpy

from ...errors import ParameterError

BACKENDS = ("numpy", "torch", "torch:cpu", "torch:cuda", "cupy")


@contextmanager
def one_cpu_thread(backend: str = "numpy"):
    """One CPU thread for the array work inside: the BLAS libraries' (threadpoolctl) and, where torch is loaded
    (or ``backend`` is one of torch's: loaded here), torch's own intra-op pool (``torch.set_num_threads``), both
    put back on exit.  The matrices of one row are
    small: threads spinning on a loaded machine cost far more than they give (measured: an L = 6 torch:cpu run
    103 s with torch's default threads against 1.6 s with one)."""
    from threadpoolctl import threadpool_limits

    if backend.startswith("torch"):
        importlib.import_module("torch")
    torch = sys.modules.get("torch")
    before = torch.get_num_threads() if torch is not None else None
    if torch is not None:
        torch.set_num_threads(1)
    try:
        with threadpool_limits(limits=1, user_api="blas"):
            yield
    finally:
        if torch is not None:
            torch.set_num_threads(before)


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
        self.copy = get_lib_fn(name, "copy")  # an independent copy on the same device

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

    def csr(self, indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, shape: tuple[int, int]):
        """A real sparse CSR matrix of this backend on its device (scipy.sparse, torch.sparse_csr,
        cupyx.scipy.sparse), from host arrays; ``A @ x`` is then its product with a dense (n, k) array."""
        if self.numpy:
            import scipy.sparse as sp

            return sp.csr_matrix((data, indices, indptr), shape=shape)
        wide = len(data) >= 2**31 or shape[0] >= 2**31
        idx = np.int64 if wide else np.int32
        if self.name == "torch":
            import warnings

            with warnings.catch_warnings():  # (torch: "sparse CSR support is in beta")
                warnings.simplefilter("ignore", UserWarning)
                return self.mod.sparse_csr_tensor(self.asarray(np.asarray(indptr, dtype=idx)),
                                                  self.asarray(np.asarray(indices, dtype=idx)),
                                                  self.asarray(np.asarray(data, dtype=np.float64)), size=shape)
        import cupyx.scipy.sparse as csp

        return csp.csr_matrix((self.asarray(np.asarray(data, dtype=np.float64)),
                               self.asarray(np.asarray(indices, dtype=idx)),
                               self.asarray(np.asarray(indptr, dtype=idx))), shape=shape)

    def real_view(self, z):
        """The float64 (n, 2k) view of a C-contiguous complex128 (n, k) array (real and imaginary parts side by
        side, column by column): the same memory, for a real sparse product of a complex state."""
        if self.name == "torch":
            return self.mod.view_as_real(z).reshape(z.shape[0], 2 * z.shape[1])
        return z.view(np.float64)

    def complex_view(self, x):
        """The complex128 (n, k) view of a float64 (n, 2k) array laid out as :meth:`real_view` makes it (a copy
        first where the array is not C-contiguous)."""
        if self.name == "torch":
            return self.mod.view_as_complex(x.contiguous().reshape(x.shape[0], x.shape[1] // 2, 2))
        return self.mod.ascontiguousarray(x).view(np.complex128)

    def synchronize(self) -> None:
        """Wait for queued device work (for timing)."""
        if self.name == "torch" and self.device.type == "cuda":
            self.mod.cuda.synchronize()
        elif self.name == "cupy":
            self.mod.cuda.Device().synchronize()
