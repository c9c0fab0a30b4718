"""conflict-missing-symbols: what a distribution's ELF files need from the distributions it requires.

An undefined symbol of a distribution's ELF file that its own files do not define, and that is not
bound by version to a library outside the given distributions (GLIBC_2.17 from libc.so.6), must come
from somewhere else. When the distribution declares dependencies (Requires-Dist, transitively, among
those given) and none of them defines it:
- if a dependency exports the other libstdc++ string ABI's twin of a C++ name (_Z4takeRKSs wanted,
  _Z4takeRKNSt7__cxx1112basic_string...E exported), the import fails with 'undefined symbol' (error);
- if a dependency exports other names of the same C++ namespace or C prefix, the file was most likely
  built against another version of it (warning);
- otherwise it presumably comes from a system library, which we cannot see (counted, not reported).
Python's own API (Py*, _Py*) comes from the interpreter and is left out.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence

from wheelcheck.conflicts.distribution import Distribution
from wheelcheck.symbols.families import count_prefix
from wheelcheck.symbols.mangling import OLD_HINT, abi_neutral, has_new_abi, has_old_abi, lead, short_name
from wheelcheck.conflicts.symbol_index import FileExports, SymbolIndex, file_name
from wheelcheck.conflicts.conflict_findings import ConflictFinding, Provider

__all__ = ["missing_symbols", "dependency_closure"]

_C_PREFIX = re.compile(r"^_*[A-Za-z0-9]+_")
_EXAMPLES = 5


def dependency_closure(dist: Distribution, members: Sequence[Distribution]) -> set[str]:
    """Canonical names of the given distributions ``dist`` requires, directly or through each other."""
    by_key: dict[str, list[Distribution]] = {}
    for d in members:
        by_key.setdefault(d.key, []).append(d)
    out: set[str] = set()
    todo = [k for k in dist.required if k in by_key]
    while todo:
        key = todo.pop()
        if key in out or key == dist.key:
            continue
        out.add(key)
        todo.extend(k for d in by_key[key] for k in d.required if k in by_key)
    return out


def missing_symbols(index: SymbolIndex, members: Sequence[Distribution]) -> list[ConflictFinding]:
    findings = []
    for dist in members:
        deps = dependency_closure(dist, members)
        files = [f for f in index.by_dist.get(dist.key, []) if f.dist is dist]
        if not deps or not files:
            continue
        provided = set().union(*(index.names[k] for k in deps))
        shipped = {file_name(f.elf) for k in deps for f in index.by_dist[k]}
        own = set().union(*(set(f.names) for f in files))
        exports = _SortedExports(index, deps)
        for f in files:
            missing = sorted({n for n, lib in f.undefined()
                              if n not in own and n not in provided and (lib is None or lib in shipped)
                              and not n.startswith(("Py", "_Py"))})
            if missing:
                findings.extend(_judge(dist, f, missing, deps, exports))
    return findings


class _SortedExports:
    """The dependencies' exports, sorted on first use (only when something is missing)."""

    def __init__(self, index: SymbolIndex, deps: set[str]) -> None:
        self._index, self._deps = index, deps
        self._sorted: list[str] | None = None

    @property
    def names(self) -> list[str]:
        if self._sorted is None:
            self._sorted = sorted(set().union(*(self._index.names[k] for k in self._deps)))
        return self._sorted

    def owner(self, name: str) -> FileExports | None:
        for key in sorted(self._deps):
            for f in self._index.by_dist[key]:
                if f.lookup(name) is not None:
                    return f
        return None

    def twin(self, wanted: str) -> str | None:
        """The other string ABI's mangling of ``wanted`` among the exports, if any."""
        prefix = lead(wanted)
        if prefix is None:
            return None
        key = abi_neutral(wanted)
        names = self.names
        i = bisect_left(names, prefix)
        while i < len(names) and names[i].startswith(prefix):
            candidate = names[i]
            if candidate != wanted and (has_new_abi(candidate) or OLD_HINT.search(candidate)) \
                    and abi_neutral(candidate) == key:
                return candidate
            i += 1
        return None

    def shares_prefix(self, wanted: str) -> bool:
        """Do the exports hold other names of ``wanted``'s C++ namespace (or class) or C prefix?"""
        prefix = lead(wanted) if wanted.startswith("_Z") else None
        if prefix is None:
            m = _C_PREFIX.match(wanted)
            prefix = m.group(0) if m else None
        return prefix is not None and count_prefix(self.names, prefix) > 0


def _judge(dist: Distribution, f: FileExports, missing: list[str], deps: set[str], exports: _SortedExports):
    twins = {}
    for name in missing:
        if name.startswith("_Z") and (has_new_abi(name) or has_old_abi(name)):
            twin = exports.twin(name)
            if twin:
                twins[name] = twin
    expected = [n for n in missing if n not in twins and exports.shares_prefix(n)]
    dep_labels = ", ".join(sorted(deps))
    if twins:
        wanted, twin = next(iter(twins.items()))
        owner = exports.owner(twin)
        wanted_abi = "new" if has_new_abi(wanted) else "old"
        other_abi = "old" if wanted_abi == "new" else "new"
        where = f"{owner.dist.label} ({owner.elf.path})" if owner else dep_labels
        yield ConflictFinding(
            "conflict-missing-symbols", "error",
            f"{dist.label}: {f.elf.path} needs {len(twins)} C++ symbol{'s' if len(twins) != 1 else ''} in the "
            f"{wanted_abi} libstdc++ string ABI that its requirements export only in the {other_abi} ABI: "
            f"{short_name(wanted)} wanted as {wanted}, {where} exports {twin}",
            f"rebuild it with -D_GLIBCXX_USE_CXX11_ABI={1 if other_abi == 'new' else 0} to match {where} "
            f"(torch >= 2.7 uses the new ABI), or require the build of the dependency with its ABI",
            (Provider(dist.name, dist.version, f.elf.path, len(twins)),)
            + ((Provider(owner.dist.name, owner.dist.version, owner.elf.path),) if owner else ()),
            family="libstdcxx", count=len(twins), symbols=tuple(twins)[:_EXAMPLES] + tuple(twins.values())[:1],
            names=tuple(sorted(twins)), explanation=f"Importing it fails with 'undefined symbol: {wanted}'.")
    if expected:
        yield ConflictFinding(
            "conflict-missing-symbols", "warning",
            f"{dist.label}: {f.elf.path} needs {len(expected)} symbol{'s' if len(expected) != 1 else ''} that "
            f"none of the distributions it requires ({dep_labels}) defines, though they export others of the "
            f"same namespace or prefix ({', '.join(short_name(n) for n in expected[:3])}): built against "
            f"another version?",
            "build against the version of the dependency you require (pin it in Requires-Dist)",
            (Provider(dist.name, dist.version, f.elf.path, len(expected)),), count=len(expected),
            symbols=tuple(expected[:_EXAMPLES]), names=tuple(expected),
            explanation="Importing it fails with 'undefined symbol' unless a library outside them provides them.")
