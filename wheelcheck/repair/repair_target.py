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

from wheelcheck.wheel.wheel_model import WheelModel
from wheelcheck.errors import RepairError
from wheelcheck.host.host_library_search import Located
from wheelcheck.policy.policy_model import Policy
from wheelcheck.repair.graft_plan import RepairPlan
from wheelcheck.audit.findings import WheelReport

__all__ = ["Choice", "choose_plan"]


@dataclass(frozen=True)
class Choice:
    plan: RepairPlan
    verdict: Policy  # what the planned wheel reaches
    report: WheelReport  # the judgement of the planned wheel
    model: WheelModel  # the planned wheel, as predicted


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
        if best is not None and best.verdict.meets(policy):
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
