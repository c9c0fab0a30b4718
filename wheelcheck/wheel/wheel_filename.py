"""Wheel file names, variant wheels (PEP 825) included: the one place that takes a wheel's name apart.

PEP 825 adds an optional last component, the variant label::

    {distribution}-{version}(-{build tag})?-{python tag}-{abi tag}-{platform tag}(-{variant label})?.whl

The label is ``^[0-9a-z_.]+$``, and a Python tag never starts with a digit while a build tag always does: so a
name of six components is a build tag when its third starts with a digit, else a label; seven components are
both. The rest is packaging's ``parse_wheel_filename``, on the name without its label.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from packaging.tags import Tag
from packaging.utils import BuildTag, InvalidWheelFilename, NormalizedName, parse_wheel_filename as _parse
from packaging.version import Version

__all__ = ["WheelFilename", "InvalidWheelFilename", "LABEL", "parse_wheel_filename", "split_label",
           "platform_component", "with_platforms"]

LABEL = re.compile(r"[0-9a-z_.]+")  # PEP 825, "Variant label": ^[0-9a-z_.]+$, matched whole (fullmatch)


@dataclass(frozen=True)
class WheelFilename:
    name: NormalizedName
    version: Version
    build: BuildTag
    tags: frozenset[Tag]
    variant_label: str | None = None  # None: a non-variant wheel


def split_label(filename: str) -> tuple[str, str | None]:
    """('numpy-2.3.2-cp313-cp313t-musllinux_1_2_x86_64.whl', 'x86_64_v3') for the variant wheel of that name;
    (filename, None) when it has no label. InvalidWheelFilename for a label the PEP forbids."""
    if not filename.endswith(".whl"):
        raise InvalidWheelFilename(f"Invalid wheel filename (extension must be '.whl'): {filename!r}")
    parts = filename[: -len(".whl")].split("-")
    has_label = len(parts) == 7 or (len(parts) == 6 and not parts[2][:1].isdigit())
    if not has_label:
        return filename, None
    label = parts[-1]
    if not LABEL.fullmatch(label):
        raise InvalidWheelFilename(f"Invalid variant label: {label!r} in {filename!r} (PEP 825: ^[0-9a-z_.]+$)")
    python = parts[-4]  # seven components: a build tag before it, which packaging checks
    if python[:1].isdigit():
        raise InvalidWheelFilename(f"Invalid python tag: {python!r} starts with a digit in {filename!r}")
    return "-".join(parts[:-1]) + ".whl", label


def parse_wheel_filename(filename: str) -> WheelFilename:
    """The parts of a wheel's file name, variant label included. InvalidWheelFilename (packaging's) when it is
    no wheel name; its message quotes the name."""
    plain, label = split_label(filename)
    name, version, build, tags = _parse(plain)
    return WheelFilename(name, version, build, tags, label)


def platform_component(filename: str) -> str:
    """The platform tag component of a wheel's file name ('manylinux_2_17_x86_64.manylinux2014_x86_64'), the
    variant label left out; '' for a name that is not a wheel's."""
    try:
        plain, _label = split_label(filename)
    except InvalidWheelFilename:
        return ""
    return plain[: -len(".whl")].rpartition("-")[2]


def with_platforms(filename: str, platforms: list[str]) -> str:
    """The file name with its platform component made ``platforms`` (joined by dots, in the order given), the
    variant label kept where it was."""
    plain, label = split_label(filename)
    prefix = plain[: -len(".whl")].rpartition("-")[0]
    return f"{prefix}-{'.'.join(platforms)}" + (f"-{label}" if label is not None else "") + ".whl"
