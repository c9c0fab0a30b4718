"""Which OS package installed a file on this machine: dpkg, rpm or apk, asked the way auditwheel 6.8.2 asks
(its vendored ``whichprovides``), for the libraries a repair grafts.

Two differences, both so that a lookup answers where auditwheel's misses:

- On a merged-/usr system (Debian 12, Ubuntu 24.04, Fedora) the loader finds ``/usr/lib/x86_64-linux-gnu/
  libz.so.1`` while dpkg registered ``/lib/x86_64-linux-gnu/libz.so.1.2.13``: each path is asked as found,
  resolved, and under its other /usr spelling.
- apk package names may hold dashes (``zlib-dev-1.3.1-r0``): the version is split off at the last
  ``-<digit>...-r<N>``, not at the first dash.

Only this module and package_licenses.py read the host's package databases; each answer here is cached per
process (``lookup_cache_clear``). A query names absolute paths, or package names the package manager printed
itself, and each after ``--``: a path is never read as an option (rpm's ``--pipe=CMD`` runs a shell command).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

from wheelcheck.sbom.bill_of_materials import OsPackage

__all__ = ["os_package_of", "os_packages_of", "os_release_id", "lookup_cache_clear", "parse_dpkg_search", "parse_rpm_query",
           "parse_apk_owner", "path_spellings", "run_query"]

_TIMEOUT = 60  # seconds for one package-manager query
_MERGED = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
_OS_RELEASE = re.compile(r'^([A-Z_]+)=(?:"([^"]*)"|(.*))$', re.MULTILINE)
_FIELD = re.compile(r"^(Package|Architecture|Version): (\S+)", re.MULTILINE)
_APK_OWNER = re.compile(r" is owned by (\S+?)-(\d[^\s-]*-r\d+)\s*$", re.MULTILINE)


def os_package_of(path: str) -> OsPackage | None:
    """The package that installed ``path`` on this machine, or None (no package manager owns it)."""
    return _lookup(path, os_release_id())


def os_packages_of(paths: Iterable[str]) -> dict[str, OsPackage | None]:
    """``os_package_of`` for each of ``paths``, with dpkg asked once for all of them: one ``dpkg -S`` for every
    spelling and one ``dpkg -s`` for every package, not two processes per spelling (pycurl's 28 grafts made 82
    runs, 5.7 s of an 8 s repair)."""
    paths = list(dict.fromkeys(paths))
    distro = os_release_id()
    if distro is not None:
        _ask_dpkg_at_once([s for p in paths if p.startswith("/") for s in path_spellings(p)], distro)
    return {p: _lookup(p, distro) for p in paths}


@functools.lru_cache(maxsize=None)
def _lookup(path: str, distro: str | None) -> OsPackage | None:
    if distro is None or not path.startswith("/"):  # auditwheel names no package without a distribution to
        return None  # put in the purl
    for ask in (_dpkg, _rpm, _apk):
        for spelling in path_spellings(path):
            found = ask(spelling, distro)
            if found is not None:
                return found
    return None


def lookup_cache_clear() -> None:
    _lookup.cache_clear()
    _DPKG_ANSWERS.clear()
    os_release_id.cache_clear()


@functools.lru_cache(maxsize=1)
def os_release_id(os_release: str = "/etc/os-release") -> str | None:
    """The ID of /etc/os-release (debian, ubuntu, almalinux, alpine), as auditwheel reads it."""
    try:
        text = Path(os_release).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for key, quoted, plain in _OS_RELEASE.findall(text):
        if key == "ID":
            return quoted or plain or None
    return None


def path_spellings(path: str) -> list[str]:
    """``path``, its resolved form, and each under its other merged-/usr spelling (/usr/lib/x <-> /lib/x)."""
    out: list[str] = []
    for p in (path, os.path.realpath(path)):
        for candidate in (p, _other_spelling(p)):
            if candidate and candidate not in out:
                out.append(candidate)
    return out


def _other_spelling(path: str) -> str | None:
    for top in _MERGED:
        if path.startswith(f"/usr/{top}/"):
            return path[len("/usr"):]
        if path.startswith(f"/{top}/"):
            return "/usr" + path
    return None


def run_query(argv: list[str], any_status: bool = False) -> str | None:
    """The command's output, or None when it fails (unless ``any_status``), is missing or hangs."""
    try:
        done = subprocess.run(argv, capture_output=True, timeout=_TIMEOUT, env={**os.environ, "LC_ALL": "C"})
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.decode("utf-8", "replace") if done.returncode == 0 or any_status else None


# spelling -> what dpkg answered for it, from _ask_dpkg_at_once (None: no package owns it, or no dpkg to ask)
_DPKG_ANSWERS: dict[str, OsPackage | None] = {}


def _ask_dpkg_at_once(spellings: list[str], distro: str) -> None:
    """Record dpkg's answer for each spelling not asked yet: one ``dpkg -S`` for all, one ``dpkg -s`` for the
    packages it names."""
    spellings = [s for s in dict.fromkeys(spellings) if s not in _DPKG_ANSWERS]
    if not spellings:
        return
    dpkg = shutil.which("dpkg")
    searched = run_query([dpkg, "-S", "--", *spellings], any_status=True) if dpkg else None  # status 1: some path is no one's
    owners = {s: parse_dpkg_search(searched or "", s) for s in spellings}
    wanted = sorted({p for p in owners.values() if p})
    versions = _dpkg_versions(dpkg, wanted) if dpkg and wanted else {}
    for spelling, package in owners.items():
        version = versions.get(package) if package else None
        _DPKG_ANSWERS[spelling] = OsPackage("deb", distro, package.split(":", 1)[0], version) \
            if package and version else None


def _dpkg_versions(dpkg: str, packages: list[str]) -> dict[str, str]:
    """Package (plain and arch-qualified, as dpkg -S names it) -> installed version, from one ``dpkg -s``."""
    versions: dict[str, str] = {}
    for paragraph in (run_query([dpkg, "-s", "--", *packages], any_status=True) or "").split("\n\n"):
        fields = dict(_FIELD.findall(paragraph))
        if "Package" in fields and "Version" in fields:
            versions[fields["Package"]] = fields["Version"]
            versions[f"{fields['Package']}:{fields.get('Architecture', '')}"] = fields["Version"]
    return versions


def _dpkg(path: str, distro: str) -> OsPackage | None:
    _ask_dpkg_at_once([path], distro)  # nothing to do when os_packages_of asked already
    return _DPKG_ANSWERS[path]


def parse_dpkg_search(output: str, path: str) -> str | None:
    """The (arch-qualified) package of ``dpkg -S PATH`` output: ``zlib1g:amd64: /lib/.../libz.so.1.2.13``.

    Lines about diversions are skipped; a file shared by several packages names the first."""
    for line in output.splitlines():
        packages, sep, listed = line.rpartition(": ")
        if sep and listed.strip() == path and not line.startswith(("diversion by", "local diversion")):
            return packages.split(",", 1)[0].strip() or None
    return None


def _rpm(path: str, distro: str) -> OsPackage | None:
    rpm = shutil.which("rpm")
    if rpm is None:
        return None
    return parse_rpm_query(run_query([rpm, "-qf", "--queryformat", "%{NAME} %{VERSION} %{RELEASE} %{ARCH}", "--", path]) or "",
                           distro)


def parse_rpm_query(output: str, distro: str) -> OsPackage | None:
    """``rpm -qf --queryformat "%{NAME} %{VERSION} %{RELEASE} %{ARCH}"``: ``zlib 1.2.11 40.el9 x86_64``."""
    fields = output.strip().split(" ")
    if len(fields) < 3 or not all(fields[:3]):
        return None
    return OsPackage("rpm", distro, fields[0], f"{fields[1]}-{fields[2]}")


def _apk(path: str, distro: str) -> OsPackage | None:
    apk = shutil.which("apk")
    if apk is None:
        return None
    return parse_apk_owner(run_query([apk, "info", "--who-owns", "--", path]) or "", distro)


def parse_apk_owner(output: str, distro: str) -> OsPackage | None:
    """``apk info --who-owns PATH``: ``/lib/libz.so.1.3.1 is owned by zlib-1.3.1-r2``."""
    match = _APK_OWNER.search(output)
    return OsPackage("apk", distro, match.group(1), match.group(2)) if match else None
