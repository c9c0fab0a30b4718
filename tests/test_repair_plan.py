"""What repair never grafts (libpython, system drivers, --exclude matches, whitelisted libraries), how it
chooses between policies, and the plan on its own (pure: no patchelf, no host)."""
from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from tests.fixtures.repair_scenario import EXT_SUFFIX, python_tag
from tests.fixtures.sources import extension_source
from tests.fixtures.wheels import build_wheel
from tests.helpers import files_but_sbom, repair_json
from wheelcheck.repair.graft_plan import launcher, never_grafted

TAG = f"{python_tag()}-{python_tag()}-linux_x86_64"
LIBPYTHON = f"libpython{sys.version_info.major}.{sys.version_info.minor}.so.1.0"


def needed(data: bytes) -> list[str]:
    dyn = ELFFile(io.BytesIO(data)).get_section_by_name(".dynamic")
    return [t.needed for t in dyn.iter_tags() if t.entry.d_tag == "DT_NEEDED"]


def auditwheel_repair(wheel: Path, out: Path, *args: str, env: dict | None = None) -> Path:
    env = dict(env or os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"
    proc = subprocess.run([sys.executable, "-m", "auditwheel", "repair", "-w", str(out), *args, str(wheel)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    (found,) = out.glob("*.whl")
    return found


@pytest.fixture(scope="module")
def libs(build, tmp_path_factory) -> Path:
    """libalpha.so.1 -> libbeta.so.2 and a stub libOpenCL.so.1, in one directory."""
    d = tmp_path_factory.mktemp("plan-libs")
    beta = build.compile_c("int beta_value(void) { return 7; }", "libbeta.so.2", flags=("-Wl,-soname,libbeta.so.2",))
    shutil.copy2(beta, d / "libbeta.so.2")
    alpha = build.compile_c("extern int beta_value(void);\nint alpha_value(void) { return beta_value() * 6; }",
                            "libalpha.so.1", flags=("-Wl,-soname,libalpha.so.1",), libs=(d / "libbeta.so.2",))
    shutil.copy2(alpha, d / "libalpha.so.1")
    opencl = build.compile_c("int clGetPlatformIDs(void) { return 0; }", "libOpenCL.so.1",
                             flags=("-Wl,-soname,libOpenCL.so.1",))
    shutil.copy2(opencl, d / "libOpenCL.so.1")
    return d


@pytest.fixture(scope="module")
def pystub(build) -> Path:
    """A stub named like this Python's libpython, only to link against (kept off every search path: the
    python binary itself may load the real one)."""
    return build.compile_c("int wc_pystub(void) { return 0; }", LIBPYTHON, flags=(f"-Wl,-soname,{LIBPYTHON}",))


def _wheel(build, libs: Path, tmp_path: Path, name: str, body: str, prelude: str, link: tuple) -> Path:
    ext = build.compile_c(extension_source("_x", body, prelude=prelude), f"_x{EXT_SUFFIX}",
                          flags=("-Wl,--no-as-needed", f"-Wl,-rpath-link,{libs}"), libs=link)
    return build_wheel(tmp_path / "dist", name, "1.0", TAG, {f"{name}/_x{EXT_SUFFIX}": ext, f"{name}/__init__.py": b""})


def test_libpython_is_removed_not_grafted_like_auditwheel(build, libs, pystub, tmp_path):
    wheel = _wheel(build, libs, tmp_path, "pylinked", "    return alpha_value();", "extern int alpha_value(void);",
                   (libs / "libalpha.so.1", pystub))
    proc, report = repair_json(wheel, "-w", tmp_path / "ours", "--lib-path", libs)
    assert proc.returncode == 0, proc.stderr
    outcome = report["wheels"][0]
    assert LIBPYTHON in outcome["kept_external"] and "libpython" in outcome["kept_external"][LIBPYTHON]
    assert [p["removed_needed"] for p in outcome["patched"]] == [[LIBPYTHON]]
    assert all(LIBPYTHON not in g["needed_as"] for g in outcome["grafted"])
    ours = Path(outcome["output"])
    theirs = auditwheel_repair(wheel, tmp_path / "theirs", env=dict(os.environ, LD_LIBRARY_PATH=str(libs)))
    member = f"pylinked/_x{EXT_SUFFIX}"
    with zipfile.ZipFile(ours) as zo, zipfile.ZipFile(theirs) as zt:
        assert LIBPYTHON not in needed(zo.read(member))
        assert zo.read(member) == zt.read(member)
    assert ours.name == theirs.name


def test_system_driver_is_never_grafted(build, libs, tmp_path):
    wheel = _wheel(build, libs, tmp_path, "gpu", "    return alpha_value() + clGetPlatformIDs();",
                   "extern int alpha_value(void);\nextern int clGetPlatformIDs(void);",
                   (libs / "libalpha.so.1", libs / "libOpenCL.so.1"))
    proc, report = repair_json(wheel, "-w", tmp_path / "out", "--lib-path", libs)
    outcome = report["wheels"][0]
    assert "driver" in outcome["kept_external"]["libOpenCL.so.1"]
    assert sorted(n for g in outcome["grafted"] for n in g["needed_as"]) == ["libalpha.so.1", "libbeta.so.2"]
    if outcome["status"] == "repaired":  # once the audit lets drivers come from the system
        with zipfile.ZipFile(outcome["output"]) as zf:
            assert "libOpenCL.so.1" in needed(zf.read(f"gpu/_x{EXT_SUFFIX}"))
    else:  # until then the audit holds libOpenCL.so.1 against every manylinux policy
        assert proc.returncode == 1 and outcome["status"] == "failed"


def test_exclude_keeps_a_library_out_like_auditwheel(build, libs, tmp_path):
    wheel = _wheel(build, libs, tmp_path, "excl", "    return alpha_value();", "extern int alpha_value(void);",
                   (libs / "libalpha.so.1",))
    proc, report = repair_json(wheel, "-w", tmp_path / "ours", "--lib-path", libs, "--exclude", "libbeta.so.*")
    assert proc.returncode == 0, proc.stderr
    outcome = report["wheels"][0]
    assert [g["needed_as"] for g in outcome["grafted"]] == [["libalpha.so.1"]]
    assert "exclude" in outcome["kept_external"]["libbeta.so.2"]
    theirs = auditwheel_repair(wheel, tmp_path / "theirs", "--exclude", "libbeta.so.*",
                               env=dict(os.environ, LD_LIBRARY_PATH=str(libs)))
    with zipfile.ZipFile(outcome["output"]) as zo, zipfile.ZipFile(theirs) as zt:
        assert files_but_sbom(zo) == files_but_sbom(zt)
        (alpha,) = [n for n in zo.namelist() if "libalpha-" in n]
        assert needed(zo.read(alpha)) == ["libbeta.so.2"] == needed(zt.read(alpha))
    assert Path(outcome["output"]).name == theirs.name


def test_whitelisted_system_library_stays_outside(build, libs, tmp_path):
    wheel = _wheel(build, libs, tmp_path, "zuser", "    return (long)zlibVersion()[0];", "#include <zlib.h>", ("z",))
    proc, report = repair_json(wheel, "-w", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    outcome = report["wheels"][0]
    assert outcome["grafted"] == [] and "whitelisted" in outcome["kept_external"]["libz.so.1"]


def test_auto_picks_the_policy_auditwheel_picks_when_grafting_more_would_not_help(build, libs, tmp_path):
    """libexpat is whitelisted from manylinux_2_12 on: manylinux_2_5 would need it grafted. The grafted copy of
    the host's libexpat needs a newer glibc than manylinux_2_12 allows, so grafting it cannot do better."""
    if not any(Path(d, "libexpat.so.1").exists() for d in ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
                                                            "/usr/lib64")):
        pytest.skip("no libexpat.so.1 on this host")
    wheel = _wheel(build, libs, tmp_path, "xml", "    return XML_MAJOR_VERSION + (long)XML_ExpatVersion()[0];",
                   "#include <expat.h>", ("expat",))
    proc, report = repair_json(wheel, "-w", tmp_path / "ours")
    assert proc.returncode == 0, proc.stderr
    outcome = report["wheels"][0]
    theirs = auditwheel_repair(wheel, tmp_path / "theirs", env={k: v for k, v in os.environ.items()
                                                                 if k != "LD_LIBRARY_PATH"})
    assert Path(outcome["output"]).name == theirs.name
    assert outcome["grafted"] == []


# -- the plan's pure parts


def test_never_grafted():
    drivers = frozenset({"libcuda.so.1"})
    assert never_grafted("ld-linux-x86-64.so.2", (), drivers) == "the dynamic loader"
    assert "libpython" in never_grafted("libpython3.11.so.1.0", (), drivers)
    assert "driver" in never_grafted("libcuda.so.1", (), drivers)
    assert "exclude" in never_grafted("libfoo.so.3", ("libfoo.so.*",), drivers)
    assert never_grafted("libfoo.so.3", ("libbar*",), drivers) is None


def test_launcher_is_auditwheels():
    from auditwheel.repair import _script_shim

    assert launcher("pkg.scripts/tool") == _script_shim(Path("pkg.scripts/tool")).encode()
