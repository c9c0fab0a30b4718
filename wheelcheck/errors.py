"""Errors for bad input: each carries one line that names the file and what is wrong."""

from __future__ import annotations

__all__ = ["WheelcheckError", "BadWheelError", "BadElfError", "PolicyError", "UsageError", "RepairError",
           "OutputError"]


class WheelcheckError(Exception):
    """Base of every error wheelcheck reports to the user as one line."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem

    def __reduce__(self):  # raised in a worker process, raised again in this one
        return type(self), (self.path, self.problem)


class BadWheelError(WheelcheckError):
    """The wheel is not a safe, readable zip or its name is not a wheel name."""


class BadElfError(WheelcheckError):
    """A member that must be an ELF file is not one or cannot be parsed."""


class PolicyError(WheelcheckError):
    """A policy file cannot be read or does not describe a policy."""


class UsageError(WheelcheckError):
    """A command-line value is not usable (unknown platform tag, no wheels found)."""


class RepairError(WheelcheckError):
    """A repair cannot be done: a needed library is not on this host, an ELF edit failed."""


class OutputError(WheelcheckError):
    """The repaired wheel cannot be written (the output directory is missing or not writable, disk full)."""
