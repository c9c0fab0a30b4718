"""Readable C++ names for messages: ``_ZN4core4takeERKSs`` -> ``core::take(std::string const&)``.

The demangling is itanium-demangler's (pure Python, no compiler or binutils needed, so the answer is the
same on every machine). Names come from the wheel, which is the attacker's: long ones are left as they
are, and any failure of the parser (deep nesting, a malformed name) leaves the name as it is.

Back-references make the cost exponential: a substitution (``S0_``) or template parameter (``T_``) repeats a
whole earlier type, and itanium-demangler rebuilds the tree without sharing, so 36 function types that
each take the previous one twice (332 characters) took 58 s to parse and 10 MB to print. Each reference
can at most multiply the size by about 1.44 (e^(1/e): f references in one type multiply by f), so a name
is demangled only when its length times 1.5 per reference stays within ``_MAX_EXPANSION``.
"""

from __future__ import annotations

import re
from functools import lru_cache

from wheelcheck.symbols.mangling import _DIGITS, _is_digit, _skip_balanced, source_name_length, source_name_span

__all__ = ["demangle", "qualified_key", "key_head", "QUALIFIERS_MAX", "abi_free"]

_MAX_LENGTH = 2048
_REFERENCE = re.compile(r"S[0-9A-Z]*_|T[0-9]*_")
_MAX_EXPANSION = 1 << 15  # characters of the demangled tree, at worst: some 50 ms
_MAX_SHOWN = 4096  # a longer demangled name helps no reader (and _tidy's patterns are quadratic in it)
QUALIFIERS_MAX = 4  # after _ZN: [r][V][K][R|O]; a longer run is no compiler's (and names_with_head tries each run)


@lru_cache(maxsize=4096)
def demangle(name: str) -> str:
    """The demangled name, or ``name`` itself when it is not a mangled C++ name we can read."""
    if not name.startswith("_Z") or len(name) > _MAX_LENGTH or not _cheap(name):
        return name
    try:
        from itanium_demangler import parse

        node = parse(name)
        text = str(node) if node is not None else None
    except Exception:  # noqa: BLE001 - a hostile or unknown mangling is shown as it is
        return name
    return _tidy(text) if text and len(text) <= _MAX_SHOWN else name


_NEW_ABI_SPELLING = re.compile(r"std::__cxx11::|\[abi:cxx11\]")
_STRING_SPELLED = "std::basic_string<char, std::char_traits<char>, std::allocator<char>>"


def abi_free(name: str) -> str | None:
    """The demangled name with libstdc++'s string ABI erased (``std::__cxx11::`` and ``[abi:cxx11]`` gone,
    std::string however spelled): equal for the two ABIs' manglings of one function, and only for them.
    None when the name cannot be demangled."""
    text = demangle(name)
    if text == name:
        return None
    return _NEW_ABI_SPELLING.sub(lambda m: "std::" if m.group().startswith("std") else "", text).replace(
        _STRING_SPELLED, "std::string")


def _cheap(name: str) -> bool:
    """Is the worst case of demangling ``name`` (every back-reference growing the tree 1.5 times) small?"""
    growth = 1.0
    for _ in _REFERENCE.finditer(name):
        growth *= 1.5
        if len(name) * growth > _MAX_EXPANSION:
            return False
    return True


def qualified_key(name: str) -> str | None:
    """The mangled qualified name, without cv-qualifiers, template arguments, ABI tags or parameters:
    ``_ZNK3c1010TensorImpl4sizeB5cxx11Ev`` and ``_ZN3c1010TensorImpl4sizeEl`` both give
    ``3c1010TensorImpl4size``. Two symbols with the same key are overloads, or the same function in
    another release or ABI. None for a name that is not a mangled function or variable name."""
    if not name.startswith("_Z") or name.startswith(("_ZT", "_ZGV", "_ZZ")):
        return None
    nested = name.startswith("_ZN")
    i = 3 if nested else 2
    while nested and i < len(name) and name[i] in "rVKRO":
        i += 1
    if i - 3 > QUALIFIERS_MAX:
        return None
    key: list[str] = []
    while i < len(name):
        c = name[i]
        if name.startswith("St", i) and not key:
            key.append("St")
            i += 2
        elif c == "L" and _is_digit(name[i + 1:i + 2]):  # internal linkage
            i += 1
        elif _is_digit(c):
            end = source_name_span(name, i)[1]
            if end > len(name):
                return None
            key.append(name[i:end])
            i = end
            if not nested:
                break
        elif c == "I" and key:
            i = _skip_balanced(name, i)
        elif c == "B" and key:  # an ABI tag: B<length><tag>
            m = _DIGITS.match(name, i + 1)
            if not m:
                return None
            i = m.end() + source_name_length(m.group())
        elif c in "CD" and _is_digit(name[i + 1:i + 2]) and key:
            key.append(c)  # C1 and C2 (complete, base) are one constructor to a reader
            i += 2
        else:
            break
    return "".join(key) if key and key != ["St"] else None


_KEY_HEAD = re.compile(r"_Z(?:N[rVKRO]*)?(?:(St)|L?([0-9]+))")


def key_head(name: str) -> str | None:
    """The first part of ``qualified_key(name)``: ``St`` or the first <source-name> (``3c10``). Every name of the
    same key spells it right after ``_Z``, ``_ZL``, ``_ZN<qualifiers>`` or ``_ZN<qualifiers>L``, so a sorted list
    of names holds them in a few ranges. None when ``name`` has no key."""
    m = _KEY_HEAD.match(name)
    if m is None or qualified_key(name) is None:
        return None
    if m.group(1):
        return "St"
    start = m.start(2)
    return name[start:source_name_span(name, start)[1]]


def _tidy(text: str) -> str:
    """Two spellings of the parser made to read like c++filt's: constructors and destructors by their
    class name, and a const method's qualifier after its parameters."""
    if "::{" in text:
        text = _STRUCTOR.sub(lambda m: f"{m.group(1)}::{'~' if 'dtor' in m.group(2) else ''}"
                             f"{m.group(1).rsplit('::', 1)[-1].split('<', 1)[0]}", text)
    m = _CONST_METHOD.match(text)
    return f"{m.group(1)}({m.group(2)}) const" if m else text


_STRUCTOR = re.compile(r"([A-Za-z_][\w:<>, ]*?)::\{(ctor|dtor|base dtor|deleting dtor|base ctor|complete ctor)\}")
_CONST_METHOD = re.compile(r"^([^()]+?) const\((.*)\)$")
