"""Validate policy files: first against the JSON Schema, then for meaning, across all the files given.

Meaning: a name agrees with its libc and libc version; the GLIBC versions allowed are not newer than the
policy's glibc; every version parses and none is PRIVATE; names and aliases are unique; priorities order
the policies (unique, and a newer libc never ranks as more compatible); a more compatible policy never
allows what a less compatible one forbids (libraries, symbol versions per arch and namespace, blacklisted
symbols, C++ ABIs). Each problem names the file, the policy and the field.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from wheelcheck.errors import PolicyError, UsageError
from wheelcheck.policy import semantics
from wheelcheck.policy.extends import Entry, resolve_extends
from wheelcheck.policy.policy_loader import bundled_parent, load_json, policy_from_dict
from wheelcheck.policy.policy_model import Policy

__all__ = ["Problem", "Validation", "validate_files", "validate_texts"]


@dataclass(frozen=True)
class Problem:
    file: str
    policy: str  # the policy's name, or "-" when the file holds none that can be named
    field: str  # dotted path of the field (symbol_versions.x86_64.GLIBC), or "-"
    message: str
    severity: str = "error"  # or "warning": shown, but the file is still valid

    def __str__(self) -> str:
        marker = "warning: " if self.severity == "warning" else ""
        return f"{self.file}: {self.policy}: {self.field}: {marker}{self.message}"

    def as_dict(self) -> dict:
        return {"file": self.file, "policy": self.policy, "field": self.field, "severity": self.severity,
                "message": self.message}


@dataclass(frozen=True)
class Validation:
    files: tuple[str, ...]
    policies: tuple[str, ...]  # the names of the policies that could be checked for meaning
    problems: tuple[Problem, ...]  # errors and warnings, in the order found

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning"]

    @property
    def ok(self) -> bool:
        return not self.errors

    def as_dict(self) -> dict:
        return {"valid": self.ok, "files": list(self.files), "policies": list(self.policies),
                "problems": [p.as_dict() for p in self.problems]}


def validate_files(paths: list[str | Path]) -> Validation:
    """Validate the files together; PolicyError only when a file cannot be read at all."""
    texts = []
    for path in paths:
        try:
            texts.append((Path(path).read_text(encoding="utf-8"), str(path)))
        except (OSError, UnicodeDecodeError) as exc:
            raise PolicyError(str(path), f"cannot read policy file ({exc.__class__.__name__}: {exc})") from None
    return validate_texts(texts)


def validate_texts(texts: list[tuple[str, str]]) -> Validation:
    """Validate (text, origin) pairs as one set of policies."""
    problems: list[Problem] = []
    policies: list[Policy] = []
    for text, origin in texts:
        entries = _schema_checked(text, origin, problems)
        policies.extend(_build(entries, origin, problems))
    for policy, field, message, severity in semantics.check(policies):
        problems.append(Problem(policy.origin, policy.name, field, message, severity))
    order = {origin: index for index, (_, origin) in enumerate(texts)}
    problems.sort(key=lambda p: order.get(p.file, len(order)))  # grouped by file, found order within
    return Validation(tuple(order), tuple(p.name for p in policies), tuple(problems))


def _schema_checked(text: str, origin: str, problems: list[Problem]) -> list[Entry]:
    """The file's policy objects that pass the schema; a problem for each schema error."""
    try:
        doc = load_json(text, origin)  # PolicyError when nested too deep to read: the file is not validated
    except json.JSONDecodeError as exc:
        problems.append(Problem(origin, "-", "-", f"not valid JSON (line {exc.lineno}: {exc.msg})"))
        return []
    auditwheel_format = isinstance(doc, list)  # auditwheel's array: libc and libc_version come from the name
    entries = doc if auditwheel_format else [doc]
    validator = _validator(auditwheel_format)
    good: list[Entry] = []
    for index, entry in enumerate(entries):
        name = entry.get("name") if isinstance(entry, dict) else None
        label = name if isinstance(name, str) else f"entry {index}"
        if name == "linux" and auditwheel_format:
            continue
        errors = sorted(validator.iter_errors(entry), key=lambda e: list(map(str, e.absolute_path)))
        for error in errors:
            problems.append(Problem(origin, label, _field(error.absolute_path), error.message))
        if not errors:
            good.append((entry, origin))
    if not entries:
        problems.append(Problem(origin, "-", "-", "the file holds no policy"))
    return good


def _build(entries: list[Entry], origin: str, problems: list[Problem]) -> list[Policy]:
    try:
        resolved = resolve_extends(entries, bundled_parent)
    except PolicyError as exc:
        problems.append(Problem(origin, _policy_of(exc.problem), "extends", exc.problem.split(": ", 1)[-1]))
        return []
    out = []
    for doc, where in resolved:
        try:
            out.append(policy_from_dict(doc, where))
        except PolicyError as exc:
            problems.append(Problem(where, doc.get("name", "-"), "-", exc.problem))
    return out


def _policy_of(problem: str) -> str:
    return problem.split(":", 1)[0].removeprefix("policy ") if problem.startswith("policy ") else "-"


def _field(path) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "-"


@functools.lru_cache(maxsize=2)
def _validator(auditwheel_format: bool):
    try:
        import jsonschema  # optional (the validate extra): its rpds-py has no wheel for some musllinux arches
    except ImportError:
        raise UsageError("policy validate", "needs jsonschema, which is not installed: "
                                            "pip install 'wheelcheck[validate]'") from None

    schema = json.loads(resources.files("wheelcheck.policies").joinpath("schema.json").read_text(encoding="utf-8"))
    if auditwheel_format:
        schema["else"] = {"required": [k for k in schema["else"]["required"] if k not in ("libc", "libc_version")]}
    return jsonschema.Draft202012Validator(schema)
