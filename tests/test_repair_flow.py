"""Repair as source -> core -> destination: the input is opened once, judged 1 + N times (N plans tried),
no step changes what it is given, and the writer's RECORD rows describe the bytes it wrote."""

from __future__ import annotations

import importlib
import shutil
import zipfile

from tests.fixtures.sources import extension_source
from tests.fixtures.wheels import build_wheel, record_hash
from wheelcheck.repair import RepairOptions, repair_wheel
from wheelcheck.repair.hide_apply import hide_symbols
from wheelcheck.wheel.scanner import scan_reader
from wheelcheck.wheel.wheel_reader import WheelReader
from wheelcheck.wheel.wheel_rebuild import Changes

LIB = "int alpha_value(void) { return 7; }\nint alpha_helper(void) { return 1; }\n"
TAG = "cp311-cp311-linux_x86_64"


def _wheel(build, tmp_path):
    lib_dir = tmp_path / "host"
    lib_dir.mkdir()
    lib = build.compile_c(LIB, "libflow.so.1", flags=("-Wl,-soname,libflow.so.1",))
    shutil.copy(lib, lib_dir / "libflow.so.1")
    ext = build.compile_c(extension_source("_ext", "    return alpha_value();", prelude="extern int alpha_value(void);\n"),
                          "flow_ext.so", libs=(lib,))
    wheel = build_wheel(tmp_path / "dist", "flow", "1.0", TAG, {"flow/_ext.cpython-311-x86_64-linux-gnu.so": ext})
    return wheel, lib_dir


def test_opened_once_and_judged_once_per_plan_plus_once(build, tmp_path, monkeypatch):
    flow = importlib.import_module("wheelcheck.repair.repair_wheel")  # the module; the package exports the function

    wheel, lib_dir = _wheel(build, tmp_path)
    opened, judged = [], []
    real_reader, real_judge, real_assess = flow.WheelReader, flow.judge, flow.assess
    monkeypatch.setattr(flow, "WheelReader", lambda path: opened.append(path) or real_reader(path))
    # a judgement is either call: judge (the report) or assess (the report with its policies)
    monkeypatch.setattr(flow, "judge", lambda model, options: judged.append(model.filename) or real_judge(model, options))
    monkeypatch.setattr(flow, "assess", lambda model, options: judged.append(model.filename) or real_assess(model, options))
    options = RepairOptions(out_dir=tmp_path / "out", lib_path=(str(lib_dir),), plat="manylinux_2_17_x86_64")
    outcome = repair_wheel(wheel, options)
    assert outcome.status == "repaired", outcome.message
    assert opened == [wheel]  # scanned, read and copied from one open file
    assert len(judged) == 2  # the one plan for --plat, then the real bytes


def test_hiding_returns_what_it_changed_and_changes_nothing_it_is_given(build, tmp_path):
    wheel, lib_dir = _wheel(build, tmp_path)
    grafted = repair_wheel(wheel, RepairOptions(out_dir=tmp_path / "out", lib_path=(str(lib_dir),)))
    with WheelReader(grafted.output) as reader:
        model = scan_reader(reader)
        changes = Changes()
        hidden = hide_symbols(model, changes, reader)
        assert changes == Changes() and model == scan_reader(reader)  # neither was touched
        (library,) = [e.path for e in model.elves if e.path.startswith("flow.libs/")]
        # the library's exports renamed or hidden, and the extension's references to them renamed
        assert set(hidden.changed) == {e.path for e in model.elves}
        assert hidden.model.elves != model.elves
        after = changes.with_data(hidden.changed)
        assert after.data(library) == hidden.changed[library] and changes.data(library) is None


def test_the_writer_returns_the_record_row_of_what_it_wrote(build, tmp_path):
    wheel, lib_dir = _wheel(build, tmp_path)
    outcome = repair_wheel(wheel, RepairOptions(out_dir=tmp_path / "out", lib_path=(str(lib_dir),)))
    with zipfile.ZipFile(outcome.output) as zf:
        record = next(n for n in zf.namelist() if n.endswith(".dist-info/RECORD"))
        rows = {line.split(",")[0]: line.split(",")[1:] for line in zf.read(record).decode().splitlines()}
        for name in zf.namelist():
            if name != record and not name.endswith("/"):
                data = zf.read(name)
                assert rows[name] == [record_hash(data), str(len(data))], name
