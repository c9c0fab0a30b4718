"""Mutations that favour the shapes that broke wheelcheck, written once for two sources of choices.

Every mutation takes a ``Chooser``: ``RandomChooser`` (a seeded ``random.Random``, for the long campaign of
tests.fuzz.campaign) or the hypothesis-backed one in tests.fuzz.strategies (for the test suite, where
hypothesis also shrinks a failure to a small recipe).

The mutations change real inputs rather than draw bytes blindly: an ELF mutation picks a real seed, then
writes dangerous integers into located fields (headers, program headers, dynamic entries, version and
hash tables, symbols), applies named shapes, overwrites bytes and may truncate; a zip mutation starts
from a valid wheel, applies a named shape or changes header fields (flags, methods, versions, declared
sizes, offsets, names). Mangled names mix ASCII and non-ASCII digits, thousands-digit lengths and the
substitution and template characters the tokenizer branches on.
"""
from __future__ import annotations

import random
from collections.abc import Sequence
from functools import lru_cache
from typing import Protocol, TypeVar

from tests.fuzz.elfcraft import ElfLayout
from tests.fuzz.shapes import DANGEROUS_INTS, HOSTILE_NAMES, MANGLED, base_wheel, elf_shapes, zip_shapes
from tests.fuzz.zipcraft import Archive, assemble

__all__ = ["Chooser", "RandomChooser", "Mutation", "mutate_elf", "mutate_zip", "mangled_name", "layout_of"]

T = TypeVar("T")


class Chooser(Protocol):
    def pick(self, options: Sequence[T]) -> T: ...

    def integer(self, low: int, high: int) -> int: ...

    def blob(self, max_size: int, min_size: int = 0) -> bytes: ...


class RandomChooser:
    """Choices from a seeded random.Random (the campaign: fast, reproducible from the seed)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def pick(self, options: Sequence[T]) -> T:
        return options[self.rng.randrange(len(options))]

    def integer(self, low: int, high: int) -> int:
        return self.rng.randint(low, high)

    def blob(self, max_size: int, min_size: int = 0) -> bytes:
        return self.rng.randbytes(self.rng.randint(min_size, max_size))


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


@lru_cache(maxsize=1024)  # one per seed: corpus campaigns mutate hundreds
def layout_of(seed: bytes) -> ElfLayout:
    return ElfLayout(seed)


def _value_for(choose: Chooser, layout: ElfLayout, size: int, original: int) -> int:
    """An integer a field of ``size`` bytes should fear: edges, the file's own sizes and offsets, neighbours."""
    limit = (1 << (8 * size)) - 1
    near = [original - 1, original + 1, original * 2, original + 16, original ^ 0x80, len(layout.data),
            len(layout.data) - 1, len(layout.data) + 1, len(layout.data) // 2]
    if layout.canvas:
        near += [layout.canvas[0], layout.canvas[1], layout.canvas[2]]
    candidates = sorted({v & limit for v in (*DANGEROUS_INTS, *near) if v >= 0})
    return choose.pick(candidates) if choose.integer(0, 2) else choose.integer(0, limit)


def mutate_elf(choose: Chooser, seeds: dict[str, bytes], max_steps: int = 4) -> Mutation:
    """A real seed changed in one to ``max_steps`` ways."""
    name = choose.pick(sorted(seeds))
    seed = seeds[name]
    layout = layout_of(seed)
    out = bytearray(seed)
    recipe = [name]
    shapes = elf_shapes()
    for _ in range(choose.integer(1, max_steps)):
        kind = choose.pick(("field", "field", "field", "shape", "bytes"))
        if kind == "field" and layout.fields:
            field = choose.pick(layout.fields)
            original = int.from_bytes(seed[field.offset:field.offset + field.size],
                                      "little" if layout.endian == "<" else "big")
            value = _value_for(choose, layout, field.size, original)
            layout.put(out, field.offset, field.size, value)
            recipe.append(f"{field.name}={value:#x}")
        elif kind == "shape":
            shape_name, apply = choose.pick(shapes)
            if apply(layout, out):
                recipe.append(shape_name)
        elif kind == "bytes":
            at = choose.integer(0, len(out) - 1)
            chunk = choose.blob(16, min_size=1)
            out[at:at + len(chunk)] = chunk
            recipe.append(f"bytes@{at}")
    if choose.integer(0, 5) == 0:  # last, so every change above lands inside the file
        cuts = sorted({f.offset for f in layout.fields} | {f.offset + f.size for f in layout.fields})
        cut = choose.pick(cuts) if choose.integer(0, 1) else choose.integer(0, len(out))
        del out[cut:]
        recipe.append(f"truncate@{cut}")
    return Mutation(" ".join(recipe), bytes(out))


_MEMBER_FIELDS = ("flags", "method", "version_needed", "file_size", "compress_size", "header_offset", "crc",
                  "external_attr", "name", "extra", "local_flags", "local_method", "local_name",
                  "local_compress_size")
_FLAG_BITS = (0x1, 0x8, 0x20, 0x40, 0x800, 0x2000)
_METHODS = (0, 1, 6, 8, 9, 12, 14, 19, 93, 95, 98, 99, 0xFFFF)


def _field_value(choose: Chooser, field: str):
    if field in ("flags", "local_flags"):
        bits = {choose.pick(_FLAG_BITS) for _ in range(choose.integer(0, 3))}
        return sum(bits) | choose.pick((0, 0, 0, 0x2))
    if field in ("method", "local_method"):
        return choose.pick(_METHODS) if choose.integer(0, 2) else choose.integer(0, 0xFFFF)
    if field == "version_needed":
        return choose.pick((10, 20, 45, 46, 63, 64, 255, 0xFFFF)) if choose.integer(0, 2) else choose.integer(0, 0xFFFF)
    if field in ("name", "local_name"):
        hostile = [n.encode("utf-8", "surrogatepass") for n in HOSTILE_NAMES]
        return b"fuzz/" + (choose.pick(hostile) if choose.integer(0, 1) else choose.blob(40)) + b".so"
    if field == "extra":
        zip64_blocks = (b"\x01\x00\x08\x00" + b"\xff" * 8, b"\x01\x00\xff\xff", b"\x01\x00")
        return choose.pick(zip64_blocks) if choose.integer(0, 1) else choose.blob(40)
    if field == "external_attr":
        return choose.pick((0o120777, 0o040755, 0o100755, 0o010644, 0)) << 16
    return choose.pick(DANGEROUS_INTS) if choose.integer(0, 2) else choose.integer(0, (1 << 64) - 1)


def mutate_zip(choose: Chooser, ext_seeds: dict[str, bytes], max_steps: int = 3) -> Mutation:
    """A valid wheel around a seed, then a named shape or header fields changed."""
    name = choose.pick(sorted(ext_seeds))
    base = _base(ext_seeds[name])
    recipe = [name]
    if choose.integer(0, 1):
        shape_name, make = choose.pick(_zip_shapes())
        return Mutation(f"{name} {shape_name}", make(base))
    archive = base.copy()
    for _ in range(choose.integer(1, max_steps)):
        member = choose.pick(archive.members)
        field = choose.pick(_MEMBER_FIELDS)
        value = _field_value(choose, field)
        if field.startswith("local_"):
            member.local[field[len("local_"):]] = value
        else:
            setattr(member, field, value)
        recipe.append(f"{member.name[-12:]!r}.{field}={value!r}"[:80])
    data = bytearray(assemble(archive))
    if choose.integer(0, 4) == 0 and data:
        at = choose.integer(0, len(data) - 1)
        data[at] ^= choose.integer(1, 255)
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


def mangled_name(choose: Chooser) -> str:
    """A mangled-looking name: a real prefix, then tokens, digit runs (ASCII or not, up to 5,000 long)."""
    if choose.integer(0, 9) == 0:
        return choose.pick(MANGLED)
    parts = [choose.pick(("_Z", "_ZN", "_ZNK", "_ZNSt", "_ZTV", "_ZTIN", "_ZGVN", "_ZZN", "_ZSt", ""))]
    for _ in range(choose.integer(0, 12)):
        kind = choose.integer(0, 5)
        if kind == 0:
            parts.append(choose.pick(("1", "9", "\u00b2", "\u0663")) * choose.integer(1, 5000))
        elif kind == 1:
            parts.append(choose.blob(6).decode("utf-8", "replace"))
        else:
            parts.append(choose.pick(_NAME_PIECES))
    return "".join(parts)
