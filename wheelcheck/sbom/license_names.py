"""A package's license, as its package manager states it, turned into an SPDX expression (pure).

Three spellings reach here: Debian's machine-readable copyright (``GPL-2+ or LGPL-3+``, ``Expat``, ``GPL-3+
with Bison exception``, lower-case operators, and a comma that binds loosest: ``A or B, and C`` is ``(A OR B)
AND C``); the old Fedora/RHEL License tags (``LGPLv3+ or GPLv2+``); and SPDX itself (current Fedora, Alpine).
A name is an SPDX id when the SPDX list has it under any case (``BSD-3-clause`` is ``BSD-3-Clause``), or
when it is one of the GNU names that spell a version and an "or later" (``GPL-2+``, ``LGPLv2.1+``,
``GFDL-NIV-1.3+``) or one of the few aliases below. Any other name (``public-domain``, ``BSD``, a
package's own) leaves the whole expression unstated: None, and the license text is the answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["spdx_expression", "spdx_id"]

# Debian short names that are not SPDX ids under any case, and what SPDX calls them
_ALIASES = {"expat": "MIT", "cc0": "CC0-1.0", "zope": "ZPL-2.1"}
_GNU = re.compile(r"(?P<family>A?GPL|LGPL)-?v?(?P<version>\d+(?:\.\d+)?)(?P<later>\+|-or-later)?(?:-only)?", re.I)
_GFDL = re.compile(r"GFDL(?P<niv>-NIV)?-?v?(?P<version>\d\.\d)(?P<later>\+)?", re.I)
# Debian's "with <keyword> exception": the SPDX exception, by the GPL's major version where SPDX has several
_EXCEPTIONS: dict[str, dict[str, str]] = {
    "autoconf": {"2": "Autoconf-exception-2.0", "3": "Autoconf-exception-3.0"},
    "bison": {"": "Bison-exception-2.2"},
    "classpath": {"": "Classpath-exception-2.0"},
    "font": {"": "Font-exception-2.0"},
    "gcc": {"2": "GCC-exception-2.0", "3": "GCC-exception-3.1"},
    "gcc-runtime": {"3": "GCC-exception-3.1"},
    "libtool": {"": "Libtool-exception"},
    "llvm": {"": "LLVM-exception"},
}
_TOKEN = re.compile(r"\s*(\(|\)|,|[^\s(),]+)")


def spdx_expression(text: str) -> str | None:
    """The SPDX expression ``text`` states, or None when a name in it has no SPDX id (or it does not parse)."""
    try:
        tokens = _tokens(text)
        if not tokens:
            return None
        node = _Parser(tokens).expression()
    except _Unstated:
        return None
    return node.render()


def spdx_id(name: str) -> str | None:
    """The SPDX license id of one short name (``GPL-2+`` -> ``GPL-2.0-or-later``), None without one."""
    from cyclonedx.spdx import fixup_id  # the SPDX list the CycloneDX schema holds

    gnu = _GNU.fullmatch(name)
    if gnu:
        version = gnu["version"] if "." in gnu["version"] else f"{gnu['version']}.0"
        found = fixup_id(f"{gnu['family']}-{version}-{'or-later' if gnu['later'] else 'only'}")
        return found
    gfdl = _GFDL.fullmatch(name)
    if gfdl:
        niv = "-no-invariants" if gfdl["niv"] else ""
        return fixup_id(f"GFDL-{gfdl['version']}{niv}-{'or-later' if gfdl['later'] else 'only'}")
    later = name.endswith("+")
    base = name[:-1] if later else name
    found = _ALIASES.get(base.lower()) or fixup_id(base)
    if found is None and re.fullmatch(r".*-\d+", base):  # Apache-2, MPL-2, CC-BY-SA-3: the list says .0
        found = fixup_id(f"{base}.0")
    if found is None or _is_exception(found):
        return None
    return f"{found}+" if later else found


def _is_exception(spdx: str) -> bool:
    return "exception" in spdx.lower()


class _Unstated(Exception):
    """A name without an SPDX id, or text that is no license expression."""


def _tokens(text: str) -> list[str]:
    out, at = [], 0
    text = " ".join(text.split())
    while at < len(text):
        match = _TOKEN.match(text, at)
        if match is None:
            raise _Unstated
        if match.group(1):
            out.append(match.group(1))
        at = match.end()
    return out


@dataclass(frozen=True)
class _Node:
    op: str  # "AND", "OR", or "" for a license (with its exception)
    value: str = ""
    parts: tuple[_Node, ...] = ()

    def render(self, parent: str = "") -> str:
        if not self.op:
            return self.value
        text = f" {self.op} ".join(p.render(self.op) for p in self.parts)
        return f"({text})" if parent and parent != self.op else text  # AND in OR reads alike, but say it


class _Parser:
    """``A or B and C`` is ``A OR (B AND C)``; a comma ends an expression, and the operator after it joins
    everything before to what follows (Debian's rule)."""

    def __init__(self, tokens: list[str]) -> None:
        self.tokens, self.at = tokens, 0

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> str:
        token = self.peek()
        if token is None:
            raise _Unstated
        self.at += 1
        return token

    def expression(self) -> _Node:
        node = self.disjunction()
        while self.peek() == ",":
            self.take()
            op = self.take().upper()
            if op not in ("AND", "OR"):
                raise _Unstated
            node = _joined(op, node, self.disjunction())
        if self.peek() is not None:
            raise _Unstated
        return node

    def disjunction(self) -> _Node:
        node = self.conjunction()
        while (self.peek() or "").upper() == "OR":
            self.take()
            node = _joined("OR", node, self.conjunction())
        return node

    def conjunction(self) -> _Node:
        node = self.atom()
        while (self.peek() or "").upper() == "AND":
            self.take()
            node = _joined("AND", node, self.atom())
        return node

    def atom(self) -> _Node:
        token = self.take()
        if token == "(":
            node = self.disjunction()
            if self.take() != ")":
                raise _Unstated
            return node
        if token in (")", ",") or token.upper() in ("AND", "OR", "WITH"):
            raise _Unstated
        license_id = spdx_id(token)
        if license_id is None:
            raise _Unstated
        if (self.peek() or "").upper() != "WITH":
            return _Node("", license_id)
        self.take()
        words = []
        while self.peek() not in (None, "(", ")", ",") and (self.peek() or "").upper() not in ("AND", "OR"):
            words.append(self.take())
            if words[-1].lower() == "exception":
                break
        return _Node("", f"{license_id} WITH {_exception(words, license_id)}")


def _joined(op: str, left: _Node, right: _Node) -> _Node:
    parts = (left.parts if left.op == op else (left,)) + (right.parts if right.op == op else (right,))
    return _Node(op, parts=parts)


def _exception(words: list[str], license_id: str) -> str:
    """The SPDX exception of ``with <words>``: an SPDX exception id, or Debian's ``<keyword> exception``."""
    from cyclonedx.spdx import fixup_id

    if len(words) == 1:
        found = fixup_id(words[0])
        if found is not None and _is_exception(found):
            return found
    if len(words) >= 2 and words[-1].lower() == "exception":
        by_version = _EXCEPTIONS.get("-".join(words[:-1]).lower(), {})
        major = re.search(r"-(\d+)\.", license_id)
        found = by_version.get(major.group(1) if major else "") or by_version.get("")
        if found is not None:
            return found
    raise _Unstated
