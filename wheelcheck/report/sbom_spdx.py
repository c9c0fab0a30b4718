"""SPDX 2.3 JSON for bills of materials (``wheelcheck sbom --format spdx``).

Written as a plain document rather than with spdx-tools, whose runtime needs (rdflib, pyyaml, beartype,
click, ply, xmltodict, uritools, semantic_version) outweigh one JSON object; the tests check every document
with spdx-tools' own parser and validator. SPDX requires a creation time: SOURCE_DATE_EPOCH when set,
else the clock. The namespace is derived from the content, so equal inputs at equal times give equal bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone

from wheelcheck._version import __version__
from wheelcheck.report.escaping import json_text
from wheelcheck.sbom.bill_of_materials import BillOfMaterials, Component
from wheelcheck.sbom.cyclonedx_json import source_date

__all__ = ["render_spdx"]

_NAMESPACE = uuid.UUID("0b7f3f55-61b2-5a7b-8f37-7370647877c1")


def render_spdx(boms: Sequence[BillOfMaterials], environ: Mapping[str, str] = os.environ,
                now: datetime | None = None) -> str:
    created = source_date(environ) or now or datetime.now(timezone.utc)
    packages: list[dict] = []
    relationships: list[dict] = []
    for i, wheel in enumerate(boms, 1):
        wheel_id = f"SPDXRef-Wheel-{i}-{_id_part(wheel.name)}"
        packages.append({
            "SPDXID": wheel_id, "name": wheel.name, "versionInfo": wheel.version, "packageFileName": wheel.filename,
            "downloadLocation": "NOASSERTION", "filesAnalyzed": False, "primaryPackagePurpose": "LIBRARY",
            "externalRefs": [_purl_ref(wheel.purl)]})
        relationships.append({"spdxElementId": "SPDXRef-DOCUMENT", "relationshipType": "DESCRIBES",
                              "relatedSpdxElement": wheel_id})
        for j, component in enumerate(wheel.components, 1):
            component_id = f"SPDXRef-Component-{i}-{j}-{_id_part(component.name)}"
            packages.append(_package(component_id, component))
            relationships.append({"spdxElementId": wheel_id, "relationshipType": "CONTAINS",
                                  "relatedSpdxElement": component_id})
    content = json.dumps([packages, relationships, created.isoformat()], sort_keys=True).encode("utf-8")
    name = boms[0].filename if len(boms) == 1 else f"{len(boms)} wheels"
    serial = uuid.uuid5(_NAMESPACE, hashlib.sha256(content).hexdigest())
    document = {
        "spdxVersion": "SPDX-2.3",
        "dataLicense": "CC0-1.0",
        "SPDXID": "SPDXRef-DOCUMENT",
        "name": f"wheelcheck SBOM of {name}",
        "documentNamespace": f"https://spdx.org/spdxdocs/wheelcheck-{serial}",
        "creationInfo": {"created": created.strftime("%Y-%m-%dT%H:%M:%SZ"),
                         "creators": [f"Tool: wheelcheck-{__version__}"]},
        "packages": packages,
        "relationships": relationships,
    }
    return json_text(document)


def _package(spdx_id: str, c: Component) -> dict:
    package = c.os_package
    out: dict = {
        "SPDXID": spdx_id,
        "name": package.name if package else c.name,
        "downloadLocation": "NOASSERTION",
        "filesAnalyzed": False,
        "primaryPackagePurpose": "LIBRARY",
        "comment": _comment(c),
        "externalRefs": [_purl_ref(c.purl)],
    }
    version = package.version if package else c.version
    if version:
        out["versionInfo"] = version
    if c.sha256:
        out["checksums"] = [{"algorithm": "SHA256", "checksumValue": c.sha256}]
    if c.license is not None and c.license.expression:
        out["licenseDeclared"] = c.license.expression
    if c.cpe:
        out["externalRefs"].append({"referenceCategory": "SECURITY", "referenceType": "cpe23Type",
                                    "referenceLocator": c.cpe})
    return out


def _comment(c: Component) -> str:
    where = f"vendored library {c.file}" if c.kind == "vendored" else f"statically linked into {c.file}"
    upstream = f"; upstream {c.name} {c.version or ''}".rstrip() if c.os_package else ""
    evidence = "; ".join(f"{e.kind}: {e.value.splitlines()[0]}" for e in c.evidence)
    text = f" License text: {c.license.file}." if c.license is not None and c.license.file else ""
    return f"{c.title}, {where}{upstream}.{text} Evidence: {evidence}"


def _purl_ref(purl: str) -> dict:
    return {"referenceCategory": "PACKAGE-MANAGER", "referenceType": "purl", "referenceLocator": purl}


def _id_part(name: str) -> str:
    """SPDX identifiers hold letters, digits, '.' and '-' only."""
    return re.sub(r"[^A-Za-z0-9.\-]+", "-", name).strip("-") or "x"
