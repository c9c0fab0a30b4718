"""The Python API: the same calls the CLI makes."""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from wheelcheck.analysis.verdict import AuditOptions, judge
from wheelcheck.errors import UsageError, WheelcheckError
from wheelcheck.libsearch import find_external_libraries
from wheelcheck.policy.loader import load_policy_file
from wheelcheck.policy.model import PolicySet
from wheelcheck.policy.registry import bundled_policies
from wheelcheck.report.conflicts import ConflictReport
from wheelcheck.report.model import AuditReport, WheelReport
from wheelcheck.scan import scan_wheel

__all__ = ["audit", "audit_wheel", "expand_paths", "load_policies", "conflicts"]


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


def audit_wheel(path: str | Path, options: AuditOptions, lib_path: Iterable[str] = (), jobs: int | None = None) -> WheelReport:
    """Audit one wheel; bad input becomes a report with ``error`` set rather than an exception."""
    try:
        model = scan_wheel(path, jobs=jobs)
        if lib_path:
            external = find_external_libraries(model, list(lib_path))
            options = replace(options, external=external)
        return judge(model, options)
    except UsageError:
        raise
    except WheelcheckError as exc:
        return WheelReport(filename=Path(path).name, error=str(exc), passed=False)


def audit(
    paths: str | Path | Iterable[str | Path],
    *,
    plat: str | None = None,
    policy_file: str | Path | None = None,
    exclude: Iterable[str] = (),
    lib_path: Iterable[str] = (),
    jobs: int | None = None,
    cxx_abi: str | None = None,
) -> AuditReport:
    """Audit wheels and return the report the CLI renders.

    ``cxx_abi`` ("old" or "new") overrides the policy's allowed libstdc++ string ABIs.
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    if cxx_abi not in (None, "old", "new"):
        raise UsageError(str(cxx_abi), "--cxx-abi must be 'old' or 'new'")
    options = AuditOptions(policies=load_policies(policy_file), plat=plat, exclude=tuple(exclude),
                           cxx_abi=cxx_abi)
    return AuditReport([audit_wheel(p, options, tuple(lib_path), jobs) for p in expand_paths(paths)])


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

    from wheelcheck.analysis.conflicts import find_conflicts
    from wheelcheck.analysis.processes import group_processes, left_out, one_process
    from wheelcheck.distributions import from_environment, from_wheel

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
