"""Fuzz the ELF reader through the commands: real seeds (gcc, g++, zig for aarch64, i686, s390x), mutated.

Every input runs in its own process with a 2 GiB address-space limit and a 5 s CPU limit (tests.fuzz.bounded):
an input that hangs or allocates by a claimed size fails the test as surely as one that raises.
"""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.elfcraft import ElfLayout
from tests.fuzz.fixtures import assert_clean, elf_seeds, fuzz_runner  # noqa: F401  (fixtures)
from tests.fuzz.shapes import elf_shapes, wheel_bytes, wheel_name
from tests.fuzz.strategies import elf_mutations

COMMANDS = (("audit", "-vv"), ("audit", "--format", "json"), ("audit", "--format", "sarif"), ("show",),
            ("show", "--json"), ("conflicts", "-vv"), ("compat", "-v"), ("abi",))


def run(runner, command, elf: bytes):
    """``wheelcheck COMMAND`` on a wheel holding ``elf`` (``conflicts`` and ``compat`` beside a second
    distribution shipping the same file, so every export collides)."""
    files = {wheel_name(): wheel_bytes(elf)}
    if command[0] in ("conflicts", "compat"):
        files[wheel_name("other")] = wheel_bytes(elf, project="other")
    return runner.run([*command, *files], files)


def test_every_elf_shape_on_every_seed(fuzz_runner, elf_seeds):
    """The named shapes (shared version chains, endless hash chains, overlapping names, floods of program
    headers and DT_NEEDED, runs of "liblib", hostile mangled names) on every seed, every output format."""
    applied = 0
    for seed_name, seed in sorted(elf_seeds.items()):
        for shape_name, apply in elf_shapes():
            out = bytearray(seed)
            if not apply(ElfLayout(seed), out):
                continue
            applied += 1
            command = COMMANDS[applied % len(COMMANDS)]
            outcome = run(fuzz_runner, command, bytes(out))
            assert_clean(outcome, f"{seed_name} {shape_name} ({' '.join(command)})", wheel_name(),
                         two_is_a_verdict=command[0] == "compat")
    assert applied >= 5 * len(elf_shapes())  # the shapes find what they need in the seeds


@given(data=st.data())
def test_mutated_elf(fuzz_runner, elf_seeds, data):
    elf = data.draw(elf_mutations(elf_seeds), label="mutation")
    command = data.draw(st.sampled_from(COMMANDS), label="command")
    outcome = run(fuzz_runner, command, elf)
    assert_clean(outcome, elf.recipe, wheel_name(), two_is_a_verdict=command[0] == "compat")


@pytest.mark.parametrize("keep", [0, 4, 16, 52, 63, 64, 100, 1000])
def test_truncated_seed(fuzz_runner, elf_seeds, keep):
    for seed_name, seed in sorted(elf_seeds.items()):
        outcome = fuzz_runner.run(["audit", wheel_name()], {wheel_name(): wheel_bytes(seed[:keep])})
        assert_clean(outcome, f"{seed_name}[:{keep}]", wheel_name())
