"""numba's on-disk cache across files (lru_mps/engines/common/numba_cache.py): every compiled call from one file
into another is declared, and a declared callee that is newer than its caller makes the caller recompile."""

import importlib
import os
import pkgutil

import numba
from numba.core.caching import NullCache
from numba.core.registry import CPUDispatcher

import lru_mps
from lru_mps.engines.common import numba_cache


def _cached_kernels():
    """(module file, kernel name, dispatcher) of every cached numba kernel defined in lru_mps."""
    for info in pkgutil.walk_packages(lru_mps.__path__, "lru_mps."):
        mod = importlib.import_module(info.name)
        for name, obj in vars(mod).items():
            if isinstance(obj, CPUDispatcher) and obj.py_func.__module__ == mod.__name__ \
                    and not isinstance(obj._cache, NullCache):
                yield os.path.realpath(mod.__file__), name, obj


def test_every_compiled_call_across_files_is_declared():
    kernels = list(_cached_kernels())
    assert len(kernels) > 20  # the TEBD kernels, the block SVD, the sector engine's Chebyshev, the loop's
    crossings = set()
    for own, name, kern in kernels:
        for ref in kern.py_func.__code__.co_names:
            callee = kern.py_func.__globals__.get(ref)
            if isinstance(callee, numba.core.dispatcher.Dispatcher):
                where = os.path.realpath(callee.py_func.__code__.co_filename)
                if where != own:
                    crossings.add((own, where))
                    assert where in numba_cache.DEPENDENCIES.get(own, ()), (
                        f"{name} ({own}) calls {ref} of {where}: declare it with numba_cache.depends_on")
    # the one crossing today: the TEBD sweeps call the block SVD
    assert any(a.endswith("kernels.py") and b.endswith("svd.py") for a, b in crossings), crossings


def test_a_newer_callee_makes_the_caller_newer(tmp_path):
    caller, callee = tmp_path / "caller.py", tmp_path / "callee.py"
    caller.write_text("x = 1\n")
    callee.write_text("y = 2\n")
    os.utime(caller, ns=(1_000_000_000, 1_000_000_000))
    os.utime(callee, ns=(2_000_000_000, 2_000_000_000))
    numba_cache.depends_on(str(caller), str(callee))
    assert caller.stat().st_mtime_ns == 2_000_000_000  # numba's stamp of the caller changed: it recompiles
    numba_cache.depends_on(str(caller), str(callee))
    assert caller.stat().st_mtime_ns == 2_000_000_000
    os.utime(caller, ns=(3_000_000_000, 3_000_000_000))  # an edit of the caller alone: left alone
    numba_cache.depends_on(str(caller), str(callee))
    assert caller.stat().st_mtime_ns == 3_000_000_000
    numba_cache.DEPENDENCIES.pop(os.path.realpath(caller))
