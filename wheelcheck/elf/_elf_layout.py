"""ELF byte layouts: the file header, program headers and dynamic entries, unpacked with struct.

Kept apart from their meaning (elf_summary.py) so that the streaming summariser, the string scanner of
``repair --hide-symbols`` and the in-memory path all read the same fields the same way.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping

from elftools.elf.enums import ENUM_E_MACHINE, ENUM_E_TYPE, ENUM_EI_OSABI

from wheelcheck.errors import ElfFormatError

__all__ = ["HEADER_SIZE", "PT_LOAD", "PT_DYNAMIC", "PT_INTERP", "PT_NOTE", "PT_GNU_STACK", "PF_X", "PF_W", "SHT_NOTE",
           "SHT_NOBITS", "parse_header", "program_header_span", "parse_program_headers", "section_header_span",
           "executable_sections",
           "allocated_section_types", "dynamic_entries"]

HEADER_SIZE = 64  # the larger of the two classes' headers: enough bytes to parse either
PF_X, PF_W = 0x1, 0x2
PT_LOAD, PT_DYNAMIC, PT_INTERP, PT_NOTE = 1, 2, 3, 4
PT_GNU_STACK = 0x6474E551


def parse_header(data: bytes) -> dict:
    """The ELF header fields we use, named with pyelftools' enum tables (ElfFormatError when too short or odd).

    Parsed with struct rather than ELFFile, which would want the whole file as a stream and read the
    section headers we do not need.
    """
    if len(data) < 52:
        raise ElfFormatError(f"{len(data)!r} bytes are shorter than an ELF header")
    ei_class, ei_data, ei_osabi = data[4], data[5], data[7]
    if ei_class not in (1, 2) or ei_data not in (1, 2):
        raise ElfFormatError(f"bad ELF identification (class {ei_class!r}, data {ei_data!r})")
    endian = "<" if ei_data == 1 else ">"
    fmt = endian + ("HHIQQQIHHHHHH" if ei_class == 2 else "HHIIIIIHHHHHH")
    if len(data) < 16 + struct.calcsize(fmt):
        raise ElfFormatError(f"{len(data)!r} bytes are shorter than a {'64' if ei_class == 2 else '32'}-bit ELF "
                             f"header")
    (e_type, e_machine, _ver, _entry, e_phoff, e_shoff, e_flags, _ehsize, e_phentsize, e_phnum, e_shentsize,
     e_shnum, _shstrndx) = struct.unpack_from(fmt, data, 16)
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
        "e_shoff": e_shoff,
        "e_shentsize": e_shentsize,
        "e_shnum": e_shnum,
    }


def _name(enum: Mapping[str, int], value: int, prefix: str) -> str:
    for name, number in enum.items():
        if number == value and not name.startswith("_"):
            return name
    return f"{prefix}_{value}"


def _phdr_format(header: dict) -> str:
    return header["endian"] + ("IIQQQQQQ" if header["class"] == 64 else "IIIIIIII")


def program_header_span(header: dict, size: int) -> tuple[int, int]:
    """(offset, length) of the program header table; ElfFormatError when it lies outside a file of ``size``."""
    phoff, phnum, phentsize = header["e_phoff"], header["e_phnum"], header["e_phentsize"]
    if phnum and (phentsize < struct.calcsize(_phdr_format(header)) or phoff + phnum * phentsize > size):
        raise ElfFormatError(f"the program headers ({phnum!r} of {phentsize!r} bytes at offset {phoff!r}) lie "
                             f"outside the file")
    return phoff, phnum * phentsize


SHF_ALLOC = 0x2
SHT_NOTE, SHT_NOBITS = 7, 8
_MAX_SECTION_TABLE = 1 << 20  # 16,384 64-bit section headers: more than any file a linker or objcopy writes


def section_header_span(header: dict, size: int) -> tuple[int, int] | None:
    """(offset, length) of the section header table, or None when the file has none, it lies outside a file
    of ``size``, or it is larger than a real one."""
    shoff, shnum, shentsize = header["e_shoff"], header["e_shnum"], header["e_shentsize"]
    length = shnum * shentsize
    if not shoff or not shnum or shentsize < (64 if header["class"] == 64 else 40) or shoff + length > size \
            or length > _MAX_SECTION_TABLE:
        return None
    return shoff, length


def allocated_section_types(table: bytes, header: dict) -> list[int]:
    """sh_type of each SHF_ALLOC section in ``table`` (the section header table's bytes)."""
    endian, step = header["endian"], header["e_shentsize"]
    fmt = endian + ("IIQ" if header["class"] == 64 else "III")  # sh_name, sh_type, sh_flags
    rows = (struct.unpack_from(fmt, table, i * step) for i in range(len(table) // step))
    return [sh_type for _name, sh_type, flags in rows if flags & SHF_ALLOC]


def executable_sections(table: bytes, header: dict) -> list[tuple[int, int]]:
    """(offset, size) of each section of ``table`` that holds code (SHT_PROGBITS with SHF_EXECINSTR), in file
    order: the executable segment may hold read-only data too, which is no code."""
    endian, step = header["endian"], header["e_shentsize"]
    fmt = endian + ("IIQQQQ" if header["class"] == 64 else "IIIIII")  # name, type, flags, addr, offset, size
    if step < struct.calcsize(fmt):
        return []
    rows = (struct.unpack_from(fmt, table, i * step) for i in range(len(table) // step))
    return sorted((offset, size) for _name, sh_type, flags, _addr, offset, size in rows
                  if sh_type == 1 and flags & 0x4 and size)


def parse_program_headers(table: bytes, header: dict) -> list[tuple[int, int, int, int, int, int]]:
    """(type, flags, offset, vaddr, filesz, align) per program header of ``table`` (the table's bytes)."""
    fmt = _phdr_format(header)
    if header["class"] == 64:
        order = lambda e: (e[0], e[1], e[2], e[3], e[5], e[7])  # noqa: E731
    else:
        order = lambda e: (e[0], e[6], e[1], e[2], e[4], e[7])  # noqa: E731
    step = header["e_phentsize"]
    return [order(struct.unpack_from(fmt, table, i * step)) for i in range(header["e_phnum"])]


def dynamic_entries(data: bytes, elf_class: int, endian: str):
    """(tag, value) of each dynamic entry in ``data`` (a PT_DYNAMIC segment's bytes), up to DT_NULL."""
    fmt = endian + ("qQ" if elf_class == 64 else "iI")
    step = struct.calcsize(fmt)
    for pos in range(0, len(data) - step + 1, step):
        tag, value = struct.unpack_from(fmt, data, pos)
        if tag == 0:
            return
        yield tag, value
