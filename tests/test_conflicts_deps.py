"""conflict-missing-symbols: an extension built against the other C++ ABI of the distribution it requires.

cxxext (Requires-Dist: core) was built with -D_GLIBCXX_USE_CXX11_ABI=0 against a libcore that had
core::take(std::string const&) and core::gone(); the core wheel ships libcore.so built with the new ABI
and without gone(). The prediction ('undefined symbol' at import) is checked by importing it.
"""

from __future__ import annotations

import json

import pytest

from tests.fixtures.conflict_wheels import cxx_abi_pair, exported, member_bytes, pip_install, run_python, undefined
from tests.helpers import run_cli

EXT = "cxxext/_ext.cpython-311-x86_64-linux-gnu.so"


def conflicts_json(*args) -> tuple[int, dict]:
    proc = run_cli("conflicts", "--format", "json", *args)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def missing(report: dict) -> list[dict]:
    return [f for p in report["processes"] for f in p["findings"] if f["rule"] == "conflict-missing-symbols"]


@pytest.fixture(scope="module")
def pairs(build, tmp_path_factory):
    out = tmp_path_factory.mktemp("cxx")
    return {"mismatch": cxx_abi_pair(build, out / "mismatch"),
            "matching": cxx_abi_pair(build, out / "matching", core_abi=0),
            "undeclared": cxx_abi_pair(build, out / "undeclared", declare=False)}


def test_other_abi_twin_predicts_undefined_symbol(pairs, tmp_path):
    wheels = pairs["mismatch"]
    ext_needs = undefined(member_bytes(wheels["cxxext"], EXT))
    core_has = exported(member_bytes(wheels["core"], "core/lib/libcore.so"))
    wanted = {n for n in ext_needs if n.startswith("_ZN4core")}
    assert wanted == {"_ZN4core4takeERKSs", "_ZN4core4goneEv"}  # the old-ABI manglings of the prelude
    twin = "_ZN4core4takeERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"
    assert twin in core_has and not wanted & core_has
    code, report = conflicts_json(*wheels.values())
    assert code == 1
    by_severity = {f["severity"]: f for f in missing(report)}
    assert set(by_severity) == {"error", "warning"}
    error = by_severity["error"]
    assert error["names"] == ["_ZN4core4takeERKSs"] and twin in error["symbols"] and twin in error["message"]
    assert {p["file"] for p in error["providers"]} == {EXT, "core/lib/libcore.so"}
    assert by_severity["warning"]["names"] == ["_ZN4core4goneEv"]  # core exports core::keep(), not core::gone()
    site = tmp_path / "site"
    pip_install(site, *wheels.values())
    proc = run_python(site, "import cxxext")
    assert proc.returncode != 0 and "undefined symbol: _ZN4core" in proc.stderr


def test_matching_abi_imports_and_reports_nothing(pairs, tmp_path):
    wheels = pairs["matching"]
    code, report = conflicts_json("--fail-on", "info", *wheels.values())
    assert code == 0 and missing(report) == []
    site = tmp_path / "site"
    pip_install(site, *wheels.values())
    proc = run_python(site, "import cxxext; print(cxxext.call())")
    assert proc.returncode == 0 and proc.stdout.split() == ["5"]  # take("abcd") + gone()


def test_only_declared_dependencies_are_judged(pairs):
    code, report = conflicts_json(*pairs["undeclared"].values())
    assert missing(report) == []
    alone = conflicts_json(pairs["mismatch"]["cxxext"])[1]  # its requirement is not among those given
    assert missing(alone) == []
