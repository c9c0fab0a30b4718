"""PEP 825 variant metadata: ``*.dist-info/variant.json`` of a variant wheel, and the index's
``{name}-{version}-variants.json``, read and checked against the PEP.

Pure: JSON text in, a ``VariantMetadata`` out, with each way it breaks the PEP as a ``Problem`` (its severity
and a sentence). Format version 0.1.1 (the PEP's schema, variant-schema-0.1.1.json) is what the structure is
checked against:

- ``$schema``: REQUIRED, a URL whose version number names the format; a major version other than 0 or 1 is
  unknown, and the PEP says tools MUST reject it; 0.x versions are drafts that MUST NOT be used in production.
- ``default-priorities.namespace``: REQUIRED, a non-empty list of unique namespaces that MUST contain every
  namespace the properties use.
- ``variants``: label -> namespace -> feature -> list of values. In a wheel it MUST hold exactly one entry,
  the label of the wheel's file name; ``null`` MUST map to no property. Namespaces and features are
  ``^[a-z0-9_]+$``, values ``^[a-z0-9_.]+$``, each list non-empty and without repeats.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from wheelcheck.errors import UsageError
from wheelcheck.wheel.wheel_filename import LABEL

__all__ = ["VariantMetadata", "VariantProperty", "Problem", "Properties", "read_variant_json", "NULL_LABEL",
           "VARIANT_JSON", "FORMAT_VERSION", "VariantsIndex", "read_variants_index", "flat", "as_mapping"]

VARIANT_JSON = "variant.json"  # in the .dist-info directory
NULL_LABEL = "null"
FORMAT_VERSION = (0, 1, 1)  # the format the PEP's current text and schema define
_NAME = re.compile(r"[a-z0-9_]+")  # a namespace or a feature name; these are matched whole (fullmatch)
_VALUE = re.compile(r"[a-z0-9_.]+")
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")
_KEYS = frozenset({"$schema", "default-priorities", "variants"})
_PROVIDERS = "providers"  # which plugin answers for a namespace: PEP 817's draft, not (yet) PEP 825's format
_SHOWN = 60  # the most of an offending string a message quotes
MAX_INDEX_SIZE = 64 << 20  # an index file lists every variant of a release: a few kilobytes in practice
_INDEX_SUFFIX = "-variants.json"


class VariantProperty(NamedTuple):
    namespace: str
    feature: str
    value: str

    def __str__(self) -> str:
        return f"{self.namespace} :: {self.feature} :: {self.value}"


# namespace -> feature -> its values, as the ``variants`` object maps one label
Properties = tuple[tuple[str, tuple[tuple[str, tuple[str, ...]], ...]], ...]


class Problem(NamedTuple):
    severity: str  # error (the PEP's MUST broken), warning, info
    text: str


@dataclass(frozen=True)
class VariantMetadata:
    """What a variant metadata file says, as far as it could be read, and what is wrong with it."""

    schema: str | None = None  # the $schema URL
    format_version: tuple[int, int, int] | None = None
    namespaces: tuple[str, ...] = ()  # default-priorities.namespace, in order
    variants: tuple[tuple[str, Properties], ...] = ()  # label -> its properties, in file order
    problems: tuple[Problem, ...] = ()
    readable: bool = True  # False: not JSON, or a format version no tool may assume: nothing above is trusted

    def labels(self) -> tuple[str, ...]:
        return tuple(label for label, _ in self.variants)

    def properties_of(self, label: str) -> Properties | None:
        return next((props for name, props in self.variants if name == label), None)

    def to_dict(self) -> dict[str, Any]:
        """The JSON a variant metadata file holds for what was read (feature values as sorted lists)."""
        return {"$schema": self.schema, "default-priorities": {"namespace": list(self.namespaces)},
                "variants": {label: as_mapping(props) for label, props in self.variants}}


@dataclass(frozen=True)
class VariantsIndex:
    """The index's ``{name}-{version}-variants.json`` of one release, as given (--variants-json)."""

    path: str
    release: tuple[str, str] | None  # (canonical name, normalized version) its file name says; None if it says none
    metadata: VariantMetadata


def read_variants_index(path: str | Path) -> VariantsIndex:
    """Read the index-level variant metadata file at ``path``; UsageError when it cannot be read. What the file
    breaks of the PEP is in its ``metadata.problems``."""
    path = Path(path)
    try:
        if path.stat().st_size > MAX_INDEX_SIZE:  # measured before it is read
            raise UsageError(str(path), "is larger than an index's variants.json can be (64 MiB)")
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(str(path), f"cannot read the variants file ({exc.strerror or exc})") from None
    return VariantsIndex(str(path), release_of_index_name(path.name), read_variant_json(data))


def release_of_index_name(filename: str) -> tuple[str, str] | None:
    """('numpy', '2.3.2') for 'numpy-2.3.2-variants.json'; None for a name not of that form."""
    if not filename.endswith(_INDEX_SUFFIX):
        return None
    name, sep, version = filename[: -len(_INDEX_SUFFIX)].partition("-")
    if not sep or not name or "-" in version:
        return None
    try:
        return canonicalize_name(name), str(Version(version))
    except InvalidVersion:
        return None


def flat(props: Properties) -> list[VariantProperty]:
    """Every ``namespace :: feature :: value`` of one label, in file order."""
    return [VariantProperty(ns, feature, value) for ns, features in props for feature, values in features
            for value in values]


def as_mapping(props: Properties) -> dict[str, dict[str, list[str]]]:
    return {ns: {feature: sorted(values) for feature, values in features} for ns, features in props}


def read_variant_json(text: str | bytes, label: str | None = None) -> VariantMetadata:
    """Read a variant metadata file. ``label``: the variant label of the wheel that holds it, whose ``variants``
    MUST be that label alone; None for the index's file, which lists every variant of the release."""
    problems: list[Problem] = []
    try:
        document = json.loads(text)
    except (ValueError, RecursionError) as exc:  # RecursionError: arrays nested thousands deep
        return VariantMetadata(problems=(Problem("error", f"is not JSON ({_short(str(exc))})"),), readable=False)
    if not isinstance(document, dict):
        return VariantMetadata(problems=(Problem("error", "is not a JSON object"),), readable=False)
    schema, version = _schema(document.get("$schema"), problems)
    if version is not None and version[0] > 1:
        return VariantMetadata(schema, version, problems=(*problems, Problem(
            "error", f"is written in format version {_dotted(version)}, which this wheelcheck does not know: PEP 825 "
                     "says tools MUST reject a major version they do not support")), readable=False)
    extra = sorted(_short(repr(k)) for k in document if k not in _KEYS and k != _PROVIDERS)
    if _PROVIDERS in document:
        problems.append(Problem("info", "has a providers key, which format version "
                                        f"{_dotted(FORMAT_VERSION)} does not define: installers that implement "
                                        "variant provider plugins (PEP 817's draft; uv 0.13) read it"))
    if extra:
        problems.append(Problem("warning", f"has keys format version {_dotted(FORMAT_VERSION)} does not define "
                                           f"({_listed(extra)}); its schema allows no others"))
    namespaces = _namespaces(document.get("default-priorities"), problems)
    variants = _variants(document.get("variants"), problems)
    used = sorted({ns for _label, props in variants for ns, _ in props} - set(namespaces))
    if used and "default-priorities" in document:
        problems.append(Problem("error", f"uses namespace{'s' if len(used) > 1 else ''} {_listed(used)} that "
                                         "default-priorities.namespace does not list (PEP 825: it MUST contain "
                                         "every namespace the properties use)"))
    if label is not None:
        labels = [name for name, _ in variants]
        if isinstance(document.get("variants"), dict) and labels != [label]:
            said = f"maps {_listed(labels)}" if labels else "maps no label"
            problems.append(Problem("error", f"{said}; in a variant wheel its variants MUST hold exactly one entry, "
                                             f"the file name's label {label!r}"))
    return VariantMetadata(schema, version, namespaces, tuple(variants), tuple(problems))


def _schema(value: object, problems: list[Problem]) -> tuple[str | None, tuple[int, int, int] | None]:
    if value is None:
        problems.append(Problem("error", "has no $schema (PEP 825: REQUIRED, the URL of the format's JSON schema)"))
        return None, None
    if not isinstance(value, str):
        problems.append(Problem("error", "has a $schema that is not a string"))
        return None, None
    found = _VERSION.findall(value)
    if not found:
        problems.append(Problem("error", f"has a $schema URL with no version number ({_short(value)!r}); PEP 825: "
                                         "it MUST include one"))
        return value, None
    major, minor, patch = found[-1]
    version = (int(major), int(minor), int(patch))
    if version[0] == 0:
        problems.append(Problem("warning", f"is written in draft format version {_dotted(version)}: PEP 825 reserves "
                                           "0.x versions for drafts, which MUST NOT be used in production, and tools "
                                           "make no compatibility assumption over them"))
    return value, version


def _namespaces(value: object, problems: list[Problem]) -> tuple[str, ...]:
    if not isinstance(value, dict):
        problems.append(Problem("error", "has no default-priorities object (PEP 825: REQUIRED)" if value is None
                                else "has a default-priorities that is not an object"))
        return ()
    extra = sorted(_short(repr(k)) for k in value if k != "namespace")
    if extra:
        problems.append(Problem("warning", f"has default-priorities keys format version {_dotted(FORMAT_VERSION)} "
                                           f"does not define ({_listed(extra)})"))
    names = value.get("namespace")
    if not isinstance(names, list) or not names:
        problems.append(Problem("error", "has no default-priorities.namespace list, or an empty one (PEP 825: "
                                         "REQUIRED and never empty)"))
        return ()
    good = [n for n in names if isinstance(n, str) and _NAME.fullmatch(n)]
    bad = [n for n in names if not (isinstance(n, str) and _NAME.fullmatch(n))]
    if bad:
        problems.append(Problem("error", f"lists namespaces that are not ^[a-z0-9_]+$ in default-priorities: "
                                         f"{_listed([_short(repr(b)) for b in bad])}"))
    if len(set(good)) != len(good):
        problems.append(Problem("error", "lists a namespace twice in default-priorities.namespace"))
    return tuple(dict.fromkeys(good))


def _variants(value: object, problems: list[Problem]) -> list[tuple[str, Properties]]:
    if not isinstance(value, dict):
        problems.append(Problem("error", "has no variants object (PEP 825: REQUIRED)" if value is None
                                else "has a variants that is not an object"))
        return []
    out = []
    for label, entry in value.items():
        if not LABEL.fullmatch(label):
            problems.append(Problem("error", f"maps a label that is not ^[0-9a-z_.]+$: {_short(label)!r}"))
            continue
        props = _properties(label, entry, problems)
        if label == NULL_LABEL and props:
            problems.append(Problem("error", "maps the reserved label 'null' to properties; PEP 825: it always "
                                             "means the variant with none"))
        out.append((label, props))
    return out


def _properties(label: str, entry: object, problems: list[Problem]) -> Properties:
    where = f"variant {label!r}"
    if not isinstance(entry, dict):
        problems.append(Problem("error", f"maps {where} to something other than an object of namespaces"))
        return ()
    namespaces = []
    for ns, features in entry.items():
        if not _NAME.fullmatch(ns):
            problems.append(Problem("error", f"has a namespace that is not ^[a-z0-9_]+$ in {where}: {_short(ns)!r}"))
            continue
        if not isinstance(features, dict):
            problems.append(Problem("error", f"maps namespace {ns!r} of {where} to something other than an object"))
            continue
        kept = []
        for feature, values in features.items():
            if not _NAME.fullmatch(feature):
                problems.append(Problem("error", f"has a feature that is not ^[a-z0-9_]+$ in {where}: "
                                                 f"{ns} :: {_short(repr(feature))}"))
                continue
            name = f"{ns} :: {feature}"
            if not isinstance(values, list) or not values:
                problems.append(Problem("error", f"gives {name} of {where} no list of values, or an empty one"))
                continue
            good = [v for v in values if isinstance(v, str) and _VALUE.fullmatch(v)]
            if len(good) != len(values):
                bad = [_short(repr(v)) for v in values if not (isinstance(v, str) and _VALUE.fullmatch(v))]
                problems.append(Problem("error", f"gives {name} of {where} values that are not ^[a-z0-9_.]+$: "
                                                 f"{_listed(bad)}"))
            if len(set(good)) != len(good):
                problems.append(Problem("error", f"repeats a value of {name} in {where} (the values are a set)"))
            if good:
                kept.append((feature, tuple(sorted(set(good)))))
        if kept:
            namespaces.append((ns, tuple(kept)))
    return tuple(namespaces)


def _dotted(version: tuple[int, ...]) -> str:
    return ".".join(map(str, version))


def _short(text: str) -> str:
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def _listed(items: list[str], shown: int = 5) -> str:
    more = len(items) - shown
    return ", ".join(items[:shown]) + (f" and {more} more" if more > 0 else "")
