"""Vendored libraries whose license notice the wheel does not carry.

A repair copies libraries of the build machine into the wheel: LGPL, GPL, MPL and BSD code whose licenses
require their notice to travel with the binary. A vendored library (in a ``<dist>.libs/`` directory, or under
a repair's hashed name) is named by a notice when the wheel's wheelcheck SBOM gives it a license file the wheel
holds, or when a license file's name or text holds the library's name: ``libgfortran`` or ``gfortran`` for
``libgfortran-040039e1.so.5``, ``zlib`` or ``libz`` for ``libz-eb09ad1d.so.1``, ``OpenBLAS`` for
``libopenblasp-r0-39a31c03.so`` (a word of six letters or more that begins the name: the project, not its
build). A notice that names the library without its license passes too: the check reads names, not terms.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from wheelcheck.audit.check_context import CheckContext
from wheelcheck.audit.findings import Finding
from wheelcheck.elf.elf_info import ElfInfo
from wheelcheck.symbols.sonames import last_hash, unhashed
from wheelcheck.wheel.license_notices import LicenseNotices

__all__ = ["check_vendored_licenses", "is_vendored_library", "notice_names"]

_PREFIX_MIN = 6  # a shorter word that begins a library's name ("open", "gcc") says nothing of it


def check_vendored_licenses(context: CheckContext) -> Iterator[Finding]:
    notices = context.model.license_notices
    for elf in sorted(context.model.elves, key=lambda e: e.path):
        if not is_vendored_library(elf) or notice_names(notices, elf.path):
            continue
        name = unhashed(elf.path.rsplit("/", 1)[-1])
        yield Finding(
            "vendored-license", "warning", elf.path,
            f"is a vendored copy of {name}, and no license file of the wheel names it: the notice its license "
            "requires does not travel with it",
            "repair the wheel with `wheelcheck repair`, which copies the license of the OS package each library "
            "comes from into .dist-info/licenses/ (--license-file LIB=FILE for a library no package provides), or "
            "add the library's license to the wheel's license files", subject=name,
            cause="is a vendored library without a license file")


def is_vendored_library(elf: ElfInfo) -> bool:
    """A shared library, not an extension module, in a top-level ``*.libs`` directory or under a repair's
    hashed name."""
    if elf.elf_type != "ET_DYN" or elf.is_extension:
        return False
    folder, _, name = elf.path.rpartition("/")
    in_libs = bool(folder) and folder.split("/", 1)[0].endswith(".libs")
    return in_libs or last_hash(name) is not None


def notice_names(notices: LicenseNotices, library: str) -> bool:
    """Does a notice name the library ``library`` (a member path)?"""
    if library in notices.declared:
        return True
    return any(_named(candidate, notices.words) for candidate in _candidates(library))


def _candidates(library: str) -> Iterable[str]:
    """The names a notice may call a library by: its stem without ``lib`` (``gfortran``), and that stem's first
    word (``pango`` for ``libpango-1.0``)."""
    stem = unhashed(library.rsplit("/", 1)[-1]).split(".", 1)[0].lower()
    bare = stem[3:] if stem.startswith("lib") and len(stem) > 3 else stem
    yield bare
    first = re.split(r"[-.]", bare, maxsplit=1)[0]
    if first and first != bare:
        yield first


def _named(name: str, words: frozenset[str]) -> bool:
    if f"lib{name}" in words or f"{name}lib" in words:  # libz, zlib
        return True
    if len(name) >= 3 and name in words:
        return True
    # a notice may name the project, not the build: OpenBLAS for libopenblasp-r0, libscipy_openblas for
    # libscipy_openblas64_
    return any(name[:end] in words or f"lib{name[:end]}" in words for end in range(_PREFIX_MIN, len(name)))
