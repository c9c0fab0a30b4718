"""The commit convention (CONTRIBUTING.md): a subject of at most 72 characters, a blank line before the body.
tools/check_commit_msg.py checks it, and .pre-commit-config.yaml runs it at the commit-msg stage: here on
messages directly, and through pre-commit's installed hook on real commits in a scratch repository."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT

yaml = pytest.importorskip("yaml")
CHECK = ROOT / "tools" / "check_commit_msg.py"
GOOD = ("Ship LICENSE and auditwheel's notice in the wheel and sdist\n\n"
        "Legal review had nothing to read: METADATA said only 'License: MIT'.\n")
LONG = ("Ship LICENSE and the notice of auditwheel's policy data in both the wheel and the sdist\n\n"
        "The body says why.\n")


def check(tmp_path: Path, message: str) -> subprocess.CompletedProcess:
    path = tmp_path / "COMMIT_EDITMSG"
    path.write_text(message, encoding="utf-8")
    return subprocess.run([sys.executable, str(CHECK), str(path)], capture_output=True, text=True, timeout=60)


def test_a_subject_of_72_characters_passes_and_73_fails(tmp_path):
    assert check(tmp_path, GOOD).returncode == 0
    assert check(tmp_path, "x" * 72 + "\n").returncode == 0
    proc = check(tmp_path, "x" * 73 + "\n\nwhy\n")
    assert proc.returncode == 1 and "the subject is 73 characters, more than 72" in proc.stdout
    proc = check(tmp_path, LONG)
    assert proc.returncode == 1 and proc.stdout.count("\n") == 1, proc.stdout


def test_what_git_drops_is_not_counted(tmp_path):
    # comment lines, the lines below `git commit -v`'s scissors, an autosquash prefix
    message = ("# Please enter the commit message\n" + GOOD + "# " + "long comment " * 20 + "\n"
               "# ------------------------ >8 ------------------------\n" + "diff " * 40 + "\n")
    assert check(tmp_path, message).returncode == 0
    assert check(tmp_path, "fixup! " + "x" * 72 + "\n").returncode == 0


def test_a_body_needs_a_blank_line_and_a_message_words(tmp_path):
    proc = check(tmp_path, "Fix the thing\nbecause it broke\n")
    assert proc.returncode == 1 and "blank line" in proc.stdout
    proc = check(tmp_path, "# only a comment\n\n")
    assert proc.returncode == 1 and "empty" in proc.stdout


def test_the_project_hook_runs_the_check_at_the_commit_msg_stage():
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    (hook,) = [h for repo in config["repos"] for h in repo["hooks"] if h["id"] == "commit-subject"]
    assert hook["stages"] == ["commit-msg"] and hook["entry"].endswith("tools/check_commit_msg.py")


def test_pre_commit_refuses_a_long_subject_in_a_real_commit(tmp_path):
    pre_commit = shutil.which("pre-commit", path=str(Path(sys.executable).parent)) or shutil.which("pre-commit")
    if pre_commit is None or shutil.which("git") is None or shutil.which("python3") is None:
        pytest.skip("pre-commit, git and python3 are needed")
    repo = tmp_path / "repo"
    (repo / "tools").mkdir(parents=True)
    shutil.copy(CHECK, repo / "tools" / CHECK.name)
    shutil.copy(ROOT / ".pre-commit-config.yaml", repo / ".pre-commit-config.yaml")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"), "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid", "GIT_CONFIG_GLOBAL": os.devnull}
    env.pop("GIT_DIR", None)
    env.pop("GIT_INDEX_FILE", None)

    def git(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, timeout=300)

    assert git("init", "-q").returncode == 0
    proc = subprocess.run([pre_commit, "install", "--hook-type", "commit-msg"], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    git("add", "-A")
    proc = git("commit", "-q", "-m", LONG.split("\n\n")[0], "-m", "The body says why.")
    assert proc.returncode != 0 and "more than 72" in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    assert git("rev-parse", "--verify", "-q", "HEAD").returncode != 0  # nothing was committed
    proc = git("commit", "-q", "-m", GOOD.split("\n\n")[0], "-m", "The body says why.")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert git("log", "--format=%s").stdout.strip() == GOOD.split("\n\n")[0]
