"""The bundled policy files are valid and carry exactly auditwheel 6.8.2's policy data."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

jsonschema = pytest.importorskip("jsonschema")
pytest.importorskip("auditwheel")  # the oracle; located below but never imported for its data

POLICIES_DIR = Path(__file__).parent.parent / "policies"
SCHEMA_PATH = POLICIES_DIR / "schema.json"
POLICY_PATHS = sorted(p for p in POLICIES_DIR.glob("*.json") if p != SCHEMA_PATH)
COPIED_KEYS = ("aliases", "priority", "symbol_versions", "lib_whitelist", "blacklist")


def _load(path: Path) -> object:
    return json.loads(path.read_text(encoding="utf-8"))


def _auditwheel_policies() -> dict[str, dict]:
    spec = importlib.util.find_spec("auditwheel")
    policy_dir = Path(next(iter(spec.submodule_search_locations))) / "policy"
    entries = {}
    for filename in ("manylinux-policy.json", "musllinux-policy.json"):
        for entry in _load(policy_dir / filename):
            if entry["name"] != "linux":  # "no policy", deliberately not bundled
                entries[entry["name"]] = entry
    return entries


AUDITWHEEL = _auditwheel_policies()


def test_schema_is_valid() -> None:
    jsonschema.Draft202012Validator.check_schema(_load(SCHEMA_PATH))


@pytest.mark.parametrize("path", POLICY_PATHS, ids=lambda p: p.stem)
def test_policy_file_matches_schema(path: Path) -> None:
    validator = jsonschema.Draft202012Validator(_load(SCHEMA_PATH))
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(_load(path))]
    assert errors == []


def _beyond_auditwheel() -> dict[str, dict]:
    """Bundled policies auditwheel does not have: each must say its data came from elsewhere."""
    return {p.stem: _load(p) for p in POLICY_PATHS if p.stem not in AUDITWHEEL}


def test_one_file_per_auditwheel_policy() -> None:
    assert set(AUDITWHEEL) <= {p.stem for p in POLICY_PATHS}
    assert len(AUDITWHEEL) == 18


def test_policies_beyond_auditwheel_name_their_source() -> None:
    beyond = _beyond_auditwheel()
    assert set(beyond) == {"manylinux_2_43"}
    for name, doc in beyond.items():
        assert "auditwheel" not in doc["source"].split(";")[0], name  # its versions are not auditwheel's
    assert "libc6_2.43-7_amd64.deb" in beyond["manylinux_2_43"]["source"]


@pytest.mark.parametrize("name", sorted(AUDITWHEEL))
def test_policy_data_equals_auditwheel(name: str) -> None:
    ours = _load(POLICIES_DIR / f"{name}.json")
    theirs = AUDITWHEEL[name]
    assert ours["name"] == name
    # Per arch and namespace first, so a failure names the place that differs.
    for arch, namespaces in theirs["symbol_versions"].items():
        for namespace, versions in namespaces.items():
            assert ours["symbol_versions"].get(arch, {}).get(namespace) == versions, (arch, namespace)
    for key in COPIED_KEYS:  # then whole values, which also catches extra arches or namespaces
        assert ours[key] == theirs[key], key
    libc, _, version = name.partition("_")
    assert ours["libc"] == {"manylinux": "glibc", "musllinux": "musl"}[libc]
    assert ours["libc_version"] == version.replace("_", ".")
