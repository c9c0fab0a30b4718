"""wheelcheck conflicts on wheels built from source, checked against pyelftools and the real loader.

Expectations come from the sources (the names each library defines), from pyelftools (what the files
export), and from importing the wheels together in a fresh interpreter: a latent collision must give
the wrong answer only under RTLD_GLOBAL, a shared soname must fail or swap at import.
"""

from __future__ import annotations

import json
import zipfile

import jsonschema
import pytest

from tests.fixtures.conflict_wheels import (
    exported, member_bytes, openmp_pair, pip_install, replace_member, run_python, soname_pair, static_openmp_wheel)
from tests.fixtures.stories import STORIES, build_story
from tests.fixtures.vendoring import repaired_wheel
from tests.helpers import run_cli
from wheelcheck.report.conflicts_json import conflicts_schema

# what each story's library defines (tests/fixtures/stories.py), and the family its names belong to
STORY_NAMES = {"lapack": {"dsyevd_": "blas", "solver_scale": None, "dsyevd_helper_only": None, "xerbla_": None},
               "llvm": {"_ZN4llvm3sys7versionEv": "llvm", "_ZN4llvm6detail4bumpEi": "llvm"}}


def conflicts_json(*args) -> tuple[int, dict]:
    proc = run_cli("conflicts", "--format", "json", *args)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def findings(report: dict, rule: str | None = None) -> list[dict]:
    return [f for p in report["processes"] for f in p["findings"] if rule is None or f["rule"] == rule]


def vendored_lib(wheel) -> bytes:
    import zipfile

    with zipfile.ZipFile(wheel) as zf:
        (name,) = [m for m in zf.namelist() if ".libs/" in m]
        return zf.read(name)


@pytest.fixture(scope="module")
def stories(build, tmp_path_factory):
    """name -> {"vendored": {side: wheel}, "hidden": {side: wheel}, "story": Story}."""
    out = tmp_path_factory.mktemp("stories")
    result = {}
    for name in STORIES:
        story = build_story(build, out / name, name)
        result[name] = {"story": story}
        for variant, hide in (("vendored", False), ("hidden", True)):
            result[name][variant] = {side: repaired_wheel(story.wheels[side], story.lib_dirs[side],
                                                          out / name / variant, hide_symbols=hide)
                                     for side in ("a", "b")}
    return result


@pytest.mark.parametrize("name", STORIES)
def test_story_before_hiding_reports_the_collision(stories, name):
    wheels = stories[name]["vendored"]
    # the oracle: pyelftools' view of the two vendored libraries, which must be what the source defines
    shared = exported(vendored_lib(wheels["a"])) & exported(vendored_lib(wheels["b"]))
    assert shared == set(STORY_NAMES[name])
    code, report = conflicts_json(wheels["a"], wheels["b"])
    assert code == 0  # warnings only: the default --fail-on is error
    (proc,) = report["processes"]
    reported = findings(report, "conflict-symbols")
    assert {n for f in reported for n in f["names"]} == shared  # PyInit__ext, also in both, is harmless
    for f in reported:
        assert f["hazard"] == "strong" and f["liveness"] == "latent" and f["severity"] == "warning"
        assert {p["distribution"] for p in f["providers"]} == {f"{name}_a", f"{name}_b"}
        assert all(STORY_NAMES[name][n] == f["family"] for n in f["names"])
    assert proc["stats"]["harmless"] >= 1
    assert run_cli("conflicts", "--fail-on", "warning", wheels["a"], wheels["b"]).returncode == 1


@pytest.mark.parametrize("name", STORIES)
def test_story_after_hiding_reports_nothing(stories, name):
    wheels = stories[name]["hidden"]
    assert not exported(vendored_lib(wheels["a"])) & exported(vendored_lib(wheels["b"]))
    code, report = conflicts_json("--fail-on", "info", wheels["a"], wheels["b"])
    assert code == 0 and findings(report) == []
    text = run_cli("conflicts", "--fail-on", "info", wheels["a"], wheels["b"])
    assert text.returncode == 0 and "0 errors, 0 warnings, 0 infos" in text.stdout


def _calls(site, flags: str = "") -> list[int]:
    code = "import os\n" + (f"sys.setdlopenflags({flags})\n" if flags else "") + \
        "import lapack_a, lapack_b\nprint(lapack_a.call(), lapack_b.call())"
    proc = run_python(site, code)
    assert proc.returncode == 0, proc.stderr
    return [int(x) for x in proc.stdout.split()]


def test_latent_means_wrong_only_under_rtld_global(stories, tmp_path):
    """What 'latent' claims, shown with the interpreter: right answers by default, wrong under RTLD_GLOBAL."""
    expect = stories["lapack"]["story"].expect
    plain, hidden = tmp_path / "plain", tmp_path / "hidden"
    pip_install(plain, *stories["lapack"]["vendored"].values())
    pip_install(hidden, *stories["lapack"]["hidden"].values())
    assert _calls(plain) == [expect["a"], expect["b"]]
    assert _calls(plain, "os.RTLD_GLOBAL | os.RTLD_NOW") == [expect["a"], expect["a"]]  # b got a's dsyevd_
    assert _calls(hidden, "os.RTLD_GLOBAL | os.RTLD_NOW") == [expect["a"], expect["b"]]


def test_rtld_global_loader_makes_the_collision_live(stories, tmp_path):
    """A distribution whose __init__ imports its extension with RTLD_GLOBAL: error, and wrong for real."""
    init = (b"import os, sys\n_flags = sys.getdlopenflags()\nsys.setdlopenflags(_flags | os.RTLD_GLOBAL)\n"
            b"from ._ext import call\nsys.setdlopenflags(_flags)\n")
    wheels = stories["lapack"]["vendored"]
    global_a = replace_member(wheels["a"], tmp_path / "global", "lapack_a/__init__.py", init)
    code, report = conflicts_json(global_a, wheels["b"])
    assert code == 1
    blas = [f for f in findings(report, "conflict-symbols") if f["family"] == "blas"]
    assert blas and blas[0]["liveness"] == "global" and blas[0]["severity"] == "error"
    assert "lapack_a/__init__.py" in blas[0]["message"]
    site = tmp_path / "site"
    pip_install(site, global_a, wheels["b"])
    expect = stories["lapack"]["story"].expect
    assert _calls(site) == [expect["a"], expect["a"]]  # no flags of our own: the import order decides


_GUARDED_INIT = (b"import os, sys\nif os.getenv('LAPACK_A_GLOBAL'):\n    _flags = sys.getdlopenflags()\n"
                 b"    sys.setdlopenflags(_flags | os.RTLD_GLOBAL)\n    from ._ext import call\n"
                 b"    sys.setdlopenflags(_flags)\nelse:\n    from ._ext import call\n")
_USERS_INIT = (b"import os, sys\nfrom ._ext import call\n\ndef load_plugin(path):\n"
               b"    import ctypes\n    flags = sys.getdlopenflags()\n    sys.setdlopenflags(flags | os.RTLD_GLOBAL)\n"
               b"    try:\n        return ctypes.CDLL(path)\n    finally:\n        sys.setdlopenflags(flags)\n")
_DEPS_INIT = (b"import ctypes, os\n\ndef _load_global_deps():\n    name = 'libglobal_deps' + '.so'\n"
              b"    ctypes.CDLL(os.path.join(os.path.dirname(__file__), name), mode=ctypes.RTLD_GLOBAL)\n\n"
              b"_load_global_deps()\nfrom ._ext import call\n")


@pytest.mark.parametrize("init", [_GUARDED_INIT, _USERS_INIT, _DEPS_INIT], ids=["env-guarded", "users", "other-lib"])
def test_rtld_global_the_import_does_not_apply_to_the_library_stays_latent(stories, build, tmp_path, init):
    """From real wheels (any environment with torch and numpy failed conflicts): torch names RTLD_GLOBAL in a branch an
    environment variable opens, in a function its users call (torch/_ops.py), and for libtorch_global_deps.so alone
    (ctypes). None of these puts the colliding library in the global scope: latent, and right for real."""
    wheels = stories["lapack"]["vendored"]
    deps = build.compile_c("int global_dep(void) { return 1; }\n", "libglobal_deps.so")
    with_init = replace_member(wheels["a"], tmp_path / "init", "lapack_a/__init__.py", init)
    variant = replace_member(with_init, tmp_path / "variant", "lapack_a/libglobal_deps.so", deps.read_bytes())
    code, report = conflicts_json(variant, wheels["b"])
    assert code == 0, report
    blas = [f for f in findings(report, "conflict-symbols") if f["family"] == "blas"]
    assert blas and {f["liveness"] for f in blas} == {"latent"} and {f["severity"] for f in blas} == {"warning"}
    site = tmp_path / "site"
    pip_install(site, variant, wheels["b"])
    expect = stories["lapack"]["story"].expect
    assert _calls(site) == [expect["a"], expect["b"]]


def test_rtld_global_on_the_vendored_library_itself_is_live(stories, tmp_path):
    """The control: ctypes.CDLL of the vendored library itself (its file name's start is in the code), as
    scipy-openblas32 does at import: live, an error, and wrong for real."""
    wheels = stories["lapack"]["vendored"]
    (vendored,) = [m for m in zipfile.ZipFile(wheels["a"]).namelist() if ".libs/" in m]
    stem = vendored.rsplit("/", 1)[1].split("-", 1)[0]
    init = (f"import ctypes, glob, os\n_here = os.path.dirname(__file__)\n"
            f"_path = glob.glob(os.path.join(_here, os.pardir, 'lapack_a.libs', '{stem}-*'))[0]\n"
            f"ctypes.CDLL(_path, ctypes.RTLD_GLOBAL)\nfrom ._ext import call\n").encode()
    variant = replace_member(wheels["a"], tmp_path / "variant", "lapack_a/__init__.py", init)
    code, report = conflicts_json(variant, wheels["b"])
    assert code == 1
    blas = [f for f in findings(report, "conflict-symbols") if f["family"] == "blas"]
    assert blas and blas[0]["liveness"] == "global" and blas[0]["severity"] == "error"
    assert f"lapack_a/__init__.py: {vendored.rsplit('/', 1)[1]}" in blas[0]["message"]
    site = tmp_path / "site"
    pip_install(site, variant, wheels["b"])
    expect = stories["lapack"]["story"].expect
    assert _calls(site) == [expect["a"], expect["a"]]


@pytest.fixture(scope="module")
def omp(build, tmp_path_factory):
    out = tmp_path_factory.mktemp("omp")
    return {"gomp": openmp_pair(build, out / "gomp"), "hidden": openmp_pair(build, out / "gomp", hide_symbols=True),
            "kmp": openmp_pair(build, out / "kmp", kind="kmp"), "static": static_openmp_wheel(build, out / "static"),
            "static2": static_openmp_wheel(build, out / "static", "gomp_static2")}


def test_two_hashed_openmp_runtimes(omp):
    wheels = omp["gomp"]
    libs = [vendored_lib(w) for w in wheels.values()]
    assert libs[0] != libs[1]
    code, report = conflicts_json(*wheels.values())
    (runtime,) = findings(report, "conflict-runtime-copies")
    assert runtime["family"] == "openmp" and runtime["count"] == 2 and runtime["severity"] == "warning"
    files = sorted(p["file"] for p in runtime["providers"])
    assert all(f.startswith(("gomp_a.libs/libgomp-", "gomp_b.libs/libgomp-")) and f.endswith(".so.1") for f in files)
    (symbols,) = findings(report, "conflict-symbols")
    assert symbols["family"] == "openmp" and symbols["hazard"] == "strong"
    assert set(symbols["names"]) == exported(libs[0]) & exported(libs[1])
    assert set(symbols["names"]) == {"omp_get_num_threads", "omp_get_max_threads", "GOMP_parallel", "GOMP_barrier"}


def test_hidden_openmp_runtimes_still_count(omp):
    wheels = omp["hidden"]
    shared = exported(vendored_lib(wheels["a"])) & exported(vendored_lib(wheels["b"]))
    # repair --hide-symbols keeps threadpoolctl's OpenMP entry points visible (data/keep_symbols.json):
    # the only names the two copies still share, and the only symbol collision left
    assert shared == {"omp_get_max_threads"}
    code, report = conflicts_json(*wheels.values())
    assert {name for f in findings(report, "conflict-symbols") for name in f["names"]} == shared
    (runtime,) = findings(report, "conflict-runtime-copies")
    assert runtime["count"] == 2 and "named libgomp-" in runtime["message"]


def test_static_openmp_runtime_found_by_its_exports(omp):
    code, report = conflicts_json(omp["gomp"]["a"], omp["static"])
    (runtime,) = findings(report, "conflict-runtime-copies")
    static = "gomp_static 1.0 (gomp_static/_ext.cpython-311-x86_64-linux-gnu.so), exports GOMP_parallel"
    assert static in runtime["message"]
    # two static copies in extensions of the same file name: loaded by path, so two copies
    code, report = conflicts_json(omp["static"], omp["static2"])
    (runtime,) = findings(report, "conflict-runtime-copies")
    assert runtime["count"] == 2


def test_two_llvm_openmp_runtimes_are_an_error(omp):
    code, report = conflicts_json(*omp["kmp"].values())
    (runtime,) = findings(report, "conflict-runtime-copies")
    assert code == 1 and runtime["severity"] == "error" and "abort" in runtime["message"]


@pytest.fixture(scope="module")
def sonames(build, tmp_path_factory):
    out = tmp_path_factory.mktemp("soname")
    return {"different": soname_pair(build, out / "different"), "identical": soname_pair(build, out / "same",
                                                                                        identical=True)}


def test_same_soname_different_builds(sonames, tmp_path):
    wheels = sonames["different"]
    code, report = conflicts_json(*wheels.values())
    (same,) = findings(report, "conflict-soname")
    assert code == 1 and same["severity"] == "error" and "libfoo.so.1" in same["message"]
    assert same["symbols"] == ["foo_extra"]  # defined only by so_b's copy (FOO_V2), needed by so_b's extension
    site = tmp_path / "site"
    pip_install(site, *wheels.values())
    first_a = run_python(site, "import so_a, so_b")
    assert first_a.returncode != 0 and "undefined symbol: foo_extra" in first_a.stderr
    first_b = run_python(site, "import so_b, so_a; print(so_a.call())")
    assert first_b.returncode == 0 and first_b.stdout.split() == ["2"]  # so_a runs with so_b's libfoo


def test_a_content_hash_in_the_name_does_not_hide_missing_symbols(build, tmp_path):
    """From repairing real projects: a copy edited after auditwheel named it (symbols hidden) keeps the hash of the
    file it was, so two wheels' copies under one hashed SONAME may export different names. The hash is no
    proof of one build when a side needs what the other's copy lacks: an error, and importing so_a first
    breaks so_b (was an info: 'the same build, so whichever is loaded first serves both')."""
    wheels = soname_pair(build, tmp_path / "w", soname="libfoo-1a2b3c4d.so.1")
    code, report = conflicts_json(*wheels.values())
    (same,) = findings(report, "conflict-soname")
    assert code == 1 and same["severity"] == "error" and same["symbols"] == ["foo_extra"]
    assert "edited differently" in same["message"]
    site = tmp_path / "site"
    pip_install(site, *wheels.values())
    first_a = run_python(site, "import so_a, so_b")
    assert first_a.returncode != 0 and "undefined symbol: foo_extra" in first_a.stderr


def test_same_soname_identical_builds(sonames):
    wheels = sonames["identical"]
    assert member_bytes(wheels["a"], "so_a.libs/libfoo.so.1") == member_bytes(wheels["b"], "so_b.libs/libfoo.so.1")
    code, report = conflicts_json(*wheels.values())
    (same,) = findings(report, "conflict-soname")
    assert code == 0 and same["severity"] == "info"
    assert findings(report, "conflict-symbols") == []  # identical builds: one copy


def test_json_follows_its_schema(stories, omp, sonames):
    wheels = [*stories["lapack"]["vendored"].values(), *omp["gomp"].values(), *sonames["different"].values()]
    code, report = conflicts_json(*wheels)
    jsonschema.validate(report, conflicts_schema())
    assert report["mode"] == "wheels" and len(report["sources"]) == 6
    assert {f["rule"] for f in findings(report)} == {"conflict-symbols", "conflict-runtime-copies", "conflict-soname"}
    assert report["counts"]["error"] == len([f for f in findings(report) if f["severity"] == "error"])
    assert set(report["timings"]) == {"read", "analyse"}


def test_fail_on_levels(sonames):
    wheels = list(sonames["identical"].values())  # one info finding
    assert run_cli("conflicts", *wheels).returncode == 0
    assert run_cli("conflicts", "--fail-on", "warning", *wheels).returncode == 0
    assert run_cli("conflicts", "--fail-on", "info", *wheels).returncode == 1


def test_bad_input_exits_2(tmp_path, sonames):
    missing = run_cli("conflicts", tmp_path / "absent-1.0-py3-none-any.whl")
    assert missing.returncode == 2 and "absent-1.0-py3-none-any.whl" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1
    notzip = tmp_path / "bad-1.0-py3-none-any.whl"
    notzip.write_text("not a zip")
    assert run_cli("conflicts", notzip, sonames["identical"]["a"]).returncode == 2
    assert run_cli("conflicts").returncode == 2
    bad_level = run_cli("conflicts", "--fail-on", "fatal", sonames["identical"]["a"])
    assert bad_level.returncode == 2
