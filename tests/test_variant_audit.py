"""PEP 825 variant wheels through every command: read, judged (the x86-64 level, the C library), reported, kept
by repair, checked against each other and the index's variants.json. The wheels are built here, with gcc."""

from __future__ import annotations

import json
import zipfile

import pytest

from tests.fixtures.sources import MATH_BODY, MATH_PRELUDE, extension_source
from tests.fixtures.variant_wheels import variant_json, variant_wheel
from tests.helpers import ROOT, run_cli
from wheelcheck import audit
from wheelcheck.errors import UsageError

# POPCNT at -march=x86-64-v2, AVX2 at v3: each level's compiler emits its instructions for these
KERNELS = r"""
int bits(unsigned long long v) { return __builtin_popcountll(v); }
void scale(int *y, int n) { for (int i = 0; i < n; i++) y[i] = y[i] * 5 + (y[i] >> 3); }
"""
DISPATCHED = r"""
__attribute__((target("avx2"))) static void add_avx2(int *y, int n) { for (int i = 0; i < n; i++) y[i] += 3; }
static void add_plain(int *y, int n) { for (int i = 0; i < n; i++) y[i] += 3; }
void add(int *y, int n) { if (__builtin_cpu_supports("avx2")) add_avx2(y, n); else add_plain(y, n); }
"""


def ext_for(build, module, level, prelude=KERNELS, **kw):
    march = "x86-64" if level == 1 else f"x86-64-v{level}"
    return build.compile_c(extension_source(module, prelude=prelude), f"{module}-v{level}.so",
                           flags=("-O3", f"-march={march}"), **kw)


def props_of(report):
    return {p["property"]: p["status"] for p in report.variant["properties"]}


def level_wheel(build, tmp_path, claim, built, prelude=KERNELS):
    label = f"x86_64_v{claim}"
    return variant_wheel(tmp_path, "lev", label, {"x86_64": {"level": [f"v{claim}"]}},
                         ext_for(build, "_lev", built, prelude))


@pytest.mark.parametrize("claim, built, status", [(2, 2, "holds"), (3, 2, "holds"), (1, 2, "false"), (2, 3, "false")])
def test_the_x86_64_level_property_against_the_code(build, tmp_path, claim, built, status):
    report = audit(level_wheel(build, tmp_path, claim, built)).wheels[0]
    assert report.variant["label"] == f"x86_64_v{claim}"
    assert props_of(report) == {f"x86_64 :: level :: v{claim}": status}
    isa = [f for f in report.findings if f.rule == "isa-instructions"]
    if status == "false":  # the property is the claim isa-instructions holds the code to: an error
        (finding,) = isa
        assert finding.severity == "error" and f"the variant property x86_64 :: level :: v{claim}" in finding.message
        assert not report.passed
    else:  # a claim above what the code needs keeps machines out, and breaks none: nothing to say
        assert not [f for f in isa if f.severity != "info"] and report.passed


def test_code_behind_a_cpu_check_meets_a_lower_claim(build, tmp_path):
    report = audit(level_wheel(build, tmp_path, 1, 1, prelude=DISPATCHED)).wheels[0]
    assert props_of(report) == {"x86_64 :: level :: v1": "holds"}
    assert {f.severity for f in report.findings if f.rule == "isa-instructions"} == {"info"}


def test_a_property_nothing_speaks_to_is_unverified_never_passed(build, tmp_path):
    wheel = variant_wheel(tmp_path, "blas", "openblas", {"blas_lapack": {"library": ["openblas"]}},
                          ext_for(build, "_blas", 1))
    report = audit(wheel).wheels[0]
    assert props_of(report) == {"blas_lapack :: library :: openblas": "unverified"}
    (info,) = [f for f in report.findings if f.rule == "variant-unverified"]
    assert info.severity == "info" and "blas_lapack :: library :: openblas" in info.message
    text = run_cli("audit", wheel).stdout
    assert "variant openblas: blas_lapack :: library :: openblas (unverified)" in text


def test_the_c_library_properties_against_the_verdict(build, tmp_path):
    """exp2 and log2 need GLIBC_2.29 (a host build): the wheel deserves manylinux_2_31."""
    ext = build.compile_c(extension_source("_libc", MATH_BODY, prelude=MATH_PRELUDE), "_libc.so", libs=("m",))
    props = {"libc": {"name": ["glibc", "musl"], "glibc_version_lower_bound": ["2.17", "2.35"]}}
    report = audit(variant_wheel(tmp_path, "libc", "glibc", props, ext, tag="manylinux_2_35_x86_64")).wheels[0]
    assert report.deserved_tag.startswith("manylinux_2_31")
    assert props_of(report) == {"libc :: name :: glibc": "holds", "libc :: name :: musl": "false",
                                "libc :: glibc_version_lower_bound :: 2.17": "false",
                                "libc :: glibc_version_lower_bound :: 2.35": "holds"}
    found = sorted(f.message for f in report.findings if f.rule == "variant-libc")
    assert len(found) == 2 and "glibc 2.31" in found[0] and "are for glibc" in found[1]


def test_variant_metadata_missing_or_out_of_place(build, tmp_path):
    ext = ext_for(build, "_meta", 1)
    missing = audit(variant_wheel(tmp_path / "a", "meta", "x86_64_v2", None, ext)).wheels[0]
    (error,) = [f for f in missing.findings if f.rule == "variant-metadata"]
    assert error.severity == "error" and "MUST carry" in error.message and not missing.passed
    assert missing.variant["properties"] is None
    unnamed = audit(variant_wheel(tmp_path / "b", "meta", None, None, ext,
                                  metadata=variant_json("x86_64_v2", {"x86_64": {"level": ["v2"]}}))).wheels[0]
    (warning,) = [f for f in unnamed.findings if f.rule == "variant-metadata"]
    assert warning.severity == "warning" and "no variant label" in warning.message and unnamed.variant is None
    other = audit(variant_wheel(tmp_path / "c", "meta", "x86_64_v3", None, ext,
                                metadata=variant_json("x86_64_v2", {"x86_64": {"level": ["v2"]}}))).wheels[0]
    assert any(f.rule == "variant-metadata" and "'x86_64_v3'" in f.message for f in other.findings)


def test_the_json_report_carries_the_variant_and_follows_its_schema(build, tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    wheel = level_wheel(build, tmp_path, 2, 2)
    proc = run_cli("audit", "--format", "json", wheel)
    doc = json.loads(proc.stdout)
    jsonschema.validate(doc, json.loads((ROOT / "wheelcheck" / "report" / "audit-schema.json").read_text()))
    assert doc["schema_minor"] >= 9
    (entry,) = doc["wheels"]
    assert entry["variant"]["label"] == "x86_64_v2" and entry["variant"]["format_version"] == "0.1.1"
    assert entry["variant"]["properties"][0]["status"] == "holds"
    assert all(f["gpu_code"] is None for f in entry["files"])


def test_every_command_reads_a_variant_wheel(build, tmp_path):
    wheel = level_wheel(build, tmp_path, 2, 2)
    show = run_cli("show", wheel)
    assert show.returncode == 0 and "x86_64 :: level :: v2: holds" in show.stdout.replace("\n", " ")
    assert json.loads(run_cli("show", "--json", wheel).stdout)["variant"]["label"] == "x86_64_v2"
    sbom = run_cli("sbom", "--format", "cyclonedx", wheel)
    assert sbom.returncode == 0, sbom.stderr
    conflicts = run_cli("conflicts", wheel, level_wheel(build, tmp_path / "other", 3, 2))
    assert conflicts.returncode in (0, 1) and "not a wheel filename" not in conflicts.stderr
    compat = run_cli("compat", wheel)
    assert compat.returncode in (0, 1) and "not a wheel filename" not in compat.stderr


def test_census_reads_a_variant_wheel(build, tmp_path):
    pytest.importorskip("dask")
    from wheelcheck.census.sources import expand_sources, linux_or_pure
    from wheelcheck.census.worker import audit_source

    wheel = level_wheel(build, tmp_path, 2, 2)
    assert linux_or_pure(wheel.name)
    (source,) = expand_sources([str(wheel)])
    (row,) = audit_source(source, {})["wheels"]
    assert row["error"] is None and row["name"] == "lev" and row["version"] == "1.0" and row["passed"]


def test_repair_keeps_the_label_and_the_metadata(build, tmp_path):
    wheel = variant_wheel(tmp_path, "fix", "x86_64_v2", {"x86_64": {"level": ["v2"]}}, ext_for(build, "_fix", 2),
                          tag="linux_x86_64")
    proc = run_cli("repair", "-w", tmp_path / "out", wheel)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (repaired,) = (tmp_path / "out").glob("*.whl")
    assert repaired.name.endswith("-x86_64_v2.whl") and "manylinux_2_5_x86_64" in repaired.name
    with zipfile.ZipFile(wheel) as before, zipfile.ZipFile(repaired) as after:
        name = "fix-1.0.dist-info/variant.json"
        assert after.read(name) == before.read(name)
    report = audit(repaired).wheels[0]
    assert report.passed and props_of(report) == {"x86_64 :: level :: v2": "holds"}


def _release(build, tmp_path, second_props, namespaces=None):
    ext = ext_for(build, "_rel", 2)
    one = variant_wheel(tmp_path, "rel", "x86_64_v2", {"x86_64": {"level": ["v2"]}}, ext)
    two = variant_wheel(tmp_path, "rel", "x86_64_v2", None, ext, tag="manylinux_2_28_x86_64",
                        metadata=variant_json("x86_64_v2", second_props, namespaces))
    return one, two


def test_one_label_means_one_set_of_properties_across_a_release(build, tmp_path):
    one, two = _release(build, tmp_path, {"x86_64": {"level": ["v3"]}})
    report = audit([one, two])
    for wheel in report.wheels:
        (finding,) = [f for f in wheel.findings if f.rule == "variant-consistency"]
        assert finding.severity == "error" and "'x86_64_v2'" in finding.message and not wheel.passed
    agreeing = audit(list(_release(build, tmp_path / "same", {"x86_64": {"level": ["v2"]}})))
    assert not [f for w in agreeing.wheels for f in w.findings if f.rule == "variant-consistency"]
    assert all(w.passed for w in agreeing.wheels)


def test_namespace_orders_must_extend_each_other(build, tmp_path):
    one, two = _release(build, tmp_path, {"x86_64": {"level": ["v2"]}}, ["blas_lapack", "x86_64"])
    report = audit([one, two], jobs=1)
    assert all(any(f.rule == "variant-consistency" and "orders its namespaces" in f.message for f in w.findings)
               for w in report.wheels)


def test_the_index_variants_json(build, tmp_path):
    one, two = _release(build, tmp_path, {"x86_64": {"level": ["v2"]}})
    index = tmp_path / "rel-1.0-variants.json"
    index.write_bytes(variant_json("x86_64_v2", {"x86_64": {"level": ["v2"]}}))
    proc = run_cli("audit", "--variants-json", index, one, two)
    assert proc.returncode == 0, proc.stdout
    index.write_bytes(variant_json("x86_64_v3", {"x86_64": {"level": ["v3"]}}))
    proc = run_cli("audit", "--format", "json", "--variants-json", index, one, two)
    assert proc.returncode == 1
    for wheel in json.loads(proc.stdout)["wheels"]:
        assert any(f["rule"] == "variant-consistency" and "does not list" in f["message"] for f in wheel["findings"])
    other = tmp_path / "other-2.0-variants.json"
    other.write_bytes(index.read_bytes())
    refused = run_cli("audit", "--variants-json", other, one)
    assert refused.returncode == 2 and "no variant wheel audited is of that release" in refused.stderr
    with pytest.raises(UsageError):
        audit([one], variants_index=tmp_path / "missing-1.0-variants.json")
