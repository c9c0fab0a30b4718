"""Load one ELF file the way ld.so will once the distributions are installed side by side.

The others are imported first (a plugin's package imports its host before its extension): the libraries
in their extension modules' NEEDED trees are then in the process, and ld.so matches a DT_NEEDED name
against the SONAMEs already loaded before it searches any directory. Otherwise each name is searched
breadth first, as ld.so does: the RPATHs of the object and of its loaders (when the object has no
RUNPATH), then its RUNPATH, with $ORIGIN expanded to its install directory. A name found in neither
way is a system library when every manylinux system has it (the policies' whitelists, the drivers),
else it is missing; a name that a given distribution ships where this search never looks is
"unreached": it loads only if something else loads that file first.
"""

from __future__ import annotations

import posixpath
from collections import deque
from collections.abc import Container, Sequence
from dataclasses import dataclass, field

from wheelcheck.compat.installed_layout import Layout, Placed
from wheelcheck.conflicts.distribution import Distribution
from wheelcheck.elf.elf_info import libc_linked
from wheelcheck.wheel.library_resolution import expand_search_entry, needed_path, rpath_chains, skip_soname

__all__ = ["Link", "LoadTree", "preload", "load", "dlopen_links", "roots_of", "FOUND"]

FOUND = ("own", "path", "loaded")  # found among the given distributions


@dataclass(frozen=True)
class Link:
    """How one name a file needs (DT_NEEDED) or may dlopen was resolved."""

    needer: Placed
    name: str
    how: str  # own (same distribution, by path), path (another's, by RPATH/RUNPATH), loaded (by SONAME, loaded
    #           by importing another distribution), system, unreached, missing
    found: Placed | None = None
    via: str | None = None  # the RPATH/RUNPATH entry (or the NEEDED path) that found it, or the importing distribution
    elsewhere: tuple[Placed, ...] = ()  # unreached: the given files of that name
    searched: tuple[str, ...] = ()  # virtual directories searched (missing, unreached)
    dlopen: bool = False


@dataclass
class LoadTree:
    root: Placed
    order: list[Placed] = field(default_factory=list)  # the local scope: root, then its needs breadth first
    links: list[Link] = field(default_factory=list)


def roots_of(layout: Layout, dist: Distribution) -> list[Placed]:
    """What gets loaded directly: extension modules, and libraries nothing else in the distribution needs
    (loaded with dlopen or ctypes by their path)."""
    files = layout.files_of(dist)
    needed = {n for p in files for n in p.elf.needed}
    return [p for p in files if p.elf.is_extension or (p.name not in needed and posixpath.basename(p.path)
                                                       not in needed)]


def preload(layout: Layout, dists: Sequence[Distribution], system: Container[str]) -> dict[str, Placed]:
    """Name -> file, for what importing ``dists`` (dependencies first) loads: their extension modules'
    NEEDED trees, by the names a later DT_NEEDED can match.

    Python opens an extension module by path, so glibc knows it by its SONAME alone (by no name when it has
    none), and musl not at all: musl matches a NEEDED name only to the name it searched a library by."""
    loaded: dict[str, Placed] = {}
    for dist in dists:
        for root in layout.files_of(dist):
            if root.elf.is_extension:
                libc = libc_linked(root.elf)
                musl = libc == "musl" or (libc is None and dist.musl)  # a file naming no libc: the tags say
                tree = load(root, layout, loaded, system)
                if root.elf.soname and not musl:
                    loaded.setdefault(root.elf.soname, root)
                for link in tree.links:
                    if link.found is not None and link.found is not root:
                        loaded.setdefault(link.name, link.found)
                        if not musl:
                            loaded.setdefault(link.found.name, link.found)
    return loaded


def load(root: Placed, layout: Layout, preloaded: dict[str, Placed], system: Container[str],
         trusted: frozenset[int] | None = None) -> LoadTree:
    """The breadth-first load of ``root``: its local scope and how each NEEDED name was found.

    ``trusted``: ids of the distributions sure to be imported first (those the root's distribution
    requires). A name loaded by another one is taken only when the search finds no file of that name:
    whether an unrelated distribution was imported first is not known, and assuming it could turn a
    library the file's own RPATH finds into another's copy (the conflict-soname case)."""
    tree = LoadTree(root, [root])
    loaded = dict(preloaded)
    loaded.setdefault(root.name, root)
    seen = {id(root)}
    # (object, RPATH chain of its loaders: (owner, entry))
    queue: deque[tuple[Placed, tuple[tuple[Placed, str], ...]]] = deque([(root, ())])
    while queue:
        obj, chain = queue.popleft()
        inherited, rpath_chain = rpath_chains(obj, obj.elf, chain)
        for name in obj.elf.needed:
            if skip_soname(name):
                continue
            link = _resolve(obj, name, rpath_chain, layout, loaded, system, trusted, preloaded)
            tree.links.append(link)
            if link.found is None:
                continue
            loaded.setdefault(name, link.found)
            loaded.setdefault(link.found.name, link.found)
            if id(link.found) not in seen:
                seen.add(id(link.found))
                tree.order.append(link.found)
                queue.append((link.found, inherited))
    return tree


def dlopen_links(tree: LoadTree, layout: Layout, preloaded: dict[str, Placed], system: Container[str]) -> list[Link]:
    """The soname-like strings of the root's read-only data that it does not already need: names it may
    dlopen, resolved as dlopen would from the root (loaded objects first, then its RPATH and RUNPATH)."""
    root = tree.root
    own = {root.name, posixpath.basename(root.path), *root.elf.needed}
    loaded = dict(preloaded)
    for p in tree.order:
        loaded.setdefault(p.name, p)
    chain = () if root.elf.runpath else tuple((root, e) for e in root.elf.rpath)
    out = []
    for name in root.elf.soname_strings:
        if name in own or skip_soname(name):
            continue
        link = _resolve(root, name, chain, layout, loaded, system)
        out.append(Link(link.needer, link.name, link.how, link.found, link.via, link.elsewhere, link.searched,
                        dlopen=True))
    return out


def _resolve(obj: Placed, name: str, rpath_chain, layout: Layout, loaded: dict[str, Placed],
             system: Container[str], trusted: frozenset[int] | None = None,
             preloaded: dict[str, Placed] | None = None) -> Link:
    if "/" in name:  # a path in DT_NEEDED is opened as it is, $ORIGIN expanded (glibc): no search
        path = needed_path(obj.path, name, libc_linked(obj.elf) or "glibc")
        candidate = layout.by_path.get(path) if path is not None else None
        if candidate is not None and _compatible(candidate, obj):
            return Link(obj, name, "own" if candidate.dist is obj.dist else "path", candidate, name)
        return Link(obj, name, "system" if name.rsplit("/", 1)[-1] in system else "missing")
    hit = loaded.get(name)
    if hit is not None and trusted is not None and preloaded is not None and preloaded.get(name) is hit \
            and id(hit.dist) not in trusted:
        found = _search(obj, name, rpath_chain, layout)
        if found is not None:
            return found
    if hit is not None:
        how = "own" if hit.dist is obj.dist else "loaded"
        return Link(obj, name, how, hit, None if how == "own" else hit.dist.name)
    found = _search(obj, name, rpath_chain, layout)
    if found is not None:
        return found
    searched = _searched(obj, rpath_chain)
    if name in system:
        return Link(obj, name, "system", searched=tuple(searched))
    elsewhere = tuple(p for p in layout.by_name.get(name, ()) if _compatible(p, obj))
    if elsewhere:
        return Link(obj, name, "unreached", elsewhere=elsewhere, searched=tuple(searched))
    return Link(obj, name, "missing", searched=tuple(searched))


def _search(obj: Placed, name: str, rpath_chain, layout: Layout) -> Link | None:
    for owner, entry in list(rpath_chain) + [(obj, e) for e in obj.elf.runpath]:
        directory = expand_search_entry(owner.path, entry)
        if directory is None:
            continue
        candidate = layout.by_path.get(posixpath.join(directory, name))
        if candidate is not None and _compatible(candidate, obj):
            return Link(obj, name, "own" if candidate.dist is obj.dist else "path", candidate, entry)
    return None


def _searched(obj: Placed, rpath_chain) -> list[str]:
    out = []
    for owner, entry in list(rpath_chain) + [(obj, e) for e in obj.elf.runpath]:
        directory = expand_search_entry(owner.path, entry)
        if directory is not None:
            out.append(directory)
    return out


def _compatible(candidate: Placed, obj: Placed) -> bool:
    a, b = candidate.elf, obj.elf
    return (a.machine, a.elf_class, a.endianness) == (b.machine, b.elf_class, b.endianness)
