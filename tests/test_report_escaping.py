"""Names from the input are shown in every report, never obeyed (docs/hostile-input.md, "Reports").

The wheels are built here: an extension that needs two libraries whose sonames hold a line break, a
Markdown heading, terminal escapes, a carriage return, table pipes, backquotes, an image and GitHub
workflow commands (``::add-mask::`` at the start of a line, ``##[add-mask]`` anywhere), and that sits
at member names holding the same. Each report must keep every such name on its own line, with no
escape sequence, no workflow command, no extra table cell, heading, link, image or HTML.
"""

from __future__ import annotations

import json
import re
import shutil
import zipfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from tests.fixtures.wheels import build_wheel
from tests.helpers import run_cli
from wheelcheck.errors import one_line
from wheelcheck.report.escaping import md_code, md_text, sarif_text, text_line

HEADING = "\n## \u2705 every wheel passes\n"
SONAME_A = f"libh{HEADING}::add-mask::FAIL\x1b[2K\r|a|`b`![x]##[add-mask]FAIL.so"
SONAME_B = "::add-mask::FAIL\x1b[2K.so"
MEMBER_A = "::add-mask::FAIL/_m.so"  # a list of files under a finding starts its line with it
MEMBER_B = "pkg/|a|`b`![x](http://evil.example/i.png)##[add-mask]FAIL <img src=x onerror=alert(1)>.so"
TAG = "cp311-cp311-manylinux_2_17_x86_64"

# C0 and C1 controls but the line feed between lines, and Unicode's line separators
CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029]")


@pytest.fixture(scope="module")
def hostile(build, tmp_path_factory) -> dict[str, Path]:
    """The hostile wheel, a second one like it (for conflicts), and a directory holding the two libraries."""
    root = tmp_path_factory.mktemp("hostile")
    lib_a = build.compile_c("int f(void) { return 1; }\n", SONAME_A, flags=(f"-Wl,-soname,{SONAME_A}",))
    lib_b = build.compile_c("int f2(void) { return 2; }\n", SONAME_B, flags=(f"-Wl,-soname,{SONAME_B}",))
    ext = build.compile_c("extern int f(void); extern int f2(void);\nint g(void) { return f() + f2(); }\n",
                          "hostile_ext.so", libs=(lib_a, lib_b))
    libs = root / "libs"
    libs.mkdir()
    for i, lib in enumerate((lib_a, lib_b)):  # repair grafts no file whose own name holds control characters:
        shutil.copy(lib, libs / f"libreal{i}.so")  # the hostile sonames are links to plain files, as a
        (libs / lib.name).symlink_to(f"libreal{i}.so")  # distribution's libfoo.so.1 links to libfoo.so.1.2
    members = {MEMBER_A: ext, MEMBER_B: ext, "pkg/__init__.py": b""}
    return {"wheel": build_wheel(root / "dist", "hostile", "1.0", TAG, members),
            "twin": build_wheel(root / "twin", "hostile_twin", "1.0", TAG, members), "libs": libs}


def assert_inert_text(out: str) -> None:
    """Every line is one the tool made: no control character, no workflow command, no heading of a name's."""
    assert "every wheel passes" in out, "the hostile names should be in the report"
    assert not CONTROL.search(out), repr(CONTROL.search(out))
    for line in out.split("\n"):
        assert not line.lstrip().startswith("::"), line
        assert "##[" not in line, line
        assert not line.startswith("## "), line
    assert "\\n## \u2705 every wheel" in out  # the name is there, its line breaks escaped (show wraps after)


# -- text -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("verbosity", [[], ["-v"], ["-vv"]])
def test_audit_text(hostile, verbosity):
    proc = run_cli("audit", *verbosity, hostile["wheel"], hostile["twin"])
    assert proc.returncode == 1, proc.stderr
    assert_inert_text(proc.stdout)


def test_repair_text(hostile, tmp_path):
    proc = run_cli("repair", "-v", "--lib-path", hostile["libs"], "-w", tmp_path, hostile["wheel"])
    assert proc.returncode == 0, proc.stderr
    assert "REPAIRED" in proc.stdout
    assert_inert_text(proc.stdout)


@pytest.mark.parametrize("verbosity", [[], ["-v"]])
def test_show_text(hostile, verbosity):
    proc = run_cli("show", *verbosity, hostile["wheel"])
    assert proc.returncode == 0, proc.stderr
    assert_inert_text(proc.stdout)


def test_compat_and_conflicts_text(hostile):
    compat = run_cli("compat", "-v", hostile["wheel"])
    assert compat.returncode in (0, 1, 2) and not compat.stderr, compat.stderr  # 2: cannot tell
    assert_inert_text(compat.stdout)
    conflicts = run_cli("conflicts", "-vv", hostile["wheel"], hostile["twin"])
    assert conflicts.returncode in (0, 1), conflicts.stderr
    assert "##[" not in conflicts.stdout and not CONTROL.search(conflicts.stdout)
    assert not [line for line in conflicts.stdout.split("\n") if line.lstrip().startswith("::")]


# -- Markdown (the GitHub job summary) ---------------------------------------------------------------------


def gfm(text: str):
    """The tokens GitHub's Markdown (CommonMark, tables, raw HTML allowed) makes of ``text``."""
    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"]).parse(text)


def assert_inert_markdown(text: str, wheels: int) -> None:
    tokens = gfm(text)
    inline = [child for t in tokens if t.type == "inline" for child in t.children or ()]
    assert not [t for t in tokens + inline if t.type in ("html_block", "html_inline", "image", "link_open")]
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert len(headings) == 1 + wheels and headings[0] == "wheelcheck audit", headings
    cells: list[int] = []
    for t in tokens:  # every row of a table has its header's cells
        if t.type == "table_open":
            cells.append(-1)
        elif t.type == "tr_open":
            cells.append(0)
        elif t.type in ("th_open", "td_open"):
            cells[-1] += 1
        elif t.type == "table_close":
            row_cells = cells[cells.index(-1) + 1:] if -1 in cells else cells
            assert len(set(row_cells)) == 1, row_cells
            cells = []
    # a URL outside a code span would be linked by GitHub (autolinks): every one is inside a span
    spans = [t.content for t in inline if t.type == "code_inline"]
    assert text.count("http://") == sum(s.count("http://") for s in spans)
    assert "every wheel passes" in text and not CONTROL.search(text)
    for line in text.split("\n"):
        assert not line.lstrip().startswith("::") and "##[" not in line, line


def test_markdown_summary(hostile, tmp_path):
    """What the GitHub Action appends to $GITHUB_STEP_SUMMARY (--report markdown:FILE), and --format markdown."""
    summary = tmp_path / "summary.md"
    proc = run_cli("audit", "--report", f"markdown:{summary}", "--format", "markdown", hostile["wheel"],
                   hostile["twin"])
    assert proc.returncode == 1, proc.stderr
    assert summary.read_text() == proc.stdout
    assert_inert_markdown(proc.stdout, wheels=2)
    # the names are all there, as they are: in code spans, or as text when they hold "##["
    inline = [c for t in gfm(proc.stdout) if t.type == "inline" for c in t.children or ()]
    assert one_line(MEMBER_A) in [c.content for c in inline if c.type == "code_inline"]
    assert one_line(MEMBER_B) in "".join(c.content for c in inline)


# -- SARIF and JSON ----------------------------------------------------------------------------------------


def unescaped_brackets(text: str) -> list[int]:
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] in "[]":
            out.append(i)
        i += 1
    return out


def test_sarif_message_text(hostile):
    proc = run_cli("audit", "--format", "sarif", hostile["wheel"])
    assert proc.returncode == 1, proc.stderr
    assert "##[" not in proc.stdout
    results = json.loads(proc.stdout)["runs"][0]["results"]
    texts = [r["message"]["text"] for r in results]
    assert any("every wheel passes" in t for t in texts)
    for text in texts:  # a bracket SARIF viewers would read as an embedded link
        assert not unescaped_brackets(text) and not CONTROL.search(text), text


def test_json_keeps_names_exact(hostile):
    proc = run_cli("audit", "--format", "json", hostile["wheel"])
    assert proc.returncode == 1, proc.stderr
    assert "##[" not in proc.stdout
    files = {f["file"] for w in json.loads(proc.stdout)["wheels"] for f in w["findings"]}
    assert {MEMBER_A, MEMBER_B} <= files


# -- member names with control characters ----------------------------------------------------------------


def test_member_names_with_control_characters(build, tmp_path):
    """A member named with a line break and terminal escapes: a report that shows it escaped, or an error
    line that does (whichever the wheel reader makes of such a name)."""
    dep = build.compile_c("int dep(void) { return 1; }\n", "libctldep.so", flags=("-Wl,-soname,libctldep.so",))
    ext = build.compile_c("extern int dep(void);\nint g(void) { return dep(); }\n", "ctl_ext.so", libs=(dep,))
    name = f"pkg/a{HEADING}::add-mask::FAIL\x1b[2K\rb.so"
    wheel = build_wheel(tmp_path, "ctl", "1.0", TAG, {name: ext})
    with zipfile.ZipFile(wheel) as zf:
        assert name in zf.namelist()
    for args in ([], ["-vv"], ["--format", "markdown"]):
        proc = run_cli("audit", *args, wheel)
        if proc.returncode == 2:
            assert len(proc.stderr.splitlines()) == 1 and "\\x1b" in proc.stderr
            continue
        if "markdown" in args:
            assert not CONTROL.search(proc.stdout) and "##[" not in proc.stdout
            assert len(proc.stdout.split("\n")) == len(proc.stdout.splitlines()) + 1  # no \r, \x85 ... within lines
        else:
            assert not CONTROL.search(proc.stdout)
            assert not [line for line in proc.stdout.split("\n") if line.lstrip().startswith(("::", "## "))]


# -- the helpers ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("line, shown", [
    ("  ::add-mask::x", "  \\x3a:add-mask::x"),
    ("::error::x", "\\x3a:error::x"),
    ("\u3000::x", "\u3000\\x3a:x"),  # the runner trims Unicode spaces too
    ("a ##[add-mask]x", "a #\\x23[add-mask]x"),
    ("a ###[b", "a ##\\x23[b"),
    ("a\nb\x1b[2K\rc", "a\\nb\\x1b[2K\\rc"),
    ("std::string a::b", "std::string a::b"),
])
def test_text_line(line, shown):
    assert text_line(line) == shown


def _markdown_text(markdown: str) -> str:
    """What a reader sees of ``markdown`` in a paragraph: the text of its inline tokens."""
    (para,) = [t for t in gfm(markdown) if t.type == "inline"]
    kinds = {t.type for t in para.children or ()}
    assert kinds <= {"text", "code_inline", "softbreak"}, kinds
    return "".join(t.content for t in para.children or ())


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1))
def test_md_text_shows_the_text(text):
    if not one_line(text).strip():
        return  # nothing but spaces: Markdown drops them
    shown = _markdown_text("x " + md_text(text) + " x")
    assert shown == "x " + one_line(text) + " x" or shown.split() == ("x " + one_line(text) + " x").split()


@pytest.mark.parametrize("name", ["a`b", "``x", "x``", "a ``` b", "`", " a ", "a|b", "![x](y)", "<img src=x>"])
def test_md_code_shows_the_name(name):
    span = md_code(name, in_table=False)
    (token,) = [t for t in gfm("x " + span + " x")[1].children or () if t.type == "code_inline"]
    assert token.content == name


def test_md_code_in_a_table_cell():
    rows = "| a | b |\n|---|---|\n| " + md_code("x|y`|z") + " | " + md_text("p|q") + " |\n"
    tokens = gfm(rows)
    assert [t.type for t in tokens].count("td_open") == 2
    code = [c for t in tokens if t.type == "inline" for c in t.children or () if c.type == "code_inline"]
    assert [c.content for c in code] == ["x|y`|z"]


def test_sarif_text_escapes_brackets():
    """A viewer unescapes ``\\`` and ``\\[``: it shows ``[a](1) \\ b\\n``, one line and no link."""
    assert sarif_text("[a](1) \\ b\n") == r"\[a\](1) \\ b\\n"
