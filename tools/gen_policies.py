"""Regenerate the bundled policy files in ``policies/`` from auditwheel's policy data.

auditwheel ships every manylinux/musllinux policy in two JSON lists. We keep one file per policy,
in our own format (see ``policies/schema.json``), so a policy can be read, reviewed and diffed alone.
The data is copied exactly; the test ``tests/test_policy_data.py`` checks that it still matches.

Usage: python tools/gen_policies.py   (needs auditwheel installed; it is only read, never imported)
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
from pathlib import Path

POLICIES_DIR = Path(__file__).resolve().parent.parent / "policies"
SOURCES = {"manylinux": "glibc", "musllinux": "musl"}  # source file prefix -> libc
LINE_WIDTH = 100  # lists of scalars that fit on one line stay on one line


def auditwheel_policy_dir() -> Path:
    # find_spec locates the package without importing it (importing runs auditwheel's own setup).
    spec = importlib.util.find_spec("auditwheel")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("gen_policies: auditwheel is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "policy"


def convert(entry: dict, libc: str, source: str) -> dict:
    name = entry["name"]
    return {
        "$schema": "./schema.json",
        "name": name,
        "aliases": entry["aliases"],
        "priority": entry["priority"],
        "libc": libc,
        # manylinux_2_17 -> "2.17", musllinux_1_2 -> "1.2"
        "libc_version": name.split("_", 1)[1].replace("_", "."),
        # auditwheel does not restrict the C++11 string ABI; neither do the bundled policies.
        "cxx_abi": ["old", "new"],
        "symbol_versions": entry["symbol_versions"],
        "lib_whitelist": entry["lib_whitelist"],
        "blacklist": entry["blacklist"],
        "source": source,
    }


def dumps(value: object, indent: int = 0, prefix_len: int = 0) -> str:
    """json.dumps(indent=2), except that a list of scalars fitting on its line is written inline."""
    pad = " " * indent
    inner = " " * (indent + 2)
    if isinstance(value, dict) and value:
        items = []
        for key, item in value.items():
            head = f"{inner}{json.dumps(key)}: "
            items.append(head + dumps(item, indent + 2, len(head)))
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, list) and value:
        flat = json.dumps(value)
        scalars = not any(isinstance(item, (dict, list)) for item in value)
        if scalars and prefix_len + len(flat) + 1 <= LINE_WIDTH:  # +1 for a trailing comma
            return flat
        items = [inner + dumps(item, indent + 2, len(inner)) for item in value]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    return json.dumps(value)


def main() -> None:
    policy_dir = auditwheel_policy_dir()
    version = importlib.metadata.version("auditwheel")
    for prefix, libc in SOURCES.items():
        filename = f"{prefix}-policy.json"
        source = f"auditwheel {version} policy/{filename}"
        for entry in json.loads((policy_dir / filename).read_text(encoding="utf-8")):
            if entry["name"] == "linux":  # the "no policy" entry, priority 0: not a real target
                continue
            out = POLICIES_DIR / f"{entry['name']}.json"
            out.write_text(dumps(convert(entry, libc, source)) + "\n", encoding="utf-8")
            print(out.relative_to(POLICIES_DIR.parent))


if __name__ == "__main__":
    main()
