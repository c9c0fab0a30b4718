"""One policy file's JSON read into Policy objects: our one-policy-per-file format or auditwheel's array,
every field checked. Nothing here knows the bundled policies (policy_loader resolves ``extends`` against them)."""

from __future__ import annotations

import json
import re
from types import MappingProxyType
from typing import Any

from wheelcheck.errors import PolicyError
from wheelcheck.policy.extends import Entry
from wheelcheck.policy.policy_model import Policy

__all__ = ["policy_from_dict", "read_entries", "refuse_standard_names", "is_standard_name", "load_json", "MAX_JSON_DEPTH"]

_NAME = re.compile(r"^(manylinux|musllinux)_(\d+)_(\d+)$")
_LEGACY_LIBC = {"manylinux1": "2.5", "manylinux2010": "2.12", "manylinux2014": "2.17"}
MAX_JSON_DEPTH = 64  # arrays and objects inside one another; a policy file nests five deep
_JSON_MARK = re.compile(r'\\.|["\[\]{}]', re.DOTALL)  # an escape, a quote or a bracket


def is_standard_name(name: str) -> bool:
    """A name PEP 513/571/599/600/656 gives a meaning (manylinux_2_17, manylinux2014, musllinux_1_2), or linux."""
    return bool(_NAME.match(name)) or name in _LEGACY_LIBC or name == "linux"


def refuse_standard_names(policies: list[Policy], origin: str) -> None:
    """PolicyError naming the first policy of a user's file that takes a standard name or alias: judged by it, a
    wheel's tag or ``--plat manylinux_2_17`` would mean what the file says, not what the PEP says."""
    for policy in policies:
        for name in (policy.name, *policy.aliases):
            if is_standard_name(name):
                raise PolicyError(origin, f"defines a policy named {name!r}, a standard tag's name: a policy file "
                                          f"adds policies under names of its own (team_{name.split('_', 1)[-1]}, "
                                          f"with \"extends\": \"{name}\"), and never redefines a standard one")


def read_entries(text: str, origin: str) -> list[Entry]:
    """The policy objects of a file (ours: one object; auditwheel's: an array), unresolved."""
    try:
        doc = load_json(text, origin)
    except json.JSONDecodeError as exc:
        raise PolicyError(origin, f"not valid JSON (line {exc.lineno}: {exc.msg})") from None
    entries = []
    for entry in doc if isinstance(doc, list) else [doc]:
        if not isinstance(entry, dict):
            raise PolicyError(origin, "a policy must be a JSON object")
        if entry.get("name") == "linux":
            continue  # auditwheel's array carries the generic linux policy; ours is built in
        entries.append((entry, origin))
    if not entries:
        raise PolicyError(origin, "the file holds no policy")
    return entries


def load_json(text: str, origin: str) -> Any:
    """``json.loads(text)``, once a linear scan has found no arrays or objects nested deeper than MAX_JSON_DEPTH:
    the json module and the code that walks a policy recurse once per level, and 100,000 levels raised
    RecursionError. PolicyError naming ``origin`` for a deeper document; JSONDecodeError as json.loads raises it."""
    if _nested_deeper_than(text, MAX_JSON_DEPTH):
        raise PolicyError(origin, f"JSON nested more than {MAX_JSON_DEPTH} arrays or objects deep")
    return json.loads(text)


def _nested_deeper_than(text: str, limit: int) -> bool:
    depth, in_string = 0, False
    for mark in _JSON_MARK.finditer(text):
        found = mark.group()
        if found == '"':
            in_string = not in_string
        elif in_string or found[0] == "\\":
            continue
        elif found in "[{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False



def policy_from_dict(doc: dict[str, Any], origin: str) -> Policy:
    """Build a Policy from one JSON object (ours, or one entry of auditwheel's array)."""
    name = _field(doc, "name", str, origin)
    where = f"policy {name}"
    priority = _field(doc, "priority", int, origin, where)
    libc, libc_version = _libc_of(doc, name, origin)
    symbol_versions = _field(doc, "symbol_versions", dict, origin, where)
    frozen_versions = {}
    for arch, namespaces in symbol_versions.items():
        if not isinstance(namespaces, dict):
            raise PolicyError(origin, f"{where}: symbol_versions.{arch} must be an object")
        frozen_versions[arch] = MappingProxyType({
            ns: frozenset(_str_list(v, origin, f"{where}: symbol_versions.{arch}.{ns}"))
            for ns, v in namespaces.items()
        })
    blacklist = _field(doc, "blacklist", dict, origin, where, default={})
    cxx_abi = _str_list(doc.get("cxx_abi", ["old", "new"]), origin, f"{where}: cxx_abi")
    if set(cxx_abi) - {"old", "new"}:
        raise PolicyError(origin, f"{where}: cxx_abi may hold only 'old' and 'new'")
    _check_settings(doc, origin, where)
    return Policy(
        name=name,
        priority=priority,
        libc=libc,
        libc_version=libc_version,
        aliases=tuple(_str_list(doc.get("aliases", []), origin, f"{where}: aliases")),
        cxx_abi=frozenset(cxx_abi),
        symbol_versions=MappingProxyType(frozen_versions),
        lib_whitelist=frozenset(_str_list(doc.get("lib_whitelist", []), origin, f"{where}: lib_whitelist")),
        blacklist=MappingProxyType({
            lib: frozenset(_str_list(v, origin, f"{where}: blacklist.{lib}")) for lib, v in blacklist.items()
        }),
        drivers=frozenset(_str_list(doc.get("drivers", []), origin, f"{where}: drivers")),
        exposure=MappingProxyType(_field(doc, "exposure", dict, origin, where, default={}) or {}),
        rules=MappingProxyType(_field(doc, "rules", dict, origin, where, default={}) or {}),
        source=doc.get("source"),
        origin=origin,
        document=MappingProxyType(dict(doc)),
    )


_SETTINGS = ("off", "info", "warning", "error")
_EXPOSURE_KEYS = frozenset({"extension_warn_above", "families", "allow"})


def _known(table: str) -> frozenset[str]:
    """Rule ids (rules.json) or family ids (families.json): what a policy may configure."""
    from wheelcheck.data import load_table  # noqa: PLC0415 - data tables are read only when a policy sets these

    doc = load_table(table)
    if table == "rules.json":
        return frozenset(rule["id"] for rule in doc["rules"])
    return frozenset(doc["families"])


def _check_settings(doc: dict[str, Any], origin: str, where: str) -> None:
    """The hygiene settings (rules, exposure) hold only values the analyses understand."""
    exposure = doc.get("exposure") or {}
    if not isinstance(exposure, dict):
        return  # _field reports the wrong type
    unknown = sorted(set(exposure) - _EXPOSURE_KEYS)
    if unknown:
        raise PolicyError(origin, f"{where}: exposure.{unknown[0]} is not a setting "
                                  f"(known: {', '.join(sorted(_EXPOSURE_KEYS))})")
    tables = (("rules", doc.get("rules") or {}, _known("rules.json")),
              ("exposure.families", exposure.get("families") or {}, _known("families.json")))
    for field, mapping, known in tables:
        if not isinstance(mapping, dict):
            raise PolicyError(origin, f"{where}: {field} must be an object")
        for key, value in mapping.items():
            if key not in known:
                raise PolicyError(origin, f"{where}: {field}.{key}: no such {field.split('.')[-1][:-1]} "
                                          f"(wheelcheck rules lists them)" if field == "rules" else
                                  f"{where}: {field}.{key}: no such family (known: {', '.join(sorted(known))})")
            if value not in _SETTINGS:
                raise PolicyError(origin, f"{where}: {field}.{key} must be one of {', '.join(_SETTINGS)}, not {value!r}")
    limit = exposure.get("extension_warn_above", 1)
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise PolicyError(origin, f"{where}: exposure.extension_warn_above must be a positive integer")


def _libc_of(doc: dict, name: str, origin: str) -> tuple[str, str]:
    if "libc" in doc:
        libc = doc["libc"]
        if libc not in ("glibc", "musl"):
            raise PolicyError(origin, f"policy {name}: libc must be 'glibc' or 'musl', not {libc!r}")
        return libc, str(doc.get("libc_version", ""))
    match = _NAME.match(name)
    if match:
        family = "glibc" if match.group(1) == "manylinux" else "musl"
        return family, f"{match.group(2)}.{match.group(3)}"
    if name in _LEGACY_LIBC:
        return "glibc", _LEGACY_LIBC[name]
    raise PolicyError(origin, f"policy {name}: no 'libc' field and the name does not say which libc")


def _field(doc: dict, key: str, kind: type, origin: str, where: str = "policy", default: Any = None) -> Any:
    if key not in doc:
        if default is not None:
            return default
        raise PolicyError(origin, f"{where}: missing field '{key}'")
    value = doc[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise PolicyError(origin, f"{where}: field '{key}' must be {kind.__name__}")
    return value


def _str_list(value: Any, origin: str, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise PolicyError(origin, f"{where} must be a list of strings")
    return value
