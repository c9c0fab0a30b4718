"""bench/sweep.py, the one script a new sweep of real wheels is made with: its plan reading, the pip command it
asks for each build, and the corpus rows it writes (the network parts, pip download and auditwheel, are not run
here)."""

from __future__ import annotations

import hashlib
import json
import shutil

from bench import sweep
from tests.helpers import ROOT

SAMPLE = ROOT / "samples" / "demo_ext-1.0-cp311-cp311-manylinux_2_31_x86_64.whl"


def test_a_plan_asks_for_each_build_and_skips_comments(tmp_path, monkeypatch, capsys):
    asked = []
    monkeypatch.setattr(sweep, "fetch_one", lambda project, spec, out, known: asked.append((project, spec)) or "x.whl")
    monkeypatch.setenv("HOME", str(tmp_path))
    plan = tmp_path / "plan.txt"
    plan.write_text("# a comment line\n\nnumpy gnu:x86_64 musl:aarch64  # two builds\n"
                    "charset-normalizer gnu:x86_64:3.14:cp314t|gnu:x86_64:3.14\n")
    sweep.fetch("t", plan)
    assert asked == [("numpy", "gnu:x86_64"), ("numpy", "musl:aarch64"),
                     ("charset-normalizer", "gnu:x86_64:3.14:cp314t|gnu:x86_64:3.14")]
    assert (tmp_path / ".cache" / "wheelcheck-sweep-t").is_dir() and capsys.readouterr().out.count("\n") == 3


def test_the_pip_command_names_the_build(tmp_path):
    command = sweep.pip_download("numpy", "musl", "aarch64", "3.12", sweep.default_abis("3.12"), tmp_path)
    assert command[1:5] == ["-m", "pip", "download", "--isolated"] and command[-1] == "numpy"
    assert [command[i + 1] for i, word in enumerate(command) if word == "--abi"] == ["cp312", "abi3", "none"]
    assert [command[i + 1] for i, word in enumerate(command) if word == "--platform"] == [
        "musllinux_1_2_aarch64", "musllinux_1_1_aarch64"]
    assert sweep.default_abis("3.7")[0] == "cp37m"
    glibc = sweep.platforms("gnu", "x86_64")
    assert glibc[0] == "manylinux_2_39_x86_64" and glibc[-1] == "linux_x86_64" and "manylinux1_x86_64" in glibc


def test_rows_pin_each_wheel_judged(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("SWEEP_WORK", str(tmp_path / "work"))
    wheels = tmp_path / ".cache" / "wheelcheck-sweep-t"
    wheels.mkdir(parents=True)
    shutil.copy(SAMPLE, wheels / SAMPLE.name)
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "results.jsonl").write_text(json.dumps({"wheel": SAMPLE.name}) + "\n")
    ranks = tmp_path / "ranks.tsv"
    ranks.write_text("name\trank_among_15000_most_downloaded\nDemo_Ext\t812\n")
    sweep.rows("t", ranks)
    digest = hashlib.sha256(SAMPLE.read_bytes()).hexdigest()
    assert capsys.readouterr().out == f"{SAMPLE.name}\tsha256:{digest}\tx86_64\trank 812, cp311 (sweep t)\n"
    assert sweep.has_elf(SAMPLE)
