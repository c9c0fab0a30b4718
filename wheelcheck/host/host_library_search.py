"""Find the libraries a wheel needs but does not ship, on this host, the way ld.so would, transitively.

Each lookup tries, in order: --lib-path; the DT_RPATH of the object that needs the library and of the objects
that loaded it (only when the object has no DT_RUNPATH; glibc then ignores every RPATH); LD_LIBRARY_PATH;
the object's DT_RUNPATH; ld.so.conf; the trusted directories. ``$ORIGIN`` in a host library's paths is the
directory it was found in. A wheel member's ``$ORIGIN`` paths point into the wheel (the audit resolved those);
only its absolute paths (a build directory, say) are searched here. A candidate must be an ELF file of the
wheel's machine, class and byte order, and must pass the caller's ``compatible`` test (same libc); otherwise
the search goes on, as ld.so skips a library of the wrong class.

A name is looked up once: the first object to need it decides where it comes from, as ld.so loads each
soname once per process.
"""

from __future__ import annotations

import hashlib
from collections import Counter
import os
import posixpath
import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from wheelcheck.wheel.wheel_model import WheelModel
from wheelcheck.wheel.library_resolution import Resolution
from wheelcheck.elf.elf_info import ElfInfo
from wheelcheck.elf.elf_summary import summarize_file
from wheelcheck.errors import BadElfError, RepairError
from wheelcheck.host.search_paths import SearchPath

__all__ = ["HostLibrary", "Located", "examine_library", "locate_libraries", "typical_elf"]

_ORIGIN = re.compile(r"\$(ORIGIN|\{ORIGIN\})")
_TOKEN = re.compile(r"\$")


@dataclass(frozen=True)
class HostLibrary:
    soname: str  # the name it is needed as
    path: str  # where the loader finds it
    realpath: str  # the file itself, symbolic links resolved
    sha256: str  # hex digest of its bytes
    info: ElfInfo
    needs: tuple[str, ...] = ()  # its DT_NEEDED entries that are looked up too (not skipped, not in the wheel)


@dataclass(frozen=True)
class Located:
    roots: tuple[tuple[str, str], ...]  # (wheel member, soname): what the wheel needs from outside
    libraries: dict[str, HostLibrary] = field(default_factory=dict)  # soname -> where it was found
    missing: dict[str, str] = field(default_factory=dict)  # soname -> the first file that needs it
    skipped: tuple[str, ...] = ()  # sonames needed but not looked up (the caller's ``skip``)
    directories: tuple[str, ...] = ()  # the host directories searched (--lib-path, the environment's, the system's)

    @property
    def searched(self) -> str:
        """The host directories, for messages."""
        return ", ".join(self.directories) or "(none)"


def locate_libraries(
    model: WheelModel,
    resolution: Resolution,
    search: SearchPath,
    like: ElfInfo,
    *,
    skip: Callable[[str], bool],
    compatible: Callable[[ElfInfo], bool] = lambda info: True,
) -> Located:
    """Look up every soname the wheel needs from outside (except those ``skip`` accepts), transitively."""
    by_path = {e.path: e for e in model.elves}
    inside = {e.path.rsplit("/", 1)[-1] for e in model.elves} | {e.soname for e in model.elves if e.soname}
    roots = tuple(sorted(key for key in resolution.unresolved if not skip(key[1]) and key[1] not in inside))
    for member, soname in roots:
        _refuse_path(member, soname)
    skipped = {s for _, s in resolution.unresolved if skip(s)}
    queue: deque = deque()
    for member, soname in roots:
        elf = by_path[member]
        runpath = tuple(p for p in elf.runpath if _is_host_dir(p))
        queue.append((member, soname, _member_rpaths(elf, resolution, by_path), bool(elf.runpath), runpath))
    cache: dict[str, HostLibrary | None] = {}
    libraries: dict[str, HostLibrary] = {}
    missing: dict[str, str] = {}
    while queue:
        # ancestors: the RPATHs of the requester and its loaders (each only if it has no RUNPATH); ld.so
        # uses them only when the requester itself has no RUNPATH
        requester, soname, ancestors, has_runpath, runpath = queue.popleft()
        if soname in libraries or soname in missing:
            continue
        dirs = search.lib_path + (() if has_runpath else ancestors) + search.env + runpath + search.system
        found = _search(soname, dirs, like, compatible, cache)
        if found is None:
            missing[soname] = requester
            continue
        info = found.info
        needs = tuple(n for n in info.needed if not skip(n) and n not in inside)
        for dep in needs:
            _refuse_path(found.path, dep)
        skipped.update(n for n in info.needed if skip(n))
        found = HostLibrary(soname, found.path, found.realpath, found.sha256, info, needs)
        libraries[soname] = found
        origin = posixpath.dirname(found.path)
        own_rpath = () if info.runpath else tuple(_expand(p, origin) for p in info.rpath)
        child_ancestors = tuple(d for d in own_rpath + ancestors if d)
        child_runpath = tuple(d for d in (_expand(p, origin) for p in info.runpath) if d)
        for dep in needs:
            queue.append((f"[{soname}]", dep, child_ancestors, bool(info.runpath), child_runpath))
    return Located(roots=roots, libraries=libraries, missing=missing, skipped=tuple(sorted(skipped)),
                   directories=search.lib_path + search.env + search.system)


def _member_rpaths(elf: ElfInfo, resolution: Resolution, by_path: dict[str, ElfInfo]) -> tuple[str, ...]:
    """The host directories among the RPATHs of a wheel member (unless it has a RUNPATH) and its loaders'."""
    chain = [] if elf.runpath else [p for p in elf.rpath if _is_host_dir(p)]
    for root in resolution.loaded_from.get(elf.path, ()):
        loader = by_path.get(root)
        if loader is not None and loader is not elf and not loader.runpath:
            chain += [p for p in loader.rpath if _is_host_dir(p)]
    return tuple(dict.fromkeys(chain))


def _refuse_path(requester: str, soname: str) -> None:
    if "/" in soname:
        raise RepairError(requester, f"needs {soname!r}, a path: the loader opens such a name as it is, without "
                                     "searching, so no library found on this host is the one it loads; "
                                     "link the library by its soname")


def _is_host_dir(entry: str) -> bool:
    """An RPATH entry of a wheel member that names a host directory: an absolute path without $ORIGIN or other
    tokens. A relative entry is read against the current directory: never searched."""
    return entry.startswith("/") and not _TOKEN.search(entry)


def _expand(entry: str, origin: str) -> str:
    """A host library's RPATH entry with $ORIGIN expanded; '' for entries with other tokens ($LIB, $PLATFORM)
    and for relative ones."""
    expanded = _ORIGIN.sub(lambda _: origin, entry)  # a function: "\\" in a path is no escape
    return posixpath.normpath(expanded) if _is_host_dir(expanded) else ""


def _search(soname: str, dirs: tuple[str, ...], like: ElfInfo, compatible, cache) -> HostLibrary | None:
    for directory in dict.fromkeys(dirs):
        candidate = posixpath.join(directory, soname)
        if candidate not in cache:
            cache[candidate] = examine_library(candidate, soname, like, compatible)
        if cache[candidate] is not None:
            return cache[candidate]
    return None


def typical_elf(elves: list[ElfInfo]) -> ElfInfo:
    """An ELF file of the most common machine, class and byte order: what host libraries must match."""
    key = Counter((e.machine, e.elf_class, e.endianness) for e in elves).most_common(1)[0][0]
    return next(e for e in elves if (e.machine, e.elf_class, e.endianness) == key)


def examine_library(candidate: str, soname: str, like: ElfInfo, compatible=None) -> HostLibrary | None:
    """``candidate`` summarised, if it is an ELF shared library of ``like``'s machine, class and byte order (and
    ``compatible`` accepts it); None otherwise (missing, unreadable, a linker script, a program, another machine,
    or a name that is a path)."""
    if "/" in soname or not candidate.startswith("/") or not os.path.isfile(candidate):
        return None
    digest = hashlib.sha256()
    try:
        info = summarize_file(candidate, digest=digest)
    except (OSError, BadElfError):
        return None  # unreadable, or not ELF (e.g. a linker script named like a library)
    if (info.machine, info.elf_class, info.endianness) != (like.machine, like.elf_class, like.endianness):
        return None
    if info.elf_type != "ET_DYN" or info.is_program:  # /usr/bin/python3 is ET_DYN too, as any PIE program
        return None
    if compatible is not None and not compatible(info):
        return None
    return HostLibrary(soname, candidate, os.path.realpath(candidate), digest.hexdigest(), info)
