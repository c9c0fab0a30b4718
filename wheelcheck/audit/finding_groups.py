"""Findings grouped by cause, in the order a person should read them, and a wheel's summary.

A group is every finding of one rule and severity with the same cause, explanation and fix: the same
RUNPATH entry on 69 files is one group of 69 files. Groups of one rule over exactly the same files whose
causes differ only in their subject become one group naming every subject ("RUNPATH /lib/intel64,
/lib/win-x64 is ..."). Order: errors, then warnings, then infos; within a severity, the groups that affect
the most files first, then the most symbols.

The findings themselves stay one per file (the JSON report keeps both): grouping only decides how they
are shown. A wheel's summary (findings.summarize) counts its groups.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wheelcheck.audit.finding import SEVERITIES, Finding
from wheelcheck.symbols.mangling import short_name

__all__ = ["FindingGroup", "group_findings", "LEAK_RULE"]

LEAK_RULE = "leaked-library-symbols"  # its subjects are the leaked library families the summary counts
_SYMBOLS_NAMED = 6  # a group that limits the tag names this many of its symbols in its headline


@dataclass(frozen=True)
class FindingGroup:
    rule: str
    severity: str
    headline: str  # the lone finding's message, or the cause shared by all, subjects joined
    files: tuple[str | None, ...]  # sorted; None: the wheel itself
    findings: tuple[Finding, ...]
    subjects: tuple[str, ...]
    explanation: str
    hint: str
    limit: str | None

    @property
    def count(self) -> int:
        return sum(f.count for f in self.findings)

    def to_dict(self, index: dict[int, int]) -> dict[str, Any]:
        """``index``: id(finding) -> its position in the wheel's findings list."""
        return {"rule": self.rule, "severity": self.severity, "cause": self.headline, "subjects": list(self.subjects),
                "files": list(self.files), "findings": [index[id(f)] for f in self.findings], "count": self.count,
                "explanation": self.explanation, "hint": self.hint, "limit": self.limit}


def group_findings(findings: list[Finding]) -> list[FindingGroup]:
    same_cause: dict[tuple, list[Finding]] = {}
    for f in findings:
        same_cause.setdefault((f.rule, f.severity, f.cause, f.explanation, f.hint, f.limit), []).append(f)
    same_files: dict[tuple, list[list[Finding]]] = {}
    for key, members in same_cause.items():
        subject = members[0].subject
        files = frozenset(f.file or "" for f in members)
        if subject and key[2].count(subject) == 1:
            rule, severity, cause, *rest = key
            merge_key: tuple = (rule, severity, cause.replace(subject, "\0"), *rest, files)
        else:
            merge_key = (*key, files, "alone")
        same_files.setdefault(merge_key, []).append(members)
    groups = [_group(parts) for parts in same_files.values()]
    return sorted(groups, key=lambda g: (-SEVERITIES.index(g.severity), -len(g.files), -g.count, g.rule,
                                         g.headline))


def _group(parts: list[list[Finding]]) -> FindingGroup:
    findings = tuple(f for part in parts for f in part)
    first = findings[0]
    subjects = tuple(part[0].subject for part in parts if part[0].subject)
    if len(findings) == 1:
        headline = first.message
    elif len(parts) == 1:
        headline = first.cause
    else:
        headline = first.cause.replace(first.subject or "", ", ".join(subjects))
    if len(findings) > 1 and first.limit:
        headline = _with_symbols(headline, findings)
    files = tuple(sorted({f.file for f in findings}, key=lambda p: (p is None, p or "")))
    return FindingGroup(first.rule, first.severity, headline, files, findings, subjects, first.explanation,
                        first.hint, first.limit)


def _with_symbols(headline: str, findings: tuple[Finding, ...]) -> str:
    """'needs GLIBC_2.29 of libm.so.6 (exp2, log2) → ...': a reason that lowers the tag names its symbols."""
    names = list(dict.fromkeys(short_name(s) for f in findings for s in f.symbols))
    if not names:
        return headline
    shown = ", ".join(names[:_SYMBOLS_NAMED]) + (f" and {len(names) - _SYMBOLS_NAMED} more"
                                                 if len(names) > _SYMBOLS_NAMED else "")
    head, arrow, tail = headline.partition(" → ")
    return f"{head} ({shown}){arrow}{tail}"
