"""Which policy a repair aims at, and which plan reaches the best one.

``--plat auto``: the most compatible policy any plan reaches. Whitelists grow with newer policies, so an
older policy may need more libraries grafted (manylinux_2_5 does not whitelist libexpat; manylinux_2_12
does). Each distinct plan is judged once, most compatible first, and the search stops as soon as no later
plan could do better: a plan made for policy P cannot reach beyond the most compatible policy sharing it.
``--plat NAME``: the plan for NAME alone; the result is whatever that plan reaches, and must meet NAME.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from wheelcheck.wheel.wheel_model import LEGACY_ALIASES, WheelModel, split_platform
from wheelcheck.errors import RepairError, UsageError
from wheelcheck.host.host_library_search import Located
from wheelcheck.policy.policy_model import LINUX, Policy
from wheelcheck.repair.graft_plan import RepairPlan
from wheelcheck.audit.findings import WheelReport

__all__ = ["Choice", "choose_plan", "requested_policy", "meets", "policy_of_tag"]


@dataclass(frozen=True)
class Choice:
    plan: RepairPlan
    verdict: Policy  # what the planned wheel reaches
    report: WheelReport  # the judgement of the planned wheel
    model: WheelModel  # the planned wheel, as predicted


def meets(policy: Policy, target: Policy) -> bool:
    """Is ``policy`` at least as compatible as ``target``? (musl releases cannot be told apart.)"""
    if policy.libc == target.libc == "musl":
        return True
    return policy.priority >= target.priority


def requested_policy(plat: str | None, candidates: list[Policy], arch: str, libc: str) -> Policy | None:
    """The policy ``--plat`` names (a tag, a policy name or an alias), None for ``auto``."""
    if plat is None or plat == "auto":
        return None
    name = plat
    split = split_platform(plat)
    if split is not None:
        name, plat_arch = split
        if plat_arch != arch:
            raise UsageError(plat, f"--plat is for {plat_arch}, but the wheel is {arch}")
    found = policy_of_tag(name, candidates)
    if found is None or found.is_linux:
        known = ", ".join(p.name for p in candidates) or "none"
        raise UsageError(plat, f"no {libc} policy for {arch} is named so (known: {known})")
    return found


def policy_of_tag(name: str, policies: list[Policy]) -> Policy | None:
    """The policy a name, an alias or a tag (``manylinux_2_17_x86_64``) stands for; LINUX for ``linux``."""
    split = split_platform(name)
    name = split[0] if split else name
    name = LEGACY_ALIASES.get(name, name)
    if name == "linux":
        return LINUX
    return next((p for p in policies if name == p.name or name in p.aliases), None)


def choose_plan(
    candidates: list[Policy],
    requested: Policy | None,
    plan_for: Callable[[Policy], RepairPlan],
    verdict_of: Callable[[RepairPlan], tuple[Policy, WheelReport, WheelModel]],
    located: Located,
) -> Choice | None:
    """The plan to carry out; None when no policy covers the wheel. RepairError when a library is missing."""
    if requested is not None:
        plan = plan_for(requested)
        _raise_missing(plan, located)
        return Choice(plan, *verdict_of(plan))
    best: Choice | None = None
    blocked: RepairPlan | None = None
    tried: set[frozenset[str]] = set()
    for policy in candidates:
        if best is not None and best.verdict.priority >= policy.priority:
            break
        plan = plan_for(policy)
        if plan.graft_key in tried:
            continue
        tried.add(plan.graft_key)
        if plan.missing:
            blocked = blocked or plan
            continue
        choice = Choice(plan, *verdict_of(plan))
        if best is None or choice.verdict.priority > best.verdict.priority:
            best = choice
    if best is None and blocked is not None:
        _raise_missing(blocked, located)
    return best


def _raise_missing(plan: RepairPlan, located: Located) -> None:
    if not plan.missing:
        return
    soname, needed_by = plan.missing[0]
    others = f" (and {len(plan.missing) - 1} more)" if len(plan.missing) > 1 else ""
    raise RepairError(needed_by, f"needs {soname}{others}, which cannot be found on this host: looked in --lib-path, "
                                 f"the RPATH/RUNPATH, LD_LIBRARY_PATH, ld.so.conf and the trusted directories "
                                 f"({located.searched})")
