"""Libraries loaded at run time: dlopen candidates found in read-only data, and system driver libraries.

A soname-looking string in an ELF file's read-only data that is not in its NEEDED list is what it may
pass to dlopen. Each is shipped by the wheel, allowed by the policy, a system driver (which must come
from the machine: data/drivers.json plus the policy's own), a fallback (another name of the same library
in the same file is shipped or allowed: programs try "libfoo.so", then "libfoo.so.1"; or the file already
needs that library, from the system or from the wheel under any name), or something no policy guarantees.

A name is only something the file may load when code can hand it to a loader: the file, or a library of the wheel
it needs, imports dlopen or a loader that takes a name (GLib's g_module_open, libtool's lt_dlopen, SDL, NSPR, Qt...),
or the Python C API (a Python module may pass it to ctypes). A dynamically linked file with none of these names
the library for another reason (clang's driver lists libc++.so for the linker; GnuTLS names libnettle.so.8 to
check its own integrity): status no-loader, no finding. A static executable imports nothing and may still dlopen.

A file the wheel ships is a system driver when it is a build of a listed one: the same stem and the same
major version (libEGL.so.1.4.0 is libEGL.so.1; an unversioned libEGL.so, which SwiftShader and ANGLE ship
for Chromium to load by path, is not glvnd's libEGL.so.1), or any version of one listed without a version.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from fnmatch import fnmatch

from wheelcheck.audit.check_context import CheckContext, Fact
from wheelcheck.wheel.library_resolution import LIBPYTHON
from wheelcheck.data import driver_loaders, system_drivers
from wheelcheck.elf.elf_info import ElfInfo, is_dynamic_loader
from wheelcheck.policy.policy_model import Policy
from wheelcheck.audit.findings import Finding
from wheelcheck.symbols.sonames import unhashed

__all__ = ["check_runtime_deps", "drivers_of", "DriverNames", "runtime_candidates"]

_STEM = re.compile(r"^(.*?)\.so(?:\.|$)")
# What loads a library by name at run time: the loader's own calls and the wrappers libraries offer over them
_LOADERS = frozenset({
    "dlopen", "dlmopen", "__libc_dlopen_mode", "android_dlopen_ext", "g_module_open", "g_module_open_full",
    "lt_dlopen", "lt_dlopenext", "lt_dlopenadvise", "SDL_LoadObject", "PR_LoadLibrary", "PR_LoadLibraryWithFlags",
    "uv_dlopen", "apr_dso_load", "Tcl_LoadFile", "xmlModuleOpen", "DSO_load",
})
# Qt's loaders (QLibrary, QPluginLoader); the Python and Lua C APIs, whose code may load a name it is handed
_LOADER_PREFIXES = ("_ZN8QLibrary", "_ZN13QPluginLoader", "Py", "lua_", "luaL_")


def drivers_of(policies) -> DriverNames:
    """The built-in system driver sonames plus every judged policy's own ``drivers``."""
    return DriverNames(system_drivers().union(*(p.drivers for p in policies)))


class DriverNames:
    """System driver sonames, as names a file needs or may dlopen: a listed name, or any version of a name listed
    without one (libnvidia-tileiras.so.615.09 for libnvidia-tileiras.so: such libraries are numbered by the
    driver's release). ``listed``: the names as listed."""

    def __init__(self, listed: frozenset[str]) -> None:
        self.listed = listed
        self._any_version = {stem for stem, major in map(_stem_and_major, listed) if major is None}

    def __contains__(self, soname: object) -> bool:
        if not isinstance(soname, str):
            return False
        return soname in self.listed or (_STEM.match(unhashed(soname)) is not None
                                         and _stem_and_major(soname)[0] in self._any_version)


def _stem(soname: str) -> str:
    return _stem_and_major(soname)[0]


def _stem_and_major(soname: str) -> tuple[str, str | None]:
    """libEGL-abcd1234.so.1.0.0 -> (libEGL, "1"); libEGL.so -> (libEGL, None)."""
    name = unhashed(soname)
    m = _STEM.match(name)
    if not m:
        return name, None
    return m.group(1), name[m.end():].split(".", 1)[0] or None


class _DriverBuilds:
    """The drivers a shipped file may be a build of, vendor-neutral loaders (libOpenCL) aside: a wheel may ship
    those. A listed name with a version matches that major version; one without matches every version, since
    such libraries are numbered by the driver's release (libnvidia-fatbinaryloader.so.390.87)."""

    def __init__(self, drivers: DriverNames) -> None:
        self._by_major: dict[tuple[str, str | None], str] = {}
        self._any_version: dict[str, str] = {}
        for driver in sorted(drivers.listed - driver_loaders()):
            stem, major = _stem_and_major(driver)
            self._by_major[stem, major] = driver
            if major is None:
                self._any_version[stem] = driver

    def of(self, soname: str) -> str | None:
        """The driver ``soname`` (a file's soname, or its name when it has none) is a build of, or None."""
        stem, major = _stem_and_major(soname)
        return self._by_major.get((stem, major)) or self._any_version.get(stem)


def runtime_candidates(elf: ElfInfo) -> list[str]:
    """Soname strings of the file's read-only data that are neither NEEDED nor its own name."""
    own = {n for n in (elf.path.rsplit("/", 1)[-1], elf.soname) if n}
    own_stems = {_stem(n) for n in own}  # a library naming itself (libcrypto.so in libcrypto-ab12cd34.so.3)
    needed = set(elf.needed)
    return [s for s in elf.soname_strings
            if s not in needed and s not in own and _stem(s) not in own_stems and not is_dynamic_loader(s)
            and not LIBPYTHON.match(s)]


# Built by glibc itself and part of its package on every glibc distribution (Debian's libc6, CentOS 7's and
# AlmaLinux's glibc), yet in no policy: nothing links them, glibc or a program opens them (Chromium names the NSS
# modules to load them before its sandbox starts). A private copy would have to match the running glibc.
_GLIBC_OWN_MODULES = frozenset({"libnss_files.so.2", "libnss_dns.so.2", "libnss_compat.so.2", "libthread_db.so.1",
                                "libBrokenLocale.so.1", "libanl.so.1"})


def _allowed(ctx: CheckContext, soname: str) -> bool:
    """May the wheel count on the system for ``soname``: the policy judged, or, for plain linux, any policy;
    on glibc, also glibc's own modules."""
    policy: Policy = ctx.policy
    if ctx.libc == "glibc" and soname in _GLIBC_OWN_MODULES:
        return True
    return any(p.provides(soname, ctx.arch) for p in ((policy,) if not policy.is_linux else ctx.policies))


def check_runtime_deps(ctx: CheckContext) -> Iterator[Finding | Fact]:
    drivers = drivers_of(ctx.policies or (ctx.policy,))
    driver_builds = _DriverBuilds(drivers)
    shipped: dict[str, str] = {}
    stems: dict[str, str] = {}
    for elf in ctx.model.elves:
        for name in (elf.path.rsplit("/", 1)[-1], elf.soname):
            if name:
                shipped.setdefault(name, elf.path)
                stems.setdefault(_stem(name), elf.path)
        driver = driver_builds.of(elf.soname or elf.path.rsplit("/", 1)[-1])
        if driver is not None:
            yield Finding(
                "driver-vendored", "error", elf.path,
                f"is the system driver library {driver}",
                "remove it from the wheel (repair never grafts driver libraries); the system provides it",
                subject=driver,
                explanation="It must match the machine's kernel module or GPU driver and must never be vendored.")
    for path, soname in sorted(ctx.resolution.unresolved):
        if soname in drivers and not any(fnmatch(soname, p) for p in ctx.options.exclude):
            yield Finding(
                "driver-needed", "info", path,
                f"requires the system driver library {soname} (NEEDED)",
                "nothing to vendor; document the driver your users need", subject=soname,
                explanation="It comes from the machine, not the wheel: without it the import fails.")
    for elf in ctx.elves:
        statuses = _statuses(ctx, elf, shipped, drivers)
        yield Fact(elf.path, "runtime_libraries", [{"soname": s, "status": st} for s, st in statuses.items()])
        driver_hits = [s for s, st in statuses.items() if st == "driver"]
        if driver_hits:
            yield Finding(
                "dlopen-driver", "info", elf.path,
                f"may load the system driver librar{'ies' if len(driver_hits) > 1 else 'y'} "
                f"{', '.join(driver_hits)} at run time (named in its read-only data)",
                "nothing to vendor: the system provides it", count=len(driver_hits))
        for names in _by_library([s for s, st in statuses.items() if st == "unguaranteed"]):
            yield _unguaranteed(elf, names, shipped_as=stems.get(_stem(names[0])))


def _by_library(sonames: list[str]) -> list[list[str]]:
    """``sonames`` grouped by library (libasound.so.2 and libasound.so: one backend a loop tries by both names),
    in order of first appearance, the names with a version first."""
    groups: dict[str, list[str]] = {}
    for soname in sonames:
        groups.setdefault(_stem(soname), []).append(soname)
    return [sorted(names, key=lambda n: _stem_and_major(n)[1] is None) for names in groups.values()]


def _statuses(ctx: CheckContext, elf: ElfInfo, shipped: dict[str, str], drivers: DriverNames) -> dict[str, str]:
    """Each dlopen candidate of ``elf`` -> shipped, allowed, driver, fallback or unguaranteed."""
    statuses = {}
    for soname in runtime_candidates(elf):
        if soname in shipped:
            statuses[soname] = "shipped"
        elif _allowed(ctx, soname):
            statuses[soname] = "allowed"
        elif soname in drivers:
            statuses[soname] = "driver"
        else:
            statuses[soname] = "unguaranteed"
    # candidates tried in turn (blosc2 names libtcc.so and libtcc.so.1, and ships libtcc.so): when one name
    # of the library is there for sure, the others are only what the loop tries before or after it
    found = {_stem(s) for s, st in statuses.items() if st in ("shipped", "allowed", "driver")}
    # a system library the file needs already (libGL.so.1, NEEDED): its other names (libGL.so) are what a loop
    # tries after it. So is a library of the wheel it needs, even renamed by a repair (libproj-bd876d1a.so.12,
    # beside the string libproj.so): a file linked to a library does not dlopen it (GDAL built with PROJ_STATIC
    # keeps the name for messages), and if it did, the loaded copy's symbols are already there
    found |= {_stem(s) for s in elf.needed
              if s in drivers or _allowed(ctx, s) or (elf.path, s) in ctx.resolution.provided}
    statuses = {s: "fallback" if st == "unguaranteed" and _stem(s) in found else st for s, st in statuses.items()}
    if "unguaranteed" in statuses.values() and not _may_load(ctx, elf):
        statuses = {s: "no-loader" if st == "unguaranteed" else st for s, st in statuses.items()}
    return statuses


def _imports_loader(elf: ElfInfo) -> bool:
    """Does ``elf`` import a function that loads a library by name (or has no dynamic symbols to tell)?"""
    if not elf.symtab.names:
        return True  # a static executable: glibc's static dlopen imports nothing
    return any(n in _LOADERS or n.startswith(_LOADER_PREFIXES) for n in elf.symtab.undefined_names())


def _may_load(ctx: CheckContext, elf: ElfInfo) -> bool:
    """Can code reach a loader from ``elf``: through its own imports or those of a library of the wheel it needs,
    directly or through others (a plugin name may be handed to the wheel's own loading helper)?"""
    needs: dict[str, list[str]] = {}
    for (needer, _soname), provider in ctx.resolution.provided.items():
        needs.setdefault(needer, []).append(provider)
    by_path = {e.path: e for e in ctx.model.elves}
    seen, todo = {elf.path}, [elf.path]
    while todo:
        path = todo.pop()
        if path in by_path and _imports_loader(by_path[path]):
            return True
        for provider in needs.get(path, ()):
            if provider not in seen:
                seen.add(provider)
                todo.append(provider)
    return False


def _unguaranteed(elf: ElfInfo, names: list[str], shipped_as: str | None) -> Finding:
    """dlopen-unguaranteed for the library named ``names`` (one or more names of it); ``shipped_as``: a file of the
    wheel with another name of that library."""
    soname = names[0]
    also = f" (or {', '.join(names[1:])})" if len(names) > 1 else ""
    cause = f"may load {soname}{also} at run time (named in its read-only data, not in NEEDED)"
    extra, fix = "", ("ship it in the wheel and load it by path ($ORIGIN), make the feature optional with a clear "
                      "error, or declare it in the policy (drivers / lib_whitelist) if the system guarantees it")
    if shipped_as is not None:
        name = shipped_as.rsplit("/", 1)[-1]
        # the name of the same version as the shipped file, when the file names it
        missed = next((n for n in names if _stem_and_major(n) == _stem_and_major(name)), soname)
        if unhashed(name) != name and _stem_and_major(name) == _stem_and_major(missed):
            # auditwheel's graft of it: libgmp.so.10 (libgmp.so.10.5.0) became libgmp-8c6c054f.so.10.5.0
            extra = (f"; the wheel ships it renamed to {name} (a repaired wheel's hashed name), which "
                     f"dlopen(\"{missed}\") will not find")
            fix = f"load {shipped_as} by path ($ORIGIN), or ship it under its own name {missed}"
        else:  # mysql-connector-python ships libkrb5.so.3 and dlopens libkrb5.so
            extra = (f"; the wheel ships {name}, the library under another version's name, which "
                     f"dlopen(\"{missed}\") will not find")
            fix = f"load the name the wheel ships ({name}, or {shipped_as} by path), or ship the library as {missed}"
    return Finding(
        "dlopen-unguaranteed", "warning", elf.path, cause + extra, fix, cause=cause, subject=soname,
        explanation="Neither the wheel nor the policy provides it, so it is there only if the user "
                    "installed it: everywhere else the feature that loads it fails, or is skipped where the "
                    "code treats the library as optional (profiler hooks, allocators, CPU-specific kernels).")
