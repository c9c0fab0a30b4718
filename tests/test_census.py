"""wheelcheck census on a real 2-worker Dask cluster, fed by a PEP 503/691 simple index served on 127.0.0.1.

The wheels are built here with gcc (a clean library, one needing GLIBC_2.25, one needing a library it does
not ship), plus a pure wheel and two broken ones. The oracle for every verdict is `wheelcheck audit` run as
a command on the same files.
"""
from __future__ import annotations

import hashlib
import http.server
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed")
pq = pytest.importorskip("pyarrow.parquet")

from distributed import Client, LocalCluster  # noqa: E402

from tests.fixtures.wheels import build_wheel, not_a_zip, truncated_elf  # noqa: E402
from wheelcheck.census.engine import CensusOptions, run_census  # noqa: E402
from wheelcheck.census.sources import expand_sources  # noqa: E402
from wheelcheck.census.worker import audit_source  # noqa: E402
from wheelcheck.errors import UsageError  # noqa: E402

TAG = "cp311-cp311-manylinux_2_17_x86_64"
CLEAN_SRC = "int clean_add(int a, int b) { return a + b; }\n"
LLVM_SRC = "int LLVMFakeInitialize(void) { return 1; }\nint LLVMFakeShutdown(void) { return 0; }\n"
NEW_GLIBC_SRC = ("#include <sys/random.h>\n"
                 "int fresh_random(void *b, unsigned long n) { return (int)getrandom(b, n, 0); }\n")

pytestmark = pytest.mark.skipif(os.uname().machine != "x86_64", reason="fixture wheels are tagged x86_64")


@pytest.fixture(scope="module")
def wheel_dir(tmp_path_factory, build) -> Path:
    out = tmp_path_factory.mktemp("census-wheels")
    clean = build.compile_c(CLEAN_SRC, "libclean.so")
    fresh = build.compile_c(NEW_GLIBC_SRC, "libfresh.so")
    alpha, _beta = build.alpha_beta()
    for n in range(3):  # a few of them, so two workers have work in flight at once
        build_wheel(out, f"clean{n}", "1.0", TAG, {f"clean{n}/libclean.so": clean})
    build_wheel(out, "fresh", "2.0", TAG, {"fresh/libfresh.so": fresh})
    build_wheel(out, "leaky", "1.0", TAG, {"leaky/libleaky.so": build.compile_c(LLVM_SRC, "libleaky.so")})
    build_wheel(out, "alpha", "0.3", TAG, {"alpha/libalpha.so.1": alpha})
    build_wheel(out, "puresome", "1.0", "py3-none-any", {"puresome/__init__.py": b""}, root_is_purelib=True)
    not_a_zip(out)
    truncated_elf(out)
    return out


class Index:
    """A simple index of ``wheel_dir`` on 127.0.0.1: /simple/ (PEP 503 HTML, or PEP 691 JSON when the
    Accept header asks for it) and /files/; ``delay`` slows every wheel download (a slow network)."""

    def __init__(self, wheel_dir: Path) -> None:
        self.wheel_dir = wheel_dir
        self.delay = 0.0
        self.json_requests = 0
        self.yanked: set[str] = set()  # file names marked yanked (data-yanked / "yanked": true)
        self.html_only = False  # answer PEP 503 HTML whatever the Accept header asks for
        index = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                parts = [p for p in self.path.split("?")[0].split("/") if p]
                wants_json = ("application/vnd.pypi.simple.v1+json" in self.headers.get("Accept", "")
                              and not index.html_only)
                if parts[:1] == ["files"] and len(parts) == 2 and (wheel_dir / parts[1]).is_file():
                    time.sleep(index.delay)
                    return self._send((wheel_dir / parts[1]).read_bytes(), "application/octet-stream")
                if parts == ["simple"]:
                    names = sorted(index.projects())
                    if wants_json:
                        index.json_requests += 1
                        return self._json({"meta": {"api-version": "1.0"}, "projects": [{"name": n} for n in names]})
                    return self._html("".join(f'<a href="{n}/">{n}</a>\n' for n in names))
                if parts[:1] == ["simple"] and len(parts) == 2 and index.projects().get(parts[1]):
                    files = index.projects()[parts[1]]
                    if wants_json:
                        index.json_requests += 1
                        return self._json({"meta": {"api-version": "1.0"}, "name": parts[1], "files": [
                            {"filename": f.name, "url": f"../../files/{f.name}", "yanked": f.name in index.yanked,
                             "hashes": {"sha256": hashlib.sha256(f.read_bytes()).hexdigest()}} for f in files]})
                    return self._html("".join(
                        f'<a href="../../files/{f.name}#sha256={hashlib.sha256(f.read_bytes()).hexdigest()}"'
                        f'{" data-yanked" if f.name in index.yanked else ""}>'
                        f'{f.name}</a>\n' for f in files))
                self.send_error(404)

            def _send(self, body: bytes, kind: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _html(self, body: str) -> None:
                self._send(f"<!DOCTYPE html><html><body>\n{body}</body></html>".encode(), "text/html")

            def _json(self, data: dict) -> None:
                self._send(json.dumps(data).encode(), "application/vnd.pypi.simple.v1+json")

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/simple/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def projects(self) -> dict[str, list[Path]]:
        out: dict[str, list[Path]] = {}
        for wheel in sorted(self.wheel_dir.glob("*.whl")):
            out.setdefault(wheel.name.split("-")[0].lower(), []).append(wheel)
        return out


@pytest.fixture(scope="module")
def index(wheel_dir):
    served = Index(wheel_dir)
    yield served
    served.server.shutdown()


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                      memory_limit="1GiB") as local, Client(local) as client:
        yield local, client


def read(out: Path, table: str) -> list[dict]:
    return pq.read_table(out / table).to_pylist()


def cli_audit(paths: list[Path]) -> dict[str, dict]:
    """`wheelcheck audit --format json` on the wheels, by file name: the oracle."""
    proc = subprocess.run([sys.executable, "-m", "wheelcheck", "audit", "--format", "json", *map(str, paths)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode in (0, 1, 2), proc.stderr
    return {w["filename"]: w for w in json.loads(proc.stdout)["wheels"]}


@pytest.fixture(scope="module")
def index_census(tmp_path_factory, index, cluster):
    """One census of the whole index: (output directory, sources, result)."""
    local, _client = cluster
    out = tmp_path_factory.mktemp("census") / "results"
    sources = expand_sources([index.url])
    result = run_census(sources, CensusOptions(out_dir=out, scheduler=local.scheduler_address, batch_size=3))
    return out, sources, result


def test_census_of_an_index_matches_audit_and_resumes(wheel_dir, index, cluster, index_census):
    local, _client = cluster
    out, sources, result = index_census
    assert sorted(s.filename for s in sources) == sorted(p.name for p in wheel_dir.glob("*.whl"))
    assert all(s.declared_sha256 and s.sha256 is None for s in sources)  # the index's claims, kept apart
    assert index.json_requests > 0  # PEP 691 JSON asked for and used
    assert (result.total, result.skipped, result.audited) == (len(sources), 0, len(sources))
    assert len(list((out / "wheels").glob("*.parquet"))) >= 3  # written in batches as wheels arrived

    rows = {r["filename"]: r for r in read(out, "wheels")}
    oracle = cli_audit(sorted(wheel_dir.glob("*.whl")))
    assert rows.keys() == oracle.keys()
    findings = read(out, "findings")
    for name, expected in oracle.items():
        row = rows[name]
        assert row["sha256"] == hashlib.sha256((wheel_dir / name).read_bytes()).hexdigest()
        if "error" in expected:
            assert row["error"] and name in row["error"] and row["passed"] is None, row
            assert expected["error"].split(": ", 1)[1] in row["error"]  # the same problem, another path
            continue
        assert row["error"] is None, row["error"]
        assert row["audit_cpu_seconds"] > 0 and row["audit_seconds"] >= row["audit_cpu_seconds"] / 4
        assert (row["passed"], row["deserved_tag"], row["cxx_abi"]) == \
               (expected["passed"], expected["deserved_tag"], expected["cxx_abi"]), name
        assert sorted(row["claimed_tags"]) == sorted(expected["claimed_tags"])
        assert sorted((f["rule"], f["severity"], f["file"]) for f in findings if f["filename"] == name) == \
               sorted((f["rule"], f["severity"], f["file"]) for f in expected["findings"])
    assert {r["passed"] for r in rows.values()} == {True, False, None}  # passes, fails and errors all seen
    assert rows["notazip-0.1-cp311-cp311-linux_x86_64.whl"]["error"]

    elves = read(out, "elf_files")
    fresh = next(e for e in elves if e["path"] == "fresh/libfresh.so")
    assert {"library": "libc.so.6", "version": "GLIBC_2.25", "symbols": ["getrandom"]} in fresh["version_needs"]
    assert "libbeta.so.1" in next(e for e in elves if e["path"] == "alpha/libalpha.so.1")["needed"]

    again = run_census(expand_sources([index.url]), CensusOptions(out_dir=out, scheduler=local.scheduler_address))
    assert (again.audited, again.skipped) == (0, len(sources))
    assert len(read(out, "wheels")) == len(sources)


def test_docs_queries_run_on_census_output(index_census):
    """The DuckDB queries of docs/census.md, run over the census of the fixture wheels."""
    duckdb = pytest.importorskip("duckdb")
    out = index_census[0]
    docs = (Path(__file__).resolve().parents[1] / "docs" / "census.md").read_text()
    queries = [block.split("```", 1)[0] for block in docs.split("```sql\n")[1:]]
    assert len(queries) >= 4

    def run(query: str) -> list[tuple]:  # the docs name the tables relative to the output directory
        for table in ("wheels", "findings", "elf_files"):
            query = query.replace(f"'{table}/", f"'{out}/{table}/")
        return duckdb.sql(query).fetchall()

    answers = [run(q) for q in queries]
    assert all(a or "GLIBC" in q for q, a in zip(queries, answers))
    assert next(a for q, a in zip(queries, answers) if "'llvm'" in q) == [("leaky", "1.0", "leaky/libleaky.so", 2)]
    glibc = next(q for q in queries if "'GLIBC_2.34'" in q)
    assert answers[queries.index(glibc)] == []  # nothing here needs 2.34; the same query for 2.25:
    assert run(glibc.replace("'GLIBC_2.34'", "'GLIBC_2.25'")) == [("fresh", "2.0", "fresh/libfresh.so", "getrandom")]
    errors = next(a for q, a in zip(queries, answers) if q.startswith("SELECT filename, error"))
    assert sorted(e[0] for e in errors) == ["notazip-0.1-cp311-cp311-linux_x86_64.whl",
                                            "truncatedelf-0.1-cp311-cp311-linux_x86_64.whl"]


def test_a_killed_worker_loses_no_wheel(tmp_path, wheel_dir, index, cluster):
    local, client = cluster
    good = ["clean0", "clean1", "clean2", "fresh", "alpha", "puresome"]
    sources = expand_sources([index.url], projects=good)
    index.delay = 0.6  # every download takes a second: both workers hold a wheel when one is killed
    pids_before = client.run(os.getpid)
    killed = []

    def kill_one(result) -> None:
        if result.audited >= 1 and not killed:  # mid-run: one wheel done, the others in flight
            victim = sorted(pids_before.values())[0]
            os.kill(victim, signal.SIGKILL)
            killed.append(victim)

    try:
        result = run_census(sources, CensusOptions(out_dir=tmp_path / "out", scheduler=local.scheduler_address),
                            progress=kill_one)
    finally:
        index.delay = 0.0
    assert killed and result.audited == len(sources) == len(good)
    rows = read(tmp_path / "out", "wheels")
    assert sorted(r["name"] for r in rows) == sorted(good)
    assert [r["error"] for r in rows if r["error"]] == []
    client.wait_for_workers(2, timeout=120)  # the nanny brings the worker back for the next test
    assert killed[0] not in client.run(os.getpid).values()


def _finished_results(dask_scheduler) -> dict[str, list[str]]:
    """On the scheduler: census results computed and not yet fetched by the client, by the workers holding them."""
    return {str(ts.key): [ws.address for ws in ts.who_has] for ts in dask_scheduler.tasks.values()
            if ts.state == "memory" and str(ts.key).startswith("census-")}


def test_a_worker_killed_holding_a_finished_result_loses_no_wheel(tmp_path, wheel_dir, index, cluster):
    """The result is computed but not yet fetched when its worker dies: the client fetches, fails, has the
    scheduler run it again and waits for it. It runs inside the caller's own `with Client(...)` (the fixture's),
    as a library user's census would: the wait must be on the census client's loop, not the caller's."""
    local, client = cluster
    client.wait_for_workers(2, timeout=120)
    good = ["clean0", "clean1", "clean2", "fresh", "alpha", "puresome"]
    sources = expand_sources([index.url], projects=good)
    index.delay = 0.3
    pids = client.run(os.getpid)
    killed: list[int] = []

    def kill_a_holder(result) -> None:
        if result.audited < 1 or killed:
            return
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            holders = [address for addresses in client.run_on_scheduler(_finished_results).values()
                       for address in addresses if address in pids]
            if holders:
                killed.append(pids[holders[0]])
                os.kill(killed[0], signal.SIGKILL)
                return
            time.sleep(0.02)

    try:
        result = run_census(sources, CensusOptions(out_dir=tmp_path / "out", scheduler=local.scheduler_address),
                            progress=kill_a_holder)
    finally:
        index.delay = 0.0
    assert killed, "no finished result was waiting on a worker"
    rows = read(tmp_path / "out", "wheels")
    assert sorted(r["name"] for r in rows) == sorted(good)
    assert [r["error"] for r in rows if r["error"]] == [] and result.audited == len(good)
    client.wait_for_workers(2, timeout=120)


def test_a_wheel_that_times_out_is_a_row_with_its_error(wheel_dir):
    source = expand_sources([str(wheel_dir / f"clean0-1.0-{TAG}.whl")])[0]
    rows = audit_source(source, {}, timeout=0.01)
    (row,) = rows["wheels"]
    assert "timed out after 0.01 s" in row["error"] and row["sha256"] == source.sha256
    assert rows["findings"] == rows["elf_files"] == []


def test_a_wheel_that_crashes_the_auditor_is_a_row_with_its_error(wheel_dir):
    """An auditing child that dies (here: out of address space) costs that wheel's row, not the worker."""
    source = expand_sources([str(wheel_dir / f"clean0-1.0-{TAG}.whl")])[0]
    rows = audit_source(source, {}, timeout=120, memory=16 << 20)
    (row,) = rows["wheels"]
    # out of address space, the child fails at its next mapping: a MemoryError (raised, or killing it) or a thread
    # that cannot start, as what the parent imported before it forked decides; the wheel is a row with that error
    error = row["error"]
    assert error.startswith(f"{source.filename}: auditor ") and ("MemoryError" in error or "new thread" in error), error
    assert row["passed"] is None and row["sha256"] == source.sha256
    assert audit_source(source, {}, timeout=120, memory=2 << 30)["wheels"][0]["passed"] is True


def test_two_runs_of_one_process_in_one_second_keep_both_batches(tmp_path):
    """Each run's parts have names of their own: a second sink must not replace the first one's parts."""
    from wheelcheck.census.tables import ParquetSink

    for name in ("first", "second"):
        sink = ParquetSink(tmp_path / "out")
        sink.add({"wheels": [{"source": f"/wheels/{name}.whl", "filename": f"{name}.whl", "error": "x"}]})
        sink.flush()
    assert sorted(r["filename"] for r in read(tmp_path / "out", "wheels")) == ["first.whl", "second.whl"]


def test_sources_listing_directory_and_urls(tmp_path, wheel_dir, index):
    listing = tmp_path / "wheels.txt"
    clean = wheel_dir / f"clean0-1.0-{TAG}.whl"
    url = index.url.replace("/simple/", f"/files/clean1-1.0-{TAG}.whl")
    listing.write_text(f"# a listing\n{clean}\n\n{url}\n")
    found = expand_sources([str(listing), str(clean), index.url], projects=["CLEAN2"])
    assert [s.filename for s in found] == [clean.name, f"clean1-1.0-{TAG}.whl", f"clean2-1.0-{TAG}.whl"]
    assert found[1].sha256 is None  # learnt by the worker while it downloads
    problems: list[str] = []
    listed = index.projects
    index.projects = lambda: {**listed(), "gone": []}  # listed, but its page is 404 now: skipped, reported
    try:
        whole = expand_sources([index.url], problems=problems)
        with pytest.raises(UsageError, match="gone/: cannot read the index page"):
            expand_sources([index.url], projects=["gone"])
    finally:
        index.projects = listed
    assert len(whole) == len(list(wheel_dir.glob("*.whl")))
    index.yanked = {f"clean2-1.0-{TAG}.whl"}
    try:
        assert expand_sources([index.url], projects=["clean2"]) == []
        index.html_only = True
        assert expand_sources([index.url], projects=["clean2"]) == []
        index.yanked = set()
        (html,) = expand_sources([index.url], projects=["clean2"])
        assert html == found[2]  # same URL and sha256 from the PEP 503 page as from the PEP 691 one
    finally:
        index.yanked, index.html_only = set(), False
    assert len(problems) == 1 and "/simple/gone/: cannot read the index page (HTTP Error 404" in problems[0]
    rows = audit_source(found[1], {})
    assert rows["wheels"][0]["sha256"] == hashlib.sha256((wheel_dir / found[1].filename).read_bytes()).hexdigest()
    assert rows["wheels"][0]["passed"] is True


def test_cli_census_on_its_own_local_cluster(tmp_path, wheel_dir):
    """No --scheduler: the command starts (and stops) a local cluster itself."""
    args = [sys.executable, "-m", "wheelcheck", "census", str(wheel_dir / f"clean0-1.0-{TAG}.whl"),
            str(wheel_dir / "notazip-0.1-cp311-cp311-linux_x86_64.whl"), "-o", str(tmp_path / "o"), "--workers", "2"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "2 wheels, 0 already in" in proc.stdout and "(1 pass, 0 fail, 1 errors)" in proc.stdout
    again = subprocess.run(args, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0 and "2 wheels, 2 already in" in again.stdout and "0 audited" in again.stdout


def test_cli_names_the_extra_when_it_is_missing(tmp_path):
    code = ("import sys; sys.modules['distributed'] = None; from wheelcheck.cli import main; "
            f"sys.argv = ['wheelcheck', 'census', {str(tmp_path)!r}, '-o', {str(tmp_path / 'o')!r}]; main()")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "wheelcheck: error: census needs the census extra (distributed is missing): pip install 'wheelcheck[census]'"]
