"""The cross-distribution symbol index of one process, built once and shared by the conflicts rules.

For every loadable ELF file: its exported names with their st_info and version columns, taken from the
SymbolTable with bytes.translate masks and itertools.compress (C speed; no Symbol objects). For every
distribution: the set of names its files export. Names exported by two or more distributions are found
with set intersections, so a process of several 400,000-symbol libraries is indexed in a fraction of a
second; only those names are looked at one by one afterwards.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import compress

from wheelcheck.conflicts.distribution import Distribution
from wheelcheck.elf.elf_info import ElfInfo
from wheelcheck.symbols.sonames import hashed_stem

__all__ = ["FileExports", "SymbolIndex", "build_index", "file_name"]


def file_name(elf: ElfInfo) -> str:
    """The name the loader knows a library by: its SONAME, else its file name."""
    return elf.soname or elf.path.rsplit("/", 1)[-1]


@dataclass
class FileExports:
    """One loadable ELF file of a distribution and what it exports."""

    dist: Distribution
    elf: ElfInfo
    names: list[str]  # exported names, in .dynsym order
    info: bytes  # st_info of each
    versions: array  # index into elf.symtab.version_names (0: unversioned)

    @cached_property
    def identity(self) -> tuple:
        """Files with the same identity are the same build: the loader maps one of them, and their
        definitions are the same code. A name with auditwheel's hash (libfoo-1a2b3c4d.so.1) is a hash of
        the content before patchelf rewrote it, so the name alone says it; otherwise the name and size."""
        name = file_name(self.elf)
        stem = hashed_stem(name)  # repaired twice (libfoo-1a2b3c4d-5e6f7a8b.so.1): the first hash counts
        return (stem,) if stem else (name, self.elf.size)

    def lookup(self, name: str) -> tuple[int, str | None] | None:
        """(st_info, version name) of an exported name, or None. A C-speed scan: for the few names the
        rules look up one by one (sentinels, a twin's owner); the index has every shared name already."""
        try:
            i = self.names.index(name)
        except ValueError:
            return None
        return self.info[i], self.elf.symtab.version_names[self.versions[i]][0]

    def undefined(self) -> list[tuple[str, str | None]]:
        """(name, library its version is needed from, or None) of its strong undefined references."""
        st = self.elf.symtab
        if not len(st):
            return []
        wanted = st.strong_undefined_mask()
        libraries = [lib for _version, lib in st.version_names]
        return [(n, libraries[v]) for n, v in zip(compress(st.names, wanted), compress(st.version_index, wanted))
                if n]


Copy = tuple[int, int, "str | None"]  # a definition: index into SymbolIndex.files, st_info, version name


@dataclass
class SymbolIndex:
    files: list[FileExports]
    by_dist: dict[str, list[FileExports]]  # canonical name -> its files (all versions given)
    names: dict[str, set[str]]  # canonical name -> names its files export
    shared: dict[str, list[Copy]]  # names exported by files of two or more distributions -> every definition
    exported: int  # exported names indexed, over all files


def _exports(dist: Distribution, elf: ElfInfo) -> FileExports:
    st = elf.symtab
    if not len(st):
        return FileExports(dist, elf, [], b"", array("H"))
    mask = st.export_mask()
    return FileExports(dist, elf, list(compress(st.names, mask)), bytes(compress(st.info, mask)),
                       array("H", compress(st.version_index, mask)))


def build_index(members: Sequence[Distribution], arch: str | None) -> SymbolIndex:
    files: list[FileExports] = []
    by_dist: dict[str, list[FileExports]] = {}
    for dist in members:
        entries = [_exports(dist, elf) for elf in dist.loadable(arch)]
        files.extend(entries)
        by_dist.setdefault(dist.key, []).extend(entries)
    names: dict[str, set[str]] = {}
    seen: set[str] = set()
    shared_names: set[str] = set()
    for key, entries in by_dist.items():
        own = set()
        for entry in entries:
            own.update(entry.names)
        names[key] = own
        shared_names |= seen & own
        seen |= own
    shared: dict[str, list[Copy]] = {name: [] for name in sorted(shared_names)}
    for number, f in enumerate(files):
        if shared_names.isdisjoint(f.names):
            continue
        versions = f.elf.symtab.version_names
        exported, info, version_index = f.names, f.info, f.versions
        # the positions of shared names, found without a Python-level step per name
        for i in compress(range(len(exported)), map(shared_names.__contains__, exported)):
            shared[exported[i]].append((number, info[i], versions[version_index[i]][0]))
    return SymbolIndex(files, by_dist, names, shared, sum(len(f.names) for f in files))
