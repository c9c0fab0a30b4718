"""The report of `wheelcheck conflicts`: findings per process (rendered by report/conflicts_json.py and
report/conflicts_text.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from wheelcheck.audit.findings import SEVERITIES, rule_why

__all__ = ["Provider", "ConflictFinding", "ProcessReport", "ConflictReport", "CONFLICTS_SCHEMA_VERSION"]

CONFLICTS_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Provider:
    """A file of a distribution that takes part in a finding."""

    distribution: str
    version: str
    file: str  # member path (wheel) or path relative to site-packages (environment)
    count: int = 0  # how many of the finding's symbols it defines (or needs), where that applies

    def to_dict(self) -> dict[str, Any]:
        return {"distribution": self.distribution, "version": self.version, "file": self.file, "count": self.count}


@dataclass(frozen=True)
class ConflictFinding:
    rule: str
    severity: str
    message: str
    hint: str = ""
    providers: tuple[Provider, ...] = ()
    family: str | None = None  # data/families.json id (or runtimes.json id for runtime copies)
    hazard: str | None = None  # strong or vague (conflict-symbols)
    liveness: str | None = None  # unique, global or latent (conflict-symbols)
    count: int = 0  # symbols (or copies) involved
    symbols: tuple[str, ...] = ()  # examples
    names: tuple[str, ...] = ()  # every symbol involved, sorted (conflict-symbols, conflict-missing-symbols)
    explanation: str = ""  # why it breaks programs; default: the rule's 'why' from the rules reference

    def __post_init__(self) -> None:
        if not self.explanation:
            object.__setattr__(self, "explanation", rule_why(self.rule))

    @property
    def rank(self) -> tuple:
        """Sort key: most severe first, then strong before vague, known families first, most symbols."""
        return (-SEVERITIES.index(self.severity), self.hazard != "strong", self.family is None, -self.count,
                self.rule, self.message)

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "severity": self.severity, "message": self.message,
                "explanation": self.explanation, "hint": self.hint,
                "family": self.family, "hazard": self.hazard, "liveness": self.liveness, "count": self.count,
                "symbols": list(self.symbols), "names": list(self.names),
                "providers": [p.to_dict() for p in self.providers]}


@dataclass
class ProcessReport:
    label: str
    arch: str | None
    libc: str | None
    interpreter: str | None
    distributions: list[dict[str, Any]]  # {name, version, source, elf_files, exported_symbols}
    findings: list[ConflictFinding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    stats: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "arch": self.arch, "libc": self.libc, "interpreter": self.interpreter,
                "distributions": self.distributions, "notes": self.notes, "stats": self.stats,
                "findings": [f.to_dict() for f in self.findings]}


@dataclass
class ConflictReport:
    mode: str  # wheels or environment
    sources: list[str]  # the wheels, or the site-packages directories read
    processes: list[ProcessReport]
    timings: dict[str, float] = field(default_factory=dict)  # seconds: read, analyse
    fail_on: str = "error"  # the lowest finding severity that makes the run fail (exit 1)

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(reversed(SEVERITIES), 0)
        for proc in self.processes:
            for finding in proc.findings:
                out[finding.severity] += 1
        return out

    @property
    def exit_code(self) -> int:
        """1 when a finding is at or above ``fail_on``, else 0."""
        floor = SEVERITIES.index(self.fail_on)
        return int(any(SEVERITIES.index(f.severity) >= floor for p in self.processes for f in p.findings))

    def to_dict(self) -> dict[str, Any]:
        from wheelcheck._version import __version__

        return {"schema_version": CONFLICTS_SCHEMA_VERSION, "tool": {"name": "wheelcheck", "version": __version__},
                "mode": self.mode, "sources": self.sources, "fail_on": self.fail_on, "counts": self.counts(),
                "timings": {k: round(v, 3) for k, v in self.timings.items()},
                "processes": [p.to_dict() for p in self.processes]}
