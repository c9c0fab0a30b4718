"""Which symbols of vendored libraries to hide or rename so no other copy in the process binds to them.

Pure: from the summaries of a wheel's ELF files to one SymbolEdit per file.
- An export nothing in the wheel imports is hidden (local binding and hidden visibility).
- An export that ELF files of the wheel import is renamed to a name unique to this copy (a prefix from
  the library's content hash) in the library and in every importer that binds to it: hiding alone
  cannot help there, since under RTLD_GLOBAL another copy's definition is found first.
- Names matching --keep-symbols, and names that appear as strings in the wheel's ELF files (dlsym
  lookups), are kept as they are and reported as the collision risk that remains.
- So are names an ELF file of the wheel imports from a vendored library it does not link (an underlinked
  library: Debian's libmfhdfalt.so.0 uses libdfalt.so.0's names and relies on libgdal loading both). ld.so
  finds them among what the process loaded before; hidden there, or renamed there alone, they are found nowhere.
- So are names another ELF file of the wheel defines too, whatever their binding: C++ vague linkage (the
  static locals of inline functions, template static members, typeinfo, vtables: STB_WEAK or STB_GNU_UNIQUE in
  every file that uses them) and plain duplicate definitions. The loader makes such copies one (one per process
  for STB_GNU_UNIQUE, the first in scope otherwise); hidden in the library, or renamed there and not in the
  other definers, each copy serves its own file (a header-only counter, an inline function's static local,
  read 0 instead of 2: tests/test_repair_hide.py).
  Any two files of the wheel may share a load scope (RTLD_GLOBAL, a ctypes load, STB_GNU_UNIQUE), so any
  other definer counts; typeinfo names (_ZTS*) too, whose bytes are their own name, so keeping them costs
  nothing, while code that compares type_info::name() pointers needs one copy.
The plan is checked before it is returned (repair.hide_check): no binding inside the wheel may break.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
import re
from fnmatch import fnmatchcase

from wheelcheck.elf.elf_info import ElfInfo
from wheelcheck.elf.symbol_edit import SymbolEdit
from wheelcheck.repair.hide_check import check_hiding, shared_definitions

__all__ = ["HidingPlan", "LibraryHiding", "plan_hiding"]


@dataclass(frozen=True)
class LibraryHiding:
    path: str
    exports: int
    hidden: tuple[str, ...]
    renamed: Mapping[str, str]
    kept: Mapping[str, str]  # name -> why it stays visible


@dataclass(frozen=True)
class HidingPlan:
    libraries: tuple[LibraryHiding, ...]
    edits: Mapping[str, SymbolEdit] = field(default_factory=dict)  # member path -> edit (libraries and importers)


def plan_hiding(
    elves: Iterable[ElfInfo],
    targets: Iterable[str],
    prefixes: Mapping[str, str],
    *,
    keep_patterns: Iterable[str] | Mapping[str, str] = (),
    strings: frozenset[str] = frozenset(),
    extension_targets: Iterable[str] = (),
    already_unique: re.Pattern | None = None,
) -> HidingPlan:
    """``targets``: member paths of vendored libraries; ``prefixes``: path -> unique prefix for renames;
    ``extension_targets``: extension modules whose exports (but PyInit_* and what the wheel imports) to hide;
    ``already_unique``: names an earlier run renamed (left alone, so a second run changes nothing)."""
    by_path = {e.path: e for e in elves}
    targets = [t for t in targets if t in by_path]
    keep_patterns = _reasons(keep_patterns)
    exports = {t: set(by_path[t].symtab.export_names()) for t in targets}
    if already_unique is not None:
        exports = {t: {n for n in names if not already_unique.match(n)} for t, names in exports.items()}
    provider, unlinked = _providers(by_path, targets, exports)

    renamed: dict[str, dict[str, str]] = {t: {} for t in targets}
    importer_renames: dict[str, dict[str, str]] = {}
    kept: dict[str, dict[str, str]] = {t: {} for t in targets}
    for lib, users in unlinked.items():
        for name, importer in users.items():
            kept[lib][name] = f"imported by {importer}, which does not link this library (underlinked)"
    for lib, names in _shared(by_path, targets, set().union(*exports.values())).items():
        for name, reason in names.items():
            kept[lib].setdefault(name, reason)
    for importer, bindings in provider.items():
        for name, lib in bindings.items():
            why = kept[lib].get(name) or _keep_reason(name, keep_patterns, strings)
            if why:
                kept[lib][name] = why
                continue
            new = prefixes[lib] + name
            renamed[lib][name] = new
            importer_renames.setdefault(importer, {})[name] = new

    libraries = []
    edits: dict[str, SymbolEdit] = {}
    for lib in targets:
        hide = set()
        for name in exports[lib] - renamed[lib].keys() - kept[lib].keys():
            why = _keep_reason(name, keep_patterns, strings)
            if why:
                kept[lib][name] = why
            else:
                hide.add(name)
        libraries.append(LibraryHiding(lib, len(exports[lib]), tuple(sorted(hide)), renamed[lib], kept[lib]))
        edits[lib] = SymbolEdit(frozenset(hide), dict(renamed[lib]))
    for importer, mapping in importer_renames.items():
        previous = edits.get(importer, SymbolEdit())
        edits[importer] = SymbolEdit(previous.hide, {**previous.rename, **mapping})
    extensions = [ext for ext in extension_targets if ext in by_path and ext not in targets]
    shared = _shared(by_path, extensions, set().union(*(by_path[ext].symtab.export_names() for ext in extensions)))
    for ext in extensions:
        libraries.append(_hide_extension(by_path, ext, keep_patterns, strings, edits, shared.get(ext, {})))
    check_hiding(by_path.values(), edits)
    return HidingPlan(tuple(libraries), edits)


def _providers(elves: dict[str, ElfInfo], targets: list[str],
               exports: dict[str, set[str]]) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, str]]]:
    """(importer -> {imported name: the vendored library it binds to}: the first, in the importer's
    breadth-first load order, that exports the name (as ld.so searches the loaded objects);
    vendored library -> {name: an importer that imports it but does not load the library itself})."""
    by_name: dict[str, str] = {}
    for path, elf in elves.items():
        by_name.setdefault(path.rsplit("/", 1)[-1], path)
        if elf.soname:
            by_name.setdefault(elf.soname, path)
    target_set = set(targets)
    out: dict[str, dict[str, str]] = {}
    unlinked: dict[str, dict[str, str]] = {}
    for path, elf in elves.items():
        order = [lib for lib in _load_order(elves, by_name, path) if lib in target_set and lib != path]
        wanted = elf.symtab.undefined_names()
        bound: dict[str, str] = {}
        for lib in order:
            for name in wanted & exports[lib]:
                bound.setdefault(name, lib)
        if bound:
            out[path] = bound
        unbound = wanted - bound.keys()
        for lib in target_set.difference(order, (path,)):
            for name in unbound & exports[lib]:
                unlinked.setdefault(lib, {}).setdefault(name, path)
    return out, unlinked


def _shared(elves: dict[str, ElfInfo], paths: Iterable[str], names: set[str]) -> dict[str, dict[str, str]]:
    """path -> {name: why it stays visible} for ``paths``' exports among ``names`` that another file of the
    wheel defines too, as the same object (hide_check.shared_definitions)."""
    out: dict[str, dict[str, str]] = {}
    weak: dict[str, frozenset[str]] = {}
    asked = set(paths)
    for name, pairs in shared_definitions(elves.values(), names).items():
        for path in asked.intersection(pairs):
            other = pairs[path][0]
            for p in (path, other):
                if p not in weak:
                    weak[p] = frozenset(elves[p].symtab.weak_export_names())
            kind = "C++ vague linkage" if name in weak[path] or name in weak[other] else "a duplicate definition"
            out.setdefault(path, {})[name] = f"defined in {other} too ({kind})"
    return out


def _load_order(elves: dict[str, ElfInfo], by_name: dict[str, str], root: str) -> list[str]:
    order, seen, queue = [], {root}, deque([root])
    while queue:
        for soname in elves[queue.popleft()].needed:
            dep = by_name.get(soname)
            if dep is not None and dep not in seen:
                seen.add(dep)
                order.append(dep)
                queue.append(dep)
    return order


def _reasons(patterns: Iterable[str] | Mapping[str, str]) -> dict[str, str]:
    """glob -> why a match is kept; bare globs are the user's --keep-symbols."""
    if isinstance(patterns, Mapping):
        return dict(patterns)
    return {pattern: f"matches --keep-symbols {pattern}" for pattern in patterns}


def _keep_reason(name: str, patterns: Mapping[str, str], strings: frozenset[str]) -> str | None:
    for pattern, why in patterns.items():
        if fnmatchcase(name, pattern):
            return why
    if name in strings:
        return "appears as a string in the wheel (a dlsym lookup?)"
    return None


def _hide_extension(elves, ext: str, patterns, strings, edits, shared: Mapping[str, str]) -> LibraryHiding:
    elf = elves[ext]
    names = set(elf.symtab.export_names())
    wanted_elsewhere = set().union(*(e.symtab.undefined_names() for p, e in elves.items() if p != ext))
    hide, kept = set(), {}
    for name in names:
        if name.startswith("PyInit_") or name == elf.python_init:
            continue
        if name in wanted_elsewhere:
            kept[name] = "imported by another ELF file of the wheel"
            continue
        if name in shared:
            kept[name] = shared[name]
            continue
        why = _keep_reason(name, patterns, strings)
        if why:
            kept[name] = why
        else:
            hide.add(name)
    previous = edits.get(ext, SymbolEdit())
    edits[ext] = SymbolEdit(previous.hide | hide, previous.rename)
    return LibraryHiding(ext, len(names), tuple(sorted(hide)), {}, kept)
