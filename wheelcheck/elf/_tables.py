"""Bulk readers for the dynamic symbol and version tables, located through PT_DYNAMIC.

pyelftools is exact but slow on large symbol tables (446,395 symbols took 22.8 s with iter_symbols());
here each column of the fixed-size records is cut out at C speed (a strided memoryview), and the string
table is split once rather than searched once per symbol. Everything is addressed through the program
headers, so stripped section headers do not matter; bytes come from a SparseFile, so the file need not
be in memory.

Every table is the input's: a walk visits no more records than the file could hold without overlap
(records that share bytes, such as version-need chains several records point into, would otherwise
multiply the work), and the names decoded from the string table cost no more than a few times its size.
"""

from __future__ import annotations

import re
import struct
import sys
from array import array
from collections.abc import Callable
from itertools import compress, repeat
from operator import add, and_, floordiv, sub
from typing import NamedTuple

from wheelcheck.elf._kept_bytes import SparseFile
from wheelcheck.errors import ElfFormatError

__all__ = ["AddressMap", "StringTable", "SymbolColumns", "read_symbols", "count_symbols", "read_verneed",
           "read_verdef", "read_versym", "translate_versions", "undefined_versioned"]

VER_FLG_BASE = 0x1
VER_FLG_WEAK = 0x2
_NATIVE = "<" if sys.byteorder == "little" else ">"
_MAX_STRING = 16 << 20  # no name a check reads is longer; a table with a longer NUL-free run is malformed
_PART = 4 << 20  # a larger string table is cut into names a part at a time (its bytes, their text and the names'
# positions are held a part at a time: parts of 16 MiB raised tensorflow's peak memory by 25 MiB, and were slower)
_OVERLAP = 1 << 20  # the bytes after a part kept with it, for the names that start in it and end after
_WORDS = 1 << 20  # hash words read at a time (4 MiB): a table claiming the whole file is read in parts
# Decoded names may overlap (a linker may merge "foo" into the tail of "_foo"), but not by much: past
# this many times the table's size (plus a floor for small tables), the indexes are an attack.
_DECODE_FACTOR = 8
_DECODE_FLOOR = 4 << 20


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
    """The dynamic string table: single strings on demand (each distinct index decoded once), the symbol
    names all at once; every name decoded is paid from one byte budget."""

    def __init__(self, sparse: SparseFile, offset: int, size: int) -> None:
        end = offset + size
        if offset < 0 or size < 0 or end > sparse.size:
            raise ElfFormatError(f"the string table (offset {offset!r}, size {size!r}) lies outside the file")
        self._sparse = sparse
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
        want = 256
        while True:
            stop = min(self._end, start + want)
            data = self._sparse.read(start, stop - start)
            nul = data.find(b"\0")
            if nul >= 0:
                self._spend(nul + 1, index)
                text = self._decoded[index] = bytes(data[:nul]).decode("utf-8", "replace")
                return text
            if stop == self._end:
                raise ElfFormatError(f"the string at index {index!r} of the string table is not terminated")
            if want > _MAX_STRING:
                raise ElfFormatError(f"the string at index {index!r} of the string table is longer than "
                                     f"{_MAX_STRING} bytes")
            want *= 4

    def _spend(self, count: int, index: int | Callable[[], int]) -> None:
        """Pay ``count`` decoded bytes; ``index`` (or its value, made only for the message) names the string."""
        self._budget -= count
        if self._budget < 0:
            raise ElfFormatError(f"string table indexes overlap far more than a linker would make them "
                                 f"(at index {index() if callable(index) else index!r})")

    def _cut_names(self, table, starts: list[int], end: int, index_of: Callable[[int], int]) -> list[str]:
        """The NUL-terminated names at ``starts`` in ``table`` (each ends before ``end``), paid for first;
        ``index_of(k)``: the string table index of ``starts[k]``, for messages."""
        ends = list(map(table.find, repeat(b"\0"), starts, repeat(end)))
        if ends and min(ends) < 0:
            raise ElfFormatError(f"a string of the string table (index {index_of(ends.index(min(ends)))!r}) is "
                                 f"not terminated")
        self._spend(sum(ends) - sum(starts) + len(starts), lambda: max(map(index_of, range(len(starts))), default=0))
        if not starts:
            return []
        low, high = min(starts), max(ends)
        try:  # nearly every table is ASCII: decode the span once and slice the text (one object per name, not two)
            with memoryview(table) as view:
                text = str(view[low:high], "ascii")
        except UnicodeDecodeError:
            return [table[a:b].decode("utf-8", "replace") for a, b in zip(starts, ends)]
        return list(map(text.__getitem__, map(slice, map(sub, starts, repeat(low)), map(sub, ends, repeat(low)))))

    def names(self, offsets: array) -> tuple[str, ...]:
        """The strings at ``offsets`` (into this table), as ``get`` would give them.

        Names are cut from the table's bytes (never a decoded copy of it) in the order asked, so that
        consecutive names lie side by side in memory: sorting and scanning them later is twice as fast as
        with names made in table order. A table larger than ``_PART`` is taken a part at a time, in one pass
        (memory: one part, not the table), the names of each part made in the order asked.
        """
        if not offsets:
            return ()
        size = self._end - self._base
        highest = max(offsets)
        if highest >= size:
            raise ElfFormatError(f"string index {highest!r} lies outside the string table")
        if size <= _PART + _OVERLAP:
            table, shift = self._sparse.span(self._base, self._end)
            if shift:  # assembled apart from the kept prefix, which nothing needs any more
                self._sparse.release_prefix()
            at, end = self._base - shift, self._end - shift
            if table.rfind(b"\0", at, end) < at + highest:
                raise ElfFormatError(f"the string at index {highest!r} of the string table is not terminated")
            return tuple(self._cut_names(table, list(map(add, offsets, repeat(at))), end, offsets.__getitem__))
        return tuple(self._names_by_part(offsets, size))

    def _names_by_part(self, offsets: array, size: int) -> list[str]:
        step = max(_PART, -(-size // 256))  # at most 256 parts: a part's number is one byte
        count = (size + step - 1) // step
        part_of = bytes(map(floordiv, offsets, repeat(step)))
        names: list = [None] * len(offsets)
        buffer, part = bytearray(), 0
        pieces = self._sparse.pieces(self._base, self._end)
        self._sparse.release_prefix()  # the pieces come from here on (fetched again where not kept)
        for piece in pieces:
            buffer += piece
            while len(buffer) >= step + _OVERLAP:
                self._cut(buffer, part, step, _indices_of(part, part_of), offsets, names, last=False)
                del buffer[:step]
                part += 1
        while part < count:
            self._cut(buffer, part, step, _indices_of(part, part_of), offsets, names, last=True)
            del buffer[:step]
            part += 1
        return names

    def _cut(self, buffer: bytearray, part: int, step: int, which: list[int], offsets: array, names: list,
             last: bool) -> None:
        """The names ``which`` (indices into ``offsets``), starting in part ``part`` (of ``step`` bytes each),
        from ``buffer`` (which holds the part and what follows it)."""
        starts = list(map(sub, map(offsets.__getitem__, which), repeat(part * step)))
        if starts and max(starts) <= buffer.rfind(b"\0"):  # every name ends in the buffer: cut them all
            cut = self._cut_names(buffer, starts, len(buffer), lambda k: offsets[which[k]])
            any(map(names.__setitem__, which, cut))  # names[i] = name for each, at C speed (each gives None)
            return
        for i, at in zip(which, starts):
            stop = buffer.find(b"\0", at)
            if stop >= 0:
                self._spend(stop - at + 1, offsets[i])
                names[i] = buffer[at:stop].decode("utf-8", "replace")
            elif last:
                raise ElfFormatError(f"the string at index {offsets[i]!r} of the string table is not terminated")
            else:
                names[i] = self.get(offsets[i])  # longer than the overlap: read on its own


def _indices_of(part: int, part_of: bytes) -> list[int]:
    """The positions of byte ``part`` in ``part_of``, ascending: a search at C speed that makes an index object
    only where it matches (not one per position, as compressing a range does), for one part at a time."""
    return [m.start() for m in re.finditer(re.escape(bytes([part])), part_of)]


class SymbolColumns(NamedTuple):
    name_offsets: array  # st_name
    info: bytes  # st_info: bind << 4 | type
    other: bytes  # st_other
    defined: bytes  # 1 where st_shndx != SHN_UNDEF
    sizes: array  # st_size, as 'Q'


def count_symbols(sparse: SparseFile, amap: AddressMap, tags: dict[str, int], elf_class: int, endian: str,
                  hash_word: int = 4) -> int:
    """Number of .dynsym entries, from DT_GNU_HASH or DT_HASH (there is no size tag for it).

    ``hash_word`` is the DT_HASH entry size: 8 on 64-bit s390x, 4 everywhere else.
    """
    if "DT_GNU_HASH" in tags:
        off = amap.offset(tags["DT_GNU_HASH"])
        nbuckets, symoffset, bloom_size, _shift = struct.unpack(endian + "IIII", sparse.read(off, 16))
        buckets_off = off + 16 + bloom_size * (elf_class // 8)
        chain_off = buckets_off + 4 * nbuckets
        if chain_off > sparse.size:
            raise ElfFormatError(f"the GNU hash buckets ({nbuckets!r} at offset {buckets_off!r}) run past the end "
                                 f"of the file")
        last = max((max(_words(sparse.read(at, min(4 * _WORDS, chain_off - at)), "I", endian), default=0)
                    for at in range(buckets_off, chain_off, 4 * _WORDS)), default=0)
        if last < symoffset:  # nothing is hashed: symoffset counts only what ld says it skipped
            return max(symoffset, _count_from_layout(sparse, amap, tags, elf_class, endian, hash_word))
        # the chain of the last bucket ends at the first word with bit 0 set: find it at C speed in the
        # bytes that hold bit 0 of each word (the first byte of a little-endian word, the last of a big one)
        word, first, want = chain_off + 4 * (last - symoffset), last, 64
        while True:  # each step reads further into the file (at most _WORDS words): bounded by its end
            count = min(want, (sparse.size - word) // 4)
            if count <= 0:
                raise ElfFormatError(f"the GNU hash chain of symbol {first!r} runs past the end of the file")
            words = sparse.read(word, 4 * count)
            ends = (words[0::4] if endian == "<" else words[3::4]).translate(_ODD).find(1)
            if ends >= 0:
                return last + ends + 1
            last, word, want = last + count, word + 4 * count, min(4 * want, _WORDS)
    return _nchain(sparse, amap, tags, endian, hash_word) if "DT_HASH" in tags else 0


def _nchain(sparse: SparseFile, amap: AddressMap, tags: dict[str, int], endian: str, hash_word: int) -> int:
    """DT_HASH's chain count: one per symbol."""
    off = amap.offset(tags["DT_HASH"])
    return struct.unpack(endian + ("QQ" if hash_word == 8 else "II"), sparse.read(off, 2 * hash_word))[1]


_ODD = bytes(i & 1 for i in range(256))
# the tables a linker puts beside .dynsym: one of them starts where it ends
_NEIGHBOURS = ("DT_STRTAB", "DT_VERSYM", "DT_GNU_HASH", "DT_HASH", "DT_VERNEED", "DT_VERDEF")


def _count_from_layout(sparse: SparseFile, amap: AddressMap, tags: dict[str, int], elf_class: int, endian: str,
                       hash_word: int) -> int:
    """The .dynsym entries of a file whose DT_GNU_HASH hashes none of them (an executable exporting nothing):
    GNU ld then writes the header 1, 1, 1, 0 whatever the table holds. DT_HASH counts them where there is one;
    else the table ends where the next table beside it begins (GNU ld: .dynstr; lld: .gnu.version), each entry
    read there naming a string of .dynstr (the first that does not ends the count); 0 when neither tells."""
    if "DT_HASH" in tags:
        return _nchain(sparse, amap, tags, endian, hash_word)
    entsize = 24 if elf_class == 64 else 16
    start = amap.offset(tags["DT_SYMTAB"])
    starts = [amap.offset(tags[t]) for t in _NEIGHBOURS if t in tags]
    end = min((at for at in starts if at > start), default=None)
    if end is None or (end - start) % entsize:
        return 0
    count = (end - start) // entsize
    if "DT_VERSYM" in tags:  # one 16-bit entry per symbol: where it too ends before its neighbour, the lesser
        versym = amap.offset(tags["DT_VERSYM"])
        versym_end = min((at for at in starts if at > versym), default=None)
        if versym_end is not None:
            count = min(count, (versym_end - versym) // 2)
    strsz = tags.get("DT_STRSZ", 0)
    step = _WORDS // (entsize // 4)  # entries read at a time: what is not a symbol ends the count early
    for first in range(0, count, step):
        entries = min(step, count - first)
        names = _words(sparse.read(start + first * entsize, entries * entsize), "I", endian)[::entsize // 4]
        bad = next((i for i, name in enumerate(names) if name >= strsz), None)  # st_name, the first word
        if bad is not None:
            return first + bad
    return count


def read_symbols(sparse: SparseFile, offset: int, count: int, elf_class: int, endian: str) -> SymbolColumns:
    """The columns of the entries after the null symbol."""
    entsize = 24 if elf_class == 64 else 16
    if count < 0 or offset + count * entsize > sparse.size:
        raise ElfFormatError(f"the symbol table ({count!r} symbols at offset {offset!r}) runs past the end of the "
                             f"file")
    if count <= 1:
        return SymbolColumns(array("I"), b"", b"", b"", array("Q"))
    raw = bytes(sparse.read(offset + entsize, (count - 1) * entsize))
    view = memoryview(raw)
    if elf_class == 64:  # st_name:4 st_info:1 st_other:1 st_shndx:2 st_value:8 st_size:8
        names, shndx = _column(view, "I", 0, 6, endian), _column(view, "H", 3, 12, endian)
        sizes = _column(view, "Q", 2, 3, endian)
        info, other = raw[4::24], raw[5::24]
    else:  # st_name:4 st_value:4 st_size:4 st_info:1 st_other:1 st_shndx:2
        names, shndx = _column(view, "I", 0, 4, endian), _column(view, "H", 7, 8, endian)
        sizes = array("Q", _column(view, "I", 2, 4, endian))
        info, other = raw[12::16], raw[13::16]
    return SymbolColumns(names, info, other, bytes(map(bool, shndx)), sizes)


def symbol_values(sparse: SparseFile, offset: int, count: int, elf_class: int, endian: str) -> array:
    """st_value of the entries after the null symbol (read only where an analysis needs addresses)."""
    entsize = 24 if elf_class == 64 else 16
    if count <= 1:
        return array("Q")
    view = memoryview(bytes(sparse.read(offset + entsize, (count - 1) * entsize)))
    return _column(view, "Q", 1, 3, endian) if elf_class == 64 else array("Q", _column(view, "I", 1, 4, endian))


def _column(view: memoryview, code: str, first: int, step: int, endian: str) -> array:
    """Every ``step``-th item of type ``code`` from item ``first``: one field of every record."""
    out = array(code)
    out.frombytes(view.cast(code)[first::step].tobytes())  # type: ignore[call-overload]  # code: an array typecode
    if endian != _NATIVE:
        out.byteswap()
    return out


def _words(data: bytes, code: str, endian: str) -> array:
    out = array(code)
    out.frombytes(bytes(data))
    if endian != _NATIVE:
        out.byteswap()
    return out


def read_versym(sparse: SparseFile, offset: int, count: int, endian: str) -> array:
    if offset + 2 * count > sparse.size:
        raise ElfFormatError(f"the version symbol table ({count!r} entries at offset {offset!r}) runs past the "
                             f"end of the file")
    return _words(sparse.read(offset, 2 * count), "H", endian)


def translate_versions(versym: array, slot: dict[int, int]) -> array:
    """The version column: each .gnu.version entry (hidden bit dropped) mapped through ``slot`` (0 if absent)."""
    if not versym:
        return array("H")
    table = [slot.get(v & 0x7FFF, 0) for v in range(max(versym) + 1)]
    return array("H", map(table.__getitem__, versym))


def undefined_versioned(defined: bytes, version_index: array):
    """Indices of the undefined symbols that carry a version."""
    undefined = defined.translate(_UNDEFINED)
    return compress(range(len(defined)), map(and_, undefined, map(bool, version_index)))


_UNDEFINED = bytes([1]) + bytes(255)


class _Visits:
    """Counts the records a walk visits; more than the file holds side by side means they overlap."""

    def __init__(self, size: int, record_size: int, table: str) -> None:
        self.left = size // record_size
        self.table = table

    def one(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise ElfFormatError(f"the {self.table} records overlap (more visits than the file can hold)")


def read_verneed(
    sparse: SparseFile, offset: int, number: int, endian: str, strings: StringTable
) -> list[tuple[str, str, int, int]]:
    """(file, version name, version index, flags) per vernaux entry."""
    out = []
    visits = _Visits(sparse.size, 16, "version need")  # Elf_Verneed and Elf_Vernaux are both 16 bytes
    for _ in range(number):
        visits.one()
        _ver, cnt, file_, aux, nxt = struct.unpack(endian + "HHIII", sparse.read(offset, 16))
        filename = strings.get(file_)
        aux_off = offset + aux
        for _ in range(cnt):
            visits.one()
            _hash, flags, other, name, anext = struct.unpack(endian + "IHHII", sparse.read(aux_off, 16))
            out.append((filename, strings.get(name), other, flags))
            if not anext:
                break
            aux_off += anext
        if not nxt:
            break
        offset += nxt
    return out


def read_verdef(sparse: SparseFile, offset: int, number: int, endian: str,
                strings: StringTable) -> list[tuple[str, int, int]]:
    """(version name, version index, flags) per definition; the first aux names it."""
    out = []
    visits = _Visits(sparse.size, 20, "version definition")  # sizeof(Elf_Verdef)
    for _ in range(number):
        visits.one()
        _ver, flags, ndx, cnt, _hash, aux, nxt = struct.unpack(endian + "HHHHIII", sparse.read(offset, 20))
        if cnt:
            (name, _anext) = struct.unpack(endian + "II", sparse.read(offset + aux, 8))
            out.append((strings.get(name), ndx, flags))
        if not nxt:
            break
        offset += nxt
    return out
