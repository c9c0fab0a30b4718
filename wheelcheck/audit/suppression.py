"""Findings a team has chosen to live with, as a linter lets it: rules ignored everywhere (``ignore``), rules
ignored in some members (``per-file-ignores``: a glob over member paths), and findings known from a baseline
file (new ones still fail). A suppressed finding leaves the findings that judge the wheel but is kept, counted
and named in the report, so a passing gate never hides what it was told to overlook.

A finding is recognised in a baseline by its fingerprint: the distribution's name, the rule, the member and
the finding's cause (the part of its message that every file with the same problem shares). It does not hold
the version or the symbols, so the same problem in the next release is the same finding.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from packaging.utils import canonicalize_name

from wheelcheck.audit.findings import Finding, WheelReport, reaches
from wheelcheck.errors import UsageError

__all__ = ["Suppressions", "Suppressed", "fingerprint", "suppress", "read_baseline", "baseline_document",
           "BASELINE_VERSION"]

BASELINE_VERSION = 1
MAX_BASELINE_SIZE = 64 << 20


@dataclass(frozen=True)
class Suppressions:
    ignore: tuple[str, ...] = ()  # rule ids
    per_file: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (member glob, rule ids)
    baseline: frozenset[str] = frozenset()  # fingerprints of known findings
    # where each kind came from, for the report: "ignore", "per-file-ignores", "baseline" -> a path or
    # "command line"
    sources: Mapping[str, str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.ignore or self.per_file or self.baseline)

    def why(self, dist: str, finding: Finding) -> str | None:
        """What suppresses ``finding`` of distribution ``dist`` ("ignore", "per-file-ignores GLOB",
        "baseline"), or None."""
        if finding.rule in self.ignore:
            return "ignore"
        for glob, rules in self.per_file:
            if finding.rule in rules and finding.file is not None and fnmatchcase(finding.file, glob):
                return f"per-file-ignores {glob}"
        if self.baseline and fingerprint(dist, finding) in self.baseline:
            return "baseline"
        return None


@dataclass(frozen=True)
class Suppressed:
    rule: str
    severity: str
    file: str | None
    message: str
    by: str  # ignore, per-file-ignores GLOB, baseline
    source: str  # the settings file, the baseline file, or "command line"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def fingerprint(dist: str, finding: Finding) -> str:
    """A finding's identity across releases: distribution, rule, member and cause."""
    text = "\0".join((canonicalize_name(dist), finding.rule, finding.file or "", finding.cause))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def suppress(report: WheelReport, suppressions: Suppressions, fail_on: str) -> None:
    """Move the findings of ``report`` that ``suppressions`` cover to ``report.suppressed``, and judge
    ``passed`` again on the rest."""
    if not suppressions or report.error is not None:
        return
    dist = report.filename.split("-", 1)[0]
    kept = []
    for finding in report.findings:
        by = suppressions.why(dist, finding)
        if by is None:
            kept.append(finding)
        else:
            source = suppressions.sources.get(by.split()[0], "command line")
            report.suppressed.append(Suppressed(finding.rule, finding.severity, finding.file, finding.message,
                                                by, source))
    report.findings = kept
    report.passed = not reaches(kept, fail_on)


def baseline_document(reports: Iterable[WheelReport]) -> dict[str, Any]:
    """A baseline of the findings of ``reports`` at warning and error: what ``--baseline`` reads back."""
    entries = []
    for report in reports:
        dist = report.filename.split("-", 1)[0]
        for finding in report.findings:
            if finding.severity in ("warning", "error"):
                entries.append({"fingerprint": fingerprint(dist, finding), "distribution": canonicalize_name(dist),
                                "rule": finding.rule, "file": finding.file, "cause": finding.cause})
    unique = {e["fingerprint"]: e for e in entries}
    return {"tool": "wheelcheck", "baseline_version": BASELINE_VERSION,
            "findings": sorted(unique.values(), key=lambda e: (e["distribution"], e["rule"], e["file"] or ""))}


def read_baseline(path: str | Path) -> frozenset[str]:
    """The fingerprints of a baseline file; UsageError naming it when it is not one."""
    path = Path(path)
    try:
        if path.stat().st_size > MAX_BASELINE_SIZE:  # a repository's file: not read whole before it is measured
            raise UsageError(str(path), "is larger than a baseline of findings can be (64 MiB)")
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(str(path), f"cannot read the baseline ({exc})") from None
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        raise UsageError(str(path), "is not a wheelcheck baseline (not JSON)") from None
    if not isinstance(doc, dict) or doc.get("tool") != "wheelcheck" or doc.get("baseline_version") != BASELINE_VERSION:
        raise UsageError(str(path), f"is not a wheelcheck baseline, version {BASELINE_VERSION}")
    entries = doc.get("findings")
    if not isinstance(entries, list) or not all(isinstance(e, dict) and isinstance(e.get("fingerprint"), str)
                                                for e in entries):
        raise UsageError(str(path), "is not a wheelcheck baseline (its findings have no fingerprints)")
    return frozenset(e["fingerprint"] for e in entries)
