"""The project's own habits, checked with the suite: ruff's lint rules over the whole tree, mypy over the package."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_is_clean():
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    assert ruff, "ruff comes with the test extra: pip install -e '.[test]'"
    proc = subprocess.run([ruff, "check", "--no-cache", "wheelcheck", "tests", "bench", "tools", "corpus"],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_is_clean():
    # pyproject.toml's [tool.mypy] names the files and the untyped imports; the cache stays out of the tree
    proc = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", "/dev/null"], cwd=ROOT,
                          capture_output=True, text=True)
    assert "No module named mypy" not in proc.stderr, "mypy comes with the test extra: pip install -e '.[test]'"
    assert proc.returncode == 0, proc.stdout + proc.stderr
