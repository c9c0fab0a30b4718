"""Turn a wheel file into a WheelModel: find ELF members by magic, stream and summarise each once.

Each ELF member is inflated once, in pieces: as each piece passes it is checked (CRC-32), hashed for
RECORD (and for the bill of materials: one sha256 pass serves both when RECORD uses sha256, as it nearly
always does) and fed to the ELF summary, then dropped, so memory does not grow with the member. Inflating and
hashing release the GIL: with ``jobs`` above 1, several members stream at once on threads, each inflated
on a thread of its own a few pieces ahead of the thread that hashes and summarises it. Parsing holds the GIL,
so a large wheel's members are also split between this process and forked children (``jobs`` processes in
all), each summarising its share; only the summaries come back.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable
from typing import Any
from email.parser import HeaderParser
from pathlib import Path
from zipfile import ZIP_DEFLATED, ZIP_STORED, ZipInfo

from wheelcheck.wheel.wheel_model import WheelModel
from wheelcheck.elf.elf_info import ElfInfo
from wheelcheck.elf.elf_summary import is_elf, summarize_stream
from wheelcheck.errors import BadElfError, BadWheelError
from wheelcheck.wheel._read_ahead import ahead
from wheelcheck.wheel.license_notices import license_notices
from wheelcheck.wheel.forked import ChildDied, GroupFailed, balanced_groups, can_fork, fork_groups
from wheelcheck.wheel.wheel_reader import MAX_TEXT_SIZE, WheelReader, looks_like_shared_object
from wheelcheck.wheel.package_checks import package_problems, record_problems
from wheelcheck.wheel.record import digest_field
from wheelcheck.wheel.variant_metadata import VARIANT_JSON, Problem, VariantMetadata, read_variant_json
from wheelcheck.wheel import _zlib

__all__ = ["scan_wheel", "scan_reader", "Progress", "default_jobs"]

_AHEAD = 1 << 20  # members smaller than this are inflated on the thread that summarises them
_THREADS_MIN = 24 << 20  # ELF bytes in all below which members stream one after another: inflating them all takes
# under 0.1 s, so threads could save little and their start and the GIL's hand-offs cost about as much
_PROCESSES_MIN = 64 << 20  # ELF bytes in all from which members are summarised on processes too (forked.py)
PROGRESS_STEP = 32 << 20  # within a large member, progress moves at least this often
# GNU ld scripts named like libraries (intel-cmplr-lib-rt's libintlc.so is "INPUT (libintlc.so.5)"): only the
# link editor reads them, the loader never does, so they are not the wheel's ELF files and not bad input
_LINKER_SCRIPT_STARTS = (b"/* GNU ld script", b"INPUT", b"GROUP", b"OUTPUT_FORMAT", b"SEARCH_DIR")
_MACH_O = frozenset({b"\xfe\xed\xfa\xce", b"\xfe\xed\xfa\xcf", b"\xce\xfa\xed\xfe", b"\xcf\xfa\xed\xfe",
                     b"\xca\xfe\xba\xbe"})  # 32/64-bit either byte order, and universal (fat) files
_LINK_MAX = 4096  # PATH_MAX: the most of a link member's target that is read


def _is_linker_script(head: bytes) -> bool:
    text = head.lstrip()
    return text.startswith(_LINKER_SCRIPT_STARTS) and b"\0" not in head


def _what_it_holds(head: bytes) -> str:
    """What a member named like a shared library holds instead of an ELF file, from its first bytes."""
    if not head:
        return "nothing (it is empty)"
    if head[:4] in _MACH_O:
        return "a Mach-O file (macOS)"
    if head[:2] == b"MZ":
        return "a Windows PE file"
    return f"no ELF file (it starts with {head[:16]!r})"


# progress(done, total): bytes of ELF members summarised so far, out of all; called from this process only
Progress = Callable[[int, int], None]
# analyse(summary): the caller's own per-file work, done where the file was summarised (in a child too, while
# this process reads its share), kept in WheelModel.analyses; a module-level function, and a picklable result
Analyse = Callable[[ElfInfo], Any]
_Result = tuple[ElfInfo, str, Any]  # (summary, RECORD digest, analysis or None)


def default_jobs() -> int:
    """Threads that stream members at once: one per core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def scan_wheel(path: str | Path, jobs: int | None = None, progress: Progress | None = None,
               analyse: Analyse | None = None) -> WheelModel:
    """Read the wheel at ``path``. Raises BadWheelError/BadElfError for bad input.

    ``progress``, if given, is called with (bytes done, bytes total) as ELF members are summarised.
    """
    with WheelReader(path) as reader:
        return scan_reader(reader, jobs, progress, analyse)


def scan_reader(reader: WheelReader, jobs: int | None = None, progress: Progress | None = None,
                analyse: Analyse | None = None) -> WheelModel:
    """``scan_wheel`` of a wheel already open (repair reads it once, for the model and for the output)."""
    dist_info = reader.dist_info
    wheel_meta = HeaderParser().parsestr(reader.metadata_text("WHEEL") or "")
    metadata = HeaderParser().parsestr(reader.metadata_text("METADATA") or "")
    record = reader.record()
    candidates, not_elf, links = [], [], []
    for member in reader.members:
        name = member.filename
        if name in reader.links:
            target = reader.head(name, _LINK_MAX)
            if not is_elf(target):  # an ELF file stored with a link's mode is installed as that file
                links.append((name, target.decode("utf-8", "replace")))
                continue
        if name.startswith(dist_info + "/"):
            continue
        if member.file_size >= 4 and is_elf(reader.head(name)):
            candidates.append(member)
        elif looks_like_shared_object(name):
            head = reader.head(name, 256)
            if not _is_linker_script(head):
                not_elf.append((name, _what_it_holds(head)))
    results = _summarize_all(reader, candidates, [record.algorithm(m.filename) for m in candidates],
                             jobs or default_jobs(), _Tally(candidates, progress), analyse)
    elves, debug_files, hashed = [], [], {}
    analyses = []
    for member, (info, digest, analysis) in zip(candidates, results):
        if info.debug_only:  # nothing loads it: not one of the wheel's ELF files to judge or repair
            debug_files.append(member.filename)
        else:
            elves.append(info)
            if analyse is not None:
                analyses.append((info, analysis))
        hashed[member.filename] = digest
    problems, hex_digests = record_problems(reader, record, hashed)
    return WheelModel(
        filename=reader.filename,
        name=str(reader.name),
        version=str(reader.version),
        tags=frozenset(reader.tags),
        elves=tuple(elves),
        members=tuple(m.filename for m in reader.members),
        root_is_purelib=wheel_meta.get("Root-Is-Purelib", "false").strip().lower() == "true",
        data_dir=reader.data_dir(),
        requires_dist=tuple(metadata.get_all("Requires-Dist") or ()),
        requires_python=metadata.get("Requires-Python"),
        record_problems=tuple(problems),
        record_in_hex=tuple(hex_digests),
        package_problems=tuple(package_problems(reader)),
        size=os.fstat(reader.fileno()).st_size,
        not_elf_libraries=tuple(not_elf),
        links=tuple(links),
        debug_files=tuple(debug_files),
        license_notices=license_notices(reader),
        variant_label=reader.variant_label,
        variant=_variant_metadata(reader),
        analyses=tuple(analyses),
    )


def _variant_metadata(reader: WheelReader) -> VariantMetadata | None:
    """The wheel's PEP 825 variant metadata file, read and checked (None when it has none). Bytes that are not
    UTF-8 JSON are a problem of that file, reported as such, not bad input."""
    size = reader.file_sizes().get(f"{reader.dist_info}/{VARIANT_JSON}")
    if size is None:
        return None
    if size > MAX_TEXT_SIZE:
        return VariantMetadata(problems=(Problem("error", f"declares {size} bytes, too many for a metadata file"),),
                               readable=False)
    return read_variant_json(bytes(reader.read(f"{reader.dist_info}/{VARIANT_JSON}")), reader.variant_label)


def _summarize_all(reader: WheelReader, members: list[ZipInfo], algorithms: list[str], jobs: int,
                   tally: _Tally, analyse: Analyse | None) -> list[_Result]:
    """Each member's (summary, RECORD digest, analysis or None), in order; raises the error the first failing
    member (in wheel order) raises, as reading them one after another would."""
    try:
        if jobs <= 1 or tally.total < _THREADS_MIN:
            return _one_by_one(reader, members, algorithms, tally, analyse)
        buckets = _process_buckets(members, jobs) if tally.total >= _PROCESSES_MIN else []
        if buckets:
            return _on_processes(reader, members, algorithms, jobs, tally, buckets, analyse)
        return _on_threads(reader, members, algorithms, jobs, tally, analyse)
    except GroupFailed as failed:
        raise failed.error from None


def _one_by_one(reader: WheelReader, members: list[ZipInfo], algorithms: list[str], tally: _Tally,
                analyse: Analyse | None) -> list[_Result]:
    results = []
    for i, (member, algorithm) in enumerate(zip(members, algorithms)):
        try:
            results.append(_summarize_one(reader, member, algorithm, tally, i, analyse, pipelined=False))
        except Exception as exc:
            raise GroupFailed(i, exc) from None
    return results


def _on_threads(reader: WheelReader, members: list[ZipInfo], algorithms: list[str], jobs: int,
                tally: _Tally, analyse: Analyse | None) -> list[_Result]:
    if jobs <= 1 or len(members) <= 1 and (not members or members[0].file_size < _AHEAD):
        return _one_by_one(reader, members, algorithms, tally, analyse)
    from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait  # here: a small wheel needs no pool

    # largest first, so the longest member starts at once and the small ones fill in around it
    order = sorted(range(len(members)), key=lambda i: -members[i].file_size)
    results: list = [None] * len(members)
    with ThreadPoolExecutor(max_workers=min(jobs, len(members)), thread_name_prefix="wheelcheck-scan") as pool:
        futures = {pool.submit(_summarize_one, reader, members[i], algorithms[i], tally, i, analyse, pipelined=True): i
                   for i in order}
        done, pending = wait(futures, return_when=FIRST_EXCEPTION)
        first = min((futures[f] for f in done if f.exception() is not None), default=None)
        if first is not None:
            # the error one member after another would raise: the members after the failed one (in wheel
            # order) stop, those before it finish, and the first failure in wheel order is raised
            tally.cutoff = first
            for future in pending:
                if futures[future] > first:
                    future.cancel()
            wait(pending)
            failed = [(futures[f], error) for f in futures if not f.cancelled()
                      and (error := f.exception()) is not None and not isinstance(error, _Stopped)]
            raise GroupFailed(*min(failed, key=lambda pair: pair[0]))  # the first in wheel order
        for future, i in futures.items():
            results[i] = future.result()
    return results


def _process_buckets(members: list[ZipInfo], jobs: int) -> list[list[int]]:
    """Member indices in up to ``jobs`` groups of about equal bytes, the largest group first (it stays in
    this process: what a child summarises is pickled back, and the largest tables cost most to send); [] when
    the members should not leave this process."""
    if len(members) < 2 or any(m.compress_type not in (ZIP_STORED, ZIP_DEFLATED) for m in members):
        return []  # other methods read through zipfile, whose file position a child would share
    if not can_fork():
        return []
    buckets = balanced_groups([m.file_size for m in members], jobs)
    return buckets if len(buckets) > 1 else []


def _on_processes(reader: WheelReader, members: list[ZipInfo], algorithms: list[str], jobs: int, tally: _Tally,
                  buckets: list[list[int]], analyse: Analyse | None) -> list[_Result]:
    """The first bucket summarised here (on threads), each other one in a forked child at the same time."""

    def run(bucket: list[int], here: bool) -> list[_Result]:
        chosen, their_algorithms = [members[i] for i in bucket], [algorithms[i] for i in bucket]
        if here:
            return _on_threads(reader, chosen, their_algorithms, jobs, tally, analyse)
        return _child_bucket(reader, chosen, their_algorithms, jobs, analyse)

    def arrived(bucket: list[int]) -> None:
        tally.add(sum(members[i].file_size for i in bucket), member_done=True)

    try:
        return fork_groups(run, buckets, len(members), arrived)
    except ChildDied:
        raise BadWheelError(str(reader.path), _CHILD_DIED) from None


_CHILD_DIED = ("a child process died while reading its ELF members (killed, or out of memory); --jobs 1 reads "
               "them in this process")


def _child_bucket(reader: WheelReader, members: list[ZipInfo], algorithms: list[str], jobs: int,
                  analyse: Analyse | None) -> list[_Result]:
    """In a forked child: summarise ``members`` of the wheel the parent opened (its descriptor is shared;
    every read is positional)."""
    return _on_threads(reader, members, algorithms, jobs, _Tally(members, None), analyse)


def _summarize_one(reader: WheelReader, member: ZipInfo, algorithm: str, tally: _Tally, index: int,
                   analyse: Analyse | None, pipelined: bool) -> _Result:
    """The member's summary (with its sha256), RECORD digest and ``analyse`` of the summary (None without it),
    from one pass over its bytes."""
    stream = reader.stream(member.filename)
    hasher = hashlib.new(algorithm)
    sha256 = hasher if algorithm == "sha256" else hashlib.sha256()
    crc = 0

    def pieces():
        nonlocal crc
        for piece in ahead(stream) if pipelined and member.file_size >= _AHEAD else stream:
            if index > tally.cutoff:
                raise _Stopped()
            crc = _zlib.crc32(piece, crc)
            hasher.update(piece)
            if sha256 is not hasher:
                sha256.update(piece)
            yield piece
            tally.add(len(piece))
        tally.add(0, member_done=True)

    name = member.filename
    try:
        info = summarize_stream(pieces(), member.file_size, name, stream.reread, sha256=sha256.hexdigest)
    except BadElfError as exc:
        raise BadElfError(f"{reader.path}:{name}", exc.problem) from None
    stream.check_crc(crc)
    return info, digest_field(algorithm, hasher.digest()), analyse(info) if analyse is not None else None


class _Stopped(Exception):
    """A member before this one failed: this one stops early (its own result is never used)."""


class _Tally:
    """Bytes summarised so far, reported to ``progress`` in order from whichever thread adds them."""

    def __init__(self, members: list[ZipInfo], progress: Progress | None) -> None:
        self.total = sum(m.file_size for m in members)
        self.cutoff = len(members)  # members after this one (in wheel order) stop: one before it failed
        self._done = self._reported = 0
        self._progress = progress
        self._lock = threading.Lock()
        if progress:
            progress(0, self.total)

    def add(self, count: int, member_done: bool = False) -> None:
        if self._progress is None:
            return
        with self._lock:
            self._done += count
            if member_done or self._done - self._reported >= PROGRESS_STEP:
                self._reported = self._done
                self._progress(self._done, self.total)
