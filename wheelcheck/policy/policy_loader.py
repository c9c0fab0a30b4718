"""Load policies from files and references, ``extends`` resolved against the file and the bundled policies."""

from __future__ import annotations

from pathlib import Path

from wheelcheck.errors import PolicyError
from wheelcheck.policy.extends import Entry, ParentLookup, resolve_extends
from wheelcheck.policy.policy_document import (MAX_JSON_DEPTH, is_standard_name, load_json, policy_from_dict, read_entries,
                                               refuse_standard_names)
from wheelcheck.policy.policy_model import Policy
from wheelcheck.policy.registry import bundled_policies

__all__ = ["load_policy_file", "policy_from_dict", "parse_policy_json", "read_entries", "bundled_parent",
           "policy_by_reference", "refuse_standard_names", "is_standard_name", "load_json", "MAX_JSON_DEPTH"]


def load_policy_file(path: str | Path) -> list[Policy]:
    """Every policy in the file at ``path``; PolicyError naming the file on any problem."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PolicyError(str(path), f"cannot read policy file ({exc.__class__.__name__}: {exc})") from None
    return parse_policy_json(text, str(path))


def parse_policy_json(text: str, origin: str, outside: ParentLookup | None = None) -> list[Policy]:
    """The policies of one file, ``extends`` resolved against the file and ``outside`` (default: bundled)."""
    entries = resolve_extends(read_entries(text, origin), outside or bundled_parent)
    return [policy_from_dict(doc, origin) for doc, origin in entries]



def bundled_parent(name: str) -> Entry | None:
    """A bundled policy's document, for ``extends``."""
    policy = bundled_policies().find(name)
    if policy is None or policy.is_linux:
        return None
    return dict(policy.document), policy.origin


def policy_by_reference(ref: str) -> Policy:
    """A policy named on the command line: a bundled name or alias, a file holding one policy, or FILE:NAME."""
    path, sep, name = ref.rpartition(":")
    if sep and Path(path).is_file():
        policies = load_policy_file(path)
        found = next((p for p in policies if name == p.name or name in p.aliases), None)
        if found is None:
            raise PolicyError(path, f"no policy named {name!r} (the file has {', '.join(p.name for p in policies)})")
        return found
    if Path(ref).is_file():
        policies = load_policy_file(ref)
        if len(policies) > 1:
            raise PolicyError(ref, f"the file holds {len(policies)} policies: name one as {ref}:NAME")
        return policies[0]
    found = bundled_policies().find(ref)
    if found is None or found.is_linux:
        raise PolicyError(ref, f"neither a policy file nor a bundled policy "
                               f"(bundled: {', '.join(bundled_policies().names())})")
    return found


