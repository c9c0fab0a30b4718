"""The report objects: what the CLI renders and the Python API returns."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["Finding", "FileReport", "WheelReport", "AuditReport", "SEVERITIES", "SCHEMA_VERSION", "SCHEMA_MINOR",
           "reaches"]

SCHEMA_VERSION = 1  # bumped on a change that is not an addition
SCHEMA_MINOR = 1  # bumped on each addition: 1 added the wheels' components (bill of materials)
SEVERITIES = ("info", "warning", "error")


def reaches(findings: "list[Finding]", fail_on: str = "error") -> bool:
    """Does any finding have ``fail_on``'s severity or a higher one? (--fail-on: such a wheel fails.)"""
    floor = SEVERITIES.index(fail_on)
    return any(SEVERITIES.index(f.severity) >= floor for f in findings)


@dataclass(frozen=True)
class Finding:
    """One observation with a stable rule id. Errors make the wheel fail."""

    rule: str
    severity: str
    file: str | None
    message: str
    hint: str = ""
    symbols: tuple[str, ...] = ()
    limit: str | None = None  # the best tag this finding alone allows

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["symbols"] = list(self.symbols)
        return out


@dataclass(frozen=True)
class FileReport:
    path: str
    arch: str | None
    soname: str | None
    needed: list[str]
    rpath: list[str]
    runpath: list[str]
    is_extension: bool
    versioned_symbols: dict[str, list[str]]
    isa_level: int | None
    exported_symbols: int  # defined global/weak/unique, default/protected visibility; linker-made ones aside
    cxx_abi: dict[str, Any] | None = None  # {abi: none|old|new|mixed, old_count, new_count, *_examples}
    exposure: dict[str, Any] | None = None  # {exports, beyond_init, gnu_unique, families, top_groups}
    runtime_libraries: list[dict[str, str]] = field(default_factory=list)  # [{soname, status}] dlopen candidates

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class WheelReport:
    filename: str
    path: str | None = None  # the wheel's path as given (SARIF locations point at it)
    pure: bool = False
    arch: str | None = None
    libc: str | None = None
    best_tag: str | None = None
    best_tags: list[str] = field(default_factory=list)  # best_tag and its aliases
    claimed_tags: list[str] = field(default_factory=list)
    target_tag: str | None = None  # the tag the wheel must meet: its best claim, or --plat
    passed: bool = True
    versioned_symbols: dict[str, list[str]] = field(default_factory=dict)
    external_libs: list[str] = field(default_factory=list)
    cxx_abi: str | None = None  # the wheel's libstdc++ string ABI: none, old, new or mixed
    files: list[FileReport] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    components: list[dict[str, Any]] = field(default_factory=list)  # the bill of materials (sbom/), as JSON objects
    error: str | None = None  # bad input: the one-line problem; nothing else is meaningful then

    def to_dict(self) -> dict[str, Any]:
        if self.error is not None:
            return {"filename": self.filename, "error": self.error}
        out = asdict(self)
        del out["error"]
        if self.path is None:
            del out["path"]
        out["files"] = [f.to_dict() for f in self.files]
        out["findings"] = [f.to_dict() for f in self.findings]
        return out


@dataclass
class AuditReport:
    wheels: list[WheelReport]
    fail_on: str = "error"  # the lowest finding severity that made a wheel fail (its ``passed``)

    @property
    def exit_code(self) -> int:
        """0 every wheel passes, 1 a wheel fails its policy, 2 bad input."""
        if any(w.error is not None for w in self.wheels):
            return 2
        return 0 if all(w.passed for w in self.wheels) else 1

    def to_dict(self) -> dict[str, Any]:
        from wheelcheck._version import __version__

        return {
            "schema_version": SCHEMA_VERSION,
            "schema_minor": SCHEMA_MINOR,
            "tool": {"name": "wheelcheck", "version": __version__},
            "fail_on": self.fail_on,
            "wheels": [w.to_dict() for w in self.wheels],
        }
