"""What a hygiene check sees (CheckContext) and what it may report besides findings (Fact)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from wheelcheck.audit.audit_options import AuditOptions
from wheelcheck.wheel.wheel_model import WheelModel
from wheelcheck.wheel.library_resolution import Resolution
from wheelcheck.elf.elf_info import ElfInfo
from wheelcheck.policy.policy_model import Policy

from wheelcheck.audit.file_analyses import FileAnalysis

__all__ = ["CheckContext", "Fact"]


@dataclass(frozen=True)
class CheckContext:
    model: WheelModel
    elves: list[ElfInfo]  # the ELF files judged (right arch and libc)
    resolution: Resolution
    arch: str
    libc: str
    verdict: Policy  # the policy the wheel deserves
    target: Policy | None  # the policy it must meet (claimed or --plat)
    options: AuditOptions
    policies: tuple[Policy, ...] = ()  # every policy judged for this libc and arch, most compatible first
    analyses: Mapping[str, FileAnalysis] = field(default_factory=dict)  # by path: each file's own analysis

    @property
    def policy(self) -> Policy:
        """The policy whose hygiene settings apply: the target when there is one, else the verdict; when
        the verdict is plain linux, the least compatible policy judged (a team policy file's settings
        still apply to a wheel that meets none of its tags)."""
        if self.target is not None:
            return self.target
        if not self.verdict.is_linux:
            return self.verdict
        real = [p for p in self.policies if not p.is_linux]
        return real[-1] if real else self.verdict


class Fact(NamedTuple):
    """A measured value for the report: FileReport.<name> of ``file``, or WheelReport.<name> when None."""

    file: str | None
    name: str
    value: Any

