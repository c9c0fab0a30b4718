"""A repaired wheel installs with pip into a fresh venv and works once the build directory is gone.

The control: the same wheel unrepaired, installed the same way, fails to import once the build directory
is deleted (so the repaired wheel's success is the repair's doing, not the host's).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.fixtures.repair_scenario import EXPECTED, SCRIPT_OUTPUT, build_scenario
from tests.helpers import make_venv, pip_install, repair_json

CALL_ALL = "import importlib, json; print(json.dumps({m: importlib.import_module(m).call() for m in %r}))"


def clean_env() -> dict:
    return {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "PYTHONPATH")}


@pytest.fixture(scope="module")
def installed(build, tmp_path_factory):
    root = tmp_path_factory.mktemp("repair-install")
    scenario = build_scenario(build, root)
    proc, report = repair_json(scenario.wheel, "-w", root / "wheelhouse")
    assert proc.returncode == 0, proc.stderr
    repaired = Path(report["wheels"][0]["output"])
    python = make_venv(root / "venv")
    proc = pip_install(python, repaired)
    assert proc.returncode == 0, proc.stderr
    control = make_venv(root / "control")
    assert pip_install(control, scenario.wheel).returncode == 0
    shutil.rmtree(scenario.build_dir)
    return python, control, root


def test_every_module_imports_and_calls(installed):
    python, _, root = installed
    proc = subprocess.run([str(python), "-c", CALL_ALL % sorted(EXPECTED)], capture_output=True, text=True,
                          cwd=root, env=clean_env(), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == EXPECTED


def test_elf_script_runs_through_its_launcher(installed):
    python, _, root = installed
    script = python.parent / "alpha-tool"
    assert script.read_bytes().startswith(f"#!{python}".encode())  # pip rewrote the launcher's #!python
    proc = subprocess.run([str(script)], capture_output=True, text=True, cwd=root, env=clean_env(), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == SCRIPT_OUTPUT


def test_unrepaired_wheel_breaks_without_the_build_directory(installed):
    _, control, root = installed
    proc = subprocess.run([str(control), "-c", "import demo._top"], capture_output=True, text=True, cwd=root,
                          env=clean_env(), timeout=120)
    assert proc.returncode != 0
    assert "libalpha.so.1" in proc.stderr
