"""The per-file part of the hygiene checks, made before they run: each file's C++ string ABI, the imports that
could meet a sibling of the other ABI, and its exported symbols' exposure. Each depends on one file alone, so
a large wheel's files are analysed on several processes at once (``wheel/forked.py``); the checks then judge
the wheel as a whole from these."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from wheelcheck.audit.cxxabi import CxxAbi, abi_tagged, classify_tagged, interface, sibling_defined
from wheelcheck.audit.exposure import Exposure, exposure_of
from wheelcheck.elf.elf_info import ElfInfo
from wheelcheck.wheel.forked import MEMORY_BUDGET, ChildDied, fork_map, resident_bytes
from wheelcheck.wheel.scanner import default_jobs

__all__ = ["FileAnalysis", "analyse_file", "analyse_files"]

# Symbols in all (the analyses' cost) from which files are analysed on several processes: below it a fork
# and the results' trip back cost about what they save
_FORK_MIN_SYMBOLS = 150_000


@dataclass(frozen=True)
class FileAnalysis:
    cxx_abi: CxxAbi
    abi_imports: tuple[str, ...]  # undefined C++ symbols that may name an ABI-tagged type, in table order
    abi_exports: tuple[str, ...]  # exported ones that may, in table order
    exposure: Exposure


def analyse_file(elf: ElfInfo) -> FileAnalysis:
    return FileAnalysis(*_abi_part(elf), exposure_of(elf))


def analyse_files(elves: Sequence[ElfInfo], jobs: int | None,
                  made: Callable[[ElfInfo], FileAnalysis | None] = lambda elf: None) -> dict[str, FileAnalysis]:
    """Every file's analysis, by path; on up to ``jobs`` processes (default: one per core) when the wheel is large.

    ``made(elf)``: the analysis made already (as the wheel was read: ``scan_wheel(analyse=analyse_file)``), or
    None. The two parts of a file's analysis (ABI, exposure) cost about the same and are shared out apart: the
    largest library's two halves are made at once."""
    analyses = {elf.path: found for elf in elves if (found := made(elf)) is not None}
    missing = [elf for elf in elves if elf.path not in analyses]
    return {**analyses, **_analysed(missing, jobs)}


def _analysed(elves: Sequence[ElfInfo], jobs: int | None) -> dict[str, FileAnalysis]:
    weights = [len(elf.symtab) for elf in elves]
    jobs = (jobs or default_jobs()) if sum(weights) >= _FORK_MIN_SYMBOLS else 1
    if jobs > 1 and not _children_fit(elves, jobs):
        jobs = 1
    tasks = [(part, elf) for elf in elves for part in (_abi_part, exposure_of)]
    try:
        done = fork_map(_run_task, tasks, [w for w in weights for _ in range(2)], jobs)
    except ChildDied:  # killed (out of memory?): the analyses are cheap enough to make here
        done = [_run_task(task) for task in tasks]
    analyses = {}
    for i, elf in enumerate(elves):
        cxx_abi, abi_imports, abi_exports = done[2 * i]
        analyses[elf.path] = FileAnalysis(cxx_abi, abi_imports, abi_exports, done[2 * i + 1])
    return analyses


def _children_fit(elves: Sequence[ElfInfo], jobs: int) -> bool:
    """Would the children stay within the memory budget? A forked child shares this process's pages until it
    writes to them, and reading a Python object writes its reference count: a child copies about the objects
    of its share of the symbol names (their text and some 56 bytes of object each)."""
    here = resident_bytes()
    if here is None:
        return False
    names = sum(sum(map(len, elf.symtab.names)) + 56 * len(elf.symtab) for elf in elves)
    return here + names * (jobs - 1) // jobs <= MEMORY_BUDGET


def _abi_part(elf: ElfInfo) -> tuple[CxxAbi, tuple[str, ...], tuple[str, ...]]:
    exports, imports = interface(elf)
    tagged_exports, tagged_imports = abi_tagged(exports), abi_tagged(imports)
    return (classify_tagged(tagged_exports, tagged_imports), tuple(sibling_defined(tagged_imports)),
            tuple(tagged_exports))


def _run_task(task: tuple[Callable[[ElfInfo], Any], ElfInfo]) -> Any:
    part, elf = task
    return part(elf)
