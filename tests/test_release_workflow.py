"""The release workflow (.github/workflows/release.yml): on a tag v*, build the sdist and the wheel, check
them (the tag against the version and the changelog, twine, the license files, an audit by the wheelcheck they
hold), then publish by PyPI's trusted publishing from a job of its own that alone may ask for a token.

Its checking steps run here as the runner runs them (`bash -eo pipefail`, in a workspace holding this
checkout's files and a dist/ that `python -m build` made), on the good case and on the bad ones."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT, source_copy

yaml = pytest.importorskip("yaml")
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"


def load() -> dict:
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    workflow["on"] = workflow.pop(True)  # YAML 1.1 reads the key `on` as true
    return workflow


def step(job: dict, words: str) -> dict:
    (found,) = [s for s in job["steps"] if words in s.get("name", "")]
    return found


def test_the_workflow_builds_checks_and_publishes_on_a_tag():
    workflow = load()
    assert workflow["on"] == {"push": {"tags": ["v*"]}}
    assert workflow["permissions"] == {"contents": "read"}  # the default for every job: read only
    build, publish = workflow["jobs"]["build"], workflow["jobs"]["publish"]
    assert "permissions" not in build
    runs = [s.get("run", "") for s in build["steps"]]
    order = [next(i for i, run in enumerate(runs) if command in run)
             for command in ("python -m build", "twine check --strict dist/*", "pip install dist/*.whl",
                             "wheelcheck audit --isolated --fail-on warning dist/*.whl")]
    assert order == sorted(order), "build, twine, install, then audit"
    upload = build["steps"][-1]
    assert upload["uses"].startswith("actions/upload-artifact@") and upload["with"]["path"] == "dist/"

    assert publish["needs"] == "build" and publish["environment"]["name"] == "pypi"
    assert publish["permissions"] == {"id-token": "write"}
    download, upload_to_pypi = publish["steps"]
    assert download["uses"].startswith("actions/download-artifact@") and download["with"]["name"] == "dist"
    assert upload_to_pypi["uses"] == "pypa/gh-action-pypi-publish@release/v1" and "with" not in upload_to_pypi


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    here = tmp_path_factory.mktemp("release")
    out = here / "dist"
    subprocess.run([sys.executable, "-m", "build", "-o", str(out), str(source_copy(here / "src"))], check=True,
                   capture_output=True, text=True, timeout=600)
    return out


def run_step(spec: dict, workspace: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """One `run:` step as the runner runs a bash step, with this test environment's Python and wheelcheck."""
    assert "${{" not in spec["run"]
    environ = {**os.environ, "GITHUB_REF_NAME": "v0.0.0", **(env or {})}
    environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), environ["PATH"]])
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", spec["run"]], cwd=workspace,
                          env=environ, capture_output=True, text=True, timeout=300)


def workspace_with(tmp_path: Path, dist: Path, changelog: str | None = None) -> Path:
    workspace = tmp_path / "workspace"
    (workspace / "wheelcheck").mkdir(parents=True)
    shutil.copy(ROOT / "wheelcheck" / "_version.py", workspace / "wheelcheck" / "_version.py")
    (workspace / "CHANGELOG.md").write_text(changelog if changelog is not None else
                                            (ROOT / "CHANGELOG.md").read_text(encoding="utf-8"), encoding="utf-8")
    shutil.copytree(dist, workspace / "dist")
    return workspace


def test_the_tag_must_be_the_version_and_have_a_changelog_section(tmp_path, dist):
    from wheelcheck._version import __version__

    check = step(load()["jobs"]["build"], "The tag is the package's version")
    released = f"# Changelog\n\n## [Unreleased]\n\n## [{__version__}] - 2027-01-15\n\n### Added\n"
    workspace = workspace_with(tmp_path, dist, released)
    assert run_step(check, workspace, {"GITHUB_REF_NAME": f"v{__version__}"}).returncode == 0
    proc = run_step(check, workspace, {"GITHUB_REF_NAME": "v9.9.9"})
    assert proc.returncode == 1 and f"is not v{__version__}" in proc.stdout
    unreleased = workspace_with(tmp_path / "u", dist, "# Changelog\n\n## [Unreleased]\n")
    proc = run_step(check, unreleased, {"GITHUB_REF_NAME": f"v{__version__}"})
    assert proc.returncode == 1 and "CHANGELOG.md has no section" in proc.stdout


def test_the_built_files_pass_their_checks(tmp_path, dist):
    build = load()["jobs"]["build"]
    workspace = workspace_with(tmp_path, dist)
    proc = run_step(step(build, "carry LICENSE and NOTICE"), workspace)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = run_step(step(build, "Audit the wheel"), workspace)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASS pure wheel" in proc.stdout
    if shutil.which("twine", path=str(Path(sys.executable).parent)) or shutil.which("twine"):
        proc = run_step(step(build, "metadata as PyPI"), workspace)
        assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_audit_step_stops_a_wheel_changed_after_its_build(tmp_path, dist):
    import zipfile

    workspace = workspace_with(tmp_path, dist)
    (wheel,) = (workspace / "dist").glob("*.whl")
    changed = wheel.with_suffix(".tmp")
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(changed, "w", zipfile.ZIP_DEFLATED) as out:
        for info in src.infolist():
            data = src.read(info)
            out.writestr(info, data + b"\n# changed\n" if info.filename == "wheelcheck/cli/entry.py" else data)
    changed.replace(wheel)
    proc = run_step(step(load()["jobs"]["build"], "Audit the wheel"), workspace)
    assert proc.returncode == 1 and "record-hash" in proc.stdout, proc.stdout + proc.stderr
