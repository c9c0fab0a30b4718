"""Work and memory that hostile input could make unbounded, now bounded (docs/hostile-input.md, "The bounds").

- compat's nearest-symbol search: linear in a name's length (difflib on whole names was quadratic: 200
  overloads of 3,000 characters, in a 17 kB pair of wheels, ran for about an hour);
- repair --hide-symbols reads the wheel's Python files in pieces (a 1 GiB ``.py`` in a 2 MB wheel was
  read whole: MemoryError);
- policy files: an ``extends`` chain and JSON nesting have a depth limit (5,000 and 100,000 raised
  RecursionError, an internal error).

Each end-to-end test runs ``python -m wheelcheck`` under RLIMIT_CPU and RLIMIT_AS, as the hostile-input
regressions do: before the fixes each was killed by a limit or ended in a traceback.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from difflib import SequenceMatcher
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fixtures.wheels import build_wheel, dist_info
from tests.fuzz.bounded import limits_preexec_args
from wheelcheck.compat.nearest_symbol import likeness
from wheelcheck.repair.hide_apply import _PY_STRING, quoted_identifiers

TAG = "cp311-cp311-linux_x86_64"


def wheelcheck(*args, cwd: Path, cpu: int, memory: int = 2 << 30) -> subprocess.CompletedProcess:
    """``python -m wheelcheck ARGS`` under the CPU and memory limits."""
    command = [*limits_preexec_args(cpu, memory), sys.executable, "-m", "wheelcheck", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, timeout=300)


def assert_not_killed(proc: subprocess.CompletedProcess) -> None:
    assert proc.returncode not in (-signal.SIGXCPU, -signal.SIGKILL), "killed by the CPU limit"
    assert "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr, proc.stderr[-3000:]


# -- compat: the nearest symbol ----------------------------------------------------------------------------

OVERLOADS = 200
PARAMETERS = 140  # each "P25LongParameterTypeName0000": the names are 3,935 characters long


def overloads_source(kind: str) -> str:
    """``ns::f`` overloaded 200 times on a long parameter list and one last parameter: ``H<k>*`` defined by
    the host, ``P<k>*`` called by the plugin (so none of the plugin's overloads is defined anywhere)."""
    structs = [f"LongParameterTypeName{i:04d}" for i in range(PARAMETERS)]
    out = "".join(f"struct {s};\n" for s in structs)
    out += "".join(f"struct H{k:03d}; struct P{k:03d};\n" for k in range(OVERLOADS))
    params = ", ".join(f"{s}*" for s in structs)
    if kind == "host":
        return out + "namespace ns {\n" + "".join(f"int f({params}, H{k:03d}*) {{ return {k}; }}\n"
                                                  for k in range(OVERLOADS)) + "}\n"
    out += "namespace ns {\n" + "".join(f"int f({params}, P{k:03d}*);\n" for k in range(OVERLOADS)) + "}\n"
    nulls = ", ".join("nullptr" for _ in structs)
    calls = "".join(f"    t += ns::f({nulls}, (P{k:03d}*)nullptr);\n" for k in range(OVERLOADS))
    return out + "int use_all() {\n    int t = 0;\n" + calls + "    return t;\n}\n"


def _metadata(name: str, requires: str = "") -> bytes:
    return f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n{requires}".encode()


@pytest.fixture(scope="module")
def overload_pair(build, tmp_path_factory) -> list[Path]:
    out = tmp_path_factory.mktemp("overloads")
    host = build.compile_c(overloads_source("host"), "libhost.so", cxx=True, flags=("-O0", "-s", "-Wl,-soname,libhost.so"))
    plugin = build.compile_c(overloads_source("plugin"), "plug_ext.so", cxx=True, libs=(host,),
                             flags=("-O0", "-s", "-Wl,-rpath,$ORIGIN/../host/lib"))
    return [build_wheel(out, "host", "1.0", TAG, {"host/__init__.py": b"", "host/lib/libhost.so": host,
                                                  f"{dist_info('host', '1.0')}/METADATA": _metadata("host")}),
            build_wheel(out, "plug", "1.0", TAG, {
                "plug/__init__.py": b"import host\n", "plug/_ext.cpython-311-x86_64-linux-gnu.so": plugin,
                f"{dist_info('plug', '1.0')}/METADATA": _metadata("plug", "Requires-Dist: host\n")})]


def test_compat_on_long_overloaded_names_finishes(overload_pair, tmp_path):
    """200 missing overloads of 3,935 characters, each compared with the host's 200: about 1 s here (the CPU
    limit is a hang guard; difflib on whole names needed about 86 ms a comparison, an hour in all)."""
    assert sum(w.stat().st_size for w in overload_pair) < 40_000
    proc = wheelcheck("compat", "--format", "json", *overload_pair, cwd=tmp_path, cpu=20)
    assert_not_killed(proc)
    assert proc.returncode == 1, proc.stderr
    (pair,) = json.loads(proc.stdout)["pairs"]
    missing = [f for f in pair["findings"] if f["rule"] == "compat-missing-symbol" and f["symbol"]]
    assert pair["verdict"] == "will-fail" and missing
    for finding in missing:  # the overload with the same number, which shares the most of the name
        assert finding["nearest"]["name"] == finding["symbol"][:-4] + "H" + finding["symbol"][-3:]
        assert finding["nearest"]["difference"] == "other signature"


def test_likeness_is_linear_in_the_length():
    """Two names of a million characters that differ in one place: compared in well under a second (difflib
    would compare them in hours)."""
    head, tail = "_ZN2ns1fE" + "P25LongParameterTypeName0000" * 36_000, "P4H000"
    wanted, near, far = head + "P4P000", head + tail, "_ZN2ns1fE" + tail
    start = time.process_time()
    assert likeness(wanted, near) > likeness(wanted, far)
    assert time.process_time() - start < 1.0


@pytest.mark.parametrize("wanted, candidates, nearest", [
    ("_ZN4host5scaleEi", ["_ZN4host5scaleEPKc", "_ZN4host5scaleEl", "_ZN4host5scaleERKSt6vectorIiSaIiEE"],
     "_ZN4host5scaleEl"),
    ("_ZN4host11name_lengthERKSs", ["_ZN4host11name_lengthEv",
                                    "_ZN4host11name_lengthERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"],
     "_ZN4host11name_lengthEv"),  # the shortest: the other ABI's string spelling is longer than the name
    ("_ZN3c1010TensorImpl4sizeEl", ["_ZNK3c1010TensorImpl4sizeB5cxx11Ev", "_ZNK3c1010TensorImpl4sizeEl"],
     "_ZNK3c1010TensorImpl4sizeEl"),
])
def test_likeness_picks_what_difflib_picks(wanted, candidates, nearest):
    """On names of the usual length, the nearest is the one difflib's ratio picks."""
    def best(score):
        return max(candidates, key=lambda c: score(wanted, c))

    assert best(likeness) == best(lambda a, b: SequenceMatcher(None, a, b, autojunk=False).ratio()) == nearest


def test_likeness_of_equal_and_empty_names():
    assert likeness("", "") == 1.0 and likeness("_ZN1a1fEv", "_ZN1a1fEv") == 1.0
    assert likeness("abc", "") == 0.0 and 0.0 < likeness("_ZN1a1fEi", "_ZN1a1fEl") < 1.0


# -- repair --hide-symbols: the wheel's Python files --------------------------------------------------------

BIG_PY = 300 << 20  # spaces, with a little entropy so that deflate stays under the 1000:1 zip-bomb check


def _big_py_pieces():
    """300 MiB of Python (a few hundred kB deflated) that names keep_me_visible as a string at its very end."""
    for i in range(BIG_PY >> 20):
        noise = (hashlib.sha256(str(i).encode()).hexdigest() * 7)[:399].encode()
        yield b" " * ((1 << 20) - 400) + noise + b"\n"
    yield b"symbol = 'keep_me_visible'\n"


@pytest.fixture(scope="module")
def big_py_wheel(build, tmp_path_factory) -> tuple[Path, Path]:
    """A wheel whose extension needs libkeep.so.1 (from the returned directory), and a 300 MiB .py."""
    out = tmp_path_factory.mktemp("bigpy")
    lib = build.compile_c("int bump(void) { return 1; }\nint keep_me_visible(void) { return 2; }\n", "libkeep.so.1",
                          flags=("-Wl,-soname,libkeep.so.1",))
    (out / "libs").mkdir()
    shutil.copy(lib, out / "libs" / "libkeep.so.1")
    ext = build.compile_c("extern int bump(void);\nint g(void) { return bump(); }\n", "keep_ext.so", libs=(lib,))
    digest, size = hashlib.sha256(), 0
    for piece in _big_py_pieces():
        digest.update(piece)
        size += len(piece)
    row = ("keep/big.py", "sha256=" + base64.urlsafe_b64encode(digest.digest()).rstrip(b"=").decode(), size)

    def add_big_py(zf: zipfile.ZipFile) -> None:  # written in pieces: the test holds no 300 MiB either
        info = zipfile.ZipInfo("keep/big.py", date_time=(2020, 2, 2, 0, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        with zf.open(info, "w", force_zip64=True) as f:
            for piece in _big_py_pieces():
                f.write(piece)

    wheel = build_wheel(out / "dist", "keep", "1.0", TAG, {"keep/_ext.cpython-311-x86_64-linux-gnu.so": ext},
                        extra_record_rows=[row], before_close=add_big_py)
    return wheel, out / "libs"


# The peak is this process's VmHWM: ru_maxrss would count the pytest worker it was started from, whose peak
# the kernel folds into it at exec when the process was started with vfork
PEAK_RSS = ("import re, sys\nfrom wheelcheck.cli import main\nsys.argv = ['wheelcheck', *sys.argv[1:]]\n"
            "try:\n    main()\nfinally:\n"
            "    status = open('/proc/self/status').read()\n"
            "    print('peak rss kB', re.search(r'VmHWM:\\s*(\\d+) kB', status).group(1), file=sys.stderr)\n")


def test_hide_symbols_streams_python_files(big_py_wheel, tmp_path):
    """repair --hide-symbols on a 300 KB wheel holding a 300 MiB .py: about 90 MB at its peak, as for a wheel
    without it, and the string at the file's end still keeps its symbol visible (the whole file was read
    into memory before: a 371 MB peak, MemoryError under a 512 MiB address space)."""
    wheel, libs = big_py_wheel
    assert wheel.stat().st_size < 1 << 20
    command = [*limits_preexec_args(30, 512 << 20), sys.executable, "-c", PEAK_RSS,
               "repair", "--hide-symbols", "--format", "json", "--lib-path", libs, "-w", tmp_path / "out", wheel]
    proc = subprocess.run(list(map(str, command)), capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert_not_killed(proc)
    assert proc.returncode == 0, proc.stderr[-3000:]
    peak = int(proc.stderr.rsplit("peak rss kB", 1)[1]) << 10
    assert peak < 200 << 20, f"peak RSS {peak >> 20} MiB"
    (hidden,) = json.loads(proc.stdout)["wheels"][0]["hidden"]
    assert "keep_me_visible" in hidden["kept"] and "bump" not in hidden["kept"]


@given(st.lists(st.sampled_from(["'", '"', "a", "b_", "9", " ", "x" * 150]), max_size=60),
       st.lists(st.integers(min_value=0, max_value=2000), max_size=8))
def test_quoted_identifiers_in_pieces_as_in_one_text(parts, cuts):
    """Scanning in pieces finds what one findall over the whole text finds, wherever the pieces are cut."""
    text = "".join(parts).encode()
    bounds = sorted({0, len(text), *(c % (len(text) + 1) for c in cuts)})
    pieces = [text[a:b] for a, b in zip(bounds, bounds[1:])]
    assert quoted_identifiers(pieces) == {m.decode() for m in _PY_STRING.findall(text)}


# -- policy files: the depth of 'extends' and of JSON --------------------------------------------------------

ROOT = Path(__file__).resolve().parents[1]


def extends_chain(length: int, *, parents_first: bool) -> list[dict]:
    """``length`` policies p0 ... each extending the next one towards manylinux_2_17's copy (the root); listed
    root first (each parent already resolved when its child comes) or leaf first (resolved by recursion)."""
    root = {k: v for k, v in json.loads((ROOT / "policies" / "manylinux_2_17.json").read_text()).items()
            if k != "aliases"}
    chain = [{**root, "name": f"p{length - 1}", "priority": 1}]
    chain += [{"name": f"p{i}", "extends": f"p{i + 1}", "priority": 1} for i in reversed(range(length - 1))]
    return chain if parents_first else chain[::-1]


@pytest.fixture(scope="module")
def any_wheel(tmp_path_factory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("pure"), "pure", "1.0", "py3-none-any", {"pure/__init__.py": b""},
                       root_is_purelib=True)


def assert_one_line_error(proc: subprocess.CompletedProcess, *expected: str) -> None:
    assert_not_killed(proc)
    assert proc.returncode == 2, f"exit {proc.returncode}\n{proc.stderr[-3000:]}"
    (line,) = proc.stderr.splitlines()
    assert "internal error" not in line and all(text in line for text in expected), line


@pytest.mark.parametrize("parents_first", [False, True])
def test_extends_chain_too_long(any_wheel, tmp_path, parents_first):
    """5,000 policies in one chain: one line naming the file (was RecursionError when listed leaf first)."""
    policy = tmp_path / "chain.json"
    policy.write_text(json.dumps(extends_chain(5000, parents_first=parents_first)))
    proc = wheelcheck("audit", "--policy-file", policy, any_wheel, cwd=tmp_path, cpu=20)
    assert_one_line_error(proc, "chain.json", "'extends'", "more than 64 policies")


@pytest.mark.parametrize("length, ok", [(64, True), (65, False)])
def test_extends_chain_limit(tmp_path, length, ok):
    from wheelcheck.errors import PolicyError
    from wheelcheck.policy.policy_loader import parse_policy_json

    for parents_first in (False, True):
        text = json.dumps(extends_chain(length, parents_first=parents_first))
        if ok:
            assert len(parse_policy_json(text, "chain.json")) == length
        else:
            with pytest.raises(PolicyError, match="more than 64 policies"):
                parse_policy_json(text, "chain.json")


@pytest.mark.parametrize("command", ["audit", "validate"])
@pytest.mark.parametrize("nesting", ["[" * 100_000 + "]" * 100_000,
                                     '{"name": "x", "rules": ' + '{"a": ' * 100_000 + "1" + "}" * 100_001])
def test_deeply_nested_policy_json(any_wheel, tmp_path, command, nesting):
    """100,000 nested arrays or objects: one line naming the file (was RecursionError, an internal error)."""
    policy = tmp_path / "nested.json"
    policy.write_text(nesting)
    args = ("audit", "--policy-file", policy, any_wheel) if command == "audit" else ("policy", "validate", policy)
    assert_one_line_error(wheelcheck(*args, cwd=tmp_path, cpu=20), "nested.json", "nested more than 64")


def test_json_depth_scan():
    from wheelcheck.errors import PolicyError
    from wheelcheck.policy.policy_loader import load_json

    assert load_json("[" * 64 + "]" * 64, "f") is not None
    with pytest.raises(PolicyError, match="f: JSON nested more than 64"):
        load_json("[" * 65 + "]" * 65, "f")
    # brackets in strings are text, however escaped
    text = json.dumps({"name": "[" * 1000 + '\\"{' * 1000, "list": [["]]]]"]]})
    assert load_json(text, "f") == json.loads(text)
    start = time.process_time()  # linear: a million escapes, a million brackets
    load_json(json.dumps(["\\\"[" * 1_000_000]), "f")
    with pytest.raises(PolicyError):
        load_json("[" * 1_000_000, "f")
    assert time.process_time() - start < 5
