"""The GitHub Action (action.yml, composite): its steps run as the runner runs them.

The runner's part is reproduced here: inputs take their defaults unless given, `${{ inputs.NAME }}` and
`${{ github.action_path }}` in a step's `env` are substituted (any other expression fails the test), each
`run:` script goes to `bash --noprofile --norc -eo pipefail` (the runner's `shell: bash`), lines a step
appends to $GITHUB_PATH are put before PATH for the steps after it, and $GITHUB_OUTPUT and
$GITHUB_STEP_SUMMARY are files. The install step really installs wheelcheck (from this checkout) into a
fresh venv; no wheelcheck from the test environment is on PATH.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.fixtures.sources import math_extension_source
from tests.fixtures.wheels import build_wheel
from tests.helpers import ROOT
from tests.test_sarif import sarif_validator

yaml = pytest.importorskip("yaml")
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
EXT = "pkg/{}.cpython-311-x86_64-linux-gnu.so"


def load_action() -> dict:
    return yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))


class Runner:
    """One job's worth of runner state: temp dir, PATH additions, step outputs and summary."""

    def __init__(self, tmp: Path) -> None:
        self.temp = tmp / "runner-temp"
        self.workspace = tmp / "workspace"
        self.temp.mkdir()
        self.workspace.mkdir()
        self.summary = tmp / "step-summary.md"
        self.summary.touch()
        self.path_file = tmp / "github-path"
        self.path_file.touch()
        # no wheelcheck of the test environment may leak in
        self.base_path = os.pathsep.join(d for d in os.environ["PATH"].split(os.pathsep)
                                         if d and not (Path(d) / "wheelcheck").exists())

    def run_step(self, step: dict, inputs: dict[str, str]) -> tuple[int, dict[str, str], str]:
        assert step["shell"] == "bash" and "if" not in step
        assert not EXPRESSION.search(step["run"]), "inputs must reach scripts through env, not the script text"
        env = {"PATH": os.pathsep.join([*reversed(self.path_file.read_text().split()), self.base_path]),
               "HOME": os.environ.get("HOME", str(self.temp)), "RUNNER_TEMP": str(self.temp),
               "GITHUB_WORKSPACE": str(self.workspace), "GITHUB_ACTION_PATH": str(ROOT),
               "GITHUB_STEP_SUMMARY": str(self.summary), "GITHUB_PATH": str(self.path_file),
               "GITHUB_OUTPUT": str(self.temp / f"output-{step.get('id', 'step')}"), "CI": "true"}
        env.update({k: v for k, v in os.environ.items() if k.startswith("PIP_")})  # this machine's pip setup
        Path(env["GITHUB_OUTPUT"]).write_text("")
        for key, value in (step.get("env") or {}).items():
            env[key] = EXPRESSION.sub(lambda m: evaluate(m.group(1), inputs), str(value))
        script = self.temp / "step.sh"
        script.write_text(step["run"])
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], env=env,
                              cwd=self.workspace, capture_output=True, text=True, timeout=900)
        outputs = dict(line.split("=", 1) for line in Path(env["GITHUB_OUTPUT"]).read_text().splitlines() if line)
        return proc.returncode, outputs, proc.stdout + proc.stderr


def evaluate(expression: str, inputs: dict[str, str]) -> str:
    if expression == "github.action_path":
        return str(ROOT)
    match = re.fullmatch(r"inputs\.([A-Za-z0-9_-]+)", expression)
    assert match, f"the test does not know how the runner evaluates ${{{{ {expression} }}}}"
    return inputs[match.group(1)]


def with_defaults(action: dict, given: dict[str, str]) -> dict[str, str]:
    assert set(given) <= set(action["inputs"]), set(given) - set(action["inputs"])
    return {name: given.get(name, str(spec.get("default", ""))) for name, spec in action["inputs"].items()}


@pytest.fixture(scope="module")
def installed(build, tmp_path_factory):
    """The install step, run once: wheelcheck installed from this checkout into the runner's temp dir."""
    if shutil.which("bash") is None:
        pytest.skip("bash is needed")
    action = load_action()
    assert action["runs"]["using"] == "composite"
    runner = Runner(tmp_path_factory.mktemp("action"))
    install, audit_step = action["runs"]["steps"]
    code, _, log = runner.run_step(install, with_defaults(action, {}))
    assert code == 0, log
    assert "wheelcheck 0.1.0" in log
    math = build.compile_c(math_extension_source("mathmod"), "mathmod.so", libs=("m",))
    dist = runner.workspace / "dist"
    build_wheel(dist, "mathmod", "1.0", "cp311-cp311-manylinux_2_17_x86_64", {EXT.format("mathmod"): math})
    build_wheel(dist, "puremod", "1.0", "py3-none-any", {"puremod/__init__.py": b"x = 1\n"})
    return action, runner, audit_step


def test_action_summary_sarif_and_exit_code(installed):
    action, runner, step = installed
    code, outputs, log = runner.run_step(step, with_defaults(action, {"sarif-file": "results.sarif"}))
    assert code == 1, log  # mathmod needs GLIBC_2.29 (exp2, log2) but claims manylinux_2_17
    assert outputs == {"exit-code": "1", "sarif-file": "results.sarif"}
    assert "FAIL deserves manylinux_2_31_x86_64, required manylinux_2_17_x86_64" in log  # text in the job log
    summary = runner.summary.read_text()
    assert "| `mathmod-1.0-cp311-cp311-manylinux_2_17_x86_64.whl` | ❌ fail | `manylinux_2_31_x86_64` |" in summary
    assert "| `puremod-1.0-py3-none-any.whl` | ✅ pass | pure |" in summary
    log_doc = json.loads((runner.workspace / "results.sarif").read_text())
    sarif_validator().validate(log_doc)
    (result,) = [r for r in log_doc["runs"][0]["results"] if r["level"] == "error"]
    assert result["ruleId"] == "symbol-version"
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == \
        "dist/mathmod-1.0-cp311-cp311-manylinux_2_17_x86_64.whl"  # relative to the workspace, as GitHub wants


def test_action_inputs_reach_the_audit(installed, tmp_path):
    action, runner, step = installed
    runner.summary.write_text("earlier step's summary\n")
    policy = runner.workspace / "team.json"
    policy.write_text(json.dumps({"name": "team_2_31", "extends": "manylinux_2_31"}))
    inputs = {"paths": "dist/mathmod-*.whl\n  dist/puremod-1.0-py3-none-any.whl", "policy-file": "team.json",
              "plat": "team_2_31_x86_64", "fail-on": "warning", "format": "json"}
    code, outputs, log = runner.run_step(step, with_defaults(action, inputs))
    report = json.loads(log[log.index("{"):log.rindex("}") + 1])
    assert report["fail_on"] == "warning"
    assert [w["filename"] for w in report["wheels"]] == ["mathmod-1.0-cp311-cp311-manylinux_2_17_x86_64.whl",
                                                        "puremod-1.0-py3-none-any.whl"]
    mathmod = report["wheels"][0]
    # judged against the team policy only: --plat is one of its tags; the claimed manylinux_2_17 is not, and a
    # claim nothing given can check fails rather than being dropped
    assert mathmod["deserved_tag"] == "team_2_31_x86_64" and mathmod["required_tag"] == "team_2_31_x86_64"
    assert [f["rule"] for f in mathmod["findings"] if f["severity"] == "error"] == ["claim-without-policy"]
    assert code == 1 and outputs["exit-code"] == "1" and outputs["sarif-file"] == ""
    summary = runner.summary.read_text()
    assert summary.startswith("earlier step's summary\n## wheelcheck audit")  # appended, not replaced
    # bad input: exit 2, and the summary says so
    code, outputs, log = runner.run_step(step, with_defaults(action, {"paths": "nowhere/*.whl"}))
    assert code == 2 and outputs["exit-code"] == "2" and "nowhere/*.whl" in log
    assert "could not run (exit status 2)" in runner.summary.read_text()


def test_action_inputs_are_documented():
    action = load_action()
    for name, spec in action["inputs"].items():
        assert spec["description"] and "default" in spec, name
    assert {"paths", "policy-file", "plat", "fail-on", "format", "sarif-file"} <= set(action["inputs"])
    for step in action["runs"]["steps"]:
        used = {m.group(1) for v in (step.get("env") or {}).values() for m in EXPRESSION.finditer(str(v))}
        assert used <= {f"inputs.{n}" for n in action["inputs"]} | {"github.action_path"}


def test_isolated_input_ignores_the_repositorys_settings(installed):
    """A pull request's pyproject.toml is the repository's to change: with isolated, the gate ignores it."""
    action, runner, step = installed
    pyproject = runner.workspace / "pyproject.toml"
    pyproject.write_text('[tool.wheelcheck]\npolicy-file = "lenient.json"\n')  # no such file: its error shows
    try:
        code, _, log = runner.run_step(step, with_defaults(action, {"summary": "false"}))
        assert code == 2 and "lenient.json" in log
        code, outputs, log = runner.run_step(step, with_defaults(action, {"summary": "false", "isolated": "true"}))
        assert code == 1 and outputs["exit-code"] == "1" and "lenient.json" not in log, log
    finally:
        pyproject.unlink()
