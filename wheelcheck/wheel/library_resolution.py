"""Which NEEDED libraries the wheel itself provides, found the way ld.so would find them.

Each root (an extension module, or a library nothing else in the wheel needs) is loaded as ld.so
loads it: breadth first; a name already loaded (by SONAME) is reused; otherwise the object's
DT_RPATH and those of its loaders (when it has no DT_RUNPATH), then its DT_RUNPATH, with $ORIGIN
expanded to the object's install directory. Host directories are never searched: the audit is
hermetic, so whatever the wheel does not provide is external.

A library that some file needs by name but that no tree reaches (its needer's search path misses it, ctypes loads
it by path, or --exclude hides the need) becomes a root of its own too (an orphan), so that the libraries it
needs that the wheel does not ship are judged (foundry-local-sdk's libfoundry_local.so, loaded with ctypes, needs
onnxruntime's libonnxruntime.so.1). Those it ships are left to the loader: an RPATH it inherits finds them.
"""

from __future__ import annotations

import posixpath
import re
from collections import deque
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar

from wheelcheck.wheel.wheel_model import WheelModel
from wheelcheck.elf.elf_info import ElfInfo, is_dynamic_loader

__all__ = ["Resolution", "resolve", "LIBPYTHON", "expand_origin", "inside_install_roots", "rpath_directory",
           "environment_directory", "at_prefix", "rpath_chains", "needed_path", "expand_search_entry"]

T = TypeVar("T")  # who owns an RPATH entry: the ElfInfo here, an installed file in compat

LIBPYTHON = re.compile(r"^libpython\d+\.\d+[a-z]*\.so(\.\d+)*$")
_ORIGIN = re.compile(r"\$(ORIGIN|\{ORIGIN\})")
_MACHINE_TOKEN = re.compile(r"\$(LIB|PLATFORM|\{LIB\}|\{PLATFORM\})")  # ld.so fills them in from the machine
# $ORIGIN/../lib/python3.X/site-packages/... from bin/ lands back in site-packages
_SITE = re.compile(r"^/lib/python[^/]+/site-packages(?=/|$)")
_INSTALL_ROOTS = {"sp", "bin", "data", "headers"}


@dataclass(frozen=True)
class Resolution:
    roots: tuple[str, ...]  # member paths judged as load roots, the orphans last
    provided: dict[tuple[str, str], str]  # (member, soname) -> member that provides it
    unresolved: dict[tuple[str, str], None]  # (member, soname) needed in a judged tree, not in the wheel
    loaded_from: dict[str, tuple[str, ...]]  # member -> roots whose tree loads it
    orphans: tuple[str, ...] = ()  # roots that a file needs by name but no tree reaches (see the module's docstring)


def resolve(model: WheelModel, elves: list[ElfInfo], libc: str = "glibc") -> Resolution:
    """The load tree of each root; ``libc``, the wheel's, decides how a NEEDED path is opened."""
    index = {model.install_path(e.path): e for e in elves}
    needed_names = {n for e in elves for n in e.needed}
    roots = [e.path for e in elves if e.is_extension or e.path.rsplit("/", 1)[-1] not in needed_names]
    by_path = {e.path: e for e in elves}
    provided: dict[tuple[str, str], str] = {}
    unresolved: dict[tuple[str, str], None] = {}
    loaded_from: dict[str, list[str]] = {}
    for root in roots:
        _load_tree(model, index, by_path[root], provided, unresolved, loaded_from, libc)
    orphans = []
    shipped = {n for e in elves for n in (e.path.rsplit("/", 1)[-1], e.soname) if n}
    for elf in elves:  # in wheel order; an orphan's tree may load later ones, which are then no orphans
        if elf.path not in loaded_from:
            orphans.append(elf.path)
            missing: dict[tuple[str, str], None] = {}
            _load_tree(model, index, elf, provided, missing, loaded_from, libc)
            # loaded on its own, it searches no loader's RPATH: a name the wheel ships may be found through the
            # loader's, once its needer reaches it; what the wheel ships nowhere is missing however it is loaded
            unresolved.update((key, None) for key in missing if key[1] not in shipped)
    for key in list(unresolved):
        if key in provided:
            del unresolved[key]  # resolved in another tree that also loads this object
    return Resolution(
        roots=tuple(roots + orphans),
        provided=provided,
        unresolved=unresolved,
        loaded_from={k: tuple(v) for k, v in loaded_from.items()},
        orphans=tuple(orphans),
    )


def skip_soname(soname: str) -> bool:
    """Names never looked for in the wheel: the dynamic loader, and libpython (judged by its own rule)."""
    return is_dynamic_loader(soname) or bool(LIBPYTHON.match(soname))


def rpath_chains(owner: T, elf: ElfInfo, chain: tuple[tuple[T, str], ...]) -> tuple[tuple[tuple[T, str], ...],
                                                                                   tuple[tuple[T, str], ...]]:
    """The DT_RPATH entries, as (owner, entry), nearest first, that ``elf``'s dependencies search and that ``elf``'s
    own NEEDED names search, given ``chain``, its loaders' (what their dependencies search).

    glibc (dl-load.c) walks the loaders up (``l_loader``) to the root: a DT_RUNPATH on the way hides only that
    object's own DT_RPATH, and an object with a DT_RUNPATH searches no DT_RPATH at all."""
    inherited = (() if elf.runpath else tuple((owner, p) for p in elf.rpath)) + chain
    return inherited, () if elf.runpath else inherited


def _load_tree(model, index, root: ElfInfo, provided, unresolved, loaded_from, libc: str) -> None:
    loaded: dict[str, ElfInfo] = {_basename(root.path): root}
    if root.soname:
        loaded[root.soname] = root
    queue: deque[tuple[ElfInfo, tuple[tuple[ElfInfo, str], ...]]] = deque([(root, ())])  # (object, RPATH chain of its loaders)
    seen = {root.path}
    loaded_from.setdefault(root.path, []).append(root.path)
    while queue:
        obj, chain = queue.popleft()
        inherited, rpath_chain = rpath_chains(obj, obj, chain)
        for soname in obj.needed:
            if skip_soname(soname):
                continue
            if "/" in soname:
                found = _by_path(model, index, obj, soname, root, libc)
            else:
                found = loaded.get(soname) or _search(model, index, obj, soname, rpath_chain, root)
            if found is None:
                unresolved.setdefault((obj.path, soname), None)
                continue
            provided[(obj.path, soname)] = found.path
            loaded.setdefault(soname, found)
            if found.soname:
                loaded.setdefault(found.soname, found)
            if found.path not in seen:
                seen.add(found.path)
                loaded_from.setdefault(found.path, []).append(root.path)
                queue.append((found, inherited))


def _search(model, index, obj: ElfInfo, soname: str, rpath_chain, root: ElfInfo) -> ElfInfo | None:
    dirs = [(owner, p) for owner, p in rpath_chain] + [(obj, p) for p in obj.runpath]
    for owner, entry in dirs:
        directory = _search_dir(model, owner, entry)
        if directory is None:
            continue
        candidate = index.get(posixpath.join(directory, soname))
        if candidate is not None and _compatible(candidate, root):
            return candidate
    return None


def _by_path(model, index, obj: ElfInfo, name: str, root: ElfInfo, libc: str) -> ElfInfo | None:
    path = needed_path(model.install_path(obj.path), name, libc)
    candidate = index.get(path) if path is not None else None
    return candidate if candidate is not None and _compatible(candidate, root) else None


def needed_path(install_path: str, name: str, libc: str | None) -> str | None:
    """The install path a NEEDED name with a slash (``$ORIGIN/libkurl.so``) opens, for the file installed at
    ``install_path``; None when that is no file a wheel installs.

    ld.so does not search for such a name: glibc opens it as a path once $ORIGIN is expanded to the needer's
    directory (dl-load.c, expand_dynamic_string_token), so without $ORIGIN it is absolute or relative to the
    working directory; musl expands nothing in a NEEDED name and looks for a directory named "$ORIGIN"."""
    return None if libc == "musl" else expand_search_entry(install_path, name)


def expand_search_entry(owner_path: str, entry: str) -> str | None:
    """An RPATH/RUNPATH entry (or NEEDED path) of the file installed at ``owner_path`` as a virtual install path,
    or None when it is outside every install tree (an absolute system path, one relative to the working
    directory) or uses $LIB/$PLATFORM, which the loader fills in from the machine."""
    if _MACHINE_TOKEN.search(entry) or not _ORIGIN.search(entry):
        return None
    expanded = _expand_at(posixpath.dirname(owner_path), entry)
    return expanded if expanded.startswith("/") and inside_install_roots(expanded) else None


def expand_origin(model: WheelModel, owner: ElfInfo, entry: str) -> str | None:
    """An RPATH entry with $ORIGIN expanded to the owner's virtual install directory (/sp/pkg/...),
    normalised; None when the entry does not use $ORIGIN."""
    return _expand(model, owner.path, entry)


def _expand(model: WheelModel, member: str, entry: str) -> str | None:
    if not _ORIGIN.search(entry):
        return None
    return _expand_at(posixpath.dirname(model.install_path(member)), entry)


@lru_cache(maxsize=4096)
def _expand_at(origin: str, entry: str) -> str:
    """``entry`` with $ORIGIN as ``origin``, normalised: the same few pairs recur for every library a large
    wheel's files need (tensorflow: 12,000 lookups of a few hundred pairs)."""
    expanded = posixpath.normpath(_ORIGIN.sub(lambda _: origin, entry))  # a function: "\\" in a name is no escape
    return _SITE.sub("/sp", expanded)


_PREFIX = "/prefix"
_SITE_UNDER_PREFIX = _PREFIX + "/lib/python3.X/site-packages"


def environment_directory(model: WheelModel, member: str, entry: str) -> str | None:
    """Where an $ORIGIN entry of a file in site-packages leads when it climbs out of site-packages but stays in the
    environment: the path under its prefix ("lib" for $ORIGIN/../../.. from a package directory; "" for the prefix
    itself), by the usual layout <prefix>/lib/python3.X/site-packages (venvs, --user, /usr/local, Debian's
    dist-packages), where data files (.data/data/lib/libfoo.so) install under the same prefix. Where platlib is
    lib64 (Fedora's system Python) the same entry leads to <prefix>/lib64 instead. None otherwise."""
    if not _ORIGIN.search(entry) or _MACHINE_TOKEN.search(entry):
        return None
    home = posixpath.dirname(model.install_path(member))
    if home != "/sp" and not home.startswith("/sp/"):
        return None
    expanded = posixpath.normpath(_ORIGIN.sub(lambda _: _SITE_UNDER_PREFIX + home[len("/sp"):], entry))
    if expanded == _SITE_UNDER_PREFIX or expanded.startswith(_SITE_UNDER_PREFIX + "/"):
        return None  # still in site-packages
    if expanded == _PREFIX:
        return ""
    return expanded[len(_PREFIX) + 1:] if expanded.startswith(_PREFIX + "/") else None


def at_prefix(directory: str) -> str:
    """An ``environment_directory`` answer as a person reads it: <prefix>/lib, or <prefix> itself."""
    return f"<prefix>/{directory}" if directory else "<prefix>"


def inside_install_roots(expanded: str) -> bool:
    """Does an expanded path stay inside the install scheme (site-packages, bin, data, headers)?"""
    top = expanded.split("/")[1] if expanded != "/" else ""
    return top in _INSTALL_ROOTS


def rpath_directory(model: WheelModel, member: str, entry: str) -> str | None:
    """The install directory an RPATH entry of ``member`` names, or None when it points outside the wheel."""
    expanded = _expand(model, member, entry)
    return expanded if expanded is not None and inside_install_roots(expanded) else None


def _search_dir(model: WheelModel, owner: ElfInfo, entry: str) -> str | None:
    return rpath_directory(model, owner.path, entry)


def _compatible(candidate: ElfInfo, root: ElfInfo) -> bool:
    return (candidate.machine, candidate.elf_class, candidate.endianness) == (
        root.machine, root.elf_class, root.endianness)


def _basename(path: str) -> str:
    return path.rsplit("/", 1)[-1]
