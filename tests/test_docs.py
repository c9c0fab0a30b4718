"""The generated reference pages match the code (docs/cli.md, docs/json-report.md), and the docs link to
pages that exist."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from tests.helpers import ROOT, run_cli


def test_generated_pages_are_in_sync():
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_docs.py"), "--check"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_cli_reference_names_every_command_and_option():
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    listing = run_cli("--help").stdout
    for command in ("audit", "show", "config", "rules", "policy"):
        assert command in listing and f"## wheelcheck {command}" in page
    audit_help = subprocess.run([sys.executable, "-m", "wheelcheck", "audit", "--help"], capture_output=True,
                                text=True, env={**os.environ, "COLUMNS": "250", "TERMINAL_WIDTH": "250"}).stdout
    for option in re.findall(r"`(--[a-z-]+)`", page.split("## wheelcheck audit")[1].split("\n## ")[0]):
        assert option in audit_help, option  # every documented option is one the command takes


def test_doc_links_resolve():
    pages = [ROOT / "README.md", ROOT / "docker" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for page in pages:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            assert (page.parent / target).exists(), f"{page.relative_to(ROOT)} links to missing {target}"


def test_readme_first_screen():
    """The README shows the audit command, its real output on the sample wheel, and the cibuildwheel line."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first_screen = "\n".join(readme.splitlines()[:40])
    command = "wheelcheck audit -v samples/demo_ext-1.0-cp311-cp311-manylinux_2_31_x86_64.whl"
    assert command in first_screen
    shown = first_screen.split("```text\n", 1)[1].split("```", 1)[0]
    proc = run_cli(*command.split()[1:], cwd=ROOT)
    seconds = re.compile(r"audited in [0-9.]+ s")  # the one figure that changes from run to run
    assert proc.returncode == 0 and seconds.sub("", proc.stdout) == seconds.sub("", shown)
    assert 'repair-wheel-command = "wheelcheck repair -w {dest_dir} {wheel}"' in first_screen


def test_one_flag_vocabulary_across_commands():
    """A short flag is the same long option on every command, takes the same kind of value, and --env always
    takes a PYTHON; a flag that several commands take is in docs/cli.md's table."""
    sys.path.insert(0, str(ROOT / "tools"))
    import gen_docs

    commands = [(path, cb) for path, cb in gen_docs._commands(gen_docs.app, "wheelcheck") if path != "wheelcheck"]
    meaning: dict[str, set[tuple]] = {}
    for path, callback in commands:
        for p in gen_docs._params(callback):
            if p["argument"]:
                continue
            for decl in p["decls"]:
                kind = "count" if p["value"].startswith("flag (") else "flag" if p["value"] == "flag" else "value"
                meaning.setdefault(decl, set()).add((tuple(p["decls"]), kind))
                if decl == "--env":
                    assert p["value"].startswith("`PYTHON`"), (path, p["value"])
    for short in ("-o", "-q", "-v"):
        assert len(meaning[short]) == 1, (short, meaning[short])
    assert meaning["-q"] == {(("-q", "--quiet"), "flag")} and meaning["-v"] == {(("-v", "--verbose"), "count")}
    table = gen_docs.flags_by_command(commands)
    assert {"-o/--output", "-q/--quiet", "--env"} <= table["wheelcheck conflicts"]
    assert {"-o/--output", "-q/--quiet", "--env"} <= table["wheelcheck compat"]
    assert {"-o/--output", "-q/--quiet"} <= table["wheelcheck audit"] & table["wheelcheck sbom"]


def _doc_figures():
    sys.path.insert(0, str(ROOT / "tools"))
    import doc_figures

    return doc_figures


def test_the_differential_figures_add_up_and_name_rows_that_exist():
    """corpus/differential-summary.json, which README.md and docs/differences.md quote: every compared wheel is
    counted once, the run covers no more wheels than the listing pins, and each by-design FAIL names a row."""
    figures = _doc_figures()
    s = figures.differential_summary()
    assert s["agree"] + s["auditwheel_failed"] + s["documented"] + s["unexplained"] == s["compared"]
    assert s["compared"] + s["skipped"] <= figures.pinned_wheels()
    assert len(s["fails_by_design"]) <= s["documented"]
    anchors = set(re.findall(r'<a id="([^"]+)"></a>', (ROOT / "docs" / "differences.md").read_text(encoding="utf-8")))
    assert {row for f in s["fails_by_design"] for row in f["rows"]} <= anchors


def test_figures_from_data_are_written_only_by_the_generator():
    """The differential's counts appear in README.md and docs/ only inside generated blocks, and every block names
    a figure the generator knows."""
    figures = _doc_figures()
    s = figures.differential_summary()
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        assert set(figures.names_blocks(text)) <= set(figures.BLOCKS), page.name
        outside = figures.BLOCK.sub("", text)
        for count in (s["compared"], s["agree"]):
            assert not re.search(rf"\b{count}\b", outside), f"{page.name} gives {count} by hand"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert {"differential", "policies", "report-screen"} <= set(figures.names_blocks(readme))


def test_a_block_the_generator_does_not_know_is_an_error():
    figures = _doc_figures()
    try:
        figures.fill("a <!-- generated: no-such-figure -->x<!-- end --> b", "docs/x.md")
    except SystemExit as exc:
        assert "docs/x.md" in str(exc) and "no-such-figure" in str(exc)
    else:
        raise AssertionError("an unknown block was filled")
