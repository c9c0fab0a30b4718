"""Just enough of the Itanium C++ mangling to tell libstdc++'s two string ABIs apart.

Not a demangler: a tokenizer that knows where source names (length-prefixed identifiers) begin and end,
so that "Ss" inside an identifier (``10SslContext``) is not taken for the old std::string, plus a
readable short name (``std::__cxx11::basic_string<…>::_M_replace``) for messages and hints.
"""

from __future__ import annotations

import re

__all__ = ["has_new_abi", "has_old_abi", "abi_neutral", "lead", "short_name", "source_name_length", "OLD_HINT",
           "MEMBER_QUALIFIERS", "STD_MEMBERS", "STD_STATICS", "LIBSTDCXX_PREFIXES"]

# Types that became std::__cxx11::X with _GLIBCXX_USE_CXX11_ABI=1; in the old ABI they are std::X.
_OLD_STD_TYPES = frozenset({"list", "_List_base", "basic_stringbuf", "basic_istringstream", "basic_ostringstream",
                            "basic_stringstream"})
# A cheap filter before tokenizing: every old-ABI marker contains one of these.
OLD_HINT = re.compile(r"S[sb]|St(?:4list|10_List_base|15basic_stringbuf|1[89]basic_[io]?stringstream)")
_NEW_STRING = "NSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"
_NEW_WSTRING = "NSt7__cxx1112basic_stringIwSt11char_traitsIwESaIwEEE"
_OLD_WSTRING = "SbIwSt11char_traitsIwESaIwEE"
_SUBSTITUTION = re.compile(r"S(?:[0-9A-Z]*_|s)")
# ASCII only: str.isdigit() and \d accept "²" and "٣", which mangling never uses
_DIGITS = re.compile(r"[0-9]+")
# Operator names (Itanium C++ ABI 5.1.5): two lowercase letters where a name would be
_OPERATORS = {
    "nw": " new", "na": " new[]", "dl": " delete", "da": " delete[]", "ps": "+", "ng": "-", "ad": "&", "de": "*",
    "co": "~", "pl": "+", "mi": "-", "ml": "*", "dv": "/", "rm": "%", "an": "&", "or": "|", "eo": "^", "aS": "=",
    "pL": "+=", "mI": "-=", "mL": "*=", "dV": "/=", "rM": "%=", "aN": "&=", "oR": "|=", "eO": "^=", "ls": "<<",
    "rs": ">>", "lS": "<<=", "rS": ">>=", "eq": "==", "ne": "!=", "lt": "<", "gt": ">", "le": "<=", "ge": ">=",
    "ss": "<=>", "nt": "!", "aa": "&&", "oo": "||", "pp": "++", "mm": "--", "cm": ",", "pm": "->*", "pt": "->",
    "cl": "()", "ix": "[]", "qu": "?", "cv": " (conversion)",
}
_ASCII_DIGITS = frozenset("0123456789")
# How a member of std:: starts under each cv- and ref-qualifier [V][K][R|O]: std::optional<int>::value() const & is
# _ZNKRSt8optionalIiE5valueEv. And the statics local to std:: functions (_ZZNKSt...) with their guard variables.
MEMBER_QUALIFIERS = tuple(cv + ref for cv in ("", "K", "V", "VK") for ref in ("", "R", "O"))
STD_MEMBERS = tuple(f"_ZN{q}St" for q in MEMBER_QUALIFIERS)
STD_STATICS = tuple(f"{local}{member[2:]}" for local in ("_ZZ", "_ZGVZ") for member in STD_MEMBERS + ("_ZSt",))
# How the names libstdc++ defines start: std:: members and functions, the old strings' (Ss, Sb) and streams' (Si,
# So, Sd) abbreviations, std::'s typeinfo and vtables, __gnu_cxx:: and __cxxabiv1::
LIBSTDCXX_PREFIXES = STD_MEMBERS + ("_ZSt", "_ZNSs", "_ZNKSs", "_ZNSb", "_ZNKSb", "_ZTISt", "_ZTSSt", "_ZTVSt",
                                    "_ZTINSt", "_ZTSNSt", "_ZTVNSt", "_ZN9__gnu_cxx", "_ZNK9__gnu_cxx",
                                    "_ZN10__cxxabiv1", "_ZTVN10__cxxabiv1", "_ZNSi", "_ZNSo", "_ZNSd", "_ZNKSi",
                                    "_ZNKSo", "_ZGVNSt")
_MAX_LENGTH_DIGITS = 9  # no real name is a billion characters long; int() of 4,301 digits raises


def source_name_length(digits: str) -> int:
    """The length a <source-name> prefix claims; longer than any name when it has absurdly many digits."""
    return int(digits) if len(digits) <= _MAX_LENGTH_DIGITS else 10 ** _MAX_LENGTH_DIGITS


def _is_digit(c: str) -> bool:
    return c in _ASCII_DIGITS  # False for "" (past the end)


def source_name_span(name: str, i: int) -> tuple[int, int]:
    """(start, end) of the <source-name> whose length digits begin at ``i``; the caller has seen a digit there."""
    m = _DIGITS.match(name, i)
    assert m is not None, "caller checked _is_digit(name[i])"
    return m.end(), m.end() + source_name_length(m.group())


def has_new_abi(name: str) -> bool:
    """The std::__cxx11 inline namespace or the [abi:cxx11] tag: the new (C++11) ABI."""
    return "St7__cxx11" in name or "B5cxx11" in name


# Special names (Itanium C++ ABI 5.1.4) whose prefix is not part of the name they are about: the typeinfo
# name of short is _ZTSs, whose "Ss" is no std::string; the typeinfo name of the old std::string is _ZTSSs
_SPECIAL_PREFIXES = ("_ZTV", "_ZTT", "_ZTI", "_ZTS", "_ZTH", "_ZTW", "_ZGV", "_ZGR")


def _encoding_start(name: str) -> int:
    """Where the name a mangled symbol is about starts: after _Z, a special name's prefix, a thunk's offsets."""
    if name.startswith(_SPECIAL_PREFIXES):
        return 4
    if name.startswith("_ZGTt"):  # transaction-safe clone
        return 5
    if name.startswith(("_ZTh", "_ZTv")):  # thunk: one call offset
        return _after_call_offset(name, 3)
    if name.startswith("_ZTc"):  # covariant thunk: two
        return _after_call_offset(name, _after_call_offset(name, 4))
    return 2


def _after_call_offset(name: str, i: int) -> int:
    """Past the call offset at ``i``: h<number>_ or v<number>_<number>_."""
    for _ in range(2 if name[i:i + 1] == "v" else 1):
        end = name.find("_", i)
        i = end + 1 if end >= 0 else len(name)
    return i


def _tokens(name: str):
    """(kind, text) tokens: ('abbr', 'Ss'), ('name', 'list'), ... Skips what it does not model."""
    i, n = _encoding_start(name), len(name)
    while i < n:
        c = name[i]
        if _is_digit(c):
            start, i = source_name_span(name, i)
            yield "name", name[start:i]
        elif c == "S":
            nxt = name[i + 1:i + 2]
            if nxt.islower():
                yield "abbr", "S" + nxt
                i += 2
            else:  # substitution S_ / S<seq-id>_
                end = name.find("_", i)
                i = end + 1 if end > 0 else n
        elif c == "T" and (name[i + 1:i + 2] == "_" or _is_digit(name[i + 1:i + 2])):
            end = name.find("_", i)
            i = end + 1 if end > 0 else n
        elif c in "CD" and _is_digit(name[i + 1:i + 2]):  # constructor / destructor
            i += 2
        elif c == "A" or (c == "D" and name[i + 1:i + 2] == "v"):  # array A10_, vector Dv4_
            end = name.find("_", i)
            i = end + 1 if end > 0 else n
        elif c == "L" and name[i + 1:i + 2].islower():  # literal L<type><value>E
            end = name.find("E", i)
            i = end + 1 if end > 0 else n
        elif c == "_" and _is_digit(name[i + 1:i + 2]):  # discriminator _<digit>
            i += 2
        elif c == "B":  # ABI tag B<source-name>
            yield "tag", ""
            i += 1
        else:
            yield "op", c
            i += 1


def has_old_abi(name: str) -> bool:
    """Does a mangled name mention std::string / std::list / a stringstream of the old ABI?"""
    if not OLD_HINT.search(name):
        return False
    previous = None
    for kind, text in _tokens(name):
        if kind == "abbr" and text in ("Ss", "Sb"):
            return True
        if kind == "name" and previous == ("abbr", "St") and text in _OLD_STD_TYPES:
            return True
        previous = (kind, text)
    return False


def abi_neutral(name: str) -> str:
    """A key equal for the old- and new-ABI manglings of the same function (std::string parameters).

    The [abi:cxx11] tags go, the new std::string spelled out becomes the old abbreviation, and every
    substitution reference collapses to one placeholder: the ABIs number substitutions differently
    because the new string type adds candidates. Other __cxx11 types (list, stringstreams) are not
    rewritten, so a mismatch on them goes unnoticed rather than misreported.
    """
    s = name.replace("B5cxx11", "").replace(_NEW_STRING, "Ss").replace(_NEW_WSTRING, _OLD_WSTRING)
    return _SUBSTITUTION.sub("S*", s)


_LEAD = re.compile(r"_Z(?:N[KVRO]*)?([0-9]+)")


def lead(name: str) -> str | None:
    """The mangled prefix up to the first identifier: ``_Z4take``, ``_ZN3foo``; None if there is none."""
    m = _LEAD.match(name)
    if not m:
        return None
    end = m.end() + source_name_length(m.group(1))
    return name[:end] if end <= len(name) else None


# special names of an entity local to a function (Itanium ABI 5.1.4, 5.1.6): _ZGVZ<function>E<entity> is
# "guard variable for function()::entity", and a typeinfo of a local class or lambda alike
_LOCAL_PREFIXES = (("_ZGVZ", "guard variable for "), ("_ZTSZ", "typeinfo name for "), ("_ZTIZ", "typeinfo for "),
                   ("_ZTVZ", "vtable for "), ("_ZZ", ""))
# what ends a local name, then an optional discriminator (_0, __12_): a source name (5cache), a string literal (s),
# a lambda or unnamed type (UlvE_, Ut_)
_LOCAL_STARTS = tuple(prefix for prefix, _said in _LOCAL_PREFIXES)
_DISCRIMINATOR = re.compile(r"(?:_\d|__\d+_)?")
_LOCAL_SOURCE_NAME = re.compile(r"E(\d{1,9})(?=[A-Za-z_])")
_LOCAL_MAX = 4096  # a longer name is shown as it is: each candidate end is checked against the rest of the name
_LOCAL_OTHER = re.compile(r"E(?:(s)|(U[lt][A-Za-z0-9_]*_))" + _DISCRIMINATOR.pattern + "$")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _local_name(name: str) -> str | None:
    """``short_name`` of a function-local entity (``guard variable for foo::bar::cache``), None for other names."""
    if len(name) > _LOCAL_MAX:
        return None
    said = body = None
    for prefix, said in _LOCAL_PREFIXES:
        if name.startswith(prefix):
            body = "_Z" + name[len(prefix):]
            break
    if body is None:
        return None
    function = short_name(body)  # the enclosing function's name: what follows its parameters is ignored
    if function == body:
        return None
    entity = None
    for m in _LOCAL_SOURCE_NAME.finditer(name):  # the last <length><name> that ends the name (a discriminator aside)
        end = m.end() + int(m.group(1))
        if end <= len(name) and _IDENTIFIER.fullmatch(name, m.end(), end) and _DISCRIMINATOR.fullmatch(name, end):
            entity = name[m.end():end]
    if entity is None:
        other = _LOCAL_OTHER.search(name)
        if other is None:
            return None
        entity = "(string literal)" if other.group(1) else "(lambda)" if other.group(2).startswith("Ul") else \
            "(unnamed type)"
    return f"{said}{function}::{entity}"


# special names of a named entity (Itanium ABI 5.1.4), in c++filt's words: the entity's name follows the prefix
_NAMED_SPECIALS = (("_ZGTt", "transaction clone for "), ("_ZGV", "guard variable for "), ("_ZTV", "vtable for "),
                   ("_ZTI", "typeinfo for "), ("_ZTS", "typeinfo name for "), ("_ZTT", "VTT for "))


def short_name(name: str) -> str:
    """A readable qualified name without parameters, or the name itself when it is not simple."""
    if not name.startswith("_Z"):
        return name
    if name.startswith(_LOCAL_STARTS):
        return _local_name(name) or name
    for prefix, said in _NAMED_SPECIALS:
        if name.startswith(prefix):
            inner = "_Z" + name[len(prefix):]
            named = short_name(inner)
            return said + named if named != inner else name
    i = 3 if name.startswith("_ZN") else 2
    nested = i == 3
    while nested and i < len(name) and name[i] in "KVRO":
        i += 1
    parts: list[str] = []
    while i < len(name):
        c = name[i]
        if name.startswith("St", i) and not parts:
            parts.append("std")
            i += 2
            continue
        operator = _OPERATORS.get(name[i:i + 2])
        if operator is not None:  # ends the name like a source name: its template arguments may follow
            parts.append("operator" + operator)
            i += 2
        elif _is_digit(c):
            start, end = source_name_span(name, i)
            if end > len(name):
                return name
            parts.append(name[start:end])
            i = end
        elif c == "I" and parts:
            i = _skip_balanced(name, i)
            parts[-1] += "<…>"
        elif c == "B":
            m = _DIGITS.match(name, i + 1)
            if not m:
                return name
            i = m.end() + source_name_length(m.group())
            continue
        elif c in "CD" and _is_digit(name[i + 1:i + 2]) and parts:
            parts.append(("~" if c == "D" else "") + parts[-1].split("<", 1)[0])
            i += 2
        else:
            break
        if not nested and (_is_digit(c) or operator is not None):
            if name[i:i + 1] == "I":
                i = _skip_balanced(name, i)
                parts[-1] += "<…>"
            break
    return "::".join(parts) if parts else name


def _skip_balanced(name: str, i: int) -> int:
    """Past the E that closes the template arguments opening at ``i``."""
    depth = 0
    while i < len(name):
        c = name[i]
        if _is_digit(c):
            i = source_name_span(name, i)[1]
            continue
        if c == "S" or c == "T":
            nxt = name[i + 1:i + 2]
            if c == "S" and nxt.islower():
                i += 2
                continue
            if nxt == "_" or _is_digit(nxt) or nxt.isupper():
                end = name.find("_", i)
                i = end + 1 if end > 0 else len(name)
                continue
        if c in "INLXJF":
            depth += 1
        elif c == "E":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i
