"""wheelcheck census against a hostile index: every page, link and file below is the attacker's.

Each test serves its attack from HTTP servers on 127.0.0.1 (a second server, on another port, is "another
host"), built here; the endless and dripping answers stop by themselves after a bounded time, and the
census's caps and deadlines are made small through its own parameters so that each test takes seconds.
"""
from __future__ import annotations

import hashlib
import http.server
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

pytest.importorskip("distributed")
pq = pytest.importorskip("pyarrow.parquet")

from distributed import LocalCluster  # noqa: E402

from tests.fixtures.wheels import build_wheel  # noqa: E402
from wheelcheck.census.engine import CensusOptions, run_census  # noqa: E402
from wheelcheck.census.fetch import FetchError, fetch, origin_of  # noqa: E402
from wheelcheck.census.sources import PageLimits, WheelSource, expand_sources  # noqa: E402
from wheelcheck.census.scratch import PREFIX as SCRATCH_PREFIX  # noqa: E402
from wheelcheck.census.worker import audit_source  # noqa: E402

PURE = "py3-none-any"
ELF_TAG = "cp311-cp311-manylinux_2_17_x86_64"
Answer = Callable[[http.server.BaseHTTPRequestHandler], None]


class Site:
    """An HTTP server on 127.0.0.1 whose answer to each path the test sets; it records every path asked."""

    def __init__(self) -> None:
        self.routes: dict[str, Answer] = {}
        self.asked: list[str] = []
        self.closing = threading.Event()  # ends the endless and dripping answers
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                path = self.path.split("?")[0]
                site.asked.append(path)
                answer = site.routes.get(path)
                if answer is None:
                    return self.send_error(404)
                try:
                    answer(self)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client hung up: what a cap or a deadline does

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.host = f"127.0.0.1:{self.server.server_address[1]}"
        self.origin = f"http://{self.host}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.closing.set()
        self.server.shutdown()
        self.server.server_close()

    def body(self, path: str, data: bytes, kind: str = "text/html") -> None:
        def answer(h: http.server.BaseHTTPRequestHandler) -> None:
            h.send_response(200)
            h.send_header("Content-Type", kind)
            h.send_header("Content-Length", str(len(data)))
            h.end_headers()
            h.wfile.write(data)
        self.routes[path] = answer

    def html(self, path: str, hrefs: list[str]) -> None:
        self.body(path, "".join(f'<a href="{h}">{h.rsplit("/", 1)[-1]}</a>\n' for h in hrefs).encode())

    def listing(self, names: list[str]) -> None:
        self.body("/simple/", "".join(f'<a href="{n}/">{n}</a>\n' for n in names).encode())

    def pep691(self, path: str, document: object) -> None:
        self.body(path, json.dumps(document).encode(), "application/vnd.pypi.simple.v1+json")

    def endless(self, path: str, limit: int = 128 << 20) -> None:
        """A body with no length that goes on (up to ``limit`` bytes) until the client hangs up."""
        def answer(h: http.server.BaseHTTPRequestHandler) -> None:
            h.send_response(200)
            h.send_header("Content-Type", "text/html")
            h.end_headers()
            chunk = b"<a>" * 21845
            for _ in range(limit // len(chunk)):
                if self.closing.is_set():
                    return
                h.wfile.write(chunk)
        self.routes[path] = answer

    def drip(self, path: str, in_headers: bool = False, seconds: float = 12.0, every: float = 0.2) -> None:
        """One byte every ``every`` seconds, of the body or of a header line that never ends, for ``seconds``."""
        def answer(h: http.server.BaseHTTPRequestHandler) -> None:
            if in_headers:
                h.wfile.write(b"HTTP/1.0 200 OK\r\nX-Drip: ")
            else:
                h.send_response(200)
                h.send_header("Content-Length", "1000000")
                h.end_headers()
            end = time.monotonic() + seconds
            while time.monotonic() < end and not self.closing.wait(every):
                h.wfile.write(b"x")
        self.routes[path] = answer

    def redirect(self, path: str, location: str) -> None:
        def answer(h: http.server.BaseHTTPRequestHandler) -> None:
            h.send_response(302)
            h.send_header("Location", location)
            h.send_header("Content-Length", "0")
            h.end_headers()
        self.routes[path] = answer


@pytest.fixture
def site() -> Iterator[Site]:
    served = Site()
    yield served
    served.close()


@pytest.fixture
def elsewhere() -> Iterator[Site]:
    """Another origin (same loopback address, another port): nothing may ever be asked of it."""
    served = Site()
    yield served
    served.close()


@pytest.fixture(scope="module")
def pure_wheels(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("hostile-wheels")
    return {name: build_wheel(out, name, "1.0", PURE, {f"{name}/__init__.py": f"# {name}\n".encode()},
                              root_is_purelib=True) for name in ("good", "victim", "aaa")}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def serve_wheel(site: Site, wheel: Path, directory: str = "files") -> str:
    site.body(f"/{directory}/{wheel.name}", wheel.read_bytes(), "application/octet-stream")
    return f"{site.origin}/{directory}/{wheel.name}"


def test_an_endless_index_page_stops_at_the_page_cap(site, pure_wheels):
    """An endless project page is read up to the page cap (64 MiB by default), not whole; the others are read."""
    good = pure_wheels["good"]
    site.listing(["good", "endless"])
    site.html("/simple/good/", [f"../../files/{good.name}"])
    serve_wheel(site, good)
    site.endless("/simple/endless/")
    problems: list[str] = []
    started = time.monotonic()
    found = expand_sources([f"{site.origin}/simple/"], problems=problems)
    assert time.monotonic() - started < 20
    assert [s.filename for s in found] == [good.name]
    assert problems == [f"{site.origin}/simple/endless/: cannot read the index page "
                        f"(more than the {64 << 20} bytes allowed)"]


def test_a_dripping_index_page_stops_at_its_deadline(site, pure_wheels):
    """A page that sends a byte at a time, in its body or in a header that never ends, has one deadline for
    the whole fetch: with 2 s, both end in about 2 s, not at a per-read time-out that every byte renews."""
    site.listing(["body", "headers"])
    site.drip("/simple/body/")
    site.drip("/simple/headers/", in_headers=True)
    problems: list[str] = []
    started = time.monotonic()
    found = expand_sources([f"{site.origin}/simple/"], problems=problems, limits=PageLimits(seconds=2))
    assert time.monotonic() - started < 6  # the two pages are read at once
    assert found == []
    assert sorted(problems) == [f"{site.origin}/simple/{p}/: cannot read the index page (did not finish within 2 s)"
                                for p in ("body", "headers")]


def test_a_download_stops_at_the_size_the_index_declares(site, tmp_path):
    """The index declares 1,000 bytes and the file never ends: the download stops past 1,000 bytes, and the
    wheel is a row with that error; without a declared size the census's cap stops it."""
    site.listing(["small"])
    name = f"small-1.0-{PURE}.whl"
    site.pep691("/simple/small/", {"meta": {"api-version": "1.1"}, "name": "small", "files": [
        {"filename": name, "url": f"/files/{name}", "hashes": {"sha256": "0" * 64}, "size": 1000}]})
    site.endless(f"/files/{name}", limit=64 << 20)
    (source,) = expand_sources([f"{site.origin}/simple/"])
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    started = time.monotonic()
    (row,) = audit_source(source, {}, scratch=str(scratch))["wheels"]
    assert time.monotonic() - started < 10
    assert row["error"] == f"{source.location}: download failed (larger than the 1000 bytes the index declares)"
    assert row["sha256"] is None and row["passed"] is None and source.declared_size == 1000
    undeclared = WheelSource(source.location, source.filename, origins=source.origins)
    (row,) = audit_source(undeclared, {}, scratch=str(scratch), max_bytes=1 << 20)["wheels"]
    assert row["error"] == f"{source.location}: download failed (larger than {1 << 20} bytes, the census's cap)"
    assert list(scratch.iterdir()) == []


def test_the_timeout_is_a_deadline_over_the_download(site):
    """--timeout covers the download: a file that drips a byte at a time ends at it, download and all."""
    name = f"slow-1.0-{PURE}.whl"
    site.drip(f"/files/{name}")
    (source,) = expand_sources([f"{site.origin}/files/{name}"])
    started = time.monotonic()
    (row,) = audit_source(source, {}, timeout=2)["wheels"]
    assert time.monotonic() - started < 6
    assert row["error"] == f"{source.location}: download failed (did not finish within 2 s)"


def test_a_silent_tls_server_is_cut_at_the_deadline():
    """An https server that accepts the connection and never answers the TLS handshake: the deadline covers
    the handshake too (the census's https connections are the watched ones)."""
    listener = socket.create_server(("127.0.0.1", 0))
    try:
        url = f"https://127.0.0.1:{listener.getsockname()[1]}/simple/"
        started = time.monotonic()
        with pytest.raises(FetchError) as caught:
            fetch(url, [origin_of(url)], seconds=1, max_bytes=1 << 20, write=lambda chunk: None)
        assert time.monotonic() - started < 4
        assert str(caught.value) == f"{url}: did not finish within 1 s"
    finally:
        listener.close()


def test_links_that_leave_the_index_are_not_followed(site, elsewhere, pure_wheels, tmp_path_factory):
    """Project names like file:/path# or //other-host/..., wheel links and redirects to another origin or to
    a local file: none is read; each is a row with its error, and the index's own wheels are audited."""
    good = pure_wheels["good"]
    secret = tmp_path_factory.mktemp("secret") / "page"  # an index page on this machine, listing a wheel
    secret.write_text(f'<a href="{serve_wheel(site, good, "hidden")}">{good.name}</a>\n')
    other = elsewhere.host
    elsewhere.html("/simple/evil/", [f"http://{other}/files/{good.name}"])
    site.listing(["good", f"file:{secret}#", f"//{other}/simple/evil", "moved", "away"])
    site.html("/simple/good/", [
        f"../../files/{good.name}",
        f"http://{other}/files/other-1.0-{PURE}.whl",  # another host's wheel
        f"http://{site.host}@{other}/files/user-1.0-{PURE}.whl",  # the host is the one after the @
        f"file:{secret.parent}/local-1.0-{PURE}.whl",
        f"../../redirected/away-1.0-{PURE}.whl",
    ])
    serve_wheel(site, good)
    site.redirect(f"/redirected/away-1.0-{PURE}.whl", f"http://{other}/files/{good.name}")
    site.redirect("/simple/moved/", "/simple/good/")  # within the origin: followed
    site.redirect("/simple/away/", f"http://{other}/simple/evil/")
    problems: list[str] = []
    found = expand_sources([f"{site.origin}/simple/"], problems=problems)

    assert problems == [f"{site.origin}/simple/away/: cannot read the index page (redirect to "
                        f"'http://{other}/simple/evil/' refused: not on {site.origin})"]
    errors = {s.filename: s.problem for s in found if s.problem}
    assert errors == {
        "projects[1]": f"{site.origin}/simple/: projects[1]: 'file:{secret}#' is not a project name",
        "projects[2]": f"{site.origin}/simple/: projects[2]: '//{other}/simple/evil' is not a project name",
        f"other-1.0-{PURE}.whl": f"http://{other}/files/other-1.0-{PURE}.whl: not fetched: not on {site.origin}",
        f"user-1.0-{PURE}.whl": f"http://{site.host}@{other}/files/user-1.0-{PURE}.whl: not fetched: not on {site.origin}",
        f"local-1.0-{PURE}.whl": f"file://{secret.parent}/local-1.0-{PURE}.whl: not fetched: not an http or https URL",
    }
    wheels = [s for s in found if not s.problem]
    assert [s.location for s in wheels] == [f"{site.origin}/files/{good.name}",
                                            f"{site.origin}/redirected/away-1.0-{PURE}.whl"]
    assert site.asked.count("/simple/good/") == 2  # "moved" was followed to it, within the origin
    away = wheels[1]
    (row,) = audit_source(away, {})["wheels"]
    assert row["error"] == (f"{away.location}: download failed (redirect to 'http://{other}/files/{good.name}' "
                            f"refused: not on {site.origin})")
    assert elsewhere.asked == [] and "/hidden/" + good.name not in site.asked


def test_a_file_origin_admits_wheels_not_pages(site, elsewhere, pure_wheels):
    """--file-origin admits another origin for wheels (and redirects of wheels to it), never for pages."""
    good = pure_wheels["good"]
    site.listing(["good", "away"])
    site.html("/simple/good/", [serve_wheel(elsewhere, good), f"../../redirected/{good.name}"])
    site.redirect(f"/redirected/{good.name}", f"{elsewhere.origin}/files/{good.name}")
    site.redirect("/simple/away/", f"{elsewhere.origin}/simple/away/")
    problems: list[str] = []
    found = expand_sources([f"{site.origin}/simple/"], problems=problems, file_origins=[elsewhere.origin])
    assert [s.location for s in found] == [f"{elsewhere.origin}/files/{good.name}",
                                           f"{site.origin}/redirected/{good.name}"]
    assert problems == [f"{site.origin}/simple/away/: cannot read the index page (redirect to "
                        f"'{elsewhere.origin}/simple/away/' refused: not on {site.origin})"]
    for source in found:
        (row,) = audit_source(source, {})["wheels"]
        assert (row["error"], row["sha256"], row["passed"]) == (None, sha256(good), True)
    assert elsewhere.asked == [f"/files/{good.name}"] * 2


def test_a_malformed_page_or_entry_is_a_row_and_the_crawl_goes_on(site, pure_wheels):
    """PEP 691 entries of the wrong types, a page that is not a project page, JSON nested past the parser's
    stack, HTML that html.parser gives up on: each is a row with its error, and the other projects are read."""
    good = pure_wheels["good"]
    name, sized = f"hashed-1.0-{PURE}.whl", f"sized-1.0-{PURE}.whl"
    pages = {
        "good": [{"filename": good.name, "url": f"../../files/{good.name}", "hashes": {"sha256": sha256(good)}}],
        "urlnumber": [{"filename": name, "url": 5, "hashes": {}}],
        "hasheslist": [{"filename": name, "url": f"/files/{name}", "hashes": ["sha256"]}],
        "entrynumber": [7],
        "badhash": [{"filename": name, "url": f"/files/{name}", "hashes": {"sha256": "not-hex"}}],
        "badsize": [{"filename": sized, "url": f"/files/{sized}", "hashes": {}, "size": "big"}],
        "filesstring": "x",
    }
    site.listing([*pages, "deep", "badhtml"])
    for project, files in pages.items():
        site.pep691(f"/simple/{project}/", {"meta": {"api-version": "1.0"}, "name": project, "files": files})
    site.body("/simple/deep/", b"[" * 200_000, "application/vnd.pypi.simple.v1+json")
    site.body("/simple/badhtml/", b"<![ x")
    serve_wheel(site, good)
    found = expand_sources([f"{site.origin}/simple/"])

    page = f"{site.origin}/simple"
    assert {s.filename: s.problem for s in found if s.problem} == {
        "urlnumber files[0]": f"{page}/urlnumber/: urlnumber files[0]: url is not a string",
        "hasheslist files[0]": f"{page}/hasheslist/: hasheslist files[0]: hashes is not an object",
        "entrynumber files[0]": f"{page}/entrynumber/: entrynumber files[0]: not a file entry with a filename",
        name: f"{site.origin}/files/{name}: the index declares a malformed sha256 'not-hex'",
        sized: f"{site.origin}/files/{sized}: the index declares a malformed size 'big'",
        "filesstring": f"{page}/filesstring/: not a readable project page (not a PEP 691 project page (no list of "
                       "files))",
        "deep": f"{page}/deep/: not a readable project page (JSON nested too deep)",
        "badhtml": f"{page}/badhtml/: not a readable project page (unreadable HTML (expected name token at '<![ x'))",
    }
    (wheel,) = [s for s in found if not s.problem]
    assert wheel.filename == good.name
    deep = next(s for s in found if s.filename == "deep")
    (row,) = audit_source(deep, {})["wheels"]
    assert row["error"] == deep.problem and row["source"] == f"{page}/deep/" and row["passed"] is None


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0",
                      memory_limit="1GiB") as local:
        yield local


def wheel_rows(out: Path) -> list[dict]:
    return pq.read_table(out / "wheels").to_pylist()


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the fixture wheel is tagged x86_64")
def test_a_declared_hash_cannot_hide_another_projects_wheel(site, cluster, build, tmp_path, pure_wheels):
    """Project aaa (listed first) declares the victim's sha256 for its own file. The census still audits the
    victim's wheel, in the same run and in a run that resumes after aaa's row was written; rows carry the
    hash of the bytes fetched, and a wheel served at two URLs has its ELF rows written once."""
    victim = build_wheel(tmp_path / "wheels", "victim", "1.0", ELF_TAG,
                         {"victim/libvictim.so": build.compile_c("int victim(void) { return 1; }\n", "libvictim.so")})
    aaa = pure_wheels["aaa"]
    serve_wheel(site, aaa)
    serve_wheel(site, victim)
    serve_wheel(site, victim, "mirror")
    site.html("/simple/aaa/", [f"../../files/{aaa.name}#sha256={sha256(victim)}"])
    site.html("/simple/victim/", [f"../../files/{victim.name}#sha256={sha256(victim)}",
                                  f"../../mirror/{victim.name}#sha256={sha256(victim)}"])
    options = CensusOptions(out_dir=tmp_path / "out", scheduler=cluster.scheduler_address)

    site.listing(["aaa"])  # the first run sees aaa only: its row is written before the victim is listed
    first = run_census(expand_sources([f"{site.origin}/simple/"]), options)
    (row,) = wheel_rows(options.out_dir)
    assert (row["sha256"], row.get("declared_sha256"), first.audited) == (sha256(aaa), sha256(victim), 1)
    assert row["error"] == (f"{site.origin}/files/{aaa.name}: sha256 {sha256(aaa)!r} differs from the index's "
                            f"{sha256(victim)!r}")

    site.listing(["aaa", "victim"])
    sources = expand_sources([f"{site.origin}/simple/"])
    assert sorted(s.location.rsplit("/", 2)[-2] for s in sources) == ["files", "files", "mirror"]
    second = run_census(sources, options)
    assert (second.skipped, second.audited, second.errors) == (1, 2, 0)
    rows = [r for r in wheel_rows(options.out_dir) if r["filename"] == victim.name]
    assert [(r["sha256"], r["error"]) for r in rows] == [(sha256(victim), None)] * 2
    elves = pq.read_table(options.out_dir / "elf_files").to_pylist()
    assert [(e["sha256"], e["path"]) for e in elves] == [(sha256(victim), "victim/libvictim.so")]  # once

    third = run_census(expand_sources([f"{site.origin}/simple/"]), options)
    assert (third.skipped, third.audited) == (3, 0)


def download_started(scratch: Path) -> bool:
    return any(p.suffix == ".whl" for p in scratch.rglob("*"))


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_census_stopped_mid_download_leaves_no_scratch(site, tmp_path, how):
    """The census command is stopped while its local cluster's worker downloads a wheel: it ends, and the
    temporary directory it was given (TMPDIR) holds nothing of the census."""
    name = f"slow-1.0-{PURE}.whl"
    site.drip(f"/files/{name}", seconds=60, every=0.1)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch)}
    census = subprocess.Popen([sys.executable, "-m", "wheelcheck", "census", f"{site.origin}/files/{name}", "-o",
                               str(tmp_path / "out"), "--workers", "1", "-q"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not download_started(scratch) and time.monotonic() < deadline and census.poll() is None:
            time.sleep(0.1)
        assert download_started(scratch), "the download never started"
        census.send_signal(how)
        census.wait(timeout=60)
    finally:
        if census.poll() is None:
            census.kill()
            census.wait()
    assert census.returncode == {signal.SIGTERM: -signal.SIGTERM, signal.SIGINT: 130}[how]  # ended as the signal ends it
    assert sorted(p.name for p in scratch.glob(f"{SCRATCH_PREFIX}*")) == []
    assert not any(p.suffix == ".whl" for p in scratch.rglob("*"))


MAKE_SCRATCH = ("import sys; from pathlib import Path; from wheelcheck.census.scratch import make_scratch; "
                "d = make_scratch(sys.argv[1]); Path(d, 'x.whl').write_bytes(b'x'); print(d, flush=True); "
                "sys.stdin.read()")


def test_scratch_of_a_process_killed_outright_is_removed_by_the_next(tmp_path, pure_wheels):
    """A worker killed outright (SIGKILL, as Dask does past its memory limit) runs no cleanup: the next
    scratch directory made in the same place removes those whose process has ended, and only those."""
    parent = tmp_path / "tmp"
    parent.mkdir()
    killed, running = (subprocess.Popen([sys.executable, "-c", MAKE_SCRATCH, str(parent)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True) for _ in range(2))
    try:
        dead_dir, live_dir = (Path(p.stdout.readline().strip()) for p in (killed, running))
        killed.kill()
        killed.wait()
        others = [parent / f"{SCRATCH_PREFIX}abcd1234", parent / f"{SCRATCH_PREFIX}{killed.pid}@elsewhere-abcd1234"]
        for other in others:
            other.mkdir()
        source = expand_sources([str(pure_wheels["good"])])[0]
        assert audit_source(source, {}, scratch=str(parent))["wheels"][0]["passed"] is True
        assert sorted(parent.iterdir()) == sorted([live_dir, *others])  # another host's, or an unknown owner: kept
    finally:
        for process in (killed, running):
            process.communicate("")
    assert dead_dir.name.startswith(f"{SCRATCH_PREFIX}{killed.pid}@")
