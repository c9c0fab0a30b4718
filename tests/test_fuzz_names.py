"""Names are input too: mangled names, soname strings and error lines, as properties over generated text.

The functions run in this process (they are pure and quick): hypothesis checks they never raise and keep
their contracts on names built from the characters their parsers branch on, with non-ASCII digits
(``str.isdigit`` accepts "²", the length regex does not) and digit runs past Python's 4,300-digit
integer-string limit.
"""
from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.shapes import HOSTILE_NAMES
from tests.fuzz.strategies import mangled_names
from wheelcheck.elf.elf_summary import _soname_matches
from wheelcheck.errors import BadWheelError, one_line
from wheelcheck.symbols.families import _group_key, count_family, families, group_counts
from wheelcheck.symbols.mangling import abi_neutral, has_new_abi, has_old_abi, lead, short_name
from wheelcheck.wheel.requires_dist import required_name


@given(mangled_names())
def test_mangling_helpers_take_any_name(name):
    assert isinstance(has_old_abi(name), bool)
    assert isinstance(has_new_abi(name), bool)
    assert isinstance(abi_neutral(name), str)
    prefix = lead(name)
    assert prefix is None or name.startswith(prefix)
    assert isinstance(short_name(name), str)


@given(st.lists(mangled_names(), max_size=30))
def test_family_counts_take_any_names(names):
    ordered = sorted(names)
    groups = group_counts(ordered)
    assert sum(groups.values()) == len(ordered)
    for family in families():
        assert 0 <= count_family(ordered, family) <= len(ordered) + len(family.names)
    for name in names:
        key, label = _group_key(name)
        assert name.startswith(key) and isinstance(label, str)


def test_the_reported_names():
    """The issue's reproducers: '_Z²Ss' (AttributeError) and 4,301 digits (ValueError) once crashed these."""
    for name in ("_Z\u00b2Ss", "_Z" + "1" * 4301, "_ZN" + "9" * 4301 + "fooE", "_Z" + "1" * 4301 + "Ss"):
        has_old_abi(name)
        short_name(name)
        _group_key(name)
        assert lead(name) is None  # no length the name can hold


# The soname pattern _soname_matches replaces: right, but quadratic on a long run of "liblib..."
_REGEX = re.compile(rb"lib[A-Za-z0-9_+\-][A-Za-z0-9_+.\-]*?\.so(?:\.[0-9]+)*(?=\x00)")
_PIECES = (b"lib", b"lib.", b".so", b".so.", b".1", b"12", b"\x00", b"x", b"-", b"+", b"_", b".", b"/", b" ",
           b"libfoo.so.1\x00", b"\xff")


@given(st.lists(st.sampled_from(_PIECES), max_size=40).map(b"".join), st.integers(0, 8), st.integers(0, 8))
def test_soname_matches_equal_the_regex(data, cut_start, cut_end):
    """Linear-time matching finds exactly what the old regex found, at every segment boundary."""
    start, end = min(cut_start, len(data)), max(min(cut_start, len(data)), len(data) - cut_end)
    expected = [m.group() for m in _REGEX.finditer(data, start, end)]
    assert list(_soname_matches(data, start, end)) == expected


@given(st.text(alphabet=st.sampled_from(["a", "/", ".", "\n", "\r", "\x1b", "\u2028", "\u2029", "\x85", "\x0b",
                                         "\x0c", "\x1c", "\x00", "\t", "\u00e9", "\ud7ff"]), max_size=30))
def test_one_line_is_one_line(text):
    line = one_line(text)
    assert len(line.splitlines()) <= 1 and "\x1b" not in line
    error = BadWheelError(f"dir/{text}.whl", f"member {text!r}: problem")
    assert len(str(error).splitlines()) == 1


def test_error_names_keep_their_text():
    for name in HOSTILE_NAMES:
        line = str(BadWheelError("w.whl", f"member {name!r} is odd"))
        assert len(line.splitlines()) == 1
    assert one_line("caf\u00e9 a\nb") == "caf\u00e9 a\\nb"


_REQUIREMENT_PIECES = ("numpy", " ", "(", ")", ">=1.0", ";", "python_version", "<", "'3.8'", " and ", " or ",
                       "extra == 'a'", "[", "]", ",", "@", "http://x", "\u00e9", "\n")


@given(st.one_of(st.text(max_size=40), st.lists(st.sampled_from(_REQUIREMENT_PIECES), max_size=30).map("".join),
                 st.integers(0, 5000).map(lambda n: "a; " + "(" * n + "os_name=='x'" + ")" * n)))
def test_requires_dist_lines_never_raise(line):
    """A Requires-Dist line is input: 3,000 nested parentheses once raised RecursionError in packaging."""
    name = required_name(line)
    assert name is None or name == name.lower()
