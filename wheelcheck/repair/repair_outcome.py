"""The repair report: what was grafted, renamed and patched in each wheel, and the tags it ended with."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from wheelcheck.audit.findings import Finding, Relaxation

__all__ = ["GraftedLibrary", "GraftedLicense", "HiddenSymbols", "PatchedFile", "RepairOutcome", "RepairReport", "STATUSES",
           "REPAIR_SCHEMA_VERSION", "REPAIR_SCHEMA_MINOR"]

REPAIR_SCHEMA_VERSION = 2  # bumped on a change that is not an addition
REPAIR_SCHEMA_MINOR = 3  # bumped on each addition: 1 added sbom, 2 relaxed_by, 3 the grafts' licenses

# repaired: written; failed: the wheel cannot meet the target (nothing written); pure: no ELF file,
# nothing to repair (nothing written); copied: a pure wheel copied unchanged (--allow-pure-python-wheel);
# error: bad input, a missing library, an unwritable output
STATUSES = ("repaired", "failed", "pure", "copied", "error")


@dataclass(frozen=True)
class GraftedLicense:
    """The license a grafted library travels under."""

    file: str | None  # the member holding its text (<dist>.dist-info/licenses/...); None when none was found
    expression: str | None  # SPDX, as its package states it
    origin: str  # where the text came from: the package and the files read, a --license-file, an earlier repair
    problem: str | None = None  # why there is no text


@dataclass(frozen=True)
class GraftedLibrary:
    needed_as: list[str]  # the sonames files of the wheel needed
    source: str  # where it was found on this host
    realpath: str
    sha256: str
    member: str  # <dist>.libs/<new name>
    soname: str  # its new SONAME (= the member's file name)
    already_in_wheel: bool = False
    license: GraftedLicense | None = None  # None when the repair wrote nothing (a failed repair's plan)


@dataclass(frozen=True)
class PatchedFile:
    member: str
    replaced_needed: dict[str, str] = field(default_factory=dict)  # old soname -> new
    removed_needed: list[str] = field(default_factory=list)
    rpath_before: list[str] = field(default_factory=list)
    rpath_after: list[str] | None = None  # None: left as it was
    dropped_rpath: list[str] = field(default_factory=list)  # entries that pointed outside the wheel
    moved_to: str | None = None  # an ELF script moved beside the libraries; a launcher replaces it


@dataclass(frozen=True)
class HiddenSymbols:
    """repair --hide-symbols, for one library (or extension module)."""

    member: str
    exports: int  # exported symbols before
    hidden: int  # made local and hidden
    renamed: dict[str, str] = field(default_factory=dict)  # old -> new, here and in the files importing it
    kept: dict[str, str] = field(default_factory=dict)  # name -> why it stays visible: the collision risk left


@dataclass
class RepairOutcome:
    filename: str
    status: str = "repaired"
    output: str | None = None  # the wheel written
    arch: str | None = None
    libc: str | None = None
    required_tag: str | None = None  # --plat, or None for auto
    deserved_tag: str | None = None  # the most compatible tag the repaired wheel deserves
    platform_tags: list[str] = field(default_factory=list)  # in the output's file name
    grafted: list[GraftedLibrary] = field(default_factory=list)
    patched: list[PatchedFile] = field(default_factory=list)
    kept_external: dict[str, str] = field(default_factory=dict)  # soname -> why it was not grafted
    hidden: list[HiddenSymbols] | None = None  # --hide-symbols: per vendored library
    findings: list[Finding] = field(default_factory=list)  # the re-audit's, or why the target is out of reach
    sbom: str | None = None  # the CycloneDX SBOM member the wheel carries (.dist-info/sboms/wheelcheck.cdx.json)
    metadata_version_raised: str | None = None  # the Metadata-Version raised to 2.4 for License-File
    copied_members: int = 0  # copied as compressed bytes
    written_members: int = 0  # deflated anew
    message: str | None = None  # one line for failed/pure/copied/error

    # The names of wheelcheck 0.x's Python API, kept for code that reads them
    best_tag = property(lambda self: self.deserved_tag, lambda self, v: setattr(self, "deserved_tag", v))
    target_tag = property(lambda self: self.required_tag, lambda self, v: setattr(self, "required_tag", v))

    @property
    def unchanged(self) -> bool:
        """Repaired, but every member was copied as it was: the input needed nothing (an earlier repair's
        output gives itself back)."""
        return self.status == "repaired" and self.written_members == 0

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["unchanged"] = self.unchanged
        out["findings"] = [f.to_dict() for f in self.findings]
        return out


@dataclass
class RepairReport:
    wheels: list[RepairOutcome]
    relaxed_by: list[Relaxation] = field(default_factory=list)  # settings more lenient than the defaults

    @property
    def exit_code(self) -> int:
        """0 every wheel repaired (or copied), 1 a wheel cannot meet its target (or is pure), 2 an error."""
        if any(w.status == "error" for w in self.wheels):
            return 2
        return 0 if all(w.status in ("repaired", "copied") for w in self.wheels) else 1

    def to_dict(self) -> dict[str, Any]:
        from wheelcheck._version import __version__

        return {
            "schema_version": REPAIR_SCHEMA_VERSION,
            "schema_minor": REPAIR_SCHEMA_MINOR,
            "tool": {"name": "wheelcheck", "version": __version__},
            "command": "repair",
            "relaxed_by": [r.to_dict() for r in self.relaxed_by],
            "wheels": [w.to_dict() for w in self.wheels],
        }
