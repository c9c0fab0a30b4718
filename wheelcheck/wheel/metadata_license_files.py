"""``License-File`` lines added to a wheel's METADATA (PEP 639). Pure: text in, text out.

The lines go after the last ``License-File`` line, else at the end of the headers; the rest of the file is
kept byte for byte, the project's own ``License`` and ``License-Expression`` included. PEP 639 brought the
field with Metadata-Version 2.4, and reads each path under ``.dist-info/licenses/``: a METADATA of an earlier
version is raised to 2.4, and the ``License-File`` lines it had already (setuptools wrote them before PEP
639, for files at the top of ``.dist-info``) are returned so that those files can be put where 2.4 reads them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

__all__ = ["LicenseFileLines", "with_license_files", "license_file_lines", "LICENSE_FILE_VERSION"]

LICENSE_FILE_VERSION = Version("2.4")
_HEADER = re.compile(r"([A-Za-z0-9-]+):[ \t]*(.*)")


@dataclass(frozen=True)
class LicenseFileLines:
    text: str  # the METADATA, with every path declared
    raised_from: str | None = None  # the Metadata-Version raised to 2.4, when it was raised
    earlier: tuple[str, ...] = ()  # License-File values it had before a raise: read under licenses/ from now on


def license_file_lines(metadata: str) -> list[str]:
    """The ``License-File`` values of the headers of ``metadata``."""
    return [value for name, value, _ in _headers(metadata)[0] if name == "license-file"]


def with_license_files(metadata: str, paths: Sequence[str]) -> LicenseFileLines:
    """``metadata`` declaring each of ``paths`` (relative to ``.dist-info/licenses/``) once."""
    headers, end = _headers(metadata)
    declared = [value for name, value, _ in headers if name == "license-file"]
    new = [p for p in dict.fromkeys(paths) if p not in declared]
    if not new:
        return LicenseFileLines(metadata)
    newline = "\r\n" if "\r\n" in metadata[:end] else "\n"
    last = max((stop for name, _, stop in headers if name == "license-file"), default=end)
    head = metadata[:last]
    if head and not head.endswith("\n"):
        head += newline
    text = head + "".join(f"License-File: {p}{newline}" for p in new) + metadata[last:]
    version = next((value for name, value, _ in headers if name == "metadata-version"), None)
    if version is None or not _older(version):
        return LicenseFileLines(text)
    text = re.sub(r"(?im)^(Metadata-Version:[ \t]*)\S+", lambda m: f"{m.group(1)}{LICENSE_FILE_VERSION}", text,
                  count=1)
    return LicenseFileLines(text, version, tuple(declared))


def _older(version: str) -> bool:
    try:
        return Version(version) < LICENSE_FILE_VERSION
    except InvalidVersion:
        return False  # not ours to fix: the wheel-metadata rule names it


def _headers(metadata: str) -> tuple[list[tuple[str, str, int]], int]:
    """(lower-case name, value, offset just past its last line) of each header, and the offset where the headers
    end (the blank line before the description, or the end of the text)."""
    headers: list[tuple[str, str, int]] = []
    offset = 0
    for line in re.findall(r"[^\n]*\n|[^\n]+\Z", metadata):  # lines as the email parser cuts them
        if not line.strip():
            break
        if line[0] in " \t" and headers:  # a folded continuation of the header before
            name, value, _ = headers[-1]
            headers[-1] = (name, value, offset + len(line))
        else:
            match = _HEADER.match(line.rstrip("\r\n"))
            if match:
                headers.append((match.group(1).lower(), match.group(2).strip(), offset + len(line)))
        offset += len(line)
    return headers, offset
