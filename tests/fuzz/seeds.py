"""Real ELF seeds for the fuzzer: the canvas library built for several architectures, and a C++ library.

Each seed imports versioned libc/libm functions (version needs), defines two versions of its own
(version definitions, from a version script), holds a dlopen-style soname string and a 256 kB read-only
canvas (``elfcraft.CANVAS_SOURCE``). The C++ seed (host g++) exports real std::string manglings of both
libstdc++ ABIs. ``seed_targets(all_arches=True)`` is every zig target (the long campaign); the default is
one of each kind the parser must tell apart: 64-bit little (host gcc), 64-bit little (aarch64), 32-bit
little (i686), 64-bit big-endian (s390x).
"""
from __future__ import annotations

from pathlib import Path

from tests.fixtures.compile import ZIG_MUSL_TARGETS, ZIG_TARGETS, FixtureBuilder
from tests.fuzz.elfcraft import CANVAS_SOURCE

__all__ = ["seed_targets", "build_seeds", "Seeds", "CXX_SEED_SOURCE"]


class Seeds(dict):
    """Seed name -> ELF bytes, with a repr short enough for hypothesis to print beside a failure."""

    def __repr__(self) -> str:
        return f"<ELF seeds {', '.join(sorted(self))}>"

VERSION_SCRIPT = "FUZZ_1.0 { global: fuzz_export; fuzz_canvas; }; FUZZ_2.0 { global: _Z*; } FUZZ_1.0; " \
                 "FUZZ_3.0 { local: *; } FUZZ_2.0;\n"

CXX_SEED_SOURCE = r"""
#include <string>
#include <list>
#include <cmath>
extern "C" __attribute__((used, visibility("default"))) const unsigned char fuzz_canvas[262144] = {1, 2, 3};
namespace fuzz {
__attribute__((visibility("default"))) std::string join(const std::string &a, const std::string &b) { return a + b; }
__attribute__((visibility("default"))) std::list<int> numbers(int n) { std::list<int> l; l.push_back(n); return l; }
__attribute__((visibility("default"))) double root(double x) { return std::sqrt(x) + std::exp(x); }
}
"""


def seed_targets(all_arches: bool = False) -> dict[str, str | None]:
    """Seed name -> zig target (None: the host's gcc)."""
    if all_arches:
        return {"host": None, **{arch: t for arch, t in ZIG_TARGETS.items()},
                **{f"{arch}-musl": t for arch, t in ZIG_MUSL_TARGETS.items()}}
    return {"host": None, "aarch64": ZIG_TARGETS["aarch64"], "i686": ZIG_TARGETS["i686"],
            "s390x": ZIG_TARGETS["s390x"]}


def build_seeds(builder: FixtureBuilder, targets: dict[str, str | None]) -> Seeds:
    """Seed name -> ELF bytes (plus "host-cxx" for both libstdc++ ABIs, built with the host g++)."""
    script = Path(builder.cache_dir) / "fuzz-seed.map"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(VERSION_SCRIPT)
    seeds = Seeds()
    for name, target in targets.items():
        path = builder.compile_c(CANVAS_SOURCE, "libfuzzseed.so.1", target=target, libs=("m",),
                                 flags=("-Wl,-soname,libfuzzseed.so.1", f"-Wl,--version-script,{script}"))
        seeds[name] = path.read_bytes()
    for abi in (0, 1):
        path = builder.compile_c(CXX_SEED_SOURCE, "libfuzzcxx.so.1", cxx=True,
                                 flags=(f"-D_GLIBCXX_USE_CXX11_ABI={abi}", "-Wl,-soname,libfuzzcxx.so.1"))
        seeds[f"host-cxx{abi}"] = path.read_bytes()
    return seeds
