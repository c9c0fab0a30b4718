"""Settings under attack: a repository's pyproject.toml and policy files are its contributors' to change, so they
may relax a verdict only visibly, never redefine a standard tag, and never make a claim disappear; --isolated
ignores them all (docs/security.md)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fixtures.repair_scenario import EXT_SUFFIX, python_tag
from tests.fixtures.sources import extension_source
from tests.fixtures.wheels import build_wheel
from tests.helpers import bundled_policy_with, run_cli
from tests.test_sarif import sarif_validator


@pytest.fixture
def needs_libx(build, tmp_path) -> Path:
    """A wheel claiming manylinux_2_17 whose extension needs libx.so.1, which no policy lets the system provide."""
    lib = build.compile_c("int x_value(void) { return 42; }\n", "libx.so.1", flags=("-Wl,-soname,libx.so.1",))
    ext = build.compile_c(extension_source("_x", "    return x_value();", prelude="extern int x_value(void);"),
                          f"_x{EXT_SUFFIX}", libs=(lib,))
    tag = python_tag()
    return build_wheel(tmp_path / "dist", "victim", "1.0", f"{tag}-{tag}-manylinux_2_17_x86_64",
                       {f"victim/_x{EXT_SUFFIX}": ext})


def _project(tmp_path: Path, table: str) -> Path:
    project = tmp_path / "repo"
    project.mkdir(exist_ok=True)
    (project / "pyproject.toml").write_text(f"[tool.wheelcheck]\n{table}\n")
    return project


def test_exclude_from_pyproject_is_named_in_every_format(needs_libx, tmp_path):
    """exclude = ["*"] turns the FAIL into a PASS even with --plat on the command line: every report says so,
    naming the setting, its file and the library it let through; --isolated ignores it."""
    project = _project(tmp_path, 'exclude = ["*"]')
    pyproject = str(project / "pyproject.toml")
    proc = run_cli("audit", "--plat", "manylinux_2_17_x86_64", needs_libx, cwd=project)
    assert proc.returncode == 0
    (line,) = [text for text in proc.stdout.splitlines() if text.startswith("relaxed by settings:")]
    assert f'exclude = ["*"] from {pyproject}' in line and "libx.so.1" in line
    proc = run_cli("audit", "--format", "json", needs_libx, cwd=project)
    (relaxed,) = json.loads(proc.stdout)["relaxed_by"]
    assert relaxed["setting"] == "exclude" and relaxed["source"] == pyproject and "libx.so.1" in relaxed["effect"]
    proc = run_cli("audit", "--format", "sarif", needs_libx, cwd=project)
    log = json.loads(proc.stdout)
    sarif_validator().validate(log)
    assert log["runs"][0]["properties"]["relaxedBy"] == [relaxed]
    proc = run_cli("audit", "--format", "markdown", needs_libx, cwd=project)
    assert "**Relaxed by settings:**" in proc.stdout and "libx.so.1" in proc.stdout
    proc = run_cli("audit", "--isolated", "--plat", "manylinux_2_17_x86_64", needs_libx, cwd=project)
    assert proc.returncode == 1 and "relaxed by" not in proc.stdout and "libx.so.1" in proc.stdout


def test_isolated_ignores_the_configuration_for_every_command(tmp_path):
    project = _project(tmp_path, 'policy-file = "nowhere.json"\nfail-on = "info"')
    proc = run_cli("config", "--isolated", "--format", "json", cwd=project)
    doc = json.loads(proc.stdout)
    assert proc.returncode == 0 and doc["pyproject"] is None
    assert doc["settings"]["fail-on"] == {"value": "error", "source": "default"}
    proc = run_cli("audit", "--isolated", "--config", project / "pyproject.toml", "x.whl", cwd=project)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "--isolated" in proc.stderr


@pytest.mark.parametrize("where", ["command line", "pyproject.toml"])
def test_a_policy_file_cannot_redefine_a_standard_tag(needs_libx, tmp_path, where):
    """A file that calls its lenient policy manylinux_2_17 (libx.so.1 whitelisted) is refused with one line."""
    lenient = json.loads((Path(__file__).parents[1] / "policies" / "manylinux_2_17.json").read_text())
    lenient["lib_whitelist"] = [*lenient["lib_whitelist"], "libx.so.1"]
    path = tmp_path / "lenient.json"
    path.write_text(json.dumps(lenient))
    project = _project(tmp_path, f'policy-file = "{path}"' if where == "pyproject.toml" else "")
    args = ("--policy-file", path) if where == "command line" else ()
    proc = run_cli("audit", *args, "--plat", "manylinux_2_17_x86_64", needs_libx, cwd=project)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "'manylinux_2_17', a standard tag's name" in proc.stderr and str(path) in proc.stderr


def test_a_claim_no_given_policy_defines_fails(needs_libx, tmp_path):
    """A team's policy file lacks manylinux_2_17: the wheel's claim fails as unchecked, not silently dropped."""
    team = bundled_policy_with(tmp_path / "team.json", "manylinux_2_17",
                               lib_whitelist=[*json.loads((Path(__file__).parents[1] / "policies" /
                                                           "manylinux_2_17.json").read_text())["lib_whitelist"],
                                              "libx.so.1"])
    proc = run_cli("audit", "--format", "json", "--policy-file", team, needs_libx)
    wheel = json.loads(proc.stdout)["wheels"][0]
    assert proc.returncode == 1 and wheel["deserved_tag"] == "team_2_17_x86_64"
    assert [f["rule"] for f in wheel["findings"] if f["severity"] == "error"] == ["claim-without-policy"]


def test_a_claim_newer_than_every_policy_fails_unless_the_verdict_implies_it(build, needs_libx, tmp_path):
    """manylinux_2_99: a wheel that deserves a glibc policy runs on any newer glibc, and meets it; one that needs
    a library no policy allows deserves none, and its claim cannot be checked."""
    tag = python_tag()
    renamed = needs_libx.with_name(needs_libx.name.replace("manylinux_2_17", "manylinux_2_99"))
    needs_libx.rename(renamed)
    proc = run_cli("audit", "--format", "json", renamed)
    wheel = json.loads(proc.stdout)["wheels"][0]
    assert proc.returncode == 1 and "claim-without-policy" in [f["rule"] for f in wheel["findings"]]
    plain = build.compile_c(extension_source("_p", "    return 1;"), f"_p{EXT_SUFFIX}")
    fine = build_wheel(tmp_path / "fine", "fine", "1.0", f"{tag}-{tag}-manylinux_2_99_x86_64",
                       {f"fine/_p{EXT_SUFFIX}": plain})
    proc = run_cli("audit", "--format", "json", fine)
    wheel = json.loads(proc.stdout)["wheels"][0]
    assert proc.returncode == 0 and "claim-without-policy" not in [f["rule"] for f in wheel["findings"]]


def test_repair_names_an_exclude_from_pyproject(needs_libx, tmp_path):
    """The repaired wheel leaves libx.so.1 outside because the repository said so: the report says who."""
    project = _project(tmp_path, 'exclude = ["libx.*"]')
    proc = run_cli("repair", "--format", "json", "-w", tmp_path / "out", needs_libx, cwd=project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (relaxed,) = json.loads(proc.stdout)["relaxed_by"]
    assert relaxed["source"] == str(project / "pyproject.toml") and "libx.so.1" in relaxed["effect"]
    proc = run_cli("repair", "-q", "-w", tmp_path / "out2", needs_libx, cwd=project)
    assert any(line.startswith('relaxed by settings: exclude = ["libx.*"]') for line in proc.stdout.splitlines())


def test_deeply_nested_settings_are_one_line_errors(tmp_path):
    """tomllib recurses once per level: 100,000 nested arrays in pyproject.toml are a bad settings file."""
    (tmp_path / "pyproject.toml").write_text("[tool.wheelcheck]\nexclude = " + "[" * 100_000 + "]" * 100_000 + "\n")
    proc = run_cli("config", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "nested too deep" in proc.stderr


def test_policy_and_config_text_is_printed_inert(tmp_path):
    """A policy's name and a settings file's values are printed through the same escaping as reports."""
    policy = tmp_path / "p.json"
    policy.write_text(json.dumps({"name": "team_2_17\n::add-mask::x", "extends": "manylinux_2_17"}))
    proc = run_cli("policy", "list", "--policy-file", policy)
    assert proc.returncode == 0 and not any(line.lstrip().startswith("::") for line in proc.stdout.splitlines())
    assert "team_2_17\\n::add-mask::x" in proc.stdout
    project = _project(tmp_path, 'plat = "\\u001b[2Kmanylinux_2_17"')
    proc = run_cli("config", cwd=project)
    assert "\x1b" not in proc.stdout and "\\x1b[2Kmanylinux_2_17" in proc.stdout
