"""Bind a subject's undefined symbols as ld.so will (RTLD_NOW, as Python imports extensions): each one
against the local scope of the file that is being loaded (itself, then its needs breadth first).

A reference bound by version to a library the system provides (GLIBC_2.17 from libc.so.6) is the
audit's business; Python's API (Py*, _Py*) comes from the interpreter. Of the rest, a name that the
scope does not define is:
- bound anyway when a given distribution that loads libraries with RTLD_GLOBAL defines it (warning);
- missing when a given library (not an extension module, which nothing links) defines it out of scope, or
  defines a nearest symbol of the same name, or
  exports other names of its C++ namespace or C prefix: the import fails with 'undefined symbol';
- otherwise presumed to come from a system library we cannot see (counted, never a failure); so is any
  name of std:: and the C++ runtime, which libstdc++ defines.
Version needs are checked too: a given library that defines versions but not the one needed fails
with "version `X' not found".
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import compress

from wheelcheck.compat.export_table import ExportCache
from wheelcheck.compat.installed_layout import Placed
from wheelcheck.compat.load_simulation import FOUND, LoadTree
from wheelcheck.compat.nearest_symbol import KeyIndex, Nearest, nearest_symbol
from wheelcheck.symbols.mangling import LIBSTDCXX_PREFIXES, lead
from wheelcheck.elf.elf_info import mask_and

__all__ = ["Unbound", "BadVersion", "Binding", "bind_symbols"]

_C_PREFIX = re.compile(r"^_*[A-Za-z0-9]+_")
# std::, __gnu_cxx:: and the C++ runtime: libstdc++ defines them (an unversioned reference binds to its
# default version), so a host that stopped exporting its copy of one changes nothing
_STD_PREFIXES = LIBSTDCXX_PREFIXES + ("__cxa_", "__gxx_")
_STRONG_UNDEFINED = bytes(0 if b >> 4 in (0, 2) else 1 for b in range(256))  # st_info: not LOCAL, not WEAK


@dataclass(frozen=True)
class Unbound:
    file: Placed  # the subject's file that needs it
    name: str
    version: str | None
    nearest: Nearest | None
    out_of_scope: Placed | None  # a given file that defines it, but outside the scope


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
    presumed_system: int = 0
    examples_presumed: list[str] = field(default_factory=list)


def _references(placed: Placed) -> list[tuple[str, str | None, str | None]]:
    """(name, version, library the version is needed from) of its strong undefined symbols."""
    st = placed.elf.symtab
    if not len(st):
        return []
    wanted = mask_and(st.undefined_mask(), st.info.translate(_STRONG_UNDEFINED))
    versions = st.version_names
    return [(n, *versions[v]) for n, v in zip(compress(st.names, wanted), compress(st.version_index, wanted)) if n]


def bind_symbols(tree: LoadTree, subject_files: Sequence[Placed], world: Sequence[Placed],
                 global_files: Sequence[Placed], exports: ExportCache, keys: KeyIndex,
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
            if name.startswith(_STD_PREFIXES):
                result.presumed_system += 1
                continue
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
                result.unbound.append(Unbound(placed, name, version, None, elsewhere))
                continue
            # a C name is only matched in what the file loads: an unrelated distribution's copy of a C
            # library (png_*, a vendored libpng) says nothing about where the file expects it from
            nearest = nearest_symbol(name, version, candidates if name.startswith("_Z") else others_in_scope,
                                     exports, keys)
            if nearest is not None or _shares_prefix(name, others_in_scope, exports):
                result.unbound.append(Unbound(placed, name, version, nearest, None))
            else:
                result.presumed_system += 1
                if len(result.examples_presumed) < 5:
                    result.examples_presumed.append(name)
    return result


def _shares_prefix(name: str, files: Sequence[Placed], exports: ExportCache) -> bool:
    """Do the given files in scope export other names of ``name``'s C++ namespace (or class), or of its C
    prefix? Then they are where it was expected from."""
    prefix = lead(name) if name.startswith("_Z") else None
    if prefix is None and not name.startswith("_Z"):
        m = _C_PREFIX.match(name)
        prefix = m.group(0) if m and len(m.group(0)) > 2 else None
    if prefix is None:  # (libstdc++'s names never come here: they are presumed the system's before)
        return False
    for placed in files:
        names = exports.of(placed.elf).sorted_names
        i = bisect_left(names, prefix)
        if i < len(names) and names[i].startswith(prefix):
            return True
    return False
