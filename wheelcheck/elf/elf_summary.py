"""Summarise one ELF file as its bytes stream past: what the analyses need is kept, the file is not.

Kept as the bytes go by: the headers, the dynamic segment, the interpreter path and the GNU property notes,
the soname-looking strings of the read-only segments and the version-stating strings of the loaded data
(both searched piece by piece). The dynamic symbol and version tables are read at the end, from the kept
prefix of the file where linkers put them, or fetched again (see _kept_bytes.py). The same code summarises
a file already in memory (``summarize``).
"""

from __future__ import annotations

import hashlib
import os
import re
import struct
import threading
from array import array
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import partial
from itertools import compress, repeat

from wheelcheck.elf import _tables
from wheelcheck.elf._elf_layout import (HEADER_SIZE, PF_W, PF_X, PT_DYNAMIC, PT_GNU_STACK, PT_INTERP, PT_LOAD,
                                        PT_NOTE, SHT_NOBITS, SHT_NOTE, allocated_section_types, dynamic_entries,
                                        executable_sections,
                                        parse_header, parse_program_headers, program_header_span,
                                        section_header_span)
from wheelcheck.elf._kept_bytes import FILE_PIECE, WINDOW, Reread, SparseFile, pread_range
from wheelcheck.elf._string_scan import SpanScanner
from wheelcheck.elf.arch import arch_of, x86_isa_level
from wheelcheck.elf.elf_info import ElfInfo, SymbolTable, VersionNeed, mask_and
from wheelcheck.elf.fatbin_scan import FatbinScanner, GpuCode
from wheelcheck.elf.isa_scan import GuardScanner, IsaScan, function_starts, plan_slices, scan_code, symbol_guard
from wheelcheck.elf.section_bounds import BOUND_PREFIXES, relocated_bounds
from wheelcheck.elf.text_relocations import RELOCATION_TAGS, count_text_relocations
from wheelcheck.elf.version_strings import VersionScanner, version_symbols
from wheelcheck.errors import BadElfError, ElfFormatError

__all__ = ["ELF_MAGIC", "is_elf", "summarize", "summarize_hashed", "summarize_stream", "summarize_file",
           "file_ranges"]

ELF_MAGIC = b"\x7fELF"

_DT = {
    1: "DT_NEEDED", 4: "DT_HASH", 5: "DT_STRTAB", 6: "DT_SYMTAB", 10: "DT_STRSZ", 11: "DT_SYMENT",
    14: "DT_SONAME", 15: "DT_RPATH", 22: "DT_TEXTREL", 29: "DT_RUNPATH", 30: "DT_FLAGS",
    **RELOCATION_TAGS, 0x6FFFFEF5: "DT_GNU_HASH", 0x6FFFFFF0: "DT_VERSYM", 0x6FFFFFFC: "DT_VERDEF",
    0x6FFFFFFD: "DT_VERDEFNUM", 0x6FFFFFFE: "DT_VERNEED", 0x6FFFFFFF: "DT_VERNEEDNUM",
}
_STRING_TAGS = ("DT_NEEDED", "DT_SONAME", "DT_RPATH", "DT_RUNPATH")
DF_TEXTREL = 0x4
# What is kept of the small segments. A real dynamic section holds tens of entries, the GNU property note
# is a few dozen bytes; a file claiming more is read only this far (notes: whole ones, up to this in all).
_MAX_DYNAMIC = 1 << 20
_MAX_INTERP = 4096  # the kernel refuses a longer PT_INTERP (PATH_MAX)
_MAX_NOTES = 1 << 20
PT_GNU_EH_FRAME = 0x6474E550
_MAX_EH_FRAME_HDR = 32 << 20

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
_EARLY_MIN = 32 << 20  # tables are read while the file streams on only when this much is still to come
_AHEAD_KEPT = 32 << 20  # the most kept of tables found to lie ahead when the dynamic section passes
# DT_SYMTAB, DT_STRTAB, DT_HASH, DT_GNU_HASH, DT_VERSYM, DT_VERNEED, DT_VERDEF: where the tables start
_TABLE_TAGS = (6, 5, 4, 0x6FFFFEF5, 0x6FFFFFF0, 0x6FFFFFFE, 0x6FFFFFFC)
# What reading malformed bytes raises: the readers' own error, a record unpacked past the end, an offset past
# any size. Anything else (an AttributeError, a KeyError) is a bug of ours and surfaces as one.
_PARSE_ERRORS = (struct.error, OverflowError)


def is_elf(head: bytes) -> bool:
    return head[:4] == ELF_MAGIC


def summarize(data: bytes, path: str, sha256: str = "") -> ElfInfo:
    """Summarise the ELF file ``data`` found at ``path``; BadElfError if it is not a sound ELF.

    ``sha256``: the hex digest of ``data`` when the caller has it (the scanner hashes for RECORD anyway)."""
    if not is_elf(data):
        raise BadElfError(path, "not an ELF file (no ELF magic)")
    with _malformed(path):
        summary = _Summary(path, SparseFile.whole(data), lambda: sha256)
        summary.passed(data, 0)
        return summary.finish()


def summarize_hashed(data: bytes, path: str) -> ElfInfo:
    """``summarize`` with the sha256 of ``data`` (for new bytes, such as a patched file)."""
    return summarize(data, path, hashlib.sha256(data).hexdigest())


def summarize_stream(pieces: Iterable[bytes], size: int, path: str, reread: Reread, window: int = WINDOW,
                     sha256: Callable[[], str] | None = None) -> ElfInfo:
    """Summarise the ELF file of ``size`` bytes that ``pieces`` yield in order; ``reread(offset, size)``
    yields a range of it again. Holds a prefix of at most ``window`` bytes, the tables, and one piece.

    ``sha256``, if given, is called once every piece has passed: the hex digest of the file, which the
    caller computes as the pieces pass (the scanner hashes them for RECORD anyway)."""
    with _malformed(path):
        summary = _Summary(path, SparseFile(size, reread, window), sha256)
        for piece in pieces:
            summary.push(piece)
        return summary.finish()


@contextmanager
def _malformed(path: str) -> Iterator[None]:
    """What reading malformed bytes raises, as a BadElfError naming the file."""
    try:
        yield
    except ElfFormatError as exc:  # raised where the bytes are read, which do not know the file's name
        raise BadElfError(path, f"truncated or malformed ELF file ({exc.problem})") from None
    except _PARSE_ERRORS as exc:
        raise BadElfError(path, f"truncated or malformed ELF file ({exc})") from None


def summarize_file(path: str, name: str | None = None, digest=None, sha256: bool = False) -> ElfInfo:
    """Summarise the ELF file at ``path`` (``name`` in messages), read once in pieces, never whole.

    ``digest`` (a hashlib object), if given, is updated with every byte as it passes; with ``sha256`` the
    summary carries the file's sha256 (computed in the same pass). Raises OSError when the file cannot be
    read, BadElfError when it is not a sound ELF file.
    """
    if sha256 and digest is None:
        digest = hashlib.sha256()
    with open(path, "rb", buffering=0) as f:
        fd = f.fileno()
        size = os.fstat(fd).st_size

        def pieces() -> Iterable[bytes]:
            at = 0
            while at < size:
                piece = os.pread(fd, min(FILE_PIECE, size - at), at)
                if not piece:
                    raise ElfFormatError(f"the file ended at byte {at!r} while being read")
                if digest is not None:
                    digest.update(piece)
                yield piece
                at += len(piece)

        head = os.pread(fd, 4, 0)
        if not is_elf(head):
            raise BadElfError(name or path, "not an ELF file (no ELF magic)")
        return summarize_stream(pieces(), size, name or path, partial(pread_range, fd, size),
                                sha256=digest.hexdigest if sha256 and digest.name == "sha256" else None)


class _Summary:
    """One file's summary in the making: fed its bytes in order, finished once they have all passed."""

    def __init__(self, path: str, sparse: SparseFile, sha256: Callable[[], str] | None = None) -> None:
        self.path, self.sparse, self.sha256 = path, sparse, sha256
        self.header: dict | None = None
        self.phdrs: list[tuple[int, int, int, int, int, int]] | None = None
        self.scanners: list[SpanScanner] = []  # sorted by start, disjoint
        self.fatbins: list[FatbinScanner] = []  # over the same read-only spans: CUDA device code
        self.versions: VersionScanner | None = None
        self._next_scanner = 0  # scanners before this one have ended before the bytes arriving now
        self._early: _EarlyTables | None = None
        self._early_checked = False
        self._past_end: int | None = None  # where the first segment that ends past the file's end ends
        self._maybe_debug = False  # the program headers look like a separate debug-information file's
        self.code_slices: list[tuple[int, int]] = []  # x86-64: the executable code kept for isa_scan
        self.cpu_checks: GuardScanner | None = None  # x86-64: where CPUID or XGETBV may be

    def push(self, piece: bytes) -> None:
        at = self.sparse.position
        self.sparse.push(piece)
        self.passed(piece, at)

    def passed(self, piece: bytes, at: int) -> None:
        """``piece`` (file bytes from ``at``) has gone by: search it, and read the headers once they are in."""
        # the scanners as they were before this piece: those _read_headers makes now have searched it already
        scanners, versions, fatbins = self.scanners, self.versions, self.fatbins
        if self.phdrs is None:
            self._read_headers()
        self._feed(scanners, versions, piece, at, fatbins)
        if not self._early_checked and self.phdrs is not None:
            self._maybe_read_tables_now()

    def _feed(self, scanners: list[SpanScanner], versions: VersionScanner | None, piece: bytes, at: int,
              fatbins: list[FatbinScanner]) -> None:
        """Search ``piece`` with the scanners whose spans it reaches (a few, however many segments there are)."""
        end = at + len(piece)
        for fatbin in fatbins:
            if fatbin.start < end and at < fatbin.end:
                fatbin.feed(piece, at)
        i = self._next_scanner
        while i < len(scanners) and scanners[i].end <= at:
            i += 1
        self._next_scanner = i
        while i < len(scanners) and scanners[i].start - 1 < end:  # the byte before a span is context
            scanners[i].feed(piece, at)
            i += 1
        if versions is not None and not versions.done:
            versions.feed(piece, at)
        if self.cpu_checks is not None:
            self.cpu_checks.feed(piece, at)

    def _dynamic_and_loads(self):
        """(the PT_DYNAMIC segment (offset, size) or None: the last one, as the loader takes it; PT_LOADs)."""
        dynamic = None
        loads = []
        for ptype, _flags, offset, vaddr, filesz, _align in self.phdrs:
            if ptype == PT_LOAD:
                loads.append((vaddr, offset, filesz))
            elif ptype == PT_DYNAMIC:
                dynamic = (offset, filesz)
        return dynamic, loads

    def _maybe_read_tables_now(self) -> None:
        """Once the dynamic segment has gone by, look where the tables it points to are.

        Behind, with much of a large file still to come: read them now on a thread of their own (they are
        read at the end otherwise). Ahead (patchelf moves .dynstr, often .dynsym too, to a segment at the end
        of the file; auditwheel's repairs do that): keep them as they pass, up to ``_AHEAD_KEPT`` bytes, rather
        than inflate them again at the end."""
        sparse = self.sparse
        dynamic, loads = self._dynamic_and_loads()
        if dynamic is None:
            self._early_checked = True
            return
        if sparse.position < dynamic[0] + min(dynamic[1], _MAX_DYNAMIC) or sparse.position < sparse.prefix_limit:
            return  # not yet: the dynamic segment or the kept prefix is still coming
        self._early_checked = True
        header = self.header
        if header is None:
            return  # no header yet: the tables are read at the end
        try:  # malformed: left to the end, where the same reading raises the error in its place
            tags = {tag: value for tag, value in dynamic_entries(
                sparse.read(dynamic[0], min(dynamic[1], _MAX_DYNAMIC)), header["class"], header["endian"])}
            amap = _tables.AddressMap(loads)
            where = [amap.offset(tags[t]) for t in _TABLE_TAGS if t in tags]
            strtab_end = amap.offset(tags[5]) + tags.get(10, 0) if 5 in tags else 0
        except (ElfFormatError, *_PARSE_ERRORS):
            return
        ahead = [w for w in where if w >= sparse.position]
        if ahead:
            start = min(ahead)
            sparse.keep(start, min(sparse.size, max(strtab_end, start + _AHEAD_KEPT), start + _AHEAD_KEPT))
            return
        if where and strtab_end <= sparse.position and sparse.size - sparse.position >= _EARLY_MIN:
            phdrs = self.phdrs
            self._early = _EarlyTables(lambda: _read_dynamic(sparse, dynamic, loads, header["class"],
                                                             header["endian"], header["e_machine"], phdrs))

    def _read_headers(self) -> None:
        """Parse the file and program headers once the bytes holding them have arrived."""
        sparse = self.sparse
        if self.header is None:
            if sparse.position < min(HEADER_SIZE, sparse.size):
                return
            head = sparse.read(0, min(HEADER_SIZE, sparse.size))
            if not is_elf(head):
                raise BadElfError(self.path, "not an ELF file (no ELF magic)")
            self.header = parse_header(head)
            start, length = program_header_span(self.header, sparse.size)
            sparse.keep(start, start + length)
            self._table_span = (start, start + length)
        start, end = self._table_span
        if sparse.position < end:
            return
        self.phdrs = parse_program_headers(sparse.read(start, end - start), self.header)
        # a separate debug-information file keeps the binary's program headers: its segments end past its end
        # (truncated otherwise), or (newer objcopy) hold no bytes, the dynamic segment too. Told at the end, from
        # the section headers, which are kept
        self._past_end = next((offset + filesz for ptype, _f, offset, _v, filesz, _a in self.phdrs
                               if ptype in (PT_LOAD, PT_DYNAMIC, PT_NOTE, PT_INTERP) and offset + filesz > sparse.size),
                              None)
        self._maybe_debug = self._past_end is not None or any(
            ptype == PT_DYNAMIC and not filesz for ptype, _f, _o, _v, filesz, _a in self.phdrs)
        if self._maybe_debug:
            sections = section_header_span(self.header, sparse.size)
            if sections is not None:
                sparse.keep(sections[0], sections[0] + sections[1])
        if self._past_end is not None:
            self.phdrs = []
            return
        # what is kept, bounded whatever the headers claim (up to 65,535 of them, each naming the whole file):
        # the last PT_DYNAMIC (the loader's), the first PT_INTERP (the kernel's), whole PT_NOTEs up to
        # _MAX_NOTES bytes in all
        for span in _kept_segments(self.phdrs, self.header["e_machine"] == "EM_X86_64"):
            sparse.keep(*span)
        if self.header["e_machine"] == "EM_X86_64":
            executable = _executable_segments(self.phdrs, sparse.size)
            self.code_slices = plan_slices([(off, size) for off, _v, size in executable])
            self.cpu_checks = GuardScanner([(off, off + size) for off, _v, size in executable])
            sections = section_header_span(self.header, sparse.size)
            kept = [(start, end) for start, end, _vaddr in _eh_frame_hdr(self.phdrs, sparse.size)]
            for span in self.code_slices + kept + ([] if sections is None else [(sections[0], sum(sections))]):
                sparse.keep(*span)
        loads = [(flags, offset, filesz) for ptype, flags, offset, _v, filesz, _a in self.phdrs if ptype == PT_LOAD]
        read_only = file_ranges(_read_only(loads), sparse.size)
        self.scanners = [SpanScanner(_soname_matches, start, end, _MAX_SONAME_STRINGS) for start, end in read_only]
        if self.header["endian"] == "<":  # the fatbin format is little-endian: NVIDIA's hosts are
            self.fatbins = [FatbinScanner(start, end) for start, end in read_only]
        data_spans = file_ranges(_data_spans(loads), sparse.size)
        self.versions = VersionScanner(data_spans)
        passed = sparse.position  # the bytes that passed before the headers were known: searched now
        starts = [scanner.start - 1 for scanner in self.scanners] + [start for start, _end in data_spans]
        at = max(min(starts, default=passed), 0)
        if at < passed:
            for piece in sparse.pieces(at, passed):
                self._feed(self.scanners, self.versions, piece, at, self.fatbins)
                at += len(piece)

    def finish(self) -> ElfInfo:
        sparse, path = self.sparse, self.path
        if sparse.position != sparse.size:
            raise ElfFormatError(f"{sparse.position!r} bytes read of the {sparse.size!r} declared")
        if self.phdrs is None:
            self._read_headers()
        if self.header is None or self.phdrs is None:
            raise ElfFormatError(f"{sparse.size!r} bytes are shorter than an ELF header")
        header = self.header
        endian, elf_class = header["endian"], header["class"]
        little = endian == "<"
        arch, arch_problem = arch_of(header["e_machine"], elf_class, little, header["e_flags"])
        if self._maybe_debug and _only_debug_information(sparse, header):
            sparse.release()
            return ElfInfo(path=path, size=sparse.size, elf_class=elf_class, endianness="little" if little else "big",
                           machine=header["e_machine"], osabi=header["osabi"], elf_type=header["e_type"], arch=arch,
                           arch_problem=arch_problem, debug_only=True,
                           sha256=self.sha256() if self.sha256 is not None else "")
        if self._past_end is not None:
            raise BadElfError(path, f"truncated ELF file: a segment ends at byte {self._past_end}, past the end "
                                    f"({sparse.size})")
        loads: list[tuple[int, int, int]] = []
        dynamic: tuple[int, int] | None = None
        interpreter = None
        gnu_stack = exec_stack = False
        notes = []
        note_budget = _MAX_NOTES
        for ptype, flags, offset, vaddr, filesz, align in self.phdrs:
            if ptype == PT_LOAD:
                loads.append((vaddr, offset, filesz))
            elif ptype == PT_DYNAMIC:
                dynamic = (offset, filesz)
            elif ptype == PT_INTERP and interpreter is None:  # the kernel reads the first one only
                raw = bytes(sparse.read(offset, min(filesz, _MAX_INTERP)))
                interpreter = raw.split(b"\0", 1)[0].decode("utf-8", "replace")
            elif ptype == PT_GNU_STACK:
                gnu_stack = True
                exec_stack = bool(flags & PF_X)
            elif ptype == PT_NOTE and arch == "x86_64" and filesz <= note_budget:
                notes.append((bytes(sparse.read(offset, filesz)), align))
                note_budget -= filesz
        if not gnu_stack and header["e_type"] in ("ET_DYN", "ET_EXEC"):
            exec_stack = True  # without PT_GNU_STACK the loader assumes an executable stack
        isa_level, isa_problem = x86_isa_level(notes, endian) if notes else (None, None)
        found: dict[bytes, None] = {}
        for scanner in self.scanners:  # in file order, as one search per span would add them
            for name in scanner.found:
                if len(found) >= _MAX_SONAME_STRINGS:
                    break
                found.setdefault(name, None)
        base = dict(
            path=path, size=sparse.size, elf_class=elf_class, endianness="little" if little else "big",
            machine=header["e_machine"], osabi=header["osabi"], elf_type=header["e_type"],
            arch=arch, arch_problem=arch_problem, interpreter=interpreter, isa_level=isa_level,
            isa_problem=isa_problem, gnu_stack=gnu_stack, exec_stack=exec_stack,
            soname_strings=tuple(sorted(name.decode("ascii") for name in found)),
            gpu_code=_gpu_code(self.fatbins),
            version_strings=self.versions.result() if self.versions is not None else (),
            sha256=self.sha256() if self.sha256 is not None else "",
        )
        try:
            if dynamic is None:
                base["isa_code"] = self._isa_code({})
                return ElfInfo(**base)
            tables = self._early.result() if self._early is not None else \
                _read_dynamic(sparse, dynamic, loads, elf_class, endian, header["e_machine"], self.phdrs)
            base["isa_code"] = self._isa_code(tables)
            stated = tables.pop("symbol_versions", ())
            if stated:
                base["version_strings"] = tuple(sorted(set(base["version_strings"]).union(stated)))
            return ElfInfo(**base, **tables)
        finally:
            sparse.release()


    def _isa_code(self, tables: dict) -> IsaScan | None:
        """What the kept x86-64 code needs (isa_scan.py), walked from the unwind table's function starts."""
        functions = tables.pop("code_functions", ())
        if not self.code_slices or self.header is None or self.phdrs is None \
                or self.header["e_type"] not in ("ET_DYN", "ET_EXEC"):
            return None
        sparse = self.sparse
        executable = _executable_segments(self.phdrs, sparse.size)
        starts = next((function_starts(bytes(sparse.read(start, end - start)), vaddr)
                       for start, end, vaddr in _eh_frame_hdr(self.phdrs, sparse.size)), [])
        code = [(start, start + size) for start, size in self._code_sections()] or \
            [(off, off + size) for off, _v, size in executable]
        kept = [(lo, bytes(sparse.read(lo, hi - lo))) for start, end in self.code_slices for a, b in code
                if (lo := max(start, a)) < (hi := min(end, b))]
        symtab = tables.get("symtab")
        guard = symbol_guard(symtab.names, symtab.info, symtab.defined) if symtab is not None else None
        windows = self.cpu_checks.windows if self.cpu_checks is not None else ()
        return scan_code(kept, executable, sum(b - a for a, b in code), starts, functions, guard, windows)

    def _code_sections(self) -> list[tuple[int, int]]:
        """(offset, size) of the sections holding code, when the file has section headers."""
        assert self.header is not None
        span = section_header_span(self.header, self.sparse.size)
        if span is None:
            return []
        try:
            return [(off, min(size, self.sparse.size - off))
                    for off, size in executable_sections(bytes(self.sparse.read(*span)), self.header)
                    if off < self.sparse.size]
        except (ElfFormatError, *_PARSE_ERRORS):
            return []


def _gpu_code(fatbins: list[FatbinScanner]) -> GpuCode | None:
    """The device code all the read-only spans' fatbins carry, as one summary (None: no fatbin)."""
    found = [code for code in (f.result() for f in fatbins) if code is not None]
    if not found:
        return None
    return GpuCode(tuple(sorted({image for code in found for image in code.images})),
                   sum(code.containers for code in found))


def _eh_frame_hdr(phdrs, size: int) -> list[tuple[int, int, int]]:
    """(start, end, vaddr) of the unwind table's search index (PT_GNU_EH_FRAME), the first one, bounded."""
    return [(off, min(off + filesz, size, off + _MAX_EH_FRAME_HDR), vaddr)
            for ptype, _f, off, vaddr, filesz, _a in phdrs if ptype == PT_GNU_EH_FRAME and off < size][:1]


def _executable_segments(phdrs, size: int) -> list[tuple[int, int, int]]:
    """(offset, vaddr, size) of the executable PT_LOAD segments, cut at the file's end."""
    return [(off, vaddr, min(filesz, size - off)) for ptype, flags, off, vaddr, filesz, _a in phdrs
            if ptype == PT_LOAD and flags & PF_X and off < size]


def _only_debug_information(sparse: SparseFile, header: dict) -> bool:
    """Is this a separate debug-information file (``objcopy --only-keep-debug``, ``eu-strip -f``): program headers
    copied from the binary, every allocated section emptied (SHT_NOBITS) but its notes (the build-id)?"""
    span = section_header_span(header, sparse.size)
    if span is None:
        return False
    types = allocated_section_types(sparse.read(*span), header)
    return bool(types) and SHT_NOBITS in types and all(t in (SHT_NOBITS, SHT_NOTE) for t in types)


class _EarlyTables:
    """``read()`` run on a thread now; its result (or its exception) given by ``result()``."""

    def __init__(self, read) -> None:
        self._outcome: tuple = (None, None)
        self._thread = threading.Thread(target=self._run, args=(read,), name="wheelcheck-tables", daemon=True)
        self._thread.start()

    def _run(self, read) -> None:
        try:
            self._outcome = (read(), None)
        except BaseException as exc:  # noqa: BLE001 - raised again by result(), in the summarising thread
            self._outcome = (None, exc)

    def result(self) -> dict:
        self._thread.join()
        value, error = self._outcome
        if error is not None:
            raise error
        return value


def _kept_segments(phdrs, x86_64: bool) -> list[tuple[int, int]]:
    """(start, end) of the small segments the summary reads at the end, kept as they pass."""
    dynamic = [(off, off + min(size, _MAX_DYNAMIC)) for ptype, _f, off, _v, size, _a in phdrs if ptype == PT_DYNAMIC]
    interp = [(off, off + min(size, _MAX_INTERP)) for ptype, _f, off, _v, size, _a in phdrs if ptype == PT_INTERP]
    kept = dynamic[-1:] + interp[:1]
    budget = _MAX_NOTES
    for ptype, _flags, offset, _vaddr, filesz, _align in phdrs if x86_64 else ():
        if ptype == PT_NOTE and filesz <= budget:
            kept.append((offset, offset + filesz))
            budget -= filesz
    return kept


def _read_only(load_flags: list[tuple[int, int, int]]) -> list[tuple[int, int]]:
    """(offset, size) of the PT_LOAD segments holding read-only data: what the file may dlopen is named there.

    Read-only data lives in the PT_LOAD segments that are neither writable nor executable; linkers that
    do not separate code (old binutils, -z noseparate-code, some lld builds) put it in the one R+X
    segment instead, so that is scanned when no read-only segment exists. Segments, not sections: this
    works on files whose section headers are stripped.
    """
    chosen = [(off, size) for flags, off, size in load_flags if not flags & (PF_W | PF_X)]
    return chosen or [(off, size) for flags, off, size in load_flags if not flags & PF_W]


def _data_spans(load_flags: list[tuple[int, int, int]]) -> list[tuple[int, int]]:
    """(offset, size) of the loaded data: non-executable PT_LOAD segments, read-only and writable (a version
    banner may be a writable ``char[]``); the R+X segment too when none is read-only (rodata beside the code)."""
    spans = [(off, size) for flags, off, size in load_flags if not flags & PF_X]
    if not any(not flags & (PF_W | PF_X) for flags, _off, _size in load_flags):
        spans += [(off, size) for flags, off, size in load_flags if flags & PF_X and not flags & PF_W]
    return spans


def _soname_matches(data: bytes, start: int, end: int):
    """The soname strings of data[start:end], in order, each found in time linear in the bytes.

    Each tail ends at a NUL, so the runs of name bytes before two tails never overlap: looking back from
    each tail to the start of its run reads every byte at most a few times, however the bytes are cut."""
    for tail in _SONAME_END.finditer(data, start, end):
        stop = tail.start()
        run = _run_start(data, start, stop)  # where the name bytes before ".so" begin
        at = data.find(b"lib", run, stop - 1)  # "lib", then at least one byte before ".so"
        while at >= 0 and data[at + 3] == 0x2E:  # "lib." is no library name: try the next "lib"
            at = data.find(b"lib", at + 1, stop - 1)
        if at >= 0 and not _not_dlopen_argument(data, start, run, at):
            yield bytes(data[at:tail.end()])


def _not_dlopen_argument(data: bytes, start: int, run: int, at: int) -> bool:
    """Is the name found at ``at`` (in the run of name bytes from ``run``) part of what a compiler driver lists,
    not a dlopen argument: inside a dynamic loader's name ("libc.so.0" of "ld-uClibc.so.0", "libc-mipsn8.so.0"
    of "ld-uClibc-mipsn8.so.0": clang's driver names them, libclang and clang-tidy hold them), or a linker
    argument ("-l:libunwind.so")?"""
    if at > run:
        return data.startswith(b"ld-", run)
    return data[max(start, run - 3):run] == b"-l:"


def _run_start(data: bytes, start: int, stop: int) -> int:
    """Where the run of name bytes that ends at ``stop`` begins (``start`` at the earliest), looked for in
    windows growing back from ``stop``: only the bytes near a tail are translated, not the whole span."""
    width = 64
    while True:
        low = max(start, stop - width)
        cut = data[low:stop].translate(_NOT_NAME).rfind(1)  # 1 where a run of name bytes ends
        if cut >= 0:
            return low + cut + 1
        if low == start:
            return start
        width *= 4


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


def _unwritable(phdrs) -> list[tuple[int, int]]:
    """Address ranges of the PT_LOAD segments the program may not write: what a text relocation patches."""
    return [(vaddr, vaddr + filesz) for ptype, flags, _o, vaddr, filesz, _a in phdrs
            if ptype == PT_LOAD and not flags & PF_W]


def _read_dynamic(sparse: SparseFile, dynamic: tuple[int, int], loads, elf_class: int, endian: str,
                  machine: str, phdrs) -> dict:
    off, size = dynamic
    tags: dict[str, int] = {}
    strings_at: dict[str, list[int]] = {t: [] for t in _STRING_TAGS}
    for tag, value in dynamic_entries(sparse.read(off, min(size, _MAX_DYNAMIC)), elf_class, endian):
        name = _DT.get(tag)
        if name in strings_at:
            strings_at[name].append(value)
        elif name is not None:
            tags[name] = value
    amap = _tables.AddressMap(loads)
    strtab = _tables.StringTable(sparse, amap.offset(tags["DT_STRTAB"]), tags.get("DT_STRSZ", 0)) \
        if "DT_STRTAB" in tags else None

    def strings(tag: str) -> tuple[str, ...]:
        if strtab is None:
            return ()
        return tuple(strtab.get(v) for v in strings_at[tag])

    def paths(tag: str) -> tuple[str, ...]:
        return tuple(p for entry in strings(tag) for p in entry.split(":") if p)

    def with_gaps(tag: str) -> tuple[str, ...]:  # ":" at either end or "::": an empty entry, the working directory
        return tuple(entry for entry in strings(tag) if entry and "" in entry.split(":"))

    soname = strings("DT_SONAME")
    out: dict[str, object] = dict(
        has_dynamic=True,
        soname=soname[0] if soname else None,
        needed=strings("DT_NEEDED"),
        rpath=paths("DT_RPATH"),
        runpath=paths("DT_RUNPATH"),
        empty_search_entries=tuple(("RPATH", e) for e in with_gaps("DT_RPATH")) +
        tuple(("RUNPATH", e) for e in with_gaps("DT_RUNPATH")),
        textrel="DT_TEXTREL" in tags or bool(tags.get("DT_FLAGS", 0) & DF_TEXTREL),
    )
    if out["textrel"]:
        out["text_relocations"] = count_text_relocations(sparse.read, sparse.size, tags, amap, _unwritable(phdrs),
                                                         elf_class, endian, machine)
    if strtab is None or "DT_SYMTAB" not in tags:
        return out
    symtab, needs, defs = _read_symbol_tables(sparse, amap, tags, elf_class, endian, strtab, machine)
    out.update(symtab=symtab, version_needs=needs, version_defs=defs,
               symbol_versions=_symbol_versions(sparse, amap, amap.offset(tags["DT_SYMTAB"]), symtab, elf_class,
                                                endian))
    names = symtab.names
    if machine == "EM_X86_64":  # where each named function is, for isa_scan's evidence
        values = _tables.symbol_values(sparse, amap.offset(tags["DT_SYMTAB"]), len(names) + 1, elf_class, endian)
        out["code_functions"] = sorted((values[i], values[i] + max(symtab.sizes[i], 1), names[i])
                                       for i, inf in enumerate(symtab.info)
                                       if symtab.defined[i] and inf & 0xF in (2, 10) and values[i])
    bounds = {i + 1: names[i] for i in compress(range(len(names)), map(str.startswith, names, repeat(BOUND_PREFIXES)))
              if symtab.defined[i]}
    if bounds:  # rare (a section named like an identifier): its relocation tables are read again for them
        out["relocated_bounds"] = relocated_bounds(sparse.pieces, sparse.size, tags, amap, bounds, elf_class, endian)
    return out


_STT_OBJECT = 1
_IS_OBJECT = bytes(1 if b & 0xF == _STT_OBJECT else 0 for b in range(256))  # st_info -> 1 for STT_OBJECT
_VERSION_VALUE = re.compile(rb"[ -~]{1,63}")


def _symbol_versions(sparse: SparseFile, amap, symtab_offset: int, symtab: SymbolTable, elf_class: int,
                     endian: str) -> tuple[str, ...]:
    """``name=value`` for the exported data symbols that hold a version string (``sqlite3_version=3.40.1``).

    A value that cannot be read (an address outside the loaded data, no NUL within 64 bytes) is left out:
    it is one string, not a reason to reject the file. The value has streamed past: it is fetched again (a
    few bytes, and only in the files that export such a symbol)."""
    out = []
    entsize, value_at, fmt = (24, 8, "Q") if elf_class == 64 else (16, 4, "I")
    # only names some defined data symbol has are looked up: a scan of the whole table per name (a library may
    # have 400,000 symbols) is made for the few files that export one
    objects = compress(symtab.names, mask_and(symtab.defined, symtab.info.translate(_IS_OBJECT)))
    for name in sorted(version_symbols().intersection(objects)):
        i = symtab.position(name)
        if i is None or not symtab.defined[i] or symtab.info[i] & 0xF != _STT_OBJECT:
            continue
        (address,) = struct.unpack(endian + fmt, sparse.read(symtab_offset + (i + 1) * entsize + value_at,
                                                              struct.calcsize(fmt)))
        try:
            start = amap.offset(address)
        except ElfFormatError:
            continue
        text = bytes(sparse.read(start, min(64, sparse.size - start)))
        value = _VERSION_VALUE.match(text)
        if value is not None and text[value.end():value.end() + 1] == b"\0":
            out.append(f"{name}={value.group().decode('ascii')}")
    return tuple(out)


def _read_symbol_tables(sparse: SparseFile, amap, tags, elf_class, endian, strtab, machine):
    hash_word = 8 if (machine, elf_class) == ("EM_S390", 64) else 4
    count = _tables.count_symbols(sparse, amap, tags, elf_class, endian, hash_word)
    columns = _tables.read_symbols(sparse, amap.offset(tags["DT_SYMTAB"]), count, elf_class, endian)

    # version index -> (name, library it is needed from, or None for a definition)
    versions: dict[int, tuple[str, str | None]] = {}
    need_rows = []
    if "DT_VERNEED" in tags:
        need_rows = _tables.read_verneed(
            sparse, amap.offset(tags["DT_VERNEED"]), tags.get("DT_VERNEEDNUM", 0), endian, strtab)
        for library, name, index, _flags in need_rows:
            versions[index] = (name, library)
    defs = []
    if "DT_VERDEF" in tags:
        for name, index, flags in _tables.read_verdef(
                sparse, amap.offset(tags["DT_VERDEF"]), tags.get("DT_VERDEFNUM", 0), endian, strtab):
            versions[index] = (name, None)
            if not flags & _tables.VER_FLG_BASE:
                defs.append(name)

    # compact version columns: 0 = unversioned; others index version_names
    version_names: list[tuple[str | None, str | None]] = [(None, None)]
    slot = {}
    for index, entry in sorted(versions.items()):
        if index > 1:
            slot[index] = len(version_names)
            version_names.append(entry)
    if "DT_VERSYM" in tags and count > 1:
        versym = _tables.read_versym(sparse, amap.offset(tags["DT_VERSYM"]), count, endian)
        version_index = _tables.translate_versions(versym[1:], slot)
    else:
        version_index = array("H", bytes(2 * len(columns.name_offsets)))
    defined = columns.defined
    names = strtab.names(columns.name_offsets)  # last: the kept bytes are dropped once the table is in

    by_version: dict[int, tuple[list[str], list[str]]] = {}
    info = columns.info
    for i in _tables.undefined_versioned(defined, version_index):
        vi = version_index[i]
        if version_names[vi][1] is not None:
            named, weak = by_version.setdefault(vi, ([], []))
            named.append(names[i])
            if info[i] >> 4 == 2:  # STB_WEAK
                weak.append(names[i])
    needs = []
    for library, name, index, flags in need_rows:
        named, weak = by_version.get(slot.get(index, -1), ([], []))
        needs.append(VersionNeed(library, name, bool(flags & _tables.VER_FLG_WEAK),
                                 tuple(sorted(named)), tuple(sorted(weak))))
    symtab = SymbolTable(names=names, info=info, other=columns.other, defined=defined, sizes=columns.sizes,
                         version_index=version_index, version_names=tuple(version_names))
    return symtab, tuple(needs), tuple(defs)
