"""[tool.wheelcheck] in pyproject.toml sets audit's defaults, the command line overrides them, `wheelcheck
config` says where each setting came from; --fail-on decides which findings fail a wheel."""

from __future__ import annotations

import json

import pytest

from tests.fixtures.sources import extension_source, math_extension_source
from tests.fixtures.wheels import build_wheel
from tests.helpers import ROOT, run_cli
from wheelcheck import audit

EXT = "pkg/{}.cpython-311-x86_64-linux-gnu.so"
USES_ALPHA = extension_source("usealpha", "    return alpha_value();", prelude="extern int alpha_value(void);\n")
SAMPLE = ROOT / "samples" / "demo_ext-1.0-cp311-cp311-manylinux_2_31_x86_64.whl"


@pytest.fixture(scope="module")
def project(build, tmp_path_factory):
    """A project folder with dist/mathmod (needs GLIBC_2.29 for exp2 and log2; claims plain linux) and
    dist/usealpha (needs the external libalpha.so.1), and a sub-folder to run from."""
    root = tmp_path_factory.mktemp("project")
    math = build.compile_c(math_extension_source("mathmod"), "mathmod.so", libs=("m",))
    build_wheel(root / "dist", "mathmod", "1.0", "cp311-cp311-linux_x86_64", {EXT.format("mathmod"): math})
    alpha, _ = build.alpha_beta()
    ext = build.compile_c(USES_ALPHA, "usealpha.so", libs=(alpha,))
    build_wheel(root / "alpha", "usealpha", "1.0", "cp311-cp311-linux_x86_64", {EXT.format("usealpha"): ext})
    (root / "sub" / "deeper").mkdir(parents=True)
    return root


def write_pyproject(folder, table: str) -> None:
    (folder / "pyproject.toml").write_text(f'[project]\nname = "x"\n\n[tool.wheelcheck]\n{table}\n')


def test_pyproject_sets_defaults_and_the_command_line_overrides(project):
    write_pyproject(project, 'plat = "manylinux_2_17_x86_64"\nformat = "json"\nany-platform-tag = true')
    run_from = project / "sub" / "deeper"  # found from the current directory upward
    proc = run_cli("audit", project / "dist", cwd=run_from)
    assert proc.returncode == 1, proc.stderr  # GLIBC_2.29 does not meet manylinux_2_17
    wheel = json.loads(proc.stdout)["wheels"][0]  # format = "json"
    assert wheel["required_tag"] == "manylinux_2_17_x86_64" and not wheel["passed"]
    proc = run_cli("audit", project / "dist", "--plat", "manylinux_2_31_x86_64", "--format", "text", cwd=run_from)
    assert proc.returncode == 0 and "PASS deserves manylinux_2_31_x86_64, required manylinux_2_31_x86_64" in proc.stdout
    shown = json.loads(run_cli("config", "--format", "json", cwd=run_from).stdout)
    assert shown["pyproject"] == str(project / "pyproject.toml")
    assert shown["settings"]["plat"] == {"value": "manylinux_2_17_x86_64", "source": str(project / "pyproject.toml")}
    assert shown["settings"]["fail-on"] == {"value": "error", "source": "default"}
    text = run_cli("config", cwd=run_from).stdout
    assert "plat" in text and "manylinux_2_17_x86_64" in text and f"({project / 'pyproject.toml'})" in text


def test_exclude_and_relative_policy_file(project, tmp_path):
    policies = project / "team"
    policies.mkdir(exist_ok=True)
    (policies / "acme.json").write_text(json.dumps(
        {"name": "acme_2_28", "extends": "manylinux_2_28", "lib_whitelist": ["libacme.so.1"]}))
    write_pyproject(project, 'exclude = ["libalpha.so.*"]\npolicy-file = "team/acme.json"\nany-platform-tag = true')
    proc = run_cli("audit", project / "alpha", "--format", "json", cwd=project / "sub")
    assert proc.returncode == 0, proc.stderr
    wheel = json.loads(proc.stdout)["wheels"][0]
    # libalpha excluded by the project; judged against the team policy, found relative to pyproject.toml
    assert wheel["external_libs"] == [] and wheel["deserved_tag"] == "acme_2_28_x86_64"
    shown = json.loads(run_cli("config", "--format", "json", cwd=project / "sub").stdout)["settings"]
    assert shown["policy-file"]["value"] == str(policies / "acme.json")
    # an explicit --config replaces the search; the command line still wins over it
    other = tmp_path / "ci.toml"
    other.write_text('[tool.wheelcheck]\nfail-on = "warning"\nany-platform-tag = true\n')
    proc = run_cli("audit", project / "alpha", "--config", other, cwd=project / "sub")
    assert proc.returncode == 1 and "warning external-library" in proc.stdout  # no exclude from pyproject now
    proc = run_cli("audit", project / "alpha", "--config", other, "--fail-on", "error", cwd=project / "sub")
    assert proc.returncode == 0


@pytest.mark.parametrize("table, message", [
    ('platt = "manylinux_2_17_x86_64"', "unknown key 'platt'"),
    ('fail-on = "fatal"', "fail-on must be one of error, warning, info"),
    ("exclude = 3", "exclude must be a string or a list of strings"),
    ("plat = [", "not valid TOML"),
])
def test_bad_settings_are_one_line_errors(tmp_path, table, message):
    write_pyproject(tmp_path, table)
    for command in (("audit", SAMPLE), ("config",)):
        proc = run_cli(*command, cwd=tmp_path)
        assert proc.returncode == 2 and proc.stdout == ""
        assert proc.stderr.count("\n") == 1 and message in proc.stderr and "pyproject.toml" in proc.stderr


def test_fail_on_is_judged_by_the_library():
    """The sample wheel's one finding is info (GLIBC_2.29 binds the verdict): it fails only --fail-on info."""
    report = audit(SAMPLE)
    assert [f.severity for f in report.wheels[0].findings] == ["info"] and report.exit_code == 0
    strict = audit(SAMPLE, fail_on="info")
    assert not strict.wheels[0].passed and strict.exit_code == 1 and strict.to_dict()["fail_on"] == "info"
    assert audit(SAMPLE, fail_on="warning").exit_code == 0
    proc = run_cli("audit", SAMPLE, "--fail-on", "info")
    assert proc.returncode == 1 and "FAIL" in proc.stdout
    assert "info symbol-version: demo_ext/_demo.cpython-311-x86_64-linux-gnu.so: GLIBC_2.29" in proc.stdout  # shown
    assert "FAIL (--fail-on info) deserves" in proc.stdout  # and why a wheel with no error fails


def test_no_pyproject_means_defaults(tmp_path):
    proc = run_cli("config", "--config", tmp_path / "missing.toml")
    assert proc.returncode == 2 and "missing.toml" in proc.stderr
    (tmp_path / "empty.toml").write_text("")
    shown = json.loads(run_cli("config", "--config", tmp_path / "empty.toml", "--format", "json").stdout)
    assert {s["source"] for s in shown["settings"].values()} == {"default"}
