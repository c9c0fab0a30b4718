"""Why a library the wheel needs is not found inside it, in words a user can act on.

Two cases deserve more than "the wheel does not provide it":
- the wheel ships a file with that soname, but the needing file's RPATH/RUNPATH does not lead to its
  directory (``torch/bin/x`` needs libc10.so, shipped as ``torch/lib/libc10.so``, RUNPATH ``$ORIGIN``): the
  ``$ORIGIN``-relative entry that reaches it is the fix, and what ``wheelcheck repair`` adds;
- the needing file's RPATH points into a directory of site-packages that the wheel does not ship
  (``$ORIGIN/../torch/lib``): another distribution provides the library at run time. When Requires-Dist names
  that distribution, the user's fix is ``--exclude`` of the soname, as auditwheel users do by hand.
"""

from __future__ import annotations

import posixpath
from bisect import bisect_left
from dataclasses import dataclass
from functools import lru_cache

from packaging.utils import canonicalize_name

from wheelcheck.elf.elf_info import ElfInfo
from wheelcheck.wheel.wheel_model import WheelModel
from wheelcheck.wheel.library_resolution import at_prefix, environment_directory, rpath_directory
from wheelcheck.wheel.requires_dist import installed_requirements, requested_extras

__all__ = ["Unreached", "ForeignDirectories", "shipped_copies", "unreached", "foreign_directories", "why_missing"]


@dataclass(frozen=True)
class Unreached:
    needer: str  # the member that needs the library
    soname: str
    shipped: str  # the member that provides it
    entry: str | None  # the $ORIGIN-relative RPATH entry that reaches it; None when no such entry can
    searched: str  # what the needer's own search path is, in words


@dataclass(frozen=True)
class ForeignDirectories:
    needer: str
    soname: str
    directories: tuple[str, ...]  # site-packages directories of the RPATH that the wheel does not ship
    required: tuple[str, ...]  # the Requires-Dist names that may install them (named like the directory); none: no
    # directory is named like the library and one is named like no requirement, so none is blamed
    exact: bool = True  # each directory's top is a required distribution's own name (torch/lib: torch)
    shared: bool = False  # the wheel installs files into each directory too (nvidia/cu13/lib, a namespace's)


def shipped_copies(elves: list[ElfInfo]) -> dict[str, list[ElfInfo]]:
    """The wheel's ELF files by the names the loader would take them for (SONAME, and file name)."""
    copies: dict[str, list[ElfInfo]] = {}
    for elf in elves:
        for name in dict.fromkeys(n for n in (elf.soname, posixpath.basename(elf.path)) if n):
            copies.setdefault(name, []).append(elf)
    return copies


def unreached(model: WheelModel, needer: ElfInfo, soname: str,
              copies: dict[str, list[ElfInfo]]) -> Unreached | None:
    """The wheel's own copy of ``soname`` that ``needer`` does not find, or None when it ships none. Only a file
    of that name counts: the loader searches directories for the file name, so no path reaches a copy whose
    soname alone matches (``misnamed`` explains those)."""
    candidates = [c for c in _other_copies(needer, soname, copies) if posixpath.basename(c.path) == soname]
    if not candidates:
        return None
    home = posixpath.dirname(model.install_path(needer.path))
    shipped = min(candidates, key=lambda c: (_distance(home, c, model), c.path))
    entry = None
    there = posixpath.dirname(model.install_path(shipped.path))
    if _in_site_packages(home) and _in_site_packages(there):
        # scripts and data files land at no fixed distance from site-packages: no $ORIGIN path between
        relative = posixpath.relpath(there, home)
        entry = "$ORIGIN" if relative == "." else f"$ORIGIN/{relative}"
    return Unreached(needer.path, soname, shipped.path, entry, _searched(needer, home))


def foreign_directories(model: WheelModel, needer: ElfInfo, soname: str) -> ForeignDirectories | None:
    """The directories of ``needer``'s RPATH/RUNPATH inside site-packages that a distribution of its Requires-Dist
    is named like (whether or not the wheel installs files there too); None when there is none (build-tree
    leftovers such as Bazel's ``_solib_local`` name no distribution, and say nothing about the library)."""
    shipped_dirs = _shipped_directories(model.members, model.data_dir, model.root_is_purelib)
    found: list[tuple[str, tuple[str, ...]]] = []  # (directory, the requirements named like it)
    stem = _library_stem(soname)
    for entry in needer.rpath + needer.runpath:
        directory = rpath_directory(model, needer.path, entry)
        if directory is None or not directory.startswith("/sp/"):
            continue
        # a directory the wheel installs into may be shared with a requirement (nvidia/cu13/lib holds every cu13
        # library; meshlib_core.libs both meshlib's and meshlib-core's): it is named like the requirement too
        named = _owners(directory[len("/sp/"):], installed_requirements(model.requires_dist),
                        requested_extras(model.requires_dist), stem)
        found.append((directory[len("/sp/"):], named))
    # the directories named like the library itself, when there are some (tilelang: libtvm_ffi.so in tvm_ffi/lib,
    # libz3.so in z3/lib; nvidia-cusolver: libcublasLt.so.12 in nvidia/cublas/lib), not every directory of the RPATH;
    # when no requirement is named like those, none is blamed for the library
    likeness = [_named_like(directory, stem) for directory, _named in found]
    best = max(likeness, default=0)
    own = posixpath.dirname(model.install_path(needer.path))[len("/sp/"):]  # $ORIGIN: what is there, the wheel ships
    if best == 0 and any(not named and directory != own for directory, named in found):
        # no directory is named like the library, and one is named like no requirement: the library may as well be
        # there (cutensornet: libcublas.so.13 in nvidia/cu13/lib, which a requirement's requirement fills, beside
        # cutensor/lib), so no requirement is blamed for it
        unowned = tuple(dict.fromkeys(d for d, named in found if not named and d != own))
        return ForeignDirectories(needer.path, soname, unowned, (), False,
                                  all(_ships_in(shipped_dirs, "/sp/" + d) for d in unowned))
    found = [f for f, score in zip(found, likeness) if score == best and f[1]]
    if not found:
        return None
    directories = tuple(dict.fromkeys(d for d, _ in found))
    owners = tuple(dict.fromkeys(o for _, named in found for o in named))
    return ForeignDirectories(needer.path, soname, directories, owners,
                              all(_top(d) in named for d, named in found),
                              all(_ships_in(shipped_dirs, "/sp/" + d) for d in directories))


_GENERIC_DIRECTORIES = frozenset({"lib", "lib64", "libs", "core", "bin", "share", "include", "data", "plugins"})


def _top(directory: str) -> str:
    """The distribution a top directory is named after: foo for foo/lib, and for foo.libs, where auditwheel puts
    what it grafts into foo's wheel."""
    top = directory.split("/", 1)[0]
    return canonicalize_name(top.removesuffix(".libs") or top)


def _named_like(directory: str, stem: str) -> int:
    """How closely a directory is named like the library of ``stem`` (``_library_stem``): 2 when one of its parts
    (not a generic one such as lib) is the stem (cublas/lib for libcublas), 1 when the stem starts with one
    (cublas/lib for libcublasLt), 0 otherwise."""
    parts = [canonicalize_name(p) for p in directory.split("/") if p]
    parts = [p for p in parts if p not in _GENERIC_DIRECTORIES]
    if stem in parts:
        return 2
    return 1 if any(len(p) >= 3 and stem.startswith(p) for p in parts) else 0


def _library_stem(soname: str) -> str:
    """libtvm_ffi.so -> tvm-ffi, libz3.so.4.15 -> z3: the project a library is usually named after."""
    stem = soname.split(".so", 1)[0]
    return canonicalize_name(stem[3:] if stem.startswith("lib") else stem)


def _shipped_directories(members: tuple[str, ...], data_dir: str, root_is_purelib: bool) -> list[str]:
    """The install directories of the members, sorted: made once per wheel, not once per finding (tensorflow
    has 12,825 members and hundreds of libraries to ask about). Remembered by the identity of ``members``:
    hashing 12,825 names for a cache key, once per finding, cost more than the lookups it saved."""
    key = (id(members), data_dir, root_is_purelib)
    cached = _SHIPPED.get(key)
    if cached is not None and cached[0] is members:
        return cached[1]
    model = WheelModel(filename="", name="", version="", tags=frozenset(), elves=(), members=members,
                       root_is_purelib=root_is_purelib, data_dir=data_dir)
    directories = sorted({posixpath.dirname(model.install_path(m)) for m in members})
    if len(_SHIPPED) >= 4:
        _SHIPPED.clear()
    _SHIPPED[key] = (members, directories)  # members held: its id cannot be reused while the entry lives
    return directories


_SHIPPED: dict[tuple[int, str, bool], tuple[tuple[str, ...], list[str]]] = {}


def _ships_in(sorted_dirs: list[str], directory: str) -> bool:
    """Is ``directory``, or a directory under it, among ``sorted_dirs``?"""
    i = bisect_left(sorted_dirs, directory)
    if i < len(sorted_dirs) and sorted_dirs[i] == directory:
        return True
    j = bisect_left(sorted_dirs, directory + "/")
    return j < len(sorted_dirs) and sorted_dirs[j].startswith(directory + "/")


def why_missing(model: WheelModel, needer: ElfInfo | None, soname: str,
                copies: dict[str, list[ElfInfo]]) -> tuple[str, str]:
    """(what, hint) of an external-library finding."""
    plain = (f"needs {soname}, which the wheel does not provide",
             "vendor it with `wheelcheck repair`, or --exclude it if the system or another wheel provides it")
    if needer is None:
        return plain
    odd = _not_a_library(model, soname)
    if odd is not None:
        member, what = odd
        return (f"needs {soname}; the wheel ships {member} by that name, but {what}",
                f"ship the library itself as {member} (a copy: wheels cannot carry links), or link against the "
                f"name its file has")
    found = unreached(model, needer, soname, copies)
    if found is None and (misnamed := _misnamed(needer, soname, copies)) is not None:
        return (f"needs {soname}; the wheel ships a library of that soname as {misnamed}, but the loader looks "
                f"for a file named {soname}",
                f"ship it as {posixpath.join(posixpath.dirname(misnamed), soname)} (a copy: wheels cannot carry "
                f"links)")
    if found is not None:
        what = f"needs {soname}; the wheel ships {found.shipped}, but {found.searched} does not reach it"
        if found.entry is None and not _in_site_packages(posixpath.dirname(model.install_path(found.shipped))):
            climbing = _entry_to_data_copy(model, needer, found.shipped)
            if climbing is not None:  # reached in the usual layout only: say so, not "does not reach it"
                entry, where = climbing
                what = (f"needs {soname}; the wheel installs {found.shipped} into the environment's {where}, which "
                        f"this file's {entry} reaches only where site-packages is <prefix>/lib/python3.X/site-packages:"
                        f" not where it is under lib64 (Fedora's system Python), nor after pip install --target")
            return what, ("the copy is installed outside site-packages (.data/), at no fixed distance from this "
                          "file: ship it beside the file, in site-packages, with an $ORIGIN RUNPATH entry to it")
        if found.entry is None:
            return what, ("an executable installed as a script lands at no fixed distance from site-packages: "
                          "`wheelcheck repair` moves it beside the package and adds the path to it")
        return what, (f"add {found.entry} to its RUNPATH (-Wl,-rpath,'{found.entry}'); "
                      f"`wheelcheck repair` adds it")
    foreign = foreign_directories(model, needer, soname)
    if foreign is not None and not foreign.required:
        where = ", ".join(foreign.directories)
        return (f"needs {soname}, which the wheel does not provide; its {needer.search_path_tag} leads to {where}, "
                f"which no distribution of its Requires-Dist is named like (a requirement of a requirement may "
                f"install it there)",
                f"if a distribution the wheel's requirements bring installs it in {where}, accept it with --exclude "
                f"'{soname}' and require that distribution by name; otherwise vendor it with `wheelcheck repair`")
    if foreign is not None:
        where, owners = ", ".join(foreign.directories), " or ".join(foreign.required)
        # a directory named like another distribution's own package is where that one installs; one named
        # like a family (sherpa_onnx/... for sherpa-onnx-core) is a guess: the family may install elsewhere
        whose = (f"which it shares with {owners} (in Requires-Dist), which may install it there" if foreign.shared
                 else f"where {owners} (in Requires-Dist) installs its files" if foreign.exact else
                 f"named like {owners} (in Requires-Dist), which may install it there")
        return (f"needs {soname}, which the wheel does not provide; its {needer.search_path_tag} leads to {where}, "
                f"{whose}",
                f"if {owners} provides it, accept it with --exclude '{soname}' (the loader finds it there "
                f"once {owners} is installed); otherwise vendor it with `wheelcheck repair`")
    required = installed_requirements(model.requires_dist)
    into = [d for e in needer.rpath + needer.runpath if (d := environment_directory(model, needer.path, e)) is not None]
    if into and required:  # mkl_fft: $ORIGIN/../../.. is <prefix>/lib, where mkl installs libmkl_rt.so.3
        where = ", ".join(at_prefix(d) for d in dict.fromkeys(into))
        owners = " or ".join(required[:3]) + (" or another requirement" if len(required) > 3 else "")
        return (f"needs {soname}, which the wheel does not provide; its {needer.search_path_tag} leads to the "
                f"environment's {where}, "
                f"where a distribution of its Requires-Dist ({owners}) may install it as a data file",
                f"if one of them provides it, accept it with --exclude '{soname}' (the loader finds it there once "
                f"that is installed); otherwise vendor it with `wheelcheck repair`")
    return plain


def _entry_to_data_copy(model: WheelModel, needer: ElfInfo, shipped: str) -> tuple[str, str] | None:
    """(RPATH or RUNPATH entry, where) of ``needer`` that climbs out of site-packages to the environment directory
    the data file ``shipped`` (``<name>.data/data/lib/libfoo.so``) installs into, by the usual layout; None when
    no entry does."""
    there = posixpath.dirname(model.install_path(shipped))  # /data/lib
    if not there.startswith("/data"):
        return None
    # ld.so reads no DT_RPATH of a file with a DT_RUNPATH
    for tag, entries in (("RUNPATH", needer.runpath),) if needer.runpath else (("RPATH", needer.rpath),):
        for entry in entries:
            directory = environment_directory(model, needer.path, entry)
            if directory is not None and "/data" + ("/" + directory if directory else "") == there:
                return f"{tag} entry {entry}", at_prefix(directory)
    return None


def _not_a_library(model: WheelModel, soname: str) -> tuple[str, str] | None:
    """A member named ``soname`` that installs as no library: a link (pip writes a file holding its target's
    path) or a file without ELF magic; (member, what it is)."""
    for member, target in model.links:
        if posixpath.basename(member) == soname:
            return member, f"as a symbolic link to {target!r}, which installers write as a regular file holding that path"
    for member, what in model.not_elf_libraries:
        if posixpath.basename(member) == soname:
            return member, f"it holds {what}"
    return None


def _misnamed(needer: ElfInfo, soname: str, copies: dict[str, list[ElfInfo]]) -> str | None:
    """A shipped library whose soname is ``soname`` under another file name, which no directory search finds
    (asked once ``unreached`` found no file of that name)."""
    named = [c.path for c in _other_copies(needer, soname, copies)]
    return min(named) if named else None


def _other_copies(needer: ElfInfo, soname: str, copies: dict[str, list[ElfInfo]]) -> list[ElfInfo]:
    """The wheel's files ``needer`` could take for ``soname`` (by soname or file name): not itself, same machine."""
    return [c for c in copies.get(soname, ()) if c.path != needer.path and _same_machine(c, needer)]


def _in_site_packages(directory: str) -> bool:
    return directory == "/sp" or directory.startswith("/sp/")


def _searched(needer: ElfInfo, home: str) -> str:
    if _in_site_packages(home):
        where = f"$ORIGIN = {home[len('/sp/'):] or 'site-packages'}"
    else:  # /bin, /data/...: the scheme's scripts or data directory, wherever the installer puts it
        where = f"$ORIGIN = the {home.split('/')[1].replace('bin', 'scripts')} directory"
    if needer.runpath:
        return f"this file's RUNPATH {':'.join(needer.runpath)} ({where})"
    if needer.rpath:
        return f"this file's RPATH {':'.join(needer.rpath)} ({where})"
    return f"this file, which has no RPATH or RUNPATH ({where}),"


def _distance(home: str, candidate: ElfInfo, model: WheelModel) -> int:
    there = posixpath.dirname(model.install_path(candidate.path))
    return posixpath.relpath(there, home).count("/")


def _same_machine(a: ElfInfo, b: ElfInfo) -> bool:
    return (a.machine, a.elf_class, a.endianness) == (b.machine, b.elf_class, b.endianness)


@lru_cache(maxsize=1024)
def _owners(directory: str, required: tuple[str, ...], extras: tuple[tuple[str, tuple[str, ...]], ...] = (),
            stem: str = "") -> tuple[str, ...]:
    """The required distributions named like ``directory``: torch/lib -> torch; nvidia/cublas/lib ->
    nvidia-cublas-cu12; nvidia/cu13/lib -> every nvidia-* (one namespace directory for many of them).

    A namespace's directory named like the library sought (``stem``: nvidia/cublas/lib for libcublas) is that
    library's own project: the namespace's other distributions (nvidia-nvjitlink-cu12) do not install there, but
    a requirement asking for an extra of that name does (cuda-toolkit[cublas], named so). Cached: a large wheel
    asks about the same few directories for each of hundreds of libraries."""
    parts: list[str] = [canonicalize_name(p) for p in directory.split("/") if p]
    parts[0] = _top(directory)
    # named with a prefix or a suffix: z3/lib for z3-solver, tvm_ffi/lib for apache-tvm-ffi (not a generic name such
    # as lib or core, which pydantic-core or any *-lib would end with)
    family = [r for r in required if r.startswith(f"{parts[0]}-")
              or (r.endswith(f"-{parts[0]}") and parts[0] not in _GENERIC_DIRECTORIES)]
    # one of them named like the library too: PyQt6/Qt6/lib's libQt6Charts.so.6 is pyqt6-charts-qt6's, not pyqt6's
    like_library = [r for r in family if stem and any(
        len(word) >= 4 and word in stem for word in r.split("-") if word != parts[0])]
    if like_library:
        return tuple(like_library)
    exact = [r for r in required if r == parts[0]]
    if exact:
        return tuple(exact)
    if len(parts) > 1 and parts[1] not in _GENERIC_DIRECTORIES:
        closer = [r for r in family if r.startswith(f"{parts[0]}-{parts[1]}")]
        if closer:
            return tuple(closer)
        if stem and _named_like(parts[1], stem):
            return tuple(f"{name}[{parts[1]}]" for name, asked in extras if parts[1] in asked)
    return tuple(family)
