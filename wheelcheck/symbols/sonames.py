"""auditwheel's hashed library names, written and read in one place.

A grafted library is renamed with the first 8 hex digits of its content's sha256 after its stem, the part
before the first dot: ``libfoo.so.1.2`` becomes ``libfoo-1a2b3c4d.so.1.2`` and ``libopenblasp-r0.3.15.so``
becomes ``libopenblasp-r0-59ffcd50.3.15.so``. A library grafted from a wheel that was itself repaired
carries two hashes (``libgfortran-040039e1-0352e75f.so.5.0.0``): the first one hashes the original build,
the last one the bytes grafted this time.
"""

from __future__ import annotations

import re

__all__ = ["hashed_name", "unhashed", "hashed_stem", "last_hash"]

# the stem (no dot in it), then one or more -<8 hex digits>, then the first dot of the name
_HASHES = re.compile(r"^(?P<stem>[^.]*?)(?P<hashes>(?:-[0-9a-f]{8})+)(?=\.)")


def hashed_name(filename: str, sha256: str) -> str:
    """The name auditwheel gives a copy of ``filename`` whose sha256 hex digest is ``sha256``;
    unchanged when the stem already ends with that hash (repairing again renames nothing)."""
    short = sha256[:8]
    stem, dot, rest = filename.partition(".")
    if stem.endswith(f"-{short}"):
        return filename
    return f"{stem}-{short}{dot}{rest}"


def unhashed(name: str) -> str:
    """libcuda-1a2b3c4d.so.1 -> libcuda.so.1: the name before any repair renamed it."""
    return _HASHES.sub(r"\g<stem>", name, count=1)


def hashed_stem(name: str) -> str | None:
    """The stem with its first hash (``libfoo-1a2b3c4d`` for ``libfoo-1a2b3c4d-5e6f7a8b.so.1``): the same
    for every copy of one original build, however often it was grafted again. None without a hash."""
    found = _HASHES.match(name)
    return found.group("stem") + found.group("hashes")[:9] if found else None


def last_hash(name: str) -> str | None:
    """The 8 hex digits of the last hash in the name (the bytes of this very copy), None without one."""
    found = _HASHES.match(name)
    return found.group("hashes")[-8:] if found else None
