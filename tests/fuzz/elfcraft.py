"""The fields of a real ELF file, located so a mutation can aim at them, and room to write hostile tables.

``ElfLayout(data)`` finds (with pyelftools, independent of the code under test) the ELF header fields,
every program header field, every dynamic entry, the version-need and version-definition records and
their aux entries, the hash table headers and the first dynamic symbols. ``canvas`` is a read-only,
loaded range (the seed's ``fuzz_canvas`` array, else ``.rodata`` or ``.text``) where a shape may write
whole tables and point a dynamic tag at them: shared version chains, strings without end, floods of
program headers.
"""
from __future__ import annotations

import io
import struct
from dataclasses import dataclass

from elftools.elf.elffile import ELFFile

__all__ = ["Field", "ElfLayout", "CANVAS_SOURCE", "DT"]

DT = {"NULL": 0, "NEEDED": 1, "HASH": 4, "STRTAB": 5, "SYMTAB": 6, "STRSZ": 10, "SONAME": 14, "RPATH": 15,
      "RUNPATH": 29, "GNU_HASH": 0x6FFFFEF5, "VERSYM": 0x6FFFFFF0, "VERDEF": 0x6FFFFFFC, "VERDEFNUM": 0x6FFFFFFD,
      "VERNEED": 0x6FFFFFFE, "VERNEEDNUM": 0x6FFFFFFF}

# A seed library with versioned imports (libm), a dlopen-style soname string, C++-looking exports and a
# 256 kB read-only array the shapes may overwrite with tables of their own.
CANVAS_SOURCE = r"""
#include <math.h>
#include <string.h>
__attribute__((used, visibility("default"))) const unsigned char fuzz_canvas[262144] = {1, 2, 3};
static const char *plugin = "libfuzzplugin.so.1";
double fuzz_export(double x) { return exp(x) + log(x) + (double)strlen(plugin); }
double _ZN4fuzz5ShapeC2Ev(double x) { return sqrt(x); }
int _ZNSs4_Rep10_M_destroyERKSaIcE(int x) { return x + 1; }
"""


@dataclass(frozen=True)
class Field:
    name: str
    offset: int
    size: int  # bytes: 1, 2, 4 or 8


class ElfLayout:
    """Where the fields of one ELF file are, and how to write them back in its byte order."""

    def __init__(self, data: bytes) -> None:
        self.data = bytes(data)
        elf = ELFFile(io.BytesIO(self.data))
        self.endian = "<" if elf.little_endian else ">"
        self.elf_class = elf.elfclass
        self.word = 8 if self.elf_class == 64 else 4
        self.fields: list[Field] = []
        self.loads: list[tuple[int, int, int, int]] = []  # (vaddr, offset, filesz, flags)
        self.dynamic: list[tuple[int, int, int]] = []  # (entry offset, tag, value)
        self.sections: dict[str, tuple[int, int, int]] = {}  # name -> (offset, size, addr)
        self._header(elf)
        self._program_headers(elf)
        for section in elf.iter_sections():
            self.sections[section.name] = (section["sh_offset"], section["sh_size"], section["sh_addr"])
        self._version_tables()
        self._hash_tables()
        self._symbols()
        self.canvas = self._canvas(elf)

    # -- locating ---------------------------------------------------------------------------------------

    def _add(self, name: str, offset: int, size: int) -> None:
        if 0 <= offset and offset + size <= len(self.data):
            self.fields.append(Field(name, offset, size))

    def _header(self, elf: ELFFile) -> None:
        w = self.word
        self._add("e_ident[EI_CLASS]", 4, 1)
        self._add("e_ident[EI_DATA]", 5, 1)
        self._add("e_type", 16, 2)
        self._add("e_machine", 18, 2)
        self._add("e_phoff", 24 + w, w)
        self._add("e_flags", 24 + 3 * w, 4)
        self._add("e_phentsize", 24 + 3 * w + 6, 2)
        self._add("e_phnum", 24 + 3 * w + 8, 2)
        self.e_phoff = elf["e_phoff"]
        self.e_phentsize = elf["e_phentsize"]
        self.e_phnum = elf["e_phnum"]

    def _program_headers(self, elf: ELFFile) -> None:
        if self.elf_class == 64:
            layout = (("p_type", 0, 4), ("p_flags", 4, 4), ("p_offset", 8, 8), ("p_vaddr", 16, 8),
                      ("p_filesz", 32, 8), ("p_memsz", 40, 8), ("p_align", 48, 8))
        else:
            layout = (("p_type", 0, 4), ("p_offset", 4, 4), ("p_vaddr", 8, 4), ("p_filesz", 16, 4),
                      ("p_memsz", 20, 4), ("p_flags", 24, 4), ("p_align", 28, 4))
        for i, segment in enumerate(elf.iter_segments()):
            base = self.e_phoff + i * self.e_phentsize
            for name, at, size in layout:
                self._add(f"phdr[{i}].{name}({segment['p_type']})", base + at, size)
            if segment["p_type"] == "PT_LOAD":
                self.loads.append((segment["p_vaddr"], segment["p_offset"], segment["p_filesz"], segment["p_flags"]))
            if segment["p_type"] == "PT_DYNAMIC":
                step = 2 * self.word
                fmt = self.endian + ("qQ" if self.elf_class == 64 else "iI")
                for pos in range(segment["p_offset"], segment["p_offset"] + segment["p_filesz"] - step + 1, step):
                    tag, value = struct.unpack_from(fmt, self.data, pos)
                    self.dynamic.append((pos, tag, value))
                    self._add(f"dyn[{tag:#x}].d_tag", pos, self.word)
                    self._add(f"dyn[{tag:#x}].d_val", pos + self.word, self.word)
                    if tag == 0:
                        break

    def _version_tables(self) -> None:
        need = self.sections.get(".gnu.version_r")
        if need:
            pos, records = need[0], 0
            while records < 64:
                _v, cnt, _file, aux, nxt = struct.unpack_from(self.endian + "HHIII", self.data, pos)
                for name, at, size in (("vn_cnt", 2, 2), ("vn_file", 4, 4), ("vn_aux", 8, 4), ("vn_next", 12, 4)):
                    self._add(f"verneed[{records}].{name}", pos + at, size)
                aux_pos = pos + aux
                for k in range(min(cnt, 16)):
                    for name, at, size in (("vna_flags", 4, 2), ("vna_other", 6, 2), ("vna_name", 8, 4),
                                           ("vna_next", 12, 4)):
                        self._add(f"vernaux[{records}.{k}].{name}", aux_pos + at, size)
                    (step,) = struct.unpack_from(self.endian + "I", self.data, aux_pos + 12)
                    if not step:
                        break
                    aux_pos += step
                records += 1
                if not nxt:
                    break
                pos += nxt
        define = self.sections.get(".gnu.version_d")
        if define:
            pos, records = define[0], 0
            while records < 64:
                _v, _flags, _ndx, _cnt, _hash, aux, nxt = struct.unpack_from(self.endian + "HHHHIII", self.data, pos)
                for name, at, size in (("vd_flags", 2, 2), ("vd_ndx", 4, 2), ("vd_cnt", 6, 2), ("vd_aux", 12, 4),
                                       ("vd_next", 16, 4)):
                    self._add(f"verdef[{records}].{name}", pos + at, size)
                self._add(f"verdaux[{records}].vda_name", pos + aux, 4)
                records += 1
                if not nxt:
                    break
                pos += nxt

    def _hash_tables(self) -> None:
        gnu = self.sections.get(".gnu.hash")
        if gnu:
            for i, name in enumerate(("nbuckets", "symoffset", "bloom_size", "bloom_shift")):
                self._add(f"gnu_hash.{name}", gnu[0] + 4 * i, 4)
            nbuckets, _sym, bloom, _shift = struct.unpack_from(self.endian + "IIII", self.data, gnu[0])
            buckets = gnu[0] + 16 + bloom * self.word
            for i in range(min(nbuckets, 8)):
                self._add(f"gnu_hash.bucket[{i}]", buckets + 4 * i, 4)
            chain = buckets + 4 * nbuckets
            for i in range(0, max(0, min(8, (gnu[0] + gnu[1] - chain) // 4))):
                self._add(f"gnu_hash.chain[{i}]", chain + 4 * i, 4)
        sysv = self.sections.get(".hash")
        if sysv:
            self._add("hash.nbucket", sysv[0], 4)
            self._add("hash.nchain", sysv[0] + 4, 4)

    def _symbols(self) -> None:
        dynsym = self.sections.get(".dynsym")
        if not dynsym:
            return
        entsize = 24 if self.elf_class == 64 else 16
        layout = ((("st_name", 0, 4), ("st_info", 4, 1), ("st_shndx", 6, 2), ("st_size", 16, 8)) if entsize == 24
                  else (("st_name", 0, 4), ("st_size", 8, 4), ("st_info", 12, 1), ("st_shndx", 14, 2)))
        for i in range(1, min(dynsym[1] // entsize, 12)):
            for name, at, size in layout:
                self._add(f"dynsym[{i}].{name}", dynsym[0] + i * entsize + at, size)

    def _canvas(self, elf: ELFFile) -> tuple[int, int, int] | None:
        """(file offset, vaddr, size) of a loaded read-only range free to overwrite."""
        symtab = elf.get_section_by_name(".dynsym")
        if symtab is not None:
            for symbol in symtab.iter_symbols():
                if symbol.name == "fuzz_canvas" and symbol["st_size"]:
                    offset = self.offset_of(symbol["st_value"])
                    if offset is not None:
                        return offset, symbol["st_value"], symbol["st_size"]
        for name in (".rodata", ".text"):
            if name in self.sections:
                offset, size, addr = self.sections[name]
                if size >= 4096 and self.offset_of(addr) == offset:
                    return offset, addr, size
        return None

    # -- reading and writing ----------------------------------------------------------------------------

    def offset_of(self, vaddr: int) -> int | None:
        for start, offset, size, _flags in self.loads:
            if start <= vaddr < start + size:
                return offset + vaddr - start
        return None

    def dyn_entry(self, tag: int) -> int | None:
        """The file offset of the first dynamic entry with ``tag``."""
        return next((pos for pos, t, _v in self.dynamic if t == tag), None)

    def dyn_value(self, tag: int) -> int | None:
        return next((v for _p, t, v in self.dynamic if t == tag), None)

    def put(self, out: bytearray, offset: int, size: int, value: int) -> None:
        """Write ``value`` (truncated to ``size`` bytes) at ``offset`` in the file's byte order."""
        fmt = {1: "B", 2: "H", 4: "I", 8: "Q"}[size]
        struct.pack_into(self.endian + fmt, out, offset, value & ((1 << (8 * size)) - 1))

    def set_dyn(self, out: bytearray, tag: int, value: int, *, replacing: int | None = None) -> bool:
        """Set the value of dynamic tag ``tag`` (or turn the entry ``replacing`` into it); False if absent."""
        pos = self.dyn_entry(tag if replacing is None else replacing)
        if pos is None:
            return False
        self.put(out, pos, self.word, tag)
        self.put(out, pos + self.word, self.word, value)
        return True
