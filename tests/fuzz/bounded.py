"""Run wheelcheck commands on hostile input, each in a fresh process under a memory and a CPU limit.

``BoundedRunner`` starts one server process (``python -m tests.fuzz.bounded``) that imports wheelcheck
once, then forks a child per job: the child gets RLIMIT_AS and RLIMIT_CPU, writes the job's files into a
fresh directory, runs the command line in process (the typer app, so a traceback is caught and kept
rather than turned into the top-level guard's one line) and exits. The server reports how the child
ended, its peak RSS and CPU time, and the files the directory holds afterwards (for repair's promises:
input unchanged, nothing partial written). Forking from a single-threaded server is safe and costs a few
milliseconds, so thousands of inputs a minute are possible on one core.

Outcome.kind: "ok" (exit 0 or 1), "error" (exit 2), "crash" (an exception escaped: a bug), "memory" (the
exception was a MemoryError: something allocated past the address-space limit), "hang" (the CPU limit or
the wall-clock limit killed it), "signal" (killed otherwise, e.g. SIGSEGV in a native library).
"""
from __future__ import annotations

import hashlib
import os
import pickle
import resource
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import traceback
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Job", "Outcome", "BoundedRunner", "DEFAULT_CPU_SECONDS", "DEFAULT_MEMORY", "limits_preexec_args"]

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CPU_SECONDS = 5
DEFAULT_MEMORY = 2 << 30  # address space per input: catches any allocation driven by a declared size
# A child blocked without using CPU (a deadlock) is killed after this long; generous, since on shared cores
# a niced child may get a small share of a CPU (the CPU limit is what catches a loop)
_WALL_SECONDS = 300
_CRASH = 99


@dataclass(frozen=True)
class Job:
    commands: tuple[tuple[str, ...], ...]  # wheelcheck's arguments, each run in turn in the job directory
    files: dict[str, bytes]  # written into the job directory first (relative paths)


@dataclass(frozen=True)
class Outcome:
    kind: str
    exit_code: int | None
    stderr: str
    traceback: str
    max_rss: int  # bytes, of the child (the forked interpreter included)
    cpu: float  # seconds, user + system
    files_after: dict[str, str] = field(default_factory=dict)  # relative path -> sha256

    @property
    def stderr_lines(self) -> list[str]:
        return self.stderr.splitlines()


class BoundedRunner:
    """A client of the fork server; use as a context manager."""

    def __init__(self, cpu_seconds: int = DEFAULT_CPU_SECONDS, memory: int = DEFAULT_MEMORY,
                 nice: int = 0, wheelcheck_from: Path | None = None) -> None:
        """``wheelcheck_from``: a directory holding another wheelcheck package to run instead (to check
        that a shape reproduces a bug on an older checkout)."""
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
        if wheelcheck_from:
            env["WHEELCHECK_FUZZ_FROM"] = str(wheelcheck_from)
        command = [sys.executable, "-m", "tests.fuzz.bounded", str(cpu_seconds), str(memory)]
        if nice:
            command = ["nice", "-n", str(nice), *command]
        self._proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT, env=env)

    def run(self, argv, files: dict[str, bytes]) -> Outcome:
        """``wheelcheck ARGV`` in a directory holding ``files``."""
        return self.run_all([argv], files)[0]

    def run_all(self, commands, files: dict[str, bytes]) -> list[Outcome]:
        """Each command in turn, each in its own bounded process, in one directory (a repair, then an
        audit of what it wrote)."""
        _send(self._proc.stdin, Job(tuple(tuple(map(str, argv)) for argv in commands), dict(files)))
        outcomes = _receive(self._proc.stdout)
        if outcomes is None:
            raise RuntimeError(f"the fuzz server died (exit {self._proc.poll()})")
        return outcomes

    def close(self) -> None:
        if self._proc.poll() is None:
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()

    def __enter__(self) -> BoundedRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def limits_preexec_args(cpu_seconds: int, memory: int) -> list[str]:
    """A command prefix that sets RLIMIT_AS and RLIMIT_CPU, then execs the rest of the command line
    (``[*limits_preexec_args(5, 1 << 30), sys.executable, "-m", "wheelcheck", ...]``): no preexec_fn,
    which is unsafe in a threaded process such as a pytest-xdist worker."""
    code = ("import os, resource, sys; "
            f"resource.setrlimit(resource.RLIMIT_AS, ({memory}, {memory})); "
            f"resource.setrlimit(resource.RLIMIT_CPU, ({cpu_seconds}, {cpu_seconds + 1})); "
            "resource.setrlimit(resource.RLIMIT_CORE, (0, 0)); "
            "os.execv(sys.argv[1], sys.argv[1:])")
    return [sys.executable, "-c", code]


# -- the wire: length-prefixed pickles ------------------------------------------------------------------------

def _send(stream, obj) -> None:
    data = pickle.dumps(obj)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def _receive(stream):
    head = stream.read(8)
    if len(head) < 8:
        return None
    (size,) = struct.unpack("<Q", head)
    return pickle.loads(stream.read(size))


# -- the server ---------------------------------------------------------------------------------------------

_LAZY_MODULES = ("wheelcheck.symbols.families", "wheelcheck.repair.repair_wheel", "wheelcheck.report.repair_text",
                 "wheelcheck.report.repair_json", "wheelcheck.report.show_text", "wheelcheck.audit.show_view",
                 "wheelcheck.report.conflicts_text", "wheelcheck.report.conflicts_json",
                 "wheelcheck.conflicts.find_conflicts", "wheelcheck.conflicts.read_distributions",
                 "wheelcheck.report.audit_sarif", "wheelcheck.report.audit_markdown",
                 "wheelcheck.compat.check_compat", "wheelcheck.compat.abi_manifest", "wheelcheck.report.compat_text",
                 "wheelcheck.report.compat_json", "wheelcheck.report.compat_sarif", "itanium_demangler")


def _serve(cpu_seconds: int, memory: int) -> None:
    other = os.environ.get("WHEELCHECK_FUZZ_FROM")
    if other:  # ahead of the editable install's finder, which sys.path alone does not override
        sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in getattr(f, "__module__", "")]
        sys.path.insert(0, other)
    import importlib

    import typer

    from wheelcheck.api import load_policies
    from wheelcheck.cli import app

    for lazy in _LAZY_MODULES:  # what the commands import inside functions: once here, not per child
        try:
            importlib.import_module(lazy)
        except ImportError:  # an older checkout (wheelcheck_from) may lack one
            pass
    load_policies()
    command = typer.main.get_command(app)
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        job = _receive(stdin)
        if job is None:
            return
        _send(stdout, _run(command, job, cpu_seconds, memory))


def _run(command, job: Job, cpu_seconds: int, memory: int) -> list[Outcome]:
    workdir = Path(tempfile.mkdtemp(prefix="wheelcheck-fuzz-"))
    try:
        for name, data in job.files.items():
            path = workdir / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        return [_run_one(command, argv, workdir, cpu_seconds, memory) for argv in job.commands]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _run_one(command, argv: tuple[str, ...], workdir: Path, cpu_seconds: int, memory: int) -> Outcome:
    for leftover in (".stderr", ".stdout", ".traceback"):
        (workdir / leftover).unlink(missing_ok=True)
    pid = os.fork()
    if pid == 0:
        _child(command, argv, workdir, cpu_seconds, memory)
    kind, status, usage = _wait(pid, max(_WALL_SECONDS, 30 * cpu_seconds))
    stderr = _text(workdir / ".stderr")
    trace = _text(workdir / ".traceback")
    if kind is None:
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            used = usage.ru_utime + usage.ru_stime
            kind = "hang" if sig == signal.SIGXCPU or (sig == signal.SIGKILL and used >= cpu_seconds) \
                else "signal"
            trace = trace or f"killed by signal {signal.Signals(sig).name}"
        else:
            code = os.WEXITSTATUS(status)
            kind = {0: "ok", 1: "ok", 2: "error", _CRASH: "crash"}.get(code, "crash")
            if kind == "crash" and "MemoryError" in trace:
                kind = "memory"
    files = {str(p.relative_to(workdir)): hashlib.sha256(p.read_bytes()).hexdigest()
             for p in sorted(workdir.rglob("*")) if p.is_file() and not p.name.startswith(".std")
             and p.name != ".traceback"}
    return Outcome(kind=kind, exit_code=os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
                   stderr=stderr[:8000], traceback=trace[-8000:], max_rss=usage.ru_maxrss * 1024,
                   cpu=usage.ru_utime + usage.ru_stime, files_after=files)


def _wait(pid: int, wall_seconds: float):
    fd = os.pidfd_open(pid)
    try:
        ready, _, _ = select.select([fd], [], [], wall_seconds)
    finally:
        os.close(fd)
    kind = None
    if not ready:
        os.kill(pid, signal.SIGKILL)
        kind = "hang"
    _pid, status, usage = os.wait4(pid, 0)
    try:
        os.killpg(pid, signal.SIGKILL)  # worker processes it started, if any outlived it
    except OSError:
        pass
    return kind, status, usage


def _child(command, argv: tuple[str, ...], workdir: Path, cpu_seconds: int, memory: int) -> None:
    code = _CRASH
    try:
        os.chdir(workdir)
        os.setpgid(0, 0)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(os.open(".stdout", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 1)
        os.dup2(os.open(".stderr", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 2)
        sys.argv = ["wheelcheck", *argv]
        try:
            command.main(args=list(argv), prog_name="wheelcheck", standalone_mode=True)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:  # the bug being looked for: keep the whole traceback
            Path(".traceback").write_text(traceback.format_exc())
            code = _CRASH
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            pass
    finally:
        os._exit(code)


def _text(path: Path) -> str:
    try:
        return path.read_text("utf-8", "replace")
    except OSError:
        return ""


if __name__ == "__main__":  # through the module's own name, so pickles name tests.fuzz.bounded classes
    from tests.fuzz import bounded

    bounded._serve(int(sys.argv[1]), int(sys.argv[2]))
