"""The verdict: the most compatible policy whose rules all hold, and the findings that explain it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from fnmatch import fnmatch
from typing import Any

from wheelcheck.audit.audit_options import AuditOptions
from wheelcheck.audit.checks import CHECKS, CheckContext, Fact
from wheelcheck.audit.constraints import Constraint, collect_constraints
from wheelcheck.audit.file_analyses import FileAnalysis, analyse_files
from wheelcheck.wheel.wheel_model import WheelModel
from wheelcheck.wheel.library_resolution import LIBPYTHON, resolve
from wheelcheck.elf.elf_info import ElfInfo, is_dynamic_loader, libc_linked, libc_of_elf
from wheelcheck.errors import UsageError
from wheelcheck.policy.policy_model import Policy, PolicySet, glibc_of_tag
from wheelcheck.audit.findings import FileReport, Finding, WheelReport, reaches
from wheelcheck.audit.package_findings import package_findings
from wheelcheck.audit.python_abi import python_abi_findings
from wheelcheck.audit.variant_findings import variant_metadata_findings
from wheelcheck.audit.variant_properties import pure_variant

__all__ = ["Judgement", "assess", "judge", "libc_of_elf", "wheel_platform", "apply_rule_settings", "finding_order"]


@dataclass(frozen=True)
class Judgement:
    """The report with what it was decided from, for views that need more than the findings
    (``wheelcheck show`` lists what every more compatible policy would still forbid)."""

    report: WheelReport
    arch: str | None = None
    policies: tuple[Policy, ...] = ()  # for the wheel's libc and arch, most compatible first
    constraints: tuple[Constraint, ...] = ()
    verdict: Policy | None = None  # the policy the wheel deserves (report.deserved_tag); None for a pure wheel
    target: Policy | None = None  # the policy it must meet (report.required_tag): its best claim, or --plat
    analyses: Mapping[str, FileAnalysis] = field(default_factory=dict)  # each judged file's own analysis, by path


def judge(model: WheelModel, options: AuditOptions) -> WheelReport:
    return assess(model, options).report


def assess(model: WheelModel, options: AuditOptions) -> Judgement:
    report = WheelReport(filename=model.filename, claimed_tags=[t for t in model.platforms])
    _check_record(model, report)
    report.findings += package_findings(model, options)
    report.findings += variant_metadata_findings(model)
    report.findings += python_abi_findings(model)  # the Python and ABI tags against the extension modules
    report.findings += _odd_members(model)
    if not model.elves:
        report.pure = True
        report.variant, unverified = pure_variant(model)
        report.findings += unverified
        if model.linux_platforms:  # a claim nothing in the wheel can break, but a claim all the same
            arch, libc = wheel_platform(model)
            target = _target(model, options.policies, arch, libc, _asked(model, options, arch, libc))
            report.required_tag = _tag(target, arch) if target else None
            report.required_met = True if target else None
        report.passed = not reaches(report.findings, options.fail_on)
        return Judgement(report)
    arch, libc = wheel_platform(model)
    report.arch, report.libc = arch, libc
    elves = _platform_elves(model, arch, libc, report)
    policies = options.policies.for_platform(libc, arch)
    resolution = resolve(model, elves, libc)
    constraints = collect_constraints(
        model, elves, resolution, arch, options.exclude, options.external, policies, libc)
    if not options.isa_check:
        constraints = [c for c in constraints if c.rule != "isa-level"]

    verdict = next(p for p in policies if all(c.allows(p) for c in constraints))
    report.findings += _other_libc_claims(model, elves, arch, libc)
    report.findings += _extensions_for_any_platform(model, elves, arch, libc)
    # every ELF file set aside, on a platform the policies cover (a wheel for mips64, which none does, is judged
    # linux_mips64 with its files' wrong-architecture warnings: docs/differences.md 3)
    if not elves and model.linux_platforms and len(policies) > 1:
        verdict = policies[-1]
        report.findings.append(Finding(
            "no-platform-elf", "error", None,
            f"none of its {len(model.elves)} ELF file{'s' if len(model.elves) != 1 else ''} is for {arch} {libc}, "
            f"the platform its tags claim: nothing in it can load there",
            "build the wheel on the platform it claims, or name it for the platform it was built for",
            cause=f"has no {arch} {libc} ELF file"))
    asked = _asked(model, options, arch, libc)
    target = _target(model, options.policies, arch, libc, asked)
    report.deserved_tag = _tag(verdict, arch)
    report.deserved_tags = verdict.tags(arch) if not verdict.is_linux else [report.deserved_tag]
    report.required_tag = _tag(target, arch) if target else None
    report.required_met = None if target is None else _meets(target, verdict, constraints)
    report.findings += _explain(constraints, policies, verdict, target, arch)
    report.findings += _plat_not_applied(options, asked, libc)
    report.findings += _unchecked_claims(model, options.policies, verdict, arch, libc)
    if libc == "musl" and not verdict.is_linux:
        report.findings.append(Finding(
            "musl-version", "info", None,
            f"musl has no symbol versions: nothing in the wheel tells musl 1.1 from 1.2, so the verdict "
            f"is the newest musllinux policy whose other rules hold ({verdict.name})"))
    analyses = analyse_files(elves, options.jobs, model.analysis_of)
    context = CheckContext(model, elves, resolution, arch, libc, verdict, target, options, tuple(policies), analyses)
    facts: dict[str | None, dict[str, Any]] = {}  # a Fact's name says what its value is
    for check in CHECKS:
        for item in check(context):
            if isinstance(item, Fact):
                facts.setdefault(item.file, {})[item.name] = item.value
            else:
                report.findings.extend(apply_rule_settings(item, context.policy.rules))
    report.cxx_abi = facts.get(None, {}).get("cxx_abi")
    report.variant = facts.get(None, {}).get("variant")
    report.versioned_symbols = _versioned_symbols(elves, options, resolution, policies, arch)
    report.external_libs = sorted({c.key[0] for c in constraints
                                   if c.rule == "external-library" and not c.allows(policies[0])})
    report.files = [_file_report(e, facts.get(e.path, {})) for e in elves]
    report.findings.sort(key=finding_order)
    report.passed = not reaches(report.findings, options.fail_on)
    return Judgement(report, arch, tuple(policies), tuple(constraints), verdict, target, analyses)


_SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


def finding_order(finding: Finding) -> tuple:
    """How a report lists its findings: by file, errors first, then by rule and message."""
    return finding.file or "", _SEVERITY_ORDER[finding.severity], finding.rule, finding.message


def _tag(policy: Policy, arch: str) -> str:
    return policy.tag(arch)


def _meets(target: Policy, verdict: Policy, constraints: list[Constraint]) -> bool:
    """Does a wheel whose constraints make it deserve ``verdict`` meet ``target``? A target made for a claim between
    two rungs (manylinux_2_25) is met when every constraint allows it, though ``verdict`` is the next rung up; a
    wheel that deserves plain linux (none of its files is for its platform) meets no such claim."""
    if target.made_for_claim:  # made from a manylinux or musllinux rung: never plain linux itself
        return not verdict.is_linux and all(c.allows(target) for c in constraints)
    return verdict.meets(target)


def _explain(constraints: list[Constraint], policies: list[Policy], verdict: Policy,
             target: Policy | None, arch: str) -> list[Finding]:
    """A finding for each constraint that fails the target or binds the verdict; the rest are moot."""
    findings = []
    seen = set()
    for c in constraints:
        if c.allows(policies[0]):
            continue
        identity = (c.rule, c.file, c.key, c.what)
        if identity in seen:
            continue
        seen.add(identity)
        limit = next(p for p in policies if c.allows(p))
        # a target made for a claim (manylinux_2_30) sits between two rungs: the rule itself tells, not the rung
        if target is not None and not (c.allows(target) if target.made_for_claim else limit.meets(target)):
            severity = "error"
        elif limit == verdict:
            severity = "warning" if verdict.is_linux else "info"
        else:
            continue
        # the claim between two rungs that allows what the next rung up is needed for among the policies
        claim = f" (the claim {target.name} allows it)" if target is not None and target.made_for_claim \
            and target.priority > limit.priority and c.allows(target) else ""
        findings.append(Finding(
            rule=c.rule, severity=severity, file=c.file,
            message=f"{c.what} → {limit.name} at best{claim}",
            hint=c.hint, symbols=c.symbols, limit=_tag(limit, arch),
            cause=f"{c.cause or c.what} → {limit.name} at best", subject=c.subject, count=len(c.symbols)))
    return findings


def _asked(model: WheelModel, options: AuditOptions, arch: str, libc: str) -> Policy | None:
    """The policy --plat asks of this wheel (None: nothing asked, or a policy of the other libc)."""
    try:
        return options.policies.resolve(options.plat, arch, libc)
    except UsageError as exc:
        raise UsageError(model.filename, f"{exc.path} {exc.problem}") from None


def _target(model: WheelModel, policies: PolicySet, arch: str, libc: str, asked: Policy | None) -> Policy | None:
    """The most demanding of the wheel's claimed tags (for its arch and libc) and --plat."""
    candidates = [policies.claimed(name, arch, libc) for name, tag_arch in model.linux_platforms if tag_arch == arch]
    return max((p for p in [*candidates, asked] if p is not None), key=lambda p: p.priority, default=None)


def _plat_not_applied(options: AuditOptions, asked: Policy | None, libc: str) -> list[Finding]:
    """An arch-less --plat of the other libc's policy (manylinux_2_28 on a musl wheel) is not this wheel's."""
    if asked is not None or not isinstance(options.plat, str) or options.plat in ("", "auto"):
        return []
    other = options.policies.find(options.plat)
    return [Finding("plat-other-libc", "info", None,
                    f"--plat {options.plat} is a {other.libc if other else 'different'} policy and this wheel "
                    f"is for {libc}: it is held to the tags it claims",
                    "name this wheel's policy too, or audit the glibc and musl wheels separately")]


def _unchecked_claims(model: WheelModel, policies: PolicySet, verdict: Policy, arch: str,
                      libc: str) -> list[Finding]:
    """A tag the wheel claims for its platform that no policy given stands for (manylinux1 on aarch64, a glibc
    newer than every policy's): nothing checks its promise, so it is an error rather than a claim dropped. A
    verdict of a glibc policy implies every newer manylinux_X_Y tag, and passes it."""
    findings = []
    for name, tag_arch in sorted(set(model.linux_platforms)):
        other_libc = name.startswith("musllinux") != (libc == "musl")  # told by wrong-libc already
        if tag_arch != arch or name == "linux" or other_libc or policies.claimed(name, arch, libc) is not None:
            continue
        claimed, deserved = glibc_of_tag(name), glibc_of_tag(verdict.name)
        if claimed and deserved and deserved <= claimed:
            continue
        findings.append(Finding(
            "claim-without-policy", "error", None,
            f"claims {name}_{arch}, which no policy given defines for {arch} {libc}: nothing checks what the tag "
            f"promises",
            f"name the wheel for a tag these policies define (it deserves {_tag(verdict, arch)})",
            cause=f"claims {name}_{arch}, which no policy defines"))
    return findings


def wheel_platform(model: WheelModel) -> tuple[str, str]:
    """(architecture, libc) the wheel is judged for: its platform tags' when it has some, else its ELF files'."""
    return _wheel_arch(model), _wheel_libc(model)


def _wheel_arch(model: WheelModel) -> str:
    arches = [a for _, a in model.linux_platforms]
    if arches:
        return Counter(arches).most_common(1)[0][0]
    counts: Counter[str] = Counter()
    size: Counter[str] = Counter()
    for e in model.elves:
        if e.arch:
            counts[e.arch] += 1
            size[e.arch] += e.size
    # most files, then most bytes, then the name: never the order a zip tool wrote the members in
    return max(counts, key=lambda arch: (counts[arch], size[arch], arch), default="unknown")


def _wheel_libc(model: WheelModel) -> str:
    for name, _ in model.linux_platforms:
        if name.startswith("musllinux"):
            return "musl"
        if name.startswith("manylinux"):
            return "glibc"
    # a bare "libc.so" is musl's (zig links musl so): glibc's loader cannot load it, glibc's libc.so being a script
    found = [libc_linked(e) for e in model.elves]
    return "musl" if "musl" in found else "glibc"  # hermetic: no libc named anywhere means glibc


# ELF files of code for a device, which a driver or runtime loads (CUDA cubins, AMD GPU code objects, eBPF
# programs, Intel GPU and OpenCL kernels, the last often with no machine at all): never the CPU's loader
_DEVICE_MACHINES = frozenset({"EM_CUDA", "EM_AMDGPU", "EM_BPF", "EM_INTEL205", "EM_NONE"})


def _other_libc_claims(model: WheelModel, elves: list[ElfInfo], arch: str, libc: str) -> list[Finding]:
    """A wheel judged for one libc that also claims the other's tags (manylinux_2_17 and musllinux_1_1): true only
    of files that need neither libc (static or libc-free), not of those that link this one."""
    other = "musllinux" if libc == "glibc" else "manylinux"
    claims = sorted(f"{name}_{tag_arch}" for name, tag_arch in model.linux_platforms
                    if tag_arch == arch and name.startswith(other))
    linked = [e.path for e in elves if libc_of_elf(e) == libc]
    if not claims or not linked:
        return []
    return [Finding(
        "wrong-libc", "error", path,
        f"links {libc} but the wheel also claims {', '.join(claims)}: it cannot load on "
        f"{'musl' if libc == 'glibc' else 'glibc'}",
        "drop the other libc's tags, or publish a wheel built for each libc",
        cause=f"links {libc}, and the wheel claims the other libc's tags too") for path in linked]


def _extensions_for_any_platform(model: WheelModel, elves: list[ElfInfo], arch: str, libc: str) -> list[Finding]:
    """Python extension modules in a wheel tagged for every platform (py3-none-any): pip installs it on every
    architecture and system, and Python's import loads the module wherever its file is, so the import fails on
    all but the one it was built for. A library the package loads with ctypes is not one: the package may choose
    the build for the machine it runs on, or go without (pvporcupine, teradatasql). Nor is an extension of which the
    wheel carries builds for other architectures too: the package imports the one for the machine it runs on."""
    if model.platforms != ["any"] or any(elf.arch != arch and elf.is_extension for elf in model.elves):
        return []
    tag = sorted(str(t) for t in model.tags)[0]
    return [Finding(
        "extension-in-any-wheel", "warning", elf.path,
        f"is a Python extension module built for {arch} {libc}, in a wheel tagged for every platform ({tag}): pip "
        f"installs it on other architectures and systems too, where importing it fails",
        "tag the wheel for the platform it was built for (wheelcheck repair does, as auditwheel repair does), or "
        "publish one wheel per platform", cause="is a Python extension module in a wheel tagged for every platform")
        for elf in elves if elf.is_extension]


def _platform_elves(model: WheelModel, arch: str, libc: str, report: WheelReport) -> list[ElfInfo]:
    out = []
    # a wheel that claims no platform (py3-none-any) may carry a build per architecture for ctypes to choose from
    # at run time (pvporcupine, teradatasql): only one architecture is judged, the rest is expected there
    claims = bool(model.linux_platforms)
    for elf in model.elves:
        if elf.machine in _DEVICE_MACHINES:
            report.findings.append(Finding(
                "device-code", "info", elf.path,
                f"is code for a device ({elf.machine}), which its driver or runtime loads, not the dynamic "
                f"loader; it is left out of the verdict", "nothing to do",
                cause="is code for a device; it is left out of the verdict", subject=elf.machine))
            continue
        if elf.arch != arch:
            why = elf.arch_problem or f"built for {elf.arch}"
            report.findings.append(Finding(
                "wrong-architecture", "warning" if claims else "info", elf.path,
                f"is not an ELF file for {arch} ({why}); it is left out of the verdict",
                "remove it, or build it for the wheel's architecture" if claims
                else "nothing to do if the package loads the build for the machine it runs on",
                cause=f"is not an ELF file for {arch}; it is left out of the verdict"))
            continue
        elf_libc = libc_linked(elf)
        if elf_libc is not None and elf_libc != libc:
            # as for architectures: a wheel that claims no platform may carry a build per libc (tigerbeetle)
            report.findings.append(Finding(
                "wrong-libc", "warning" if claims else "info", elf.path,
                f"links {elf_libc} but the wheel is for {libc}; it is left out of the verdict",
                "build every ELF file of the wheel against the same libc" if claims
                else "nothing to do if the package loads the build for the libc it runs on"))
            continue
        out.append(elf)
    return out


def _versioned_symbols(elves: list[ElfInfo], options: AuditOptions, resolution, policies: list[Policy],
                       arch: str) -> dict[str, list[str]]:
    merged: dict[str, set[str]] = {}
    sources = list(elves) + [options.external[s] for s in _external_found(options, resolution, policies, arch)]
    for elf in sources:
        for lib, versions in elf.versioned_symbols().items():
            merged.setdefault(lib, set()).update(versions)
    return {lib: sorted(v) for lib, v in sorted(merged.items())}


def _external_found(options: AuditOptions, resolution, policies: list[Policy], arch: str) -> list[str]:
    """The libraries found on --lib-path that repair would graft: what the wheel needs from outside, and their
    own needs, short of what the system provides (libstdc++.so.6 beside libsnappy.so.1), as the constraints
    follow them and auditwheel lists their symbol versions."""
    def grafted(soname: str) -> bool:
        return soname in options.external and not is_dynamic_loader(soname) and not LIBPYTHON.match(soname) \
            and not any(p.provides(soname, arch) for p in policies) \
            and not any(fnmatch(soname, pattern) for pattern in options.exclude)

    wanted = sorted(s for s in {s for _, s in resolution.unresolved} if grafted(s))
    seen = set(wanted)
    for soname in wanted:
        for dep in options.external[soname].needed:
            if dep not in seen and grafted(dep):
                seen.add(dep)
                wanted.append(dep)
    return wanted


def apply_rule_settings(finding: Finding, rules: Mapping[str, str]) -> list[Finding]:
    """A policy's ``rules`` object: rule id -> severity, or "off" to drop the rule's findings."""
    setting = rules.get(finding.rule)
    if setting is None or setting == finding.severity:
        return [finding]
    return [] if setting == "off" else [replace(finding, severity=setting)]


def _file_report(elf: ElfInfo, facts: Mapping[str, Any]) -> FileReport:
    exposure = facts.get("exposure") or {}
    return FileReport(
        path=elf.path, arch=elf.arch, soname=elf.soname, needed=list(elf.needed), rpath=list(elf.rpath),
        runpath=list(elf.runpath), is_extension=elf.is_extension, versioned_symbols=elf.versioned_symbols(),
        isa_level=elf.isa_level, exported_symbols=exposure.get("exports", 0), cxx_abi=facts.get("cxx_abi"),
        exposure=facts.get("exposure"), runtime_libraries=list(facts.get("runtime_libraries", ())),
        isa_code=facts.get("isa_code"), gpu_code=elf.gpu_code.to_dict() if elf.gpu_code else None)


def _odd_members(model: WheelModel) -> list[Finding]:
    """Members installers write other than they look: links, and libraries that hold no ELF file."""
    findings = [Finding(
        "symlink-member", "warning", member,
        f"is stored as a symbolic link to {target!r}: installers write it as a regular file holding that path",
        "store the file itself under this name, or drop the link (the loader finds a library by the name "
        "in DT_NEEDED, which its soname gives)",
        cause="is stored as a symbolic link")
        for member, target in model.links]
    findings += [Finding(
        "not-elf-library", "warning", member, f"is named like a shared library but holds {what}",
        "remove it or rename it, or ship the library built for this platform",
        cause="is named like a shared library but holds no ELF file")
        for member, what in model.not_elf_libraries]
    findings += [Finding(
        "debug-info-file", "info", member,
        "is a separate debug-information file (the binary's headers, none of its code or data); nothing loads it, "
        "so it is left out of the verdict",
        "ship debug information apart from the wheel (a debuginfod server, a separate archive): users download it "
        "for nothing", cause="is a separate debug-information file")
        for member in model.debug_files]
    return findings


def _check_record(model: WheelModel, report: WheelReport) -> None:
    for member, problem in model.record_problems:
        report.findings.append(Finding(
            "record-hash", "error", member, problem,
            "the wheel was changed after RECORD was written; rebuild it or regenerate RECORD",
            cause=problem.partition(" (")[0]))
    for member in model.record_in_hex:
        report.findings.append(Finding(
            "record-hash-hex", "warning", member,
            "has the right hash in RECORD, written in hex where the wheel format wants urlsafe base64",
            "rebuild with a backend that writes RECORD as the format says (uv_build 0.8.13 or newer), or let "
            "`wheelcheck repair` rewrite RECORD", cause="has its RECORD hash written in hex"))
