"""Identifier-like strings in the loaded, read-only bytes of an ELF file (names a dlsym may look up).

The dynamic string table is left out: every exported name is there by definition. Section headers
are not needed: the non-writable PT_LOAD segments hold .rodata (in its own segment with
-z separate-code, or beside .text with older linkers); code bytes rarely form a NUL-delimited name,
and a false hit only keeps a symbol visible, never breaks anything.
"""

from __future__ import annotations

import re
import struct

from wheelcheck.elf.elf_summary import PT_DYNAMIC, PT_LOAD, _header, _program_headers, file_ranges

__all__ = ["identifier_strings"]

_IDENT = re.compile(rb"(?<=\x00)[A-Za-z_][A-Za-z0-9_.$@]{1,200}(?=\x00)")
_PF_W = 0x2
_DT_STRTAB, _DT_STRSZ = 5, 10


def identifier_strings(data: bytes) -> frozenset[str]:
    header = _header(data)
    endian, elf_class = header["endian"], header["class"]
    phdrs = _program_headers(data, header, elf_class, endian)
    skip = _dynstr_range(data, phdrs, elf_class, endian)
    found: set[str] = set()
    read_only = [(offset, filesz) for ptype, flags, offset, _v, filesz, _a in phdrs
                 if ptype == PT_LOAD and not flags & _PF_W]
    for span in file_ranges(read_only, len(data)):  # each byte once, however many headers name it
        for start, end in _minus(span, skip):
            found.update(m.decode("ascii") for m in _IDENT.findall(data, start, end))
    return frozenset(found)


def _dynstr_range(data: bytes, phdrs, elf_class: int, endian: str) -> tuple[int, int] | None:
    dynamic = next(((off, size) for t, _f, off, _v, size, _a in phdrs if t == PT_DYNAMIC), None)
    if dynamic is None:
        return None
    fmt = endian + ("qQ" if elf_class == 64 else "iI")
    step = struct.calcsize(fmt)
    tags = {}
    for pos in range(dynamic[0], dynamic[0] + dynamic[1] - step + 1, step):
        tag, value = struct.unpack_from(fmt, data, pos)
        if tag == 0:
            break
        tags[tag] = value
    if _DT_STRTAB not in tags:
        return None
    for ptype, _flags, offset, vaddr, filesz, _align in phdrs:
        if ptype == PT_LOAD and vaddr <= tags[_DT_STRTAB] < vaddr + filesz:
            start = offset + tags[_DT_STRTAB] - vaddr
            return start, start + tags.get(_DT_STRSZ, 0)
    return None


def _minus(span: tuple[int, int], hole: tuple[int, int] | None) -> list[tuple[int, int]]:
    start, end = span
    if hole is None or hole[1] <= start or hole[0] >= end:
        return [span]
    return [(a, b) for a, b in ((start, hole[0]), (hole[1], end)) if b > a]
