"""Identifier-like strings in the loaded, read-only bytes of an ELF file (names a dlsym may look up), and the
absolute paths there (directories a library was built to load plugins from).

The dynamic string table is left out: every exported name is there by definition. Section headers
are not needed: the non-writable PT_LOAD segments hold .rodata (in its own segment with
-z separate-code, or beside .text with older linkers); code bytes rarely form a NUL-delimited name,
and a false hit only keeps a symbol visible, never breaks anything.
"""

from __future__ import annotations

import os
import re
from functools import partial

from wheelcheck.elf._elf_layout import (HEADER_SIZE, PT_DYNAMIC, PT_LOAD, dynamic_entries, parse_header,
                                        parse_program_headers, program_header_span)
from wheelcheck.elf._kept_bytes import SparseFile, pread_range
from wheelcheck.elf._string_scan import SpanScanner
from wheelcheck.elf.elf_summary import file_ranges

__all__ = ["identifier_strings", "identifier_strings_of_file", "path_strings_of_file"]

_IDENT = re.compile(rb"(?<=\x00)[A-Za-z_][A-Za-z0-9_.$@]{1,200}(?=\x00)")
# a whole string that is an absolute path (graphviz's "/usr/lib/x86_64-linux-gnu/graphviz", GLib's GIO_MODULE_DIR);
# the slash first, so the search skips ahead to it at C speed
_PATH = re.compile(rb"/[A-Za-z0-9_.+\-/]{1,250}(?=\x00)")
_PF_W = 0x2
_DT_STRTAB, _DT_STRSZ = 5, 10


def _identifier_matches(text: bytes, pos: int, endpos: int):
    return (match.group() for match in _IDENT.finditer(text, pos, endpos))


def _path_matches(text: bytes, pos: int, endpos: int):
    """Absolute paths that are whole strings: a NUL before them (in ``text``, which holds the byte before ``pos``)."""
    return (match.group() for match in _PATH.finditer(text, pos, endpos)
            if match.start() > 0 and text[match.start() - 1] == 0)


def identifier_strings(data: bytes) -> frozenset[str]:
    return _strings(SparseFile.whole(data), _identifier_matches)


def identifier_strings_of_file(path: str | os.PathLike) -> frozenset[str]:
    """``identifier_strings`` of the file at ``path``, read in pieces (never whole)."""
    return _strings_of_file(path, _identifier_matches)


def path_strings_of_file(path: str | os.PathLike) -> frozenset[str]:
    """The absolute paths (``/usr/lib/x86_64-linux-gnu/graphviz``) that are whole strings of the read-only data of
    the file at ``path``, read in pieces (never whole). Raises OSError, or ElfFormatError for a malformed file."""
    return _strings_of_file(path, _path_matches)


def _strings_of_file(path: str | os.PathLike, matches) -> frozenset[str]:
    with open(path, "rb", buffering=0) as f:
        fd = f.fileno()
        size = os.fstat(fd).st_size
        return _strings(SparseFile(size, partial(pread_range, fd, size), window=0), matches)


def _strings(source: SparseFile, matches) -> frozenset[str]:
    """The strings ``matches`` finds in the read-only segments of ``source``, the dynamic string table aside."""
    header = parse_header(source.read(0, min(HEADER_SIZE, source.size)))
    start, length = program_header_span(header, source.size)
    phdrs = parse_program_headers(source.read(start, length), header)
    skip = _dynstr_range(source, phdrs, header["class"], header["endian"])
    found: set[str] = set()
    read_only = [(offset, filesz) for ptype, flags, offset, _v, filesz, _a in phdrs
                 if ptype == PT_LOAD and not flags & _PF_W]
    for span in file_ranges(read_only, source.size):  # each byte once, however many headers name it
        for start, end in _minus(span, skip):
            scanner = SpanScanner(matches, start, end)
            at = max(start - 1, 0)  # the byte before: the pattern looks back for a NUL
            for piece in source.pieces(at, end):
                scanner.feed(piece, at)
                at += len(piece)
            found.update(m.decode("ascii") for m in scanner.found)
    return frozenset(found)


def _dynstr_range(source: SparseFile, phdrs, elf_class: int, endian: str) -> tuple[int, int] | None:
    dynamic = next(((off, size) for t, _f, off, _v, size, _a in phdrs if t == PT_DYNAMIC), None)
    if dynamic is None or dynamic[0] >= source.size:
        return None
    raw = source.read(dynamic[0], min(dynamic[1], source.size - dynamic[0], 1 << 20))
    tags = dict(dynamic_entries(raw, elf_class, endian))
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
