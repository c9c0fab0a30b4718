"""The Python API: the same calls the CLI makes."""

from __future__ import annotations

import glob
import os
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path

from typing import TYPE_CHECKING

from wheelcheck.audit.verdict import AuditOptions, assess, judge
from wheelcheck.errors import UsageError, WheelcheckError
from wheelcheck.host.lib_path_search import find_external_libraries
from wheelcheck.policy.policy_loader import load_policy_file
from wheelcheck.policy.policy_model import PolicySet
from wheelcheck.policy.registry import bundled_policies
from wheelcheck.audit.findings import SEVERITIES, AuditReport, WheelReport
from wheelcheck.sbom.wheel_sbom import wheel_bill_of_materials
from wheelcheck.wheel.scanner import scan_wheel

if TYPE_CHECKING:  # the repair, show and conflicts machinery is imported by the calls that use it
    from wheelcheck.audit.show_view import ShowView
    from wheelcheck.conflicts.conflict_findings import ConflictReport
    from wheelcheck.repair.repair_outcome import RepairReport
    from wheelcheck.sbom.bill_of_materials import BillOfMaterials

__all__ = ["audit", "audit_wheel", "conflicts", "expand_paths", "load_policies", "repair", "sbom", "show"]


def load_policies(policy_file: str | Path | None = None) -> PolicySet:
    """The bundled policies, or only those of ``policy_file`` when one is given."""
    if policy_file is None:
        return bundled_policies()
    return PolicySet(load_policy_file(policy_file))


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


def audit_wheel(path: str | Path, options: AuditOptions, lib_path: Iterable[str] = (), jobs: int | None = None,
                progress: WheelProgress | None = None) -> WheelReport:
    """Audit one wheel; bad input becomes a report with ``error`` set rather than an exception."""
    name = Path(path).name
    try:
        model = scan_wheel(path, jobs=jobs,
                           progress=(lambda done, total: progress(name, done, total)) if progress else None)
        if lib_path:
            external = find_external_libraries(model, list(lib_path))
            options = replace(options, external=external)
        report = judge(model, options)
        report.components = [c.to_dict() for c in wheel_bill_of_materials(model, path).components]
    except UsageError:
        raise
    except WheelcheckError as exc:
        return WheelReport(filename=name, path=str(path), error=str(exc), passed=False)
    report.path = str(path)
    return report


def audit(
    paths: str | Path | Iterable[str | Path],
    *,
    plat: str | None = None,
    policy_file: str | Path | None = None,
    exclude: Iterable[str] = (),
    lib_path: Iterable[str] = (),
    jobs: int | None = None,
    cxx_abi: str | None = None,
    fail_on: str = "error",
    progress: WheelProgress | None = None,
    isa_check: bool = True,
) -> AuditReport:
    """Audit wheels and return the report the CLI renders.

    ``cxx_abi`` ("old" or "new") overrides the policy's allowed libstdc++ string ABIs. ``fail_on``
    ("error", "warning" or "info") is the lowest finding severity that makes a wheel fail. ``progress``
    is called with (wheel filename, bytes done, bytes total) while each wheel's ELF members are read.
    ``isa_check=False`` allows x86-64 ISA levels above the baseline (auditwheel's --disable-isa-ext-check).
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    if cxx_abi not in (None, "old", "new"):
        raise UsageError(str(cxx_abi), "--cxx-abi must be 'old' or 'new'")
    if fail_on not in SEVERITIES:
        raise UsageError(str(fail_on), "--fail-on must be 'error', 'warning' or 'info'")
    options = AuditOptions(policies=load_policies(policy_file), plat=plat, exclude=tuple(exclude),
                           cxx_abi=cxx_abi, fail_on=fail_on, isa_check=isa_check)
    return AuditReport([audit_wheel(p, options, tuple(lib_path), jobs, progress) for p in expand_paths(paths)],
                       fail_on=fail_on)


def show(
    path: str | Path,
    *,
    policy_file: str | Path | None = None,
    lib_path: Iterable[str] = (),
    isa_check: bool = True,
    jobs: int | None = None,
) -> ShowView:
    """auditwheel show's answer for one wheel (``wheelcheck show``). Bad input raises a WheelcheckError."""
    from wheelcheck.audit.show_view import show_view

    options = AuditOptions(policies=load_policies(policy_file), isa_check=isa_check)
    model = scan_wheel(path, jobs=jobs)
    if lib_path:
        options = replace(options, external=find_external_libraries(model, list(lib_path)))
    return show_view(assess(model, options), options)


def sbom(
    paths: str | Path | Iterable[str | Path],
    *,
    jobs: int | None = None,
    progress: WheelProgress | None = None,
) -> list[BillOfMaterials]:
    """The third-party code in each wheel (``wheelcheck sbom``): vendored libraries and statically linked
    copies, with the versions the binaries state. Bad input raises a WheelcheckError naming the wheel."""
    if isinstance(paths, (str, Path)):
        paths = [paths]
    out = []
    for path in expand_paths(paths):
        name = Path(path).name
        model = scan_wheel(path, jobs=jobs,
                           progress=(lambda done, total: progress(name, done, total)) if progress else None)
        out.append(wheel_bill_of_materials(model, path))
    return out


def _lib_sdir(value: str) -> str:
    """auditwheel's -L: a suffix of the distribution's name, one path component (".libs", "_libs")."""
    if not value or "/" in value or value in (".", ".."):
        raise UsageError(value or "''", "--lib-sdir must be a directory-name suffix such as .libs")
    return value


def repair(
    paths: str | Path | Iterable[str | Path],
    out_dir: str | Path = "wheelhouse",
    *,
    plat: str | None = None,
    policy_file: str | Path | None = None,
    exclude: Iterable[str] = (),
    lib_path: Iterable[str] = (),
    level: int = 6,
    jobs: int | None = None,
    hide_symbols: bool = False,
    hide_extension_symbols: bool = False,
    keep_symbols: Iterable[str] = (),
    lib_sdir: str = ".libs",
    only_plat: bool = False,
    strip: bool = False,
    isa_check: bool = True,
    progress: WheelProgress | None = None,
) -> RepairReport:
    """Repair wheels into ``out_dir``; each wheel's errors land in its outcome (status "error")."""
    from wheelcheck.repair.repair_wheel import RepairOptions, repair_wheel
    from wheelcheck.repair.repair_outcome import RepairOutcome, RepairReport

    if isinstance(paths, (str, Path)):
        paths = [paths]
    options = RepairOptions(policies=load_policies(policy_file), out_dir=Path(out_dir), plat=plat,
                            exclude=tuple(exclude), lib_path=tuple(lib_path), level=level, jobs=jobs,
                            hide_symbols=hide_symbols, hide_extension_symbols=hide_extension_symbols,
                            keep_symbols=tuple(keep_symbols), lib_sdir=_lib_sdir(lib_sdir), only_plat=only_plat,
                            strip=strip, isa_check=isa_check)
    outcomes = []
    for path in expand_paths(paths):
        try:
            name = Path(path).name
            outcomes.append(repair_wheel(path, options, progress=(lambda done, total: progress(name, done, total))
                                         if progress else None))
        except UsageError:
            raise
        except WheelcheckError as exc:
            outcomes.append(RepairOutcome(filename=Path(path).name, status="error", message=str(exc)))
    return RepairReport(outcomes)


def conflicts(
    paths: Iterable[str | Path] = (),
    *,
    env: Iterable[str] | None = None,
    jobs: int | None = None,
) -> ConflictReport:
    """What will collide when the given wheels (or, with ``env``, the distributions installed in an
    environment: Python executables or site-packages directories, empty for the default) share a process.

    Raises a WheelcheckError on bad input (an unreadable wheel fails the whole comparison).
    """
    import time

    from wheelcheck.conflicts.find_conflicts import find_conflicts
    from wheelcheck.conflicts.conflict_findings import ConflictReport
    from wheelcheck.conflicts.processes import group_processes, left_out, one_process
    from wheelcheck.conflicts.read_distributions import from_environment, from_wheel

    started = time.perf_counter()
    notes: list[str] = []
    if env is not None:
        dists, sources, notes = from_environment(list(env), jobs=jobs)
        processes = [one_process(dists, "environment " + ", ".join(sources))]
        mode = "environment"
    else:
        wheels = list({w.resolve(): w for w in expand_paths(paths)}.values())  # a wheel given twice is one
        if not wheels:
            raise UsageError("conflicts", "give wheels to compare, or --env")
        dists = [from_wheel(w, jobs=jobs) for w in wheels]
        sources = [w.name for w in wheels]
        processes = group_processes(dists)
        notes = [f"{d.source}: no Linux platform tag, left out" for d in left_out(dists, processes)]
        mode = "wheels"
    read = time.perf_counter()
    reports = find_conflicts(processes)
    if notes and reports:
        reports[0].notes[:0] = notes
    return ConflictReport(mode, sources, reports, {"read": read - started, "analyse": time.perf_counter() - read})
