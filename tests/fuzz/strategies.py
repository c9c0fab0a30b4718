"""Hypothesis strategies that favour the shapes that broke wheelcheck, and the two profiles that run them.

Profiles (``WHEELCHECK_FUZZ=long`` selects the second; ``--hypothesis-profile`` works too):

- ``ci`` (default): few examples per test, derandomized (the same inputs every run, so the suite's time is
  fixed and a failure is reproducible), no deadline (shared CI cores), no example database;
- ``long``: thousands of random examples per test, for a run by hand (``WHEELCHECK_FUZZ=long python -m
  pytest tests/test_fuzz_*.py -n 2``); a failure prints the input's recipe and seed.

The generators mutate real inputs rather than draw bytes blindly: an ELF mutation picks a real seed,
then writes dangerous integers into located fields (headers, program headers, dynamic entries, version
and hash tables, symbols), applies named shapes, flips bytes or truncates; a zip mutation starts from a
valid wheel, applies a named shape or changes header fields (flags, methods, versions, declared sizes,
offsets, names). Mangled names mix ASCII and non-ASCII digits, thousands-digit lengths and the
substitution and template characters the tokenizer branches on.
"""
from __future__ import annotations

import os
from functools import lru_cache

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from tests.fuzz.elfcraft import ElfLayout
from tests.fuzz.shapes import DANGEROUS_INTS, HOSTILE_NAMES, MANGLED, base_wheel, elf_shapes, zip_shapes
from tests.fuzz.zipcraft import Archive, assemble

__all__ = ["PROFILE", "Mutation", "elf_mutations", "zip_mutations", "mangled_names", "layout_of"]

settings.register_profile(
    "ci", max_examples=60, derandomize=True, deadline=None, database=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example])
settings.register_profile(
    "long", max_examples=5000, deadline=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example])
PROFILE = os.environ.get("WHEELCHECK_FUZZ", "ci")
settings.load_profile(PROFILE)


class Mutation(bytes):
    """Mutated bytes that print as the recipe that made them (hypothesis prints it with a failure)."""

    recipe: str

    def __new__(cls, recipe: str, data: bytes) -> Mutation:
        made = super().__new__(cls, data)
        made.recipe = recipe
        return made

    def __repr__(self) -> str:
        return f"<{len(self)} bytes: {self.recipe}>"

    def __reduce__(self):
        return Mutation, (self.recipe, bytes(self))


@lru_cache(maxsize=64)
def layout_of(seed: bytes) -> ElfLayout:
    return ElfLayout(seed)


def _value_for(layout: ElfLayout, size: int, original: int) -> st.SearchStrategy[int]:
    """Integers a field of ``size`` bytes should fear: edges, the file's own sizes and offsets, neighbours."""
    limit = (1 << (8 * size)) - 1
    near = [original - 1, original + 1, original * 2, original + 16, original ^ 0x80, len(layout.data),
            len(layout.data) - 1, len(layout.data) + 1, len(layout.data) // 2]
    if layout.canvas:
        near += [layout.canvas[0], layout.canvas[1], layout.canvas[2]]
    candidates = sorted({v & limit for v in (*DANGEROUS_INTS, *near) if v >= 0})
    return st.one_of(st.sampled_from(candidates), st.integers(0, limit))


@st.composite
def elf_mutations(draw, seeds: dict[str, bytes], max_steps: int = 4) -> Mutation:
    """A real seed changed in one to ``max_steps`` ways."""
    name = draw(st.sampled_from(sorted(seeds)))
    seed = seeds[name]
    layout = layout_of(seed)
    out = bytearray(seed)
    recipe = [name]
    shapes = elf_shapes()
    for _ in range(draw(st.integers(1, max_steps))):
        kind = draw(st.sampled_from(("field", "field", "field", "shape", "bytes")))
        if kind == "field" and layout.fields:
            field = draw(st.sampled_from(layout.fields))
            original = int.from_bytes(seed[field.offset:field.offset + field.size],
                                      "little" if layout.endian == "<" else "big")
            value = draw(_value_for(layout, field.size, original))
            layout.put(out, field.offset, field.size, value)
            recipe.append(f"{field.name}={value:#x}")
        elif kind == "shape":
            shape_name, apply = draw(st.sampled_from(shapes))
            if apply(layout, out):
                recipe.append(shape_name)
        elif kind == "bytes":
            at = draw(st.integers(0, len(out) - 1))
            chunk = draw(st.binary(min_size=1, max_size=16))
            out[at:at + len(chunk)] = chunk
            recipe.append(f"bytes@{at}")
    if draw(st.integers(0, 5)) == 0:  # last, so every change above lands inside the file
        cuts = sorted({f.offset for f in layout.fields} | {f.offset + f.size for f in layout.fields})
        cut = draw(st.one_of(st.sampled_from(cuts), st.integers(0, len(out))))
        del out[cut:]
        recipe.append(f"truncate@{cut}")
    return Mutation(" ".join(recipe), bytes(out))


_MEMBER_FIELDS = ("flags", "method", "version_needed", "file_size", "compress_size", "header_offset", "crc",
                  "external_attr", "name", "extra", "local_flags", "local_method", "local_name",
                  "local_compress_size")
_FLAG_BITS = (0x1, 0x8, 0x20, 0x40, 0x800, 0x2000)
_METHODS = (0, 1, 6, 8, 9, 12, 14, 19, 93, 95, 98, 99, 0xFFFF)


def _field_value(draw, field: str):
    if field in ("flags", "local_flags"):
        bits = draw(st.lists(st.sampled_from(_FLAG_BITS), max_size=3))
        return sum(set(bits)) | draw(st.sampled_from((0, 0, 0, 0x2)))
    if field in ("method", "local_method"):
        return draw(st.one_of(st.sampled_from(_METHODS), st.integers(0, 0xFFFF)))
    if field == "version_needed":
        return draw(st.one_of(st.sampled_from((10, 20, 45, 46, 63, 64, 255, 0xFFFF)), st.integers(0, 0xFFFF)))
    if field in ("name", "local_name"):
        hostile = [n.encode("utf-8", "surrogatepass") for n in HOSTILE_NAMES]
        return b"fuzz/" + draw(st.one_of(st.sampled_from(hostile), st.binary(max_size=40))) + b".so"
    if field == "extra":
        zip64_blocks = (b"\x01\x00\x08\x00" + b"\xff" * 8, b"\x01\x00\xff\xff", b"\x01\x00")
        return draw(st.one_of(st.binary(max_size=40), st.sampled_from(zip64_blocks)))
    if field == "external_attr":
        return draw(st.sampled_from((0o120777, 0o040755, 0o100755, 0o010644, 0))) << 16
    return draw(st.one_of(st.sampled_from(DANGEROUS_INTS), st.integers(0, (1 << 64) - 1)))


@st.composite
def zip_mutations(draw, ext_seeds: dict[str, bytes], max_steps: int = 3) -> Mutation:
    """A valid wheel around a seed, then a named shape or header fields changed."""
    name = draw(st.sampled_from(sorted(ext_seeds)))
    base = _base(ext_seeds[name])
    recipe = [name]
    if draw(st.booleans()):
        shape_name, make = draw(st.sampled_from(_zip_shapes()))
        return Mutation(f"{name} {shape_name}", make(base))
    archive = base.copy()
    for _ in range(draw(st.integers(1, max_steps))):
        member = draw(st.sampled_from(archive.members))
        field = draw(st.sampled_from(_MEMBER_FIELDS))
        value = _field_value(draw, field)
        if field.startswith("local_"):
            member.local[field[len("local_"):]] = value
        else:
            setattr(member, field, value)
        recipe.append(f"{member.name[-12:]!r}.{field}={value!r}"[:80])
    data = bytearray(assemble(archive))
    if draw(st.integers(0, 4)) == 0 and data:
        at = draw(st.integers(0, len(data) - 1))
        data[at] ^= draw(st.integers(1, 255))
        recipe.append(f"xor@{at}")
    return Mutation(" ".join(recipe), bytes(data))


@lru_cache(maxsize=16)
def _base(ext: bytes) -> Archive:
    return base_wheel(ext)


@lru_cache(maxsize=1)
def _zip_shapes():
    return zip_shapes()


_NAME_PIECES = ("S", "s", "St", "Ss", "Sa", "Sb", "S_", "S0_", "I", "E", "N", "K", "B", "B5cxx11", "C1", "D2",
                "T_", "T0_", "L", "Lb", "A", "Dv", "_", "_1", "v", "i", "c", "3foo", "7__cxx11", "12basic_string",
                "\u00b2", "\u0663", "\uff11", "\u00bd", "\U0001d7ce", "\x00", "\ufffd", "9999999999", "0")


@st.composite
def mangled_names(draw) -> str:
    """Mangled-looking names: real prefixes, then tokens, digit runs (ASCII or not, up to 5,000 long)."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.sampled_from(MANGLED))
    prefix = draw(st.sampled_from(("_Z", "_ZN", "_ZNK", "_ZNSt", "_ZTV", "_ZTIN", "_ZGVN", "_ZZN", "_ZSt", "")))
    parts = [prefix]
    for _ in range(draw(st.integers(0, 12))):
        kind = draw(st.integers(0, 5))
        if kind == 0:
            parts.append(draw(st.sampled_from(("1", "9", "\u00b2", "\u0663"))) * draw(st.integers(1, 5000)))
        elif kind == 1:
            parts.append(draw(st.text(max_size=6)))
        else:
            parts.append(draw(st.sampled_from(_NAME_PIECES)))
    return "".join(parts)
