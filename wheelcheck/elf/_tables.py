"""Bulk readers for the dynamic symbol and version tables, located through PT_DYNAMIC.

pyelftools is exact but slow on large symbol tables (446,395 symbols took 22.8 s with
iter_symbols()); here the fixed-size records are unpacked in bulk with struct.iter_unpack.
Everything is addressed through the program headers, so stripped section headers do not matter.
"""

from __future__ import annotations

import struct

from wheelcheck.errors import ElfFormatError

__all__ = ["AddressMap", "StringTable", "read_symbols", "count_symbols", "read_verneed", "read_verdef",
           "read_versym"]

VER_FLG_BASE = 0x1
VER_FLG_WEAK = 0x2



class AddressMap:
    """Maps virtual addresses to file offsets through the PT_LOAD segments."""

    def __init__(self, loads: list[tuple[int, int, int]]) -> None:
        self._loads = sorted(loads)  # (vaddr, offset, filesz)

    def offset(self, vaddr: int) -> int:
        for start, off, size in self._loads:
            if start <= vaddr < start + size:
                return off + (vaddr - start)
        raise ElfFormatError(f"address {vaddr:#x} is in no loaded segment")


class StringTable:
    def __init__(self, data: bytes, offset: int, size: int) -> None:
        end = offset + size
        if offset < 0 or size < 0 or end > len(data):
            raise ElfFormatError(f"the string table (offset {offset!r}, size {size!r}) lies outside the file")
        self._data = data
        self._base = offset
        self._end = end

    def get(self, index: int) -> str:
        start = self._base + index
        if start >= self._end:
            raise ElfFormatError(f"string index {index!r} lies outside the string table")
        stop = self._data.find(b"\0", start, self._end)
        if stop < 0:
            raise ElfFormatError(f"the string at index {index!r} of the string table is not terminated")
        return self._data[start:stop].decode("utf-8", "replace")


def count_symbols(data: bytes, amap: AddressMap, tags: dict[str, int], elf_class: int, endian: str,
                  hash_word: int = 4) -> int:
    """Number of .dynsym entries, from DT_GNU_HASH or DT_HASH (there is no size tag for it).

    ``hash_word`` is the DT_HASH entry size: 8 on 64-bit s390x, 4 everywhere else.
    """
    if "DT_GNU_HASH" in tags:
        off = amap.offset(tags["DT_GNU_HASH"])
        nbuckets, symoffset, bloom_size, _shift = struct.unpack_from(endian + "IIII", data, off)
        buckets_off = off + 16 + bloom_size * (elf_class // 8)
        buckets = struct.unpack_from(f"{endian}{nbuckets}I", data, buckets_off)
        last = max(buckets, default=0)
        if last < symoffset:
            return symoffset
        chain_off = buckets_off + 4 * nbuckets
        while True:
            (value,) = struct.unpack_from(endian + "I", data, chain_off + 4 * (last - symoffset))
            if value & 1:
                return last + 1
            last += 1
    if "DT_HASH" in tags:
        off = amap.offset(tags["DT_HASH"])
        _nbucket, nchain = struct.unpack_from(endian + ("QQ" if hash_word == 8 else "II"), data, off)
        return nchain
    return 0


def read_symbols(data: bytes, offset: int, count: int, elf_class: int, endian: str, strings: StringTable):
    """Columns (names, info, other, shndx, size) of the entries after the null symbol."""
    if elf_class == 64:
        fmt, entsize, cols = endian + "IBBHQQ", 24, (0, 1, 2, 3, 5)
    else:
        fmt, entsize, cols = endian + "IIIBBH", 16, (0, 3, 4, 5, 2)
    end = offset + count * entsize
    if count < 0 or end > len(data):
        raise ElfFormatError(f"the symbol table ({count!r} symbols at offset {offset!r}) runs past the end of the file")
    if count <= 1:
        return (), b"", b"", (), ()
    columns = list(zip(*struct.iter_unpack(fmt, data[offset + entsize:end])))
    name_idx, info, other, shndx, size = (columns[c] for c in cols)
    return tuple(map(strings.get, name_idx)), bytes(info), bytes(other), shndx, size


def read_versym(data: bytes, offset: int, count: int, endian: str) -> tuple[int, ...]:
    end = offset + 2 * count
    if end > len(data):
        raise ElfFormatError(f"the version symbol table ({count!r} entries at offset {offset!r}) runs past the end of the file")
    return struct.unpack_from(f"{endian}{count}H", data, offset)


def read_verneed(
    data: bytes, offset: int, number: int, endian: str, strings: StringTable
) -> list[tuple[str, str, int, int]]:
    """(file, version name, version index, flags) per vernaux entry."""
    out = []
    for _ in range(number):
        _ver, cnt, file_, aux, nxt = struct.unpack_from(endian + "HHIII", data, offset)
        filename = strings.get(file_)
        aux_off = offset + aux
        for _ in range(cnt):
            _hash, flags, other, name, anext = struct.unpack_from(endian + "IHHII", data, aux_off)
            out.append((filename, strings.get(name), other, flags))
            if not anext:
                break
            aux_off += anext
        if not nxt:
            break
        offset += nxt
    return out


def read_verdef(data: bytes, offset: int, number: int, endian: str, strings: StringTable) -> list[tuple[str, int, int]]:
    """(version name, version index, flags) per definition; the first aux names it."""
    out = []
    for _ in range(number):
        _ver, flags, ndx, cnt, _hash, aux, nxt = struct.unpack_from(endian + "HHHHIII", data, offset)
        if cnt:
            (name, _anext) = struct.unpack_from(endian + "II", data, offset + aux)
            out.append((strings.get(name), ndx, flags))
        if not nxt:
            break
        offset += nxt
    return out
