"""Suppressing findings as a linter does: ignore, per-file-ignores and a baseline, from pyproject.toml or the
command line; every suppression counted and named in every format, and new findings still failing."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fixtures.repair_scenario import EXT_SUFFIX, python_tag
from tests.fixtures.sources import extension_source, math_extension_source
from tests.fixtures.wheels import build_wheel
from tests.helpers import run_cli
from tests.test_sarif import sarif_validator
from wheelcheck.report.audit_json import audit_schema

TAG = f"{python_tag()}-{python_tag()}-manylinux_2_17_x86_64"


@pytest.fixture
def dist(build, tmp_path) -> Path:
    """pkg claims manylinux_2_17: its math module needs GLIBC_2.29 (an error); its tool needs nothing."""
    math = build.compile_c(math_extension_source("mathmod"), "mathmod.so", libs=("m",))
    plain = build.compile_c(extension_source("_plain"), "_plain.so")
    return build_wheel(tmp_path / "dist", "pkg", "1.0", TAG, {f"pkg/mathmod{EXT_SUFFIX}": math,
                                                              f"pkg/tools/_plain{EXT_SUFFIX}": plain})


def _json(proc) -> dict:
    doc = json.loads(proc.stdout)
    import jsonschema

    jsonschema.validate(doc, audit_schema())
    return doc


def test_ignore_from_pyproject_passes_the_wheel_and_says_so_everywhere(dist, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.wheelcheck]\nignore = ["symbol-version"]\n')
    assert run_cli("audit", dist).returncode == 1  # from elsewhere, the setting does not apply
    proc = run_cli("audit", dist, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout
    assert f"suppressed: 1 finding (ignore: symbol-version 1, from {tmp_path / 'pyproject.toml'})" in proc.stdout
    doc = _json(run_cli("audit", "--format", "json", dist, cwd=tmp_path))
    (wheel,) = doc["wheels"]
    assert wheel["passed"] and [s["rule"] for s in wheel["suppressed"]] == ["symbol-version"]
    assert "symbol-version" not in [f["rule"] for f in wheel["findings"]]
    assert [(r["setting"], r["effect"]) for r in doc["relaxed_by"]] == [("ignore", "1 finding suppressed")]
    log = json.loads(run_cli("audit", "--format", "sarif", dist, cwd=tmp_path).stdout)
    sarif_validator().validate(log)
    (result,) = [r for r in log["runs"][0]["results"] if r["ruleId"] == "symbol-version"]
    assert result["suppressions"][0]["kind"] == "external"
    markdown = run_cli("audit", "--format", "markdown", dist, cwd=tmp_path).stdout
    assert "**Suppressed:**" in markdown and "symbol-version 1" in markdown


def test_per_file_ignores_suppress_only_the_matching_members(build, dist, tmp_path):
    proc = run_cli("audit", "--format", "json", "--per-file-ignores", "pkg/tools/*:symbol-version", dist)
    (wheel,) = _json(proc)["wheels"]
    assert proc.returncode == 1 and not wheel["suppressed"]  # the math module is not under pkg/tools
    proc = run_cli("audit", "--format", "json", "--per-file-ignores", "pkg/math*:symbol-version", dist)
    (wheel,) = _json(proc)["wheels"]
    assert proc.returncode == 0 and [s["file"] for s in wheel["suppressed"]] == [f"pkg/mathmod{EXT_SUFFIX}"]
    assert wheel["suppressed"][0]["by"] == "per-file-ignores pkg/math*"


def test_a_baseline_passes_known_findings_and_fails_new_ones(build, dist, tmp_path):
    baseline = tmp_path / "wheelcheck-baseline.json"
    proc = run_cli("audit", "--write-baseline", baseline, dist)
    assert proc.returncode == 0 and "wrote a baseline of 1 finding" in proc.stderr
    assert [e["rule"] for e in json.loads(baseline.read_text())["findings"]] == ["symbol-version"]
    assert run_cli("audit", "--baseline", baseline, dist).returncode == 0
    # the next release: the same finding under a new version passes; a new problem fails
    lib = build.compile_c("int x_value(void) { return 42; }\n", "libx.so.1", flags=("-Wl,-soname,libx.so.1",))
    math = build.compile_c(math_extension_source("mathmod"), "mathmod.so", libs=("m",))
    uses = build.compile_c(extension_source("_x", "    return x_value();", prelude="extern int x_value(void);"),
                           f"_x{EXT_SUFFIX}", libs=(lib,))
    same = build_wheel(tmp_path / "next", "pkg", "1.1", TAG, {f"pkg/mathmod{EXT_SUFFIX}": math})
    assert run_cli("audit", "--baseline", baseline, same).returncode == 0
    worse = build_wheel(tmp_path / "worse", "pkg", "1.1", TAG, {f"pkg/mathmod{EXT_SUFFIX}": math,
                                                                 f"pkg/_x{EXT_SUFFIX}": uses})
    proc = run_cli("audit", "--format", "json", "--baseline", baseline, worse)
    (wheel,) = _json(proc)["wheels"]
    assert proc.returncode == 1 and [s["rule"] for s in wheel["suppressed"]] == ["symbol-version"]
    assert "external-library" in [f["rule"] for f in wheel["findings"] if f["severity"] == "error"]


@pytest.mark.parametrize("table, message", [
    ('ignore = ["symbol-versoin"]', "'symbol-versoin' is no rule id"),
    ('per-file-ignores = {"pkg/*" = ["nope"]}', "'nope' is no rule id"),
    ("per-file-ignores = 3", "must be a table of member globs to rule ids"),
    ('baseline = "missing.json"', "cannot read the baseline"),
])
def test_bad_suppression_settings_are_one_line_errors(dist, tmp_path, table, message):
    (tmp_path / "pyproject.toml").write_text(f"[tool.wheelcheck]\n{table}\n")
    proc = run_cli("audit", dist, cwd=tmp_path)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and message in proc.stderr, proc.stderr


def test_a_baseline_larger_than_any_is_refused_unread(dist, tmp_path):
    """A repository's baseline file is measured before it is read: a 64 MiB-plus sparse file is one line."""
    huge = tmp_path / "huge.json"
    with open(huge, "wb") as f:
        f.truncate((64 << 20) + 1)
    proc = run_cli("audit", "--baseline", huge, dist)
    assert proc.returncode == 2 and "is larger than a baseline of findings can be" in proc.stderr
