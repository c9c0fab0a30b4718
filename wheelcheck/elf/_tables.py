"""Bulk readers for the dynamic symbol and version tables, located through PT_DYNAMIC.

pyelftools is exact but slow on large symbol tables (446,395 symbols took 22.8 s with
iter_symbols()); here the fixed-size records are unpacked in bulk with struct.iter_unpack.
Everything is addressed through the program headers, so stripped section headers do not matter.

Every table is the input's: a walk visits no more records than the file could hold without overlap
(records that share bytes, such as version-need chains several records point into, would otherwise
multiply the work), and the names decoded from the string table cost no more than a few times its size.
"""

from __future__ import annotations

import struct
import sys
from array import array

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


# Decoded names may overlap (a linker may merge "foo" into the tail of "_foo"), but not by much: past
# this many times the table's size (plus a floor for small tables), the indexes are an attack.
_DECODE_FACTOR = 8
_DECODE_FLOOR = 4 << 20


class StringTable:
    """A NUL-terminated string table; each distinct index is decoded once, within a byte budget."""

    def __init__(self, data: bytes, offset: int, size: int) -> None:
        end = offset + size
        if offset < 0 or size < 0 or end > len(data):
            raise ElfFormatError(f"the string table (offset {offset!r}, size {size!r}) lies outside the file")
        self._data = data
        self._base = offset
        self._end = end
        self._decoded: dict[int, str] = {}
        self._budget = _DECODE_FACTOR * size + _DECODE_FLOOR

    def get(self, index: int) -> str:
        found = self._decoded.get(index)
        if found is not None:
            return found
        start = self._base + index
        if start >= self._end:
            raise ElfFormatError(f"string index {index!r} lies outside the string table")
        stop = self._data.find(b"\0", start, self._end)
        if stop < 0:
            raise ElfFormatError(f"the string at index {index!r} of the string table is not terminated")
        self._budget -= stop - start + 1
        if self._budget < 0:
            raise ElfFormatError(f"string table indexes overlap far more than a linker would make them "
                                 f"(at index {index!r})")
        text = self._decoded[index] = self._data[start:stop].decode("utf-8", "replace")
        return text


def count_symbols(data: bytes, amap: AddressMap, tags: dict[str, int], elf_class: int, endian: str,
                  hash_word: int = 4) -> int:
    """Number of .dynsym entries, from DT_GNU_HASH or DT_HASH (there is no size tag for it).

    ``hash_word`` is the DT_HASH entry size: 8 on 64-bit s390x, 4 everywhere else.
    """
    if "DT_GNU_HASH" in tags:
        off = amap.offset(tags["DT_GNU_HASH"])
        nbuckets, symoffset, bloom_size, _shift = struct.unpack_from(endian + "IIII", data, off)
        buckets_off = off + 16 + bloom_size * (elf_class // 8)
        chain_off = buckets_off + 4 * nbuckets
        if chain_off > len(data):
            raise ElfFormatError(f"the GNU hash buckets ({nbuckets!r} at offset {buckets_off!r}) run past the end of the file")
        last = _max_word(data, buckets_off, nbuckets, endian)
        if last < symoffset:
            return symoffset
        # the chain of the last bucket ends at the first word with bit 0 set: find it at C speed in the
        # bytes that hold bit 0 of each word (the first byte of a little-endian word, the last of a big one)
        word = chain_off + 4 * (last - symoffset)
        low_bytes = data[word:len(data) - 3:4] if endian == "<" else data[word + 3::4]
        ends = low_bytes.translate(_ODD).find(1)
        if ends < 0:
            raise ElfFormatError(f"the GNU hash chain of symbol {last!r} runs past the end of the file")
        return last + ends + 1
    if "DT_HASH" in tags:
        off = amap.offset(tags["DT_HASH"])
        _nbucket, nchain = struct.unpack_from(endian + ("QQ" if hash_word == 8 else "II"), data, off)
        return nchain
    return 0


_ODD = bytes(i & 1 for i in range(256))


def _max_word(data: bytes, offset: int, count: int, endian: str) -> int:
    words = array("I")  # 4 bytes on the platforms wheelcheck runs on; 1 byte per byte of input, not a tuple
    words.frombytes(data[offset:offset + 4 * count])
    if (endian == "<") != (sys.byteorder == "little"):
        words.byteswap()
    return max(words, default=0)


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


class _Visits:
    """Counts the records a walk visits; more than the file holds side by side means they overlap."""

    def __init__(self, data: bytes, record_size: int, table: str) -> None:
        self.left = len(data) // record_size
        self.table = table

    def one(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise ElfFormatError(f"the {self.table} records overlap (more visits than the file can hold)")


def read_verneed(
    data: bytes, offset: int, number: int, endian: str, strings: StringTable
) -> list[tuple[str, str, int, int]]:
    """(file, version name, version index, flags) per vernaux entry."""
    out = []
    visits = _Visits(data, 16, "version need")  # Elf_Verneed and Elf_Vernaux are both 16 bytes
    for _ in range(number):
        visits.one()
        _ver, cnt, file_, aux, nxt = struct.unpack_from(endian + "HHIII", data, offset)
        filename = strings.get(file_)
        aux_off = offset + aux
        for _ in range(cnt):
            visits.one()
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
    visits = _Visits(data, 20, "version definition")  # sizeof(Elf_Verdef)
    for _ in range(number):
        visits.one()
        _ver, flags, ndx, cnt, _hash, aux, nxt = struct.unpack_from(endian + "HHHHIII", data, offset)
        if cnt:
            (name, _anext) = struct.unpack_from(endian + "II", data, offset + aux)
            out.append((strings.get(name), ndx, flags))
        if not nxt:
            break
        offset += nxt
    return out
