"""Errors for bad input: each carries one line that names the file and what is wrong."""

from __future__ import annotations

__all__ = ["WheelcheckError", "BadWheelError", "BadElfError", "ElfFormatError", "PolicyError", "UsageError",
           "RepairError", "SymbolEditError", "OutputError"]


class WheelcheckError(Exception):
    """Base of every error wheelcheck reports to the user as one line."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


class BadWheelError(WheelcheckError):
    """The wheel is not a safe, readable zip or its name is not a wheel name."""


class BadElfError(WheelcheckError):
    """A member that must be an ELF file is not one or cannot be parsed."""


class ElfFormatError(BadElfError):
    """Bytes that do not parse as the ELF structure they should be, raised where they are read.

    The table readers see bytes, not files; ``elf.elf_summary.summarize`` catches this and raises a
    BadElfError that names the file.
    """

    def __init__(self, problem: str) -> None:
        super().__init__("ELF data", problem)


class PolicyError(WheelcheckError):
    """A policy file cannot be read or does not describe a policy."""


class UsageError(WheelcheckError):
    """A command-line value is not usable (unknown platform tag, no wheels found)."""


class RepairError(WheelcheckError):
    """A repair cannot be done: a needed library is not on this host, an ELF edit failed."""


class SymbolEditError(RepairError):
    """LIEF could not read or write a file whose symbols repair --hide-symbols edits."""


class OutputError(WheelcheckError):
    """The repaired wheel cannot be written (the output directory is missing or not writable, disk full)."""
