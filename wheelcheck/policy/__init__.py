"""The policy model, loading, and the bundled registry."""

from wheelcheck.policy.policy_loader import load_policy_file, policy_from_dict
from wheelcheck.policy.policy_model import LINUX, Policy, PolicySet
from wheelcheck.policy.registry import bundled_policies

__all__ = ["LINUX", "Policy", "PolicySet", "bundled_policies", "load_policy_file", "policy_from_dict"]
