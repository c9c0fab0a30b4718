"""conflict-runtime-copies and conflict-soname: libraries a process must hold once.

A runtime copy (data/runtimes.json) is found by its name with auditwheel's hash removed, so a copy whose
symbols were hidden is still seen, or by an exported sentinel symbol (a runtime linked statically and
exported). Copies with the same soname are one copy: the loader maps the first and reuses it.

That reuse is the other rule: two distributions shipping one SONAME get one of the two files, whichever
is loaded first. Identical builds lose nothing; different builds may lack what the other side needs.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from fnmatch import fnmatch

from wheelcheck.symbols.sonames import unhashed
from wheelcheck.conflicts.symbol_index import FileExports, SymbolIndex, file_name
from wheelcheck.data import load_table
from wheelcheck.conflicts.conflict_findings import ConflictFinding, Provider

__all__ = ["Runtime", "runtimes", "detect_runtime", "runtime_copies", "soname_conflicts"]

_EXAMPLES = 5


@dataclass(frozen=True)
class Runtime:
    id: str
    title: str
    family: str
    implementations: dict[str, tuple[tuple[str, ...], tuple[str, ...]]]  # name -> (soname globs, sentinels)
    abort_together: frozenset[str]
    note: str


@functools.lru_cache(maxsize=1)
def runtimes() -> tuple[Runtime, ...]:
    out = []
    for rid, doc in load_table("runtimes.json")["runtimes"].items():
        impls = {name: (tuple(spec["sonames"]), tuple(spec["sentinels"]))
                 for name, spec in doc["implementations"].items()}
        out.append(Runtime(rid, doc["title"], doc["family"], impls, frozenset(doc["abort_together"]), doc["note"]))
    return tuple(out)


def detect_runtime(runtime: Runtime, f: FileExports, dist_names: set[str]) -> tuple[str, str] | None:
    """(implementation, evidence) when ``f`` is a copy of ``runtime``; ``dist_names``: what its
    distribution exports, to look up sentinels only where one can be."""
    names = {unhashed(f.elf.path.rsplit("/", 1)[-1])} | ({unhashed(f.elf.soname)} if f.elf.soname else set())
    for impl, (globs, _sentinels) in runtime.implementations.items():
        if any(fnmatch(n, g) for n in names for g in globs):
            return impl, f"named {file_name(f.elf)}"
    for impl, (_globs, sentinels) in runtime.implementations.items():
        for sentinel in sentinels:
            if sentinel in dist_names and f.lookup(sentinel) is not None:
                return impl, f"exports {sentinel}"
    return None


def runtime_copies(index: SymbolIndex) -> list[ConflictFinding]:
    findings = []
    for runtime in runtimes():
        copies: dict[str, list[tuple[FileExports, str, str]]] = {}  # soname -> its files: the loader maps one
        for f in index.files:
            found = detect_runtime(runtime, f, index.names[f.dist.key])
            if found:  # a file without a soname (an extension with a static runtime) is loaded by its path
                copies.setdefault(f.elf.soname or f"{f.dist.key}/{f.elf.path}", []).append((f, *found))
        if len(copies) >= 2:
            findings.append(_runtime_finding(runtime, copies))
    return findings


def _runtime_finding(runtime: Runtime, copies: dict[str, list[tuple[FileExports, str, str]]]) -> ConflictFinding:
    impls = [entries[0][1] for entries in copies.values()]
    aborting = sorted({i for i in impls if i in runtime.abort_together and impls.count(i) >= 2})
    described = []
    providers: list[Provider] = []
    for entries in sorted(copies.values(), key=lambda e: (e[0][0].dist.key, e[0][0].elf.path)):
        f, impl, evidence = entries[0]
        where = " and ".join(dict.fromkeys(f"{g.dist.label} ({g.elf.path})" for g, _, _ in entries))
        described.append(f"{impl} in {where}, {evidence}")
        providers.extend(Provider(g.dist.name, g.dist.version, g.elf.path) for g, _, _ in entries)
    message = f"{len(copies)} copies of the {runtime.title} in one process: {'; '.join(described)}"
    if aborting:
        message += f". Two copies of {', '.join(aborting)} abort the process when the second initialises"
    hint = ("depend on one shared copy (a common dependency distribution), or make every wheel load the same "
            "one; limit threads with threadpoolctl meanwhile")
    return ConflictFinding("conflict-runtime-copies", "error" if aborting else "warning", message, hint,
                           tuple(providers), runtime.id, None, None, len(copies), (), explanation=runtime.note)


def soname_conflicts(index: SymbolIndex) -> list[ConflictFinding]:
    by_soname: dict[str, dict[str, FileExports]] = {}
    for f in index.files:
        if f.elf.soname:
            by_soname.setdefault(f.elf.soname, {}).setdefault(f.dist.key, f)
    return [_soname_finding(soname, list(files.values()), index)
            for soname, files in sorted(by_soname.items()) if len(files) >= 2]


def _soname_finding(soname: str, files: list[FileExports], index: SymbolIndex) -> ConflictFinding:
    labels = " and ".join(f"{f.dist.label} ({f.elf.path})" for f in files)
    providers = tuple(Provider(f.dist.name, f.dist.version, f.elf.path) for f in files)
    lacks = []  # checked first: a copy edited after auditwheel named it (symbols hidden) keeps the hash it lies by
    for user_side in files:
        for other in files:
            if other is user_side:
                continue
            missing = sorted(_needed_from(user_side, soname, index) - set(other.names))
            if missing:
                lacks.append((user_side, other, missing))
    same_build = unhashed(soname) != soname or len({(f.elf.size, tuple(sorted(f.names))) for f in files}) == 1
    if lacks:
        user_side, other, missing = lacks[0]
        builds = ("copies of one build (auditwheel's content hash in the name) edited differently" if same_build
                  else "different builds")
        message = (f"{soname} is shipped by {labels}, {builds}: the loader maps the first one loaded "
                   f"and reuses it for the other; if {other.dist.label}'s is first, {user_side.dist.label} lacks "
                   f"{len(missing)} symbol{'s' if len(missing) != 1 else ''} it needs from it "
                   f"({', '.join(missing[:3])}): 'undefined symbol' at import")
        return ConflictFinding("conflict-soname", "error", message, _SONAME_HINT, providers, count=len(files),
                               symbols=tuple(missing[:_EXAMPLES]))
    if same_build:
        why = "auditwheel's content hash in the name" if unhashed(soname) != soname else "same size and exports"
        return ConflictFinding(
            "conflict-soname", "info", f"{soname} is shipped by {labels}: the same build ({why}), so whichever "
            f"is loaded first serves both", "", providers, count=len(files))
    message = (f"{soname} is shipped by {labels}, different builds: the loader maps the first one loaded and "
               f"reuses it for the other, which then runs with a library it was not built with")
    return ConflictFinding("conflict-soname", "warning", message, _SONAME_HINT, providers, count=len(files))


_SONAME_HINT = ("give vendored libraries unique names (`wheelcheck repair` and auditwheel add a content hash: "
                "libfoo-1a2b3c4d.so.1), or let one distribution ship the library and the other depend on it")


def _needed_from(f: FileExports, soname: str, index: SymbolIndex) -> set[str]:
    """Names the files of f's distribution that load ``soname`` need and f defines."""
    own = set(f.names)
    out: set[str] = set()
    for user in index.by_dist[f.dist.key]:
        if soname in user.elf.needed:
            out.update(n for n, lib in user.undefined() if n in own and lib in (None, soname))
    return out
