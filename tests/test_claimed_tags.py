"""A claimed platform tag no policy is named after (manylinux_2_30, manylinux_2_14, musllinux_1_3) still binds.

PEP 600 defines manylinux_X_Y for every glibc X.Y, but the policies are a ladder with gaps (2_28, then 2_31).
Such a claim used to be dropped: the wheel was held to nothing, and an extension needing GLIBC_2.34 passed as
manylinux_2_30 (zstd 1.5.7.2 claims only manylinux_2_14). Now glibc's own versions are cut at the claim, the rest
is the next newer policy's: a wheel needing GLIBC_2.29 does meet manylinux_2_30, although its rung is 2_31.
"""

from __future__ import annotations

import zipfile

from elftools.elf.elffile import ELFFile
from elftools.elf.gnuversions import GNUVerNeedSection

from tests.fixtures.sources import extension_source
from tests.fixtures.wheels import build_wheel
from tests.helpers import audit_json, audit_one as one, by_rule, repair_json, run_cli
from wheelcheck.report.audit_json import audit_schema

EXT = "pkg/ver.cpython-311-x86_64-linux-gnu.so"
NEEDS_2_34 = ("#include <pthread.h>\nstatic void *run(void *a) { return a; }\n", "pthread_t t; "
              "if (pthread_create(&t, 0, run, 0)) return 1; pthread_join(t, 0); return 2;")
NEEDS_2_14 = ("#include <string.h>\nvolatile int n = 16;\n",  # memcpy@GLIBC_2.14 on x86_64
              'char a[32]; memcpy(a, "0123456789abcdef0123", n); return a[3];')
NEEDS_2_29 = ("#include <math.h>\nvolatile double base = 2.0;\n", "return (int)pow(base, 3.0);")


def glibc_needs(path) -> set[str]:
    """The GLIBC_* versions the file needs, as pyelftools reads its version-need table."""
    with open(path, "rb") as f:
        section = next((s for s in ELFFile(f).iter_sections() if isinstance(s, GNUVerNeedSection)), None)
        if section is None:
            return set()
        return {aux.name for _need, auxes in section.iter_versions() for aux in auxes if aux.name.startswith("GLIBC_2")}


def newest(versions: set[str]) -> tuple[int, ...]:
    return max(tuple(int(p) for p in v.removeprefix("GLIBC_").split(".")) for v in versions)


def extension(build, needs, libs=()):
    prelude, body = needs
    return build.compile_c(extension_source("ver", body, prelude=prelude), "ver.so", libs=libs)


def wheel_claiming(tmp_path, ext, platform: str):
    return build_wheel(tmp_path / platform, "ver", "1.0", f"cp311-cp311-{platform}", {EXT: ext})


def test_a_claim_between_two_policies_is_held_to_its_glibc(build, tmp_path):
    ext = extension(build, NEEDS_2_34, libs=("pthread",))
    assert newest(glibc_needs(ext)) == (2, 34)
    w = one(wheel_claiming(tmp_path, ext, "manylinux_2_30_x86_64"))
    assert not w.passed and w.required_tag == "manylinux_2_30_x86_64"
    (error,) = [f for f in by_rule(w, "symbol-version") if f.severity == "error"]
    assert "GLIBC_2.34" in error.message
    # the policy the tag is named after judges as before
    assert not one(wheel_claiming(tmp_path, ext, "manylinux_2_31_x86_64")).passed
    assert one(wheel_claiming(tmp_path, ext, "manylinux_2_34_x86_64")).passed


def test_a_claim_between_two_policies_is_met_below_the_next_rung(build, tmp_path):
    """GLIBC_2.29 (pow) is on the manylinux_2_31 rung, but glibc 2.30 has it: manylinux_2_30 is true."""
    ext = extension(build, NEEDS_2_29, libs=("m",))
    assert newest(glibc_needs(ext)) == (2, 29)
    w = one(wheel_claiming(tmp_path, ext, "manylinux_2_30_x86_64"))
    assert w.passed and w.required_tag == "manylinux_2_30_x86_64" and w.deserved_tag == "manylinux_2_31_x86_64"
    assert not [f for f in w.findings if f.severity == "error"]
    w = one(wheel_claiming(tmp_path, ext, "manylinux_2_29_x86_64"))
    assert w.passed
    w = one(wheel_claiming(tmp_path, ext, "manylinux_2_25_x86_64"))
    assert not w.passed and any("GLIBC_2.29" in f.message for f in by_rule(w, "symbol-version"))


def test_a_met_claim_between_two_policies_is_told_as_met(build, tmp_path):
    """On a real wheel, "PASS deserves manylinux_2_31, required manylinux_2_30" read as passing a claim not met, and the
    GLIBC_2.29 info finding named only the rung ("→ manylinux_2_31 at best"). The report now says the claim is met."""
    import jsonschema

    ext = extension(build, NEEDS_2_29, libs=("m",))
    wheel = wheel_claiming(tmp_path, ext, "manylinux_2_30_x86_64")
    code, report = audit_json(wheel)
    jsonschema.validate(report, audit_schema())
    (w,) = report["wheels"]
    assert code == 0 and w["required_met"] is True and w["deserved_tag"] == "manylinux_2_31_x86_64"
    text = run_cli("audit", wheel).stdout
    assert "PASS meets manylinux_2_30_x86_64 as claimed" in text and "of the policies it deserves manylinux_2_31" in text
    assert "required" not in text.splitlines()[0]
    (info,) = [f for f in by_rule(one(wheel), "symbol-version") if "GLIBC_2.29" in f.message]
    assert info.severity == "info" and info.message.endswith("→ manylinux_2_31 at best (the claim manylinux_2_30 allows it)")
    # the same build claiming what it does not meet, or the rung itself: the usual words
    _code, failed = audit_json(wheel_claiming(tmp_path, ext, "manylinux_2_25_x86_64"))
    assert failed["wheels"][0]["required_met"] is False
    assert "FAIL deserves manylinux_2_31_x86_64, required manylinux_2_25_x86_64" in \
        run_cli("audit", wheel_claiming(tmp_path, ext, "manylinux_2_25_x86_64")).stdout
    rung = wheel_claiming(tmp_path, ext, "manylinux_2_31_x86_64")
    assert audit_json(rung)[1]["wheels"][0]["required_met"] is True
    assert "PASS deserves manylinux_2_31_x86_64, required manylinux_2_31_x86_64" in run_cli("audit", rung).stdout
    assert "allows it" not in " ".join(f.message for f in one(rung).findings)
    assert audit_json(build_wheel(tmp_path / "none", "ver", "1.0", "cp311-cp311-linux_x86_64", {EXT: ext}))[1][
        "wheels"][0]["required_met"] is None


def test_an_old_glibc_claim_without_a_policy(build, tmp_path):
    """zstd's claim: manylinux_2_14, below manylinux_2_17. A build for glibc 2.14 (zig) meets it."""
    prelude, body = NEEDS_2_14
    ext = build.compile_c(extension_source("ver", body, prelude=prelude), "ver.so", target="x86_64-linux-gnu.2.14")
    assert newest(glibc_needs(ext)) == (2, 14)
    w = one(wheel_claiming(tmp_path, ext, "manylinux_2_14_x86_64"))
    assert w.passed and w.required_tag == "manylinux_2_14_x86_64"
    assert not one(wheel_claiming(tmp_path, extension(build, NEEDS_2_29, libs=("m",)), "manylinux_2_14_x86_64")).passed


def test_repair_drops_an_untrue_claim_between_policies_and_keeps_a_true_one(build, tmp_path):
    false_claim = wheel_claiming(tmp_path / "a", extension(build, NEEDS_2_34, libs=("pthread",)),
                                 "manylinux_2_30_x86_64")
    proc, report = repair_json(false_claim, "-w", tmp_path / "out-a")
    assert proc.returncode == 0, proc.stdout
    (out,) = (tmp_path / "out-a").glob("*.whl")
    assert "manylinux_2_30" not in out.name and "manylinux_2_34_x86_64" in out.name
    assert one(out).passed
    true_claim = wheel_claiming(tmp_path / "b", extension(build, NEEDS_2_29, libs=("m",)), "manylinux_2_30_x86_64")
    proc, report = repair_json(true_claim, "-w", tmp_path / "out-b")
    assert proc.returncode == 0, proc.stdout
    (out,) = (tmp_path / "out-b").glob("*.whl")
    assert "manylinux_2_30_x86_64" in out.name and "manylinux_2_31_x86_64" in out.name
    with zipfile.ZipFile(out) as zf:
        wheel_text = zf.read("ver-1.0.dist-info/WHEEL").decode()
    assert "Tag: cp311-cp311-manylinux_2_30_x86_64" in wheel_text


def test_a_musllinux_claim_without_a_policy_is_held_to_the_newest_musl_policy(build, tmp_path):
    """musllinux_1_3: nothing tells musl releases apart, so the musl rules hold; a missing library fails it."""
    lib = build.compile_c("int foo_answer(void) { return 42; }\n", "libfoo.so", target="x86_64-linux-musl",
                          flags=("-Wl,-soname,libfoo.so.1",))
    ext = build.compile_c(extension_source("ver", "return foo_answer();", prelude="int foo_answer(void);\n"),
                          "ver.so", target="x86_64-linux-musl", libs=(lib,))
    w = one(build_wheel(tmp_path, "ver", "1.0", "cp311-cp311-musllinux_1_3_x86_64",
                        {"pkg/ver.cpython-311-x86_64-linux-musl.so": ext}))
    assert not w.passed and w.required_tag == "musllinux_1_3_x86_64"
    assert any(f.severity == "error" and "libfoo.so.1" in f.message for f in by_rule(w, "external-library"))
