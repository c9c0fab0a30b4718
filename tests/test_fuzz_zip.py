"""Fuzz the wheel reader: every named hostile zip shape, then random header mutations of a valid wheel.

Shapes and mutations favour what broke the reader once: encrypted members, odd compression methods and
versions, LZMA and bzip2 data that is wrong, declared sizes (1, 3 and 8 GiB under the ratio check), zip64
offsets past 2**63, names flagged UTF-8 that are not, newlines in member and .dist-info names, RECORD rows
the csv module refuses. Each input runs in its own process under a 2 GiB address-space and 5 s CPU limit.
"""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.fixtures import assert_clean, elf_seeds, fuzz_runner  # noqa: F401  (fixtures)
from tests.fuzz.shapes import base_wheel, wheel_name, zip_shapes
from tests.fuzz.strategies import zip_mutations

CHUNKS = 4  # the named shapes in a few tests, so pytest-xdist can share them out


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_named_zip_shapes(fuzz_runner, elf_seeds, chunk):
    base = base_wheel(elf_seeds["host"])
    shapes = zip_shapes()
    assert len(shapes) > 500
    for name, make in shapes[chunk::CHUNKS]:
        command = ("audit", "--format", "json") if "metadata" in name else ("audit",)
        outcome = fuzz_runner.run([*command, wheel_name()], {wheel_name(): make(base)})
        assert_clean(outcome, name, wheel_name())


@given(data=st.data())
def test_mutated_zip(fuzz_runner, elf_seeds, data):
    wheel = data.draw(zip_mutations(elf_seeds), label="mutation")
    command = data.draw(st.sampled_from((("audit",), ("show",), ("audit", "--format", "json"))), label="command")
    outcome = fuzz_runner.run([*command, wheel_name()], {wheel_name(): wheel})
    assert_clean(outcome, wheel.recipe, wheel_name())
