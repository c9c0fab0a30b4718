"""`extends`: a user's policy changes only what it needs; show prints the resolved policy; audit uses it."""
from __future__ import annotations

import json

import pytest

from tests.fixtures.sources import extension_source
from tests.fixtures.wheels import build_wheel
from tests.helpers import audit_json, run_cli
from wheelcheck.errors import PolicyError
from wheelcheck.policy import bundled_policies, load_policy_file

EXT = "pkg/{}.cpython-311-x86_64-linux-gnu.so"
USES_ALPHA = extension_source("usealpha", "    return alpha_value();", prelude="extern int alpha_value(void);\n")
# explicit_bzero is GLIBC_2.25: newer than manylinux_2_17 allows, within manylinux_2_28
USES_ALPHA_2_25 = extension_source(
    "alphabzero", "    char secret[8] = \"hunter2\";\n    explicit_bzero(secret, sizeof secret);\n"
                  "    return alpha_value() + secret[0];",
    prelude="#include <string.h>\nextern int alpha_value(void);\n")


def _write(tmp_path, entries) -> str:
    path = tmp_path / "acme.json"
    path.write_text(json.dumps(entries))
    return str(path)


def _chain(tmp_path) -> str:
    """acme_strict extends acme_base (same file), which extends the bundled manylinux_2_28."""
    glibc_2_17 = sorted(bundled_policies().find("manylinux_2_17").versions("x86_64")["GLIBC"])
    return _write(tmp_path, [
        {"name": "acme_strict", "extends": "acme_base", "priority": 70, "cxx_abi": ["new"],
         "symbol_versions": {"x86_64": {"GLIBC": glibc_2_17}}, "rules": {"leaked-library-symbols": "off"}},
        {"name": "acme_base", "extends": "manylinux_2_28", "lib_whitelist": ["libalpha.so.1"],
         "drivers": ["libcuda.so.1"], "exposure": {"extension_warn_above": 10}, "source": "acme fleet"},
    ])


def test_children_inherit_and_add(tmp_path):
    parent = bundled_policies().find("manylinux_2_28")
    strict, base = load_policy_file(_chain(tmp_path))
    assert base.lib_whitelist == parent.lib_whitelist | {"libalpha.so.1"}  # extended, not replaced
    assert (base.priority, base.libc, base.libc_version, base.cxx_abi) == (64, "glibc", "2.28", parent.cxx_abi)
    assert base.symbol_versions == parent.symbol_versions and base.blacklist == parent.blacklist
    assert base.drivers == {"libcuda.so.1"} and dict(base.exposure) == {"extension_warn_above": 10}
    assert strict.lib_whitelist == base.lib_whitelist and strict.drivers == base.drivers  # two levels down
    assert strict.priority == 70 and strict.cxx_abi == {"new"}
    assert strict.versions("x86_64")["GLIBC"] == bundled_policies().find("manylinux_2_17").versions("x86_64")["GLIBC"]
    assert strict.versions("x86_64")["GLIBCXX"] == parent.versions("x86_64")["GLIBCXX"]  # namespace inherited
    assert strict.versions("aarch64") == parent.versions("aarch64")  # arch inherited
    assert dict(strict.rules) == {"leaked-library-symbols": "off"} and dict(strict.exposure) == dict(base.exposure)
    assert strict.aliases == () and base.aliases == ()


def test_show_prints_the_resolved_policy(tmp_path):
    proc = run_cli("policy", "show", "acme_strict", "--policy-file", _chain(tmp_path))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert "extends" not in doc
    assert "libalpha.so.1" in doc["lib_whitelist"] and "libc.so.6" in doc["lib_whitelist"]
    assert doc["cxx_abi"] == ["new"] and doc["libc_version"] == "2.28"
    assert doc["source"].startswith("extends acme_base from ") and "extends manylinux_2_28 from bundled:" in doc["source"]
    assert "acme fleet" in doc["source"]
    # the resolved policy is a complete policy file of its own
    path = tmp_path / "resolved.json"
    path.write_text(proc.stdout)
    assert run_cli("policy", "validate", path).returncode == 0
    assert run_cli("policy", "validate", _chain(tmp_path)).returncode == 0


def test_audit_uses_the_chain(build, tmp_path):
    alpha, _ = build.alpha_beta()
    policy_file = _chain(tmp_path)
    plain = build.compile_c(USES_ALPHA, "usealpha.so", libs=(alpha,))
    wheel = build_wheel(tmp_path / "w1", "usealpha", "1.0", "cp311-cp311-linux_x86_64", {EXT.format("usealpha"): plain})
    code, doc = audit_json(wheel)  # bundled policies: libalpha is an external library
    assert doc["wheels"][0]["deserved_tag"] == "linux_x86_64"
    code, doc = audit_json("--policy-file", policy_file, wheel)
    assert code == 0 and doc["wheels"][0]["deserved_tag"] == "acme_strict_x86_64"
    # needing GLIBC_2.25: too new for acme_strict (2.17's GLIBC versions), fine for acme_base (2_28's)
    newer = build.compile_c(USES_ALPHA_2_25, "alphabzero.so", libs=(alpha,))
    wheel = build_wheel(tmp_path / "w2", "alphabzero", "1.0", "cp311-cp311-linux_x86_64",
                        {EXT.format("alphabzero"): newer})
    code, doc = audit_json("--policy-file", policy_file, "--plat", "acme_strict_x86_64", wheel)
    report = doc["wheels"][0]
    assert code == 1 and report["deserved_tag"] == "acme_base_x86_64"
    assert any(f["message"] == "GLIBC_2.25 needed by explicit_bzero → acme_base at best" and f["severity"] == "error"
               for f in report["findings"]), report["findings"]


def test_same_name_extends_the_bundled_policy(tmp_path):
    [policy] = load_policy_file(_write(tmp_path, {"name": "manylinux_2_28", "extends": "manylinux_2_28",
                                                  "cxx_abi": ["new"]}))
    assert policy.cxx_abi == {"new"} and policy.priority == 64
    assert policy.symbol_versions == bundled_policies().find("manylinux_2_28").symbol_versions


def test_extends_by_alias(tmp_path):
    [policy] = load_policy_file(_write(tmp_path, {"name": "acme_2014", "extends": "manylinux2014"}))
    assert policy.libc_version == "2.17" and policy.aliases == ()


@pytest.mark.parametrize("entries, message", [
    ([{"name": "a", "extends": "b"}, {"name": "b", "extends": "a"}], "'extends' makes a cycle: a → b → a"),
    ([{"name": "a", "extends": "a"}], "extends 'a', which is neither in this file nor a bundled policy"),
    ([{"name": "a", "extends": "nonesuch"}], "extends 'nonesuch', which is neither"),
    ([{"name": "a", "extends": "manylinux_2_28", "lib_whitelist": "libfoo.so.1"}], "'lib_whitelist' must be a list"),
    ([{"extends": "manylinux_2_28"}], "entry 0: a policy that extends another needs its own 'name'"),
    ([{"name": "a", "extends": "manylinux_2_28", "symbol_versions": {"x86_64": []}}],
     "symbol_versions.x86_64 must be an object"),
])
def test_bad_extends(tmp_path, entries, message):
    path = _write(tmp_path, entries)
    with pytest.raises(PolicyError) as info:
        load_policy_file(path)
    assert message in str(info.value) and str(info.value).startswith(path)
    proc = run_cli("policy", "list", "--policy-file", path)
    assert proc.returncode == 2 and message in proc.stderr
