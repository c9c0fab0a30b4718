"""Summarise one ELF file from its bytes: pyelftools for the structure, bulk readers for the tables."""

from __future__ import annotations

import io
import struct

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from wheelcheck.elf import _tables
from wheelcheck.elf.arch import arch_of, x86_isa_level
from wheelcheck.elf.model import ElfInfo, Symbol, VersionNeed
from wheelcheck.errors import BadElfError

__all__ = ["ELF_MAGIC", "is_elf", "summarize"]

ELF_MAGIC = b"\x7fELF"

_DT = {
    1: "DT_NEEDED", 4: "DT_HASH", 5: "DT_STRTAB", 6: "DT_SYMTAB", 10: "DT_STRSZ", 11: "DT_SYMENT",
    14: "DT_SONAME", 15: "DT_RPATH", 22: "DT_TEXTREL", 29: "DT_RUNPATH", 30: "DT_FLAGS",
    0x6FFFFEF5: "DT_GNU_HASH", 0x6FFFFFF0: "DT_VERSYM", 0x6FFFFFFC: "DT_VERDEF",
    0x6FFFFFFD: "DT_VERDEFNUM", 0x6FFFFFFE: "DT_VERNEED", 0x6FFFFFFF: "DT_VERNEEDNUM",
}
_STRING_TAGS = ("DT_NEEDED", "DT_SONAME", "DT_RPATH", "DT_RUNPATH")
DF_TEXTREL = 0x4
PF_X = 0x1


def is_elf(head: bytes) -> bool:
    return head[:4] == ELF_MAGIC


def summarize(data: bytes, path: str) -> ElfInfo:
    """Summarise the ELF file ``data`` found at ``path``; BadElfError if it is not a sound ELF."""
    if not is_elf(data):
        raise BadElfError(path, "not an ELF file (no ELF magic)")
    try:
        return _summarize(data, path)
    except BadElfError:
        raise
    except (ELFError, struct.error, ValueError, IndexError, KeyError, AttributeError) as exc:
        raise BadElfError(path, f"truncated or malformed ELF file ({exc})") from None


def _summarize(data: bytes, path: str) -> ElfInfo:
    elf = ELFFile(io.BytesIO(data))
    header = elf.header
    endian = "<" if elf.little_endian else ">"
    elf_class = elf.elfclass
    arch, arch_problem = arch_of(header["e_machine"], elf_class, elf.little_endian, header["e_flags"])

    loads: list[tuple[int, int, int]] = []
    dynamic: tuple[int, int] | None = None
    interpreter = None
    gnu_stack = exec_stack = False
    notes = []
    for index in range(header["e_phnum"]):
        ph = elf.get_segment(index)
        ptype = ph["p_type"]
        if ptype == "PT_LOAD":
            loads.append((ph["p_vaddr"], ph["p_offset"], ph["p_filesz"]))
        elif ptype == "PT_DYNAMIC":
            dynamic = (ph["p_offset"], ph["p_filesz"])
        elif ptype == "PT_INTERP":
            interpreter = ph.get_interp_name()
        elif ptype == "PT_GNU_STACK":
            gnu_stack = True
            exec_stack = bool(ph["p_flags"] & PF_X)
        elif ptype == "PT_NOTE" and arch == "x86_64":
            notes.append(ph)
        if ph["p_offset"] + ph["p_filesz"] > len(data) and ptype in ("PT_LOAD", "PT_DYNAMIC", "PT_NOTE"):
            raise BadElfError(path, f"truncated ELF file: a {ptype} segment ends past byte {len(data)}")
    if not gnu_stack and header["e_type"] in ("ET_DYN", "ET_EXEC"):
        exec_stack = True  # without PT_GNU_STACK the loader assumes an executable stack
    isa_level, isa_problem = x86_isa_level(notes) if notes else (None, None)

    base = dict(
        path=path, size=len(data), elf_class=elf_class, endianness="little" if elf.little_endian else "big",
        machine=header["e_machine"], osabi=header["e_ident"]["EI_OSABI"], elf_type=header["e_type"],
        arch=arch, arch_problem=arch_problem, interpreter=interpreter, isa_level=isa_level,
        isa_problem=isa_problem, gnu_stack=gnu_stack, exec_stack=exec_stack,
    )
    if dynamic is None:
        return ElfInfo(**base)
    return ElfInfo(**base, **_read_dynamic(data, dynamic, loads, elf_class, endian))


def _read_dynamic(data: bytes, dynamic: tuple[int, int], loads, elf_class: int, endian: str) -> dict:
    fmt = endian + ("qQ" if elf_class == 64 else "iI")
    entsize = struct.calcsize(fmt)
    off, size = dynamic
    tags: dict[str, int] = {}
    strings_at: dict[str, list[int]] = {t: [] for t in _STRING_TAGS}
    for pos in range(off, off + size - entsize + 1, entsize):
        tag, value = struct.unpack_from(fmt, data, pos)
        if tag == 0:
            break
        name = _DT.get(tag)
        if name in strings_at:
            strings_at[name].append(value)
        elif name is not None:
            tags[name] = value
    amap = _tables.AddressMap(loads)
    strtab = _tables.StringTable(data, amap.offset(tags["DT_STRTAB"]), tags.get("DT_STRSZ", 0)) \
        if "DT_STRTAB" in tags else None

    def strings(tag: str) -> tuple[str, ...]:
        if strtab is None:
            return ()
        return tuple(strtab.get(v) for v in strings_at[tag])

    def paths(tag: str) -> tuple[str, ...]:
        return tuple(p for entry in strings(tag) for p in entry.split(":") if p)

    soname = strings("DT_SONAME")
    out = dict(
        has_dynamic=True,
        soname=soname[0] if soname else None,
        needed=strings("DT_NEEDED"),
        rpath=paths("DT_RPATH"),
        runpath=paths("DT_RUNPATH"),
        textrel="DT_TEXTREL" in tags or bool(tags.get("DT_FLAGS", 0) & DF_TEXTREL),
    )
    if strtab is None or "DT_SYMTAB" not in tags:
        return out
    symbols, needs, defs = _read_symbol_tables(data, amap, tags, elf_class, endian, strtab)
    out.update(symbols=symbols, version_needs=needs, version_defs=defs)
    return out


def _read_symbol_tables(data, amap, tags, elf_class, endian, strtab):
    count = _tables.count_symbols(data, amap, tags, elf_class, endian)
    raw = _tables.read_symbols(data, amap.offset(tags["DT_SYMTAB"]), count, elf_class, endian, strtab)

    # version index -> (name, library it is needed from or None for a definition)
    versions: dict[int, tuple[str, str | None]] = {}
    need_rows = []
    if "DT_VERNEED" in tags:
        need_rows = _tables.read_verneed(
            data, amap.offset(tags["DT_VERNEED"]), tags.get("DT_VERNEEDNUM", 0), endian, strtab)
        for library, name, index, _flags in need_rows:
            versions[index] = (name, library)
    defs = []
    if "DT_VERDEF" in tags:
        for name, index, flags in _tables.read_verdef(
                data, amap.offset(tags["DT_VERDEF"]), tags.get("DT_VERDEFNUM", 0), endian, strtab):
            versions[index] = (name, None)
            if not flags & _tables.VER_FLG_BASE:
                defs.append(name)
    versym = _tables.read_versym(data, amap.offset(tags["DT_VERSYM"]), count, endian)[1:] \
        if "DT_VERSYM" in tags and count else ()

    symbols = []
    by_version: dict[tuple[str, str], tuple[list[str], list[str]]] = {}
    attrs = _tables.symbol_attributes
    for i, (name, bind, type_, vis, shndx, size) in enumerate(raw):
        version = library = None
        if versym:
            index = versym[i] & 0x7FFF
            if index > 1 and index in versions:
                version, library = versions[index]
        b, t, v = attrs(bind, type_, vis)
        defined = shndx != 0
        symbols.append(Symbol(name, defined, b, t, v, version, None if defined else library, size))
        if library is not None and not defined:
            named, weak = by_version.setdefault((library, version), ([], []))
            named.append(name)
            if b == "WEAK":
                weak.append(name)
    needs = tuple(
        VersionNeed(library, name, bool(flags & _tables.VER_FLG_WEAK),
                    tuple(sorted(by_version.get((library, name), ([], []))[0])),
                    tuple(sorted(by_version.get((library, name), ([], []))[1])))
        for library, name, _index, flags in need_rows
    )
    return tuple(symbols), needs, tuple(defs)
