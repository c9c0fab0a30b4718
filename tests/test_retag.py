"""Retagging: file names and WHEEL Tag lines as auditwheel's add_platforms writes them (the oracle), except
for the documented differences (unmet claims removed, Root-Is-Purelib always false)."""
from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from auditwheel.wheeltools import InWheelCtx, add_platforms

from tests.fixtures.wheels import build_wheel
from wheelcheck.policy.registry import bundled_policies
from wheelcheck.repair.retag import added_platforms, removed_platforms, retag_filename, retag_wheel_text

POLICIES = bundled_policies()


def policy(name: str):
    return POLICIES.find(name)


def tags_of(text: str) -> list[str]:
    return [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Tag:")]


def auditwheel_retag(wheel: Path, platforms: list[str], out_dir: Path) -> tuple[str, str]:
    """auditwheel's own add_platforms on an unpacked copy: (new file name, new WHEEL text)."""
    out_dir.mkdir()
    with InWheelCtx(wheel, out_dir / wheel.name) as ctx:
        new = add_platforms(ctx, platforms, ["linux_x86_64"])  # what auditwheel removes for an x86_64 policy
        text = next(ctx.path.glob("*.dist-info")).joinpath("WHEEL").read_text()
    return new.name, text


@pytest.mark.parametrize("tag, verdict, requested", [
    ("cp311-cp311-linux_x86_64", "manylinux_2_17", None),
    ("cp311-cp311-linux_x86_64", "manylinux_2_5", "manylinux_2_28"),  # reaches better than asked: both
    ("py3-none-linux_x86_64", "manylinux_2_28", None),
    ("cp310.cp311-abi3-linux_x86_64", "manylinux_2_34", None),  # two interpreters, one ABI
])
def test_same_tags_as_auditwheel(tmp_path, tag, verdict, requested):
    wheel = build_wheel(tmp_path / "in", "pkg", "1.0", tag, {"pkg/__init__.py": b""})
    add = added_platforms(policy(verdict), policy(requested) if requested else None, "x86_64")
    theirs_name, theirs_text = auditwheel_retag(wheel, add, tmp_path / "aw")
    remove = removed_platforms(["linux_x86_64"], "x86_64", policy(verdict), policy)
    assert retag_filename(wheel.name, add, remove) == theirs_name
    with zipfile.ZipFile(wheel) as zf:
        text = zf.read("pkg-1.0.dist-info/WHEEL").decode()
    assert tags_of(retag_wheel_text(text, add, remove)) == tags_of(theirs_text)


def test_claims_the_result_does_not_meet_are_removed():
    verdict = policy("manylinux_2_28")
    current = ["manylinux_2_17_x86_64", "manylinux_2_34_x86_64"]
    remove = removed_platforms(current, "x86_64", verdict, policy)
    assert remove == {"linux_x86_64", "any", "manylinux_2_17_x86_64"}  # 2_34 is true of a 2_28 wheel
    name = retag_filename("pkg-1.0-cp311-cp311-manylinux_2_17_x86_64.manylinux_2_34_x86_64.whl",
                          verdict.tags("x86_64"), remove)
    assert name == "pkg-1.0-cp311-cp311-manylinux_2_28_x86_64.manylinux_2_34_x86_64.whl"


def test_wheel_text_is_untouched_when_nothing_changes():
    text = "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp311-cp311-manylinux_2_17_x86_64\n" \
           "Tag: cp311-cp311-manylinux2014_x86_64\nBuild: 1\n"
    add = policy("manylinux_2_17").tags("x86_64")
    assert retag_wheel_text(text, add, {"linux_x86_64", "any"}) is text


def test_root_is_purelib_becomes_false_and_tags_stay_in_place():
    text = "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: cp311-cp311-linux_x86_64\nBuild: 1\n"
    out = retag_wheel_text(text, ["manylinux_2_17_x86_64", "manylinux2014_x86_64"], {"linux_x86_64", "any"})
    assert out == ("Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp311-cp311-manylinux_2_17_x86_64\n"
                   "Tag: cp311-cp311-manylinux2014_x86_64\nBuild: 1\n")
