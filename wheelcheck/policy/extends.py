"""Resolve ``"extends"``: a policy that names a parent inherits every field it does not set.

Merge rules (documented in docs/policy-guide.md):

- scalars (priority, libc, libc_version, cxx_abi, description): the child's value if it sets one;
- ``symbol_versions``: per arch, then per namespace, the child's list replaces the parent's; arches and
  namespaces the child does not mention are inherited;
- ``lib_whitelist`` and ``drivers``: the child's entries are added to the parent's (the child allows more);
- ``blacklist``: per library, the child's symbols are added to the parent's;
- ``exposure`` and ``rules``: merged key by key (nested objects too), the child's value winning;
- ``aliases`` are never inherited (an alias names exactly one policy);
- ``source`` says where the child came from and which parent it extends.

A parent is looked up first among the other policies of the same file, then among the bundled policies
(by name or alias). A policy may extend a bundled policy of its own name: ``{"name": "manylinux_2_28",
"extends": "manylinux_2_28", "cxx_abi": ["new"]}`` narrows the bundled one. Cycles are errors, and so is a
chain of more than MAX_EXTENDS policies (each link is resolved by recursion).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from wheelcheck.errors import PolicyError

__all__ = ["Entry", "ParentLookup", "resolve_extends", "merge_documents", "MAX_EXTENDS"]

Entry = tuple[dict[str, Any], str]  # (policy document, the file it came from)
ParentLookup = Callable[[str], "Entry | None"]  # a policy outside the file, by name or alias

MAX_EXTENDS = 64  # policies in one chain of 'extends'; a real one holds two or three

_REPLACED = ("priority", "libc", "libc_version", "cxx_abi", "description")
_ADDED_LISTS = ("lib_whitelist", "drivers")
_MERGED_OBJECTS = ("exposure", "rules")


def resolve_extends(entries: list[Entry], outside: ParentLookup | None = None) -> list[Entry]:
    """The entries with every ``extends`` resolved; PolicyError naming the file on a missing parent or a cycle."""
    by_name: dict[str, int] = {}
    for index, (doc, _) in enumerate(entries):
        name = doc.get("name")
        if isinstance(name, str):
            by_name.setdefault(name, index)
    resolved: dict[int, Entry] = {}
    links: dict[int, int] = {}  # index -> 'extends' links within the file from it to its root

    def resolve(index: int, chain: tuple[str, ...]) -> Entry:
        if index in resolved:
            return resolved[index]
        doc, origin = entries[index]
        parent_name = doc.get("extends")
        if parent_name is None:
            resolved[index] = (doc, origin)
            return resolved[index]
        name = doc.get("name")
        if not isinstance(name, str):
            raise PolicyError(origin, f"entry {index}: a policy that extends another needs its own 'name'")
        if not isinstance(parent_name, str):
            raise PolicyError(origin, f"policy {name}: field 'extends' must be a policy name")
        if name in chain:
            raise PolicyError(origin, f"policy {name}: 'extends' makes a cycle: {' → '.join(chain + (name,))}")
        sibling = by_name.get(parent_name)
        if sibling is not None and sibling != index:
            if len(chain) >= MAX_EXTENDS:  # checked before the call: each link is one level of recursion
                raise _too_long(origin, chain[0])
            parent = resolve(sibling, chain + (name,))
            links[index] = links.get(sibling, 0) + 1
            if links[index] >= MAX_EXTENDS:  # the parents were resolved first, each a short call
                raise _too_long(origin, name)
        else:
            found = outside(parent_name) if outside is not None else None
            if found is None:
                raise PolicyError(origin, f"policy {name}: extends {parent_name!r}, which is neither in this "
                                          f"file nor a bundled policy")
            parent = found
        resolved[index] = (merge_documents(parent[0], doc, parent[1], origin), origin)
        return resolved[index]

    return [resolve(i, ()) for i in range(len(entries))]


def _too_long(origin: str, name: str) -> PolicyError:
    return PolicyError(origin, f"policy {name}: its chain of 'extends' holds more than {MAX_EXTENDS} policies")


def merge_documents(parent: Mapping[str, Any], child: Mapping[str, Any], parent_origin: str,
                    child_origin: str = "policy") -> dict[str, Any]:
    """The child document completed from its (already resolved) parent, without ``extends``."""
    _check_shapes(parent, parent_origin)
    _check_shapes(child, child_origin)
    out: dict[str, Any] = {"name": child["name"]}
    if child.get("aliases"):
        out["aliases"] = list(child["aliases"])
    for key in _REPLACED:
        if key in child:
            out[key] = child[key]
        elif key in parent:
            out[key] = parent[key]
    out["symbol_versions"] = _merge_versions(parent.get("symbol_versions", {}), child.get("symbol_versions", {}))
    for key in _ADDED_LISTS:
        merged = _added(parent.get(key, []), child.get(key, []))
        if merged or key in parent or key in child:
            out[key] = merged
    blacklist = {lib: list(symbols) for lib, symbols in parent.get("blacklist", {}).items()}
    for lib, symbols in child.get("blacklist", {}).items():
        blacklist[lib] = _added(blacklist.get(lib, []), symbols)
    out["blacklist"] = blacklist
    for key in _MERGED_OBJECTS:
        if key in parent or key in child:
            out[key] = _deep_merge(parent.get(key, {}), child.get(key, {}))
    own = f"{child['source']}; " if child.get("source") else ""
    inherited = f"; {parent['source']}" if parent.get("source") else ""
    out["source"] = f"{own}extends {parent['name']} from {parent_origin}{inherited}"
    return out


def _check_shapes(doc: Mapping[str, Any], origin: str) -> None:
    """The fields a merge walks must have the right containers; the loader checks the rest."""
    where = f"policy {doc.get('name', '?')}"
    expected = {"symbol_versions": dict, "blacklist": dict, "exposure": dict, "rules": dict,
                "lib_whitelist": list, "drivers": list, "aliases": list}
    for key, kind in expected.items():
        if key in doc and not isinstance(doc[key], kind):
            raise PolicyError(origin, f"{where}: field '{key}' must be {'an object' if kind is dict else 'a list'}")
    for arch, namespaces in doc.get("symbol_versions", {}).items():
        if not isinstance(namespaces, dict):
            raise PolicyError(origin, f"{where}: symbol_versions.{arch} must be an object")
    for lib, symbols in doc.get("blacklist", {}).items():
        if not isinstance(symbols, list):
            raise PolicyError(origin, f"{where}: blacklist.{lib} must be a list")


def _merge_versions(parent: Mapping, child: Mapping) -> dict[str, dict[str, list[str]]]:
    out = {arch: {ns: list(v) for ns, v in namespaces.items()} for arch, namespaces in parent.items()}
    for arch, namespaces in child.items():
        target = out.setdefault(arch, {})
        for ns, versions in namespaces.items():
            target[ns] = list(versions)
    return out


def _added(base: list, extra: list) -> list:
    return list(base) + [item for item in extra if item not in base]


def _deep_merge(base: Mapping, over: Mapping) -> dict:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    return out
