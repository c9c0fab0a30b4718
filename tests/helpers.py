"""Small helpers shared by the test modules: run the CLI (in this process, or in its own), read its JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
AUDITWHEEL_BUNDLED = ROOT / "tests" / "data" / "auditwheel-bundled"  # auditwheel's own test wheels (MIT)


class CliResult(NamedTuple):
    """What a user of the command line sees: the exit status and the two streams."""

    returncode: int
    stdout: str
    stderr: str


def run_cli(*args: str | Path, cwd: Path | None = None, env: dict[str, str | None] | None = None) -> CliResult:
    """``wheelcheck ARGS`` run in this process (typer's CliRunner), from ``cwd``, with ``env`` set on top of
    the environment (None unsets a variable). An exception the CLI does not turn into a message is raised
    here, so a crash fails the test with its traceback."""
    from typer.testing import CliRunner

    from wheelcheck.cli import app

    previous = Path.cwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        result = CliRunner().invoke(app, [str(a) for a in args], env=env, catch_exceptions=False)
    finally:
        os.chdir(previous)
    return CliResult(result.exit_code, result.stdout, result.stderr)


def run_cli_process(*args: str | Path, cwd: Path | None = None, **kwargs) -> subprocess.CompletedProcess:
    """``python -m wheelcheck ARGS`` in a process of its own, for the tests where the process is the point:
    the entry point, signals, resource limits, a terminal."""
    return subprocess.run([sys.executable, "-m", "wheelcheck", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=600, **kwargs)


def audit_json(*args: str | Path) -> tuple[int, dict]:
    """The exit status and JSON report of ``wheelcheck audit ARGS``, linux_ tags taken (--any-platform-tag): the
    tests judge unrepaired wheels for other rules; tests/test_package_rules.py tests the tag."""
    proc = run_cli("audit", "--format", "json", "--any-platform-tag", *args)
    return proc.returncode, json.loads(proc.stdout)


def auditwheel_show(wheel: Path) -> dict:
    """auditwheel 6.8.2's answer (the oracle), from ``auditwheel show --json``."""
    proc = subprocess.run([sys.executable, "-m", "auditwheel", "show", "--json", str(wheel)],
                          capture_output=True, text=True, timeout=600)
    return json.loads(proc.stdout)


def auditwheel_policies() -> dict[str, dict]:
    """auditwheel 6.8.2's own policy data (its manylinux and musllinux JSON files), by policy name."""
    import importlib.util

    spec = importlib.util.find_spec("auditwheel")
    if spec is None:
        import pytest

        pytest.skip("auditwheel (the oracle) is not installed")
    policy_dir = Path(next(iter(spec.submodule_search_locations))) / "policy"
    out = {}
    for filename in ("manylinux-policy.json", "musllinux-policy.json"):
        for entry in json.loads((policy_dir / filename).read_text(encoding="utf-8")):
            out[entry["name"]] = entry
    return out


def repair_json(*args: str | Path, env: dict[str, str | None] | None = None) -> tuple[CliResult, dict]:
    """``wheelcheck repair --format json ARGS`` (in this process): the result and its parsed report."""
    proc = run_cli("repair", "--format", "json", *args, env=env)
    return proc, json.loads(proc.stdout) if proc.stdout.strip() else {}


def make_venv(path: Path) -> Path:
    """A fresh venv without pip (fast); install into it with ``pip_install``. Returns its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True, timeout=120)
    return path / "bin" / "python"


def pip_install(python: Path, wheel: Path) -> subprocess.CompletedProcess:
    """``pip install --no-index --no-deps WHEEL`` into the venv of ``python`` (pip runs from this Python)."""
    return subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-index",
                           "--no-deps", "--disable-pip-version-check", "-q", str(wheel)],
                          capture_output=True, text=True, timeout=300)


def import_and_call(python: Path, module: str, cwd: Path) -> subprocess.CompletedProcess:
    """``import module; print(module.call())`` with the venv's ``python``, no LD_LIBRARY_PATH or PYTHONPATH
    inherited: what the loader finds is what the wheel installed."""
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "PYTHONPATH")}
    return subprocess.run([str(python), "-c", f"import {module} as m; print(m.call())"], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=120)


def audit_one(wheel, **kw):
    """The WheelReport of one wheel, through the Python API. linux_ tags are taken (any_platform_tag) unless
    ``kw`` says otherwise: the tests judge unrepaired wheels for other rules; test_package_rules tests the tag."""
    from wheelcheck import audit

    (report,) = audit(wheel, **{"any_platform_tag": True, **kw}).wheels
    return report


def by_rule(report, rule: str) -> list:
    return [f for f in report.findings if f.rule == rule]


def bundled_policy_with(path: Path, base: str = "manylinux_2_17", **fields) -> Path:
    """A copy of bundled policy ``base`` with ``fields`` set, written to ``path``; returns ``path``. The copy is
    named team_X_Y (manylinux_2_17 -> team_2_17), without aliases: a policy file takes no standard name."""
    doc = json.loads((ROOT / "policies" / f"{base}.json").read_text())
    own = {"name": "team_" + base.split("_", 1)[1], "aliases": []}
    path.write_text(json.dumps({**doc, **own, **fields}))
    return path


def files_but_sbom(zf) -> set[str]:
    """A wheel's file members, less wheelcheck's SBOM: to compare with auditwheel's output, which carries
    an SBOM only when a package manager owns a grafted library (docs/differences.md R9)."""
    return {n for n in zf.namelist() if not n.endswith("/") and not n.endswith(".dist-info/sboms/wheelcheck.cdx.json")}


def source_copy(dest: Path) -> Path:
    """The project's source as a checkout holds it, copied to ``dest``: ``python -m build`` writes
    wheelcheck.egg-info and build/ into the tree it builds, so two builds of the one tree at once (tests on two
    workers) trip over each other."""
    import shutil

    shutil.copytree(ROOT, dest, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"))
    return dest
