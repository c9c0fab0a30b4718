"""Read distributions for `wheelcheck conflicts`: from wheels, or installed in an environment.

A wheel goes through scan_wheel. An installed distribution is found by its *.dist-info directory: its
METADATA (name, version, Requires-Dist), WHEEL (tags) and RECORD, whose rows name the files it installed
(relative to site-packages). Files named like shared objects are read and summarised once, in parallel
when there is enough of them. Python files are searched for RTLD_GLOBAL: a distribution that loads
libraries that way puts its symbols before everyone else's.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
from email.parser import HeaderParser
from pathlib import Path

from packaging.tags import Tag, parse_tag

from wheelcheck.conflicts.distribution import Distribution
from wheelcheck.conflicts.global_loading import global_loading, names_rtld_global
from wheelcheck.elf.elf_info import ElfInfo
from wheelcheck.elf.elf_summary import is_elf, summarize_file
from wheelcheck.errors import BadElfError, UsageError
from wheelcheck.wheel.forked import ChildDied, fork_map
from wheelcheck.wheel.scanner import default_jobs, scan_wheel
from wheelcheck.wheel.wheel_reader import WheelReader

__all__ = ["from_wheel", "from_environment", "site_packages_of", "default_python"]

PARALLEL_THRESHOLD = 16 << 20  # below this much ELF data, starting processes costs more than it saves
_SHARED_OBJECT = re.compile(r"\.so(?:\.[0-9A-Za-z_]+)*$")
_PATHS_SCRIPT = ("import json, sysconfig; "
                 "print(json.dumps([sysconfig.get_path('purelib'), sysconfig.get_path('platlib')]))")


def from_wheel(path: str | Path, jobs: int | None = None) -> Distribution:
    model = scan_wheel(path, jobs=jobs)
    with WheelReader(path) as reader:
        meta = HeaderParser().parsestr(reader.metadata_text("METADATA") or "")
        python = [m.filename for m in reader.members if m.filename.endswith(".py")]
        sources = {name: source for name in python if names_rtld_global(source := reader.read(name))}
        loading = global_loading(sources, lambda: ((n, reader.read(n)) for n in python if n not in sources))
    # METADATA spells the name as an environment's dist-info does; the file name only canonically
    return Distribution(meta.get("Name") or model.name, meta.get("Version") or model.version, model.filename,
                        model.requires_dist, model.tags, model.elves, loading.loaders, loading.libraries,
                        loading.dormant)


def default_python() -> str:
    """The active virtual environment's interpreter, else the one running wheelcheck."""
    venv = os.environ.get("VIRTUAL_ENV")
    if venv and (Path(venv) / "bin" / "python").exists():
        return str(Path(venv) / "bin" / "python")
    return sys.executable


def site_packages_of(python: str) -> list[Path]:
    """purelib and platlib of the interpreter ``python``, asked of it in a subprocess."""
    try:
        proc = subprocess.run([python, "-c", _PATHS_SCRIPT], capture_output=True, text=True, timeout=60)
    except OSError as exc:
        raise UsageError(python, f"cannot run it as a Python interpreter ({exc.strerror or exc})") from None
    except subprocess.TimeoutExpired:
        raise UsageError(python, "did not answer within 60 s when asked for its site-packages") from None
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise UsageError(python, f"cannot tell its site-packages ({last})")
    try:
        paths = json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise UsageError(python, "is not a Python interpreter (unexpected answer)") from None
    return list(dict.fromkeys(Path(p) for p in paths if p and Path(p).is_dir()))


def from_environment(targets: list[str], jobs: int | None = None) -> tuple[list[Distribution], list[str], list[str]]:
    """(distributions, site-packages directories read, notes) for Python executables or directories."""
    targets = [t for t in targets if t]  # "" is `--env` alone: the default interpreter
    dirs: list[Path] = []
    for target in targets or [default_python()]:
        path = Path(target)
        if path.is_dir():
            dirs.append(path)
        elif path.exists():
            dirs.extend(site_packages_of(target))
        else:
            raise UsageError(target, "no such file or directory (give a Python executable or a site-packages "
                                     "directory)")
    dirs = list(dict.fromkeys(d.resolve() for d in dirs))
    notes: list[str] = []
    if not targets:  # said, not assumed: under pipx with no environment active, this is wheelcheck's own
        said = (f"inspected the active virtual environment's Python, {default_python()}" if os.environ.get("VIRTUAL_ENV")
                else f"no virtual environment is active: inspected the Python wheelcheck runs in, {default_python()}")
        notes.append(f"{said}; name another with --env PYTHON")
    found = []  # (site-packages, dist-info, metadata, tags, ELF paths, what it loads with RTLD_GLOBAL)
    for site in dirs:
        infos = sorted(site.glob("*.dist-info"))
        if not infos:
            notes.append(f"{site}: no *.dist-info directory (not a site-packages directory?)")
        for info in infos:
            entry = _read_dist_info(site, info, notes)
            if entry is not None:
                found.append(entry)
    wanted = [(site, rel) for site, _i, _m, _t, elves, _l in found for rel in elves]
    summaries = dict(zip(wanted, _summarize_files(wanted, jobs)))
    dists = []
    for site, info, meta, tags, elves, loading in found:
        dists.append(Distribution(
            meta.get("Name", info.name.split("-")[0]), meta.get("Version", "?"), f"{site}/{info.name}",
            tuple(meta.get_all("Requires-Dist") or ()), tags,
            tuple(summaries[(site, rel)] for rel in elves), loading.loaders, loading.libraries, loading.dormant))
    return dists, [str(d) for d in dirs], notes


def _read_dist_info(site: Path, info: Path, notes: list[str]):
    try:
        meta = HeaderParser().parsestr((info / "METADATA").read_text("utf-8", "replace"))
        record = (info / "RECORD").read_text("utf-8", "replace")
    except OSError:
        notes.append(f"{info.name}: no METADATA or RECORD, skipped")
        return None
    tags: frozenset[Tag] = frozenset()
    try:
        wheel = HeaderParser().parsestr((info / "WHEEL").read_text("utf-8", "replace"))
        tags = frozenset(t for line in wheel.get_all("Tag") or () for t in parse_tag(line.strip()))
    except (OSError, ValueError):
        pass  # no WHEEL (installed from an sdist by an old pip): everything in an environment shares a process
    elves, python, sources = [], [], {}
    for row in csv.reader(io.StringIO(record)):
        if not row or not row[0]:
            continue
        rel = row[0]
        name = rel.rsplit("/", 1)[-1]
        if _SHARED_OBJECT.search(name):
            if _is_elf_file(site / rel):
                elves.append(rel)
        elif name.endswith(".py"):
            python.append(rel)
            try:
                if names_rtld_global(source := (site / rel).read_bytes()):
                    sources[rel] = source
            except OSError:
                continue
    loading = global_loading(sources, lambda: _read_python(site, [r for r in python if r not in sources]))
    return site, info, meta, tags, elves, loading


def _read_python(site: Path, paths: list[str]):
    for rel in paths:
        try:
            yield rel, (site / rel).read_bytes()
        except OSError:
            continue


def _is_elf_file(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return is_elf(f.read(4))
    except OSError:
        return False  # listed in RECORD but gone: nothing to load


def _summarize_files(wanted: list[tuple[Path, str]], jobs: int | None) -> list[ElfInfo]:
    sizes = [(site / rel).stat().st_size for site, rel in wanted]
    jobs = (jobs or default_jobs()) if sum(sizes) >= PARALLEL_THRESHOLD else 1
    try:
        return fork_map(_summarize_item, wanted, sizes, jobs)
    except ChildDied as died:  # killed (out of memory, a signal): no error came back to raise
        site, rel = wanted[died.item or 0]
        raise BadElfError(str(site / rel), "a worker process died while reading the files of the environment "
                                           "(killed, or out of memory); --jobs 1 reads them in this process") from None


def _summarize_item(item: tuple[Path, str]) -> ElfInfo:
    site, rel = item
    return _summarize_file(str(site), rel)


def _summarize_file(site: str, rel: str) -> ElfInfo:
    path = Path(site) / rel
    try:
        return summarize_file(str(path), rel)
    except OSError as exc:
        raise BadElfError(str(path), f"cannot read it ({exc.strerror or exc})") from None
    except BadElfError as exc:
        raise BadElfError(str(path), exc.problem) from None
