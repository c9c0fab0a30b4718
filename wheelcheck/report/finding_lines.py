"""Grouped findings as text lines, for the audit and repair reports alike.

One group is a headline (severity, rule, where, what), the files it affects beyond the first few only
with -v, then why it breaks programs and how to fix it: once per rule and wording, not once per file.
"""

from __future__ import annotations

from wheelcheck.audit.finding_groups import FindingGroup
from wheelcheck.report.text_lines import SEVERITY_STYLE, Line, and_list, explanation_lines, plural

__all__ = ["group_lines", "describe_files", "FILES_SHOWN"]

FILES_SHOWN = 3  # files named under a group's headline without -v
_SYMBOLS_IN_MESSAGE = 6  # messages name this many symbols at most; -vv lists the rest


def group_lines(group: FindingGroup, verbosity: int, explained: set[tuple], indent: str = "  ") -> list[Line]:
    """``explained``: the why and fix lines already shown in this report (text_lines.explanation_lines); updated here."""
    where = describe_files(group.files)
    head = f"{indent}{group.severity} {group.rule}: " + (f"{where}: " if where else "") + group.headline
    out = [Line(head, SEVERITY_STYLE[group.severity])]
    out += _file_lines(group, verbosity, indent + "  ")
    out += explanation_lines(group.rule, group.explanation, group.hint, explained, indent + "  ")
    return out


def _file_lines(group: FindingGroup, verbosity: int, indent: str) -> list[Line]:
    if verbosity <= 0:
        if len(group.files) <= 1:
            return []
        named = [f or "(the wheel)" for f in group.files]
        if len(named) <= FILES_SHOWN + 1:
            return [Line(indent + ", ".join(named), "dim")]
        more = len(named) - FILES_SHOWN
        return [Line(f"{indent}{', '.join(named[:FILES_SHOWN])} and {more:,} more (-v lists every file)", "dim")]
    out = []
    for file in group.files:
        mine = [f for f in group.findings if f.file == file]
        details = [f.message for f in mine if f.message != f.cause and len(group.findings) > 1]
        if len(group.files) > 1 or details:
            out.append(Line(f"{indent}{file or '(the wheel)'}" + (f": {'; '.join(details)}" if details else ""),
                            "dim"))
        if verbosity > 1:
            for f in mine:
                if len(f.symbols) > _SYMBOLS_IN_MESSAGE:
                    out.append(Line(f"{indent}  symbols: {', '.join(f.symbols)}", "dim"))
    return out


def describe_files(files: tuple[str | None, ...]) -> str:
    """'' for the wheel itself, the path of one file, or '69 files under torch/bin and torch/test'."""
    if len(files) == 1:
        return files[0] or ""
    under = _common_dirs([f for f in files if f])
    return plural(len(files), "file") + (f" under {under}" if under else "")


def _common_dirs(paths: list[str], most: int = 3) -> str:
    """The deepest directories, at most ``most`` of them, that hold every path ('' when none fits)."""
    parents = [p.split("/")[:-1] for p in paths]
    for depth in range(max(map(len, parents), default=0), 0, -1):
        tops = sorted({"/".join(parts[:depth]) for parts in parents})
        if "" not in tops and len(tops) <= most:
            return and_list(tops)
    return ""
