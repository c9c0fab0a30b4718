"""Bind a subject's undefined symbols as ld.so will (RTLD_NOW, as Python imports extensions): each one
against the local scope of the file that is being loaded (itself, then its needs breadth first), and the
system libraries of the load (system_scope.py: what they export is known from the policies' export lists).

Every reference ends bound or with a reason. A reference bound by version to a system library's version
(GLIBC_2.17 from libc.so.6) is the audit's business; Python's API (Py*, _Py*) comes from the interpreter. Of
the rest, a name that the scope does not define is:
- bound to the system when a system library of the load exports it (on the systems of the subject's policy;
  only on newer ones: cannot tell);
- bound anyway when a given distribution that loads libraries with RTLD_GLOBAL defines it (warning);
- otherwise unbound, with what is known of where it was expected from: a given library that defines it out
  of scope, or the nearest symbol its hosts define. Whether the import then fails or cannot be told is the
  caller's: it fails unless a library of the load is out of sight (and a name needed at a version of a given
  library fails whatever else is loaded: no other library defines that version).
Version needs are checked too: a given library that defines versions but not the one needed fails
with "version `X' not found".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import compress

from wheelcheck.compat.export_table import ExportCache
from wheelcheck.compat.installed_layout import Placed
from wheelcheck.compat.load_simulation import FOUND, LoadTree
from wheelcheck.compat.nearest_symbol import KeyIndex, Nearest, nearest_spelling, nearest_symbol
from wheelcheck.compat.system_scope import SystemScope
from wheelcheck.elf.elf_info import mask_and

__all__ = ["Unbound", "BadVersion", "Binding", "bind_symbols"]

# unbound names given a nearest by spelling alone (a bisection per file of the host's): those that are shown
_SPELLED = 64
_STRONG_UNDEFINED = bytes(0 if b >> 4 in (0, 2) else 1 for b in range(256))  # st_info: not LOCAL, not WEAK


@dataclass(frozen=True)
class Unbound:
    file: Placed  # the subject's file that needs it
    name: str
    version: str | None
    nearest: Nearest | None
    out_of_scope: Placed | None  # a given file that defines it, but outside the scope
    versioned: bool = False  # needed at a version a given library it loads defines: no other library can bind it
    newer_system: str | None = None  # a system library that defines it only on systems newer than the policy's


@dataclass(frozen=True)
class BadVersion:
    file: Placed
    library: Placed
    version: str


@dataclass
class Binding:
    unbound: list[Unbound] = field(default_factory=list)
    bad_versions: list[BadVersion] = field(default_factory=list)
    through_global: list[tuple[Placed, str, Placed]] = field(default_factory=list)  # (file, name, definer)
    bound: dict[int, int] = field(default_factory=dict)  # id(provider file) -> references it binds
    providers: dict[int, Placed] = field(default_factory=dict)
    checked: int = 0
    system: int = 0  # bound to a system library of the load, by its export list
    system_libraries: dict[str, int] = field(default_factory=dict)  # soname -> references bound to it


def _references(placed: Placed) -> list[tuple[str, str | None, str | None]]:
    """(name, version, library the version is needed from) of its strong undefined symbols."""
    st = placed.elf.symtab
    if not len(st):
        return []
    wanted = mask_and(st.undefined_mask(), st.info.translate(_STRONG_UNDEFINED))
    versions = st.version_names
    return [(n, *versions[v]) for n, v in zip(compress(st.names, wanted), compress(st.version_index, wanted)) if n]


def bind_symbols(tree: LoadTree, subject_files: Sequence[Placed], world: Sequence[Placed],
                 global_files: Sequence[Placed], exports: ExportCache, keys: KeyIndex, system: SystemScope,
                 found_elsewhere: dict | None = None) -> Binding:
    """``found_elsewhere``: a cache shared by the calls of one run, (subject distribution, name, version) -> the
    global file and the linkable library of another distribution that define it (None each): the same names come
    back for every file of a subject, and each lookup scans the whole world (PySide6's plugins: 36,000 of them)."""
    result = Binding()
    cache = found_elsewhere if found_elsewhere is not None else {}
    scope = [(p, exports.of(p.elf)) for p in tree.order]
    given_libraries = {link.name: link.found for link in tree.links if link.how in FOUND}
    others_in_scope = [p for p in tree.order if p.dist is not tree.root.dist]
    # the files a nearest symbol of a C++ name is looked for in: those the tree loads, then the world's others
    in_scope = {id(p) for p in others_in_scope}
    candidates = others_in_scope + [p for p in world if p.dist is not tree.root.dist and id(p) not in in_scope]
    for placed in subject_files:
        for need in placed.elf.version_needs:
            target = given_libraries.get(need.library)
            if target is not None and target.elf.version_defs and need.version not in target.elf.version_defs \
                    and not need.weak:
                result.bad_versions.append(BadVersion(placed, target, need.version))
        for name, version, library in _references(placed):
            if version is not None and library not in given_libraries:
                continue  # bound to a system library's version
            if name.startswith(("Py", "_Py")):
                continue
            result.checked += 1
            definer = next((p for p, ex in scope if ex.defines(name, version)), None)
            if definer is not None:
                result.bound[id(definer)] = result.bound.get(id(definer), 0) + 1
                result.providers[id(definer)] = definer
                continue
            on_system = system.lookup(name, version)
            if on_system is not None and on_system[1]:
                result.system += 1
                soname = on_system[0].soname
                result.system_libraries[soname] = result.system_libraries.get(soname, 0) + 1
                continue
            versioned = version is not None and library in given_libraries
            newer = on_system[0].soname if on_system is not None else None
            key = (id(tree.root.dist), name, version)
            if key not in cache:
                # a library a file could link, not an extension module: tables' hdf5extension carries a private
                # zlib, which says nothing about where h5py's libhdf5 gets inflateEnd (the system's libz.so.1)
                cache[key] = (
                    next((g for g in global_files if g.dist is not tree.root.dist
                          and exports.of(g.elf).defines(name, version)), None),
                    next((p for p in world if p.dist is not tree.root.dist and not p.elf.is_extension
                          and exports.of(p.elf).defines(name, version)), None))
            in_global, elsewhere = cache[key]
            if in_global is not None:
                result.through_global.append((placed, name, in_global))
                continue
            if elsewhere is not None:
                result.unbound.append(Unbound(placed, name, version, None, elsewhere, versioned, newer))
                continue
            # a C name is only matched in what the file loads: an unrelated distribution's copy of a C
            # library (png_*, a vendored libpng) says nothing about where the file expects it from
            nearest = nearest_symbol(name, version, candidates if name.startswith("_Z") else others_in_scope,
                                     exports, keys)
            if nearest is None and len(result.unbound) < _SPELLED:
                nearest = nearest_spelling(name, others_in_scope, exports)
            result.unbound.append(Unbound(placed, name, version, nearest, None, versioned, newer))
    return result
