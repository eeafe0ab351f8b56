"""A run that ends early, told in one line: a signal (Ctrl-C, SIGTERM) or a worker process that died.

Both keep the blocks of trajectories that finished (written as each one
ends), so the line says where they are and that the same command, rerun,
resumes from them; or, where the run stores nothing, how to keep them.
"""

from __future__ import annotations

import signal

import click

from lru_mps.errors import WorkerLost, stop_requested


def is_stop(err: BaseException) -> bool:
    """Whether ``err`` ends the run as a stop: a signal's (or what it raised on its way, e.g. numba's SystemError
    around it: a stop was requested) or a dead worker's."""
    return isinstance(err, (KeyboardInterrupt, WorkerLost)) or stop_requested() is not None


def stopped(err: BaseException, kept=None, unkept_hint: str | None = None) -> click.ClickException:
    """The one-line error that ends the command for a stop ``err`` (:func:`is_stop`).

    ``kept``: where the command keeps finished blocks (used where ``err`` does
    not name it: a study's signal between two of its runs); ``unkept_hint``:
    the command's one run stores nothing (`simulate` without --out): what would
    keep them.  Exit status 128 + the signal's number for a signal (130 for
    Ctrl-C, 143 for SIGTERM), 1 for a dead worker.
    """
    if isinstance(err, WorkerLost) and stop_requested() is None:
        text, code = f"a worker process died ({err.cause})", 1
    else:
        name = stop_requested() or getattr(err, "signal", "SIGINT")
        text, code = f"interrupted by {name}", 128 + int(signal.Signals[name])
    done, total = getattr(err, "done", None), getattr(err, "total", None)
    folder = getattr(err, "kept", None) or kept
    if done == 0 and (unkept_hint is not None or folder is None):  # the command's one run: nothing to keep yet
        return _error(f"{text} before any of its {total} blocks of trajectories finished", code)
    if done is not None:
        text += f" after {done} of {total} blocks of trajectories"
    if folder is not None:
        text += f"; the finished blocks are kept in {folder}: rerun the same command to resume from them"
    elif unkept_hint:
        text += f"; {unkept_hint}"
    return _error(text, code)


def _error(text: str, code: int) -> click.ClickException:
    """The error; and the interpreter's last collection of every object (seconds after a large run) skipped."""
    import gc

    gc.freeze()
    out = click.ClickException(text)
    out.exit_code = code
    return out
