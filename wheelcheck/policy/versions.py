"""Symbol version names as policies hold them: a namespace (GLIBC) and a version in it (2.17).

A version is either a number (``2.17``, ``3.4.30``), a number with a qualifier (``LDBL_3.4``,
``IEEE128_1.3.13``, ``TM_1``) or a marker without a number (``FLOAT128``, ``ABI_DT_RELR``).
``PRIVATE`` (GLIBC_PRIVATE) is internal to the library that defines it: no policy may allow it.
"""

from __future__ import annotations

import re

__all__ = ["NAMESPACE_LIBRARY", "PRIVATE", "is_version", "numeric", "split_version_name", "version_key", "sorted_versions"]

PRIVATE = "PRIVATE"
# The library that defines each non-glibc namespace a policy limits (GLIBC: the glibc libraries, and
# libgcc_s.so.1 on some arches). A policy whitelisting the library without listing the namespace
# would allow any version of it.
NAMESPACE_LIBRARY = {"GLIBCXX": "libstdc++.so.6", "CXXABI": "libstdc++.so.6", "GCC": "libgcc_s.so.1",
                     "LIBATOMIC": "libatomic.so.1", "ZLIB": "libz.so.1"}
_NUMBER = r"[0-9]+(?:\.[0-9]+)*"
_QUALIFIED = re.compile(rf"^(?:([A-Z][A-Z0-9]*)_)?({_NUMBER})$")
_MARKER = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*$")


def split_version_name(name: str) -> tuple[str, str] | None:
    """``GLIBC_2.17`` -> ``("GLIBC", "2.17")``; None for a name with no namespace (``libc.so.6``)."""
    namespace, sep, version = name.partition("_")
    if not sep or not namespace or not version or not re.fullmatch(r"[A-Z][A-Z0-9]*", namespace):
        return None
    return namespace, version


def is_version(version: str) -> bool:
    """Whether ``version`` parses as one of the three forms above."""
    return bool(_QUALIFIED.match(version) or _MARKER.match(version))


def numeric(version: str) -> tuple[int, ...] | None:
    """The number of a plain numeric version (``2.17`` -> ``(2, 17)``), else None."""
    match = _QUALIFIED.match(version)
    if match is None or match.group(1):
        return None
    return tuple(int(part) for part in match.group(2).split("."))


def version_key(version: str) -> tuple:
    """Sort key: plain numbers in numeric order, then qualified versions and markers by name, then number."""
    match = _QUALIFIED.match(version)
    if match and not match.group(1):
        return (0, "", tuple(int(p) for p in match.group(2).split(".")))
    if match:
        return (1, match.group(1), tuple(int(p) for p in match.group(2).split(".")))
    return (1, version, ())


def sorted_versions(versions) -> list[str]:
    return sorted(versions, key=version_key)
