"""The project's own habits, checked with the suite: ruff's lint rules of pyproject.toml over the whole tree."""
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
