"""Atomic files: a reader never sees a half-written result, an interrupted write leaves nothing behind."""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_target(path: str | os.PathLike, suffix: str = ".tmp"):
    """Yield a temporary path next to ``path``; on success fsync it and rename it onto ``path``.

    A reader never sees a half-written file, and an interrupted write leaves
    at most a hidden temporary file behind.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=suffix)
    os.close(fd)
    try:
        yield tmp
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_target(path) as tmp, open(tmp, "wb") as fh:
        fh.write(data)
