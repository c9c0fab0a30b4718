"""The license notices a wheel carries, read once with the wheel (audit/vendored_licenses.py judges them).

A notice is a member under ``.dist-info/licenses/`` (PEP 639), or one named like a license file anywhere
(``LICENSE``, ``COPYING``, ``NOTICE``, ``COPYRIGHT``, ``THIRD_PARTY_NOTICES``: where setuptools put them before
PEP 639, and where numpy, scipy or opencv bundle the licenses of what they vendor). Kept: their names, the
words of their paths and texts, and the libraries the wheel's own wheelcheck SBOM gives a notice to (what
``wheelcheck repair`` writes).

Reading is bounded: the first MiB of at most 256 notices, 16 MiB in all, and a wheelcheck SBOM of at most
16 MiB; a notice's words are kept, not its text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from wheelcheck.wheel.wheel_reader import WheelReader

__all__ = ["LicenseNotices", "license_notices", "notice_words", "is_notice", "LICENSE_FILE_PROPERTY",
           "FILE_PROPERTY", "SBOM_NAME", "MAX_SBOM_SIZE"]

SBOM_NAME = "wheelcheck.cdx.json"  # <dist>.dist-info/sboms/<this>: what repair writes (PEP 770)
MAX_SBOM_SIZE = 16 << 20  # a larger document in a wheel is not one wheelcheck wrote: ignored
FILE_PROPERTY = "wheelcheck:file"  # a component's member, in wheelcheck's SBOM
LICENSE_FILE_PROPERTY = "wheelcheck:license-file"  # the member holding its license text

_NOTICE = re.compile(r"(licen[cs]e|copying|notice|copyright|third[-_ ]?party)", re.I)
_WORD = re.compile(rb"[a-z0-9_+]+")
_MAX_NOTICES = 256
_NOTICE_READ = 1 << 20
_TOTAL_READ = 16 << 20


@dataclass(frozen=True)
class LicenseNotices:
    files: tuple[str, ...] = ()  # the members that are notices
    words: frozenset[str] = frozenset()  # lower-case words of their paths and texts
    declared: frozenset[str] = frozenset()  # library members the wheel's wheelcheck SBOM gives a notice it holds

    def with_texts(self, texts: Mapping[str, bytes], declared: Iterable[str]) -> LicenseNotices:
        """These notices and the texts ``texts`` (member -> bytes) a repair adds, which it gives the libraries
        ``declared``."""
        words = set(self.words)
        for name, data in texts.items():
            words |= notice_words(name.encode("utf-8", "replace")) | notice_words(data[:_NOTICE_READ])
        return replace(self, files=self.files + tuple(n for n in texts if n not in self.files),
                       words=frozenset(words), declared=self.declared | frozenset(declared))


def is_notice(member: str, dist_info: str) -> bool:
    """Is ``member`` a license notice: under ``<dist_info>/licenses/``, or named like one?"""
    if member.endswith("/"):
        return False
    if member.startswith(f"{dist_info}/licenses/"):
        return True
    return bool(_NOTICE.match(member.rsplit("/", 1)[-1]))


def license_notices(reader: WheelReader) -> LicenseNotices:
    """The notices of the wheel ``reader`` reads."""
    dist_info = reader.dist_info
    sizes = reader.file_sizes()
    files = tuple(name for name in sizes if is_notice(name, dist_info))
    words: set[str] = set()
    budget = _TOTAL_READ
    for name in files[:_MAX_NOTICES]:
        words |= notice_words(name.encode("utf-8", "replace"))
        size = min(sizes[name], _NOTICE_READ, budget)
        if size > 0:
            words |= notice_words(reader.head(name, size))
            budget -= size
    return LicenseNotices(files, frozenset(words), _declared(reader, dist_info, set(files)))


def notice_words(text: bytes) -> frozenset[str]:
    """The lower-case words of ``text`` (letters, digits, ``_`` and ``+``: ``libstdc++``, ``scipy_openblas``)."""
    return frozenset(w.decode("ascii") for w in _WORD.findall(text.lower()))


def _declared(reader: WheelReader, dist_info: str, notices: set[str]) -> frozenset[str]:
    """The members wheelcheck's SBOM in the wheel gives a license file that is one of ``notices``."""
    name = f"{dist_info}/sboms/{SBOM_NAME}"
    size = reader.file_sizes().get(name)
    if size is None or size > MAX_SBOM_SIZE:
        return frozenset()
    try:
        document = json.loads(bytes(reader.read(name)))
    except (ValueError, RecursionError):  # the wheel's bytes: not JSON, or nested past the parser's depth
        return frozenset()
    components = document.get("components") if isinstance(document, dict) else None
    out = set()
    for component in components if isinstance(components, list) else ():
        props = _properties(component)
        member, notice = props.get(FILE_PROPERTY), props.get(LICENSE_FILE_PROPERTY)
        if isinstance(member, str) and isinstance(notice, str) and notice in notices:
            out.add(member)
    return frozenset(out)


def _properties(component: object) -> dict:
    found = component.get("properties") if isinstance(component, dict) else None
    return {p.get("name"): p.get("value") for p in found if isinstance(p, dict)} if isinstance(found, list) else {}
