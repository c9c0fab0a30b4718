"""Which of a file's linker-made section bounds (``__start_<sec>``, ``__stop_<sec>``) its own code reaches through a
dynamic relocation, and so through the loader's lookup.

Every library that has a section named like a C identifier exports the two bounds, and many libraries share such
names (upb's ``__start_linkarr_upb_AllExts`` is in protobuf, tensorflow and jaxlib). Code that declares a bound
hidden is linked to its own section directly, and no other library asks for the name: the copies never meet. Code
that reaches it through the GOT (a default-visibility declaration, as plain ``extern`` gives) leaves a relocation
the loader resolves by name, to the first copy in scope: even a protected definition does not keep it (glibc looks
for a copy in the executable first), so under another library's global copy it walks that library's section.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator

from wheelcheck.elf._tables import AddressMap
from wheelcheck.elf.text_relocations import relocation_tables

__all__ = ["BOUND_PREFIXES", "relocated_bounds"]

BOUND_PREFIXES = ("__start_", "__stop_")


def relocated_bounds(pieces: Callable[[int, int], Iterator[bytes]], size: int, tags: dict[str, int], amap: AddressMap,
                     bounds: dict[int, str], elf_class: int, endian: str) -> tuple[str, ...]:
    """The names of ``bounds`` (dynamic symbol index -> name) some dynamic relocation of the file refers to, sorted.
    A table that cannot be read counts as referring to all of them (the collision then stays a finding)."""
    tables = relocation_tables(tags, amap, size, elf_class)
    if tables is None:
        return tuple(sorted(bounds.values()))
    found: set[int] = set()
    for offset, length, entry in tables:
        found |= _symbols_referred(pieces(offset, offset + length), entry, elf_class, endian, set(bounds))
    return tuple(sorted(bounds[i] for i in found))


def _symbols_referred(data: Iterator[bytes], entry: int, elf_class: int, endian: str, wanted: set[int]) -> set[int]:
    """Which of the symbol indices ``wanted`` the relocation records in ``data`` (one table, in pieces) refer to.
    64-bit: r_info's high word is the index, compared at C speed over a column of the table."""
    found: set[int] = set()
    carry = b""
    for piece in data:
        block = carry + piece
        usable = len(block) - len(block) % entry
        carry = block[usable:]
        records = block[:usable]
        if elf_class == 64:
            words = array("I", records)  # r_offset lo/hi, r_info lo/hi[, r_addend lo/hi]
            if (endian == "<") != (array("I", b"\x01\x00\x00\x00")[0] == 1):
                words.byteswap()
            per = entry // 4
            high = words[3::per] if endian == "<" else words[2::per]  # the symbol index of each record
            found |= {i for i in wanted if i in high}
        else:
            info_at = 4
            for at in range(0, usable, entry):
                info = int.from_bytes(records[at + info_at:at + info_at + 4], "little" if endian == "<" else "big")
                if info >> 8 in wanted:
                    found.add(info >> 8)
        if found == wanted:
            break
    return found
