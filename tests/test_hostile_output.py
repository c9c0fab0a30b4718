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
