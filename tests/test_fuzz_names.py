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

from tests.fuzz.fixtures import elf_seeds  # noqa: F401  (fixture)
from tests.fuzz.shapes import HOSTILE_NAMES
from tests.fuzz.strategies import mangled_names
from wheelcheck.compat.nearest_symbol import names_with_head
from wheelcheck.compat.requirement_pins import declared_requirements, marker_environment
from wheelcheck.conflicts.distribution import Distribution
from wheelcheck.elf.elf_summary import _soname_matches
from wheelcheck.errors import BadWheelError, one_line
from wheelcheck.symbols.demangle import demangle, key_head, qualified_key
from wheelcheck.symbols.families import _group_key, count_family, families, group_counts
from wheelcheck.symbols.mangling import abi_neutral, has_new_abi, has_old_abi, lead, short_name
from wheelcheck.wheel.record import record_rows, render_record
from wheelcheck.wheel.requires_dist import installed_requirements, required_name


@given(mangled_names())
def test_mangling_helpers_take_any_name(name):
    readable = demangle(name)
    assert readable == name or len(readable) <= 4096
    key = qualified_key(name)
    assert key is None or isinstance(key, str)
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


# names that share a key's head in every place qualified_key reads it from, with tails that change the key or not
_KEYED_NAMES = st.builds(lambda start, head, tail: start + head + tail,
                         st.sampled_from(("_Z", "_ZL", "_ZN", "_ZNK", "_ZNKR", "_ZNO", "_ZNVK", "_ZNrVKO", "_ZNL", "_ZNKL",
                                          "_ZNKKKK", "_ZNKKKKK", "_ZT", "_ZNS", "_ZNKS")),
                         st.sampled_from(("St", "3foo", "3fop", "2fo", "L3foo", "7__cxx11")),
                         st.sampled_from(("", "Ev", "3barEv", "3barB5cxx11Ev", "IiE3barEi", "4bazEv", "C1Ev", "E")))


@given(st.lists(st.one_of(_KEYED_NAMES, mangled_names()), max_size=40))
def test_names_with_head_hold_every_name_of_the_key(names):
    """The nearest-symbol search looks only at the names names_with_head narrows to: none of the same key is lost."""
    ordered = sorted(set(names))
    for wanted in names:
        key = qualified_key(wanted)
        if key is None:
            assert key_head(wanted) is None
            continue
        narrowed = names_with_head(ordered, key_head(wanted))
        assert {n for n in ordered if qualified_key(n) == key} <= set(narrowed)
        assert len(narrowed) == len(set(narrowed))


def demangler_bomb(levels: int) -> str:
    """f<a, void(a, a), void(void(a, a), void(a, a)), ...>: each template argument a function type taking
    the previous one twice, by substitution; the demangled text doubles every two levels."""
    def ref(i: int) -> str:
        digits, out = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", ""
        while True:
            out, i = digits[i % 36] + out, i // 36
            if i == 0:
                return f"S{out}_"
    args = ["1a", "FvS_S_E"] + [f"Fv{ref(i)}{ref(i)}E" for i in range(levels - 1)]
    return "_Z1fI" + "".join(args) + "Evv"


def test_demangler_bombs_are_not_demangled():
    """36 levels (332 characters) took itanium-demangler 58 s to parse and gave 10 MB of text."""
    assert demangle(demangler_bomb(4)).startswith("void f<a, void (")  # small ones read as usual
    for levels in (36, 200):
        bomb = demangler_bomb(levels)
        assert demangle(bomb) == bomb


def test_the_reported_names():
    """The issue's reproducers: '_Z²Ss' (AttributeError) and 4,301 digits (ValueError) once crashed these."""
    for name in ("_Z\u00b2Ss", "_Z" + "1" * 4301, "_ZN" + "9" * 4301 + "fooE", "_Z" + "1" * 4301 + "Ss"):
        has_old_abi(name)
        short_name(name)
        _group_key(name)
        qualified_key(name)
        assert lead(name) is None  # no length the name can hold


# The soname pattern _soname_matches replaces: right, but quadratic on a long run of "liblib..."
_REGEX = re.compile(rb"lib[A-Za-z0-9_+\-][A-Za-z0-9_+.\-]*?\.so(?:\.[0-9]+)*(?=\x00)")
_NAME_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_+-.")
_NOISE = (b"\x00", b"x", b"-", b"+", b"_", b".", b"/", b" ", b"%d", b"\xff", b"lib", b".so", b"lib.", b"ld-", b"-l:",
          b"uC")


def _regex_matches(data: bytes, start: int, end: int) -> list[bytes]:
    """The regex's matches, less the names inside a loader's name (a run of name bytes starting "ld-") and
    linker arguments ("-l:" just before), looked for byte by byte."""
    out = []
    for m in _REGEX.finditer(data, start, end):
        run = m.start()
        while run > start and data[run - 1] in _NAME_BYTES:
            run -= 1
        inside_loader = m.start() > run and data[run:run + 3] == b"ld-"
        linker_argument = m.start() == run and data[max(start, run - 3):run] == b"-l:"
        if not (inside_loader or linker_argument):
            out.append(m.group())
    return out
_SONAME = st.builds(lambda stem, versions: b"lib" + stem + b".so" + b"".join(b"." + v for v in versions) + b"\x00",
                    st.sampled_from((b"", b"c", b"z", b"m", b"dl", b"rt", b"lib", b".x", b"-1", b"foo", b"a.so")),
                    st.lists(st.sampled_from((b"1", b"6", b"12", b"x", b"")), max_size=3))


@given(st.lists(st.one_of(st.sampled_from(_NOISE), _SONAME), max_size=30).map(b"".join),
       st.integers(0, 8), st.integers(0, 8))
def test_soname_matches_equal_the_regex(data, cut_start, cut_end):
    """Linear-time matching finds exactly what the old regex found (less loader names and linker arguments), at
    every segment boundary."""
    start, end = min(cut_start, len(data)), max(min(cut_start, len(data)), len(data) - cut_end)
    assert list(_soname_matches(data, start, end)) == _regex_matches(data, start, end)


def test_soname_matches_short_names():
    """One or two letters between "lib" and ".so" (libc, libz, libdl): a bound off by two once lost them."""
    data = b"\x00libc.so.6\x00libz.so.1\x00libdl.so.2\x00lib.so\x00liblib.so\x00xlibm.so\x00libc.so.%d\x00"
    expected = [m.group() for m in _REGEX.finditer(data)]
    assert expected == [b"libc.so.6", b"libz.so.1", b"libdl.so.2", b"liblib.so", b"libm.so"]
    assert list(_soname_matches(data, 0, len(data))) == expected


def test_soname_matches_on_real_libraries(elf_seeds):
    for name, seed in elf_seeds.items():
        assert list(_soname_matches(seed, 0, len(seed))) == _regex_matches(seed, 0, len(seed)), name


def test_soname_matches_skip_loader_names_and_linker_arguments():
    """A compiler driver's strings (clang-tidy, libclang): "ld-uClibc-mipsn8.so.0" and "ld-uClibc.so.0" are
    dynamic loaders, not libc-mipsn8.so.0 and libc.so.0; "-l:libunwind.so" is a linker argument. A name merged
    into the tail of another string ("xlibm.so") is still found."""
    data = b"\x00ld-uClibc-mipsn8.so.0\x00ld-uClibc.so.0\x00-l:libunwind.so\x00xlibm.so\x00libz.so.1\x00"
    assert list(_soname_matches(data, 0, len(data))) == [b"libm.so", b"libz.so.1"]


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
    """A Requires-Dist line is input: 3,000 nested parentheses once raised RecursionError in packaging, in the
    audit's reading and in compat's."""
    name = required_name(line)
    assert name is None or name == name.lower()
    assert set(installed_requirements((line,))) <= {name}
    declared = declared_requirements(Distribution("d", "1.0", "d.whl", requires=(line,)), marker_environment([], None))
    assert [d.key for d in declared] in ([], [name])


_ROW_TEXT = st.text(alphabet=st.sampled_from(["a", ",", '"', "\r", "\n", " ", "=", "\u2028", "\u00e9"]), max_size=8)


@given(st.lists(st.tuples(_ROW_TEXT.filter(bool), _ROW_TEXT, _ROW_TEXT), max_size=6))
def test_record_reads_back_what_it_writes(rows):
    """Any member name (a carriage return in one was left unquoted once) survives RECORD both ways."""
    assert record_rows(render_record(rows).decode("utf-8")) == rows
