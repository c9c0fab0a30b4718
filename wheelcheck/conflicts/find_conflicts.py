"""What will collide when distributions share one process: the rules of `wheelcheck conflicts`.

Pure: from processes (analysis/processes.py) to one ProcessReport each. The symbol index of a process
is built once and every rule reads it:
- conflict-symbols (analysis/collisions.py): one exported name, several distributions' definitions;
- conflict-runtime-copies, conflict-soname (analysis/runtime_copies.py): runtimes a process must hold
  once, and sonames the loader maps once;
- conflict-missing-symbols (analysis/declared_deps.py): what required distributions fail to define.
"""

from __future__ import annotations

import gc
import posixpath
from collections.abc import Iterable
from contextlib import contextmanager

from wheelcheck.conflicts.collisions import symbol_conflicts
from wheelcheck.conflicts.declared_deps import missing_symbols
from wheelcheck.conflicts.processes import Process
from wheelcheck.conflicts.runtime_copies import runtime_copies, soname_conflicts
from wheelcheck.conflicts.symbol_index import build_index
from wheelcheck.conflicts.conflict_findings import ProcessReport

__all__ = ["analyse_process", "find_conflicts"]


def find_conflicts(processes: Iterable[Process]) -> list[ProcessReport]:
    return [analyse_process(p) for p in processes]


@contextmanager
def _without_cycle_collection():
    """The index makes a few hundred thousand small lists and tuples and no reference cycles; the cyclic
    collector would walk them again and again as they pile up: with it, 4 x 250,000 exported symbols
    took 2.8 s to analyse instead of 1.4 s. Restored on the way out."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def analyse_process(process: Process) -> ProcessReport:
    with _without_cycle_collection():
        return _analyse(process)


def _analyse(process: Process) -> ProcessReport:
    index = build_index(process.members, process.arch)
    findings, stats = symbol_conflicts(index)
    findings += runtime_copies(index)
    findings += soname_conflicts(index)
    findings += missing_symbols(index, process.members)
    findings.sort(key=lambda f: f.rank)
    distributions = []
    for dist in process.members:
        files = [f for f in index.by_dist.get(dist.key, []) if f.dist is dist]
        distributions.append({"name": dist.name, "version": dist.version, "source": dist.source,
                              "elf_files": len(files), "exported_symbols": sum(len(f.names) for f in files)})
    return ProcessReport(process.label, process.arch, process.libc, process.interpreter, distributions,
                         findings, _notes(process, len(index.files)),
                         {"elf_files": len(index.files), "exported_symbols": index.exported, **stats.as_dict()})


def _notes(process: Process, elf_files: int) -> list[str]:
    notes = []
    for versions in process.alternatives.values():
        labels = ", ".join(d.version for d in versions)
        notes.append(f"{versions[0].name}: {len(versions)} versions given ({labels}); they cannot be installed "
                     f"together, so each is compared with the other distributions and not with each other")
    with_elves = {d.key for d in process.members if d.loadable(process.arch)}
    if len(with_elves) < 2:
        notes.append("fewer than two distributions with ELF files: nothing can collide here"
                     if elf_files or len(process.members) > 1 else "a single distribution: nothing to compare")
    for dist in process.members:
        if dist.global_loaders:
            which = "its libraries" if dist.global_libraries is None else ", ".join(
                sorted(posixpath.basename(p) for p in dist.global_paths)[:4]) or "nothing it ships"
            notes.append(f"{dist.label} loads {which} with RTLD_GLOBAL as it is imported "
                         f"({', '.join(dist.global_loaders[:3])}): collisions with their symbols are live, not latent")
        elif dist.dormant_loaders:
            notes.append(f"{dist.label} names RTLD_GLOBAL only where its import does not go (a function its users "
                         f"call, a branch an environment variable opens: {', '.join(dist.dormant_loaders[:3])}): "
                         f"its collisions stay latent unless that code runs")
    return notes
