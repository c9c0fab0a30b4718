"""The license a Debian package states in its machine-readable ``copyright`` file (copyright-format 1.0).

The file describes the whole source package: its ``Files:`` paragraphs cover the demos, build scripts and
``debian/`` packaging as well as the library. Which of those files went into one binary is not recorded, so
the package's license is the one the header paragraph states for the package as a whole, else the one of
``Files: *`` (the files no other paragraph names: the library's own, in practice). The whole file travels
with the library all the same, and it names the rest.
"""

from __future__ import annotations

import re

__all__ = ["is_machine_readable", "package_license"]

_FIELD = re.compile(r"([A-Za-z][A-Za-z0-9-]*):[ \t]*(.*)")


def is_machine_readable(text: str) -> bool:
    """Does ``text`` declare the machine-readable format (its first paragraph's ``Format:`` field)?"""
    paragraphs = _paragraphs(text)
    declared = paragraphs[0].get("format", "").lower() if paragraphs else ""
    return "copyright-format" in declared or "dep5" in declared  # DEP-5: the draft's URL, still in use


def package_license(text: str) -> str | None:
    """The license synopsis (first line of ``License:``) of the header paragraph, else of ``Files: *``;
    None when the file is not machine-readable or states neither."""
    if not is_machine_readable(text):
        return None
    paragraphs = _paragraphs(text)
    header = paragraphs[0].get("license", "")
    if header:
        return header
    for paragraph in paragraphs[1:]:
        if paragraph.get("files", "").split() == ["*"]:
            return paragraph.get("license") or None
    return None


def _paragraphs(text: str) -> list[dict[str, str]]:
    """Each paragraph's fields, names lower-cased, each the first line of its value (its synopsis); a
    continuation line (one that starts with a space or a tab) adds to ``files`` only, which may span lines."""
    out: list[dict[str, str]] = []
    fields: dict[str, str] = {}
    name = ""
    for line in text.splitlines():
        if not line.strip():
            if fields:
                out.append(fields)
            fields, name = {}, ""
            continue
        if line[0] in " \t":
            if name == "files":
                fields[name] = f"{fields[name]} {line.strip()}".strip()
            continue
        match = _FIELD.match(line)
        if match is None:  # not a field: not this format
            name = ""
            continue
        name = match.group(1).lower()
        fields.setdefault(name, match.group(2).strip())
    if fields:
        out.append(fields)
    return out
