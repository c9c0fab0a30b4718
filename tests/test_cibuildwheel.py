"""Drop-in for auditwheel in cibuildwheel: the exact command strings people configure, run as written."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.fixtures.sources import extension_source
from tests.fixtures.wheels import build_wheel
from wheelcheck import audit
from wheelcheck.elf import summarize

USES_ALPHA = extension_source("usealpha", "    return alpha_value();", prelude="extern int alpha_value(void);\n")


@pytest.fixture
def unrepaired(build, tmp_path):
    alpha, beta = build.alpha_beta()
    ext = build.compile_c(USES_ALPHA, "usealpha.so", libs=(alpha,))
    wheel = build_wheel(tmp_path / "dist", "usealpha", "1.0", "cp311-cp311-linux_x86_64",
                        {"usealpha/usealpha.cpython-311-x86_64-linux-gnu.so": ext})
    return wheel, alpha.parent, beta.parent


def cibuildwheel(command: str, wheel: Path, dest: Path, lib_dirs: list[Path]) -> subprocess.CompletedProcess:
    """What cibuildwheel does with repair-wheel-command: format {wheel} and {dest_dir}, run it in a shell."""
    line = command.format(wheel=shlex.quote(str(wheel)), dest_dir=shlex.quote(str(dest)))
    bindir = Path(sys.executable).parent
    env = dict(os.environ, PATH=f"{bindir}:{os.environ.get('PATH', '')}",
               LD_LIBRARY_PATH=":".join(map(str, lib_dirs)))
    return subprocess.run(line, shell=True, env=env, capture_output=True, text=True, timeout=600)


def test_default_command_string(unrepaired, tmp_path):
    wheel, *lib_dirs = unrepaired
    proc = cibuildwheel("wheelcheck repair -w {dest_dir} {wheel}", wheel, tmp_path / "out", lib_dirs)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    (repaired,) = (tmp_path / "out").glob("*.whl")
    assert "manylinux" in repaired.name
    assert audit(repaired).exit_code == 0


def test_auditwheel_flags(unrepaired, tmp_path):
    wheel, *lib_dirs = unrepaired
    command = ("wheelcheck repair --plat manylinux_2_17_x86_64 --only-plat -L _vendored --strip -z 9 "
               "--disable-isa-ext-check --exclude 'libnothing.so*' -w {dest_dir} {wheel}")
    proc = cibuildwheel(command, wheel, tmp_path / "out", lib_dirs)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    (repaired,) = (tmp_path / "out").glob("*.whl")
    assert repaired.name.endswith("-manylinux2014_x86_64.manylinux_2_17_x86_64.whl")  # --only-plat: not 2_5
    with zipfile.ZipFile(repaired) as zf:
        names = zf.namelist()
        grafted = [n for n in names if n.startswith("usealpha_vendored/")]
        assert sorted(n.split("/")[1].split("-")[0] for n in grafted) == ["libalpha", "libbeta"]
        ext = zf.read("usealpha/usealpha.cpython-311-x86_64-linux-gnu.so")
    readelf = subprocess.run(["readelf", "-S", "-W", "/dev/stdin"], input=ext, capture_output=True)
    assert b".symtab" not in readelf.stdout  # --strip
    assert summarize(ext, "ext").rpath == ("$ORIGIN/../usealpha_vendored",)


def test_unknown_auditwheel_flag_is_a_clear_error(unrepaired, tmp_path):
    wheel, *lib_dirs = unrepaired
    proc = cibuildwheel("wheelcheck repair --patcher lief-patchelf -w {dest_dir} {wheel}", wheel, tmp_path / "o", lib_dirs)
    assert proc.returncode == 2 and "--patcher" in proc.stderr


def test_auditwheel_plat_and_pyproject_defaults(unrepaired, tmp_path):
    """Inside a manylinux image AUDITWHEEL_PLAT names the target; [tool.wheelcheck] sets the rest."""
    wheel, *lib_dirs = unrepaired
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text('[tool.wheelcheck]\nhide-symbols = true\nplat = "manylinux_2_12_x86_64"\n')
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
               LD_LIBRARY_PATH=":".join(map(str, lib_dirs)), AUDITWHEEL_PLAT="manylinux2014_x86_64")
    proc = subprocess.run(["wheelcheck", "repair", "--format", "json", "--only-plat", "-w", str(tmp_path / "out"),
                           str(wheel)], cwd=project, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    import json

    out = json.loads(proc.stdout)["wheels"][0]
    assert out["required_tag"] == "manylinux_2_17_x86_64"  # the variable beats the table
    assert out["hidden"], "hide-symbols came from [tool.wheelcheck]"
    del env["AUDITWHEEL_PLAT"]
    proc = subprocess.run(["wheelcheck", "repair", "--format", "json", "--no-hide-symbols", "-w",
                           str(tmp_path / "out2"), str(wheel)], cwd=project, env=env, capture_output=True,
                          text=True, timeout=600)
    out = json.loads(proc.stdout)["wheels"][0]
    assert out["required_tag"] == "manylinux_2_12_x86_64" and out["hidden"] is None
