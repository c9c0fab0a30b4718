"""The policies shipped inside the package (wheelcheck.policies, built from the top-level policies/)."""

from __future__ import annotations

import functools
from importlib import resources

from wheelcheck.policy.extends import resolve_extends
from wheelcheck.policy.policy_document import policy_from_dict, read_entries
from wheelcheck.policy.policy_model import PolicySet

__all__ = ["bundled_policies", "bundled_texts"]


@functools.lru_cache(maxsize=1)
def bundled_policies() -> PolicySet:
    """Every bundled policy. Cached: the files are package data and never change while we run.

    A bundled policy may extend another bundled one; the files are resolved together, never against
    the registry being built.
    """
    entries = []
    for text, origin in bundled_texts():
        entries.extend(read_entries(text, origin))
    return PolicySet(policy_from_dict(doc, origin) for doc, origin in resolve_extends(entries))


def bundled_texts() -> list[tuple[str, str]]:
    """(JSON text, origin) of each bundled policy file, for validation."""
    folder = resources.files("wheelcheck.policies")
    return [(entry.read_text(encoding="utf-8"), f"bundled:{entry.name}")
            for entry in sorted(folder.iterdir(), key=lambda e: e.name)
            if entry.name.endswith(".json") and entry.name != "schema.json"]
