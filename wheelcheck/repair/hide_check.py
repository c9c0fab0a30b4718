"""The check every repair --hide-symbols edit must pass: what bound inside the wheel before still binds after.

Pure: from the summaries of the wheel's ELF files before the edit, the edits, and (when they are made) the
edited files' summaries. A plan breaks a program that loaded before in two ways:
- a name an ELF file imports, which another file of the wheel exported, is exported by no file of the wheel
  under the name the importer will ask for (hidden there, or renamed there and not in the importer): the import
  fails with ``undefined symbol`` (GDAL's underlinked libmfhdfalt.so.0, built on Debian);
- a name several files of the wheel define, which the loader made one object (C++ vague linkage, or a plain
  duplicate definition), is hidden in some of them or renamed in some and not all: each copy then serves its own
  file, silently (a header-only singleton counted 0 instead of 2).
Any two files of the wheel count as sharing a load scope, as in repair.hide_plan: under RTLD_GLOBAL they do,
and STB_GNU_UNIQUE definitions are one per process whatever the scope.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from wheelcheck.elf.elf_info import ElfInfo
from wheelcheck.elf.linker_made import names_own_file
from wheelcheck.elf.symbol_edit import SymbolEdit
from wheelcheck.errors import RepairError

__all__ = ["BrokenBinding", "broken_bindings", "check_hiding", "shared_definitions"]


@dataclass(frozen=True)
class BrokenBinding:
    """One binding inside the wheel an edit breaks: the file that loses it, the name, and how."""

    user: str
    name: str
    problem: str


def shared_definitions(elves: Iterable[ElfInfo], names: set[str]) -> dict[str, dict[str, list[str]]]:
    """name -> {file: the other files whose definition of it the loader may bind in place of the file's own}, for
    those of ``names`` that several ELF files of the wheel export.

    Two definitions are one to the loader unless both are versioned, in different versions (libcurl's
    CURL_OPENSSL_4 and libcurl-gnutls' CURL_GNUTLS_3 keep their 92 names apart). The symbols GNU ld makes for a
    file's version nodes (NSS_3.7 in libnss3 and libsmime3) are not objects at all, and the markers and section
    bounds it makes (_end, __start_<sec>) each stand for their own file: one file reaching another's is a bug
    that hiding cures (elf.linker_made).
    """
    names = {name for name in names if not names_own_file(name)}
    if not names:  # (no --hide-extension-symbols: plan_hiding asks about no extension's names)
        return {}
    found: dict[str, list[tuple[str, frozenset[str | None]]]] = {}
    for elf in elves:
        common = names.intersection(elf.symtab.export_names()).difference(elf.version_defs)
        if common:
            versions = elf.symtab.export_versions()
            for name in common:
                found.setdefault(name, []).append((elf.path, versions[name]))
    out: dict[str, dict[str, list[str]]] = {}
    for name, definitions in found.items():
        for path, mine in definitions:
            others = [other for other, theirs in definitions if other != path and _may_be_one(mine, theirs)]
            if others:
                out.setdefault(name, {})[path] = others
    return out


def _may_be_one(mine: frozenset[str | None], theirs: frozenset[str | None]) -> bool:
    return None in mine or None in theirs or bool(mine & theirs)


def broken_bindings(before: Iterable[ElfInfo], edits: Mapping[str, SymbolEdit],
                    after: Iterable[ElfInfo] = ()) -> list[BrokenBinding]:
    """The bindings inside the wheel that ``edits`` break, in the order of ``before``.

    ``after``: summaries of the edited files as made (what they export and import is read from them); a file
    without one is taken to be what its edit says it will be.
    """
    files = {e.path: e for e in before}
    edits = {path: edit for path, edit in edits.items() if edit and path in files}
    touched = set().union(*(edit.hide | edit.rename.keys() for edit in edits.values()))
    if not touched:
        return []
    made = {e.path: e for e in after if e.path in files}
    exported = {path: set(e.symtab.export_names()) for path, e in files.items()}
    exported_after = {path: _exported_after(exported[path], edits.get(path), made.get(path)) for path in files}
    definers: dict[str, list[str]] = {}
    for path, names in exported.items():
        for name in names & touched:
            definers.setdefault(name, []).append(path)
    wanted = touched.union(*(edit.rename.values() for edit in edits.values()))
    providers_after: dict[str, set[str]] = {}
    for path, names in exported_after.items():
        for name in names & wanted:
            providers_after.setdefault(name, set()).add(path)
    broken = []
    for name, pairs in shared_definitions(files.values(), touched).items():
        asks = {path: _asked(edits, path, name) for path in pairs}
        now = {path: asked if path in providers_after.get(asked, ()) else None for path, asked in asks.items()}
        split = [path for path, others in pairs.items() if now[path] is None or any(now[o] != now[path] for o in others)]
        if split:
            user = next((path for path in split if now[path] is None), split[0])
            copies = ", ".join(f"{path} {'hides it' if now[path] is None else f'exports {now[path]}'}" for path in pairs)
            broken.append(BrokenBinding(user, name, f"one object in {len(pairs)} files before, not after ({copies})"))
    for path, elf in files.items():
        imported = elf.symtab.undefined_names() & touched
        if not imported:
            continue
        imported_after = made[path].symtab.undefined_names() if path in made else None
        for name in sorted(imported):
            providers = [p for p in definers.get(name, ()) if p != path]
            if not providers:
                continue  # found outside the wheel, before as after
            asked = _asked(edits, path, name)
            if imported_after is not None and asked not in imported_after:
                broken.append(BrokenBinding(path, name, f"it imports {name} from {providers[0]}; its edit should "
                                                        f"have made it ask for {asked}, and did not"))
            elif not providers_after.get(asked, set()) - {path}:
                what = "it" if asked == name else f"{asked}, the name it asks for then"
                broken.append(BrokenBinding(path, name, f"it imports {name} from {providers[0]}, and after the "
                                                        f"edit no file of the wheel exports {what}"))
    return broken


def check_hiding(before: Iterable[ElfInfo], edits: Mapping[str, SymbolEdit], after: Iterable[ElfInfo] = ()) -> None:
    """Raise RepairError, naming the first, when ``edits`` break a binding inside the wheel (see ``broken_bindings``).

    plan_hiding makes no such plan; this is the check that it did not, before anything is written.
    """
    broken = broken_bindings(before, edits, after)
    if broken:
        first = broken[0]
        more = f" (and {len(broken) - 1} more)" if len(broken) > 1 else ""
        raise RepairError(first.user, f"hiding symbols would break {first.name}: {first.problem}{more}; "
                                      "nothing written (a bug: please report it)")


def _asked(edits: Mapping[str, SymbolEdit], path: str, name: str) -> str:
    edit = edits.get(path)
    return edit.rename.get(name, name) if edit is not None else name


def _exported_after(names: set[str], edit: SymbolEdit | None, made: ElfInfo | None) -> set[str]:
    if made is not None:
        return set(made.symtab.export_names())
    if edit is None:
        return names
    return {edit.rename.get(n, n) for n in names if n in edit.rename or n not in edit.hide}
