"""The variant wheels of one release, audited together, against each other and the index's variants.json.

PEP 825, "Metadata consistency": the same variant label MUST always map to the same set of properties, and the
``default-priorities.namespace`` lists MUST be identical or one a prefix of the other, across the wheels of a
package version and its index-level ``{name}-{version}-variants.json``; an installer that reads the index takes
a wheel whose label the index lacks for incompatible. Each break is a variant-consistency error on the wheels it
concerns; what the index file itself breaks of the PEP is a variant-metadata finding on the release's first wheel.
"""

from __future__ import annotations

from collections.abc import Sequence

from packaging.utils import canonicalize_name

from wheelcheck.audit.findings import Finding, WheelReport
from wheelcheck.errors import UsageError
from wheelcheck.wheel.variant_metadata import VariantsIndex, flat
from wheelcheck.wheel.wheel_filename import InvalidWheelFilename, parse_wheel_filename

__all__ = ["release_findings"]

Release = tuple[str, str]  # (canonical name, normalized version)
Props = frozenset[str]  # "namespace :: feature :: value"

_FIX = ("build every variant of a release from the same variant definitions (the same pyproject.toml), and "
        "generate the index's variants.json from the wheels")


def release_findings(reports: Sequence[WheelReport], index: VariantsIndex | None) -> dict[int, list[Finding]]:
    """Findings to add to ``reports[i]``, by i. UsageError when ``index`` names a release none of the variant
    wheels is of."""
    releases: dict[Release, list[int]] = {}
    for i, report in enumerate(reports):
        release = _release(report)
        if release is not None:
            releases.setdefault(release, []).append(i)
    out: dict[int, list[Finding]] = {}
    for members in releases.values():
        for i, finding in _labels(reports, members) + _namespaces(reports, members):
            out.setdefault(i, []).append(finding)
    if index is not None:
        matched = [members for release, members in releases.items()
                   if index.release is None or release == index.release]
        if index.release is not None and not matched:
            name, version = index.release
            raise UsageError(index.path, f"is the variants file of {name} {version}, and no variant wheel audited is "
                                         "of that release")
        for members in matched:
            for i, finding in _against_index(reports, members, index):
                out.setdefault(i, []).append(finding)
    return out


def _release(report: WheelReport) -> Release | None:
    if report.error is not None or report.variant is None:
        return None
    try:
        parsed = parse_wheel_filename(report.filename)
    except InvalidWheelFilename:
        return None
    return canonicalize_name(parsed.name), str(parsed.version)


def _props(report: WheelReport) -> Props | None:
    """The properties its variant metadata maps its label to; None when it could not tell."""
    assert report.variant is not None
    listed = report.variant["properties"]
    return None if listed is None else frozenset(p["property"] for p in listed)


def _shown(props: Props) -> str:
    return "{" + ", ".join(sorted(props)) + "}" if props else "no property"


def _labels(reports: Sequence[WheelReport], members: list[int]) -> list[tuple[int, Finding]]:
    by_label: dict[str, list[tuple[int, Props]]] = {}
    for i in members:
        props = _props(reports[i])
        if props is not None:
            by_label.setdefault(reports[i].variant["label"], []).append((i, props))  # type: ignore[index]
    out = []
    for label, mapped in by_label.items():
        for i, props in mapped:
            other = next(((j, p) for j, p in mapped if p != props), None)
            if other is None:
                continue
            j, theirs = other
            out.append((i, Finding(
                "variant-consistency", "error", None,
                f"maps the variant label {label!r} to {_shown(props)}, but {reports[j].filename} of the same release "
                f"maps it to {_shown(theirs)}: PEP 825 says a label MUST mean one set of properties", _FIX,
                cause=f"maps the label {label!r} otherwise than another wheel of its release", subject=label)))
    return out


def _consistent(a: list[str], b: list[str]) -> bool:
    """The PEP's rule for default-priorities.namespace: identical, or the longer starts with the shorter."""
    short, long = sorted((a, b), key=len)
    return long[:len(short)] == short


def _namespaces(reports: Sequence[WheelReport], members: list[int]) -> list[tuple[int, Finding]]:
    out = []
    for i in members:
        mine = reports[i].variant["namespaces"]  # type: ignore[index]
        other = next((j for j in members if mine and reports[j].variant["namespaces"]  # type: ignore[index]
                      and not _consistent(mine, reports[j].variant["namespaces"])), None)  # type: ignore[index]
        if other is None:
            continue
        theirs = reports[other].variant["namespaces"]  # type: ignore[index]
        out.append((i, Finding(
            "variant-consistency", "error", None,
            f"orders its namespaces {', '.join(mine)}, but {reports[other].filename} of the same release orders "
            f"them {', '.join(theirs)}: PEP 825 says one list MUST start with the other", _FIX,
            cause="orders its namespaces otherwise than another wheel of its release")))
    return out


def _against_index(reports: Sequence[WheelReport], members: list[int], index: VariantsIndex) -> list[tuple[int, Finding]]:
    meta = index.metadata
    out = [(members[0], Finding("variant-metadata", problem.severity, index.path, problem.text,
                                "generate the index's variants.json from the release's wheels (PEP 825 describes "
                                "how their variant.json files combine)", cause=problem.text))
           for problem in meta.problems]
    if not meta.readable:
        return out
    mapped = {label: frozenset(str(p) for p in flat(props)) for label, props in meta.variants}
    for i in members:
        report = reports[i]
        label, props = report.variant["label"], _props(report)  # type: ignore[index]
        if label not in mapped:
            out.append((i, Finding(
                "variant-consistency", "error", None,
                f"has the variant label {label!r}, which {index.path} does not list: installers that read the index "
                "take the wheel for incompatible with every system", _FIX,
                cause="has a label the index's variants.json does not list", subject=label)))
        elif props is not None and mapped[label] != props:
            out.append((i, Finding(
                "variant-consistency", "error", None,
                f"maps the variant label {label!r} to {_shown(props)}, but {index.path} maps it to "
                f"{_shown(mapped[label])}: installers choose the wheel by the index's", _FIX,
                cause="maps its label otherwise than the index's variants.json", subject=label)))
        mine = report.variant["namespaces"]  # type: ignore[index]
        if mine and meta.namespaces and not _consistent(mine, list(meta.namespaces)):
            out.append((i, Finding(
                "variant-consistency", "error", None,
                f"orders its namespaces {', '.join(mine)}, but {index.path} orders them "
                f"{', '.join(meta.namespaces)}: PEP 825 says one list MUST start with the other", _FIX,
                cause="orders its namespaces otherwise than the index's variants.json")))
    return out
