"""Progress: the scanner reports it through a callback (library code draws nothing); the CLI draws a bar on
stderr only when stderr is a terminal and the format is text. Checked under a real pseudo-terminal."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import zipfile

import pytest

from tests.fixtures.sources import extension_source
from tests.fixtures.wheels import build_wheel
from tests.helpers import run_cli
from wheelcheck.wheel import scanner as scan
from wheelcheck.wheel.scanner import scan_wheel

MEMBERS = 48


@pytest.fixture(scope="module")
def many_elves(build, tmp_path_factory):
    """A wheel with MEMBERS small extension modules (distinct files: each has its own module name)."""
    members = {}
    for i in range(MEMBERS):
        members[f"pkg/m{i}.cpython-311-x86_64-linux-gnu.so"] = build.compile_c(extension_source(f"m{i}"), f"m{i}.so")
    return build_wheel(tmp_path_factory.mktemp("many"), "many", "1.0", "cp311-cp311-linux_x86_64", members)


def elf_bytes(wheel) -> int:
    with zipfile.ZipFile(wheel) as zf:
        return sum(i.file_size for i in zf.infolist() if i.filename.endswith(".so"))


@pytest.mark.parametrize("jobs", [1, 2])
def test_scanner_reports_progress(many_elves, jobs):
    calls = []
    model = scan_wheel(many_elves, jobs=jobs, progress=lambda done, total: calls.append((done, total)))
    total = elf_bytes(many_elves)
    assert len(model.elves) == MEMBERS
    assert calls[0] == (0, total) and calls[-1] == (total, total)
    assert all(t == total for _, t in calls) and [d for d, _ in calls] == sorted(d for d, _ in calls)
    # progress moves in steps, not one jump: once per member at least, serial or on threads
    assert len(calls) == MEMBERS + 1


@pytest.mark.parametrize("jobs", [1, 2])
def test_progress_moves_within_a_large_member(build, tmp_path, jobs):
    """A member bigger than a progress step reports along the way, not only when it ends."""
    big = tmp_path / "m0.cpython-311-x86_64-linux-gnu.so"
    small = build.compile_c(extension_source("m0"), "m0.so").read_bytes()
    big.write_bytes(small + bytes(2 * scan.PROGRESS_STEP))  # bytes after the last segment: still the same ELF
    wheel = build_wheel(tmp_path, "big", "1.0", "cp311-cp311-linux_x86_64", {f"pkg/{big.name}": big})
    calls = []
    model = scan_wheel(wheel, jobs=jobs, progress=lambda done, total: calls.append(done))
    assert model.elves[0].python_init == "PyInit_m0"
    assert len(calls) >= 4 and calls == sorted(calls) and calls[-1] == len(small) + 2 * scan.PROGRESS_STEP


def run_in_pty(*args: str) -> tuple[int, str]:
    """Run the CLI with stdin, stdout and stderr on a pseudo-terminal; return its exit status and all it wrote."""
    leader, follower = pty.openpty()
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120"}
    for name in ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "CI"):
        env.pop(name, None)
    proc = subprocess.Popen([sys.executable, "-m", "wheelcheck", *args], stdin=follower, stdout=follower,
                            stderr=follower, env=env, close_fds=True)
    os.close(follower)
    chunks = []
    while True:
        ready, _, _ = select.select([leader], [], [], 60)
        if not ready:
            break
        try:
            data = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    return proc.wait(timeout=60), b"".join(chunks).decode("utf-8", "replace")


def test_bar_on_a_terminal(many_elves):
    code, screen = run_in_pty("audit", "--any-platform-tag", str(many_elves))
    assert code == 0, screen
    assert f"reading {many_elves.name}" in screen and "━" in screen  # rich's bar, drawn then erased
    assert f"{many_elves.name}: PASS" in screen


@pytest.mark.parametrize("args", [("--format", "json"), ("--format", "sarif"), ("-q",)])
def test_no_bar_for_machine_formats_even_on_a_terminal(many_elves, args):
    code, screen = run_in_pty("audit", "--any-platform-tag", str(many_elves), *args)
    assert code == 0 and "reading " not in screen and "━" not in screen


def test_nothing_extra_when_piped(many_elves):
    proc = run_cli("audit", "--any-platform-tag", many_elves)
    assert proc.returncode == 0 and proc.stderr == ""
    assert "\x1b" not in proc.stdout and "reading" not in proc.stdout
    assert proc.stdout.startswith(f"{many_elves.name}: PASS deserves ")
