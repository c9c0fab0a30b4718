"""A large wheel's ELF members are summarised on forked children too: the same model as one by one, the same
first error, and a dead child is one error naming the wheel."""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal

import pytest

from tests.fixtures.sources import extension_source
from tests.fixtures.wheels import build_wheel
from wheelcheck.errors import BadElfError, BadWheelError
from wheelcheck.wheel import forked, scanner
from wheelcheck.wheel.scanner import scan_wheel
from wheelcheck.wheel.wheel_reader import WheelReader


@pytest.fixture
def forks(monkeypatch):
    """Every wheel counts as large (members go to children), and the children started are counted."""
    monkeypatch.setattr(scanner, "_PROCESSES_MIN", 0)
    monkeypatch.setattr(scanner, "_THREADS_MIN", 0)
    started = []

    class Counted(forked.Forked):
        def __init__(self, call):
            started.append(call)
            super().__init__(call)

    monkeypatch.setattr(forked, "Forked", Counted)
    return started


def _modules(build, tmp_path, sizes: list[int], broken: set[int] = frozenset()):
    """A wheel of extension modules, module i padded to sizes[i] bytes; those in ``broken`` are the ELF magic
    and then bytes that are no ELF header (an unknown class)."""
    files = {}
    for i, size in enumerate(sizes):
        if i in broken:
            data = b"\x7fELF" + b"\xff" * (size - 4)
        else:
            data = build.compile_c(extension_source(f"m{i}"), f"m{i}.so").read_bytes()
            data += os.urandom(max(0, size - len(data)))
        path = tmp_path / f"m{i}.cpython-311-x86_64-linux-gnu.so"
        path.write_bytes(data)
        files[f"pkg/{path.name}"] = path
    return build_wheel(tmp_path, "pkg", "1.0", "cp311-cp311-linux_x86_64", files)


@pytest.mark.parametrize("jobs", [2, 3])
def test_members_on_children_give_the_model_one_by_one_gives(build, tmp_path, forks, jobs):
    wheel = _modules(build, tmp_path, [300_000, 2_000_000, 50_000, 1_200_000, 700_000])
    alone = scan_wheel(wheel, jobs=1)
    assert not forks
    spread = scan_wheel(wheel, jobs=jobs)
    assert len(forks) == jobs - 1
    assert spread.elves == alone.elves  # every field: symbols, versions, strings, sha256
    assert [e.path for e in spread.elves] == [f"pkg/m{i}.cpython-311-x86_64-linux-gnu.so" for i in range(5)]
    assert spread.record_problems == alone.record_problems == ()


@pytest.mark.parametrize("broken", [{1, 4}, {3, 4}, {4}, {0, 2}])
def test_the_first_failure_in_wheel_order_is_raised(build, tmp_path, forks, broken, monkeypatch):
    """Member 4 (the largest) is read here, 0..3 in a child: whichever process meets its failure first, the
    error is the one reading them in order would raise."""
    wheel = _modules(build, tmp_path, [400_000, 900_000, 300_000, 100_000, 2_000_000], broken=broken)
    with WheelReader(wheel) as reader:
        members = [m for m in reader.members if m.filename.endswith(".so")]
        assert scanner._process_buckets(members, 2) == [[4], [0, 1, 2, 3]]
    with pytest.raises(BadElfError) as one_by_one:
        scan_wheel(wheel, jobs=1)
    with pytest.raises(BadElfError) as spread:
        scan_wheel(wheel, jobs=2)
    assert forks
    assert str(spread.value) == str(one_by_one.value)
    assert f"m{min(broken)}.cpython" in str(spread.value)
    monkeypatch.setattr(scanner, "_PROCESSES_MIN", 1 << 62)  # threads alone: the same error
    with pytest.raises(BadElfError) as threaded:
        scan_wheel(wheel, jobs=3)
    assert str(threaded.value) == str(one_by_one.value)


def _killed(*_args):
    os.kill(os.getpid(), signal.SIGKILL)


def test_a_child_killed_is_one_error_naming_the_wheel(build, tmp_path, forks, monkeypatch):
    wheel = _modules(build, tmp_path, [1_000_000, 900_000])
    monkeypatch.setattr(scanner, "_child_bucket", _killed)
    with pytest.raises(BadWheelError) as error:
        scan_wheel(wheel, jobs=2)
    assert str(error.value).startswith(str(wheel)) and "child process died" in str(error.value)
    assert "\n" not in str(error.value)


def test_no_children_from_a_worker_process():
    """Across wheels, each worker has its share of the cores already: it does not fork more."""
    assert forked.can_fork()
    with multiprocessing.get_context("fork").Pool(1) as pool:
        assert pool.apply(forked.can_fork) is False


def test_analyses_on_children_equal_those_made_here(build, tmp_path, forks, monkeypatch):
    """The per-file analyses of the checks (ABI, exposure) made on children are those made here; with no room
    in the memory budget for a child's copy of the objects it reads, none is started."""
    from wheelcheck.audit import file_analyses

    monkeypatch.setattr(file_analyses, "_FORK_MIN_SYMBOLS", 0)
    model = scan_wheel(_modules(build, tmp_path, [300_000, 200_000, 100_000, 50_000]), jobs=1)
    here = file_analyses.analyse_files(model.elves, 1)
    assert not forks
    monkeypatch.setattr(file_analyses, "MEMORY_BUDGET", forked.resident_bytes() + (1 << 30))  # room for a child
    spread = file_analyses.analyse_files(model.elves, 2)
    assert len(forks) == 1 and spread == here
    monkeypatch.setattr(file_analyses, "MEMORY_BUDGET", 1 << 20)  # less than this process holds already
    assert file_analyses.analyse_files(model.elves, 2) == here and len(forks) == 1


def _square_or_fail(n: int) -> int:
    if n < 0:
        raise ValueError(f"item {n}")
    return n * n


def test_fork_map_gives_results_and_the_first_error_in_item_order():
    items = [1, -2, 3, -4, 5]
    weights = [1, 1, 1, 10, 1]  # item 3 (heaviest) is done here, item 1 in the child
    assert forked.balanced_groups(weights, 2) == [[3], [0, 1, 2, 4]]
    assert forked.fork_map(_square_or_fail, [1, 2, 3], [1, 1, 1], 2) == [1, 4, 9]
    with pytest.raises(ValueError, match="item -2"):
        forked.fork_map(_square_or_fail, items, weights, 2)
    with pytest.raises(ValueError, match="item -2"):
        [_square_or_fail(n) for n in items]


def test_analyses_made_as_the_wheel_is_read_are_those_made_after(build, tmp_path, forks):
    """scan_wheel(analyse=...) makes each file's analysis where the file is summarised, in a child for the
    child's share; they equal those made afterwards, and a model whose files were replaced does not lend them."""
    from dataclasses import replace

    from wheelcheck.audit.file_analyses import analyse_file, analyse_files

    wheel = _modules(build, tmp_path, [300_000, 2_000_000, 50_000, 1_200_000])
    model = scan_wheel(wheel, jobs=2, analyse=analyse_file)
    assert len(forks) == 1 and len(model.analyses) == 4
    after = analyse_files(model.elves, 1)
    assert {elf.path: model.analysis_of(elf) for elf in model.elves} == after
    assert analyse_files(model.elves, 1, model.analysis_of) == after
    copies = tuple(replace(elf) for elf in model.elves)  # equal files, other objects: as a repair makes them
    replaced = replace(model, elves=copies)
    assert all(replaced.analysis_of(e) is None for e in copies)
    again = pickle.loads(pickle.dumps(model))  # after a lookup: its index of ids must not travel
    assert {elf.path: again.analysis_of(elf) for elf in again.elves} == after
