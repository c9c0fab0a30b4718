"""What a loaded file defines, as the loader looks it up: name -> the versions it is defined at.

Built from the SymbolTable columns once per file, on first use, and kept in an explicit cache that the
caller owns (one per compat run), so a 75,000-symbol libtorch_cpu.so is indexed once however many
plugins bind to it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import compress

from wheelcheck.elf.elf_info import ElfInfo

__all__ = ["Exports", "ExportCache"]


@dataclass
class Exports:
    versions: dict[str, tuple[str | None, ...]]  # name -> versions it is defined at (None: unversioned)
    _sorted: list[str] | None = field(default=None, repr=False)

    def defines(self, name: str, version: str | None) -> bool:
        """Would a reference to ``name`` (at ``version``) bind here? A versioned reference binds to that
        version, or to an unversioned definition; an unversioned one to any definition."""
        found = self.versions.get(name)
        if found is None:
            return False
        return version is None or version in found or None in found

    @property
    def sorted_names(self) -> list[str]:
        if self._sorted is None:
            self._sorted = sorted(self.versions)
        return self._sorted


class ExportCache:
    def __init__(self) -> None:
        self._by_elf: dict[int, tuple[ElfInfo, Exports]] = {}

    def of(self, elf: ElfInfo) -> Exports:
        hit = self._by_elf.get(id(elf))
        if hit is not None:
            return hit[1]
        st = elf.symtab
        versions: dict[str, tuple[str | None, ...]] = {}
        if len(st):
            mask = st.export_mask()
            names = st.version_names
            for name, vi in zip(compress(st.names, mask), compress(st.version_index, mask)):
                if name:
                    version = names[vi][0]
                    versions[name] = versions.get(name, ()) + (version,)
        exports = Exports(versions)
        self._by_elf[id(elf)] = (elf, exports)  # the ElfInfo is kept so its id is not reused
        return exports
