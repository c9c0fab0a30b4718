"""What a person meets at the command line: help as written, errors said once and plainly, repair's word
for a wheel it did not change, report files with the usual permissions."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from tests.fixtures.wheels import not_a_zip
from tests.helpers import ROOT, run_cli, run_cli_process
from wheelcheck.cli import app

SAMPLE = ROOT / "samples" / "demo_ext-1.0-cp311-cp311-linux_x86_64.whl"
TAGGED = ROOT / "samples" / "demo_ext-1.0-cp311-cp311-manylinux_2_31_x86_64.whl"  # the tag it deserves: passes


def _commands(group, path: tuple[str, ...] = ()):
    """Every (command path, command) of the click tree typer builds (typer carries its own click)."""
    for name, command in group.commands.items():
        yield (*path, name), command
        if hasattr(command, "commands"):
            yield from _commands(command, (*path, name))


COMMANDS = list(_commands(typer.main.get_command(app)))


def _squeezed(text: str) -> str:
    return "".join(text.split())  # wrapping may break a line anywhere whitespace is


@pytest.mark.parametrize("path, command", COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_help_shows_what_the_source_says(path, command):
    result = CliRunner().invoke(app, [*path, "--help"], prog_name="wheelcheck")
    assert result.exit_code == 0, result.output
    shown = _squeezed(result.output)
    written = [command.help or ""] + [p.help for p in command.params if getattr(p, "help", None)]
    for text in written:
        assert _squeezed(text) in shown, f"{' '.join(path)} --help lost part of: {text!r}"


def test_bracketed_help_is_among_those_checked():
    """The case that used to be swallowed: '[tool.wheelcheck]' reads as markup to rich."""
    helps = [p.help for _, c in COMMANDS for p in c.params if getattr(p, "help", None)]
    assert any("[tool.wheelcheck]" in h for h in helps)
    result = CliRunner().invoke(app, ["audit", "--help"], prog_name="wheelcheck")
    assert "[tool.wheelcheck]" in result.output


@pytest.mark.parametrize("command", ["audit", "repair"])
def test_missing_file_says_no_such_file(command, tmp_path):
    missing = tmp_path / "nowhere" / "foo.whl"  # not even a wheel's name: the missing file is the news
    proc = run_cli(command, missing, *(["-w", tmp_path / "out"] if command == "repair" else []))
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == f"wheelcheck: error: {missing}: no such file\n"


@pytest.mark.parametrize("command, fmt", [("audit", "text"), ("audit", "json"), ("repair", "text"),
                                          ("repair", "json")])
def test_an_error_is_printed_once(command, fmt, tmp_path):
    bad = not_a_zip(tmp_path)
    args = [command, bad, SAMPLE, "--format", fmt] + (["-w", tmp_path / "out"] if command == "repair" else [])
    proc = run_cli(*args)
    assert proc.returncode == 2
    assert len(proc.stderr.splitlines()) == 1 and proc.stderr.startswith(f"wheelcheck: error: {bad}: ")
    problem = proc.stderr.split(f"{bad}: ", 1)[1].strip()
    if fmt == "text":
        assert problem not in proc.stdout and SAMPLE.name in proc.stdout  # the other wheel is still reported
    else:  # the document keeps it, for machines; the person reads it once, on stderr
        doc = json.loads(proc.stdout)
        assert any(problem in json.dumps(w) for w in doc["wheels"])


def test_repair_says_unchanged_when_nothing_changed(tmp_path):
    first = run_cli("repair", SAMPLE, "-w", tmp_path / "one")
    assert first.returncode == 0 and "REPAIRED" in first.stdout and "UNCHANGED" not in first.stdout
    (repaired,) = (tmp_path / "one").glob("*.whl")
    again = run_cli("repair", repaired, "-w", tmp_path / "two")
    assert again.returncode == 0 and "REPAIRED" not in again.stdout
    assert again.stdout.startswith(f"{repaired.name}: UNCHANGED manylinux_2_31_x86_64 -> ")
    assert (tmp_path / "two" / repaired.name).read_bytes() == repaired.read_bytes()
    doc = json.loads(run_cli("repair", repaired, "-w", tmp_path / "three", "--format", "json").stdout)
    assert doc["wheels"][0]["unchanged"] is True and doc["wheels"][0]["status"] == "repaired"
    doc = json.loads(run_cli("repair", SAMPLE, "-w", tmp_path / "four", "--format", "json").stdout)
    assert doc["wheels"][0]["unchanged"] is False


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o027, 0o640)])
def test_report_files_get_the_usual_permissions(tmp_path, umask, mode):
    outputs = [tmp_path / "report.txt", tmp_path / "report.json", tmp_path / "report.sarif"]
    runs = [["audit", TAGGED, "--output", outputs[0], "--report", f"json:{outputs[1]}",
             "--report", f"sarif:{outputs[2]}"],
            ["conflicts", SAMPLE, "--format", "json", "--output", tmp_path / "conflicts.json"]]
    for args in runs:
        proc = subprocess.run([sys.executable, "-m", "wheelcheck", *map(str, args)], capture_output=True, text=True,
                              preexec_fn=lambda: os.umask(umask), timeout=300)
        assert proc.returncode == 0, proc.stderr
    for path in [*outputs, tmp_path / "conflicts.json"]:
        assert stat.S_IMODE(path.stat().st_mode) == mode, path
    assert outputs[0].read_text().startswith(f"{TAGGED.name}: PASS deserves manylinux_2_31_x86_64")
    assert not [p for p in Path(tmp_path).iterdir() if p.name.startswith(".")]  # no temporary file left


def _all_command_paths() -> list[tuple[str, ...]]:
    return [path for path, _command in _commands(typer.main.get_command(app))]


@pytest.mark.parametrize("args", [[*path, "--help"] for path in _all_command_paths()]
                         + [["-v", "audit", "--help"], ["--help"], ["audti", "x"], ["--version"]])
def test_the_console_script_builds_only_the_command_run(args):
    """main() registers only the command named (start-up): every command's help, a typo and the root's own
    options read exactly as the whole app says them."""
    from wheelcheck.cli import only_the_command

    runner = CliRunner()
    whole = runner.invoke(app, args, prog_name="wheelcheck")
    narrow_app = only_the_command(app, args)
    narrow = runner.invoke(narrow_app, args, prog_name="wheelcheck")
    assert (narrow.exit_code, narrow.output) == (whole.exit_code, whole.output)
    if args[0] in ("audit", "policy"):
        assert narrow_app is not app and len(narrow_app.registered_commands) + len(narrow_app.registered_groups) == 1


def test_the_console_script_runs_the_command(monkeypatch, capsys):
    from wheelcheck import cli

    monkeypatch.setattr(sys, "argv", ["wheelcheck", "audit", "--format", "json", str(TAGGED)])
    with pytest.raises(SystemExit) as exit_:
        cli.main()
    assert exit_.value.code == 0  # tagged manylinux_2_31_x86_64, which it meets
    assert json.loads(capsys.readouterr().out)["wheels"][0]["filename"] == TAGGED.name


@pytest.mark.parametrize("forced", [False, True])
def test_report_lines_are_written_as_they_are(monkeypatch, capsys, forced):
    """Into a pipe the text is written plain (rich is not even loaded); where rich draws (a terminal, or
    FORCE_COLOR), emoji codes in the input's names stay as written."""
    from wheelcheck.cli import common as cli
    from wheelcheck.report.text_lines import Line, as_text

    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    if forced:
        monkeypatch.setenv("FORCE_COLOR", "1")
    else:
        monkeypatch.delenv("FORCE_COLOR", raising=False)
    lines = [Line("pkg/:snake:.so: exports 3 symbols", "yellow"), Line("  why: [bold]not markup[/bold]", "dim")]
    cli._print_lines(lines)
    out = capsys.readouterr().out
    if forced:
        assert ":snake:" in out and "[bold]not markup[/bold]" in out and "\x1b[" in out
    else:
        assert out == as_text(lines)


def test_audit_json_is_format_json():
    """auditwheel users type `--json` (auditwheel show --json): the same report as --format json."""
    by_flag, by_format = run_cli("audit", "--json", SAMPLE), run_cli("audit", "--format", "json", SAMPLE)
    assert by_flag.returncode == by_format.returncode
    def untimed(value):  # the time taken differs from run to run
        if isinstance(value, dict):
            return {k: untimed(v) for k, v in value.items() if k != "seconds"}
        return [untimed(v) for v in value] if isinstance(value, list) else value

    first, second = untimed(json.loads(by_flag.stdout)), untimed(json.loads(by_format.stdout))
    assert first == second and first["wheels"][0]["filename"] == SAMPLE.name
    both = run_cli("audit", "--json", "--format", "sarif", SAMPLE)
    assert both.returncode == 2 and "--json and --format sarif ask for two formats" in both.stderr


@pytest.mark.parametrize("args, said", [
    (["audit", "--badflag", "x.whl"], "wheelcheck audit: No such option: --badflag (see 'wheelcheck audit --help')"),
    (["audti", "x.whl"], "wheelcheck: No such command 'audti'. Did you mean 'audit'?"),
    (["audit", "--fail-on", "fatal", "x.whl"], "Invalid value for '--fail-on'"),
    (["repair"], "wheelcheck repair: Missing argument"),
])
def test_usage_errors_take_one_line(args, said):
    proc = run_cli_process(*args)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("wheelcheck: error: ") and said in proc.stderr


def test_one_flag_vocabulary_across_commands(tmp_path):
    """-o/--output and -q/--quiet mean the same wherever a command writes a report."""
    out = tmp_path / "r.txt"
    assert run_cli("audit", TAGGED, "-o", out).returncode == 0 and out.read_text().startswith(TAGGED.name)
    for command in (["conflicts", TAGGED, TAGGED], ["compat", TAGGED]):
        out = tmp_path / f"{command[0]}.txt"
        proc = run_cli(*command, "-o", out)
        assert out.exists(), proc.stderr
        quiet = run_cli(*command, "-q")
        assert quiet.stdout.strip() and len(quiet.stdout.strip().splitlines()) <= len(out.read_text().splitlines())
    quiet = run_cli("sbom", "--format", "table", "-q", SAMPLE)
    assert quiet.stdout.strip().splitlines() == [f"{SAMPLE.name}: 0 third-party components"]
