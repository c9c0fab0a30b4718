"""PEP 825 as read: variant wheel file names (wheel/wheel_filename.py) and variant metadata
(wheel/variant_metadata.py), the PEP's own JSON schema (tests/data/pep825) as the oracle for the latter."""

from __future__ import annotations

import copy
import json

import pytest
from packaging.utils import parse_wheel_filename as packaging_parse

from tests.helpers import ROOT
from wheelcheck.wheel.variant_metadata import read_variant_json, release_of_index_name
from wheelcheck.wheel.wheel_filename import (InvalidWheelFilename, parse_wheel_filename, platform_component,
                                             split_label, with_platforms)

jsonschema = pytest.importorskip("jsonschema")
SCHEMA = json.loads((ROOT / "tests" / "data" / "pep825" / "variant-schema-0.1.1.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("filename, label", [
    # the PEP's examples ("Variant label")
    ("numpy-2.3.2-cp313-cp313t-musllinux_1_2_x86_64.whl", None),
    ("numpy-2.3.2-cp313-cp313t-musllinux_1_2_x86_64-x86_64_v3.whl", "x86_64_v3"),
    ("numpy-2.3.2-cp313-cp313t-musllinux_1_2_x86_64-null.whl", "null"),
    # a build tag starts with a digit, a Python tag never does: six components are told apart by the third
    ("numpy-2.3.2-1-cp313-cp313t-musllinux_1_2_x86_64.whl", None),
    ("numpy-2.3.2-1-cp313-cp313t-musllinux_1_2_x86_64-x86_64_v3.whl", "x86_64_v3"),
    ("torch-2.13.0-cp312-cp312-manylinux_2_28_x86_64.manylinux2014_x86_64-cuda13.0.whl", "cuda13.0"),
])
def test_file_names_of_the_pep(filename, label):
    parsed = parse_wheel_filename(filename)
    assert parsed.variant_label == label
    plain, found = split_label(filename)
    assert found == label
    # what is left is a wheel name packaging reads as such, with the same parts
    assert packaging_parse(plain) == (parsed.name, parsed.version, parsed.build, parsed.tags)
    if label is not None:  # packaging alone refuses it: the reason wheelcheck refused variant wheels
        with pytest.raises(InvalidWheelFilename):
            packaging_parse(filename)


@pytest.mark.parametrize("filename", [
    "numpy-2.3.2-cp313-cp313t-musllinux_1_2_x86_64-X86.whl",  # upper case
    "numpy-2.3.2-cp313-cp313t-musllinux_1_2_x86_64-v-3.whl",  # a dash: eight components
    "numpy-2.3.2-cp313-cp313t-musllinux_1_2_x86_64-x\n.whl",  # a newline $ would let through
    "numpy-2.3.2-x1-cp313-cp313t-musllinux_1_2_x86_64-v3.whl",  # seven components, the third no build tag
    "numpy-2.3.2-1-3cp-cp313t-musllinux_1_2_x86_64-v3.whl",  # a Python tag that starts with a digit
    "numpy-2.3.2-cp313-cp313t-musllinux_1_2_x86_64-x86_64_v3.zip",
])
def test_names_the_pep_refuses(filename):
    with pytest.raises(InvalidWheelFilename):
        parse_wheel_filename(filename)


def test_platforms_change_and_the_label_stays():
    name = "numpy-2.3.2-1-cp313-cp313t-linux_x86_64-x86_64_v3.whl"
    assert platform_component(name) == "linux_x86_64"
    assert with_platforms(name, ["manylinux_2_17_x86_64", "manylinux2014_x86_64"]) == \
        "numpy-2.3.2-1-cp313-cp313t-manylinux_2_17_x86_64.manylinux2014_x86_64-x86_64_v3.whl"
    assert platform_component("not a wheel") == ""


PEP_EXAMPLE = {  # "Variant metadata", Example, without its comments
    "$schema": "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json",
    "default-priorities": {"namespace": ["x86_64", "aarch64", "blas_lapack"]},
    "variants": {"x86_64_v3_openblas": {"blas_lapack": {"library": ["openblas"]}, "x86_64": {"level": ["v3"]}}},
}


def test_the_pep_example_reads_with_its_properties():
    meta = read_variant_json(json.dumps(PEP_EXAMPLE), "x86_64_v3_openblas")
    assert meta.readable and meta.format_version == (0, 1, 1)
    assert meta.namespaces == ("x86_64", "aarch64", "blas_lapack")
    (label, props), = meta.variants
    assert label == "x86_64_v3_openblas"
    assert sorted(f"{ns} :: {f} :: {v}" for ns, fs in props for f, vs in fs for v in vs) == \
        ["blas_lapack :: library :: openblas", "x86_64 :: level :: v3"]
    # the only problem: a draft format version
    assert [p.severity for p in meta.problems] == ["warning"] and "draft" in meta.problems[0].text


def _mutations():
    """Documents that break the PEP in one way each (what the schema says, and what the text adds)."""
    def changed(edit):
        doc = copy.deepcopy(PEP_EXAMPLE)
        edit(doc)
        return doc
    variant = ("variants", "x86_64_v3_openblas")
    yield "no $schema", changed(lambda d: d.pop("$schema"))
    yield "no default-priorities", changed(lambda d: d.pop("default-priorities"))
    yield "empty namespace list", changed(lambda d: d["default-priorities"].update(namespace=[]))
    yield "repeated namespace", changed(lambda d: d["default-priorities"].update(namespace=["x86_64", "x86_64"]))
    yield "upper-case namespace", changed(lambda d: d["default-priorities"]["namespace"].append("BLAS"))
    yield "no variants", changed(lambda d: d.pop("variants"))
    yield "a bad value", changed(lambda d: d[variant[0]][variant[1]]["x86_64"].update(level=["V3"]))
    yield "an empty value list", changed(lambda d: d[variant[0]][variant[1]]["x86_64"].update(level=[]))
    yield "a repeated value", changed(lambda d: d[variant[0]][variant[1]]["x86_64"].update(level=["v3", "v3"]))
    yield "a bad feature", changed(lambda d: d[variant[0]][variant[1]]["x86_64"].update({"Level": ["v3"]}))
    yield "a bad namespace", changed(lambda d: d[variant[0]][variant[1]].update({"x86-64": {"level": ["v3"]}}))
    yield "a value not a list", changed(lambda d: d[variant[0]][variant[1]]["x86_64"].update(level="v3"))
    yield "a bad label", changed(lambda d: d["variants"].update({"X86": {}}))
    yield "an extra key", changed(lambda d: d.update(extra=1))
    yield "the feature key of 0.0.1", changed(lambda d: d["default-priorities"].update(feature={}))


@pytest.mark.parametrize("what, doc", list(_mutations()))
def test_what_the_schema_refuses_is_reported(what, doc):
    """The oracle: every document PEP 825's schema refuses gets an error or a warning from wheelcheck."""
    assert list(jsonschema.Draft202012Validator(SCHEMA).iter_errors(doc)), f"the schema takes {what}"
    meta = read_variant_json(json.dumps(doc), None)
    assert [p for p in meta.problems if p.severity in ("error", "warning") and "draft" not in p.text], what


def test_what_the_text_adds_to_the_schema():
    """MUSTs of the PEP's text that its schema cannot say: the namespace list covers the properties, a wheel's
    variants hold its own label alone, null has no property."""
    doc = copy.deepcopy(PEP_EXAMPLE)
    doc["default-priorities"]["namespace"] = ["x86_64"]
    assert not list(jsonschema.Draft202012Validator(SCHEMA).iter_errors(doc))
    assert any("blas_lapack" in p.text and p.severity == "error" for p in read_variant_json(json.dumps(doc)).problems)
    wrong_label = read_variant_json(json.dumps(PEP_EXAMPLE), "x86_64_v4")
    assert any("'x86_64_v4'" in p.text and p.severity == "error" for p in wrong_label.problems)
    null = {**PEP_EXAMPLE, "variants": {"null": {"x86_64": {"level": ["v3"]}}}}
    assert any("null" in p.text and p.severity == "error" for p in read_variant_json(json.dumps(null), "null").problems)
    assert not [p for p in read_variant_json(json.dumps({**PEP_EXAMPLE, "variants": {"null": {}}}), "null").problems
                if p.severity == "error"]


@pytest.mark.parametrize("text, expected", [
    (b"\xff\xfe not utf-8", "is not JSON"),
    (b"[" * 100_000, "is not JSON"),  # nesting deep enough to exhaust the parser's recursion
    (b"[]", "is not a JSON object"),
])
def test_unreadable_metadata_is_a_problem_not_a_crash(text, expected):
    meta = read_variant_json(text, "x86_64_v3")
    assert not meta.readable and meta.problems[0].severity == "error" and expected in meta.problems[0].text


def test_an_unknown_major_version_is_refused():
    doc = {**PEP_EXAMPLE, "$schema": "https://packaging.python.org/variants/v2.0.0.json"}
    meta = read_variant_json(json.dumps(doc), "x86_64_v3_openblas")
    assert not meta.readable and "MUST reject" in meta.problems[-1].text
    final = read_variant_json(json.dumps({**PEP_EXAMPLE, "$schema": "https://packaging.python.org/v1.0.0.json"}),
                              "x86_64_v3_openblas")
    assert final.readable and not final.problems


def test_index_file_names():
    assert release_of_index_name("numpy-2.3.2-variants.json") == ("numpy", "2.3.2")
    assert release_of_index_name("Foo_Bar-1.0.0-variants.json") == ("foo-bar", "1.0.0")
    assert release_of_index_name("variants.json") is None
    assert release_of_index_name("numpy-not.a.version-variants.json") is None
