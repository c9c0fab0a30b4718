"""What a repair --hide-symbols edit must keep: the objects several ELF files of the wheel define as one.

Pure, on the summaries of the wheel's ELF files. A name several files of the wheel define, which the loader makes
one object (C++ vague linkage, or a plain duplicate definition), must stay visible in each under one name: hidden
in some, or renamed in some and not all, each copy serves its own file, silently (repair sweep M, W2: a
header-only singleton counted 0 instead of 2). Any two files of the wheel count as sharing a load scope: under
RTLD_GLOBAL they do, and STB_GNU_UNIQUE definitions are one per process whatever the scope.
"""

from __future__ import annotations

from collections.abc import Iterable

from wheelcheck.elf.elf_info import ElfInfo
from wheelcheck.elf.linker_made import names_own_file

__all__ = ["shared_definitions"]


def shared_definitions(elves: Iterable[ElfInfo], names: set[str]) -> dict[str, dict[str, list[str]]]:
    """name -> {file: the other files whose definition of it the loader may bind in place of the file's own}, for
    those of ``names`` that several ELF files of the wheel export.

    Two definitions are one to the loader unless both are versioned, in different versions (libcurl's
    CURL_OPENSSL_4 and libcurl-gnutls' CURL_GNUTLS_3 keep their 92 names apart). The symbols GNU ld makes for a
    file's version nodes (NSS_3.7 in libnss3 and libsmime3) are not objects at all, and the markers and section
    bounds it makes (_end, __start_<sec>) each stand for their own file: one file reaching another's is a bug
    that hiding cures (elf.linker_made).
    """
    names = {name for name in names if not names_own_file(name)}
    found: dict[str, list[tuple[str, frozenset[str | None]]]] = {}
    for elf in elves:
        common = names.intersection(elf.symtab.export_names()).difference(elf.version_defs)
        if common:
            versions = elf.symtab.export_versions()
            for name in common:
                found.setdefault(name, []).append((elf.path, versions[name]))
    out: dict[str, dict[str, list[str]]] = {}
    for name, definitions in found.items():
        for path, mine in definitions:
            others = [other for other, theirs in definitions if other != path and _may_be_one(mine, theirs)]
            if others:
                out.setdefault(name, {})[path] = others
    return out


def _may_be_one(mine: frozenset[str | None], theirs: frozenset[str | None]) -> bool:
    return None in mine or None in theirs or bool(mine & theirs)
