"""A distribution as `wheelcheck conflicts` sees it: a wheel or an installed distribution, reduced to
its name, version, declared requirements, tags and ELF summaries.

Both readers (a .whl through scan_wheel, an installed *.dist-info through its RECORD) build the same
object, so the analyses never know where the files came from.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from functools import cached_property

from packaging.tags import Tag
from packaging.utils import canonicalize_name

from wheelcheck.elf.elf_info import ElfInfo
from wheelcheck.wheel.requires_dist import required_name

__all__ = ["Distribution"]


@dataclass(frozen=True)
class Distribution:
    name: str  # as METADATA spells it
    version: str
    source: str  # the wheel's file name, or the *.dist-info directory
    requires: tuple[str, ...] = ()  # Requires-Dist lines
    tags: frozenset[Tag] = frozenset()  # from WHEEL (empty when unknown)
    elves: tuple[ElfInfo, ...] = ()
    global_loaders: tuple[str, ...] = ()  # its Python files that load libraries with RTLD_GLOBAL as it is imported
    # what they load (global_loading.py): the starts of its libraries' file names; None: any of its libraries
    global_libraries: tuple[str, ...] | None = None
    dormant_loaders: tuple[str, ...] = ()  # files naming RTLD_GLOBAL where the import does not go

    @cached_property
    def global_paths(self) -> frozenset[str]:
        """Its ELF files in the global scope once it is imported: those its code loads with RTLD_GLOBAL, and what
        they need of its own files (by file name or SONAME); every file when that cannot be told."""
        if not self.global_loaders:
            return frozenset()
        if self.global_libraries is None:
            return frozenset(e.path for e in self.elves)
        by_name: dict[str, ElfInfo] = {}
        for elf in self.elves:
            for name in (posixpath.basename(elf.path), elf.soname):
                if name:
                    by_name.setdefault(name, elf)
        pending = [e for e in self.elves if posixpath.basename(e.path).startswith(self.global_libraries)]
        found: set[str] = set()
        while pending:
            elf = pending.pop()
            if elf.path not in found:
                found.add(elf.path)
                pending.extend(by_name[n] for n in elf.needed if n in by_name)
        return frozenset(found)

    @cached_property
    def key(self) -> str:
        """The canonical name: two versions of one distribution share it."""
        return canonicalize_name(self.name)

    @property
    def label(self) -> str:
        return f"{self.name} {self.version}"

    @cached_property
    def musl(self) -> bool:
        """Tagged musllinux: its files load with musl even where they name no libc (a library that calls
        nothing of libc needs none)."""
        return any(tag.platform.startswith("musllinux") for tag in self.tags)

    @cached_property
    def required(self) -> frozenset[str]:
        """Canonical names of every distribution it declares, under any extra or marker: a dependency
        declared in any form is one it may expect symbols from."""
        names = (required_name(line) for line in self.requires)
        return frozenset(name for name in names if name)  # a malformed line declares nothing we can match

    def loadable(self, arch: str | None = None) -> list[ElfInfo]:
        """The ELF files a process can load: shared objects that are not programs (libQt6Core.so.6 names an
        interpreter and is a library), of ``arch`` if given."""
        return [e for e in self.elves if e.elf_type == "ET_DYN" and not e.is_program
                and (arch is None or e.arch == arch)]
