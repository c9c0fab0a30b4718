"""One test per way hostile input once broke wheelcheck (issue 12), each run as a user runs it: ``python -m
wheelcheck`` in a subprocess under RLIMIT_AS and RLIMIT_CPU (5 s). Before the fixes these raised (exit 1,
a traceback), allocated the size a header claimed (MemoryError under the limit) or ran for minutes
(killed by the CPU limit); now each is a verdict or one line on stderr, exit 2, naming the file.

The inputs are the fuzzer's named shapes (tests/fuzz/shapes.py) applied to real libraries built here.
"""
from __future__ import annotations

import pickle
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.fuzz.bounded import limits_preexec_args
from tests.fuzz.elfcraft import ElfLayout
from tests.fuzz.seeds import build_seeds
from tests.fuzz.shapes import DIST, base_wheel, elf_shapes, wheel_bytes, wheel_name, zip_shapes
from tests.fuzz.zipcraft import assemble, stored_member
from wheelcheck.errors import BadElfError, BadWheelError, RepairError, UsageError

MEMORY = 512 << 20  # a plain audit needs under 256 MiB of address space; a 1 GiB claim cannot fit
CPU_SECONDS = 5


def wheelcheck(*args, cwd: Path, memory: int = MEMORY) -> subprocess.CompletedProcess:
    """``python -m wheelcheck ARGS`` under the memory and CPU limits."""
    command = [*limits_preexec_args(CPU_SECONDS, memory), sys.executable, "-m", "wheelcheck", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, timeout=120)


def assert_one_line_error(proc: subprocess.CompletedProcess, *expected: str) -> str:
    assert proc.returncode != -signal.SIGXCPU and proc.returncode != -signal.SIGKILL, "killed by the CPU limit"
    assert "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr, proc.stderr[-3000:]
    assert proc.returncode == 2, f"exit {proc.returncode}\n{proc.stderr[-3000:]}"
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    for text in expected:
        assert text in lines[0], lines[0]
    return lines[0]


def assert_verdict(proc: subprocess.CompletedProcess) -> None:
    assert proc.returncode in (0, 1), f"exit {proc.returncode}\n{proc.stderr[-3000:]}"
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]


@pytest.fixture(scope="module")
def seeds(build):
    return build_seeds(build, {"host": None})


@pytest.fixture(scope="module")
def shape(seeds):
    """shape(name) -> the bytes of a wheel around the host seed with that named zip shape applied."""
    base = base_wheel(seeds["host"])
    named = dict(zip_shapes())
    return lambda name: named[name](base)


def elf_wheel(seed: bytes, shape_name: str) -> bytes:
    out = bytearray(seed)
    assert dict(elf_shapes())[shape_name](ElfLayout(seed), out), shape_name
    return wheel_bytes(bytes(out))


def write(tmp_path: Path, data: bytes, name: str | None = None) -> Path:
    path = tmp_path / (name or wheel_name())
    path.write_bytes(data)
    return path


# -- an unexpected exception: exit 2 and one line that calls it a bug, for every command ---------------------

READER = ("wheelcheck.wheel.wheel_reader", "WheelReader")  # what every command that reads a wheel opens
GUARDED = {  # command line -> what it calls, made to raise
    "audit": (["audit", "x.whl"], *READER),
    "show": (["show", "x.whl"], *READER),
    "conflicts": (["conflicts", "x.whl", "y.whl"], *READER),
    "repair": (["repair", "x.whl"], *READER),
    "compat": (["compat", "x.whl"], *READER),
    "abi": (["abi", "x.whl"], *READER),
    "policy list": (["policy", "list"], "wheelcheck.cli.policy_commands", "_authored_policies"),
    "policy show": (["policy", "show", "manylinux_2_17"], "wheelcheck.cli.policy_commands", "_authored_policies"),
    "policy validate": (["policy", "validate"], "wheelcheck.policy.validate", "validate_texts"),
    "policy diff": (["policy", "diff", "manylinux_2_17", "manylinux_2_28"], "wheelcheck.policy.policy_loader",
                    "policy_by_reference"),
    "policy derive": (["policy", "derive", "--root", "."], "wheelcheck.policy.derive", "derive_policy"),
    "config": (["config"], "wheelcheck.cli.inspect_commands", "_settings"),
    "rules": (["rules"], "wheelcheck.report.rules_doc", "render_index_text"),
}


@pytest.mark.parametrize("command", sorted(GUARDED))
def test_unexpected_exception_is_exit_2_and_one_line(command, tmp_path):
    """Exit 1 means "a wheel fails its policy": a crash must never look like that in CI."""
    argv, module, function = GUARDED[command]
    script = textwrap.dedent(f"""
        import importlib, sys
        def broken(*args, **kwargs):
            raise RuntimeError("injected fault\\nwith a second line")
        module = importlib.import_module({module!r})
        if isinstance(getattr(module, {function!r}), type):  # a class: its constructor raises
            getattr(module, {function!r}).__init__ = broken
        else:
            setattr(module, {function!r}, broken)
        from wheelcheck.cli import main
        sys.argv = ["wheelcheck", *{argv!r}]
        main()
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    line = assert_one_line_error(proc, "internal error", "RuntimeError", "injected fault\\nwith a second line",
                                 "bug in wheelcheck")
    assert "https://" in line


# -- zip reading --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, expected", [
    ("ext:encrypted", "encrypted"),  # was RuntimeError
    ("ext:encrypted-central-only", "encrypted"),
    ("ext:method-14-corrupt", "cannot read member 'fuzz/_ext.so'"),  # was LZMAError
    ("metadata:method-14-corrupt", "METADATA"),
    ("ext:header-offset-9223372036854775808", "cannot read member"),  # zip64 offset too large to seek: ValueError
    ("ext:utf8-flag-bad-bytes-local-only", "cannot read member"),  # name flagged UTF-8 that is not
    ("ext:version-needed-64", "unsupported zip feature"),  # NotImplementedError, over a thousand hits
    ("ext:lzma-4GiB-dictionary", "LZMA dictionary"),  # the decoder would allocate 4 GiB up front
])
def test_zip_reading(shape, tmp_path, name, expected):
    wheel = write(tmp_path, shape(name))
    assert_one_line_error(wheelcheck("audit", wheel, cwd=tmp_path), wheel.name, expected)


@pytest.mark.parametrize("name, expected", [
    ("record:bare-cr", "new-line character"),
    ("record:field-over-csv-limit", "field larger than field limit"),
])
def test_record_rows_csv_refuses(shape, tmp_path, name, expected):
    wheel = write(tmp_path, shape(name))
    assert_one_line_error(wheelcheck("audit", wheel, cwd=tmp_path), wheel.name, "RECORD", "not valid CSV", expected)


def test_deeply_nested_requires_dist_marker(shape, tmp_path):
    """3,000 nested parentheses in a Requires-Dist marker: packaging's parser recursed into RecursionError."""
    wheel = write(tmp_path, shape("metadata:deep-marker"))
    for args in (("audit", "-v"), ("conflicts",)):
        assert_verdict(wheelcheck(*args, wheel, cwd=tmp_path))


# -- memory: a buffer allocated at the declared size ------------------------------------------------------

@pytest.mark.parametrize("claim", [1 << 30, 3 << 30, 8 << 30])
def test_declared_size_costs_nothing(shape, tmp_path, claim):
    """A small wheel whose member claims 1, 3 or 8 GiB (the compressed size padded so the ratio check
    passes) is read with the bytes it holds: under a 512 MiB address-space limit, a clean error."""
    wheel = write(tmp_path, shape(f"ext:declares-{claim}-bytes-ratio-ok"))
    assert wheel.stat().st_size < 1 << 20
    assert_one_line_error(wheelcheck("audit", wheel, cwd=tmp_path), wheel.name, "fuzz/_ext.so")


@pytest.mark.parametrize("shape_name, seed", [
    ("names-overlap-one-long-string", "host"),  # every symbol name one byte into one long string: 700 MB
    ("phdr-flood-note", "host"),  # 4,680 PT_NOTE headers over the whole file, each copied: 1.3 GB
])
def test_tables_cost_what_the_file_holds(seeds, tmp_path, shape_name, seed):
    wheel = write(tmp_path, elf_wheel(seeds[seed], shape_name))
    proc = wheelcheck("audit", wheel, cwd=tmp_path)
    if proc.returncode != 2:
        assert_verdict(proc)
    else:
        assert_one_line_error(proc, wheel.name)


# -- the parallel scan ------------------------------------------------------------------------------------

def _big_wheel(seed: bytes, bad: bytes) -> bytes:
    """Two valid ELF members padded to 9 MB each (streamed on threads at once with --jobs 2), one bad."""
    padded = seed + bytes(9 << 20)
    return wheel_bytes(padded, extra={"fuzz/_two.so": padded, "fuzz/_bad.so": bad})


@pytest.mark.parametrize("error", [BadElfError, BadWheelError, RepairError, UsageError])
def test_errors_pickle_whole(error):
    """What a worker raises comes back through pickle: the same class, path and problem."""
    raised = error("w.whl:pkg/a\nb.so", "truncated ELF file")
    back = pickle.loads(pickle.dumps(raised))
    assert type(back) is error and (back.path, back.problem, str(back)) == (raised.path, raised.problem, str(raised))


def test_bad_member_in_a_parallel_scan_is_its_own_error(seeds, tmp_path):
    """A project error raised in a worker used to come back as BrokenProcessPool (it could not be pickled)."""
    wheel = write(tmp_path, _big_wheel(seeds["host"], seeds["host"][:100]))
    for jobs in ("1", "2"):
        line = assert_one_line_error(wheelcheck("audit", "--jobs", jobs, wheel, cwd=tmp_path), wheel.name,
                                     "fuzz/_bad.so", "truncated")
        assert "BrokenProcessPool" not in line


def test_a_worker_that_dies_is_a_clean_error(seeds, tmp_path):
    """Several wheels are audited on processes: one killed (out of memory, a signal) is one clean error."""
    wheel = write(tmp_path, _big_wheel(seeds["host"], seeds["host"]))
    script = textwrap.dedent(f"""
        import os, signal, sys
        import wheelcheck.api as api
        def killed(*args, **kwargs):
            os.kill(os.getpid(), signal.SIGKILL)
        api.audit_wheel = killed  # what the forked workers run, one wheel each
        from wheelcheck.cli import main
        sys.argv = ["wheelcheck", "audit", "--jobs", "2", {str(wheel)!r}, {str(wheel)!r}]
        main()
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert_one_line_error(proc, wheel.name, "worker process died")


# -- mangled names are input too ----------------------------------------------------------------------------

@pytest.mark.parametrize("seed", ["host-cxx0", "host-cxx1"])
def test_hostile_mangled_exports(seeds, tmp_path, seed):
    """'_Z²Ss' (AttributeError) and '_Z' + 4,301 digits (ValueError) among a C++ library's exports."""
    wheel = write(tmp_path, elf_wheel(seeds[seed], "mangled-hostile-names"))
    for args in (("audit", "-vv"), ("conflicts", "-vv")):
        proc = wheelcheck(*args, wheel, wheel, cwd=tmp_path) if args[0] == "conflicts" else \
            wheelcheck(*args, wheel, cwd=tmp_path)
        assert_verdict(proc)


# -- hangs --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape_name", [
    "verneed-shared-chain",  # many version-need records sharing one chain: millions of visits (87 s)
    "rodata-liblib-run",  # the soname regex backtracked quadratically over "liblib..." (> 60 s)
    "rodata-liblib-run-unterminated",
    "phdr-flood-interp",
])
def test_no_hang(seeds, tmp_path, shape_name):
    wheel = write(tmp_path, elf_wheel(seeds["host"], shape_name))
    proc = wheelcheck("audit", wheel, cwd=tmp_path)
    if proc.returncode == 2:
        assert_one_line_error(proc, wheel.name)
    else:
        assert_verdict(proc)


# -- one line means one line ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["ext-named-0:'a\\nb'", "ext-named-1:'a\\rb'", "ext-named-4:'a\\u2028b'",
                                  "ext-named-3:'\\x1b[31mred'", "dist-info-named-0:'a\\nb'"])
def test_names_in_errors_are_escaped(seeds, tmp_path, name):
    """A member or .dist-info name holding a line break still gives one line (the ELF is cut short so the
    error names the member)."""
    base = base_wheel(seeds["host"][:200])
    wheel = write(tmp_path, dict(zip_shapes())[name](base))
    line = assert_one_line_error(wheelcheck("audit", wheel, cwd=tmp_path), wheel.name)
    assert "\x1b" not in line


def test_repair_writes_a_record_it_can_read(shape, tmp_path):
    """A carriage return in a member name: csv.writer left it unquoted in the new RECORD (found by the
    repair fuzzer), and the repaired wheel could not be read back."""
    wheel = write(tmp_path, shape("ext-named-1:'a\\rb'"))
    proc = wheelcheck("repair", "-w", tmp_path / "out", wheel, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (written,) = (tmp_path / "out").iterdir()
    assert_verdict(wheelcheck("audit", written, cwd=tmp_path))


def test_backslash_in_a_directory_name(build, tmp_path):
    """$ORIGIN was expanded with re.sub and the member's directory as the replacement *template*: a
    directory named ``pkg\\R`` raised re.error ("bad escape \\R") in audit, repair and compat (found by the
    repair fuzzer)."""
    _alpha, beta = build.alpha_beta()
    lib = build.compile_c("extern int beta_value(void);\nint alpha_value(void) { return beta_value(); }\n",
                          "libalpha.so.1", libs=(beta,), flags=("-Wl,-rpath,$ORIGIN/../lib",))
    wheel = write(tmp_path, wheel_bytes(lib.read_bytes(), ext_name="fuzz/a\\Rb/_ext.so"))
    (tmp_path / "libs").mkdir()
    (tmp_path / "libs" / "libbeta.so.1").write_bytes(beta.read_bytes())
    for args in (("audit", "-vv", wheel), ("compat", wheel),
                 ("repair", "-w", tmp_path / "out", "--lib-path", tmp_path / "libs", wheel)):
        proc = wheelcheck(*args, cwd=tmp_path)
        if proc.returncode == 2 and proc.stderr:
            assert_one_line_error(proc, wheel.name)
        elif args[0] == "compat":  # exit 2 with a report: "cannot tell" (the host was not given)
            assert proc.returncode in (0, 1, 2) and "Traceback" not in proc.stderr, proc.stderr
        else:
            assert_verdict(proc)


def test_newline_in_a_member_name_of_repair(seeds, tmp_path):
    archive = base_wheel(seeds["host"][:200])
    archive.members.insert(0, stored_member(f"fuzz/evil\n{DIST}/x.so".encode(), seeds["host"][:64]))
    wheel = write(tmp_path, assemble(archive))
    assert_one_line_error(wheelcheck("repair", "-w", tmp_path / "out", wheel, cwd=tmp_path), wheel.name, "\\n")
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


def test_a_worker_that_dies_reading_an_environment_is_a_clean_error(seeds, tmp_path):
    """conflicts --env reads large environments' ELF files on processes: one killed is one clean error."""
    site = tmp_path / "site-packages"
    (site / "pkg").mkdir(parents=True)
    info = site / "pkg-1.0.dist-info"
    info.mkdir()
    padded = seeds["host"] + bytes(9 << 20)  # two of them pass the 16 MB threshold for processes
    for name in ("_a.so", "_b.so"):
        (site / "pkg" / name).write_bytes(padded)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n")
    (info / "RECORD").write_text("pkg/_a.so,,\npkg/_b.so,,\npkg-1.0.dist-info/METADATA,,\npkg-1.0.dist-info/RECORD,,\n")
    script = textwrap.dedent(f"""
        import multiprocessing, os, signal, sys
        import wheelcheck.conflicts.read_distributions as reading
        summarize = reading._summarize_item
        def killed(item):
            if multiprocessing.parent_process() is not None:  # a forked worker: killed; the parent reads on
                os.kill(os.getpid(), signal.SIGKILL)
            return summarize(item)
        reading._summarize_item = killed
        from wheelcheck.cli import main
        sys.argv = ["wheelcheck", "conflicts", "--jobs", "2", "--env", {str(site)!r}]
        main()
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert_one_line_error(proc, "pkg/_", "worker process died")
