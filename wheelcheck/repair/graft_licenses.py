"""The licenses of the libraries a repair grafts: one text per OS package in ``.dist-info/licenses/``, declared
in METADATA (PEP 639), and each library's license for the SBOM and the report.

Each grafted library's license comes from, in this order: ``--license-file LIB=FILE`` (LIB a soname it was
needed by, or its file name on this machine); for a library an earlier repair grafted, what that repair's
SBOM says (its text is in the wheel already); else the OS package that installed it (package_licenses.py).
A library from ``--lib-path`` that no package owns has none, and the report says so.

Texts live under ``<dist>.dist-info/licenses/<dist>.libs/``, beside nothing of the project's own: a package's
as ``deb-<name>.txt``, ``rpm-<name>.txt`` or ``apk-<name>.txt``, a given file as ``<soname>.txt``. A name taken
by other bytes gets the first 8 hex digits of the text's sha256 added. The same input gives the same names and
bytes, and a repaired wheel repaired again gets none new.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from wheelcheck.errors import BadWheelError, UsageError
from wheelcheck.repair.graft_plan import Graft
from wheelcheck.sbom.bill_of_materials import ComponentLicense, OsPackage
from wheelcheck.sbom.package_licenses import MAX_LICENSE_SIZE, PackageLicense, package_licenses
from wheelcheck.wheel.metadata_license_files import with_license_files
from wheelcheck.wheel.wheel_reader import WheelReader

__all__ = ["GraftLicense", "Licensing", "plan_licenses", "read_license_file"]

_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]")
_ONE_LINE = re.compile(r"[^\x00-\x1f\x7f]+")  # a path METADATA can hold on one header line


@dataclass(frozen=True)
class GraftLicense:
    member: str  # the grafted library
    file: str | None  # the member that holds its license text
    expression: str | None  # SPDX, as its package states it
    origin: str  # where the text came from, for people
    problem: str | None = None  # why it has no text

    @property
    def component_license(self) -> ComponentLicense | None:
        return ComponentLicense(self.expression, self.file) if self.file or self.expression else None


@dataclass(frozen=True)
class Licensing:
    licenses: tuple[GraftLicense, ...] = ()
    files: Mapping[str, bytes] = field(default_factory=dict)  # new members: the texts, and earlier files moved
    metadata: bytes | None = None  # the new METADATA; None when it is unchanged
    raised_from: str | None = None  # the Metadata-Version raised to 2.4


def read_license_file(path: str | Path) -> bytes:
    """The bytes of a --license-file, or a UsageError naming it: missing, not a regular file, or too large."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_LICENSE_SIZE + 1)
    except OSError as exc:
        raise UsageError(str(path), f"cannot read the license file ({exc.strerror or exc})") from None
    if len(data) > MAX_LICENSE_SIZE:
        raise UsageError(str(path), f"holds more than {MAX_LICENSE_SIZE} bytes: not a license text")
    return data


def plan_licenses(reader: WheelReader, grafts: Sequence[Graft], libs_dir: str,
                  owners: Mapping[str, OsPackage | None], given: Sequence[tuple[str, str]] = (),
                  earlier: Mapping[str, ComponentLicense] | None = None) -> Licensing:
    """The license files, METADATA and per-library licenses for ``grafts``.

    ``owners``: host path -> the OS package that installed it, for this repair's grafts; ``given``: (LIB, FILE)
    of --license-file; ``earlier``: member -> license, as the input's wheelcheck SBOM says."""
    if not grafts:
        return Licensing()
    dist_info, sizes = reader.dist_info, reader.file_sizes()
    folder = f"{dist_info}/licenses/{libs_dir}"
    asked = {g.source: owners.get(g.source) for g in grafts if not g.in_wheel and _given(g, given) is None}
    found = package_licenses({path: package for path, package in asked.items() if package is not None})
    texts: dict[str, bytes] = {}  # new member -> text
    out = []
    for graft in sorted(grafts, key=lambda g: g.member):
        chosen = _given(graft, given)
        previous = (earlier or {}).get(graft.member)
        if chosen is not None:
            data = read_license_file(chosen)
            name = _free_name(folder, f"{_safe(sorted(graft.needed_as)[0])}.txt", data, reader, sizes, texts)
            texts[name] = data
            out.append(GraftLicense(graft.member, name, None, f"{chosen} (--license-file)"))
        elif graft.in_wheel:
            text = previous.file if previous is not None else None  # the wheel's SBOM says so: checked
            expression = previous.expression if previous is not None else None
            if text in sizes and _declarable(text, dist_info):
                out.append(GraftLicense(graft.member, text, expression, "an earlier repair"))
            else:
                out.append(GraftLicense(graft.member, None, expression, "an earlier repair" if expression else "",
                                        "already in the wheel, and its SBOM names no license text for it: give one "
                                        f"with --license-file {sorted(graft.needed_as)[0]}=FILE"))
        else:
            out.append(_from_package(graft, owners.get(graft.source), found.get(graft.source), folder, reader,
                                     sizes, texts))
    declared = sorted({g.file[len(f"{dist_info}/licenses/"):] for g in out if g.file})
    metadata_name = f"{dist_info}/METADATA"
    before = reader.read_text(metadata_name) if metadata_name in sizes else None
    if before is None or not declared:
        return Licensing(tuple(out), texts)
    lines = with_license_files(before, declared)
    moved = _moved(reader, dist_info, lines.earlier, sizes)
    new_text = lines.text.encode("utf-8") if lines.text != before else None
    return Licensing(tuple(out), {**texts, **moved}, new_text, lines.raised_from)


def _from_package(graft: Graft, package: OsPackage | None, license: PackageLicense | None, folder: str,
                  reader: WheelReader, sizes: Mapping[str, int], texts: dict[str, bytes]) -> GraftLicense:
    if package is None:
        return GraftLicense(graft.member, None, None, "", "no package of this machine installed it; give its "
                                                            f"license with --license-file {sorted(graft.needed_as)[0]}"
                                                            "=FILE")
    what = f"{package.type} package {package.name} {package.version}"
    if license is None or license.text is None:
        problem = license.problem if license is not None else "no license found"
        return GraftLicense(graft.member, None, license.expression if license else None, what, problem)
    name = _free_name(folder, f"{package.type}-{_safe(package.name)}.txt", license.text, reader, sizes, texts)
    texts[name] = license.text
    return GraftLicense(graft.member, name, license.expression, f"{what} ({', '.join(license.read_from)})")


def _declarable(member: str | None, dist_info: str) -> bool:
    """Is ``member`` a license file METADATA may declare: under licenses/, a name on one line?"""
    return member is not None and member.startswith(f"{dist_info}/licenses/") and bool(_ONE_LINE.fullmatch(member))


def _given(graft: Graft, given: Sequence[tuple[str, str]]) -> str | None:
    names = {*graft.needed_as, posixpath.basename(graft.source), posixpath.basename(graft.realpath)}
    return next((file for lib, file in given if lib in names), None)


def _safe(name: str) -> str:
    safe = _UNSAFE.sub("_", name)
    return safe if not safe.startswith(".") else f"_{safe}"


def _free_name(folder: str, name: str, data: bytes, reader: WheelReader, sizes: Mapping[str, int],
               texts: Mapping[str, bytes]) -> str:
    """``folder/name``, unless the wheel or this repair holds other bytes there: then with the text's hash."""
    member = f"{folder}/{name}"
    taken = texts.get(member)
    if taken is None and member in sizes:
        taken = bytes(reader.read(member)) if sizes[member] == len(data) else b"\0other"
    if taken is None or taken == data:
        return member
    stem, dot, ext = name.rpartition(".")
    return f"{folder}/{stem}-{hashlib.sha256(data).hexdigest()[:8]}{dot}{ext}"


def _moved(reader: WheelReader, dist_info: str, earlier: Sequence[str], sizes: Mapping[str, int]) -> dict[str, bytes]:
    """The project's license files an older METADATA declared at the top of .dist-info, copied to where
    Metadata-Version 2.4 reads them (under licenses/), unless already there."""
    out = {}
    for path in earlier:
        parts = path.split("/")
        if not path or path.startswith("/") or "\\" in path or "\0" in path or any(p in ("", ".", "..") for p in parts):
            continue  # the wheel's METADATA: only a plain relative path names a member
        target, legacy = f"{dist_info}/licenses/{path}", f"{dist_info}/{path}"
        if target not in sizes and legacy in sizes:
            if sizes[legacy] > MAX_LICENSE_SIZE:
                raise BadWheelError(legacy, f"is declared a license file (License-File) but holds {sizes[legacy]} "
                                            f"bytes, more than the {MAX_LICENSE_SIZE} of a license text")
            out[target] = bytes(reader.read(legacy))
    return out
