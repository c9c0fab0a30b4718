"""The conflict rules on hand-built distributions (tests/models.py): no compiler, one rule at a time.

The expectations are docs/conflicts.md's tables: a strong collision is a warning while latent and an error
once live (RTLD_GLOBAL, STB_GNU_UNIQUE); vague linkage is info while latent; the same build, harmless names
and names kept apart by their versions are not reported; a soname shipped twice is a warning for different
builds; two copies of one runtime are reported by name with auditwheel's hash removed.
tests/test_conflicts.py shows the same with compiled wheels and the real loader.
"""
from __future__ import annotations

from packaging.tags import parse_tag

from tests.models import FUNC, GLOBAL, GNU_UNIQUE, OBJECT, WEAK, elf
from wheelcheck.conflicts.distribution import Distribution
from wheelcheck.conflicts.find_conflicts import analyse_process
from wheelcheck.conflicts.processes import group_processes

TAG = frozenset(parse_tag("cp311-cp311-manylinux_2_17_x86_64"))


def dist(name: str, *elves, requires: tuple[str, ...] = (), global_loaders: tuple[str, ...] = (),
         tags=TAG) -> Distribution:
    return Distribution(name, "1.0", f"{name}-1.0-cp311-cp311-manylinux_2_17_x86_64.whl", requires, tags,
                        tuple(elves), global_loaders)


def library(dist_name: str, filename: str, defines: dict, size: int = 16_384, **kwargs):
    return elf(f"{dist_name}.libs/{filename}", soname=filename, defines=defines, size=size, **kwargs)


def findings(*dists: Distribution, rule: str | None = None):
    (process,) = group_processes(list(dists))
    return [f for f in analyse_process(process).findings if rule is None or f.rule == rule]


def test_one_strong_symbol_in_two_distributions_is_a_latent_warning():
    a = dist("alpha", library("alpha", "libalpha.so.1", {"solver_scale": (GLOBAL, FUNC, None)}))
    b = dist("beta", library("beta", "libbeta.so.1", {"solver_scale": (GLOBAL, FUNC, None)}))
    (finding,) = findings(a, b, rule="conflict-symbols")
    assert (finding.severity, finding.hazard, finding.liveness) == ("warning", "strong", "latent")
    assert finding.names == ("solver_scale",)
    assert {(p.distribution, p.file) for p in finding.providers} == {
        ("alpha", "alpha.libs/libalpha.so.1"), ("beta", "beta.libs/libbeta.so.1")}


def test_it_is_an_error_once_a_distribution_loads_with_rtld_global():
    a = dist("alpha", library("alpha", "libalpha.so.1", {"solver_scale": (GLOBAL, FUNC, None)}),
             global_loaders=("alpha/__init__.py",))
    b = dist("beta", library("beta", "libbeta.so.1", {"solver_scale": (GLOBAL, FUNC, None)}))
    (finding,) = findings(a, b, rule="conflict-symbols")
    assert (finding.severity, finding.liveness) == ("error", "global")


def test_gnu_unique_is_live_even_under_rtld_local():
    a = dist("alpha", library("alpha", "libalpha.so.1", {"shared_state": (GNU_UNIQUE, OBJECT, None)}))
    b = dist("beta", library("beta", "libbeta.so.1", {"shared_state": (GLOBAL, OBJECT, None)}))
    (finding,) = findings(a, b, rule="conflict-symbols")
    assert finding.liveness == "unique" and finding.severity == "error"


def test_vague_linkage_while_latent_is_info():
    weak = {"_ZN5tools6detail4bumpEv": (WEAK, FUNC, None)}  # every copy weak: C++ vague linkage
    a = dist("alpha", library("alpha", "libalpha.so.1", weak))
    b = dist("beta", library("beta", "libbeta.so.1", weak))
    (finding,) = findings(a, b, rule="conflict-symbols")
    assert (finding.severity, finding.hazard, finding.liveness) == ("info", "vague", "latent")


def test_what_is_not_a_collision():
    # harmless names, the same build (auditwheel's hash in the name, also repaired twice), versions apart
    a = dist("alpha",
             elf("alpha/_a.cpython-311-x86_64-linux-gnu.so", defines={"PyInit__a": (GLOBAL, FUNC, None),
                                                                       "_init": (GLOBAL, FUNC, None)}),
             library("alpha", "libgcc_s-0cd532bd.so.1", {"__gcc_personality_v0": (GLOBAL, FUNC, "GCC_3.3.1")},
                     size=100_000),
             library("alpha", "libssl-1a2b3c4d.so.1.1", {"SSL_new": (GLOBAL, FUNC, "OPENSSL_1_1_0")}))
    b = dist("beta",
             elf("beta/_a.cpython-311-x86_64-linux-gnu.so", defines={"PyInit__a": (GLOBAL, FUNC, None),
                                                                      "_init": (GLOBAL, FUNC, None)}),
             library("beta", "libgcc_s-0cd532bd-c8f934f9.so.1", {"__gcc_personality_v0": (GLOBAL, FUNC, "GCC_3.3.1")},
                     size=100_500),
             library("beta", "libssl-5e6f7a8b.so.3", {"SSL_new": (GLOBAL, FUNC, "OPENSSL_3.0.0")}))
    assert findings(a, b, rule="conflict-symbols") == []
    stats = analyse_process(group_processes([a, b])[0]).stats
    assert stats["harmless"] == 2 and stats["identical"] == 1 and stats["versioned_apart"] == 1


def test_one_soname_shipped_by_two_distributions():
    a = dist("alpha", library("alpha", "libfoo.so.1", {"foo_a": (GLOBAL, FUNC, None)}, size=10_000))
    b = dist("beta", library("beta", "libfoo.so.1", {"foo_b": (GLOBAL, FUNC, None)}, size=20_000))
    (finding,) = findings(a, b, rule="conflict-soname")
    assert finding.severity == "warning" and "libfoo.so.1" in finding.message


def test_two_openmp_runtimes_by_name_with_the_hash_removed():
    a = dist("alpha", library("alpha", "libgomp-a34b3233.so.1.0.0", {}))
    b = dist("beta", library("beta", "libgomp-8949ffbf.so.1.0.0", {}))
    (finding,) = findings(a, b, rule="conflict-runtime-copies")
    assert finding.family is not None and "openmp" in finding.family.lower()
    assert {p.distribution for p in finding.providers} == {"alpha", "beta"}


def test_platforms_that_never_share_a_process():
    symbol = {"solver_scale": (GLOBAL, FUNC, None)}
    a = dist("alpha", library("alpha", "libalpha.so.1", symbol))
    b = dist("beta", library("beta", "libbeta.so.1", symbol, arch="aarch64"),
             tags=frozenset(parse_tag("cp311-cp311-manylinux_2_17_aarch64")))
    processes = group_processes([a, b])
    assert sorted(p.arch for p in processes) == ["aarch64", "x86_64"]
    assert all(analyse_process(p).findings == [] for p in processes)
