"""What every plain-text renderer returns, and the small wordings they share.

A renderer (audit_text, repair_text, conflicts_text) turns a report into ``Line``s: the text and a rich
style name. The CLI decides whether styles become colour (only on a terminal); ``as_text`` is the same
report for a file.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

__all__ = ["Line", "SEVERITY_STYLE", "as_text", "plural", "and_list", "explanation_lines"]

SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "dim"}


class Line(NamedTuple):
    text: str
    style: str = ""


def as_text(lines: Iterable[Line]) -> str:
    return "".join(line.text + "\n" for line in lines)


def plural(count: int, word: str, many: str | None = None) -> str:
    """'1 file', '69 files', '1,085 symbols'."""
    return f"{count:,} {word if count == 1 else many or word + 's'}"


def and_list(items: list[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def explanation_lines(rule: str, explanation: str, hint: str, explained: set[tuple], indent: str) -> list[Line]:
    """``why:`` and ``fix:`` lines, each once per rule in a report (the why once per explanation, the fix once per
    hint): groups of one rule that differ in their fix (the library named) share one why. ``explained`` holds
    what was already shown and is updated here."""
    out = []
    if explanation and ("why", rule, explanation) not in explained:
        explained.add(("why", rule, explanation))
        out.append(Line(f"{indent}why: {explanation}", "dim"))
    if hint and ("fix", rule, hint) not in explained:
        explained.add(("fix", rule, hint))
        out.append(Line(f"{indent}fix: {hint}", "dim"))
    return out
