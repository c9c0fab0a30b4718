"""One finding: a rule's observation about a file or the wheel, and the severities it may have."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from wheelcheck.data import load_table

__all__ = ["Finding", "SEVERITIES", "reaches", "rule_why"]

SEVERITIES = ("info", "warning", "error")


def reaches(findings: "list[Finding]", fail_on: str = "error") -> bool:
    """Does any finding have ``fail_on``'s severity or a higher one? (--fail-on: such a wheel fails.)"""
    floor = SEVERITIES.index(fail_on)
    return any(SEVERITIES.index(f.severity) >= floor for f in findings)


def rule_why(rule: str) -> str:
    """The rules reference's 'why it breaks programs' for ``rule`` ("" for a rule it does not list)."""
    return next((r["why"] for r in load_table("rules.json")["rules"] if r["id"] == rule), "")


@dataclass(frozen=True)
class Finding:
    """One observation with a stable rule id. Errors make the wheel fail.

    ``message`` says what this file does; ``explanation`` why that breaks programs; ``hint`` the fix: three
    fields, shown on three lines. ``cause`` is what every file with the same problem shares (the RUNPATH
    entry, the missing library, the leaked family): reports group findings by it. ``subject`` is the part of
    ``cause`` that names the thing (``libc10.so``), so groups over the same files can list several in one line.
    """

    rule: str
    severity: str
    file: str | None
    message: str
    hint: str = ""
    symbols: tuple[str, ...] = ()
    limit: str | None = None  # the best tag this finding alone allows
    explanation: str = ""  # default: the rule's 'why' from the rules reference
    cause: str = ""  # default: the message
    subject: str | None = None  # appears verbatim in cause
    count: int = 0  # how many symbols (or entries) it involves, where that measures it

    def __post_init__(self) -> None:
        if not self.cause:
            object.__setattr__(self, "cause", self.message)
        if not self.explanation:
            object.__setattr__(self, "explanation", rule_why(self.rule))

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["symbols"] = list(self.symbols)
        return out
