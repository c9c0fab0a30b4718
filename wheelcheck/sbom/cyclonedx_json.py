"""CycloneDX 1.6 JSON for bills of materials, written with cyclonedx-python-lib; and the OS packages read
back from a document wheelcheck wrote (so a second repair keeps what the first learnt from dpkg).

Here rather than in report/ because repair writes it into wheels (PEP 770, ``.dist-info/sboms/``).
The output is reproducible: the serial number is a UUID derived from the content (cyclonedx-python-lib
would draw a random one) and the time is written only when ``SOURCE_DATE_EPOCH`` gives it (the library
would stamp the clock). Everything else is ordered by the library.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from decimal import Decimal

from wheelcheck._version import __version__
from wheelcheck.errors import UsageError
from wheelcheck.sbom.bill_of_materials import EVIDENCE, BillOfMaterials, Component, ComponentLicense, OsPackage
from wheelcheck.wheel.license_notices import FILE_PROPERTY, LICENSE_FILE_PROPERTY

__all__ = ["cyclonedx_json", "os_packages_in", "licenses_in", "source_date"]

# How sure each kind of evidence makes us of the field it supports (CycloneDX wants a number per method):
# the package manager owns the file; a library states its own version (a distribution may patch it); a
# symbol family names the code but not which fork (OpenSSL or BoringSSL); a file name is a claim.
_CONFIDENCE = {"os-package": Decimal("1"), "string": Decimal("0.9"), "symbols": Decimal("0.7"),
               "filename": Decimal("0.6")}
_TECHNIQUE = {"os-package": "manifest-analysis", "string": "binary-analysis", "symbols": "binary-analysis",
              "filename": "filename"}
_NAMESPACE = uuid.UUID("6f1c6e0a-3d5e-5b7e-9a59-77686565636b")  # uuid5 namespace of wheelcheck's serial numbers


def source_date(environ: Mapping[str, str] = os.environ) -> datetime | None:
    """SOURCE_DATE_EPOCH as a UTC time, or None when it is not set."""
    raw = environ.get("SOURCE_DATE_EPOCH", "").strip()
    if not raw:
        return None
    try:
        return datetime.fromtimestamp(int(raw), tz=timezone.utc)
    except (ValueError, OverflowError, OSError):
        raise UsageError("SOURCE_DATE_EPOCH", f"{raw!r} is not a number of seconds since 1970") from None


def cyclonedx_json(boms: Sequence[BillOfMaterials], environ: Mapping[str, str] = os.environ) -> str:
    """One CycloneDX 1.6 document for ``boms``: one wheel is the document's subject (metadata.component);
    several are each a top-level component. Every component depends-on edge leads from its wheel."""
    from cyclonedx.model.bom import Bom
    from cyclonedx.model.component import Component as CdxComponent, ComponentType
    from cyclonedx.output.json import JsonV1Dot6
    from packageurl import PackageURL

    content = json.dumps([_canonical(b) for b in boms], sort_keys=True).encode("utf-8")
    bom = Bom(serial_number=uuid.uuid5(_NAMESPACE, hashlib.sha256(content).hexdigest()))
    when = source_date(environ)
    if when is not None:
        bom.metadata.timestamp = when
    bom.metadata.tools.components.add(CdxComponent(name="wheelcheck", version=__version__,
                                                   type=ComponentType.APPLICATION))
    for wheel in boms:
        root = CdxComponent(name=wheel.name, version=wheel.version, type=ComponentType.LIBRARY,
                            bom_ref=wheel.purl, purl=PackageURL.from_string(wheel.purl))
        if len(boms) == 1:
            bom.metadata.component = root
        else:
            bom.components.add(root)
        parts = [_component(wheel, c) for c in wheel.components]
        for part in parts:
            bom.components.add(part)
        bom.register_dependency(root, parts)
        for part in parts:
            bom.register_dependency(part, [])
    text = JsonV1Dot6(bom).output_as_string(indent=2)
    if when is None:  # the library always stamps a time; without SOURCE_DATE_EPOCH, write none
        document = json.loads(text)
        document.get("metadata", {}).pop("timestamp", None)
        text = json.dumps(document, indent=2)
    return text + "\n"


def _canonical(wheel: BillOfMaterials) -> dict:
    return {"wheel": wheel.purl, "components": [c.to_dict() for c in wheel.components]}


def _bom_ref(wheel: BillOfMaterials, c: Component) -> str:
    return f"{wheel.purl}#{c.file}:{c.name}" + (f"@{c.version}" if c.version else "")


def _component(wheel: BillOfMaterials, c: Component):
    from cyclonedx.model import HashAlgorithm, HashType, Property
    from cyclonedx.model.component import Component as CdxComponent, ComponentType
    from packageurl import PackageURL

    package = c.os_package
    properties = [Property(name="wheelcheck:kind", value=c.kind), Property(name=FILE_PROPERTY, value=c.file)]
    if c.soname:
        properties.append(Property(name="wheelcheck:soname", value=c.soname))
    if c.license is not None and c.license.file:
        properties.append(Property(name=LICENSE_FILE_PROPERTY, value=c.license.file))
    if package is not None:  # the component is the OS package; what the binary says stays beside it
        properties.append(Property(name="wheelcheck:upstream", value=c.name))
        if c.version:
            properties.append(Property(name="wheelcheck:upstream-version", value=c.version))
    description = f"{c.title} ({'vendored library' if c.kind == 'vendored' else 'statically linked'})"
    return CdxComponent(
        name=package.name if package else c.name, version=package.version if package else c.version,
        type=ComponentType.LIBRARY, bom_ref=_bom_ref(wheel, c), purl=PackageURL.from_string(c.purl),
        cpe=c.cpe, description=description,
        hashes=[HashType(alg=HashAlgorithm.SHA_256, content=c.sha256)] if c.sha256 else None,
        properties=properties, evidence=_evidence(c), licenses=_licenses(c.license))


def _licenses(license: ComponentLicense | None) -> list | None:
    """The package's SPDX expression; without one, the member holding the text, as the license's name."""
    from cyclonedx.model.license import DisjunctiveLicense, LicenseAcknowledgement, LicenseExpression

    if license is None:
        return None
    if license.expression:
        return [LicenseExpression(license.expression, acknowledgement=LicenseAcknowledgement.DECLARED)]
    if license.file:
        return [DisjunctiveLicense(name=license.file, acknowledgement=LicenseAcknowledgement.DECLARED)]
    return None


def _evidence(c: Component):
    from cyclonedx.model.component_evidence import (AnalysisTechnique, ComponentEvidence, Identity, IdentityField,
                                                    Method, Occurrence)

    identities = []
    for field in ("name", "version", "purl"):
        methods = [Method(technique=AnalysisTechnique(_TECHNIQUE[e.kind]), confidence=_CONFIDENCE[e.kind],
                          value=e.value) for e in c.evidence if field in EVIDENCE[e.kind]]
        if methods:
            identities.append(Identity(field=IdentityField(field), methods=methods))
    return ComponentEvidence(identity=identities, occurrences=[Occurrence(location=c.file)])


def os_packages_in(text: str) -> dict[str, OsPackage]:
    """member -> OS package, from a CycloneDX document wheelcheck wrote ({} for anything else or bad JSON)."""
    from packageurl import PackageURL

    out = {}
    for member, props, component in _grafted_components(text):
        purl = component.get("purl")
        if not isinstance(purl, str) or "wheelcheck:upstream" not in props:
            continue
        try:
            parsed = PackageURL.from_string(purl)
        except ValueError:
            continue
        if parsed.type in ("deb", "rpm", "apk") and parsed.version:
            out[member] = OsPackage(parsed.type, parsed.namespace, parsed.name, parsed.version)
    return out


def licenses_in(text: str) -> dict[str, ComponentLicense]:
    """member -> the license a repair gave it, from a CycloneDX document wheelcheck wrote. An expression is kept
    only if it is SPDX (the document is the wheel's, and may say anything)."""
    from cyclonedx.spdx import is_expression

    out = {}
    for member, props, component in _grafted_components(text):
        file = props.get(LICENSE_FILE_PROPERTY)
        stated = component.get("licenses")
        first = stated[0] if isinstance(stated, list) and stated and isinstance(stated[0], dict) else {}
        expression = first.get("expression")
        expression = expression if isinstance(expression, str) and is_expression(expression) else None
        file = file if isinstance(file, str) else None
        if expression or file:
            out[member] = ComponentLicense(expression, file)
    return out


def _grafted_components(text: str) -> list[tuple[str, dict, dict]]:
    """(member, properties, component) of each component of a wheelcheck document that names its member."""
    try:
        document = json.loads(text)
        components = document.get("components", []) if isinstance(document, dict) else []
    except (ValueError, RecursionError):  # the wheel's bytes: not JSON, or nested past the parser's depth
        return []
    out = []
    for component in components if isinstance(components, list) else []:
        if not isinstance(component, dict):
            continue
        found = component.get("properties")
        props = {p["name"]: p.get("value") for p in (found if isinstance(found, list) else [])
                 if isinstance(p, dict) and isinstance(p.get("name"), str)}
        member = props.get(FILE_PROPERTY)
        if isinstance(member, str):
            out.append((member, props, component))
    return out
