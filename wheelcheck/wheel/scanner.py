"""Turn a wheel file into a WheelModel: find ELF members by magic, summarise each once, in parallel."""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from email.parser import HeaderParser
from pathlib import Path

from wheelcheck.wheel.wheel_model import WheelModel
from wheelcheck.elf.elf_info import ElfInfo
from wheelcheck.elf.elf_summary import is_elf, summarize
from wheelcheck.errors import BadElfError, BadWheelError
from wheelcheck.wheel.wheel_reader import WheelReader, looks_like_shared_object
from wheelcheck.wheel.record import record_digest

__all__ = ["scan_wheel", "scan_reader", "PARALLEL_THRESHOLD", "Progress"]

# GNU ld scripts named like libraries (intel-cmplr-lib-rt's libintlc.so is "INPUT (libintlc.so.5)"): only the
# link editor reads them, the loader never does, so they are not the wheel's ELF files and not bad input
_LINKER_SCRIPT_STARTS = (b"/* GNU ld script", b"INPUT", b"GROUP", b"OUTPUT_FORMAT", b"SEARCH_DIR")


def _is_linker_script(head: bytes) -> bool:
    text = head.lstrip()
    return text.startswith(_LINKER_SCRIPT_STARTS) and b"\0" not in head

PARALLEL_THRESHOLD = 16 << 20  # below this much ELF data, starting processes costs more than it saves
BATCHES_PER_WORKER_WITH_PROGRESS = 4  # smaller batches so progress moves; each batch reopens the zip

# progress(done, total): bytes of ELF members summarised so far, out of all; called from this process only
Progress = Callable[[int, int], None]


def scan_wheel(path: str | Path, jobs: int | None = None, progress: Progress | None = None) -> WheelModel:
    """Read the wheel at ``path``. Raises BadWheelError/BadElfError for bad input.

    ``progress``, if given, is called with (bytes done, bytes total) as ELF members are summarised.
    """
    with WheelReader(path) as reader:
        return scan_reader(reader, jobs, progress)


def scan_reader(reader: WheelReader, jobs: int | None = None, progress: Progress | None = None) -> WheelModel:
    """``scan_wheel`` of a wheel already open (repair reads it once, for the model and for the output)."""
    dist_info = reader.dist_info
    wheel_meta = HeaderParser().parsestr(reader.metadata_text("WHEEL") or "")
    metadata = HeaderParser().parsestr(reader.metadata_text("METADATA") or "")
    record = reader.record()
    candidates = []
    for member in reader.members:
        name = member.filename
        if name.startswith(dist_info + "/"):
            continue
        if member.file_size >= 4 and is_elf(reader.head(name)):
            candidates.append(member)
        elif looks_like_shared_object(name) and not _is_linker_script(reader.head(name, 256)):
            raise BadElfError(f"{reader.path}:{name}", "named like a shared object but is not an ELF file")
    jobs_wanted = [(m.filename, record.algorithm(m.filename)) for m in candidates]
    total = sum(m.file_size for m in candidates)
    results = _summarize_all(str(reader.path), jobs_wanted, reader, total, jobs, progress)
    elves, problems = [], []
    for (name, _algo), (info, digest) in zip(jobs_wanted, results):
        elves.append(info)
        problem = record.check(name, digest)
        if problem:
            problems.append((name, problem))
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
        record_problems=tuple(problems),
    )


def _summarize_all(wheel: str, wanted, reader: WheelReader, total: int, jobs: int | None,
                   progress: Progress | None):
    sizes = reader.file_sizes()
    report = progress or (lambda done, total: None)
    report(0, total)
    workers = min(jobs or os.cpu_count() or 1, len(wanted))
    if workers <= 1 or total < PARALLEL_THRESHOLD:
        results, done = [], 0
        for name, algo in wanted:
            results.append(_summarize_one(wheel, name, algo, reader.read(name)))
            done += sizes[name]
            report(done, total)
        return results
    # batches balanced by size (largest first): one per worker, so each opens the zip only once, or a few
    # per worker when someone watches the progress
    count = workers * (BATCHES_PER_WORKER_WITH_PROGRESS if progress else 1)
    batches: list[list[int]] = [[] for _ in range(min(count, len(wanted)))]
    loads = [0] * len(batches)
    for i in sorted(range(len(wanted)), key=lambda i: -sizes[wanted[i][0]]):
        lightest = loads.index(min(loads))
        batches[lightest].append(i)
        loads[lightest] += sizes[wanted[i][0]]
    results: list = [None] * len(wanted)
    done = 0
    try:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = {pool.submit(_summarize_batch, wheel, [wanted[i] for i in batch]): (batch, load)
                       for batch, load in zip(batches, loads)}
            for future in as_completed(futures):
                batch, load = futures[future]
                for i, result in zip(batch, future.result()):
                    results[i] = result
                done += load
                report(done, total)
    except BrokenProcessPool:  # a worker was killed (out of memory, a signal): no error came back to raise
        raise BadWheelError(wheel, "a worker process died while reading the ELF members (killed, or out of "
                                   "memory); --jobs 1 reads them in this process") from None
    return results


def _summarize_batch(wheel: str, wanted: list[tuple[str, str]]) -> list[tuple[ElfInfo, str]]:
    with WheelReader(wheel) as reader:
        return [_summarize_one(wheel, name, algo, reader.read(name)) for name, algo in wanted]


def _summarize_one(wheel: str, name: str, algo: str, data: bytes) -> tuple[ElfInfo, str]:
    """The summary (with the member's sha256, for the bill of materials) and the RECORD digest: one hash
    pass serves both when RECORD uses sha256, as it nearly always does."""
    sha256 = hashlib.sha256(data).digest()
    try:
        info = summarize(data, name, sha256.hex())
    except BadElfError as exc:
        raise BadElfError(f"{wheel}:{name}", exc.problem) from None
    if algo == "sha256":
        return info, "sha256=" + base64.urlsafe_b64encode(sha256).rstrip(b"=").decode("ascii")
    return info, record_digest(data, algo)
