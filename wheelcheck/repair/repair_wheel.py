"""Repair one wheel, step by step: scan, look up on the host, plan, patch, re-audit, retag, write.

Nothing is written unless every step succeeds and the re-audit of the new contents meets the target; the
output appears atomically (see ``wheel.writer.atomic_output``). The input is only read.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from packaging.utils import parse_wheel_filename

from wheelcheck.wheel.wheel_model import WheelModel
from wheelcheck.wheel.library_resolution import resolve
from wheelcheck.audit.verdict import AuditOptions, judge, libc_of_elf
from wheelcheck.data import system_drivers
from wheelcheck.elf.elf_info import ElfInfo
from wheelcheck.errors import OutputError, RepairError
from wheelcheck.host.search_paths import host_search_path
from wheelcheck.host.host_library_search import locate_libraries, typical_elf
from wheelcheck.policy.policy_model import LINUX, Policy, PolicySet
from wheelcheck.repair.graft_apply import Applied, apply_plan, repaired_model
from wheelcheck.repair.hide_apply import hide_symbols
from wheelcheck.repair.graft_plan import RepairPlan, make_plan, never_grafted
from wheelcheck.repair.predict_model import predict
from wheelcheck.repair.retag import added_platforms, removed_platforms, retag_filename, retag_wheel_text
from wheelcheck.repair.repair_target import Choice, choose_plan, meets, policy_of_tag, requested_policy
from wheelcheck.audit.findings import WheelReport
from wheelcheck.repair.repair_outcome import GraftedLibrary, HiddenSymbols, PatchedFile, RepairOutcome
from wheelcheck.wheel.scanner import Progress, scan_wheel
from wheelcheck.wheel.wheel_reader import WheelReader
from wheelcheck.sbom.wheel_sbom import repaired_wheel_sbom, sbom_member
from wheelcheck.wheel.wheel_rebuild import NewMember, rebuild_wheel, reproducible_date_time

__all__ = ["RepairOptions", "repair_wheel"]


@dataclass(frozen=True)
class RepairOptions:
    policies: PolicySet
    out_dir: Path
    plat: str | None = None  # None or "auto": the best reachable policy
    exclude: tuple[str, ...] = ()
    lib_path: tuple[str, ...] = ()
    level: int = 6  # deflate level of changed and new members
    jobs: int | None = None
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)
    hide_symbols: bool = False  # hide/rename the symbols of vendored libraries (repair/hide.py)
    hide_extension_symbols: bool = False  # and hide extension modules' exports but PyInit_*
    keep_symbols: tuple[str, ...] = ()  # globs of names never hidden or renamed
    lib_sdir: str = ".libs"  # grafted libraries go to <dist><lib_sdir>/ (auditwheel's -L)
    only_plat: bool = False  # tag with --plat only, even if the wheel reaches a better policy
    strip: bool = False  # strip -s the grafted libraries and extension modules (auditwheel's --strip)
    isa_check: bool = True  # False: do not judge the x86-64 ISA level (--disable-isa-ext-check)


def repair_wheel(path: str | Path, options: RepairOptions, progress: Progress | None = None) -> RepairOutcome:
    """Repair one wheel. Raises WheelcheckError subclasses for bad input, missing libraries, write errors.

    ``progress(done, total)`` follows the reading of the wheel's ELF members, the long part of a repair."""
    path = Path(path)
    model = scan_wheel(path, jobs=options.jobs, progress=progress)
    outcome = RepairOutcome(filename=model.filename, target_tag=None)
    if not model.elves:
        outcome.status, outcome.message = "pure", "no ELF file: nothing to repair, nothing written"
        return outcome
    audit_options = AuditOptions(options.policies, exclude=options.exclude, isa_check=options.isa_check)
    before = judge(model, audit_options)
    arch, libc = before.arch or "unknown", before.libc or "glibc"
    outcome.arch, outcome.libc = arch, libc
    candidates = [p for p in options.policies.for_platform(libc, arch) if not p.is_linux]
    named = [p for p in options.policies if p.libc == libc and p.supports(arch) and not p.is_linux]
    requested = requested_policy(options.plat, named, arch, libc)  # musllinux_1_1 too, though only 1_2 is judged
    outcome.target_tag = requested.tag(arch) if requested else None
    choice, located = _choose(model, options, audit_options, arch, libc, candidates, requested)
    if choice is None or choice.verdict.is_linux or (requested is not None and not meets(choice.verdict, requested)):
        return _unreachable(outcome, choice, requested, arch, candidates, options)
    with WheelReader(path) as reader:
        strip = tuple(e.path for e in model.elves if e.is_extension) if options.strip else None
        applied = apply_plan(choice.plan, reader, located, strip=strip)
        if options.only_plat and requested is not None:
            add = requested.tags(arch)  # auditwheel --only-plat: the asked tag, not a better one
        else:
            add = added_platforms(choice.verdict, requested, arch)
        remove = removed_platforms(sorted({t.platform for t in model.tags}), arch, choice.verdict,
                                   lambda name: policy_of_tag(name, candidates))
        filename = retag_filename(model.filename, add, remove)
        wheel_name = f"{reader.dist_info}/WHEEL"
        wheel_text = reader.read_text(wheel_name)
        new_wheel_text = retag_wheel_text(wheel_text, add, remove)
        if new_wheel_text != wheel_text:
            applied.replace[wheel_name] = new_wheel_text.encode("utf-8")
        final = repaired_model(model, choice.plan, applied, filename, parse_wheel_filename(filename)[3])
        hiding = None
        if options.hide_symbols or options.hide_extension_symbols:
            final, hiding = hide_symbols(final, applied, reader, keep_patterns=options.keep_symbols,
                                         extensions=options.hide_extension_symbols, lib_sdir=options.lib_sdir)
        after = judge(final, audit_options)
        reached = policy_of_tag(after.best_tag or "linux", candidates)
        if reached is None or not meets(reached, choice.verdict):
            raise RepairError(str(path), f"the patched files reach {after.best_tag}, not the planned "
                                         f"{choice.verdict.tag(arch)} (an ELF edit did not do what it should)")
        sbom = _add_sbom(applied, final, choice.plan, reader, options.environ)
        out_path = _output_dir(Path(options.out_dir)) / filename
        if out_path.exists() and out_path.resolve() == path.resolve():
            raise OutputError(str(out_path), "the output would replace the input wheel; choose another -w directory")
        try:
            stats = rebuild_wheel(reader, out_path, replace=applied.replace, add=applied.add,
                                  date_time=reproducible_date_time(reader, options.environ), level=options.level,
                                  rehash={m for m, _ in model.record_problems})
        except OSError as exc:
            raise OutputError(str(out_path), f"cannot write the repaired wheel ({exc.strerror or exc})") from None
    outcome.output = str(out_path)
    outcome.best_tag = after.best_tag
    outcome.platform_tags = filename[: -len(".whl")].rpartition("-")[2].split(".")
    outcome.findings = list(after.findings)
    outcome.copied_members, outcome.written_members = stats.copied, stats.written
    outcome.sbom = sbom
    _describe(outcome, choice.plan)
    if hiding is not None:
        outcome.hidden = [HiddenSymbols(h.path, h.exports, len(h.hidden), dict(h.renamed), dict(h.kept))
                          for h in hiding.libraries]
    return outcome


def _add_sbom(applied: Applied, final: WheelModel, plan: RepairPlan, reader: WheelReader,
              environ: Mapping[str, str]) -> str | None:
    """Put the repaired wheel's CycloneDX SBOM in ``applied`` (PEP 770); the member's name, or None.

    Written when this repair grafts a library (auditwheel's occasion) or the wheel carries one to keep true;
    a wheel that needs nothing grafted passes through unchanged."""
    name = sbom_member(reader.dist_info)
    grafted = {g.member: g.source for g in plan.grafts if not g.in_wheel}
    present = name in reader.file_sizes()
    if not grafted and not present:
        return None
    document = repaired_wheel_sbom(final, grafted, reader, environ)
    if document is None:
        return name if present else None
    if not present:
        applied.add[name] = NewMember(document)
    elif reader.read(name) != document:
        applied.replace[name] = document
    return name


def _choose(model: WheelModel, options: RepairOptions, audit_options: AuditOptions, arch: str, libc: str,
            candidates: list[Policy], requested: Policy | None):
    elves = [e for e in model.elves if e.arch == arch and libc_of_elf(e) in (None, libc)]
    if not elves or not candidates:
        return None, None  # an architecture no policy covers: nothing to aim at
    resolution = resolve(model, elves)
    drivers = system_drivers().union(*(p.drivers for p in candidates))
    everywhere = frozenset.intersection(*(p.whitelist(arch) for p in candidates)) if candidates else frozenset()

    def skip(soname: str) -> bool:
        return soname in everywhere or never_grafted(soname, options.exclude, drivers) is not None

    search = host_search_path(libc, arch, lib_path=options.lib_path, environ=options.environ)
    located = locate_libraries(model, resolution, search, typical_elf(elves), skip=skip,
                               compatible=lambda info: _host_libc(info) in (None, libc))

    def plan_for(policy: Policy) -> RepairPlan:
        return make_plan(model, elves, resolution, located, policy, arch, exclude=options.exclude, drivers=drivers,
                         lib_sdir=options.lib_sdir)

    def verdict_of(plan: RepairPlan) -> tuple[Policy, WheelReport, WheelModel]:
        planned = predict(model, plan, located)
        report = judge(planned, audit_options)
        return policy_of_tag(report.best_tag or "linux", candidates) or LINUX, report, planned

    try:
        return choose_plan(candidates, requested, plan_for, verdict_of, located), located
    except RepairError as exc:
        raise RepairError(f"{model.filename}:{exc.path}", exc.problem) from None


def _host_libc(info: ElfInfo) -> str | None:
    """The libc a host library links; a bare ``libc.so`` in DT_NEEDED is musl's (glibc's is libc.so.6)."""
    return libc_of_elf(info) or ("musl" if "libc.so" in info.needed else None)


def _unreachable(outcome: RepairOutcome, choice: Choice | None, requested: Policy | None, arch: str,
                 candidates: list[Policy], options: RepairOptions) -> RepairOutcome:
    outcome.status = "failed"
    if choice is None:
        outcome.message = f"no policy covers {arch}: nothing written"
        return outcome
    outcome.best_tag = choice.report.best_tag
    target = requested or candidates[-1]  # auto: not even the least compatible policy is reached
    wanted = requested.tag(arch) if requested else "any manylinux or musllinux tag"
    outcome.message = f"cannot reach {wanted}: the repaired wheel would be {choice.report.best_tag}; nothing written"
    # judged against the target alone (claims in the file name left out): its errors are what stands in the way
    against = judge(replace(choice.model, tags=frozenset()),
                    AuditOptions(options.policies, plat=target.tag(arch), exclude=options.exclude,
                                 isa_check=options.isa_check))
    outcome.findings = [f for f in against.findings if f.severity == "error"]
    _describe(outcome, choice.plan)
    return outcome


def _describe(outcome: RepairOutcome, plan: RepairPlan) -> None:
    outcome.grafted = [GraftedLibrary(list(g.needed_as), g.source, g.realpath, g.sha256, g.member, g.new_name,
                                      g.in_wheel) for g in plan.grafts]
    outcome.patched = [PatchedFile(
        member=e.member, replaced_needed=dict(e.patch.replace_needed), removed_needed=list(e.patch.remove_needed),
        rpath_before=list(e.rpath_before), rpath_after=None if e.patch.rpath is None else list(e.patch.rpath),
        dropped_rpath=list(e.dropped_rpath), moved_to=e.moved_to) for e in plan.edits]
    outcome.kept_external = dict(plan.kept)


def _output_dir(out_dir: Path) -> Path:
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(str(out_dir), f"cannot create the output directory ({exc.strerror or exc})") from None
    if not out_dir.is_dir():
        raise OutputError(str(out_dir), "is not a directory")
    return out_dir
