"""The Python API: the same calls the CLI makes."""

from __future__ import annotations

import glob
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from wheelcheck.audit.audit_options import AuditOptions
from wheelcheck.audit.file_analyses import analyse_file
from wheelcheck.audit.verdict import assess, finding_order
from wheelcheck.errors import UsageError, WheelcheckError
from wheelcheck.wheel.parallel_wheels import map_wheels
from wheelcheck.audit.suppression import suppress
from wheelcheck.policy.policy_loader import load_policy_file, refuse_standard_names
from wheelcheck.policy.policy_model import PolicySet
from wheelcheck.policy.registry import bundled_policies
from wheelcheck.audit.findings import AuditReport, WheelReport, reaches
from wheelcheck.audit.variant_release import release_findings
from wheelcheck.sbom.wheel_sbom import wheel_bill_of_materials
from wheelcheck.wheel.scanner import scan_wheel
from wheelcheck.wheel.wheel_model import WheelModel

if TYPE_CHECKING:  # the repair, show and conflicts machinery is imported by the calls that use it
    from wheelcheck.audit.show_view import ShowView
    from wheelcheck.compat.compat_report import CompatReport
    from wheelcheck.conflicts.conflict_findings import ConflictReport
    from wheelcheck.conflicts.conflicts_options import ConflictsOptions
    from wheelcheck.repair.repair_options import RepairOptions
    from wheelcheck.repair.repair_outcome import RepairReport
    from wheelcheck.sbom.bill_of_materials import BillOfMaterials

__all__ = ["abi_manifest", "audit", "audit_wheel", "audit_wheels", "compat", "conflicts", "conflicts_between",
           "expand_paths", "load_policies", "repair", "repair_wheels", "sbom", "show", "show_wheel"]


def load_policies(policy_file: str | Path | None = None) -> PolicySet:
    """The policies wheels are judged against: the bundled ones, or only those of ``policy_file``.

    A file's policies take names of their own (a file that defines a standard name is refused), so a tag on the
    command line or in a wheel's name never means what a file says; a wheel claiming a standard tag that the
    file does not define fails with claim-without-policy rather than losing its claim."""
    if policy_file is None:
        return bundled_policies()
    policies = load_policy_file(policy_file)
    refuse_standard_names(policies, str(policy_file))
    return PolicySet(policies)


def expand_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Wheels named by paths, globs and directories (a directory means every *.whl in it)."""
    out: list[Path] = []
    for raw in paths:
        text = str(raw)
        if os.path.isdir(text):
            found = sorted(Path(text).glob("*.whl"))
            if not found:
                raise UsageError(text, "directory holds no .whl file")
            out.extend(found)
        elif glob.has_magic(text) and not os.path.exists(text):
            found = sorted(Path(p) for p in glob.glob(text))
            if not found:
                raise UsageError(text, "no file matches this pattern")
            out.extend(found)
        else:
            out.append(Path(text))
    return out


# progress(wheel filename, bytes done, bytes total) while a wheel's ELF members are read
WheelProgress = Callable[[str, int, int], None]
Options = TypeVar("Options")


def _options(kind: type[Options], policy_file: str | Path | None, fields: dict[str, Any]) -> Options:
    """``kind(**fields)``, with the policies of ``policy_file`` when one is given (the keyword form of the API)."""
    if policy_file is not None:
        if "policies" in fields:
            raise UsageError(str(policy_file), "give policy_file or policies, not both")
        fields = {**fields, "policies": load_policies(policy_file)}
    return kind(**fields)


def _listed(paths: str | Path | Iterable[str | Path]) -> Iterable[str | Path]:
    return [paths] if isinstance(paths, (str, Path)) else paths


# -- audit


def audit(paths: str | Path | Iterable[str | Path], *, policy_file: str | Path | None = None,
          progress: WheelProgress | None = None, **fields: Any) -> AuditReport:
    """Audit wheels and return the report the CLI renders.

    The keyword arguments are the fields of ``AuditOptions``: ``plat``, ``exclude``, ``lib_path``, ``jobs``,
    ``cxx_abi`` ("old" or "new": overrides the policy's allowed libstdc++ string ABIs), ``fail_on`` ("error",
    "warning" or "info": the lowest finding severity that makes a wheel fail), ``isa_check`` (False allows
    x86-64 ISA levels above the baseline, auditwheel's --disable-isa-ext-check). ``policy_file`` judges
    against that file's policies. ``progress`` is called with (wheel filename, bytes done, bytes total)
    while each wheel's ELF members are read.
    """
    return audit_wheels(paths, _options(AuditOptions, policy_file, fields), progress)


def audit_wheels(paths: str | Path | Iterable[str | Path], options: AuditOptions,
                 progress: WheelProgress | None = None) -> AuditReport:
    """Audit wheels as ``options`` say (what ``wheelcheck audit`` calls).

    Several wheels are audited on several processes at once (``options.jobs`` of them, default one per
    core), each reporting its progress as it ends."""
    wheels = expand_paths(_listed(paths))
    if len(wheels) <= 1 or options.jobs == 1:
        reports = [audit_wheel(p, options, progress) for p in wheels]
    else:
        def done(i: int, report: WheelReport) -> None:  # from other processes: a wheel's progress is its end
            if progress:
                progress(wheels[i].name, 1, 1)

        reports = map_wheels(partial(audit_wheel, options=options), wheels, options.jobs, done)
    _judge_release(reports, options)
    return AuditReport(reports, fail_on=options.fail_on)


def _judge_release(reports: list[WheelReport], options: AuditOptions) -> None:
    """The variant wheels of each release against each other and the index's variants.json (PEP 825): what
    one wheel's audit cannot see, added to the wheels it concerns."""
    for i, findings in release_findings(reports, options.variants).items():
        report = reports[i]
        report.findings = sorted(report.findings + findings, key=finding_order)
        report.passed = not reaches(report.findings, options.fail_on)
        suppress(report, options.suppressions, options.fail_on)


def audit_wheel(path: str | Path, options: AuditOptions, progress: WheelProgress | None = None) -> WheelReport:
    """Audit one wheel; bad input becomes a report with ``error`` set rather than an exception."""
    name = Path(path).name
    started = time.perf_counter()
    try:
        # each file's share of the checks made where it is summarised, a child process's share there too
        model = scan_wheel(path, jobs=options.jobs,
                           progress=(lambda done, total: progress(name, done, total)) if progress else None,
                           analyse=analyse_file)
        if options.lib_path:
            options = _with_external(model, options)
        judged = assess(model, options)
        report = judged.report
        suppress(report, options.suppressions, options.fail_on)
        exposures = {member: analysis.exposure for member, analysis in judged.analyses.items()}
        report.components = [c.to_dict() for c in wheel_bill_of_materials(model, path, exposures).components]
    except UsageError:
        raise
    except WheelcheckError as exc:
        return WheelReport(filename=name, path=str(path), error=str(exc), passed=False)
    report.path = str(path)
    report.seconds = time.perf_counter() - started
    return report


def _with_external(model: WheelModel, options: AuditOptions) -> AuditOptions:
    """``options`` with the external libraries --lib-path finds for ``model`` (their own needs judged too)."""
    from wheelcheck.host.lib_path_search import find_external_libraries

    return replace(options, external=find_external_libraries(model, list(options.lib_path)))


# -- show


def show(path: str | Path, *, policy_file: str | Path | None = None, **fields: Any) -> ShowView:
    """auditwheel show's answer for one wheel (``wheelcheck show``). Bad input raises a WheelcheckError.

    The keyword arguments are the fields of ``AuditOptions`` (``lib_path``, ``isa_check``, ``jobs`` are
    the ones ``wheelcheck show`` has flags for).
    """
    return show_wheel(path, _options(AuditOptions, policy_file, fields))


def show_wheel(path: str | Path, options: AuditOptions) -> ShowView:
    """auditwheel show's answer for one wheel, judged as ``options`` say (what ``wheelcheck show`` calls)."""
    from wheelcheck.audit.show_view import show_view

    model = scan_wheel(path, jobs=options.jobs)
    if options.lib_path:
        options = _with_external(model, options)
    return show_view(assess(model, options), options)


# -- sbom


def sbom(paths: str | Path | Iterable[str | Path], *, jobs: int | None = None,
         progress: WheelProgress | None = None) -> list[BillOfMaterials]:
    """The third-party code in each wheel (``wheelcheck sbom``): vendored libraries and statically linked
    copies, with the versions the binaries state. Bad input raises a WheelcheckError naming the wheel."""
    out = []
    for path in expand_paths(_listed(paths)):
        name = Path(path).name
        model = scan_wheel(path, jobs=jobs,
                           progress=(lambda done, total: progress(name, done, total)) if progress else None)
        out.append(wheel_bill_of_materials(model, path))
    return out


# -- repair


def repair(paths: str | Path | Iterable[str | Path], out_dir: str | Path = "wheelhouse", *,
           policy_file: str | Path | None = None, progress: WheelProgress | None = None,
           **fields: Any) -> RepairReport:
    """Repair wheels into ``out_dir``; each wheel's errors land in its outcome (status "error").

    The keyword arguments are the fields of ``RepairOptions``: ``plat`` (a tag, a policy name or "auto"),
    ``exclude``, ``lib_path``, ``level``, ``jobs``, ``hide_symbols``, ``hide_extension_symbols``,
    ``keep_symbols``, ``lib_sdir``, ``only_plat``, ``strip``, ``isa_check``, ``environ``, ``ldpaths``,
    ``update_tags``, ``allow_pure``, ``license_files`` ((LIB, FILE) pairs or a mapping: the license text a graft of
    LIB carries).
    """
    from wheelcheck.repair.repair_options import RepairOptions

    return repair_wheels(paths, _options(RepairOptions, policy_file, {**fields, "out_dir": Path(out_dir)}), progress)


def repair_wheels(paths: str | Path | Iterable[str | Path], options: RepairOptions,
                  progress: WheelProgress | None = None) -> RepairReport:
    """Repair wheels as ``options`` say (what ``wheelcheck repair`` calls)."""
    from wheelcheck.repair.repair_outcome import RepairOutcome, RepairReport
    from wheelcheck.repair.repair_wheel import repair_wheel

    outcomes = []
    for path in expand_paths(_listed(paths)):
        name = Path(path).name
        try:
            outcomes.append(repair_wheel(path, options, progress=(lambda done, total: progress(name, done, total))
                                         if progress else None))
        except UsageError:
            raise
        except WheelcheckError as exc:
            outcomes.append(RepairOutcome(filename=name, status="error", message=str(exc)))
    return RepairReport(outcomes)


# -- conflicts


def conflicts(paths: Iterable[str | Path] = (), *, env: Iterable[str] | None = None,
              jobs: int | None = None, fail_on: str = "error") -> ConflictReport:
    """What will collide when the given wheels (or, with ``env``, the distributions installed in an
    environment: Python executables or site-packages directories, empty for the default) share a process.
    ``fail_on``: the lowest finding severity that makes ``exit_code`` 1.

    Raises a WheelcheckError on bad input (an unreadable wheel fails the whole comparison).
    """
    from wheelcheck.conflicts.conflicts_options import ConflictsOptions

    return conflicts_between(paths, ConflictsOptions(env=None if env is None else tuple(env), jobs=jobs,
                                                     fail_on=fail_on))


def conflicts_between(paths: Iterable[str | Path], options: ConflictsOptions) -> ConflictReport:
    """What will collide, as ``options`` say (what ``wheelcheck conflicts`` calls)."""
    from wheelcheck.conflicts.find_conflicts import find_conflicts
    from wheelcheck.conflicts.conflict_findings import ConflictReport
    from wheelcheck.conflicts.processes import group_processes, left_out, one_process
    from wheelcheck.conflicts.read_distributions import from_environment, from_wheel

    started = time.perf_counter()
    paths = list(paths)
    notes: list[str] = []
    if options.env is not None:
        installed, sources, notes = from_environment(list(options.env), jobs=options.jobs)
        # a wheel given joins the environment, in place of the installed distribution of its name
        wheels = list({w.resolve(): w for w in expand_paths(paths)}.values()) if paths else []
        mine = map_wheels(partial(from_wheel, jobs=options.jobs), wheels, options.jobs) if wheels else []
        replaced = {d.key for d in mine}
        dists = list(mine) + [d for d in installed if d.key not in replaced]
        sources = [w.name for w in wheels] + sources
        processes = [one_process(dists, "environment " + ", ".join(sources))]
        mode = "environment"
    else:
        wheels = list({w.resolve(): w for w in expand_paths(paths)}.values())  # a wheel given twice is one
        if not wheels:
            raise UsageError("conflicts", "give wheels to compare, or --env")
        dists = map_wheels(partial(from_wheel, jobs=options.jobs), wheels, options.jobs)
        sources = [w.name for w in wheels]
        processes = group_processes(dists)
        notes = [f"{d.source}: no Linux platform tag, left out" for d in left_out(dists, processes)]
        mode = "wheels"
    read = time.perf_counter()
    reports = find_conflicts(processes)
    if notes and reports:
        reports[0].notes[:0] = notes
    return ConflictReport(mode, sources, reports, {"read": read - started, "analyse": time.perf_counter() - read},
                          fail_on=options.fail_on)


def compat(
    paths: Iterable[str | Path] = (),
    *,
    env: str | None = None,
    policy_file: str | Path | None = None,
    jobs: int | None = None,
) -> CompatReport:
    """Will each distribution load beside the others given (`wheelcheck compat`)?

    ``paths``: wheels (files, globs, directories) and ABI manifests (*.json, *.json.gz from
    ``wheelcheck abi``); with ``env`` (a Python executable or a site-packages directory) the distributions
    installed there are given too, a wheel replaces the installed distribution of its name, and a bare
    name picks the installed distributions to judge. Raises a WheelcheckError on bad input.
    """
    import time

    from packaging.utils import canonicalize_name

    from wheelcheck.compat.abi_manifest import is_manifest_path, read_manifest
    from wheelcheck.compat.check_compat import check_compat
    from wheelcheck.compat.compat_report import CompatReport
    from wheelcheck.conflicts.read_distributions import from_environment, from_wheel

    started = time.perf_counter()
    names, files = [], []
    for raw in paths:
        text = str(raw)
        if env is not None and "/" not in text and not os.path.exists(text) and not glob.has_magic(text):
            names.append(canonicalize_name(text))
        else:
            files.append(text)
    given = [read_manifest(f) if is_manifest_path(f) else None for f in files]
    wheels = [f for f, d in zip(files, given) if d is None]
    mine = [d for d in given if d is not None]
    mine += [from_wheel(w, jobs=jobs) for w in dict.fromkeys(str(p) for p in expand_paths(wheels))] if wheels else []
    notes: list[str] = []
    sources = [d.source for d in mine]
    dists = list(mine)
    subjects = None
    if env is not None:
        installed, dirs, notes = from_environment([env], jobs=jobs)
        replaced = {d.key for d in mine}
        dists += [d for d in installed if d.key not in replaced]
        sources += dirs
        if names:
            by_key = {d.key: d for d in dists}
            unknown = [n for n in names if n not in by_key]
            if unknown:
                raise UsageError(unknown[0], f"not installed in {', '.join(dirs)}")
            subjects = [by_key[n] for n in names]
        elif mine:
            subjects = [d for d in mine if d.elves]
    elif not dists:
        raise UsageError("compat", "give wheels or manifests to check, or --env")
    read = time.perf_counter()
    pairs = check_compat(dists, load_policies(policy_file), subjects=subjects)
    if not pairs:
        notes.append("no distribution loads anything from another: nothing to judge")
    return CompatReport("environment" if env is not None else "wheels", sources, pairs, notes,
                        {"read": read - started, "analyse": time.perf_counter() - read})


def abi_manifest(wheel: str | Path, *, jobs: int | None = None) -> dict:
    """A host wheel's exported interface as a JSON-ready dict (`wheelcheck abi`)."""
    from wheelcheck.compat.abi_manifest import build_manifest
    from wheelcheck.conflicts.read_distributions import from_wheel
    from wheelcheck.elf.comment_section import compiler_comments
    from wheelcheck.wheel.wheel_reader import WheelReader

    dist = from_wheel(wheel, jobs=jobs)
    with WheelReader(wheel) as reader:
        comments = {e.path: compiler_comments(reader.read(e.path)) for e in dist.loadable()}
    return build_manifest(dist, comments)
