"""The one error type lru-mps raises for bad input, and what ends a run before its end.

A run ends early by a signal (Ctrl-C, SIGTERM: :class:`Interrupted`) or by
the death of a worker process (:class:`WorkerLost`); either way the blocks
that finished are on disk where the run stores them, and a rerun resumes
from them.  A signal's exception can be lost: one raised while numba
compiles lands in an llvmlite callback, which prints it and carries on.  So
the handler (:func:`stop_on_signal`) also records the request, and the
trajectory loop and the pools look at it (:func:`check_stop`) between their
steps: a run stops within a fraction of a second of the signal either way.
An exception raised while a stop is requested is taken for the stop
(:func:`stop_requested`): numba turns one raised inside its own callbacks
into a SystemError.  A stretch that a signal must not cut in two (a
finished block's file and its count) runs under :func:`stop_deferred`: a
signal within it is raised at its end.
"""

from __future__ import annotations

from contextlib import contextmanager


class ParameterError(ValueError):
    """A parameter is outside its allowed range or cannot be understood.

    The message always names the parameter, the value given and what is
    allowed, so that the CLI can print it as is.
    """

    def __init__(self, name: str, value, allowed: str, hint: str | None = None):
        self.name = name
        self.value = value
        self.allowed = allowed
        self.hint = hint
        msg = f"{name}={value!r} is not allowed: {allowed}"
        if hint:
            msg += f" ({hint})"
        super().__init__(msg)

    def __reduce__(self):
        """Rebuilt from its four fields, so that a refusal raised in a worker process (a process pool's, a Dask
        worker's) reaches the parent as the same error (an exception pickles as ``cls(*args)``, here the message
        alone, which ``__init__`` does not take)."""
        return type(self), (self.name, self.value, self.allowed, self.hint)


class ParameterWarning(UserWarning):
    """A parameter that is possible but odd (e.g. a device's T1 under 1 us): the message names it; the CLI prints
    it as one line ``Warning: ...``."""


def require(condition: bool, name: str, value, allowed: str, hint: str | None = None) -> None:
    """Raise :class:`ParameterError` unless ``condition`` holds."""
    if not condition:
        raise ParameterError(name, value, allowed, hint)


class Interrupted(KeyboardInterrupt):
    """A run stopped by a signal (``signal``: 'SIGINT' for Ctrl-C, 'SIGTERM').

    Raised by :func:`stop_on_signal` (and :func:`check_stop`); a run of blocks
    re-raises it with what it had done: ``done`` of ``total`` blocks
    finished, stored in the folder ``kept`` (None: nothing stored).  A
    KeyboardInterrupt, so that whatever stops on Ctrl-C stops on it.
    """

    def __init__(self, signal: str = "SIGINT", done: int | None = None, total: int | None = None,
                 kept: str | None = None):
        self.signal, self.done, self.total, self.kept = signal, done, total, kept
        super().__init__(signal, done, total, kept)

    def __str__(self) -> str:
        return f"interrupted by {self.signal}" + _progress(self.done, self.total, self.kept)


class WorkerLost(RuntimeError):
    """A worker process died before its work was done (``cause``: e.g. 'killed by SIGKILL').

    The process pool raises it; a run of blocks re-raises it with what it had
    done, as :class:`Interrupted` does.
    """

    def __init__(self, cause: str, done: int | None = None, total: int | None = None, kept: str | None = None):
        self.cause, self.done, self.total, self.kept = cause, done, total, kept
        super().__init__(cause, done, total, kept)

    def __str__(self) -> str:
        return f"a worker process died ({self.cause})" + _progress(self.done, self.total, self.kept)


def _progress(done, total, kept) -> str:
    text = "" if done is None else f" after {done} of {total} blocks"
    if kept is not None:
        text += f"; the finished blocks are kept in {kept}, and a rerun resumes from them"
    return text


#: the signal that asked the running work to stop (its name), until the run has stopped
_stop_request: str | None = None

#: how many :func:`stop_deferred` stretches are open (a signal within one is raised at the end of the outermost)
_deferring = 0


def stop_on_signal(signum, frame=None) -> None:
    """A signal handler (SIGINT, SIGTERM): record the request to stop, and raise :class:`Interrupted` now (at the
    end of the :func:`stop_deferred` stretch it lands in)."""
    global _stop_request
    import signal

    _stop_request = signal.Signals(signum).name
    if not _deferring:
        raise Interrupted(_stop_request)


@contextmanager
def stop_deferred():
    """``with stop_deferred():`` a stretch that a signal does not cut in two: one that lands in it is recorded
    and raised as :class:`Interrupted` when the stretch ends (e.g. a finished block's file and the count of the
    finished blocks, which the stop's message reports: both or neither)."""
    global _deferring
    _deferring += 1
    try:
        yield
    finally:
        _deferring -= 1
    if not _deferring:
        check_stop()


def stop_requested() -> str | None:
    """The name of the signal that asked to stop (None: none did).  Whatever a run raises after it (a
    SystemError of numba's, which a KeyboardInterrupt raised inside its callback becomes) is that stop."""
    return _stop_request


def check_stop() -> None:
    """Raise :class:`Interrupted` if a signal asked to stop (its exception may have been lost on the way)."""
    if _stop_request is not None:
        raise Interrupted(_stop_request)


def clear_stop() -> None:
    """Forget a request to stop (a run has stopped on it: the next one in this process starts afresh)."""
    global _stop_request
    _stop_request = None
