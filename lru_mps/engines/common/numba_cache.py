"""numba's on-disk cache across files: a compiled kernel that calls a kernel of another file.

numba keys a cached function by the stamp (modification time and size) of
*its own* source file only.  A kernel that calls a compiled function of
another file would therefore keep its old machine code after that file
changes.  :func:`depends_on`, called at the top of the calling module
(before its ``@njit`` decorators read the stamp), makes the calling file at
least as new as the files it calls into, so that an edit of a callee
recompiles its callers too.  Installed, unedited files are never touched
again after the first import.  ``tests/test_numba_cache.py`` checks that
every compiled call across files is declared here.
"""

from __future__ import annotations

import os

#: the source file of each module that calls compiled functions of other files -> those files
DEPENDENCIES: dict[str, tuple[str, ...]] = {}


def depends_on(module_file: str, *callees) -> None:
    """Declare that the compiled kernels of ``module_file`` call ``callees`` (compiled functions, or source files);
    touch ``module_file`` (numba then recompiles its kernels) if a callee's file is newer than it."""
    module_file = os.path.realpath(module_file)
    callees = tuple(dict.fromkeys(os.path.realpath(_source_file(c)) for c in callees))
    DEPENDENCIES[module_file] = callees
    try:
        own = os.stat(module_file).st_mtime_ns
        newest = max(os.stat(f).st_mtime_ns for f in callees)
        if newest > own:
            os.utime(module_file, ns=(newest, newest))
    except OSError:  # a read-only install: nothing there is edited, so nothing can be stale
        pass


def _source_file(callee) -> str:
    """The source file of a compiled function (a numba dispatcher), or the path itself."""
    py_func = getattr(callee, "py_func", None)
    return py_func.__code__.co_filename if py_func is not None else str(callee)
