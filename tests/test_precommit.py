"""The pre-commit hook (.pre-commit-hooks.yaml): its entry validates policy files, and pre-commit itself
installs this repository as a hook and runs it (`pre-commit try-repo`)."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT, CliResult, run_cli

yaml = pytest.importorskip("yaml")

GOOD = {"name": "acme_2_28", "extends": "manylinux_2_28", "lib_whitelist": ["libacme.so.1"]}
CHILD = {"name": "acme_2_28_strict", "extends": "acme_2_28", "priority": 65, "cxx_abi": ["new"]}
OTHER = {"name": "lab_2_34", "extends": "manylinux_2_34", "lib_whitelist": ["libacme.so.1", "liblab.so.2"]}
BAD = {"name": "acme_2_28_typo", "extends": "manylinux_2_28", "lib_whitlist": ["libacme.so.1"]}


def hook() -> dict:
    (only,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert only["id"] == "wheelcheck-policy-validate" and only["language"] == "python"
    return only


def run_entry(*files: Path) -> CliResult:
    """The hook's entry as pre-commit runs it: the command, then the file names (in this process; the
    test below runs it through pre-commit itself)."""
    command = shlex.split(hook()["entry"])
    assert command[0] == "wheelcheck"
    return run_cli(*command[1:], *files)


def write(folder: Path, name: str, doc) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2) + "\n")
    return path


def test_entry_on_good_and_bad_files(tmp_path):
    good, other = write(tmp_path, "policies/acme.json", [GOOD, CHILD]), write(tmp_path, "policies/lab.json", OTHER)
    proc = run_entry(good, other)
    assert proc.returncode == 0 and "3 policies in 2 files: valid" in proc.stdout, proc.stdout + proc.stderr
    bad = write(tmp_path, "policies/typo.json", BAD)
    proc = run_entry(good, bad)
    assert proc.returncode == 1 and str(bad) in proc.stdout and "lib_whitlist" in proc.stdout
    assert str(good) + ":" not in proc.stdout
    dup = write(tmp_path, "other/policy.json", OTHER)  # checked together: a name defined in two files
    proc = run_entry(good, other, dup)
    assert proc.returncode == 1 and "lab_2_34 is already the name of lab_2_34" in proc.stdout, proc.stdout


def test_which_files_the_hook_takes():
    spec = hook()
    assert spec["types"] == ["json"] and spec.get("require_serial") is True
    files = re.compile(spec["files"])
    for path in ("policies/acme.json", "ci/team-policy.json", "config/policy.json"):
        assert files.search(path), path
    for path in ("package.json", "tsconfig.json", "data/rules.json"):
        assert not files.search(path), path


def test_pre_commit_try_repo(tmp_path):
    pre_commit = shutil.which("pre-commit", path=str(Path(sys.executable).parent)) or shutil.which("pre-commit")
    if pre_commit is None or shutil.which("git") is None:
        pytest.skip("pre-commit and git are needed")
    repo = tmp_path / "team-repo"
    repo.mkdir()
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"), "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True, env=env)
    write(repo, "policies/acme.json", [GOOD, CHILD])
    write(repo, "policies/lab.json", OTHER)
    write(repo, "package.json", {"name": "not a policy"})
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=env)

    write(repo, "policies/typo.json", BAD)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=env)
    # one run (each installs the hook's environment afresh): two good files and a bad one
    proc = subprocess.run([pre_commit, "try-repo", str(ROOT), "wheelcheck-policy-validate", "--all-files",
                           "--verbose"], cwd=repo, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "validate wheelcheck policies" in proc.stdout and "Failed" in proc.stdout
    assert "policies/typo.json" in proc.stdout and "lib_whitlist" in proc.stdout
    # the three policy files were given to it, together, and package.json was not
    assert "3 policies in 3 files: 1 problem" in proc.stdout
    assert "policies/acme.json:" not in proc.stdout and "policies/lab.json:" not in proc.stdout
