"""`policy validate`: the bundled policies pass; each kind of mistake, made on purpose in a copy, is caught
and reported as one line naming the file, the policy and the field."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import auditwheel_policies, run_cli
from wheelcheck.policy.validate import validate_files

POLICIES_DIR = Path(__file__).resolve().parents[1] / "policies"
BUNDLED = sorted(p for p in POLICIES_DIR.glob("*.json") if p.name != "schema.json")


def _doc(name: str) -> dict:
    return json.loads((POLICIES_DIR / f"{name}.json").read_text())


def _expected_warnings() -> set[tuple[str, str]]:
    """From the data: GLIBC versions newer than the policy's own glibc (manylinux2014 aarch64's 2.18)."""
    out = set()
    for path in BUNDLED:
        doc = json.loads(path.read_text())
        if doc["libc"] != "glibc":
            continue
        release = tuple(map(int, doc["libc_version"].split(".")))
        for arch, namespaces in doc["symbol_versions"].items():
            if any(v[0].isdigit() and tuple(map(int, v.split("."))) > release for v in namespaces.get("GLIBC", [])):
                out.add((doc["name"], f"symbol_versions.{arch}.GLIBC"))
    return out


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.stem)
def test_each_bundled_policy_is_valid(path):
    result = validate_files([path])
    assert result.ok, [str(p) for p in result.errors]
    assert result.policies == (path.stem,)


def test_bundled_set_is_valid_with_one_warning():
    result = validate_files(BUNDLED)
    assert result.ok and len(result.policies) == len(BUNDLED)
    assert {(w.policy, w.field) for w in result.warnings} == _expected_warnings() \
        == {("manylinux_2_17", "symbol_versions.aarch64.GLIBC")}
    proc = run_cli("policy", "validate")  # no file: the bundled set, as installed
    assert proc.returncode == 0
    assert proc.stdout.splitlines()[-1] == f"{len(BUNDLED)} policies in {len(BUNDLED)} files: 0 problems, 1 warning"
    assert "bundled:manylinux_2_17.json: manylinux_2_17: symbol_versions.aarch64.GLIBC: warning: allows 2.18" \
        in proc.stdout


def test_auditwheel_files_validate(tmp_path):
    """auditwheel's own array format: libc and libc_version come from the names."""
    entries = list(auditwheel_policies().values())
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(entries))
    result = validate_files([path])
    assert result.ok, [str(p) for p in result.errors]
    assert len(result.policies) == len([e for e in entries if e["name"] != "linux"])


def _errors_of(tmp_path: Path, changes: dict[str, dict], with_set: bool) -> list[tuple[str, str, str]]:
    """Validate copies of the bundled files with ``changes`` applied ({name: {field: value}});
    ``with_set``: all bundled files together, else only the changed ones."""
    paths = []
    for path in BUNDLED if with_set else [POLICIES_DIR / f"{n}.json" for n in changes]:
        doc = json.loads(path.read_text())
        for key, value in changes.get(path.stem, {}).items():
            if value is None:
                doc.pop(key)
            else:
                doc[key] = value
        copy = tmp_path / path.name
        copy.write_text(json.dumps(doc))
        paths.append(copy)
    result = validate_files(paths)
    return [(Path(p.file).name, p.policy, p.field) for p in result.errors]


def _versions_with(name: str, arch: str, ns: str, change) -> dict:
    versions = _doc(name)["symbol_versions"]
    versions[arch][ns] = change(versions[arch][ns])
    return versions


# One mistake each, in a single policy: (changes, the one error expected)
SINGLE = {
    "name vs libc_version": ({"manylinux_2_28": {"libc_version": "2.27"}}, "libc_version"),
    "name vs libc": ({"manylinux_2_28": {"libc": "musl"}}, "libc"),
    "legacy alias vs version": ({"manylinux_2_28": {"aliases": ["manylinux2014"]}}, "aliases"),
    "priority 0": ({"manylinux_2_28": {"priority": 0}}, "priority"),
    "unparsable version": ({"manylinux_2_28": {"symbol_versions": _versions_with(
        "manylinux_2_28", "x86_64", "GLIBC", lambda v: v + ["2..9"])}}, "symbol_versions.x86_64.GLIBC"),
    "GLIBC_PRIVATE allowed": ({"manylinux_2_28": {"symbol_versions": _versions_with(
        "manylinux_2_28", "x86_64", "GLIBC", lambda v: v + ["PRIVATE"])}}, "symbol_versions.x86_64.GLIBC"),
}


@pytest.mark.parametrize("case", sorted(SINGLE))
def test_single_policy_mistakes(tmp_path, case):
    changes, field = SINGLE[case]
    assert _errors_of(tmp_path, changes, with_set=False) == [("manylinux_2_28.json", "manylinux_2_28", field)]


def test_duplicate_alias(tmp_path):
    errors = _errors_of(tmp_path, {"manylinux_2_28": {"aliases": ["acme"]}, "manylinux_2_31": {"aliases": ["acme"]}},
                        with_set=True)
    assert errors == [("manylinux_2_31.json", "manylinux_2_31", "aliases")]


def test_duplicate_priority(tmp_path):
    # 2_31 takes 2_28's priority; the tie is reported on one of the two
    errors = _errors_of(tmp_path, {"manylinux_2_31": {"priority": 64}}, with_set=True)
    assert errors in ([("manylinux_2_31.json", "manylinux_2_31", "priority")],
                      [("manylinux_2_28.json", "manylinux_2_28", "priority")])


def test_priority_against_libc_version(tmp_path):
    # 2_31 ranked above 2_28 (priority 63 -> 65 vs 64 and 2_27's 65): out of glibc order; being "more
    # compatible" than 2_28 it also allows 2_28's missing versions, reported by the subset check
    errors = _errors_of(tmp_path, {"manylinux_2_31": {"priority": 66}}, with_set=True)
    assert ("manylinux_2_31.json", "manylinux_2_31", "priority") in errors
    assert {field for _, policy, field in errors} - {"priority"} <= {
        f"symbol_versions.{arch}.{ns}" for arch in _doc("manylinux_2_31")["symbol_versions"]
        for ns in ("GLIBC", "GLIBCXX", "CXXABI", "GCC", "LIBATOMIC", "ZLIB")}


def test_more_compatible_allows_a_library(tmp_path):
    whitelist = _doc("manylinux_2_17")["lib_whitelist"] + ["libfoo.so.1"]
    errors = _errors_of(tmp_path, {"manylinux_2_17": {"lib_whitelist": whitelist}}, with_set=True)
    assert errors == [("manylinux_2_17.json", "manylinux_2_17", "lib_whitelist")]


def test_more_compatible_allows_a_version(tmp_path):
    versions = _versions_with("manylinux_2_24", "x86_64", "GLIBCXX", lambda v: v + ["3.4.30"])
    errors = _errors_of(tmp_path, {"manylinux_2_24": {"symbol_versions": versions}}, with_set=True)
    assert errors == [("manylinux_2_24.json", "manylinux_2_24", "symbol_versions.x86_64.GLIBCXX")]


def test_more_compatible_drops_a_namespace(tmp_path):
    versions = _doc("manylinux_2_24")["symbol_versions"]
    del versions["x86_64"]["GLIBCXX"]  # no limit at all on GLIBCXX, while 2_26 has one
    errors = _errors_of(tmp_path, {"manylinux_2_24": {"symbol_versions": versions}}, with_set=True)
    assert errors == [("manylinux_2_24.json", "manylinux_2_24", "symbol_versions.x86_64.GLIBCXX")]


def test_more_compatible_unblocks_a_symbol(tmp_path):
    assert _doc("manylinux_2_31")["blacklist"]["libz.so.1"]  # the next less compatible still blacklists
    errors = _errors_of(tmp_path, {"manylinux_2_28": {"blacklist": {}}}, with_set=True)
    assert errors == [("manylinux_2_28.json", "manylinux_2_28", "blacklist.libz.so.1")]


def test_less_compatible_forbids_a_cxx_abi(tmp_path):
    errors = _errors_of(tmp_path, {"manylinux_2_31": {"cxx_abi": ["new"]}}, with_set=True)
    assert errors == [("manylinux_2_28.json", "manylinux_2_28", "cxx_abi")]


def test_schema_and_json_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(dict(_doc("manylinux_2_28"), priority="high", colour="red")))
    broken = tmp_path / "broken.json"
    broken.write_text('{"name": "x",')
    proc = run_cli("policy", "validate", bad, broken)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert f"{bad}: manylinux_2_28: priority: 'high' is not of type 'integer'" in lines
    assert any(line.startswith(f"{bad}: manylinux_2_28: -: Additional properties") and "'colour'" in line
               for line in lines)
    assert any(line.startswith(f"{broken}: -: -: not valid JSON") for line in lines)
    assert lines[-1] == "0 policies in 2 files: 3 problems, 0 warnings"
    doc = json.loads(run_cli("policy", "validate", "--format", "json", bad).stdout)
    assert doc["valid"] is False and {p["field"] for p in doc["problems"]} == {"priority", "-"}


def test_unreadable_file_is_bad_input(tmp_path):
    proc = run_cli("policy", "validate", tmp_path / "absent.json")
    assert proc.returncode == 2 and "cannot read policy file" in proc.stderr


def test_whitelisted_library_without_its_namespace_warns(tmp_path):
    doc = _doc("manylinux_2_28")
    del doc["symbol_versions"]["aarch64"]["ZLIB"]  # libz.so.1 stays whitelisted: any ZLIB version would pass
    path = tmp_path / "manylinux_2_28.json"
    path.write_text(json.dumps(doc))
    result = validate_files([path])
    assert result.ok and [(w.policy, w.field) for w in result.warnings] == [("manylinux_2_28", "symbol_versions.aarch64")]
    assert "any ZLIB version is allowed" in result.warnings[0].message
