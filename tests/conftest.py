"""Shared pytest fixtures: cached ELF builds and the opt-in real-wheel corpus (--corpus)."""
from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # so `tests.fixtures` imports under plain `pytest` too, not only `python -m`
    sys.path.insert(0, str(ROOT))

from tests.fixtures.compile import FixtureBuilder  # noqa: E402

CORPUS_LISTING = ROOT / "corpus" / "dev-wheels.tsv"
CORPUS_FETCH = ROOT / "corpus" / "fetch.py"  # LISTING DEST: the wheels a listing pins, sha256 checked


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--corpus", action="store_true", default=False,
                     help="run tests marked 'corpus' over the real wheels of corpus/dev-wheels.tsv "
                          "(downloaded to $WHEELCHECK_CORPUS or ~/.cache/wheelcheck-corpus)")
    parser.addoption("--torch", action="store_true", default=False,
                     help="run tests marked 'torch': build an extension against torch 2.13.0 (CPU) and install "
                          "torch into a venv (the wheel is fetched once into ~/.cache/wheelcheck-torch)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "corpus: runs over the real-wheel corpus (opt-in: --corpus)")
    config.addinivalue_line("markers", "torch: builds against and installs torch 2.13.0 CPU (opt-in: --torch)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for marker in ("corpus", "torch"):
        if config.getoption(f"--{marker}"):
            continue
        skip = pytest.mark.skip(reason=f"{marker} test: pass --{marker} to run")
        for item in items:
            if marker in item.keywords:
                item.add_marker(skip)


@pytest.fixture(scope="session")
def fixture_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where this session (this xdist worker) keeps built fixtures."""
    return tmp_path_factory.mktemp("fixture-cache")


@pytest.fixture(scope="session")
def build(fixture_cache_dir: Path) -> FixtureBuilder:
    """``build.compile_c(src, name, target=..., ...)`` -> Path, each distinct build done once per session.

    Returned files are shared: copy one before changing it.
    """
    return FixtureBuilder(fixture_cache_dir)


def _corpus_wheels() -> list[str]:
    """The file names corpus/dev-wheels.tsv pins."""
    lines = CORPUS_LISTING.read_text().splitlines()
    return [ln.split("\t")[0] for ln in lines if ln.strip() and not ln.startswith("#")]


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """The corpus wheels, fetched (pinned by sha256) on first use, locked across workers."""
    dest = Path(os.environ.get("WHEELCHECK_CORPUS") or Path.home() / ".cache" / "wheelcheck-corpus")
    dest.mkdir(parents=True, exist_ok=True)
    with open(dest / ".fetch.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if any(not (dest / name).is_file() for name in _corpus_wheels()):
            proc = subprocess.run([sys.executable, str(CORPUS_FETCH), str(CORPUS_LISTING), str(dest)],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                pytest.skip(f"the corpus cannot be fetched into {dest} (offline?):\n{proc.stdout}\n{proc.stderr}")
    return dest


@pytest.fixture(params=_corpus_wheels())
def corpus_wheel(request: pytest.FixtureRequest, corpus_dir: Path) -> Path:
    """Each wheel of the corpus in turn (tests marked ``corpus``, run with --corpus)."""
    path = corpus_dir / request.param
    if not path.is_file():
        pytest.skip(f"{request.param} is not in {corpus_dir}")
    return path
