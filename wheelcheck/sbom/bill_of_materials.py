"""What a bill of materials says about one wheel: its components and the evidence for each."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Evidence", "OsPackage", "ComponentLicense", "Component", "BillOfMaterials", "KINDS", "EVIDENCE"]

# vendored: a library file in the wheel; static: code linked into another file of the wheel
KINDS = ("vendored", "static")
# what a component's identity rests on, and which fields it supports
EVIDENCE = {"filename": ("name",), "symbols": ("name",), "string": ("name", "version"),
            "os-package": ("name", "version", "purl")}


@dataclass(frozen=True)
class Evidence:
    kind: str  # a key of EVIDENCE
    value: str  # the file name, a few of the symbols, the string, or the package manager's answer

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "value": self.value}


@dataclass(frozen=True)
class OsPackage:
    """The OS package that installed a grafted library on the repairing machine (dpkg, rpm or apk)."""

    type: str  # purl type: deb, rpm, apk
    distro: str | None  # /etc/os-release ID: debian, ubuntu, almalinux, alpine
    name: str
    version: str

    @property
    def purl(self) -> str:
        return _purl(self.type, self.name, self.version, namespace=self.distro)

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "distro": self.distro, "name": self.name, "version": self.version,
                "purl": self.purl}


@dataclass(frozen=True)
class ComponentLicense:
    """The license a grafted library travels under: what its package states, and the wheel member that holds
    the text a repair copied (from the package, or from --license-file)."""

    expression: str | None  # SPDX, where the package states one its ids cover; None otherwise
    file: str | None  # <dist>.dist-info/licenses/...; None when no text was found

    def to_dict(self) -> dict[str, str | None]:
        return {"expression": self.expression, "file": self.file}


@dataclass(frozen=True)
class Component:
    name: str  # the upstream project (openssl), a library stem when unknown (libXau), or a symbol family id
    version: str | None  # as the binary states it; None when it does not
    kind: str  # a member of KINDS
    file: str  # the wheel member it was found in
    title: str = ""  # for people: "OpenSSL", "libstdc++"
    sha256: str | None = None  # of the file, for a vendored library
    soname: str | None = None  # a vendored library's name before auditwheel's rename (libcrypto.so.3)
    upstream: str | None = None  # its id in data/components.json, when known
    cpe: str | None = None  # only with a stated version of a certain upstream
    evidence: tuple[Evidence, ...] = ()
    os_package: OsPackage | None = field(default=None)
    license: ComponentLicense | None = None  # for a library a wheelcheck repair grafted

    @property
    def purl(self) -> str:
        """The OS package's purl for a grafted library, else pkg:generic/<name>[@<version>]."""
        if self.os_package is not None:
            return self.os_package.purl
        return _purl("generic", self.name, self.version)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "kind": self.kind, "file": self.file,
                "title": self.title, "sha256": self.sha256, "soname": self.soname, "upstream": self.upstream,
                "purl": self.purl, "cpe": self.cpe, "evidence": [e.to_dict() for e in self.evidence],
                "os_package": self.os_package.to_dict() if self.os_package else None,
                "license": self.license.to_dict() if self.license else None}


@dataclass(frozen=True)
class BillOfMaterials:
    """One wheel and the third-party code in it."""

    filename: str
    name: str  # the distribution, as in the wheel's file name
    version: str
    components: tuple[Component, ...] = ()

    @property
    def purl(self) -> str:
        return _purl("pypi", self.name, self.version, qualifiers={"file_name": self.filename})


def _purl(type_: str, name: str, version: str | None, **parts) -> str:
    from packageurl import PackageURL  # imported by the commands that need a purl, not by every start-up

    return PackageURL(type=type_, name=name, version=version, **parts).to_string()
