"""The x86-64 level read from the instructions (elf/x86_length.py, elf/isa_scan.py, audit/isa_code.py).

Every fixture is built with gcc at test time; capstone is the oracle for instruction lengths."""

from __future__ import annotations

import io
import json
import subprocess

import pytest

from tests.fixtures.sources import extension_source
from tests.fixtures.wheels import build_wheel
from tests.fixtures.repair_scenario import EXT_SUFFIX, python_tag
from tests.helpers import make_venv, pip_install
from wheelcheck import audit
from wheelcheck.elf import summarize
from wheelcheck.elf.isa_scan import classify, plan_slices
from wheelcheck.elf.x86_length import instruction_lengths

capstone = pytest.importorskip("capstone")

# A loop each compiler flag vectorizes, and scalar code each level adds an instruction for
KERNELS = r"""
#include <stddef.h>
#include <math.h>
void saxpy(float *y, const float *x, float a, size_t n) { for (size_t i = 0; i < n; i++) y[i] += a * x[i]; }
int bits(unsigned long long v) { return __builtin_popcountll(v); }
int lead(unsigned v) { return v ? __builtin_clz(v) : 32; }
double rounded(double v) { return floor(v) + ceil(v / 3.0); }
long mixed(const int *p, size_t n) { long s = 0; for (size_t i = 0; i < n; i++) s += p[i] > 7 ? p[i] * 3 : p[i] >> 1; return s; }
"""

DISPATCHED = r"""
#include <stddef.h>
__attribute__((target("avx2"))) static void add_avx2(int *y, const int *x, size_t n)
{ for (size_t i = 0; i < n; i++) y[i] += x[i] * 3; }
static void add_plain(int *y, const int *x, size_t n) { for (size_t i = 0; i < n; i++) y[i] += x[i] * 3; }
void add(int *y, const int *x, size_t n)
{ if (__builtin_cpu_supports("avx2")) add_avx2(y, x, n); else add_plain(y, x, n); }
"""

CLONED = r"""
#include <stddef.h>
__attribute__((target_clones("avx2", "default"))) void scale(float *y, size_t n) { for (size_t i = 0; i < n; i++) y[i] *= 3.0f; }
"""

FLAGS = {
    "baseline": ("-O3", "-march=x86-64"),
    "v2": ("-O3", "-march=x86-64-v2"),
    "avx2": ("-O3", "-march=x86-64", "-mavx2", "-mfma", "-mbmi2"),
    "v3": ("-O3", "-march=x86-64-v3"),
    "v4": ("-O3", "-march=x86-64-v4"),
}


def code_of(path):
    from elftools.elf.elffile import ELFFile

    data = path.read_bytes()
    sections = [s for s in ELFFile(io.BytesIO(data)).iter_sections() if s["sh_flags"] & 4 and s["sh_type"] == "SHT_PROGBITS"]
    return [(data[s["sh_offset"]:s["sh_offset"] + s["sh_size"]], s.name) for s in sections]


@pytest.mark.parametrize("flags", sorted(FLAGS))
def test_instruction_lengths_agree_with_capstone(build, flags):
    """Every instruction gcc emits for each level, walked from the section start, has capstone's length."""
    lib = build.compile_c(KERNELS + DISPATCHED, f"libk-{flags}.so", flags=FLAGS[flags], libs=("m",))
    md = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    compared = 0
    for code, name in code_of(lib):
        theirs = [size for _a, size, _m, _o in md.disasm_lite(code, 0)]
        assert sum(theirs) == len(code), f"capstone stopped in {name}"
        assert instruction_lengths(code) == theirs, name
        compared += len(theirs)
    assert compared > 200


def scan(build, name, src, flags, **kw):
    lib = build.compile_c(src, name, flags=flags, **kw)
    return summarize(lib.read_bytes(), name).isa_code


@pytest.mark.parametrize("flags, level", [("baseline", 1), ("v2", 2), ("avx2", 3), ("v3", 3), ("v4", 4)])
def test_the_level_the_compiler_was_asked_for_is_found(build, flags, level):
    found = scan(build, f"libl-{flags}.so", KERNELS, FLAGS[flags], libs=("m",))
    assert found.level == level and found.complete and found.by_function and found.undecodable == 0
    assert [e.level for e in found.evidence] == sorted({e.level for e in found.evidence})
    if level > 1:
        top = found.top
        assert top.level == level and top.function in {"saxpy", "bits", "lead", "rounded", "mixed"}
        # the evidence is what objdump decodes at that address
        lib = build.compile_c(KERNELS, f"libl-{flags}.so", flags=FLAGS[flags], libs=("m",))
        dump = subprocess.run(["objdump", "-d", f"--start-address={top.address:#x}",
                               f"--stop-address={top.address + len(top.encoding.split()):#x}", str(lib)],
                              capture_output=True, text=True, check=True).stdout
        assert top.encoding in dump.replace("\t", " ")


def test_tzcnt_is_not_evidence():
    """gcc emits TZCNT (rep bsf) for baseline code: older CPUs run it as BSF."""
    assert classify(bytes.fromhex("f30fbcc7"), "notable") is None
    assert classify(bytes.fromhex("f3480fb8c7"), "notable") == (2, "popcnt")
    assert classify(bytes.fromhex("f30fbdc7"), "notable") == (3, "lzcnt")
    assert classify(bytes.fromhex("0fa2"), "notable")[1] == "cpuid"


def test_a_dispatcher_guards_the_code(build):
    guarded = scan(build, "libdispatch.so", DISPATCHED, ("-O3", "-march=x86-64"))
    # __builtin_cpu_supports links libgcc's CPU probe into the file: CPUID and XGETBV are there
    assert guarded.level == 3 and guarded.guard is not None and guarded.guard.split()[0] in ("cpuid", "xgetbv")
    cloned = scan(build, "libclones.so", CLONED, ("-O3", "-march=x86-64"))
    assert cloned.level == 3 and cloned.guard is not None


def test_large_code_is_sampled_in_even_slices():
    slices = plan_slices([(4096, 100 << 20)], budget=8 << 20, slices=64)
    assert len(slices) == 64 and sum(b - a for a, b in slices) == 8 << 20
    assert slices[0][0] == 4096 and slices[-1][1] <= 4096 + (100 << 20)
    assert plan_slices([(4096, 1000)]) == [(4096, 5096)]


def _wheel(tmp_path, name, ext, tag="manylinux_2_17_x86_64"):
    py = python_tag()
    return build_wheel(tmp_path, name, "1.0", f"{py}-{py}-{tag}", {f"{name}/__init__.py": b"",
                                                                    f"{name}/_{name}{EXT_SUFFIX}": ext})


def test_unguarded_avx2_is_a_warning_with_the_evidence(build, tmp_path):
    ext = build.compile_c(extension_source("_fast", "    static float y[64], x[64]; saxpy(y, x, 2.0f, 64); return 7;",
                                           prelude=KERNELS), "_fast.so", flags=FLAGS["avx2"], libs=("m",))
    report = audit(_wheel(tmp_path, "fast", ext)).wheels[0]
    (finding,) = [f for f in report.findings if f.rule == "isa-instructions"]
    assert finding.severity == "warning" and "x86-64-v3" in finding.message and "no CPU check" in finding.message
    assert "(VEX)" in finding.message and " in " in finding.message
    assert report.passed  # a warning: the tag says nothing of the level
    doc = report.to_dict()
    (entry,) = [f for f in doc["files"] if f["path"].endswith(EXT_SUFFIX)]
    assert entry["isa_code"]["level"] == 3 and entry["isa_code"]["guard"] is None


def test_a_claim_the_code_exceeds_is_an_error(build, tmp_path):
    """The ISA note says x86-64-v2; a function built for AVX2 runs with no check: the claim is false."""
    src = KERNELS + "__attribute__((target(\"avx2\"))) void wide(int *y, int n) { for (int i = 0; i < n; i++) y[i] *= 5; }\n"
    ext = build.compile_c(extension_source("_claim", prelude=src), "_claim.so",
                          flags=("-O3", "-march=x86-64-v2", "-Wl,-z,x86-64-v2"), libs=("m",))
    report = audit(_wheel(tmp_path, "claim", ext), any_platform_tag=True).wheels[0]
    (finding,) = [f for f in report.findings if f.rule == "isa-instructions"]
    assert finding.severity == "error" and "x86-64-v2, which its ISA note claims" in finding.message
    assert "in wide" in finding.message


def test_a_note_that_tells_the_truth_adds_nothing(build, tmp_path):
    ext = build.compile_c(extension_source("_honest", prelude=KERNELS), "_honest.so",
                          flags=("-O3", "-march=x86-64-v3", "-Wl,-z,x86-64-v3"), libs=("m",))
    report = audit(_wheel(tmp_path, "honest", ext), any_platform_tag=True).wheels[0]
    assert not [f for f in report.findings if f.rule == "isa-instructions"]
    assert any(f.rule == "isa-level" for f in report.findings)  # the note's own rule, as before


def test_guarded_code_is_an_info_and_imports(build, tmp_path):
    ext = build.compile_c(extension_source("_disp", "    static int y[64], x[64]; add(y, x, 64); return 7;",
                                           prelude=DISPATCHED), "_disp.so", flags=("-O3", "-march=x86-64"))
    wheel = _wheel(tmp_path, "disp", ext)
    report = audit(wheel).wheels[0]
    (finding,) = [f for f in report.findings if f.rule == "isa-instructions"]
    assert finding.severity == "info" and "behind a CPU check" in finding.message
    python = make_venv(tmp_path / "venv")
    assert pip_install(python, wheel).returncode == 0
    proc = subprocess.run([str(python), "-c", "import disp._disp as m; print(m.call())"], capture_output=True,
                          text=True, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.strip() == "7", proc.stderr


def test_disable_isa_ext_check_turns_it_off(build, tmp_path):
    ext = build.compile_c(extension_source("_off", prelude=KERNELS), "_off.so", flags=FLAGS["avx2"], libs=("m",))
    report = audit(_wheel(tmp_path, "off", ext), isa_check=False).wheels[0]
    assert not [f for f in report.findings if f.rule == "isa-instructions"]


def test_isa_level_option_and_setting_make_a_claim(build, tmp_path):
    """--isa-level v2 (or isa-level in [tool.wheelcheck]) claims a level: unguarded AVX2 beyond it is an error; a
    claim of v3 covers it."""
    from tests.helpers import run_cli

    ext = build.compile_c(extension_source("_opt", prelude=KERNELS), "_opt.so", flags=FLAGS["avx2"], libs=("m",))
    wheel = _wheel(tmp_path, "opt", ext)
    proc = run_cli("audit", "--isa-level", "v2", "--format", "json", wheel)
    findings = [f for f in json.loads(proc.stdout)["wheels"][0]["findings"] if f["rule"] == "isa-instructions"]
    assert proc.returncode == 1 and [f["severity"] for f in findings] == ["error"]
    assert "beyond x86-64-v2, which --isa-level v2 claims" in findings[0]["message"]
    assert run_cli("audit", "--isa-level", "v3", wheel).returncode == 0
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text('[tool.wheelcheck]\nisa-level = "v1"\n')
    proc = run_cli("audit", "--format", "json", wheel, cwd=project)
    (finding,) = [f for f in json.loads(proc.stdout)["wheels"][0]["findings"] if f["rule"] == "isa-instructions"]
    assert proc.returncode == 1 and finding["severity"] == "error" and 'isa-level = "v1" of ' in finding["message"]
    bad = run_cli("audit", "--isa-level", "v9", wheel)
    assert bad.returncode == 2 and "v9" in bad.stderr


def test_the_verbose_report_shows_both_answers(build, tmp_path):
    from tests.helpers import run_cli

    ext = build.compile_c(extension_source("_both", prelude=KERNELS), "_both.so",
                          flags=("-O3", "-march=x86-64-v3", "-Wl,-z,x86-64-v3"), libs=("m",))
    out = run_cli("audit", "-vv", _wheel(tmp_path, "both", ext, tag="linux_x86_64"), "--any-platform-tag").stdout
    assert "ISA note x86-64-v3, instructions x86-64-v3 (all code walked)" in out


SSE3_ONLY = r"""
#include <pmmintrin.h>
double pairsum(const double *p) { __m128d v = _mm_loadu_pd(p); return _mm_cvtsd_f64(_mm_hadd_pd(v, v)); }
"""

# a function whose bytes after its ret are data that decodes as an AVX-512 instruction, then as nothing (06 begins
# no instruction in 64-bit mode), as compilers' constant pools and GHC's info tables do
DATA_IN_CODE = r"""
__asm__(".text\n.globl tableful\n.type tableful, @function\ntableful:\n.cfi_startproc\nret\n"
        ".byte 0x62,0xf1,0x7c,0x48,0x10,0x00,0x06,0x06,0x06,0x06\n.cfi_endproc\n.size tableful, .-tableful\n");
int plain(int x) { return x * 3 + 1; }
"""


def test_sse3_alone_is_an_info(build, tmp_path):
    """SSE3 is x86-64-v2's oldest part, on every x86-64 CPU made since 2005 (conda-forge's -march=nocona)."""
    found = scan(build, "libsse3.so", SSE3_ONLY, ("-O2", "-msse3"))
    assert found.level == 2 and found.top.instruction == "haddpd (SSE3)"
    ext = build.compile_c(extension_source("_s3", prelude=SSE3_ONLY), "_s3.so", flags=("-O2", "-msse3"))
    (finding,) = [f for f in audit(_wheel(tmp_path, "sse", ext)).wheels[0].findings if f.rule == "isa-instructions"]
    assert finding.severity == "info" and "since 2005" in finding.message


def test_a_check_in_another_file_of_the_wheel_makes_it_an_info(build, tmp_path):
    """pycryptodome asks its _cpuid_c module before it loads _raw_aesni: the check is in another file."""
    ext = build.compile_c(extension_source("_wide", prelude=KERNELS), "_wide.so", flags=FLAGS["avx2"], libs=("m",))
    probe = build.compile_c(extension_source("_probe", "    return __builtin_cpu_supports(\"avx2\") ? 1 : 0;"),
                            "_probe.so", flags=("-O2",))
    py = python_tag()
    wheel = build_wheel(tmp_path, "two", "1.0", f"{py}-{py}-manylinux_2_17_x86_64", {
        "two/__init__.py": b"", f"two/_wide{EXT_SUFFIX}": ext, f"two/_probe{EXT_SUFFIX}": probe})
    (finding,) = [f for f in audit(wheel).wheels[0].findings if f.rule == "isa-instructions"]
    assert finding.severity == "info" and finding.file.startswith("two/_wide")
    assert f"two/_probe{EXT_SUFFIX} of the wheel checks the CPU" in finding.message


def test_data_among_the_code_is_no_evidence(build):
    found = scan(build, "libdata.so", DATA_IN_CODE, ("-O2",))
    assert found.level == 1 and found.evidence == () and found.undecodable >= 1


def test_a_file_named_for_its_instruction_set_is_an_info(build, tmp_path):
    """astc-encoder-py ships _encoder_avx2.abi3.so beside a baseline module and imports the one the CPU can run."""
    ext = build.compile_c(extension_source("_enc_avx2", prelude=KERNELS), "_enc_avx2.so", flags=FLAGS["avx2"],
                          libs=("m",))
    py = python_tag()
    wheel = build_wheel(tmp_path, "enc", "1.0", f"{py}-{py}-manylinux_2_17_x86_64",
                        {"enc/__init__.py": b"", f"enc/_enc_avx2{EXT_SUFFIX}": ext})
    (finding,) = [f for f in audit(wheel).wheels[0].findings if f.rule == "isa-instructions"]
    assert finding.severity == "info"
    assert "its name says the instruction set" in finding.message


def test_a_vex_encoding_no_instruction_has_is_no_evidence():
    """c5 08 e9 1f: VEX with no 66 on an integer SIMD opcode (vpsubsw needs it), read in GHC's data among code."""
    assert classify(bytes.fromhex("c508e91f"), "vex") is None
    assert classify(bytes.fromhex("c5f9efc0"), "vex") == (3, "AVX (VEX)")  # vpxor xmm0, xmm0, xmm0
