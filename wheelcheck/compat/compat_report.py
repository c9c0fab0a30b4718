"""The report of `wheelcheck compat`: one answer per pair (a distribution and the ones it loads from),
rendered by report/compat_text.py, compat_json.py and compat_sarif.py."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["CompatFinding", "PairResult", "CompatReport", "VERDICTS", "COMPAT_SCHEMA_VERSION"]

COMPAT_SCHEMA_VERSION = 1
VERDICTS = ("loads", "will-fail", "cannot-tell")
_EXIT = {"loads": 0, "will-fail": 1, "cannot-tell": 2}


@dataclass(frozen=True)
class CompatFinding:
    rule: str
    severity: str  # error, warning, info
    message: str
    hint: str = ""
    file: str | None = None  # the subject's file (install path, site-packages relative)
    effect: str | None = None  # fails (the import fails), unknown (cannot tell), None (does not decide)
    loader_message: str | None = None  # what ld.so (and Python's ImportError) will say, for "fails"
    symbol: str | None = None
    version: str | None = None
    demangled: str | None = None
    library: str | None = None
    nearest: dict[str, Any] | None = None  # {name, version, demangled, distribution, file, difference}

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "severity": self.severity, "effect": self.effect, "file": self.file,
                "message": self.message, "hint": self.hint, "loader_message": self.loader_message,
                "symbol": self.symbol, "version": self.version, "demangled": self.demangled,
                "library": self.library, "nearest": self.nearest}


@dataclass
class PairResult:
    subject: dict[str, str]  # {name, version, source}
    hosts: list[dict[str, str]]  # the distributions its files load from or require, among those given
    verdict: str  # loads, will-fail, cannot-tell
    reason: str  # the loader's first error, or why we cannot tell, or what it loads
    requirements: list[dict[str, Any]] = field(default_factory=list)  # {line, name, given, satisfied, extra}
    findings: list[CompatFinding] = field(default_factory=list)
    files: list[dict[str, Any]] = field(default_factory=list)  # {path, links: [...], symbols: {...}}
    cxx: dict[str, Any] = field(default_factory=dict)  # {subject_abi, host_abi, subject_floor, host_floor}
    others_given: bool = False  # were distributions other than the subject given (for the label)

    @property
    def label(self) -> str:
        """``h5py 3.16.0 with numpy 2.4.6``; without a host, what was given and taken nothing from."""
        subject = f"{self.subject['name']} {self.subject['version']}"
        if self.hosts:
            return f"{subject} with " + ", ".join(f"{h['name']} {h['version']}" for h in self.hosts)
        required = ", ".join(f"{r['name']} {r['given']}" for r in self.requirements)
        if required:
            return f"{subject} with no host (it takes nothing from {required})"
        return f"{subject} with no host" if self.others_given else f"{subject} with nothing else given"

    @property
    def exit_code(self) -> int:
        return _EXIT[self.verdict]

    def to_dict(self) -> dict[str, Any]:
        return {"subject": self.subject, "hosts": self.hosts, "verdict": self.verdict, "reason": self.reason,
                "requirements": self.requirements, "findings": [f.to_dict() for f in self.findings],
                "files": self.files, "cxx": self.cxx}


@dataclass
class CompatReport:
    mode: str  # wheels or environment
    sources: list[str]
    pairs: list[PairResult]
    notes: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        """1 when a pair will fail, else 2 when one cannot be told, else 0."""
        codes = {p.exit_code for p in self.pairs}
        return 1 if 1 in codes else 2 if 2 in codes else 0

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(VERDICTS, 0)
        for pair in self.pairs:
            out[pair.verdict] += 1
        return out

    def to_dict(self) -> dict[str, Any]:
        from wheelcheck._version import __version__

        return {"schema_version": COMPAT_SCHEMA_VERSION, "tool": {"name": "wheelcheck", "version": __version__},
                "mode": self.mode, "sources": self.sources, "counts": self.counts(), "exit_code": self.exit_code,
                "notes": self.notes, "timings": {k: round(v, 3) for k, v in self.timings.items()},
                "pairs": [p.to_dict() for p in self.pairs]}
