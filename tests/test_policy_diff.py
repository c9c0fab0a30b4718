"""`policy diff` on neighbouring bundled policies; expectations computed from the JSON files themselves."""
from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import run_cli

POLICIES_DIR = Path(__file__).resolve().parents[1] / "policies"


def _doc(name: str) -> dict:
    return json.loads((POLICIES_DIR / f"{name}.json").read_text())


def _only(mine: dict, other: dict) -> dict[str, dict[str, list[str]]]:
    """namespace -> version -> arches: versions ``mine`` allows and ``other`` does not, on shared arches."""
    out: dict[str, dict[str, list[str]]] = {}
    for arch in sorted(set(mine["symbol_versions"]) & set(other["symbol_versions"])):
        theirs = other["symbol_versions"][arch]
        for ns, versions in mine["symbol_versions"][arch].items():
            for version in set(versions) - set(theirs.get(ns, versions)):
                out.setdefault(ns, {}).setdefault(version, []).append(arch)
    return out


def test_neighbours_json():
    a, b = _doc("manylinux_2_39"), _doc("manylinux_2_40")
    proc = run_cli("policy", "diff", "--format", "json", "manylinux_2_39", "manylinux_2_40")
    assert proc.returncode == 1  # they differ
    doc = json.loads(proc.stdout)
    assert doc["only_b"]["symbol_versions"] == _only(b, a)
    assert doc["only_a"]["symbol_versions"] == _only(a, b) == {}
    assert doc["only_b"]["lib_whitelist"] == sorted(set(b["lib_whitelist"]) - set(a["lib_whitelist"]))
    assert doc["changed"] == {"priority": {"a": a["priority"], "b": b["priority"]},
                              "libc_version": {"a": "2.39", "b": "2.40"}}


def test_neighbours_text_for_a_reviewer():
    a, b = _doc("manylinux_2_39"), _doc("manylinux_2_40")
    lines = run_cli("policy", "diff", "manylinux_2_39", "manylinux_2_40").stdout.splitlines()
    shared = sorted(set(a["symbol_versions"]) & set(b["symbol_versions"]))
    new_glibc = _only(b, a)["GLIBC"]
    assert new_glibc == {"2.40": shared}  # glibc 2.40's versions, on every arch both cover
    assert f"  GLIBC 2.40: all {len(shared)} shared arches" in lines
    assert lines[0].startswith("--- manylinux_2_39 (priority 53, glibc 2.39")
    assert lines[1].startswith("+++ manylinux_2_40 (priority 52, glibc 2.40")
    start = lines.index("allowed by manylinux_2_39, not by manylinux_2_40:")
    assert lines[start + 1] == "  nothing"


def test_arches_libraries_and_blacklists():
    a, b = _doc("manylinux_2_17"), _doc("manylinux_2_24")
    doc = json.loads(run_cli("policy", "diff", "--format", "json", "manylinux2014", "manylinux_2_24").stdout)
    assert doc["a"] == "manylinux_2_17"
    assert doc["only_a"]["arches"] == sorted(set(a["symbol_versions"]) - set(b["symbol_versions"])) == ["ppc64"]
    assert doc["only_b"]["lib_whitelist"] == sorted(set(b["lib_whitelist"]) - set(a["lib_whitelist"]))
    unblocked = {lib: sorted(set(syms) - set(b["blacklist"].get(lib, [])))
                 for lib, syms in a["blacklist"].items() if set(syms) - set(b["blacklist"].get(lib, []))}
    assert doc["only_b"]["blacklisted_by_other"] == unblocked and unblocked  # 2_17 blacklists glibc 2.18 symbols
    assert doc["only_b"]["symbol_versions"] == _only(b, a)


def test_same_policy_and_files(tmp_path):
    assert run_cli("policy", "diff", "manylinux_2_28", "manylinux_2_28").returncode == 0
    copy = tmp_path / "team.json"
    team = dict(_doc("manylinux_2_28"), lib_whitelist=_doc("manylinux_2_28")["lib_whitelist"] + ["libfoo.so.1"])
    copy.write_text(json.dumps([team, dict(_doc("manylinux_2_31"))]))
    proc = run_cli("policy", "diff", "manylinux_2_28", f"{copy}:manylinux_2_28")
    assert proc.returncode == 1
    assert f"allowed by manylinux_2_28 ({copy}), not by manylinux_2_28 (bundled:manylinux_2_28.json):" in proc.stdout
    assert "  libraries: libfoo.so.1" in proc.stdout
    proc = run_cli("policy", "diff", "manylinux_2_28", copy)
    assert proc.returncode == 2 and "name one as" in proc.stderr
    proc = run_cli("policy", "diff", "manylinux_2_28", "nonesuch")
    assert proc.returncode == 2 and "neither a policy file nor a bundled policy" in proc.stderr
