"""Checks beyond the verdict: each takes the judged wheel and returns findings.

The verdict (symbol versions, external libraries, blacklist, ISA) decides the tag; these checks look at
what breaks real programs regardless of the tag. Each is a pure function of a CheckContext.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from wheelcheck.analysis.model import WheelModel
from wheelcheck.analysis.resolve import Resolution
from wheelcheck.elf.model import ElfInfo
from wheelcheck.policy.model import Policy
from wheelcheck.report.model import Finding

__all__ = ["CheckContext", "Check", "CHECKS"]


@dataclass(frozen=True)
class CheckContext:
    model: WheelModel
    elves: list[ElfInfo]  # the ELF files judged (right arch and libc)
    resolution: Resolution
    arch: str
    libc: str
    verdict: Policy  # the policy the wheel deserves
    target: Policy | None  # the policy it must meet (claimed or --plat)
    options: object  # the AuditOptions of this audit


Check = Callable[[CheckContext], Iterable[Finding]]

# The checks run on every audit, in order; a later issue adds to this tuple.
CHECKS: tuple[Check, ...] = ()
