"""Errors for bad input: each carries one line that names the file and what is wrong."""

from __future__ import annotations

import re

__all__ = ["WheelcheckError", "BadWheelError", "BadElfError", "ElfFormatError", "PolicyError", "UsageError",
           "RepairError", "SymbolEditError", "OutputError", "one_line"]

# Everything str.splitlines() breaks on, and the other control characters a terminal acts on
_LINE_BREAKING = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def one_line(text: str) -> str:
    r"""``text`` with control characters and line separators escaped (``\n``, ``\x1b``, ``\u2028``).

    Member names, paths and soname strings come from the input: a newline in one must not split an
    error in two, nor an escape sequence reach the terminal. The reports escape what they quote with it too
    (report/escaping.py).
    """
    return _LINE_BREAKING.sub(lambda m: repr(m.group())[1:-1], text)


class WheelcheckError(Exception):
    """Base of every error wheelcheck reports to the user as one line."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(one_line(f"{path}: {problem}"))
        self.path = path
        self.problem = problem

    def __reduce__(self):
        # Exception pickles as cls(*self.args), which is one argument here: errors raised in a worker
        # process must come back whole, not as a BrokenProcessPool
        return type(self), (self.path, self.problem)


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

    def __reduce__(self):
        return type(self), (self.problem,)


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
