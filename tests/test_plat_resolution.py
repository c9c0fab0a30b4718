"""--plat becomes a policy in one place (PolicySet.resolve) and "meets" is decided in one (Policy.meets), for
audit and repair alike. Unit tests on the bundled policies, no compiler needed."""

from __future__ import annotations

import pytest

from wheelcheck.errors import UsageError
from wheelcheck.policy.policy_loader import policy_from_dict
from wheelcheck.policy.policy_model import LINUX, PolicySet
from wheelcheck.policy.registry import bundled_policies

POLICIES = bundled_policies()


def named(name: str):
    return POLICIES.find(name)


@pytest.mark.parametrize("plat, arch, libc, expected", [
    ("manylinux_2_17_x86_64", "x86_64", "glibc", "manylinux_2_17"),
    ("manylinux2014_aarch64", "aarch64", "glibc", "manylinux_2_17"),  # a legacy alias, as a tag
    ("manylinux2014", "ppc64le", "glibc", "manylinux_2_17"),  # arch-less: this wheel's arch
    ("manylinux_2_28", "s390x", "glibc", "manylinux_2_28"),
    ("manylinux1", "i686", "glibc", "manylinux_2_5"),
    ("musllinux_1_1_x86_64", "x86_64", "musl", "musllinux_1_1"),  # not judged (musl 1.1 and 1.2 look alike)
    ("musllinux_1_2", "armv7l", "musl", "musllinux_1_2"),
    ("manylinux_2_39", "riscv64", "glibc", "manylinux_2_39"),
])
def test_resolve_names_and_tags(plat, arch, libc, expected):
    assert POLICIES.resolve(plat, arch, libc).name == expected


@pytest.mark.parametrize("plat", [None, "", "auto"])
def test_nothing_asked(plat):
    assert POLICIES.resolve(plat, "x86_64", "glibc") is None


def test_an_arch_less_name_of_the_other_libc_does_not_apply():
    assert POLICIES.resolve("manylinux_2_28", "x86_64", "musl") is None
    assert POLICIES.resolve("musllinux_1_2", "aarch64", "glibc") is None


@pytest.mark.parametrize("plat, arch, libc, message", [
    ("manylinux_2_17_aarch64", "x86_64", "glibc", "'manylinux_2_17_aarch64' is a tag for aarch64, but the wheel is x86_64"),
    ("musllinux_1_2_x86_64", "x86_64", "glibc", "'musllinux_1_2_x86_64' is a musl tag, but the wheel is for glibc"),
    ("manylinux_9_99_x86_64", "x86_64", "glibc", "'manylinux_9_99_x86_64': no policy is named so"),
    ("manylinux1", "aarch64", "glibc", "manylinux_2_5 does not cover aarch64"),
    ("manylinux_2_43", "aarch64", "glibc", "manylinux_2_43 does not cover aarch64"),
    ("linux_x86_64", "x86_64", "glibc", "no policy is named so"),
])
def test_mismatches_are_usage_errors(plat, arch, libc, message):
    with pytest.raises(UsageError) as caught:
        POLICIES.resolve(plat, arch, libc)
    assert caught.value.path == "--plat" and message in caught.value.problem


def test_a_policy_file_tag_resolves_by_its_longest_name():
    acme = policy_from_dict({**dict(named("manylinux_2_28").document), "name": "acme_2_28", "aliases": [],
                             "priority": 63}, "test")
    mine = PolicySet([*POLICIES, acme])
    assert mine.resolve("acme_2_28_x86_64", "x86_64", "glibc") is acme
    assert mine.resolve("acme_2_28", "aarch64", "glibc") is acme


def test_meets():
    m2_5, m2_17, m2_28 = named("manylinux_2_5"), named("manylinux_2_17"), named("manylinux_2_28")
    musl1_1, musl1_2 = named("musllinux_1_1"), named("musllinux_1_2")
    assert m2_5.meets(m2_17) and m2_17.meets(m2_17) and not m2_28.meets(m2_17)
    assert musl1_2.meets(musl1_1) and musl1_1.meets(musl1_2)  # musl releases cannot be told apart
    assert not m2_5.meets(musl1_2) and not musl1_1.meets(m2_28)  # never across libcs
    assert all(p.meets(LINUX) for p in (m2_5, musl1_2, LINUX))
    assert not LINUX.meets(m2_28) and not LINUX.meets(musl1_2)


def test_claimed_platforms_are_looked_up_without_errors():
    assert POLICIES.named("manylinux2014", "aarch64", "glibc").name == "manylinux_2_17"
    assert POLICIES.named("musllinux_1_1", "x86_64", "musl").name == "musllinux_1_1"
    assert POLICIES.named("manylinux1", "aarch64", "glibc") is None
    assert POLICIES.named("manylinux_9_99", "x86_64", "glibc") is None
    assert POLICIES.named("linux", "x86_64", "glibc") is None


def test_plat_takes_a_tag_between_two_policies_as_a_claim_does(tmp_path):
    """--plat manylinux_2_30_x86_64 (no policy has that name) is judged rule by rule, as a wheel claiming it;
    the sample needs GLIBC_2.29: it meets 2_30 and fails 2_25; repair retags it for 2_30 and refuses 2_25."""
    from tests.helpers import ROOT, run_cli

    sample = ROOT / "samples" / "demo_ext-1.0-cp311-cp311-linux_x86_64.whl"
    met = run_cli("audit", "--any-platform-tag", "--plat", "manylinux_2_30_x86_64", sample)
    assert met.returncode == 0 and "PASS meets manylinux_2_30_x86_64" in met.stdout, met.stdout + met.stderr
    unmet = run_cli("audit", "--any-platform-tag", "--plat", "manylinux_2_25", sample)
    assert unmet.returncode == 1 and "required manylinux_2_25_x86_64" in unmet.stdout
    proc = run_cli("repair", "--plat", "manylinux_2_30_x86_64", "-w", tmp_path / "a", sample)
    assert proc.returncode == 0 and [p.name for p in (tmp_path / "a").iterdir()] == [
        "demo_ext-1.0-cp311-cp311-manylinux_2_30_x86_64.manylinux_2_31_x86_64.whl"]
    proc = run_cli("repair", "--plat", "manylinux_2_25_x86_64", "-w", tmp_path / "b", sample)
    assert proc.returncode == 1 and "cannot reach manylinux_2_25_x86_64" in proc.stdout
    wrong = run_cli("audit", "--plat", "musllinux_1_2_x86_64", sample)
    assert wrong.returncode == 2 and "is a musl tag, but the wheel is for glibc" in wrong.stderr
