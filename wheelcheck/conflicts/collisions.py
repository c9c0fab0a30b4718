"""conflict-symbols: one exported name defined by ELF files of different distributions of a process.

Two definitions collide when they come from different distributions, from different builds (not the
same auditwheel content hash in the name, nor the same name and size: FileExports.identity) and their
symbol versions do not keep them apart (foo@@V1 never serves a reference to foo@V2; an unversioned side
matches either).

Each colliding name gets
- a hazard: ``harmless`` (PyInit_*, _init/_fini, linker-made and compiler-helper names, version
  definitions: counted only), ``vague`` (C++ vague linkage: every copy weak or STB_GNU_UNIQUE, or a
  std:: instantiation, which all come from the same libstdc++ headers), else ``strong``;
- a liveness: ``unique`` (some copy is STB_GNU_UNIQUE: the loader binds every user to one copy even
  under RTLD_LOCAL), ``global`` (a copy is in a file its distribution's import loads with RTLD_GLOBAL:
  global_loading.py), else
  ``latent``: Python imports extensions with RTLD_LOCAL, so the copies meet only once one of them is in
  the global scope (RTLD_GLOBAL, LD_PRELOAD);
- a family (data/families.json): the one whose owners all its files are (a vendored libgfortran), else
  the one its name belongs to (a C prefix or exact name needs the family's min_symbols of them), else none.
Names of one family, hazard and liveness are reported together per group of distributions that share them.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field

from wheelcheck.symbols.families import Family, families, family_members, group_counts, owns
from wheelcheck.symbols.mangling import STD_STATICS, short_name
from wheelcheck.elf.linker_made import LINKER_MADE
from wheelcheck.symbols.sonames import unhashed
from wheelcheck.conflicts.symbol_index import Copy, FileExports, SymbolIndex
from wheelcheck.elf.section_bounds import BOUND_PREFIXES
from wheelcheck.conflicts.conflict_findings import ConflictFinding, Provider

__all__ = ["symbol_conflicts", "is_harmless", "CollisionStats"]

_STB_WEAK, _STB_GNU_UNIQUE = 2, 10
# made by the linker or the C runtime's start files in every shared object, never the author's choice
_HARMLESS_NAMES = LINKER_MADE | frozenset({
    "__gmon_start__", "__dso_handle", "__TMC_END__",
    "_Jv_RegisterClasses", "__cpu_model", "__cpu_features2", "__cpu_indicator_init", "__libc_csu_init",
    "__libc_csu_fini", "__stack_chk_guard"})
# module entry points (one per module name), Cython module boilerplate, compiler and runtime helpers
_HARMLESS_PREFIXES = ("PyInit_", "_cffi_pypyinit_", "__pyx_", "__x86.get_pc_thunk.", "_ITM_", "__aeabi_",
                      "__gcov_", "__riscv_save_", "__riscv_restore_")
# libgcc's arithmetic helpers: __udivdi3, __popcountdi2, __mulsc3, __floatsisf, __extendhfsf2 ...
_COMPILER_HELPER = re.compile(
    r"^__[a-z0-9]+?(?:qi|hi|si|di|ti|sf|df|tf|xf|hf|bf|kf|sc|dc|tc|xc|hc|kc|bitint)[0-9]?$")
_OPERATOR_NEW_DELETE = ("_Znw", "_Zna", "_Zdl", "_Zda")  # replaceable: a custom allocator is no template
# Statics of inline functions (_ZZ) and their guard variables (_ZGV) have vague linkage by definition: the
# statics of a non-inline function are never exported. Those inside std:: come from libstdc++'s headers.
_VAGUE_BY_NAME = ("_ZZ", "_ZGV")
_EXAMPLES = 5


def is_harmless(name: str) -> bool:
    return name in _HARMLESS_NAMES or name.startswith(_HARMLESS_PREFIXES) or (
        name.startswith("__") and _COMPILER_HELPER.match(name) is not None) or _TYPEINFO_OF_NO_CLASS.match(name) is not None


# the typeinfo (or its name) of a type that names no class: void(), bool(), a pointer to one, int. Compared by name
# and the same object by content in every copy (counted, optree's and tensorflow's _ZTIFvvE would fail every
# tensorflow environment)
_TYPEINFO_OF_NO_CLASS = re.compile(r"_ZT[IS][A-Za-z]+$")


@dataclass
class CollisionStats:
    shared: int = 0  # names exported by two or more distributions
    harmless: int = 0
    identical: int = 0  # only identical builds define them (mapped once)
    versioned_apart: int = 0  # symbol versions keep the definitions apart
    colliding: int = 0  # strong or vague collisions reported

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass
class _Group:
    names: list[str] = field(default_factory=list)
    providers: dict[int, int] = field(default_factory=dict)  # file number -> names of the group it defines


@dataclass(frozen=True)
class _Files:
    """What one set of colliding files shares, worked out once per set rather than once per name."""

    owned: frozenset[str]  # families whose owner files they all are
    dists: frozenset[str]
    global_loader: bool


def symbol_conflicts(index: SymbolIndex) -> tuple[list[ConflictFinding], CollisionStats]:
    stats = CollisionStats(shared=len(index.shared))
    table = {f.id: f for f in families()}
    by_name = _name_families(list(index.shared))  # the index keeps them sorted
    files = index.files
    dist_of = [f.dist.key for f in files]
    build_of = [f.identity for f in files]
    version_defs = frozenset().union(*(f.elf.version_defs for f in files))
    owned = [frozenset(_owned_families(f)) for f in files]
    in_global = [f.elf.path in f.dist.global_paths for f in files]  # loaded with RTLD_GLOBAL as it is imported
    file_sets: dict[tuple[int, ...], _Files] = {}
    not_std = _OPERATOR_NEW_DELETE + table["libstdcxx"].sentinels
    rows = []
    for name, every_copy in index.shared.items():
        if name in version_defs or is_harmless(name) or _bound_nobody_looks_up(name, every_copy, files):
            stats.harmless += 1
            continue
        copies = _colliding(every_copy, dist_of, build_of)
        if copies is None:
            stats.identical += 1
            continue
        if not copies:
            stats.versioned_apart += 1
            continue
        numbers = tuple(c[0] for c in copies)
        shared_by = file_sets.get(numbers)
        if shared_by is None:
            dists = frozenset(dist_of[n] for n in numbers)
            shared_by = file_sets[numbers] = _Files(frozenset.intersection(*(owned[n] for n in numbers)), dists,
                                                    any(in_global[n] for n in numbers))
        family: str | None
        if shared_by.owned:
            family, precise = min(shared_by.owned), True
        elif name.startswith(STD_STATICS):
            family, precise = "libstdcxx", True
        else:
            family, precise = by_name.get(name, (None, False))
        binds = [c[1] >> 4 for c in copies]
        hazard = "strong"
        if name.startswith("_Z"):
            is_std = family == "libstdcxx" and not name.startswith(not_std)
            if is_std or name.startswith(_VAGUE_BY_NAME) or all(b in (_STB_WEAK, _STB_GNU_UNIQUE) for b in binds):
                hazard = "vague"
        liveness = "unique" if _STB_GNU_UNIQUE in binds else "global" if shared_by.global_loader else "latent"
        rows.append((name, family, precise, hazard, liveness, shared_by.dists, numbers))
    groups: dict[tuple, _Group] = {}
    for name, family, _precise, hazard, liveness, dists, numbers in _apply_min_symbols(rows, table):
        group = groups.setdefault((family, hazard, liveness, dists), _Group())
        group.names.append(name)
        for n in numbers:
            group.providers[n] = group.providers.get(n, 0) + 1
    stats.colliding = len(rows)
    merged = _merge_components(groups)
    return [_finding(key, group, files, table, by_name) for key, group in merged.items()], stats


def _colliding(copies: list[Copy], dist_of: list[str], build_of: list[tuple]) -> list[Copy] | None:
    """The copies of a name that collide with a copy of another distribution; [] when versions keep
    them apart; None when only identical builds define it."""
    if len(copies) == 2:  # the common case: a shared name has copies in two distributions
        (a, _, v), (b, _, w) = copies
        if build_of[a] == build_of[b]:
            return None
        return copies if v == w or v is None or w is None else []
    hit: set[int] = set()
    different_builds = False
    for i, (a, _, v) in enumerate(copies):
        for j in range(i + 1, len(copies)):
            b, _, w = copies[j]
            if dist_of[a] == dist_of[b] or build_of[a] == build_of[b]:
                continue
            different_builds = True
            if v == w or v is None or w is None:
                hit.update((i, j))
    if not different_builds:
        return None
    return [copies[i] for i in sorted(hit)]


def _name_families(sorted_names: list[str]) -> dict[str, tuple[str, bool]]:
    """name -> (family id, precise). A match by C++ namespace or by pattern (the shapes of BLAS/LAPACK
    routine names) is precise; one by a C prefix or an exact name ('crc32', 'compress') counts only when
    the family's min_symbols of them are shared by the same distributions."""
    out: dict[str, tuple[str, bool]] = {}
    for fam in families():
        for name in family_members(sorted_names, fam):
            if name not in out:
                out[name] = (fam.id, name.startswith("_Z") or any(p.match(name) for p in fam.patterns))
    return out


def _owned_families(f: FileExports) -> tuple[str, ...]:
    path = unhashed(f.elf.path.rsplit("/", 1)[-1])
    soname = unhashed(f.elf.soname) if f.elf.soname else None
    return tuple(fam.id for fam in families() if owns(fam, path, soname))


def _apply_min_symbols(rows, table: dict[str, Family]):
    """A family recognised by a generic name needs its min_symbols names between the same distributions
    (one shared 'crc32' is not zlib)."""
    counts: dict[tuple, int] = {}
    for _name, family, _precise, _h, _l, dists, _c in rows:
        if family:
            counts[(family, dists)] = counts.get((family, dists), 0) + 1
    for name, family, precise, hazard, liveness, dists, copies in rows:
        if family and not precise and counts[(family, dists)] < table[family].min_symbols:
            family = None
        yield name, family, precise, hazard, liveness, dists, copies


def _merge_components(groups: dict[tuple, _Group]) -> dict[tuple, _Group]:
    """Join groups of one (family, hazard, liveness) whose distribution sets overlap: one finding for
    'numpy, scipy and opencv each ship a libgfortran', not one per subset of them."""
    by_kind: dict[tuple, list[tuple[frozenset, _Group]]] = {}
    for (family, hazard, liveness, dists), group in groups.items():
        by_kind.setdefault((family, hazard, liveness), []).append((dists, group))
    out: dict[tuple, _Group] = {}
    for kind, parts in by_kind.items():
        merged: list[tuple[set, _Group]] = []
        for dists, group in parts:
            joined = [m for m in merged if m[0] & dists]
            into_dists, into = set(dists), _Group()
            for m in joined:
                merged.remove(m)
                into_dists |= m[0]
                _absorb(into, m[1])
            _absorb(into, group)
            merged.append((into_dists, into))
        for dists, group in merged:
            key = (*kind, frozenset(dists))
            out[key] = group
    return out


def _absorb(into: _Group, group: _Group) -> None:
    into.names.extend(group.names)
    for number, count in group.providers.items():
        into.providers[number] = into.providers.get(number, 0) + count


_HAZARD_TEXT = {
    "strong": "strong definitions: whichever copy the loader finds first serves every caller",
    "vague": "vague-linkage C++ definitions (template instantiations, inline functions and their statics): "
             "the same code only if both were built from the same version of the headers",
}

_STD_TEXT = ("std:: definitions from libstdc++'s headers or its static part (libstdc++_nonshared.a of the manylinux "
             "toolchains): the same code unless the toolchains differ")


def _bound_nobody_looks_up(name: str, copies: list[Copy], files: list[FileExports]) -> bool:
    """A section bound (``__start_<sec>``) that no file asks the loader for: each definer reaches its own section
    directly (no dynamic relocation of its own refers to it: elf/section_bounds.py) and no file of the process needs
    the name (protobuf's, tensorflow's and jaxlib's __start_linkarr_upb_AllExts). The copies never meet."""
    if not name.startswith(BOUND_PREFIXES):
        return False
    if any(name in files[number].elf.relocated_bounds for number, _info, _version in copies):
        return False
    for f in files:
        i = f.elf.symtab.position(name)
        if i is not None and not f.elf.symtab.defined[i]:
            return False  # another library refers to the name: it binds to the first copy in scope
    return True


def _liveness_text(liveness: str, files: list[FileExports]) -> str:
    if liveness == "unique":
        return "some are STB_GNU_UNIQUE: the loader makes every library use one copy, even under RTLD_LOCAL"
    if liveness == "global":
        loaders = sorted({(f.dist.label, f.dist.global_loaders[0], posixpath.basename(f.elf.path)) for f in files
                          if f.elf.path in f.dist.global_paths})
        who = ", ".join(f"{label} ({where}: {lib})" for label, where, lib in loaders)
        return f"live: {who} load{'s' if len(loaders) == 1 else ''} with RTLD_GLOBAL as it is imported, so its " \
               f"copies serve every library loaded after them"
    return ("latent: Python imports extensions with RTLD_LOCAL, so the copies meet once one of them is in the "
            "global scope (ctypes or sys.setdlopenflags with RTLD_GLOBAL, as torch does for libtorch_global_deps.so; "
            "LD_PRELOAD)")


def _severity(hazard: str, liveness: str, family: str | None) -> str:
    live = liveness != "latent"
    if hazard == "strong":
        return "error" if live else "warning"
    return "warning" if live and family != "libstdcxx" else "info"


def _finding(key: tuple, group: _Group, every_file: list[FileExports], table: dict[str, Family],
             by_name: dict[str, tuple[str, bool]]) -> ConflictFinding:
    family, hazard, liveness, _dists = key
    fam = table.get(family) if family else None
    names = sorted(group.names)
    files = sorted(((every_file[n], count) for n, count in group.providers.items()),
                   key=lambda e: (e[0].dist.key, -e[1], e[0].elf.path))
    labels = list(dict.fromkeys(f.dist.label for f, _n in files))
    count = len(names)
    plural = "s" if count != 1 else ""
    if fam:
        what = f"{count} {fam.title} symbol{plural}"
    elif count <= 3:
        what = f"{count} symbol{plural}"
    else:
        top = sorted(group_counts(names).items(), key=lambda kv: (-kv[1], kv[0]))[:3]
        what = f"{count} symbol{plural} ({', '.join(f'{g} {n}' for g, n in top)})"
    # names the family knows by name first (dgemm_ rather than an OpenBLAS kernel), the shortest first
    examples = tuple(sorted(names, key=lambda n: (by_name.get(n, (None,))[0] != family, len(n), n))[:_EXAMPLES])
    shown = ", ".join(short_name(n) for n in examples[:3])
    hazard_text = _STD_TEXT if family == "libstdcxx" and hazard == "vague" else _HAZARD_TEXT[hazard]
    message = (f"{what} defined by {_join(labels)} ({shown}{', ...' if count > 3 else ''}): "
               f"{_liveness_text(liveness, [f for f, _ in files])}")
    hint = ("keep each copy private: build with -fvisibility=hidden (and -fvisibility-inlines-hidden), link static "
            "libraries with -Wl,--exclude-libs,ALL or a version script; for a vendored library, `wheelcheck repair "
            "--hide-symbols` renames what the wheel imports and hides the rest")
    explanation = hazard_text[0].upper() + hazard_text[1:] + "." + (f" {fam.note}" if fam and fam.note else "")
    providers = tuple(Provider(f.dist.name, f.dist.version, f.elf.path, n) for f, n in files)
    return ConflictFinding("conflict-symbols", _severity(hazard, liveness, family), message, hint, providers,
                           family, hazard, liveness, count, examples, tuple(names), explanation)


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
