"""Input text made inert in a report: what a wheel, a policy file or a command line names is shown, never obeyed.

A member name, a soname, a symbol, an RPATH, a policy or project name is the input's, and reports quote them
inside messages. Each format has one helper, applied where that format is written:

- text (``text_line``, ``inert_lines``): control characters and line separators escaped as errors escape them
  (``errors.one_line``: ``\\n``, ``\\x1b``), so a name cannot add a line or reach the terminal as an escape
  sequence; and GitHub workflow commands disarmed, since a job log obeys a line whose first non-blank
  characters are ``::`` (``::add-mask::``, ``::error``) and, anywhere in a line, ``##[`` (the older form).
  A text line is the tool's words and the input's, and the tool's own never hold either, so the whole
  line is escaped: no quoted name can be missed.
- Markdown (``md_text``, ``md_code``): the characters Markdown or GitHub give a meaning to are
  backslash-escaped (a table's ``|``, emphasis, links and images, raw HTML, headings, autolinks); names are
  shown in code spans whose fence is longer than any run of backquotes in them.
- SARIF message text (``sarif_text``): square brackets and backslashes escaped (SARIF 2.1.0 §3.11.6: a
  bracket that is not escaped may start an embedded link).
- JSON (``json_text``): ``json.dumps`` escapes control characters; ``##[`` in a string is written with an
  escape as well, for a JSON report printed to a job log.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from wheelcheck.errors import one_line
from wheelcheck.report.text_lines import Line

__all__ = ["text_line", "inert_lines", "md_text", "md_code", "sarif_text", "json_text"]

_LEGACY_COMMAND = "##["  # the runner looks for it anywhere in a line
_MD_SPECIAL = re.compile(r"([\\`*_~\[\]()<>!#|&$:@])")
_WWW = re.compile(r"(www)\.", re.IGNORECASE)  # GitHub links www.example.com by itself
_SARIF_SPECIAL = re.compile(r"([\\\[\]])")
_BACKQUOTES = re.compile(r"`+")


def text_line(text: str) -> str:
    """One line of a text report as it may be printed: one line, no escape sequence, no workflow command."""
    text = one_line(text).replace(_LEGACY_COMMAND, "#\\x23[")
    body = text.lstrip()
    if body.startswith("::"):
        text = text[:len(text) - len(body)] + "\\x3a" + body[1:]
    return text


def inert_lines(lines: Iterable[Line]) -> list[Line]:
    """What every text renderer returns: each line through ``text_line``, its style kept."""
    return [Line(text_line(line.text), line.style) for line in lines]


def md_text(text: str) -> str:
    """Input text inside Markdown (a table cell, a sentence): shown as it is, whatever it holds."""
    return _WWW.sub(r"\1\\.", _MD_SPECIAL.sub(r"\\\1", one_line(text)))


def md_code(text: str, *, in_table: bool = True) -> str:
    """A name in a code span. The fence is one backquote longer than the longest run in the name, so no run
    closes it early; a name that starts or ends with a backquote or a space is padded, as CommonMark strips
    one space from each side. In a table a ``|`` is escaped (GFM splits cells before it reads code spans);
    a name holding ``##[`` is shown as escaped text instead, since nothing can be escaped inside a span."""
    text = one_line(text)
    if _LEGACY_COMMAND in text:
        return md_text(text)
    if in_table:
        text = text.replace("|", "\\|")
    fence = "`" * (max(map(len, _BACKQUOTES.findall(text)), default=0) + 1)
    pad = " " if text[:1] in ("`", " ") or text[-1:] in ("`", " ") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def sarif_text(text: str) -> str:
    """The text of a SARIF message: one line, brackets and backslashes escaped."""
    return _SARIF_SPECIAL.sub(r"\\\1", one_line(text))


def json_text(document: Any, indent: int | None = 2) -> str:
    """``document`` as indented JSON (and a final newline) that a job log shows and never obeys."""
    return json.dumps(document, indent=indent).replace(_LEGACY_COMMAND, "#\\u0023[") + "\n"
