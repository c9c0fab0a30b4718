"""The report objects: what the CLI renders and the Python API returns.

Words that mean one thing, in every format: a wheel *claims* the platform tags of its file name, *deserves*
the most compatible tag whose policy it meets, and is *required* to meet its best claim or ``--plat``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from wheelcheck.audit.finding import SEVERITIES, Finding, reaches, rule_why
from wheelcheck.audit.finding_groups import LEAK_RULE, group_findings
from wheelcheck.policy.policy_model import glibc_of_tag

__all__ = ["Finding", "FileReport", "WheelReport", "AuditReport", "Relaxation", "SEVERITIES", "SCHEMA_VERSION",
           "SCHEMA_MINOR", "reaches", "rule_why", "WheelSummary", "summarize"]

SCHEMA_VERSION = 2  # bumped on a change that is not an addition
SCHEMA_MINOR = 9  # bumped on each addition: 1 added the wheels' components (bill of materials), 2 the dlopen status
# fallback, 3 the dlopen status no-loader, 4 required_met, 5 relaxed_by, 6 each wheel's suppressed findings, 7 the
# components' licenses, 8 each x86-64 file's isa_code, 9 each wheel's variant and each file's gpu_code


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
    isa_code: dict[str, Any] | None = None  # x86-64: the level the instructions need (elf/isa_scan.py IsaScan)
    gpu_code: dict[str, Any] | None = None  # the CUDA device code of its fatbins (elf/fatbin_scan.py GpuCode)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class WheelReport:
    filename: str
    path: str | None = None  # the wheel's path as given (SARIF locations point at it)
    pure: bool = False
    arch: str | None = None
    libc: str | None = None
    deserved_tag: str | None = None  # the most compatible tag whose policy the wheel meets
    deserved_tags: list[str] = field(default_factory=list)  # deserved_tag and its aliases
    claimed_tags: list[str] = field(default_factory=list)  # the platform tags of its file name
    required_tag: str | None = None  # what it must meet: its most compatible claim, or --plat if that is more
    # does it meet required_tag (None: nothing required)? A claim between two policies (manylinux_2_25) may be met
    # although deserved_tag, a policy's, is less compatible (manylinux_2_26)
    required_met: bool | None = None
    passed: bool = True
    versioned_symbols: dict[str, list[str]] = field(default_factory=dict)
    external_libs: list[str] = field(default_factory=list)
    cxx_abi: str | None = None  # the wheel's libstdc++ string ABI: none, old, new or mixed
    # PEP 825: its label, what its variant metadata says and each property judged (audit/variant_properties.py);
    # None for a non-variant wheel
    variant: dict[str, Any] | None = None
    files: list[FileReport] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    components: list[dict[str, Any]] = field(default_factory=list)  # the bill of materials (sbom/), as JSON objects
    # findings the settings or a baseline suppressed (audit/suppression.py Suppressed): out of ``findings`` and of
    # ``passed``, still reported
    suppressed: list[Any] = field(default_factory=list)
    error: str | None = None  # bad input: the one-line problem; nothing else is meaningful then
    seconds: float | None = None  # how long reading and judging it took (the API measures it)

    # The names of wheelcheck 0.x's Python API, kept for code that reads them
    best_tag = property(lambda self: self.deserved_tag, lambda self, v: setattr(self, "deserved_tag", v))
    best_tags = property(lambda self: self.deserved_tags, lambda self, v: setattr(self, "deserved_tags", v))
    target_tag = property(lambda self: self.required_tag, lambda self, v: setattr(self, "required_tag", v))

    @property
    def meets_claim_between_rungs(self) -> bool:
        """Does it meet a required glibc tag older than the policy it deserves (a claim between two rungs:
        manylinux_2_25, deserving manylinux_2_26)?"""
        wanted, given = glibc_of_tag(self.required_tag or ""), glibc_of_tag(self.deserved_tag or "")
        return bool(self.required_met) and wanted is not None and given is not None and wanted < given

    def groups(self) -> list:
        """The findings grouped by cause, most important first (audit/finding_groups.py)."""
        return group_findings(self.findings)

    def to_dict(self) -> dict[str, Any]:
        if self.error is not None:
            return {"filename": self.filename, "error": self.error}
        out = asdict(self)
        del out["error"], out["seconds"]
        if self.path is None:
            del out["path"]
        out["files"] = [f.to_dict() for f in self.files]
        out["findings"] = [f.to_dict() for f in self.findings]
        index = {id(f): i for i, f in enumerate(self.findings)}
        out["groups"] = [g.to_dict(index) for g in self.groups()]
        out["summary"] = summarize(self).to_dict()
        return out


@dataclass(frozen=True)
class WheelSummary:
    """What the end of a wheel's report says: counts, exposure, time."""

    severities: dict[str, int]  # error, warning, info -> findings
    rules: dict[str, int]  # rule -> findings, most first
    groups: int
    elf_files: int
    exported_symbols: int
    leaked: dict[str, dict[str, int]] = field(default_factory=dict)  # family -> {files, symbols}, most first
    seconds: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"severities": self.severities, "rules": self.rules, "groups": self.groups,
                "elf_files": self.elf_files, "exported_symbols": self.exported_symbols, "leaked": self.leaked,
                "seconds": None if self.seconds is None else round(self.seconds, 3)}


def summarize(wheel: WheelReport) -> WheelSummary:
    severities = dict.fromkeys(reversed(SEVERITIES), 0)
    severities.update(Counter(f.severity for f in wheel.findings))
    rules = dict(sorted(Counter(f.rule for f in wheel.findings).items(), key=lambda kv: (-kv[1], kv[0])))
    leaked: dict[str, dict[str, Any]] = {}
    for f in wheel.findings:
        # a statically linked libstdc++ exporting its runtime is a leaked library too (its own rule says more)
        family = f.subject if f.rule == LEAK_RULE else "libstdc++" if f.rule == "libstdcxx-exported" else None
        if family:
            entry = leaked.setdefault(family, {"files": set(), "symbols": 0})
            entry["files"].add(f.file)
            entry["symbols"] += f.count
    leaked_counts = {name: {"files": len(e["files"]), "symbols": e["symbols"]}
                     for name, e in sorted(leaked.items(), key=lambda kv: (-kv[1]["symbols"], kv[0]))}
    return WheelSummary(severities, rules, len(group_findings(wheel.findings)), len(wheel.files),
                        sum(f.exported_symbols for f in wheel.files), leaked_counts, wheel.seconds)


@dataclass(frozen=True)
class Relaxation:
    """A setting that made the gate more lenient than its defaults, where it came from and what it did."""

    setting: str  # exclude, policy-file
    value: str  # as given, shown as TOML would write it
    source: str  # the file it came from, or "command line"
    effect: str  # what it changed in this run: "2 needed libraries taken as provided (libfoo.so.1, ...)"

    def to_dict(self) -> dict[str, str]:
        return {"setting": self.setting, "value": self.value, "source": self.source, "effect": self.effect}

    def describe(self) -> str:
        return f"{self.setting} = {self.value} from {self.source}: {self.effect}"


@dataclass
class AuditReport:
    wheels: list[WheelReport]
    fail_on: str = "error"  # the lowest finding severity that made a wheel fail (its ``passed``)
    relaxed_by: list[Relaxation] = field(default_factory=list)  # settings more lenient than the defaults

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
            "relaxed_by": [r.to_dict() for r in self.relaxed_by],
            "wheels": [w.to_dict() for w in self.wheels],
        }
