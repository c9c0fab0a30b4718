"""Plugins that find a library of the wheel only because it is loaded before them.

triton's ``triton/plugins/libMLIRDialectPlugin.so`` needs ``libtriton.so``, and its RUNPATH does not lead to
``triton/_C/libtriton.so``. Even so, the plugin loads, because triton opens it after importing
``triton._C.libtriton``. When glibc and musl meet a NEEDED name, they first look among the libraries already in
the process: glibc by SONAME, musl by file name. A library loaded by path (an extension module Python imports, a
library opened with ctypes, libjvm.so opened by the java launcher) therefore satisfies a plugin that is opened
after it. auditwheel calls such a library external (docs/differences.md 22).

The case is told apart by its shape:
- the needer is no load root of its own: not an extension module, not a program, and no file of the wheel needs
  it, so it is opened by path;
- the wheel ships a file of exactly that name, with that name as its SONAME, so both loaders match it;
- both are in site-packages: libraries installed as data files into <prefix>/lib (tcmlib's libtcm.so, which
  needs libhwloc.so.15 beside it) are found by other distributions' files through their RPATH, not opened by
  path by the package, so nothing says the copy is loaded first.
The finding says what the plugin relies on. `wheelcheck repair` still adds the $ORIGIN entry that makes the
plugin load on its own.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from fnmatch import fnmatch

from wheelcheck.audit.check_context import CheckContext
from wheelcheck.audit.findings import Finding
from wheelcheck.audit.library_reach import shipped_copies, unreached
from wheelcheck.audit.runtime_deps import drivers_of
from wheelcheck.elf.elf_info import ElfInfo
from wheelcheck.wheel.wheel_model import WheelModel

__all__ = ["loaded_first", "check_preloaded"]


def loaded_first(model: WheelModel, needer: ElfInfo | None, soname: str, copies: dict[str, list[ElfInfo]],
                 needed_names: frozenset[str]) -> ElfInfo | None:
    """The wheel's copy of ``soname`` that ``needer`` finds only where that copy is already loaded, when ``needer``
    is opened by path (see the module's docstring); None otherwise. ``needed_names``: every NEEDED name of the
    wheel's files."""
    if needer is None or needer.is_extension or needer.interpreter is not None:
        return None
    if posixpath.basename(needer.path) in needed_names or (needer.soname and needer.soname in needed_names):
        return None  # loaded as another file's dependency, maybe before the copy
    found = unreached(model, needer, soname, copies)
    if found is None or not all(model.install_path(m).startswith("/sp/") for m in (needer.path, found.shipped)):
        return None  # data files in <prefix>/lib are found by other distributions' files, not opened by path
    shipped = next((c for c in copies.get(soname, ()) if c.path == found.shipped), None)
    return shipped if shipped is not None and shipped.soname == soname else None


def check_preloaded(context: CheckContext) -> Iterator[Finding]:
    copies = shipped_copies(context.elves)
    needed_names = frozenset(n for elf in context.elves for n in elf.needed)
    by_path = {elf.path: elf for elf in context.elves}
    drivers = drivers_of(context.policies or (context.policy,))
    for path, soname in sorted(context.resolution.unresolved):
        if context.policy.provides(soname, context.arch) or soname in drivers \
                or any(fnmatch(soname, p) for p in context.options.exclude):
            continue  # the system's copy serves it wherever it loads (libstdc++.so.6 beside mip's own)
        shipped = loaded_first(context.model, by_path.get(path), soname, copies, needed_names)
        if shipped is None:
            continue
        found = unreached(context.model, by_path[path], soname, copies)
        reach = (f"add {found.entry} to its RUNPATH so that it loads on its own; `wheelcheck repair` adds it"
                 if found is not None and found.entry else
                 "ship it where the file's RUNPATH leads, so that it loads on its own")
        why = "an extension module Python imports" if shipped.is_extension else "opened by path (ctypes, a launcher)"
        yield Finding(
            "preloaded-library", "warning", path,
            f"needs {soname}, which it finds only once the wheel's {shipped.path} is loaded ({why}): its own "
            f"search path does not reach that file, and nothing in the wheel needs this file, so it is opened "
            f"by path, as a plugin", reach, subject=soname,
            cause=f"needs {soname}, which it finds only once {shipped.path} is loaded")
