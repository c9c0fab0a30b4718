"""The variant metadata of a wheel (PEP 825) against the PEP: variant-metadata findings, one per problem.

A variant wheel MUST carry ``.dist-info/variant.json`` mapping its label to its properties; what the file
breaks of the PEP is read in wheel/variant_metadata.py. A wheel without a label that carries the file is a
non-variant wheel to every installer, which never reads the file: most often a variant wheel renamed.
"""

from __future__ import annotations

from wheelcheck.audit.findings import Finding
from wheelcheck.wheel.variant_metadata import VARIANT_JSON
from wheelcheck.wheel.wheel_model import WheelModel

__all__ = ["variant_metadata_findings"]

_FIX = ("write variant.json with a tool that implements PEP 825 (variantlib's make-variant), from the build's "
        "variant properties")


def variant_metadata_findings(model: WheelModel) -> list[Finding]:
    member = f"{model.data_dir.removesuffix('.data')}.dist-info/{VARIANT_JSON}"
    if model.variant_label is not None and model.variant is None:
        return [Finding("variant-metadata", "error", None,
                        f"is a variant wheel (label {model.variant_label!r}) without {member}: PEP 825 says a variant "
                        "wheel MUST carry it, and installers cannot tell what the label means",
                        _FIX, cause="is a variant wheel without variant.json")]
    if model.variant is None:
        return []
    if model.variant_label is None:
        return [Finding("variant-metadata", "warning", member,
                        "is variant metadata, but the file name has no variant label: installers take the wheel for "
                        "a non-variant wheel and never read it",
                        "keep the variant label in the file name (a renamed variant wheel loses it), or drop the file",
                        cause="is variant metadata in a wheel named without a label")]
    return [Finding("variant-metadata", problem.severity, member, problem.text, _FIX,
                    cause=problem.text) for problem in model.variant.problems]
