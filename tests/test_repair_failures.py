"""Repair failures: each is a clear message and leaves nothing behind (no wheel, no temporary file)."""
from __future__ import annotations

import os
import random
import resource
import signal
import subprocess
import sys
import zipfile
from pathlib import Path

import jsonschema
import pytest

from tests.fixtures.repair_scenario import EXT_SUFFIX, python_tag
from tests.fixtures.sources import extension_source, math_extension_source
from tests.fixtures.wheels import build_wheel
from tests.helpers import repair_json as _repair_json, run_cli, run_cli_process
from wheelcheck.report.repair_json import repair_schema

TAG = f"{python_tag()}-{python_tag()}-linux_x86_64"


def repair_json(*args, **kwargs):
    """The CLI's JSON, checked against its schema whatever the outcome."""
    proc, report = _repair_json(*args, **kwargs)
    jsonschema.validate(report, repair_schema())
    return proc, report


def listing(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir()) if directory.exists() else []


@pytest.fixture(scope="module")
def stub_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("stubs")


@pytest.fixture(scope="module")
def nowhere_wheel(build, stub_dir, tmp_path_factory) -> Path:
    """An extension that needs libnowhere.so.7, a library that exists only while it is linked."""
    stub = build.compile_c("int nowhere(void) { return 3; }", "libnowhere.so.7", flags=("-Wl,-soname,libnowhere.so.7",))
    ext = build.compile_c(extension_source("_needs", "    return nowhere();", prelude="extern int nowhere(void);"),
                          f"_needs{EXT_SUFFIX}", libs=(stub,))
    return build_wheel(tmp_path_factory.mktemp("nowhere"), "nowhere", "1.0", TAG,
                       {f"nowhere/_needs{EXT_SUFFIX}": ext, "nowhere/__init__.py": b""})


def test_missing_library_names_it_and_its_user_and_writes_nothing(nowhere_wheel, tmp_path):
    out = tmp_path / "out"
    proc, report = repair_json(nowhere_wheel, "-w", out)
    assert proc.returncode == 2
    message = report["wheels"][0]["message"]
    assert report["wheels"][0]["status"] == "error"
    assert "libnowhere.so.7" in message and f"nowhere/_needs{EXT_SUFFIX}" in message and nowhere_wheel.name in message
    assert "libnowhere.so.7" in proc.stderr
    assert listing(out) == []


def test_missing_dependency_of_a_found_library_names_the_library_that_needs_it(build, tmp_path):
    beta = build.compile_c("int beta_value(void) { return 7; }", "libbeta.so.2", flags=("-Wl,-soname,libbeta.so.2",))
    alpha = build.compile_c("extern int beta_value(void);\nint alpha_value(void) { return beta_value(); }",
                            "libalpha.so.1", flags=("-Wl,-soname,libalpha.so.1",), libs=(beta,))
    ext = build.compile_c(extension_source("_a", "    return alpha_value();", prelude="extern int alpha_value(void);"),
                          f"_a{EXT_SUFFIX}", libs=(alpha,))
    wheel = build_wheel(tmp_path / "dist", "half", "1.0", TAG, {f"half/_a{EXT_SUFFIX}": ext})
    proc, report = repair_json(wheel, "-w", tmp_path / "out", "--lib-path", alpha.parent)  # beta lives elsewhere
    assert proc.returncode == 2
    assert "[libalpha.so.1]: needs libbeta.so.2" in report["wheels"][0]["message"]
    assert listing(tmp_path / "out") == []


@pytest.fixture(scope="module")
def math_wheel(build, tmp_path_factory) -> Path:
    """Built on this host: exp2/log2 need GLIBC_2.29, so manylinux_2_17 is out of reach."""
    ext = build.compile_c(math_extension_source("_m"), f"_m{EXT_SUFFIX}", libs=("m",))
    return build_wheel(tmp_path_factory.mktemp("math"), "mathy", "1.0", TAG, {f"mathy/_m{EXT_SUFFIX}": ext})


@pytest.mark.parametrize("plat", ["manylinux_2_17_x86_64", "manylinux2014"])
def test_target_out_of_reach_fails_and_writes_nothing(math_wheel, tmp_path, plat):
    proc, report = repair_json(math_wheel, "-w", tmp_path, "--plat", plat)
    assert proc.returncode == 1
    wheel = report["wheels"][0]
    assert wheel["status"] == "failed" and wheel["required_tag"] == "manylinux_2_17_x86_64"
    assert "cannot reach manylinux_2_17_x86_64" in wheel["message"]
    blocking = [f for f in wheel["findings"] if f["severity"] == "error"]
    assert any(f["rule"] == "symbol-version" and "GLIBC_2.29" in f["message"] and "exp2" in f["symbols"]
               for f in blocking)
    assert listing(tmp_path) == []


def test_reachable_named_target_is_tagged_with_the_best_tag_too_like_auditwheel(math_wheel, tmp_path):
    proc, report = repair_json(math_wheel, "-w", tmp_path / "ours", "--plat", "manylinux_2_35_x86_64")
    assert proc.returncode == 0, proc.stderr
    ours = Path(report["wheels"][0]["output"])
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
    aw = subprocess.run([sys.executable, "-m", "auditwheel", "repair", "--plat", "manylinux_2_35_x86_64",
                         "-w", str(tmp_path / "theirs"), str(math_wheel)], capture_output=True, text=True, env=env)
    assert aw.returncode == 0, aw.stderr
    (theirs,) = (tmp_path / "theirs").glob("*.whl")
    assert ours.name == theirs.name
    assert report["wheels"][0]["required_tag"] == "manylinux_2_35_x86_64"


def test_plat_for_another_architecture_is_a_usage_error(math_wheel, tmp_path):
    proc, report = _repair_json(math_wheel, "-w", tmp_path, "--plat", "manylinux_2_17_aarch64")
    assert report == {}  # a usage error: one line on stderr, no report
    assert proc.returncode == 2
    assert "aarch64" in proc.stderr and listing(tmp_path) == []


def test_output_directory_that_cannot_be_created(math_wheel, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    proc, report = repair_json(math_wheel, "-w", blocker / "wheelhouse")
    assert proc.returncode == 2
    assert "cannot create the output directory" in report["wheels"][0]["message"]


def test_unwritable_output_directory(math_wheel, tmp_path):
    out = tmp_path / "readonly"
    out.mkdir()
    if os.geteuid() == 0:  # root ignores permission bits: make the directory immutable instead
        if subprocess.run(["chattr", "+i", str(out)], capture_output=True).returncode != 0:
            pytest.skip("running as root and chattr +i is unavailable here")
    else:
        out.chmod(0o555)
    try:
        proc, report = repair_json(math_wheel, "-w", out)
    finally:
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(out)], check=True)
        out.chmod(0o755)
    assert proc.returncode == 2
    assert "cannot write the repaired wheel" in report["wheels"][0]["message"]
    assert listing(out) == []


def test_interrupted_write_leaves_no_partial_file(build, tmp_path):
    """The repair runs under RLIMIT_FSIZE: its write dies half way (EFBIG), as on a full disk."""
    ext = build.compile_c(extension_source("_big"), f"_big{EXT_SUFFIX}")
    noise = random.Random(4).randbytes(512 * 1024)  # incompressible, the same every run
    wheel = build_wheel(tmp_path / "dist", "big", "1.0", TAG, {f"big/_big{EXT_SUFFIX}": ext, "big/noise.bin": noise})
    with zipfile.ZipFile(wheel) as zf:
        assert zf.getinfo("big/noise.bin").compress_size > 200_000
    out = tmp_path / "out"
    out.mkdir()
    limit = 100_000

    def limit_file_size() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a failing write() instead of a killed process
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    proc = run_cli_process("repair", "--format", "json", "-w", out, wheel, preexec_fn=limit_file_size,
                           env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))  # the limit needs a process of its own
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "cannot write the repaired wheel" in proc.stderr
    assert listing(out) == []  # neither a wheel nor its temporary


def test_pure_wheel_is_not_written(tmp_path):
    wheel = build_wheel(tmp_path / "dist", "puredemo", "1.0", "py3-none-any", {"puredemo/__init__.py": b"x = 1\n"})
    proc, report = repair_json(wheel, "-w", tmp_path / "out")
    assert proc.returncode == 1
    assert report["wheels"][0]["status"] == "pure"
    assert listing(tmp_path / "out") == []


def test_text_output_shows_the_plan_that_could_not_be_carried_out(math_wheel, tmp_path):
    proc = run_cli("repair", "-w", tmp_path, "--plat", "manylinux2014", math_wheel)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f"{math_wheel.name}: FAIL cannot reach manylinux_2_17_x86_64")
    assert any("error symbol-version" in line and "GLIBC_2.29" in line for line in lines[1:])
