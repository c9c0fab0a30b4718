"""The directories this host's dynamic loader searches, in ld.so's order (ld.so(8), ldconfig(8)).

For one object, glibc's ld.so tries: its DT_RPATH and its loaders' (unless it has DT_RUNPATH),
LD_LIBRARY_PATH, its DT_RUNPATH, the ld.so.cache (built from /etc/ld.so.conf and its includes), then the
trusted directories. The per-object parts (RPATH, RUNPATH) are added by ``locate``; this module gives the
rest. ``--lib-path`` comes first of all: the user named those directories for this repair.

auditwheel's habits are kept: ``$AUDITWHEEL_LD_LIBRARY_PATH`` is searched where LD_LIBRARY_PATH is, before it;
``--ldpaths A:B`` replaces ld.so.conf and the trusted directories, and then LD_LIBRARY_PATH is not read
(auditwheel's lddtree does the same), only ``$AUDITWHEEL_LD_LIBRARY_PATH``.

musl's loader reads /etc/ld-musl-ARCH.path instead of ld.so.conf, and falls back to /lib:/usr/local/lib:/usr/lib.

Every directory is absolute: a relative one given by the user (``--lib-path build/lib``) is taken against the
current directory once, here; an empty entry of the environment's lists, which the loader reads as the current
directory (usually by accident: ``$A:/opt/lib`` with ``A`` unset), is dropped, so what a repair copies into a
wheel never depends on where it was started.
"""

from __future__ import annotations

import glob
import os
import posixpath
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = ["SearchPath", "host_search_path", "parse_ld_so_conf", "split_search_list", "trusted_dirs"]

# the Debian/Ubuntu multiarch directory name and the lib64-style directory of each wheel architecture
_MULTIARCH = {
    "x86_64": ("x86_64-linux-gnu", "lib64"),
    "i686": ("i386-linux-gnu", "lib32"),
    "aarch64": ("aarch64-linux-gnu", "lib64"),
    "armv7l": ("arm-linux-gnueabihf", "lib32"),
    "ppc64le": ("powerpc64le-linux-gnu", "lib64"),
    "ppc64": ("powerpc64-linux-gnu", "lib64"),
    "s390x": ("s390x-linux-gnu", "lib64"),
    "riscv64": ("riscv64-linux-gnu", "lib64"),
    "loongarch64": ("loongarch64-linux-gnu", "lib64"),
}
_MUSL_ARCH = {"i686": "i386", "armv7l": "armhf"}


@dataclass(frozen=True)
class SearchPath:
    """The host directories for one repair, in the order they are tried around an object's own paths."""

    lib_path: tuple[str, ...] = ()  # --lib-path: before everything else
    env: tuple[str, ...] = ()  # $AUDITWHEEL_LD_LIBRARY_PATH, LD_LIBRARY_PATH: after the RPATHs, before the RUNPATH
    system: tuple[str, ...] = ()  # ld.so.conf (or musl's path file), then the trusted directories

    def describe(self) -> str:
        return ", ".join(self.lib_path + self.env + self.system) or "(none)"


def host_search_path(libc: str, arch: str, *, lib_path: Iterable[str] = (), environ: Mapping[str, str] = os.environ,
                     root: str = "/", ldpaths: Iterable[str] | None = None) -> SearchPath:
    """The search path of this host for a ``libc`` (glibc or musl) wheel of ``arch``.

    ``ldpaths`` (auditwheel's --ldpaths) replaces the system part. ``root`` prefixes every system file and
    directory (tests use a fake root); the environment's lists are taken as they are.
    """
    env = split_search_list(environ.get("AUDITWHEEL_LD_LIBRARY_PATH", ""))
    if ldpaths is not None:
        system = _existing(_absolute(ldpaths))
    else:
        if libc == "musl":
            conf = _musl_path_file(root, arch)
        else:
            conf = parse_ld_so_conf(_join(root, "/etc/ld.so.conf"), root=root)
        system = _existing(conf + trusted_dirs(libc, arch, root))
        env += split_search_list(environ.get("LD_LIBRARY_PATH", ""))
    env = _absolute(e for e in env if e != ".")
    return SearchPath(lib_path=tuple(_dedupe(_absolute(lib_path))), env=tuple(_dedupe(env)), system=tuple(system))


def split_search_list(text: str) -> list[str]:
    """LD_LIBRARY_PATH's entries: separated by ':' or ';'; an empty entry is the current directory."""
    if not text:
        return []
    return [entry or "." for entry in text.replace(";", ":").split(":")]


def parse_ld_so_conf(path: str, *, root: str = "/", _seen: set[str] | None = None) -> list[str]:
    """The directories an ld.so.conf names, following ``include`` globs (relative to the file's directory).

    ``hwcap`` lines and comments are skipped; a file included twice is read once.
    """
    seen = _seen if _seen is not None else set()
    real = os.path.realpath(path)
    if real in seen:
        return []
    seen.add(real)
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    out: list[str] = []
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith("hwcap "):
            continue
        if line.startswith("include") and line[7:8].isspace():
            for pattern in line[8:].split():
                pattern = _join(root, pattern) if pattern.startswith("/") else posixpath.join(
                    posixpath.dirname(path), pattern)
                for included in sorted(glob.glob(pattern)):
                    out.extend(parse_ld_so_conf(included, root=root, _seen=seen))
            continue
        directory = line.split("=", 1)[0].strip()  # old syntax: DIR=TYPE
        if directory.startswith("/"):
            out.append(_join(root, directory))
    return _dedupe(out)


def trusted_dirs(libc: str, arch: str, root: str = "/") -> list[str]:
    """The directories searched last: the multiarch and lib64/lib32 ones of ``arch``, then /lib, /usr/lib."""
    if libc == "musl":
        return [_join(root, d) for d in ("/lib", "/usr/local/lib", "/usr/lib")]
    triplet, wide = _MULTIARCH.get(arch, ("", "lib64"))
    dirs = []
    if triplet:
        dirs += [f"/lib/{triplet}", f"/usr/lib/{triplet}"]
    dirs += [f"/{wide}", f"/usr/{wide}", "/lib", "/usr/lib"]
    return [_join(root, d) for d in dirs]


def _musl_path_file(root: str, arch: str) -> list[str]:
    name = _join(root, f"/etc/ld-musl-{_MUSL_ARCH.get(arch, arch)}.path")
    try:
        with open(name, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return []
    return [_join(root, d) for d in text.replace("\n", ":").split(":") if d.strip().startswith("/")]


def _join(root: str, path: str) -> str:
    return posixpath.normpath(posixpath.join(root, path.lstrip("/"))) if root not in ("", "/") else posixpath.normpath(path)


def _absolute(dirs: Iterable[str]) -> list[str]:
    return [os.path.abspath(d) for d in dirs]


def _existing(dirs: list[str]) -> list[str]:
    return [d for d in _dedupe(dirs) if os.path.isdir(d)]


def _dedupe(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))
