"""`wheelcheck census`: many wheels audited on a Dask cluster into Parquet tables."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from wheelcheck.api import load_policies
from wheelcheck.cli.common import Severity, _fail, _say, _str, app
from wheelcheck.errors import WheelcheckError


@app.command("census")
def census_command(
    sources: Annotated[list[str], typer.Argument(help="Wheels, directories, listing files (a wheel path or URL a line), wheel URLs or PEP 503/691 simple-index URLs.")],
    out_dir: Annotated[Path, typer.Option("-o", "--output", help="Directory of the Parquet tables (wheels/, findings/, elf_files/); a re-run skips wheels already in it.")],
    project: Annotated[Optional[list[str]], typer.Option("--project", help="With an index URL: audit only this project's wheels (repeatable; default: every project of the index).")] = None,
    scheduler: Annotated[Optional[str], typer.Option(help="Address of a running Dask scheduler, e.g. tcp://host:8786 (default: start a local cluster).")] = None,
    workers: Annotated[Optional[int], typer.Option(help="Workers of the local cluster (default: CPU count).", min=1)] = None,
    memory_limit: Annotated[str, typer.Option(help="Memory limit per local worker.")] = "2GiB",
    timeout: Annotated[float, typer.Option(help="Seconds one wheel may take, download and audit together, before it is a row with a time-out error.", min=1)] = 600.0,
    audit_memory: Annotated[Optional[int], typer.Option(help="MiB of address space one wheel's audit may use; beyond it the wheel is a row with the error (default: no cap).", min=64)] = None,
    all_platforms: Annotated[bool, typer.Option("--all-platforms", help="From an index, also audit wheels tagged for other systems than Linux.")] = False,
    file_origin: Annotated[Optional[list[str]], typer.Option("--file-origin", help="With an index URL: also fetch its wheels from this origin (scheme://host[:port]; repeatable). Pages are read from the index's own origin only.")] = None,
    plat: Annotated[Optional[str], typer.Option(help="Fail unless the wheel meets this tag (e.g. manylinux_2_17_x86_64).")] = None,
    policy_file: Annotated[Optional[Path], typer.Option(help="Judge against the policies in this JSON file.")] = None,
    fail_on: Annotated[Severity, typer.Option("--fail-on", help="The lowest finding severity that fails a wheel.")] = Severity.error,
    disable_isa_ext_check: Annotated[bool, typer.Option("--disable-isa-ext-check", help="Do not check the x86-64 ISA level.")] = False,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="No progress line.")] = False,
) -> None:
    """Audit many wheels on a Dask cluster into Parquet tables. Needs the census extra. Exit status: 0 when the census ran, 2 bad input."""
    try:
        from wheelcheck.census.engine import CensusOptions, run_census
        from wheelcheck.census.sources import expand_sources
    except ImportError as exc:
        _fail(f"census needs the census extra ({exc.name} is missing): pip install 'wheelcheck[census]'")
    from wheelcheck.report.census_progress import census_progress

    audit_options = {"plat": plat, "policy_file": _str(policy_file), "fail_on": fail_on.value,
                     "isa_check": not disable_isa_ext_check}
    try:
        load_policies(policy_file)  # a bad policy file is one error here, not one per wheel
        unreadable: list[str] = []
        wheels = expand_sources(sources, project or (), linux_only=not all_platforms, problems=unreadable,
                                file_origins=file_origin or ())
        if unreadable:
            _say(f"wheelcheck: warning: {len(unreadable)} index pages skipped, e.g. {unreadable[0]}", err=True)
        with census_progress(not quiet) as progress:
            result = run_census(wheels, CensusOptions(out_dir=out_dir, scheduler=scheduler, workers=workers,
                                                      memory_limit=memory_limit, timeout=timeout,
                                                      audit_memory=audit_memory << 20 if audit_memory else None,
                                                      audit=audit_options), progress=progress)
    except WheelcheckError as exc:
        _fail(str(exc))
    rate = result.audited / result.seconds if result.seconds else 0.0
    _say(f"census: {result.total} wheels, {result.skipped} already in {out_dir}, {result.audited} audited "
         f"({result.audited - result.errors - result.failed} pass, {result.failed} fail, {result.errors} "
         f"errors) in {result.seconds:.1f} s, {rate:.2f} wheels/s")


