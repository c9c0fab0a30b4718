"""Grafted libraries built to load plugins from a directory of the build host: what vendoring them cannot carry.

graphviz's libgvc has ``/usr/lib/x86_64-linux-gnu/graphviz`` compiled in, and loads its layout and render plugins
from there; libvips loads ``vips-modules-8.14`` under its compiled-in libdir, GLib's gio ``gio/modules``,
ImageMagick its coders, OpenSSL its engines and providers. Vendored, the library still looks in that directory,
now on the user's machine: where the system has no such package the plugins are missing (pygraphviz: no layout
plugin), and where it has one, its plugins need the system's copy of the library by name and load it beside the
vendored one (pygraphviz and pyvips built against Debian's libraries and repaired: a segfault with graphviz, a
hang with libvips). Neither tool can fix that by rewriting names.

Told from the grafted file and the host alone: an absolute path that is a whole string of the library's read-only
data, naming a directory (or a subdirectory of one named like the library: ``vips-modules-8.14`` under libvips'
libdir) that holds shared objects needing a library this repair grafts. The directories the loader searches by
default hold libraries, not plugins (``libvips-cpp.so.42`` needs ``libvips.so.42`` too), and are left out.
"""

from __future__ import annotations

import os
import posixpath
import re
import struct
from collections.abc import Iterable
from dataclasses import dataclass

from wheelcheck.audit.findings import Finding
from wheelcheck.elf.elf_summary import summarize_file
from wheelcheck.elf.rodata_strings import path_strings_of_file
from wheelcheck.errors import BadElfError, ElfFormatError

__all__ = ["HostPlugins", "host_plugins", "host_plugin_findings"]

_MAX_ENTRIES = 1024  # plugin directories hold tens of entries (ImageMagick's coders some 400), a library directory
# thousands: one holding more is not read
_MAX_PLUGIN_BYTES = 64 << 20  # a larger file is no plugin anyone loads by the dozen: not read
# pseudo file systems, and the scratch directories themselves: no package's plugins live there
_PSEUDO = ("/proc", "/sys", "/dev", "/run")
_SCRATCH = ("/tmp", "/var/tmp")
_LEAD = re.compile(r"[a-z]{3,}")


@dataclass(frozen=True)
class HostPlugins:
    member: str  # the grafted library, as the repaired wheel holds it
    soname: str  # its name before the repair
    directory: str  # where it loads plugins from, on the build host
    plugins: tuple[str, ...]  # the files there that need a grafted library, by name, sorted
    needs: tuple[str, ...]  # the grafted libraries they need


def host_plugins(grafts: Iterable[tuple[str, tuple[str, ...], str]], default_dirs: Iterable[str]) -> list[HostPlugins]:
    """For each graft (source path on this host, the names the wheel needs it by, its member in the repaired
    wheel): the directories of this host it was built to load plugins from, whose plugins need a library this
    repair grafts. ``default_dirs``: the directories the loader searches (the system's, --lib-path), whose files
    are libraries, not plugins."""
    grafts = list(grafts)
    grafted = {name for _source, names, _member in grafts for name in names}
    skipped = {os.path.realpath(d) for d in default_dirs}
    found: list[HostPlugins] = []
    for source, names, member in grafts:
        for directory in _plugin_directories(source, names[0], skipped):
            plugins, needs = _needing(directory, grafted)
            if plugins:
                found.append(HostPlugins(member, names[0], directory, plugins, needs))
    return found


def host_plugin_findings(found: Iterable[HostPlugins]) -> list[Finding]:
    """The ``graft-host-plugins`` warnings of a repair."""
    out = []
    for each in found:
        shown = ", ".join(each.plugins[:3]) + (f" and {len(each.plugins) - 3} more" if len(each.plugins) > 3 else "")
        loaded = each.soname if each.soname in each.needs else each.needs[0]
        out.append(Finding(
            "graft-host-plugins", "warning", each.member,
            f"{each.soname} loads plugins from {each.directory}, a directory of the build host compiled into it "
            f"({shown} there {'needs' if len(each.plugins) == 1 else 'need'} {', '.join(each.needs)}): elsewhere it "
            f"is missing, or holds another build whose plugins load the system's {loaded} beside the vendored copy",
            f"ship the plugins in the wheel and point the library at them at run time (its plugin-path variable or "
            f"call), or leave the library to the system: --exclude '{each.soname}' and require its package",
            cause=f"loads plugins from {each.directory}", subject=each.directory))
    return out


def _plugin_directories(source: str, soname: str, skipped: set[str]) -> list[str]:
    """The directories ``source`` names in its read-only data, and their subdirectories named like the library
    (libvips: ``vips-modules-8.14``), that exist here; not those of ``skipped`` or the library's own."""
    try:
        paths = path_strings_of_file(source)
    except (OSError, ElfFormatError, BadElfError, struct.error):
        return []
    own = os.path.realpath(posixpath.dirname(source))
    lead = _LEAD.match(soname.lower().removeprefix("lib"))
    out: dict[str, None] = {}
    for raw in sorted(paths):
        path = posixpath.normpath(raw)
        if path in _PSEUDO + _SCRATCH or path.startswith(tuple(p + "/" for p in _PSEUDO)) or not os.path.isdir(path):
            continue
        real = os.path.realpath(path)
        if real not in skipped and real != own:
            out.setdefault(path, None)
        if lead is not None:
            for sub in _subdirectories(path, lead.group()):
                out.setdefault(sub, None)
    return list(out)


def _subdirectories(directory: str, prefix: str) -> list[str]:
    """The subdirectories of ``directory`` whose names start with ``prefix`` (any case), sorted: every entry is
    looked at (a library directory holds thousands), but only those few are examined."""
    try:
        with os.scandir(directory) as entries:
            return sorted(entry.path for entry in entries
                          if entry.name.lower().startswith(prefix) and entry.is_dir())
    except OSError:
        return []


def _needing(directory: str, grafted: set[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the shared objects of ``directory`` that need a library of ``grafted``, those libraries), each sorted.
    Regular files only: a link there is a library's development name, not a plugin."""
    plugins, needs = [], set()
    for name in _listing(directory):
        path = posixpath.join(directory, name)
        if ".so" not in name or os.path.islink(path) or not os.path.isfile(path):
            continue
        try:
            if os.path.getsize(path) > _MAX_PLUGIN_BYTES:
                continue
            needed = set(summarize_file(path).needed) & grafted
        except (OSError, BadElfError):
            continue
        if needed:
            plugins.append(name)
            needs |= needed
    return tuple(sorted(plugins)), tuple(sorted(needs))


def _listing(directory: str) -> list[str]:
    """The names in ``directory``, sorted; [] when it cannot be read or holds more than ``_MAX_ENTRIES``."""
    try:
        with os.scandir(directory) as entries:
            names = []
            for entry in entries:
                names.append(entry.name)
                if len(names) > _MAX_ENTRIES:
                    return []
            return sorted(names)
    except OSError:
        return []
