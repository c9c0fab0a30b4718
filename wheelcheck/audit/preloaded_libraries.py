"""Plugins that find a library of the wheel only because the package loaded it before them.

triton's ``triton/plugins/libMLIRDialectPlugin.so`` needs ``libtriton.so``, and its RUNPATH does not lead to
``triton/_C/libtriton.so``. Even so, the plugin loads, because triton opens it after importing
``triton._C.libtriton``: glibc first looks for a NEEDED name among the libraries already in the process, by
SONAME, whatever flags they were opened with. auditwheel calls such a library external (docs/differences.md 22).

The case is told apart by its shape:
- the needer is a load root (no file of the wheel needs it), so it is opened by path, and it is not an extension
  module or a program, which are opened on their own;
- the wheel ships a file of exactly that name, with that name as its SONAME;
- importing the package loads that copy: it is an extension module, or in an extension module's tree (Qt's
  plugins need libQt6Core.so.6, which the QtCore extension needs), where its own needs are judged too. musl
  matches a NEEDED name only to a library it found by searching (one opened by path, as Python opens extension
  modules, gets no short name), so a musl copy must be a dependency in an extension's tree;
- both are in site-packages: libraries installed as data files into <prefix>/lib (tcmlib's libtcm.so, which
  needs libhwloc.so.15 beside it) are found by other distributions' files through their RPATH.
The finding says what the plugin relies on. `wheelcheck repair` still adds the $ORIGIN entry that makes the
plugin load on its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from fnmatch import fnmatch
from typing import NamedTuple

from wheelcheck.audit.check_context import CheckContext
from wheelcheck.audit.findings import Finding
from wheelcheck.audit.library_reach import shipped_copies, unreached
from wheelcheck.audit.runtime_deps import drivers_of
from wheelcheck.elf.elf_info import ElfInfo
from wheelcheck.wheel.library_resolution import Resolution
from wheelcheck.wheel.wheel_model import WheelModel

__all__ = ["Preloaded", "loaded_first", "check_preloaded"]


class Preloaded(NamedTuple):
    copy: ElfInfo  # the wheel's copy of the library, which the needer finds only once it is loaded
    loader: str  # the extension module whose import loads it (the copy itself, or one whose tree holds it)
    entry: str | None  # the $ORIGIN entry that would reach the copy (what repair adds), None when none can


def loaded_first(model: WheelModel, needer: ElfInfo | None, soname: str, copies: dict[str, list[ElfInfo]],
                 resolution: Resolution, extensions: frozenset[str], libc: str) -> Preloaded | None:
    """The wheel's copy of ``soname`` that ``needer`` finds only where that copy is already loaded, when ``needer``
    is opened by path (see the module's docstring); None otherwise.

    Opened by path: a load root (``resolution.roots``: no file of the wheel needs it) that is neither an extension
    module nor a program. The copy must be loaded by importing one of ``extensions`` (the paths of the wheel's
    extension modules): be one, or be in one's tree, where its own needs are judged too. A library the package
    may open with ctypes first is no proof: a plugin of a ctypes library missing its RUNPATH is the commonest break
    auditwheel exists to catch. musl matches a NEEDED name only to a library it found by searching (a library
    opened by path gets no short name), so there the copy must be a dependency in an extension's tree."""
    if needer is None or needer.is_extension or needer.is_program or needer.path not in resolution.roots \
            or needer.path in resolution.orphans:  # a file needs it by name: not known to be opened by path
        return None
    found = unreached(model, needer, soname, copies)
    if found is not None:
        opener = _opened_by(needer, soname, copies, found.shipped, libc)
        if opener is not None:
            return Preloaded(opener, opener.path, found.entry)
    if found is None or not all(model.install_path(m).startswith("/sp/") for m in (needer.path, found.shipped)):
        return None  # data files in <prefix>/lib are found by other distributions' files, not opened by path
    shipped = next((c for c in copies.get(soname, ()) if c.path == found.shipped), None)
    if shipped is None or shipped.soname != soname:
        return None
    if libc != "musl" and shipped.path in extensions:
        return Preloaded(shipped, shipped.path, found.entry)
    if libc == "musl" and shipped.path in resolution.roots:
        return None  # opened by path itself (an extension, a library nothing needs): musl keeps no name to match
    loader = next((root for root in resolution.loaded_from.get(shipped.path, ()) if root in extensions), None)
    return Preloaded(shipped, loader, found.entry) if loader is not None else None


def _opened_by(needer: ElfInfo, soname: str, copies: dict[str, list[ElfInfo]], shipped: str,
               libc: str) -> ElfInfo | None:
    """The wheel's copy of ``soname`` when that library itself names ``needer``'s file as one it opens (a string
    of its read-only data, a dlopen candidate) and so loads it only once loaded itself, wherever both are
    installed: libmkl_core.so.3 opens its CPU-specific libmkl_avx2.so.3, which needs libmkl_core.so.3. On glibc,
    which matches a NEEDED name to what is loaded by SONAME; None otherwise."""
    if libc == "musl":
        return None  # musl gives a library opened by path no short name to match
    name = needer.path.rsplit("/", 1)[-1]
    return next((c for c in copies.get(soname, ()) if c.path == shipped and c.soname == soname
                 and name in c.soname_strings), None)


def check_preloaded(context: CheckContext) -> Iterator[Finding]:
    copies = shipped_copies(context.elves)
    by_path = {elf.path: elf for elf in context.elves}
    drivers = drivers_of(context.policies or (context.policy,))
    extensions = frozenset(elf.path for elf in context.elves if elf.is_extension)
    for path, soname in sorted(context.resolution.unresolved):
        if context.policy.provides(soname, context.arch) or soname in drivers \
                or any(fnmatch(soname, p) for p in context.options.exclude):
            continue  # the system's copy serves it wherever it loads (libstdc++.so.6 beside mip's own)
        first = loaded_first(context.model, by_path.get(path), soname, copies, context.resolution, extensions,
                             context.libc)
        if first is None:
            continue
        opens_it = first.loader == first.copy.path and not first.copy.is_extension  # a library opening its plugin
        if opens_it:
            reach = (f"nothing, while only {first.copy.path} opens it; a RUNPATH of $ORIGIN would let it load on "
                     "its own")
        else:
            reach = (f"add {first.entry} to its RUNPATH so that it loads on its own; `wheelcheck repair` adds it"
                     if first.entry else "ship it where the file's RUNPATH leads, so that it loads on its own")
        why = ("it opens this file itself" if opens_it else
               "an extension module Python imports" if first.loader == first.copy.path else
               f"a dependency of the extension module {first.loader}")
        yield Finding(
            "preloaded-library", "warning", path,
            f"needs {soname}, which it finds only once the wheel's {first.copy.path} is loaded ({why}): its own "
            f"search path does not reach that file, and no file of the wheel needs this one, so it is opened "
            f"by path, as a plugin", reach, subject=soname,
            cause=f"needs {soname}, which it finds only once {first.copy.path} is loaded")
