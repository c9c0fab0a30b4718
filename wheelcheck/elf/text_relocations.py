"""How many dynamic relocations of a file with DT_TEXTREL patch its read-only segments.

DT_TEXTREL makes glibc's loader turn every non-writable segment writable while it relocates (and SELinux's
execmod refuses that). Usually some relocation does patch the code: an object built without -fPIC. Old GNU ld
for RISC-V also left the flag behind when relaxation had turned every such relocation into an R_RISCV_NONE
placeholder: the flag is then all there is, and the fix is a newer linker, not -fPIC. Counting tells them apart.

Read only for files with the flag, which are rare; the tables are the DT_RELA, DT_REL and DT_JMPREL ones.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

from wheelcheck.elf._tables import AddressMap
from wheelcheck.errors import ElfFormatError

__all__ = ["count_text_relocations", "relocation_tables", "RELOCATION_TAGS"]

# DT_RELA, DT_RELASZ, DT_REL, DT_RELSZ, DT_PLTRELSZ, DT_PLTREL, DT_JMPREL, DT_RELR
RELOCATION_TAGS = {7: "DT_RELA", 8: "DT_RELASZ", 17: "DT_REL", 18: "DT_RELSZ", 2: "DT_PLTRELSZ", 20: "DT_PLTREL",
                   23: "DT_JMPREL", 36: "DT_RELR"}
_DT_RELA = 7
_MAX_TABLE = 64 << 20  # a table claiming more is not counted (the flag alone is reported)


def count_text_relocations(read: Callable[[int, int], bytes], size: int, tags: dict[str, int], loads: AddressMap,
                           unwritable: list[tuple[int, int]], elf_class: int, endian: str,
                           machine: str) -> int | None:
    """Relocations, other than the R_*_NONE that do nothing, whose target lies in ``unwritable`` (address
    ranges of the non-writable PT_LOADs); None when that cannot be told (packed DT_RELR relocations, which
    this does not decode, or tables outside the file)."""
    if "DT_RELR" in tags:
        return None
    tables = relocation_tables(tags, loads, size, elf_class, _MAX_TABLE)
    if tables is None:
        return None
    word = "Q" if elf_class == 64 else "I"
    # R_*_NONE is type 0 everywhere; MIPS64 packs three types in r_info, so there only an all-zero r_info is one
    type_mask = 0xFFFFFFFF if elf_class == 64 else 0xFF
    if machine == "EM_MIPS" and elf_class == 64:
        type_mask = (1 << 64) - 1
    record = struct.Struct(f"{endian}{word}{word}")
    seen: set[int] = set()
    count = 0
    for offset, length, entry in tables:
        try:
            data = read(offset, length)
        except ElfFormatError:
            return None
        for at in range(0, length, entry):
            target, info = record.unpack_from(data, at)
            if info & type_mask and (offset + at) not in seen and _inside(target, unwritable):
                seen.add(offset + at)
                count += 1
    return count


def relocation_tables(tags: dict[str, int], loads: AddressMap, size: int, elf_class: int,
                      max_table: int | None = None) -> list[tuple[int, int, int]] | None:
    """(file offset, size, entry size) of the DT_RELA, DT_REL and DT_JMPREL tables (a table listed twice, DT_JMPREL
    inside DT_RELA, is listed twice here too); None when one lies outside the file or is larger than ``max_table``."""
    tables = []
    for start_tag, size_tag, rela in (("DT_RELA", "DT_RELASZ", True), ("DT_REL", "DT_RELSZ", False),
                                      ("DT_JMPREL", "DT_PLTRELSZ", tags.get("DT_PLTREL") == _DT_RELA)):
        if start_tag in tags and tags.get(size_tag):
            entry = (24 if rela else 16) if elf_class == 64 else (12 if rela else 8)
            try:
                offset = loads.offset(tags[start_tag])
            except ElfFormatError:
                return None
            length = tags[size_tag] - tags[size_tag] % entry
            if (max_table is not None and length > max_table) or offset + length > size:
                return None
            tables.append((offset, length, entry))
    return tables


def _inside(address: int, ranges: list[tuple[int, int]]) -> bool:
    return any(start <= address < end for start, end in ranges)
