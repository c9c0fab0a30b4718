"""The policies shipped inside the package (wheelcheck.policies, built from the top-level policies/)."""

from __future__ import annotations

import functools
from importlib import resources

from wheelcheck.policy.loader import parse_policy_json
from wheelcheck.policy.model import PolicySet

__all__ = ["bundled_policies"]


@functools.lru_cache(maxsize=1)
def bundled_policies() -> PolicySet:
    """Every bundled policy. Cached: the files are package data and never change while we run."""
    folder = resources.files("wheelcheck.policies")
    policies = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".json") and entry.name != "schema.json":
            policies.extend(parse_policy_json(entry.read_text(encoding="utf-8"), f"bundled:{entry.name}"))
    return PolicySet(policies)
