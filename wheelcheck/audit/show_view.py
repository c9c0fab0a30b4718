"""auditwheel show's answer, computed from wheelcheck's judgement of a wheel.

``auditwheel show`` reports the overall tag, the tag the symbol versions alone allow, three linux-only
flags, the versioned symbols, the external libraries, and what each more compatible policy would still
need eliminated. All of it follows from the verdict's constraints: a constraint says which policies it
allows, so "what policy P forbids" is the constraints that do not allow P.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from wheelcheck.audit.audit_options import AuditOptions
from wheelcheck.audit.verdict import Judgement
from wheelcheck.policy.policy_model import Policy

__all__ = ["ShowView", "show_view"]


@dataclass(frozen=True)
class ShowView:
    wheel: str
    pure: bool = False
    overall_tag: str | None = None
    sym_tag: str | None = None
    pyfpe: bool = False
    ucs2: bool = False
    unsupported_isa: bool = False
    versioned_symbols: dict[str, list[str]] = field(default_factory=dict)
    external_libs: dict[str, str | None] = field(default_factory=dict)  # vs the most compatible policy
    external_libs_newest: dict[str, str | None] = field(default_factory=dict)  # vs the least compatible one
    policy_upgrades: dict[str, dict] = field(default_factory=dict)  # tag -> libs_to_eliminate, blacklisted_symbols
    symbols_limit: bool = False  # the symbol versions alone keep the tag below the most compatible policy
    variant: dict | None = None  # a variant wheel's label and properties judged (WheelReport.variant); auditwheel
    # reads no variant wheel, so its document gains the key for these only

    def as_auditwheel_json(self) -> dict:
        """The document ``auditwheel show --json`` (6.8.2) prints, key for key."""
        variant = {} if self.variant is None else {"variant": self.variant}
        if self.pure:
            return {"version": 1, "wheel": self.wheel, "pure": True, **variant}
        return {
            "version": 1, "wheel": self.wheel, "pure": False, "overall_tag": self.overall_tag,
            "sym_tag": self.sym_tag, "pyfpe": self.pyfpe, "ucs2": self.ucs2,
            "unsupported_isa": self.unsupported_isa, "versioned_symbols": self.versioned_symbols,
            "external_libs": self.external_libs, "policy_upgrades": self.policy_upgrades, **variant,
        }


def show_view(judgement: Judgement, options: AuditOptions) -> ShowView:
    report = judgement.report
    if report.pure:
        return ShowView(report.filename, pure=True, variant=report.variant)
    arch, policies, constraints = judgement.arch, judgement.policies, judgement.constraints
    assert arch is not None and report.deserved_tag is not None, "a judged binary wheel has both"
    by_tag = {p.tag(arch): p for p in policies}
    overall = by_tag[report.deserved_tag]
    symbol_rules = [c for c in constraints if c.rule == "symbol-version"]
    sym = next(p for p in policies if all(c.allows(p) for c in symbol_rules))
    real = [p for p in policies if not p.is_linux]

    def external(policy: Policy) -> dict[str, str | None]:
        sonames = sorted({c.key[0] for c in constraints if c.rule == "external-library" and not c.allows(policy)})
        return {s: (options.external[s].path if s in options.external else None) for s in sonames}

    upgrades: dict[str, dict] = {}
    for policy in reversed(policies):  # auditwheel's order: least compatible first
        if policy.priority <= overall.priority:
            continue
        entry: dict = {}
        libs = external(policy)
        if libs:
            entry["libs_to_eliminate"] = sorted(libs)
        blacklisted = _blacklisted(constraints, policy)
        if blacklisted:
            entry["blacklisted_symbols"] = blacklisted
        if entry:
            upgrades[policy.tag(arch)] = entry
    rules = {c.rule for c in constraints}
    return ShowView(
        wheel=report.filename,
        overall_tag=report.deserved_tag,
        sym_tag=sym.tag(arch),
        pyfpe="pyfpe-jbuf" in rules,
        ucs2="ucs2" in rules,
        unsupported_isa="isa-level" in rules,
        versioned_symbols=dict(report.versioned_symbols),
        external_libs=external(policies[0]),
        external_libs_newest=external(real[-1] if real else policies[-1]),
        policy_upgrades=upgrades,
        symbols_limit=sym.priority < policies[0].priority,
        variant=report.variant,
    )


def _blacklisted(constraints, policy: Policy) -> dict[str, list[str]]:
    """library -> the symbols of it that ``policy`` forbids and the wheel uses."""
    out: dict[str, set[str]] = {}
    for c in constraints:
        if c.rule != "blacklisted-symbol" or c.allows(policy):
            continue
        lib = c.key[0]
        listed = policy.blacklist.get(lib, frozenset())
        used = set(c.symbols) if "*" in listed else set(c.symbols) & set(listed)
        out.setdefault(lib, set()).update(used)
    return {lib: sorted(symbols) for lib, symbols in sorted(out.items()) if symbols}
