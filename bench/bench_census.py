#!/usr/bin/env python3
"""wheelcheck census throughput with 1 and 2 local Dask workers over the same wheels, in one run.

Prints, per worker count: wheels, MB, wall seconds, wheels/s, MB/s, and the per-GB cost of the audits
themselves: the sum of per-wheel wall seconds (download, child start and audit: worker-seconds) and of the
auditing children's CPU seconds (independent of how loaded the machine is); then the scaling ratio (rate with 2 workers /
rate with 1). With --http the wheels are served from 127.0.0.1 as a simple index, so each is streamed to
its worker as in a census of a real index.

    python bench/bench_census.py [WHEEL_DIR] [--workers 1 2] [--http]

Needs the census extra. Each worker count gets a fresh cluster (started before the clock starts, and warmed
up) and a fresh output directory.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import tempfile
import threading
import time
from pathlib import Path

import pyarrow.parquet as pq
from distributed import Client, LocalCluster

from wheelcheck.census.engine import CensusOptions, run_census
from wheelcheck.census.sources import expand_sources

DEFAULT_CORPUS = Path.home() / ".cache" / "wheelcheck-corpus"


def serve(directory: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    """A flat PEP 503 index of ``directory``: /simple/<project>/ lists that project's wheels."""
    projects: dict[str, list[str]] = {}
    for wheel in sorted(directory.glob("*.whl")):
        projects.setdefault(wheel.name.split("-")[0].lower().replace("_", "-"), []).append(wheel.name)

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def do_GET(self) -> None:
            parts = [p for p in self.path.split("/") if p]
            if parts[:1] == ["simple"]:
                names = projects.get(parts[1], []) if len(parts) == 2 else None
                links = (f'<a href="/{n}">{n}</a>' for n in names) if names is not None else \
                        (f'<a href="{p}/">{p}</a>' for p in projects)
                body = ("<html><body>" + "\n".join(links) + "</body></html>").encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            super().do_GET()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(directory)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/simple/"


def one_run(source: str, workers: int) -> dict:
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                      memory_limit="2GiB") as cluster, Client(cluster) as client, \
            tempfile.TemporaryDirectory(prefix="bench-census-") as out:
        client.run(lambda: __import__("wheelcheck.census.worker"))  # warm: imports done before the clock
        wheels = expand_sources([source])
        started = time.perf_counter()
        result = run_census(wheels, CensusOptions(out_dir=Path(out), scheduler=cluster.scheduler_address))
        wall = time.perf_counter() - started
        rows = pq.read_table(Path(out) / "wheels", columns=["size", "audit_seconds", "audit_cpu_seconds", "error"]).to_pylist()
    size = sum(r["size"] or 0 for r in rows)
    core = sum(r["audit_seconds"] or 0 for r in rows)
    cpu = sum(r["audit_cpu_seconds"] or 0 for r in rows)
    return {"workers": workers, "wheels": result.audited, "errors": result.errors, "mb": size / 1e6, "wall": wall,
            "rate": result.audited / wall, "mbs": size / 1e6 / wall, "core_per_gb": core / (size / 1e9),
            "cpu_per_gb": cpu / (size / 1e9)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wheels", nargs="?", default=str(DEFAULT_CORPUS))
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--http", action="store_true", help="stream the wheels from a local simple index")
    args = parser.parse_args()
    server = None
    source = args.wheels
    if args.http:
        server, source = serve(Path(args.wheels).expanduser())
    try:
        runs = [one_run(source, n) for n in args.workers]
    finally:
        if server is not None:
            server.shutdown()
    print(f"census over {source} ({'streamed over HTTP' if args.http else 'local files'})")
    print(f"{'workers':>7} {'wheels':>6} {'errors':>6} {'MB':>8} {'wall s':>8} {'wheels/s':>9} {'MB/s':>7} "
          f"{'wall-s/GB':>10} {'cpu-s/GB':>9}")
    for r in runs:
        print(f"{r['workers']:>7} {r['wheels']:>6} {r['errors']:>6} {r['mb']:>8.1f} {r['wall']:>8.1f} "
              f"{r['rate']:>9.3f} {r['mbs']:>7.2f} {r['core_per_gb']:>10.1f} {r['cpu_per_gb']:>9.1f}")
    if len(runs) >= 2:
        print(f"scaling ratio (wheels/s with {runs[-1]['workers']} workers / with {runs[0]['workers']}): "
              f"{runs[-1]['rate'] / runs[0]['rate']:.2f}")


if __name__ == "__main__":
    main()
