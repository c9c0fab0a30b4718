"""What a census audits: wheels named by files, directories, listing files and PEP 503/691 simple indexes.

Pure of Dask and pyarrow: the client expands sources into ``WheelSource`` items before anything is scheduled.
"""

from __future__ import annotations

import json
import re
import urllib.parse
import urllib.request
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from wheelcheck.errors import UsageError
from wheelcheck.wheel.record import file_sha256

__all__ = ["WheelSource", "expand_sources", "is_url", "linux_or_pure"]

JSON_ACCEPT = "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.1"
INDEX_TIMEOUT = 60  # seconds for one index page
PAGE_READERS = 16  # project pages read at once: a whole index has hundreds of thousands


@dataclass(frozen=True)
class WheelSource:
    """One wheel to audit: a local path or an http(s) URL. ``sha256`` is known up front for local files
    and for index entries that publish it; otherwise the worker learns it while downloading."""

    location: str
    filename: str
    sha256: str | None = None
    size: int | None = None

    @property
    def key(self) -> str:
        """What a re-run recognises it by: the sha256 when known, else the location."""
        return self.sha256 or self.location


def is_url(text: str) -> bool:
    return text.startswith(("http://", "https://"))


def linux_or_pure(filename: str) -> bool:
    """Is this wheel file name one a Linux audit is about (a linux platform tag, or ``any``)?"""
    platform = filename[:-4].rsplit("-", 1)[-1] if filename.endswith(".whl") else ""
    return any("linux" in p or p == "any" for p in platform.split("."))


def _local(path: Path) -> WheelSource:
    return WheelSource(str(path.resolve()), path.name, file_sha256(path), path.stat().st_size)


def _from_listing(listing: Path) -> Iterator[WheelSource]:
    """A text file: one wheel path or URL a line; blank lines and lines starting with # are skipped."""
    for number, line in enumerate(listing.read_text(encoding="utf-8").splitlines(), 1):
        entry = line.strip()
        if not entry or entry.startswith("#"):
            continue
        if is_url(entry):
            yield _url_source(entry)
        elif entry.endswith(".whl"):
            path = (listing.parent / entry) if not Path(entry).is_absolute() else Path(entry)
            if not path.is_file():
                raise UsageError(str(listing), f"line {number}: no such wheel {entry!r}")
            yield _local(path)
        else:
            raise UsageError(str(listing), f"line {number}: not a wheel path or URL: {entry!r}")


def _url_source(url: str, sha256: str | None = None, size: int | None = None) -> WheelSource:
    parsed = urllib.parse.urlsplit(url)
    if sha256 is None and parsed.fragment.startswith("sha256="):
        sha256 = parsed.fragment.removeprefix("sha256=").lower()
    clean = urllib.parse.urlunsplit(parsed._replace(fragment=""))
    filename = urllib.parse.unquote(parsed.path.rsplit("/", 1)[-1])
    return WheelSource(clean, filename, sha256, size)


class _Links(HTMLParser):
    """The anchors of a PEP 503 page: (href, text, yanked)."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str, bool]] = []
        self._href: str | None = None
        self._yanked = False
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self._href = dict(attrs).get("href") or ""
            self._yanked = "data-yanked" in dict(attrs)
            self._text = []

    def handle_data(self, data: str) -> None:
        if self._href is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._href is not None:
            self.links.append((self._href, "".join(self._text).strip(), self._yanked))
            self._href = None


def _fetch_page(url: str) -> tuple[str, dict | None, str]:
    """(final URL, parsed PEP 691 JSON or None, HTML text) of an index page."""
    request = urllib.request.Request(url, headers={"Accept": JSON_ACCEPT, "User-Agent": "wheelcheck-census"})
    try:
        with urllib.request.urlopen(request, timeout=INDEX_TIMEOUT) as response:
            body = response.read()
            kind = response.headers.get_content_type()
            final = response.geturl()
    except (OSError, ValueError) as exc:
        raise UsageError(url, f"cannot read the index page ({exc})") from None
    if kind == "application/vnd.pypi.simple.v1+json":
        try:
            return final, json.loads(body), ""
        except ValueError:
            raise UsageError(url, "the index page is not valid JSON") from None
    return final, None, body.decode("utf-8", "replace")


def normalize(name: str) -> str:
    """PEP 503 project name normalisation."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _project_files(index: str, project: str) -> Iterator[WheelSource]:
    page = urllib.parse.urljoin(index.rstrip("/") + "/", normalize(project) + "/")
    final, data, html = _fetch_page(page)
    if data is not None:
        for entry in data.get("files", []):
            name = entry.get("filename", "")
            if name.endswith(".whl") and not entry.get("yanked"):
                yield _url_source(urllib.parse.urljoin(final, entry["url"]), entry.get("hashes", {}).get("sha256"),
                                  entry.get("size"))
        return
    parser = _Links()
    parser.feed(html)
    for href, _text, yanked in parser.links:
        source = _url_source(urllib.parse.urljoin(final, href))
        if source.filename.endswith(".whl") and not yanked:
            yield source


def _index_projects(index: str) -> list[str]:
    _final, data, html = _fetch_page(index.rstrip("/") + "/")
    if data is not None:
        return [p["name"] for p in data.get("projects", [])]
    parser = _Links()
    parser.feed(html)
    return [text for _href, text, _yanked in parser.links if text]


def _read_projects(index: str, projects: list[str], problems: list[str] | None) -> Iterator[list[WheelSource]]:
    """The files of each project page, read ``PAGE_READERS`` at a time. A page named by ``projects`` must be
    readable; of a whole index, an unreadable page (a project removed since the listing) is put in
    ``problems`` and skipped, when the caller gives that list."""
    def read(project: str) -> list[WheelSource] | str:
        try:
            return list(_project_files(index, project))
        except UsageError as exc:
            if projects or problems is None:
                raise
            return str(exc)

    with ThreadPoolExecutor(PAGE_READERS) as pool:
        for files in pool.map(read, projects or _index_projects(index)):
            if isinstance(files, str):
                problems.append(files)  # type: ignore[union-attr]  # read() returns str only with a list
            else:
                yield files


def expand_sources(sources: Iterable[str], projects: Iterable[str] = (), linux_only: bool = True,
                   problems: list[str] | None = None) -> list[WheelSource]:
    """Every wheel the sources name, once each (first mention wins).

    A source is a .whl file, a directory (its *.whl), a listing file (wheel paths or URLs, one a line), a
    wheel URL, or a simple-index URL: with ``projects`` only their pages are read, otherwise every project
    the index lists (unreadable project pages then go to ``problems`` when it is given). Wheels found
    through an index are kept only when ``linux_only`` admits their tag.
    """
    projects = list(projects)
    found: list[WheelSource] = []
    for source in sources:
        if is_url(source):
            if urllib.parse.urlsplit(source).path.endswith(".whl"):
                found.append(_url_source(source))
                continue
            for files in _read_projects(source, projects, problems):
                found.extend(s for s in files if not linux_only or linux_or_pure(s.filename))
            continue
        path = Path(source)
        if path.is_dir():
            wheels = sorted(path.glob("*.whl"))
            if not wheels:
                raise UsageError(source, "directory holds no .whl file")
            found.extend(_local(p) for p in wheels)
        elif path.is_file() and path.suffix == ".whl":
            found.append(_local(path))
        elif path.is_file():
            found.extend(_from_listing(path))
        else:
            raise UsageError(source, "no such file, directory or URL")
    seen: set[str] = set()
    unique = []
    for item in found:
        if item.key not in seen:
            seen.add(item.key)
            unique.append(item)
    return unique
