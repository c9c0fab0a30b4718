"""The SBOM inside a wheel (PEP 770: ``<dist>.dist-info/sboms/``): what repair writes, and what a wheel
wheelcheck repaired already says about the OS packages its grafted libraries came from.

A repair that grafts a library writes ``wheelcheck.cdx.json``, listing every component of the repaired wheel.
Libraries it grafts are looked up in the host's package manager; libraries an earlier repair grafted keep the
OS package that repair's SBOM named, so repairing a repaired wheel gives back the same document, byte for byte.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from wheelcheck.audit.exposure import Exposure
from wheelcheck.sbom.bill_of_materials import BillOfMaterials, Component, Evidence, OsPackage
from wheelcheck.sbom.discover import bill_of_materials
from wheelcheck.wheel.wheel_model import WheelModel
from wheelcheck.wheel.wheel_reader import WheelReader

__all__ = ["SBOM_NAME", "MAX_SBOM_SIZE", "sbom_member", "embedded_os_packages", "with_os_packages",
           "wheel_bill_of_materials", "repaired_wheel_sbom"]

SBOM_NAME = "wheelcheck.cdx.json"
MAX_SBOM_SIZE = 16 << 20  # a larger document in a wheel is not one wheelcheck wrote: ignored


def sbom_member(dist_info: str) -> str:
    return f"{dist_info}/sboms/{SBOM_NAME}"


def embedded_os_packages(reader: WheelReader) -> dict[str, OsPackage]:
    """member -> OS package, as the wheel's own wheelcheck SBOM names them ({} without one)."""
    name = sbom_member(reader.dist_info)
    size = reader.file_sizes().get(name)
    if size is None or size > MAX_SBOM_SIZE:
        return {}
    from wheelcheck.sbom.cyclonedx_json import os_packages_in  # here: an audit of a wheel without an SBOM never needs it

    return os_packages_in(reader.read(name).decode("utf-8", "replace"))


def with_os_packages(components: tuple[Component, ...], packages: Mapping[str, OsPackage]) -> tuple[Component, ...]:
    """The vendored components whose file an OS package provided, with that package and its evidence."""
    out = []
    for c in components:
        package = packages.get(c.file) if c.kind == "vendored" else None
        if package is not None:
            c = replace(c, os_package=package,
                        evidence=c.evidence + (Evidence("os-package", f"{package.type} package {package.name} "
                                                                      f"{package.version}"),))
        out.append(c)
    return tuple(out)


def wheel_bill_of_materials(model: WheelModel, path: str | Path,
                            exposures: Mapping[str, Exposure] | None = None) -> BillOfMaterials:
    """The components of ``model`` (the wheel at ``path``), with the OS packages its own SBOM names (the
    wheel is opened again only when it carries one). ``exposures``: the files' exposures an audit made."""
    bom = bill_of_materials(model, exposures)
    if not any(m.endswith(f".dist-info/sboms/{SBOM_NAME}") and m.count("/") == 2 for m in model.members):
        return bom
    with WheelReader(path) as reader:
        packages = embedded_os_packages(reader)
    return replace(bom, components=with_os_packages(bom.components, packages))


def repaired_wheel_sbom(model: WheelModel, grafted: Mapping[str, str], reader: WheelReader,
                        environ: Mapping[str, str] = os.environ) -> bytes | None:
    """The CycloneDX document the repaired wheel ``model`` carries, or None when it has no component.

    ``grafted``: member -> the host path it was copied from, for this repair's grafts (asked of dpkg, rpm
    or apk); ``reader`` reads the input wheel, whose own SBOM names earlier grafts' packages."""
    from wheelcheck.sbom.cyclonedx_json import cyclonedx_json  # only repair writes an SBOM
    from wheelcheck.sbom.os_packages import os_packages_of

    packages = embedded_os_packages(reader)
    owners = os_packages_of(grafted.values())
    for member, host_path in grafted.items():
        found = owners[host_path]
        if found is not None:
            packages[member] = found
        else:
            packages.pop(member, None)
    bom = bill_of_materials(model)
    if not bom.components:
        return None
    bom = replace(bom, components=with_os_packages(bom.components, packages))
    return cyclonedx_json([bom], environ).encode("utf-8")
