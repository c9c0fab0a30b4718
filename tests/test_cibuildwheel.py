"""Drop-in for auditwheel in cibuildwheel: the exact command strings people configure, run as written."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.fixtures.sources import extension_source
from tests.fixtures.wheels import build_wheel
from tests.helpers import ROOT
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
    out = json.loads(proc.stdout)["wheels"][0]
    assert out["required_tag"] == "manylinux_2_17_x86_64"  # the variable beats the table
    assert out["hidden"], "hide-symbols came from [tool.wheelcheck]"
    del env["AUDITWHEEL_PLAT"]
    proc = subprocess.run(["wheelcheck", "repair", "--format", "json", "--no-hide-symbols", "-w",
                           str(tmp_path / "out2"), str(wheel)], cwd=project, env=env, capture_output=True,
                          text=True, timeout=600)
    out = json.loads(proc.stdout)["wheels"][0]
    assert out["required_tag"] == "manylinux_2_12_x86_64" and out["hidden"] is None


def documented_configurations() -> list[dict]:
    """The TOML blocks of docs/ci.md's cibuildwheel section, parsed."""
    import tomllib

    text = (ROOT / "docs" / "ci.md").read_text()
    section = text[text.index("## cibuildwheel"):text.index("\n## ", text.index("## cibuildwheel") + 1)]
    return [tomllib.loads(block.split("```", 1)[0]) for block in section.split("```toml\n")[1:]]


@pytest.fixture(scope="module")
def pipx_installed(tmp_path_factory):
    """docs/ci.md's before-all, run as the image runs it: pipx as root puts the command in a bin directory on PATH.
    The one change: the wheel built from this checkout stands for the package name."""
    configs = documented_configurations()
    before_all = {c["tool"]["cibuildwheel"]["linux"]["before-all"] for c in configs}
    assert before_all == {"pipx install wheelcheck"}
    root = tmp_path_factory.mktemp("image")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(root / "dist"), str(ROOT)],
                   check=True, capture_output=True)
    (built,) = (root / "dist").glob("wheelcheck-*.whl")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AUDITWHEEL_", "LD_LIBRARY_PATH", "VIRTUAL_ENV"))}
    env.update(PIPX_HOME=str(root / "pipx"), PIPX_BIN_DIR=str(root / "bin"), PIPX_MAN_DIR=str(root / "man"),
               PATH=f"{Path(sys.executable).parent}:/usr/bin:/bin")
    line = next(iter(before_all)).replace("wheelcheck", shlex.quote(str(built)))
    proc = subprocess.run(["sh", "-c", line], env=env, capture_output=True, text=True, timeout=900)
    if proc.returncode != 0 and ("No matching distribution" in proc.stderr or "Could not fetch" in proc.stderr):
        pytest.skip(f"the package index cannot be reached: {proc.stderr.strip().splitlines()[-1]}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return configs, root / "bin"


def run_repair_step(config: dict, wheel: Path, dest: Path, bin_dir: Path, project: Path, **environment):
    """cibuildwheel's repair step: the command (a list joined with &&), formatted, in the project folder, with
    the image's PATH (what pipx installed, not this test's venv) and the image's AUDITWHEEL_PLAT."""
    command = config["tool"]["cibuildwheel"]["linux"]["repair-wheel-command"]
    line = " && ".join(command) if isinstance(command, list) else command
    line = line.format(wheel=shlex.quote(str(wheel)), dest_dir=shlex.quote(str(dest)))
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root"), **environment}
    return subprocess.run(["sh", "-c", line], env=env, cwd=project, capture_output=True, text=True, timeout=600)


def test_documented_configuration_repairs_and_gates(pipx_installed, unrepaired, build, tmp_path):
    (plain, gated), bin_dir = pipx_installed
    wheel, *lib_dirs = unrepaired
    project = tmp_path / "project"
    project.mkdir()
    table = "\n".join(f"{k} = {json.dumps(v)}" for k, v in gated["tool"]["wheelcheck"].items())
    (project / "pyproject.toml").write_text(f"[tool.wheelcheck]\n{table}\n")
    image = {"AUDITWHEEL_PLAT": "manylinux2014_x86_64", "LD_LIBRARY_PATH": ":".join(map(str, lib_dirs))}
    for name, config in (("plain", plain), ("gated", gated)):
        proc = run_repair_step(config, wheel, tmp_path / name, bin_dir, project, **image)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        (repaired,) = (tmp_path / name).glob("*.whl")
        assert "manylinux2014_x86_64" in repaired.name and "usealpha.libs/" in str(zipfile.ZipFile(repaired).namelist())
    assert f"{repaired.name}: PASS" in proc.stdout  # the gate's audit line
    # the gate holds: a wheel that needs GLIBC_2.29 repairs in a manylinux_2_35 image, but fails plat = manylinux2014
    from tests.fixtures.sources import math_extension_source

    math = build.compile_c(math_extension_source("_m"), "_m.so", libs=("m",))
    late = build_wheel(tmp_path / "dist", "mathy", "1.0", "cp311-cp311-linux_x86_64",
                       {"mathy/_m.cpython-311-x86_64-linux-gnu.so": math})
    proc = run_repair_step(gated, late, tmp_path / "late", bin_dir, project, AUDITWHEEL_PLAT="manylinux_2_35_x86_64")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "REPAIRED" in proc.stdout and "FAIL" in proc.stdout and "manylinux_2_17_x86_64" in proc.stdout
