"""The SBOM inside a wheel (PEP 770: ``<dist>.dist-info/sboms/``): what repair writes, and what a wheel
wheelcheck repaired already says about the OS packages its grafted libraries came from.

A repair that grafts a library writes ``wheelcheck.cdx.json``, listing every component of the repaired wheel.
Libraries it grafts are looked up in the host's package manager; libraries an earlier repair grafted keep the
OS package and the license that repair's SBOM named, so repairing a repaired wheel gives back the same
document, byte for byte.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from wheelcheck.audit.exposure import Exposure
from wheelcheck.sbom.bill_of_materials import BillOfMaterials, Component, ComponentLicense, Evidence, OsPackage
from wheelcheck.sbom.discover import bill_of_materials
from wheelcheck.wheel.license_notices import MAX_SBOM_SIZE, SBOM_NAME
from wheelcheck.wheel.wheel_model import WheelModel
from wheelcheck.wheel.wheel_reader import WheelReader

__all__ = ["SBOM_NAME", "MAX_SBOM_SIZE", "sbom_member", "embedded_os_packages", "embedded_licenses",
           "with_os_packages", "with_licenses", "wheel_bill_of_materials", "repaired_wheel_sbom"]


def sbom_member(dist_info: str) -> str:
    return f"{dist_info}/sboms/{SBOM_NAME}"


def embedded_os_packages(reader: WheelReader) -> dict[str, OsPackage]:
    """member -> OS package, as the wheel's own wheelcheck SBOM names them ({} without one)."""
    text = _embedded_sbom(reader)
    if text is None:
        return {}
    from wheelcheck.sbom.cyclonedx_json import os_packages_in  # here: an audit of a wheel without an SBOM never needs it

    return os_packages_in(text)


def embedded_licenses(reader: WheelReader) -> dict[str, ComponentLicense]:
    """member -> license, as the wheel's own wheelcheck SBOM gives them ({} without one)."""
    text = _embedded_sbom(reader)
    if text is None:
        return {}
    from wheelcheck.sbom.cyclonedx_json import licenses_in

    return licenses_in(text)


def _embedded_sbom(reader: WheelReader) -> str | None:
    name = sbom_member(reader.dist_info)
    size = reader.file_sizes().get(name)
    if size is None or size > MAX_SBOM_SIZE:
        return None
    return reader.read(name).decode("utf-8", "replace")


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


def with_licenses(components: tuple[Component, ...],
                  licenses: Mapping[str, ComponentLicense]) -> tuple[Component, ...]:
    """The vendored components a repair gave a license, with it."""
    return tuple(replace(c, license=licenses[c.file]) if c.kind == "vendored" and c.file in licenses else c
                 for c in components)


def wheel_bill_of_materials(model: WheelModel, path: str | Path,
                            exposures: Mapping[str, Exposure] | None = None) -> BillOfMaterials:
    """The components of ``model`` (the wheel at ``path``), with the OS packages its own SBOM names (the
    wheel is opened again only when it carries one). ``exposures``: the files' exposures an audit made."""
    bom = bill_of_materials(model, exposures)
    if not any(m.endswith(f".dist-info/sboms/{SBOM_NAME}") and m.count("/") == 2 for m in model.members):
        return bom
    with WheelReader(path) as reader:
        text = _embedded_sbom(reader)
    if text is None:
        return bom
    from wheelcheck.sbom.cyclonedx_json import licenses_in, os_packages_in

    packages, licenses = os_packages_in(text), licenses_in(text)
    return replace(bom, components=with_licenses(with_os_packages(bom.components, packages), licenses))


def repaired_wheel_sbom(model: WheelModel, grafted: Mapping[str, str], reader: WheelReader,
                        environ: Mapping[str, str] = os.environ,
                        licenses: Mapping[str, ComponentLicense] | None = None) -> bytes | None:
    """The CycloneDX document the repaired wheel ``model`` carries, or None when it has no component.

    ``grafted``: member -> the host path it was copied from, for this repair's grafts (asked of dpkg, rpm
    or apk); ``reader`` reads the input wheel, whose own SBOM names earlier grafts' packages; ``licenses``:
    member -> the license the repair gave each grafted library, this repair's and earlier ones'."""
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
    bom = replace(bom, components=with_licenses(with_os_packages(bom.components, packages), licenses or {}))
    return cyclonedx_json([bom], environ).encode("utf-8")
