"""The license of the OS package that installed a grafted library: the text that must travel with the library,
and the SPDX expression the package states where the SPDX list covers its names.

- dpkg: ``/usr/share/doc/<package>/copyright`` (Debian policy puts one in every package; the slim container
  images keep it), with its license read from the machine-readable format where the file uses it
  (debian_copyright.py); the files of ``/usr/share/common-licenses/`` it refers to (the GPL and LGPL texts it
  does not repeat) are appended.
- rpm: the package's ``%license`` files (installed even with ``tsflags=nodocs``) and its ``License`` tag.
- apk: its license field, and the files under ``/usr/share/licenses/`` that it or its ``-doc`` package installed.

A file is read only if the package manager lists it (dpkg is asked who owns the resolved path), only if it is
a regular file, and only up to MAX_LICENSE_SIZE bytes: a larger text is reported, not copied. Package managers
are asked as os_packages.py asks them: after ``--``, absolute paths or the names they printed themselves.
Several files of one package become one text, each under a ``==> PATH <==`` line.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from wheelcheck.sbom.bill_of_materials import OsPackage
from wheelcheck.sbom.debian_copyright import package_license
from wheelcheck.sbom.license_names import spdx_expression
from wheelcheck.sbom.os_packages import parse_dpkg_search, path_spellings, run_query

__all__ = ["PackageLicense", "package_licenses", "parse_rpm_licenses", "parse_apk_info", "joined_texts",
           "MAX_LICENSE_SIZE"]

MAX_LICENSE_SIZE = 4 << 20  # Debian's largest copyright files (Boost's) are about 2 MB
_PACKAGE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9+._-]*")  # what dpkg, rpm and apk allow, and no option
_COMMON_LICENSE = re.compile(r"/usr/share/common-licenses/([A-Za-z0-9][A-Za-z0-9.+-]*[A-Za-z0-9+])")
_RPM_FORMAT = "license\t%{LICENSE}\n[file\t%{FILEFLAGS:fflags}\t%{FILENAMES}\n]"
_APK_HEADER = re.compile(r"^\S+ (contains|license):$")


@dataclass(frozen=True)
class PackageLicense:
    package: OsPackage
    text: bytes | None  # what must travel with the library: one file, or several under ==> PATH <== lines
    expression: str | None  # SPDX, where the package states its license in names the SPDX list has
    read_from: tuple[str, ...] = ()  # the host files the text was read from
    problem: str | None = None  # why there is no text


def package_licenses(libraries: Mapping[str, OsPackage]) -> dict[str, PackageLicense]:
    """host path of a grafted library -> the license of the package that installed it (each package asked once)."""
    by_package: dict[OsPackage, list[str]] = {}
    for path, package in libraries.items():
        by_package.setdefault(package, []).append(path)
    found: dict[OsPackage, PackageLicense] = {}
    debs = [p for p in by_package if p.type == "deb"]
    found.update(_dpkg_licenses(debs))
    for package, paths in by_package.items():
        if package.type == "rpm":
            found[package] = _rpm_license(package, paths[0])
        elif package.type == "apk":
            found[package] = _apk_license(package)
    return {path: found[package] for package, paths in by_package.items() for path in paths}


# -- dpkg


def _dpkg_licenses(packages: list[OsPackage]) -> dict[OsPackage, PackageLicense]:
    dpkg = shutil.which("dpkg")
    named = [p for p in packages if _PACKAGE_NAME.fullmatch(p.name)]
    out = {p: PackageLicense(p, None, None, problem=f"{p.name!r} is not a package name") for p in packages
           if p not in named}
    if not named:
        return out
    # resolved: a package's doc directory may be a link to that of another package of its source
    # (libcc1-0 -> gcc-12-base), whose copyright file dpkg lists under that package's name
    copyrights = {p: os.path.realpath(f"/usr/share/doc/{p.name}/copyright") for p in named}
    listed = _dpkg_listed(dpkg, copyrights.values())
    texts: dict[OsPackage, tuple[bytes, str]] = {}
    for package, path in copyrights.items():
        if path not in listed:
            out[package] = PackageLicense(package, None, None, problem=f"dpkg lists no {path}")
            continue
        data, problem = _read_listed(path)
        if data is None:
            out[package] = PackageLicense(package, None, None, problem=problem)
        else:
            texts[package] = (data, path)
    # the texts of /usr/share/common-licenses a copyright file points to instead of repeating them
    wanted = {package: sorted(set(_COMMON_LICENSE.findall(data.decode("utf-8", "replace"))))
              for package, (data, _) in texts.items()}
    common = {name: os.path.realpath(f"/usr/share/common-licenses/{name}") for names in wanted.values()
              for name in names}
    common_listed = _dpkg_listed(dpkg, common.values())
    for package, (data, path) in texts.items():
        parts = [(path, data)]
        for common_path in sorted({common[name] for name in wanted[package]} & common_listed):  # GPL -> GPL-3
            extra, _ = _read_listed(common_path)
            if extra is not None:
                parts.append((common_path, extra))
        expression = spdx_expression(package_license(data.decode("utf-8", "replace")) or "")
        out[package] = _joined(package, parts, expression)
    return out


def _dpkg_listed(dpkg: str | None, paths: Iterable[str]) -> set[str]:
    """The absolute ``paths`` a package owns, asked of dpkg at once."""
    paths = sorted({p for p in paths if p.startswith("/")})
    if dpkg is None or not paths:
        return set()
    answer = run_query([dpkg, "-S", "--", *paths], any_status=True) or ""  # status 1: some path is no one's
    return {p for p in paths if parse_dpkg_search(answer, p)}


# -- rpm


def _rpm_license(package: OsPackage, library: str) -> PackageLicense:
    rpm = shutil.which("rpm")
    if rpm is None:
        return PackageLicense(package, None, None, problem="rpm is not installed")
    for spelling in path_spellings(library):
        answer = run_query([rpm, "-qf", "--queryformat", _RPM_FORMAT, "--", spelling])
        if answer:
            tag, files = parse_rpm_licenses(answer)
            return _from_files(package, files, spdx_expression(tag or ""), "rpm lists no %license file")
    return PackageLicense(package, None, None, problem="rpm names no package for it")


def parse_rpm_licenses(output: str) -> tuple[str | None, list[str]]:
    """The License tag and the ``%license`` files of the first package in ``rpm -qf --queryformat`` output
    (one ``license\\tTAG`` line, then a ``file\\tFLAGS\\tPATH`` line per file; flag ``l`` marks a license)."""
    tag, files = None, []
    for line in output.splitlines():
        kind, _, rest = line.partition("\t")
        if kind == "license":
            if tag is not None:
                break  # a second package (multilib) owns the file too
            tag = rest.strip()
        elif kind == "file" and tag is not None:
            flags, _, path = rest.partition("\t")
            if "l" in flags and path.startswith("/"):
                files.append(path)
    return tag, files


# -- apk


def _apk_license(package: OsPackage) -> PackageLicense:
    apk = shutil.which("apk")
    if apk is None:
        return PackageLicense(package, None, None, problem="apk is not installed")
    if not _PACKAGE_NAME.fullmatch(package.name):
        return PackageLicense(package, None, None, problem=f"{package.name!r} is not a package name")
    tag, _ = parse_apk_info(run_query([apk, "info", "--license", "--", package.name]) or "")
    files: list[str] = []
    for name in (package.name, f"{package.name}-doc"):
        _, contents = parse_apk_info(run_query([apk, "info", "--contents", "--", name]) or "")
        files += [f"/{path}" for path in contents if path.startswith("usr/share/licenses/")]
    return _from_files(package, files, spdx_expression(tag or ""), "apk lists no license file (its -doc package "
                                                                    "holds them, when installed)")


def parse_apk_info(output: str) -> tuple[str | None, list[str]]:
    """The license and the contents ``apk info --license`` / ``--contents`` print, each section under a
    ``<name>-<version> license:`` or ``contains:`` line."""
    license_lines: list[str] = []
    contents: list[str] = []
    section = None
    for line in output.splitlines():
        header = _APK_HEADER.match(line)
        if header:
            section = header.group(1)
        elif line.strip() and section == "license":
            license_lines.append(line.strip())
        elif line.strip() and section == "contains":
            contents.append(line.strip())
    return (" ".join(license_lines) or None), contents


# -- reading


def _from_files(package: OsPackage, files: list[str], expression: str | None, none: str) -> PackageLicense:
    parts, problems = [], []
    for path in sorted(set(files)):
        data, problem = _read_listed(path)
        if data is not None:
            parts.append((path, data))
        elif problem:
            problems.append(problem)
    if not parts:
        return PackageLicense(package, None, expression, problem="; ".join(problems) or none)
    return _joined(package, parts, expression)


def _joined(package: OsPackage, parts: list[tuple[str, bytes]], expression: str | None) -> PackageLicense:
    text = joined_texts(parts)
    if len(text) > MAX_LICENSE_SIZE:
        return PackageLicense(package, None, expression, problem=f"its license texts hold {len(text)} bytes, "
                                                                  f"over the {MAX_LICENSE_SIZE} copied")
    return PackageLicense(package, text, expression, tuple(p for p, _ in parts))


def joined_texts(parts: list[tuple[str, bytes]]) -> bytes:
    """One file: a lone text as it is; several, each under a ``==> PATH <==`` line, as ``head`` shows files."""
    if len(parts) == 1:
        return parts[0][1]
    out = []
    for path, data in parts:
        out.append(f"==> {path} <==\n".encode() + data + (b"" if data.endswith(b"\n") else b"\n"))
    return b"\n".join(out)


def _read_listed(path: str) -> tuple[bytes | None, str | None]:
    """The bytes of a regular file a package manager listed, up to MAX_LICENSE_SIZE; or None and why not."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError as exc:
        return None, f"cannot read {path} ({exc.strerror or exc})"
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return None, f"{path} is not a regular file"
        try:
            data = f.read(MAX_LICENSE_SIZE + 1)
        except OSError as exc:
            return None, f"cannot read {path} ({exc.strerror or exc})"
    if len(data) > MAX_LICENSE_SIZE:
        return None, f"{path} holds more than the {MAX_LICENSE_SIZE} bytes copied"
    return data, None
