"""Summarise one ELF file from its bytes: pyelftools for the structure, bulk readers for the tables."""

from __future__ import annotations

import hashlib
import re
import struct
from array import array

from elftools.elf.enums import ENUM_E_MACHINE, ENUM_E_TYPE, ENUM_EI_OSABI

from wheelcheck.elf import _tables
from wheelcheck.elf.arch import arch_of, x86_isa_level
from wheelcheck.elf.elf_info import ElfInfo, SymbolTable, VersionNeed
from wheelcheck.elf.version_strings import version_strings, version_symbols
from wheelcheck.errors import BadElfError, ElfFormatError

__all__ = ["ELF_MAGIC", "is_elf", "summarize", "summarize_hashed", "file_ranges"]

ELF_MAGIC = b"\x7fELF"

_DT = {
    1: "DT_NEEDED", 4: "DT_HASH", 5: "DT_STRTAB", 6: "DT_SYMTAB", 10: "DT_STRSZ", 11: "DT_SYMENT",
    14: "DT_SONAME", 15: "DT_RPATH", 22: "DT_TEXTREL", 29: "DT_RUNPATH", 30: "DT_FLAGS",
    0x6FFFFEF5: "DT_GNU_HASH", 0x6FFFFFF0: "DT_VERSYM", 0x6FFFFFFC: "DT_VERDEF",
    0x6FFFFFFD: "DT_VERDEFNUM", 0x6FFFFFFE: "DT_VERNEED", 0x6FFFFFFF: "DT_VERNEEDNUM",
}
_STRING_TAGS = ("DT_NEEDED", "DT_SONAME", "DT_RPATH", "DT_RUNPATH")
DF_TEXTREL = 0x4
PF_X, PF_W = 0x1, 0x2
PT_LOAD, PT_DYNAMIC, PT_INTERP, PT_NOTE = 1, 2, 3, 4
PT_GNU_STACK = 0x6474E551


# A soname-looking string: lib<name>.so, optionally .<digits> parts, at the end of a NUL-terminated
# string, as a dlopen argument is ("libfoo.so.1" or "/opt/x/libfoo.so.1"). Text that merely mentions a
# library ("ZLIB: /usr/lib/libz.so (ver 1.2.11)" in a build-information string) does not end there, nor
# do format strings ("libfoo.so.%d"). Not anchored at the start: with tail merging, "libz.so.1" may be
# stored only as the end of a longer string. In one regex,
#     lib[A-Za-z0-9_+\-][A-Za-z0-9_+.\-]*?\.so(?:\.[0-9]+)*(?=\x00)
# backtracks quadratically over a long run of "liblib..."; _soname_matches finds the same strings from
# the end (".so" before a NUL) back to the first "lib" of the run of name bytes before it.
_SONAME_END = re.compile(rb"\.so(?:\.[0-9]+)*(?=\x00)")
_NAME_BYTES = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_+-."
_NOT_NAME = bytes(0 if i in _NAME_BYTES else 1 for i in range(256))  # translate table: 1 = ends a run
_MAX_SONAME_STRINGS = 256  # a file naming more is not listing libraries to load
_MAX_INTERP = 4096  # the kernel refuses a longer PT_INTERP (PATH_MAX)


def is_elf(head: bytes) -> bool:
    return head[:4] == ELF_MAGIC


def summarize(data: bytes, path: str, sha256: str = "") -> ElfInfo:
    """Summarise the ELF file ``data`` found at ``path``; BadElfError if it is not a sound ELF.

    ``sha256``: the hex digest of ``data`` when the caller has it (the scanner hashes for RECORD anyway)."""
    if not is_elf(data):
        raise BadElfError(path, "not an ELF file (no ELF magic)")
    try:
        return _summarize(data, path, sha256)
    except ElfFormatError as exc:  # raised where the bytes are read, which do not know the file's name
        raise BadElfError(path, f"truncated or malformed ELF file ({exc.problem})") from None
    except (struct.error, OverflowError) as exc:  # a record unpacked past the end, or at an offset past any size
        raise BadElfError(path, f"truncated or malformed ELF file ({exc})") from None


def summarize_hashed(data: bytes, path: str) -> ElfInfo:
    """``summarize`` with the sha256 of ``data`` (for new bytes, such as a patched file)."""
    return summarize(data, path, hashlib.sha256(data).hexdigest())


def _summarize(data: bytes, path: str, sha256: str = "") -> ElfInfo:
    header = _header(data)
    endian = header["endian"]
    elf_class = header["class"]
    little = endian == "<"
    arch, arch_problem = arch_of(header["e_machine"], elf_class, little, header["e_flags"])

    loads: list[tuple[int, int, int]] = []
    load_flags: list[tuple[int, int, int]] = []  # (p_flags, offset, filesz) of each PT_LOAD
    dynamic: tuple[int, int] | None = None
    interpreter = None
    gnu_stack = exec_stack = False
    notes = []
    note_bytes = 0  # PT_NOTE bytes walked: up to 65,535 program headers may all name the whole file
    for ptype, flags, offset, vaddr, filesz, align in _program_headers(data, header, elf_class, endian):
        if ptype in (PT_LOAD, PT_DYNAMIC, PT_NOTE, PT_INTERP) and offset + filesz > len(data):
            raise BadElfError(path, f"truncated ELF file: a segment ends at byte {offset + filesz}, "
                                    f"past the end ({len(data)})")
        if ptype == PT_LOAD:
            loads.append((vaddr, offset, filesz))
            load_flags.append((flags, offset, filesz))
        elif ptype == PT_DYNAMIC:
            dynamic = (offset, filesz)
        elif ptype == PT_INTERP and interpreter is None:  # the kernel reads the first one only
            end = data.find(b"\0", offset, offset + min(filesz, _MAX_INTERP))
            interpreter = bytes(data[offset:end if end >= 0 else offset + min(filesz, _MAX_INTERP)]).decode(
                "utf-8", "replace")
        elif ptype == PT_GNU_STACK:
            gnu_stack = True
            exec_stack = bool(flags & PF_X)
        elif ptype == PT_NOTE and arch == "x86_64" and note_bytes + filesz <= len(data):
            note_bytes += filesz
            notes.append((data[offset:offset + filesz], align))
    if not gnu_stack and header["e_type"] in ("ET_DYN", "ET_EXEC"):
        exec_stack = True  # without PT_GNU_STACK the loader assumes an executable stack
    isa_level, isa_problem = x86_isa_level(notes, endian) if notes else (None, None)

    base = dict(
        path=path, size=len(data), elf_class=elf_class, endianness="little" if little else "big",
        machine=header["e_machine"], osabi=header["osabi"], elf_type=header["e_type"],
        arch=arch, arch_problem=arch_problem, interpreter=interpreter, isa_level=isa_level,
        isa_problem=isa_problem, gnu_stack=gnu_stack, exec_stack=exec_stack,
        soname_strings=_soname_strings(data, load_flags),
        version_strings=version_strings(data, file_ranges(_data_spans(load_flags), len(data))),
        sha256=sha256,
    )
    if dynamic is None:
        return ElfInfo(**base)
    dynamic_fields = _read_dynamic(data, dynamic, loads, elf_class, endian, header["e_machine"])
    stated = dynamic_fields.pop("symbol_versions", ())
    if stated:
        base["version_strings"] = tuple(sorted(set(base["version_strings"]).union(stated)))
    return ElfInfo(**base, **dynamic_fields)


def _header(data: bytes) -> dict:
    """The ELF header fields we use, named with pyelftools' enum tables.

    Parsed with struct rather than ELFFile, which would copy the whole file into a stream (a 179 MB
    library would be held twice) and read the section headers we do not need.
    """
    if len(data) < 52:
        raise ElfFormatError(f"{len(data)!r} bytes are shorter than an ELF header")
    ei_class, ei_data, ei_osabi = data[4], data[5], data[7]
    if ei_class not in (1, 2) or ei_data not in (1, 2):
        raise ElfFormatError(f"bad ELF identification (class {ei_class!r}, data {ei_data!r})")
    endian = "<" if ei_data == 1 else ">"
    fmt = endian + ("HHIQQQIHHHHHH" if ei_class == 2 else "HHIIIIIHHHHHH")
    if len(data) < 16 + struct.calcsize(fmt):
        raise ElfFormatError(f"{len(data)!r} bytes are shorter than a {'64' if ei_class == 2 else '32'}-bit ELF header")
    (e_type, e_machine, _ver, _entry, e_phoff, _shoff, e_flags, _ehsize, e_phentsize, e_phnum,
     *_rest) = struct.unpack_from(fmt, data, 16)
    return {
        "class": 64 if ei_class == 2 else 32,
        "endian": endian,
        "osabi": _name(ENUM_EI_OSABI, ei_osabi, "ELFOSABI"),
        "e_type": _name(ENUM_E_TYPE, e_type, "ET"),
        "e_machine": _name(ENUM_E_MACHINE, e_machine, "EM"),
        "e_flags": e_flags,
        "e_phoff": e_phoff,
        "e_phentsize": e_phentsize,
        "e_phnum": e_phnum,
    }


def _name(enum: dict, value: int, prefix: str) -> str:
    for name, number in enum.items():
        if number == value and not name.startswith("_"):
            return name
    return f"{prefix}_{value}"


def _soname_strings(data: bytes, load_flags: list[tuple[int, int, int]]) -> tuple[str, ...]:
    """Soname-looking strings in the read-only data: what the file may dlopen (and its NEEDED names).

    Read-only data lives in the PT_LOAD segments that are neither writable nor executable; linkers that
    do not separate code (old binutils, -z noseparate-code, some lld builds) put it in the one R+X
    segment instead, so that is scanned when no read-only segment exists. Segments, not sections: this
    works on files whose section headers are stripped.
    """
    chosen = [(off, size) for flags, off, size in load_flags if not flags & (PF_W | PF_X)]
    if not chosen:
        chosen = [(off, size) for flags, off, size in load_flags if not flags & PF_W]
    found: dict[bytes, None] = {}
    for start, end in file_ranges(chosen, len(data)):
        for name in _soname_matches(data, start, end):
            found.setdefault(name, None)
            if len(found) >= _MAX_SONAME_STRINGS:
                return tuple(sorted(name.decode("ascii") for name in found))
    return tuple(sorted(name.decode("ascii") for name in found))


def _data_spans(load_flags: list[tuple[int, int, int]]) -> list[tuple[int, int]]:
    """(offset, size) of the loaded data: non-executable PT_LOAD segments, read-only and writable (a version
    banner may be a writable ``char[]``); the R+X segment too when none is read-only (rodata beside the code)."""
    spans = [(off, size) for flags, off, size in load_flags if not flags & PF_X]
    if not any(not flags & (PF_W | PF_X) for flags, _off, _size in load_flags):
        spans += [(off, size) for flags, off, size in load_flags if flags & PF_X and not flags & PF_W]
    return spans


def _soname_matches(data: bytes, start: int, end: int):
    """The soname strings of data[start:end], in order, each found in time linear in the bytes."""
    runs = data[start:end].translate(_NOT_NAME)  # 1 where a run of name bytes ends
    for tail in _SONAME_END.finditer(data, start, end):
        stop = tail.start()
        run = runs.rfind(1, 0, stop - start) + 1 + start  # where the name bytes before ".so" begin
        at = data.find(b"lib", run, stop - 1)  # "lib", then at least one byte before ".so"
        while at >= 0 and data[at + 3] == 0x2E:  # "lib." is no library name: try the next "lib"
            at = data.find(b"lib", at + 1, stop - 1)
        if at >= 0:
            yield bytes(data[at:tail.end()])


def file_ranges(spans, size: int) -> list[tuple[int, int]]:
    """(start, end) file ranges covering the (offset, size) ``spans`` once each: overlapping segments
    merged, so no byte is scanned twice however many program headers name it."""
    merged: list[list[int]] = []
    for start, end in sorted((off, min(off + length, size)) for off, length in spans if off < size):
        if merged and start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        elif end > start:
            merged.append([start, end])
    return [(start, end) for start, end in merged]


def _program_headers(data: bytes, header, elf_class: int, endian: str):
    """(type, flags, offset, vaddr, filesz, align) per program header, unpacked in bulk."""
    phoff, phnum, phentsize = header["e_phoff"], header["e_phnum"], header["e_phentsize"]
    if elf_class == 64:
        fmt = endian + "IIQQQQQQ"
        order = lambda e: (e[0], e[1], e[2], e[3], e[5], e[7])  # noqa: E731
    else:
        fmt = endian + "IIIIIIII"
        order = lambda e: (e[0], e[6], e[1], e[2], e[4], e[7])  # noqa: E731
    size = struct.calcsize(fmt)
    if phnum and (phentsize < size or phoff + phnum * phentsize > len(data)):
        raise ElfFormatError(f"the program headers ({phnum!r} of {phentsize!r} bytes at offset {phoff!r}) lie outside the file")
    return [order(struct.unpack_from(fmt, data, phoff + i * phentsize)) for i in range(phnum)]


def _read_dynamic(data: bytes, dynamic: tuple[int, int], loads, elf_class: int, endian: str, machine: str) -> dict:
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
    symtab, needs, defs = _read_symbol_tables(data, amap, tags, elf_class, endian, strtab, machine)
    out.update(symtab=symtab, version_needs=needs, version_defs=defs,
               symbol_versions=_symbol_versions(data, amap, amap.offset(tags["DT_SYMTAB"]), symtab, elf_class,
                                                endian))
    return out


_STT_OBJECT = 1
_VERSION_VALUE = re.compile(rb"[ -~]{1,63}")


def _symbol_versions(data: bytes, amap, symtab_offset: int, symtab: SymbolTable, elf_class: int,
                     endian: str) -> tuple[str, ...]:
    """``name=value`` for the exported data symbols that hold a version string (``sqlite3_version=3.40.1``).

    A value that cannot be read (an address outside the loaded data, no NUL within 64 bytes) is left out:
    it is one string, not a reason to reject the file."""
    out = []
    entsize, value_at, fmt = (24, 8, "Q") if elf_class == 64 else (16, 4, "I")
    for name in sorted(version_symbols()):
        i = symtab.position(name)
        if i is None or not symtab.defined[i] or symtab.info[i] & 0xF != _STT_OBJECT:
            continue
        (address,) = struct.unpack_from(endian + fmt, data, symtab_offset + (i + 1) * entsize + value_at)
        try:
            start = amap.offset(address)
        except ElfFormatError:
            continue
        value = _VERSION_VALUE.match(data, start, min(start + 64, len(data)))
        if value is not None and data[value.end():value.end() + 1] == b"\0":
            out.append(f"{name}={value.group().decode('ascii')}")
    return tuple(out)


def _read_symbol_tables(data, amap, tags, elf_class, endian, strtab, machine):
    hash_word = 8 if (machine, elf_class) == ("EM_S390", 64) else 4
    count = _tables.count_symbols(data, amap, tags, elf_class, endian, hash_word)
    names, info, other, shndx, sizes = _tables.read_symbols(
        data, amap.offset(tags["DT_SYMTAB"]), count, elf_class, endian, strtab)

    # version index -> (name, library it is needed from, or None for a definition)
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
        if "DT_VERSYM" in tags and count > 1 else (0,) * len(names)

    # compact version columns: 0 = unversioned; others index version_names
    version_names: list[tuple[str | None, str | None]] = [(None, None)]
    slot = {}
    for index, entry in sorted(versions.items()):
        if index > 1:
            slot[index] = len(version_names)
            version_names.append(entry)
    version_index = array("H", (slot.get(v & 0x7FFF, 0) for v in versym))
    defined = bytes(1 if s else 0 for s in shndx)

    by_version: dict[int, tuple[list[str], list[str]]] = {}
    for name, vi, is_defined, inf in zip(names, version_index, defined, info):
        if vi and not is_defined and version_names[vi][1] is not None:
            named, weak = by_version.setdefault(vi, ([], []))
            named.append(name)
            if inf >> 4 == 2:  # STB_WEAK
                weak.append(name)
    needs = []
    for library, name, index, flags in need_rows:
        named, weak = by_version.get(slot.get(index, -1), ([], []))
        needs.append(VersionNeed(library, name, bool(flags & _tables.VER_FLG_WEAK),
                                 tuple(sorted(named)), tuple(sorted(weak))))
    symtab = SymbolTable(names=names, info=info, other=other, defined=defined, sizes=array("Q", sizes),
                         version_index=version_index, version_names=tuple(version_names))
    return symtab, tuple(needs), tuple(defs)
