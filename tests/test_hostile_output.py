"""Output paths: a report or manifest written where a symbolic link stands replaces the link, never the file it
points to (a link planted in a shared output directory must not aim wheelcheck at another file)."""
from __future__ import annotations

import gzip
import json

import pytest

from tests.fixtures.repair_scenario import python_tag
from tests.fixtures.wheels import build_wheel
from tests.helpers import run_cli


@pytest.mark.parametrize("name", ["abi.json.gz", "abi.json"])
def test_abi_output_replaces_a_symlink_and_leaves_its_target(build, tmp_path, name):
    lib = build.compile_c("int host_value(void) { return 1; }\n", "libhost.so.1", flags=("-Wl,-soname,libhost.so.1",))
    tag = python_tag()
    wheel = build_wheel(tmp_path / "dist", "host", "1.0", f"{tag}-{tag}-manylinux_2_17_x86_64",
                        {"host/libhost.so.1": lib})
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    output = tmp_path / name
    output.symlink_to(victim)
    proc = run_cli("abi", wheel, "-o", output)
    assert proc.returncode == 0, proc.stderr
    assert victim.read_text() == "precious\n"
    assert not output.is_symlink()
    text = gzip.decompress(output.read_bytes()) if name.endswith(".gz") else output.read_bytes()
    assert json.loads(text)["distribution"]["name"] == "host"


def test_repair_into_the_inputs_own_directory(build, tmp_path):
    """`repair -w DIR DIR/x.whl`, as auditwheel takes it: a wheel that needs nothing is left untouched, byte
    for byte; one whose members change is replaced by its repair, atomically (no temporary file left)."""
    import hashlib
    import os
    import zipfile

    from tests.fixtures.repair_scenario import EXT_SUFFIX
    from tests.fixtures.sources import extension_source

    tag = python_tag()
    plain = build.compile_c(extension_source("_p"), f"_p{EXT_SUFFIX}")
    built = build_wheel(tmp_path / "dist", "done", "1.0", f"{tag}-{tag}-linux_x86_64", {f"done/_p{EXT_SUFFIX}": plain})
    assert run_cli("repair", "-w", tmp_path / "repaired", built).returncode == 0
    (done,) = (tmp_path / "repaired").glob("*.whl")  # tagged as it deserves: a repair has nothing to do
    before = done.read_bytes(), os.stat(done).st_mtime_ns
    proc = run_cli("repair", "-w", done.parent, done)
    assert proc.returncode == 0 and "UNCHANGED" in proc.stdout, proc.stdout + proc.stderr
    assert (done.read_bytes(), os.stat(done).st_mtime_ns) == before
    # its RECORD written in hex, which a repair rewrites: the wheel changes, under its own name
    with zipfile.ZipFile(done) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    record = next(n for n in members if n.endswith(".dist-info/RECORD"))
    rows = [f"{n},sha256={hashlib.sha256(d).hexdigest()},{len(d)}" for n, d in members.items() if n != record]
    members[record] = ("\n".join(rows + [f"{record},,"]) + "\n").encode()
    with zipfile.ZipFile(done, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    hexed = done.read_bytes()
    proc = run_cli("repair", "-w", done.parent, done)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert done.read_bytes() != hexed and zipfile.ZipFile(done).testzip() is None
    assert sorted(p.name for p in done.parent.iterdir()) == [done.name]
