"""Fuzz repair: a wheel whose extension needs a library from --lib-path, its ELF and zip mutated.

Beyond "one line or a verdict", repair promises: the input is never changed, nothing partial is left (no
``.part`` file, no wheel unless the repair succeeded), and a wheel it writes reads back clean. Each
input runs in its own process under a 2 GiB address-space and 5 s CPU limit; the written wheel is then
audited in another.
"""
from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.bounded import BoundedRunner
from tests.fuzz.elfcraft import CANVAS_SOURCE, ElfLayout
from tests.fuzz.fixtures import assert_clean, fuzz_runner  # noqa: F401  (fixtures)
from tests.fuzz.seeds import Seeds
from tests.fuzz.shapes import elf_shapes, wheel_bytes, wheel_name
from tests.fuzz.strategies import elf_mutations, zip_mutations

ALPHA_USES_BETA = "extern int beta_value(void);\nint alpha_value(void) { return beta_value() * 6; }\n"


@pytest.fixture(scope="module")
def alpha_beta(build) -> tuple[Seeds, Seeds]:
    """The seed: a canvas library (tests.fuzz.elfcraft) that also needs libbeta.so.1, which only --lib-path
    provides, so every repair grafts and patches; and libbeta."""
    _alpha, beta = build.alpha_beta()
    alpha = build.compile_c(CANVAS_SOURCE + ALPHA_USES_BETA, "libalpha.so.1", libs=("m", beta),
                            flags=("-Wl,-soname,libalpha.so.1",))
    return Seeds(alpha=alpha.read_bytes()), Seeds(beta=beta.read_bytes())


def repair_and_check(runner: BoundedRunner, wheel: bytes, libs: Seeds, recipe: str) -> None:
    files = {wheel_name(): wheel, "libs/libbeta.so.1": libs["beta"]}
    repair, audit = runner.run_all([["repair", "-w", "out", "--lib-path", "libs", wheel_name()], ["audit", "out"]],
                                   files)
    assert_clean(repair, recipe, wheel_name())
    after = repair.files_after
    assert after[wheel_name()] == hashlib.sha256(wheel).hexdigest(), f"input changed\ninput: {recipe}"
    assert not [n for n in after if n.endswith(".part")], f"partial output left: {sorted(after)}\ninput: {recipe}"
    written = [n for n in after if n.startswith("out/") and n.endswith(".whl")]
    if repair.exit_code != 0:
        assert not written, f"exit {repair.exit_code} but wrote {written}\ninput: {recipe}"
    if written:
        assert len(written) == 1 and audit.kind == "ok", f"{audit.kind}: {audit.stderr}{audit.traceback}\n" \
                                                          f"input: {recipe}"


def test_repair_unmutated_grafts(fuzz_runner, alpha_beta):
    seeds, beta = alpha_beta
    repair = fuzz_runner.run(["repair", "-w", "out", "--lib-path", "libs", wheel_name()],
                             {wheel_name(): wheel_bytes(seeds["alpha"]), "libs/libbeta.so.1": beta["beta"]})
    assert repair.exit_code == 0 and [n for n in repair.files_after if n.startswith("out/")], repair.stderr


def test_every_elf_shape_through_repair(fuzz_runner, alpha_beta):
    seeds, beta = alpha_beta
    applied = 0
    for shape_name, apply in elf_shapes():
        out = bytearray(seeds["alpha"])
        if apply(ElfLayout(seeds["alpha"]), out):
            repair_and_check(fuzz_runner, wheel_bytes(bytes(out)), beta, shape_name)
            applied += 1
    assert applied >= len(elf_shapes()) - 2


@given(data=st.data())
def test_mutated_elf_through_repair(fuzz_runner, alpha_beta, data):
    seeds, beta = alpha_beta
    elf = data.draw(elf_mutations(seeds), label="mutation")
    repair_and_check(fuzz_runner, wheel_bytes(elf), beta, elf.recipe)


@given(data=st.data())
def test_mutated_zip_through_repair(fuzz_runner, alpha_beta, data):
    seeds, beta = alpha_beta
    wheel = data.draw(zip_mutations(seeds), label="mutation")
    repair_and_check(fuzz_runner, bytes(wheel), beta, wheel.recipe)
