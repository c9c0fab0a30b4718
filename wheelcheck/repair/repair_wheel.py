"""Repair one wheel: source -> core -> destination, as pypa/installer installs one.

- source: the input wheel, opened once (``WheelReader``); it is scanned into a model, read for the members
  the plan changes, and copied raw into the output. It is only read.
- core: look up what the wheel needs on the host, plan (pure), apply the plan (patchelf, LIEF) to files in a
  private work directory (the changed ELF files are never held whole in memory), retag. Each step returns
  new values (``Changes``, a ``WheelModel``); nothing is changed in place.
- destination: ``rebuild_wheel`` writes the output atomically (see ``wheel.wheel_writer.atomic_output``),
  each member written anew with the RECORD row the writer computed from the bytes it wrote.

A wheel is judged 1 + N times: once per distinct plan the target search tries (a prediction: no byte is
changed) and once on the real bytes of the chosen plan, which decide. Nothing is written unless that last
judgement meets the target.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

from wheelcheck.audit.audit_options import AuditOptions
from wheelcheck.audit.findings import WheelReport
from wheelcheck.audit.runtime_deps import drivers_of
from wheelcheck.audit.verdict import apply_rule_settings, assess, judge, libc_of_elf, wheel_platform
from wheelcheck.elf.elf_info import libc_linked
from wheelcheck.errors import BadElfError, OutputError, RepairError, UsageError
from wheelcheck.host.host_library_search import Located, locate_libraries, typical_elf
from wheelcheck.host.search_paths import host_search_path
from wheelcheck.policy.policy_model import LINUX, Policy
from wheelcheck.repair.graft_apply import apply_plan, repaired_model
from wheelcheck.repair.graft_licenses import Licensing, plan_licenses
from wheelcheck.repair.graft_plan import RepairPlan, make_plan, never_grafted, with_graft_names
from wheelcheck.repair.hide_apply import Hidden, hide_symbols
from wheelcheck.repair.predict_model import predict
from wheelcheck.repair.repair_options import RepairOptions
from wheelcheck.repair.host_plugins import host_plugin_findings, host_plugins
from wheelcheck.repair.repair_outcome import GraftedLibrary, GraftedLicense, HiddenSymbols, PatchedFile, RepairOutcome
from wheelcheck.repair.repair_target import Choice, choose_plan
from wheelcheck.repair.retag import added_platforms, removed_platforms, retag_filename, retag_wheel_text
from wheelcheck.wheel.library_resolution import resolve
from wheelcheck.wheel.package_checks import rewritten
from wheelcheck.wheel.scanner import Progress, scan_reader
from wheelcheck.wheel.wheel_filename import parse_wheel_filename, platform_component
from wheelcheck.wheel.wheel_model import WheelModel
from wheelcheck.wheel.wheel_reader import WheelReader
from wheelcheck.sbom.wheel_sbom import embedded_licenses, repaired_wheel_sbom, sbom_member
from wheelcheck.symbols.sonames import hashed_name
from wheelcheck.wheel.wheel_rebuild import Changes, NewMember, RebuildStats, rebuild_wheel, reproducible_date_time
from wheelcheck.wheel.wheel_writer import atomic_output

__all__ = ["RepairOptions", "repair_wheel"]


def repair_wheel(path: str | Path, options: RepairOptions, progress: Progress | None = None) -> RepairOutcome:
    """Repair one wheel. Raises WheelcheckError subclasses for bad input, missing libraries, write errors.

    ``progress(done, total)`` follows the reading of the wheel's ELF members, the long part of a repair."""
    path = Path(path)
    with WheelReader(path) as source, tempfile.TemporaryDirectory(prefix="wheelcheck-repair-") as workdir:
        model = scan_reader(source, jobs=options.jobs, progress=progress)
        outcome = RepairOutcome(filename=model.filename, required_tag=None)
        if not model.elves:
            return _pure(path, model, outcome, options)
        audit_options = options.audit_options()
        arch, libc = wheel_platform(model)
        outcome.arch, outcome.libc = arch, libc
        candidates = [p for p in options.policies.for_platform(libc, arch) if not p.is_linux]
        try:  # the same resolution as audit --plat: musllinux_1_1 too, though only 1_2 is judged
            requested = options.policies.resolve(options.plat, arch, libc)
        except UsageError as exc:
            raise UsageError(model.filename, f"{exc.path} {exc.problem}") from None
        outcome.required_tag = requested.tag(arch) if requested else None
        choice, located = _choose(model, options, audit_options, arch, libc, candidates, requested)
        if choice is None or choice.verdict.is_linux or (
                requested is not None and not _reaches(choice, requested, audit_options)):
            return _unreachable(outcome, choice, requested, arch, candidates, audit_options)
        assert located is not None, "a choice is made from located libraries"
        add, remove = _retagging(model, options, choice, requested, arch, libc, audit_options)
        if not options.update_tags:  # auditwheel's --no-update-tags, as long as the claims stay true
            unmet = sorted(remove - {f"linux_{arch}", "any"})
            if unmet:
                outcome.status = "failed"
                outcome.message = (f"--no-update-tags keeps {', '.join(unmet)}, which the repaired wheel does not "
                                   f"meet (it reaches {choice.verdict.tag(arch)}); nothing written")
                _describe(outcome, choice.plan)
                return outcome
            add, remove = [], set()
        plan = choice.plan

        def build(plan: RepairPlan, workdir: str) -> tuple[Changes, str, WheelModel, Hidden | None]:
            changes = apply_plan(plan, source, located, workdir, strip=_strip(model, options))
            changes, filename, wheel_text = _retagged(source, model, changes, add, remove)
            tags = parse_wheel_filename(filename).tags
            final = repaired_model(model, plan, changes, filename, tags)
            final = replace(final, package_problems=rewritten(model.package_problems, f"{source.dist_info}/WHEEL",
                                                                   wheel_text, tags))
            hidden = None
            if options.hiding:
                hidden = hide_symbols(final, changes, source, workdir=workdir, keep_patterns=options.keep_symbols,
                                      extensions=options.hide_extension_symbols, lib_sdir=options.lib_sdir)
                changes, final = changes.with_data(hidden.changed), hidden.model
            return changes, filename, final, hidden

        try:  # an edit that fails (patchelf refusing a malformed member) names the wheel, then the member
            changes, filename, final, hidden = build(plan, workdir)
            names = _names_of_edited(plan, hidden)
            if names:  # grafted again under the names of what hiding made of them
                plan = with_graft_names(plan, names)
                again = Path(workdir) / "named"
                again.mkdir()
                changes, filename, final, hidden = build(plan, str(again))
                if _names_of_edited(plan, hidden):
                    raise RepairError(model.filename, "hiding symbols edited the renamed libraries otherwise than "
                                                      "before (a bug: please report it)")
        except (RepairError, BadElfError) as exc:
            raise type(exc)(f"{model.filename}:{exc.path}", exc.problem) from None
        licensing = _licensing(source, plan, options)
        changes, final = _with_licenses(source, changes, final, licensing)
        judged = assess(final, audit_options)
        after = judged.report
        if judged.verdict is None or not judged.verdict.meets(choice.verdict):
            raise RepairError(str(path), f"the patched files reach {after.deserved_tag}, not the planned "
                                         f"{choice.verdict.tag(arch)} (an ELF edit did not do what it should)")
        changes, sbom = _with_sbom(source, changes, final, plan, options, licensing)
        out_path = _output_dir(options.out_dir) / filename
        stats = _write(source, out_path, changes, model, options)
        plugins = host_plugins([(g.source, g.needed_as, g.member) for g in plan.grafts if not g.in_wheel],
                               located.directories)
    repaired = _repaired(outcome, out_path, filename, after, stats, plan, hidden, licensing)
    settings = judged.target or judged.verdict  # whose rules the re-audit applied: they apply to repair's own too
    repaired.findings += [kept for finding in host_plugin_findings(plugins)
                          for kept in apply_rule_settings(finding, settings.rules if settings else {})]
    repaired.sbom = sbom
    return repaired


# -- core


def _reaches(choice: Choice, requested: Policy, audit_options: AuditOptions) -> bool:
    """Does the planned wheel meet ``requested``? A tag between two policies (manylinux_2_30) is met rule by rule,
    as audit judges a claim of it; a policy's, by the verdict."""
    if requested.made_for_claim:
        return all(c.allows(requested) for c in assess(choice.model, audit_options).constraints)
    return choice.verdict.meets(requested)


def _retagging(model: WheelModel, options: RepairOptions, choice: Choice, requested: Policy | None, arch: str,
               libc: str, audit_options: AuditOptions) -> tuple[list[str], set[str]]:
    """The platform tags to add and to remove (see repair/retag.py)."""
    verdict = choice.verdict
    if options.only_plat and requested is not None:
        add = requested.tags(arch)  # auditwheel --only-plat: the asked tag, not a better one
    else:
        add = added_platforms(verdict, requested, arch)
    planned: list = []

    def meets(policy: Policy) -> bool:
        if not policy.made_for_claim:
            return verdict.meets(policy)
        if not planned:  # a claim between two policies (manylinux_2_30): the planned wheel's rules, one by one
            planned.append(assess(choice.model, audit_options).constraints)
        return all(c.allows(policy) for c in planned[0])

    remove = removed_platforms(sorted({t.platform for t in model.tags}), arch, verdict,
                               lambda name: options.policies.claimed(name, arch, libc), meets)
    return add, remove


def _choose(model: WheelModel, options: RepairOptions, audit_options: AuditOptions, arch: str, libc: str,
            candidates: list[Policy], requested: Policy | None) -> tuple[Choice | None, Located | None]:
    elves = [e for e in model.elves if e.arch == arch and libc_of_elf(e) in (None, libc)]
    if not elves or not candidates:
        return None, None  # an architecture no policy covers: nothing to aim at
    resolution = resolve(model, elves, libc)
    drivers = drivers_of(candidates)

    def skip(soname: str) -> bool:
        everywhere = all(p.provides(soname, arch) for p in candidates)  # not empty: checked above
        return everywhere or never_grafted(soname, options.exclude, drivers) is not None

    search = host_search_path(libc, arch, lib_path=options.lib_path, environ=options.environ, ldpaths=options.ldpaths)
    located = locate_libraries(model, resolution, search, typical_elf(elves), skip=skip,
                               compatible=lambda info: libc_linked(info) in (None, libc))

    def plan_for(policy: Policy) -> RepairPlan:
        return make_plan(model, elves, resolution, located, policy, arch, exclude=options.exclude, drivers=drivers,
                         lib_sdir=options.lib_sdir)

    def verdict_of(plan: RepairPlan) -> tuple[Policy, WheelReport, WheelModel]:
        planned = predict(model, plan, located)
        judged = assess(planned, audit_options)
        return judged.verdict or LINUX, judged.report, planned

    try:
        return choose_plan(candidates, requested, plan_for, verdict_of, located), located
    except RepairError as exc:
        raise RepairError(f"{model.filename}:{exc.path}", exc.problem) from None


def _names_of_edited(plan: RepairPlan, hidden: Hidden | None) -> dict[str, str]:
    """Grafted name -> a name for the copy hiding edited: its hash in the name is that of the original file,
    but another wheel's copy of the same file hides and renames other symbols (what its own files import), and
    ld.so loads one file per SONAME: whichever wheel is imported second would bind to the first one's copy and
    miss its renamed names. The new hash is of what the edit kept and renamed (the same edit, the same name, so
    two such copies are interchangeable). Empty once the names already say so."""
    if hidden is None:
        return {}
    edited = {h.path: h for h in hidden.plan.libraries if h.hidden or h.renamed}
    out = {}
    for graft in plan.grafts:
        done = edited.get(graft.member)
        if graft.in_wheel or done is None:
            continue
        interface = "\n".join([graft.sha256, *sorted(done.hidden), "", *sorted(done.renamed)])
        name = hashed_name(graft.new_name, hashlib.sha256(interface.encode()).hexdigest())
        if name != graft.new_name:  # unchanged in the second pass: the name ends with that hash already
            out[graft.new_name] = name
    return out


def _pure(path: Path, model: WheelModel, outcome: RepairOutcome, options: RepairOptions) -> RepairOutcome:
    """No ELF file. Like auditwheel: an error (exit 1), unless --allow-pure-python-wheel is given and the wheel
    is tagged for any platform, when it is copied to the output unchanged (auditwheel#47, #438)."""
    outcome.status, outcome.message = "pure", "no ELF file: nothing to repair, nothing written"
    if not options.allow_pure:
        return outcome
    platforms = sorted({t.platform for t in model.tags})
    if platforms != ["any"]:
        outcome.message = (f"no ELF file, yet tagged {'.'.join(platforms)}: not copied (only a wheel tagged "
                           "'any' is copied through with --allow-pure-python-wheel); nothing written")
        return outcome
    out_path = _output_dir(Path(options.out_dir)) / path.name
    if not (out_path.exists() and out_path.resolve() == path.resolve()):
        try:
            with atomic_output(out_path) as out, path.open("rb") as src:
                shutil.copyfileobj(src, out)
        except OSError as exc:
            raise OutputError(str(out_path), f"cannot write the wheel ({exc.strerror or exc})") from None
    outcome.status, outcome.output = "copied", str(out_path)
    outcome.message = "no ELF file: copied unchanged (--allow-pure-python-wheel)"
    outcome.platform_tags = platforms
    return outcome




def _licensing(source: WheelReader, plan: RepairPlan, options: RepairOptions) -> Licensing:
    """The license texts of the grafts, as its OS packages (or --license-file, or an earlier repair) give them."""
    from wheelcheck.sbom.os_packages import os_packages_of

    owners = os_packages_of([g.source for g in plan.grafts if not g.in_wheel])
    return plan_licenses(source, plan.grafts, plan.libs_dir, owners, options.license_files,
                         embedded_licenses(source))


def _with_licenses(source: WheelReader, changes: Changes, final: WheelModel,
                   licensing: Licensing) -> tuple[Changes, WheelModel]:
    """``changes`` with the license texts and METADATA's License-File lines; ``final`` with them as notices, so
    that the re-audit sees what will be written."""
    if not licensing.files and licensing.metadata is None:
        return changes, final
    changes = Changes(changes.replace, {**changes.add, **{name: NewMember(data) for name, data in licensing.files.items()}})
    if licensing.metadata is not None:
        changes = changes.with_data({f"{source.dist_info}/METADATA": licensing.metadata})
    notices = final.license_notices.with_texts(licensing.files, [g.member for g in licensing.licenses if g.file])
    members = final.members + tuple(name for name in licensing.files if name not in final.members)
    return changes, replace(final, members=members, license_notices=notices)


def _with_sbom(source: WheelReader, changes: Changes, final: WheelModel, plan: RepairPlan,
               options: RepairOptions, licensing: Licensing) -> tuple[Changes, str | None]:
    """``changes`` with the repaired wheel's CycloneDX SBOM (PEP 770), and the member's name (or None).

    Written when this repair grafts a library (auditwheel's occasion) or the wheel carries one to keep true;
    a wheel that needs nothing grafted passes through unchanged."""
    name = sbom_member(source.dist_info)
    grafted = {g.member: g.source for g in plan.grafts if not g.in_wheel}
    present = name in source.file_sizes()
    if not grafted and not present:
        return changes, None
    # libraries an earlier repair grafted keep the license its SBOM gave them (while the text is in the wheel)
    sizes, texts = source.file_sizes(), f"{source.dist_info}/licenses/"
    licenses = {member: lic for member, lic in embedded_licenses(source).items()
                if lic.file is None or (lic.file in sizes and lic.file.startswith(texts))}
    licenses.update({g.member: g.component_license for g in licensing.licenses if g.component_license is not None})
    document = repaired_wheel_sbom(final, grafted, source, options.environ, licenses)
    if document is None:
        return changes, name if present else None
    if not present:
        return Changes(changes.replace, {**changes.add, name: NewMember(document)}), name
    if source.read(name) != document:
        return changes.with_data({name: document}), name
    return changes, name


def _strip(model: WheelModel, options: RepairOptions) -> tuple[str, ...] | None:
    """Members to strip besides the grafted libraries: the extension modules with --strip, else none at all."""
    return tuple(e.path for e in model.elves if e.is_extension) if options.strip else None


def _retagged(source: WheelReader, model: WheelModel, changes: Changes, add: list[str],
              remove: set[str]) -> tuple[Changes, str, str]:
    """``changes`` with the WHEEL file's tags made those the repaired wheel reaches, its new file name, and its
    new WHEEL text."""
    wheel_name = f"{source.dist_info}/WHEEL"
    wheel_text = source.read_text(wheel_name)
    new_wheel_text = retag_wheel_text(wheel_text, add, remove)
    if new_wheel_text != wheel_text:
        changes = changes.with_data({wheel_name: new_wheel_text.encode("utf-8")})
    return changes, retag_filename(model.filename, add, remove), new_wheel_text


def _unreachable(outcome: RepairOutcome, choice: Choice | None, requested: Policy | None, arch: str,
                 candidates: list[Policy], audit_options: AuditOptions) -> RepairOutcome:
    outcome.status = "failed"
    if choice is None:
        outcome.message = f"no policy covers {arch}: nothing written"
        return outcome
    outcome.deserved_tag = choice.report.deserved_tag
    target = requested or candidates[-1]  # auto: not even the least compatible policy is reached
    wanted = requested.tag(arch) if requested else "any manylinux or musllinux tag"
    outcome.message = f"cannot reach {wanted}: the repaired wheel would deserve {choice.report.deserved_tag}; nothing written"
    # judged against the target alone (claims in the file name left out): its errors are what stands in the way
    against = judge(replace(choice.model, tags=frozenset()), replace(audit_options, plat=target))
    outcome.findings = [f for f in against.findings if f.severity == "error"]
    _describe(outcome, choice.plan)
    return outcome


# -- destination


def _write(source: WheelReader, out_path: Path, changes: Changes, model: WheelModel,
           options: RepairOptions) -> RebuildStats:
    """Write the repaired wheel. Into the input's own place (``-w`` its directory, the name unchanged) it is
    written beside it and renamed over it, as auditwheel does, and only if a member changed: an unchanged
    wheel is left as it was, byte for byte."""
    in_place = out_path.exists() and out_path.resolve() == source.path.resolve()
    target = out_path.with_name(f".{out_path.name}.{os.getpid()}.repaired") if in_place else out_path
    try:
        stats = rebuild_wheel(source, target, replace=changes.replace, add=changes.add,
                              date_time=reproducible_date_time(source, options.environ), level=options.level,
                              rehash={m for m, _ in model.record_problems})
        if in_place:
            if stats.written:
                os.replace(target, out_path)
            else:
                os.unlink(target)
        return stats
    except OSError as exc:
        if in_place and target.exists():
            target.unlink()
        raise OutputError(str(out_path), f"cannot write the repaired wheel ({exc.strerror or exc})") from None


def _output_dir(out_dir: Path) -> Path:
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(str(out_dir), f"cannot create the output directory ({exc.strerror or exc})") from None
    if not out_dir.is_dir():
        raise OutputError(str(out_dir), "is not a directory")
    return out_dir


# -- the outcome


def _repaired(outcome: RepairOutcome, out_path: Path, filename: str, after: WheelReport, stats: RebuildStats,
              plan: RepairPlan, hidden: Hidden | None, licensing: Licensing) -> RepairOutcome:
    outcome.output = str(out_path)
    outcome.deserved_tag = after.deserved_tag
    outcome.platform_tags = platform_component(filename).split(".")
    outcome.findings = list(after.findings)
    outcome.copied_members, outcome.written_members = stats.copied, stats.written
    outcome.metadata_version_raised = licensing.raised_from
    _describe(outcome, plan, licensing)
    if hidden is not None:
        outcome.hidden = [HiddenSymbols(h.path, h.exports, len(h.hidden), dict(h.renamed), dict(h.kept))
                          for h in hidden.plan.libraries]
    return outcome


def _describe(outcome: RepairOutcome, plan: RepairPlan, licensing: Licensing | None = None) -> None:
    licenses = {g.member: GraftedLicense(g.file, g.expression, g.origin, g.problem)
                for g in (licensing.licenses if licensing else ())}
    outcome.grafted = [GraftedLibrary(list(g.needed_as), g.source, g.realpath, g.sha256, g.member, g.new_name,
                                      g.in_wheel, licenses.get(g.member)) for g in plan.grafts]
    outcome.patched = [PatchedFile(
        member=e.member, replaced_needed=dict(e.patch.replace_needed), removed_needed=list(e.patch.remove_needed),
        rpath_before=list(e.rpath_before), rpath_after=None if e.patch.rpath is None else list(e.patch.rpath),
        dropped_rpath=list(e.dropped_rpath), moved_to=e.moved_to) for e in plan.edits]
    outcome.kept_external = dict(plan.kept)
