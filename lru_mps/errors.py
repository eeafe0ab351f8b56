"""The one error type lru-mps raises for bad input."""

from __future__ import annotations


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


class ParameterWarning(UserWarning):
    """A parameter that is possible but odd (e.g. a device's T1 under 1 us): the message names it; the CLI prints
    it as one line ``Warning: ...``."""


def require(condition: bool, name: str, value, allowed: str, hint: str | None = None) -> None:
    """Raise :class:`ParameterError` unless ``condition`` holds."""
    if not condition:
        raise ParameterError(name, value, allowed, hint)
