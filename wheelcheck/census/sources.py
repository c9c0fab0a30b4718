"""What a census audits: wheels named by files, directories, listing files and PEP 503/691 simple indexes.

Pure of Dask and pyarrow: the client expands sources into ``WheelSource`` items before anything is scheduled.
An index and every page and file it names are the attacker's: pages are read from the index's origin only,
within ``PageLimits``, and an entry that cannot be taken as it stands (a malformed page or entry, a file on
another origin) becomes a source with a ``problem``: a row with that error, never a fetch, never a stop.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from wheelcheck.census.fetch import FetchError, Origin, fetch, on_origin, origin_of
from wheelcheck.errors import UsageError, WheelcheckError
from wheelcheck.wheel.record import file_sha256
from wheelcheck.wheel.wheel_filename import platform_component

__all__ = ["KNOWN_FILE_ORIGINS", "PageError", "PageLimits", "WheelSource", "expand_sources", "file_origins_of", "is_url",
           "linux_or_pure", "source_key"]

JSON_TYPE = "application/vnd.pypi.simple.v1+json"
JSON_ACCEPT = f"{JSON_TYPE}, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.1"
PAGE_READERS = 16  # project pages read at once: a whole index has hundreds of thousands
# Indexes whose pages link their files on another host of the same operator (pypi.org's on its CDN)
KNOWN_FILE_ORIGINS: dict[Origin, tuple[Origin, ...]] = {
    ("https", "pypi.org", 443): (("https", "files.pythonhosted.org", 443),),
    ("https", "test.pypi.org", 443): (("https", "test-files.pythonhosted.org", 443),),
}
class PageError(WheelcheckError):
    """An index page that was read but is not the page it should be (malformed JSON or HTML, wrong types)."""


_PROJECT_NAME = re.compile(r"[A-Z0-9]([A-Z0-9._-]*[A-Z0-9])?", re.IGNORECASE)  # PEP 508
_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class PageLimits:
    """Bounds on reading an index: bytes of one project page, bytes of the project listing (pypi.org's is
    tens of MB), and seconds for one page, from connecting to its last byte."""

    page_bytes: int = 64 << 20
    listing_bytes: int = 256 << 20
    seconds: float = 60.0


@dataclass(frozen=True)
class WheelSource:
    """One wheel to audit: a local path or an http(s) URL.

    ``sha256`` and ``size`` are of bytes the census read itself (a local file's); what an index page
    declares is kept apart in ``declared_sha256`` and ``declared_size``: the worker checks the bytes it
    fetches against them and caps the download at the declared size, and nothing else trusts them.
    ``origins`` are where the download may go, redirects included. A source with a ``problem`` is not
    fetched: it is a row with that error."""

    location: str
    filename: str
    sha256: str | None = None
    size: int | None = None
    declared_sha256: str | None = None
    declared_size: int | None = None
    origins: tuple[Origin, ...] = ()
    problem: str | None = None

    @property
    def key(self) -> tuple[str, ...]:
        return source_key(self.location, self.filename, self.sha256, self.declared_sha256)


def source_key(location: str, filename: str, sha256: str | None, declared_sha256: str | None) -> tuple[str, ...]:
    """What a re-run recognises a wheel by, from a source or from its row.

    A local file: the sha256 of its bytes. A URL: the URL, file name and the hash its page claims. A URL's
    bytes are known only once fetched, and a page's claim is the attacker's: it never stands for another
    URL's wheel, and a row that records a claim the bytes failed does not hide the URL under another claim."""
    if location.startswith("/"):
        return ("file", sha256 or location)
    return ("url", location, filename, declared_sha256 or "")


def is_url(text: str) -> bool:
    return text.startswith(("http://", "https://"))


def linux_or_pure(filename: str) -> bool:
    """Is this wheel file name one a Linux audit is about (a linux platform tag, or ``any``)?"""
    platform = platform_component(filename)
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
            try:
                yield _url_source(entry)
            except FetchError as exc:
                raise UsageError(str(listing), f"line {number}: {entry!r}: {exc.problem}") from None
        elif entry.endswith(".whl"):
            path = (listing.parent / entry) if not Path(entry).is_absolute() else Path(entry)
            if not path.is_file():
                raise UsageError(str(listing), f"line {number}: no such wheel {entry!r}")
            yield _local(path)
        else:
            raise UsageError(str(listing), f"line {number}: not a wheel path or URL: {entry!r}")


def _url_source(url: str) -> WheelSource:
    """A wheel URL the user named: it may be fetched from its own origin. FetchError when it names none."""
    origins = (origin_of(url),)
    return _wheel_at(url, url, None, None, origins) or WheelSource(url, "", problem=f"{url}: not a wheel URL")


def _problem(location: str, label: str, problem: str) -> WheelSource:
    return WheelSource(location, label, problem=f"{location}: {problem}")


def _wheel_at(page: str, href: str, sha256: Any, size: Any, origins: tuple[Origin, ...]) -> WheelSource | None:
    """The wheel ``href`` names on ``page``, a source with its problem, or None when it names no wheel.

    A ``#sha256=`` fragment is the page's claim when ``sha256`` gives none."""
    try:
        parts = urllib.parse.urlsplit(urllib.parse.urljoin(page, href))
    except ValueError:
        return _problem(page, href[:200], f"link {href[:200]!r} is not a URL")
    filename = urllib.parse.unquote(parts.path.rsplit("/", 1)[-1])
    if not filename.endswith(".whl"):
        return None
    url = urllib.parse.urlunsplit(parts._replace(fragment=""))
    if sha256 is None and parts.fragment.startswith("sha256="):
        sha256 = parts.fragment.removeprefix("sha256=")
    if sha256 is not None and not (isinstance(sha256, str) and _SHA256.fullmatch(sha256.lower())):
        return _problem(url, filename, f"the index declares a malformed sha256 {str(sha256)[:100]!r}")
    if size is not None and (not isinstance(size, int) or isinstance(size, bool) or size < 0):
        return _problem(url, filename, f"the index declares a malformed size {str(size)[:100]!r}")
    try:
        location = on_origin(url, origins)
    except FetchError as exc:
        return _problem(url, filename, f"not fetched: {exc.problem}")
    return WheelSource(location, filename, declared_sha256=sha256.lower() if sha256 else None, declared_size=size,
                       origins=origins)


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


def _links(url: str, html: str) -> list[tuple[str, str, bool]]:
    """PageError when ``html`` is past what html.parser reads (it asserts on some markup)."""
    parser = _Links()
    try:
        parser.feed(html)
        parser.close()
    except AssertionError as exc:
        raise PageError(url, f"unreadable HTML ({exc})") from None
    return parser.links


@dataclass(frozen=True)
class _Page:
    url: str  # after redirects
    data: Any  # the PEP 691 JSON document, or None for a PEP 503 page
    html: str


def _read_page(url: str, origin: Origin, max_bytes: int, seconds: float) -> _Page:
    """An index page: FetchError when it cannot be read in bounds, PageError when it is not the JSON it says."""
    chunks: list[bytes] = []
    fetched = fetch(url, (origin,), seconds=seconds, max_bytes=max_bytes, write=chunks.append, accept=JSON_ACCEPT)
    body = b"".join(chunks)
    if fetched.content_type == JSON_TYPE:
        try:
            return _Page(fetched.url, json.loads(body), "")
        except RecursionError:  # nesting deeper than the interpreter's stack
            raise PageError(fetched.url, "JSON nested too deep") from None
        except ValueError as exc:
            raise PageError(fetched.url, f"not valid JSON ({exc})") from None
    return _Page(fetched.url, None, body.decode("utf-8", "replace"))


def normalize(name: str) -> str:
    """PEP 503 project name normalisation."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _project_files(page: _Page, project: str, origins: tuple[Origin, ...]) -> Iterator[WheelSource | None]:
    """The wheels of a project page (None for files that are not wheels or are yanked). PageError when the
    page is not a project page at all."""
    if page.data is None:
        for href, _text, yanked in _links(page.url, page.html):
            if not yanked:
                yield _wheel_at(page.url, href, None, None, origins)
        return
    files = page.data.get("files") if isinstance(page.data, dict) else None
    if not isinstance(files, list):
        raise PageError(page.url, "not a PEP 691 project page (no list of files)")
    for number, entry in enumerate(files):
        yield _json_file(page.url, f"{project} files[{number}]", entry, origins)


def _json_file(page: str, label: str, entry: Any, origins: tuple[Origin, ...]) -> WheelSource | None:
    """One entry of a PEP 691 page's files, its fields checked for the types the PEP gives them."""
    if not isinstance(entry, dict) or not isinstance(entry.get("filename"), str):
        return _problem(page, label, f"{label}: not a file entry with a filename")
    if not entry["filename"].endswith(".whl") or entry.get("yanked"):
        return None
    url, hashes = entry.get("url"), entry.get("hashes", {})
    if not isinstance(url, str):
        return _problem(page, label, f"{label}: url is not a string")
    if not isinstance(hashes, dict):
        return _problem(page, label, f"{label}: hashes is not an object")
    return _wheel_at(page, url, hashes.get("sha256"), entry.get("size"), origins)


def _listed_projects(index: str, origin: Origin, limits: PageLimits) -> tuple[list[str], list[WheelSource]]:
    """The project names the index lists, and a source with its problem for each entry that is not a name."""
    try:
        page = _read_page(index, origin, limits.listing_bytes, limits.seconds)
        if page.data is None:
            entries: list[Any] = [text for _href, text, _yanked in _links(page.url, page.html) if text]
        elif isinstance(page.data, dict) and isinstance(page.data.get("projects"), list):
            entries = [p.get("name") if isinstance(p, dict) else None for p in page.data["projects"]]
        else:
            raise PageError(page.url, "not a PEP 691 index page (no list of projects)")
    except (FetchError, PageError) as exc:
        raise UsageError(index, f"cannot read the index page ({exc.problem})") from None
    names, problems = [], []
    for number, entry in enumerate(entries):
        if isinstance(entry, str) and _PROJECT_NAME.fullmatch(entry):
            names.append(entry)
        else:
            label = f"projects[{number}]"
            problems.append(_problem(page.url, label, f"{label}: {str(entry)[:200]!r} is not a project name"))
    return names, problems


def _read_index(index: str, projects: list[str], problems: list[str] | None, limits: PageLimits,
                file_origins: tuple[Origin, ...]) -> Iterator[WheelSource]:
    """The wheels of each project page, read ``PAGE_READERS`` at a time. A page named by ``projects`` must be
    readable; of a whole index, an unreadable page (a project removed since the listing) is put in
    ``problems`` and skipped, when the caller gives that list. A page that is read but is not a project page
    is a source with its problem."""
    try:
        origin = origin_of(index)
        base = on_origin(index.rstrip("/") + "/", (origin,))
    except FetchError as exc:
        raise UsageError(index, exc.problem) from None
    for name in projects:
        if not _PROJECT_NAME.fullmatch(name):
            raise UsageError(name, "not a project name")
    origins = (origin, *KNOWN_FILE_ORIGINS.get(origin, ()), *file_origins)

    def read(project: str) -> list[WheelSource | None] | str:
        url = urllib.parse.urljoin(base, normalize(project) + "/")
        try:
            return list(_project_files(_read_page(url, origin, limits.page_bytes, limits.seconds), project, origins))
        except FetchError as exc:
            if projects or problems is None:
                raise UsageError(url, f"cannot read the index page ({exc.problem})") from None
            return str(UsageError(url, f"cannot read the index page ({exc.problem})"))  # one line, escaped
        except PageError as exc:
            return [_problem(url, project, f"not a readable project page ({exc.problem})")]

    names, listed_problems = (projects, []) if projects else _listed_projects(base, origin, limits)
    yield from listed_problems
    with ThreadPoolExecutor(PAGE_READERS) as pool:
        for files in pool.map(read, names):
            if isinstance(files, str):
                problems.append(files)  # type: ignore[union-attr]  # read() returns str only with a list
            else:
                yield from (f for f in files if f is not None)


def file_origins_of(urls: Iterable[str]) -> tuple[Origin, ...]:
    """The origins of ``urls`` (scheme://host[:port]), each a UsageError naming it when it is not one."""
    origins = []
    for url in urls:
        try:
            origins.append(origin_of(url))
        except FetchError as exc:
            raise UsageError(url, exc.problem) from None
    return tuple(origins)


def _from_url(url: str, projects: list[str], linux_only: bool, problems: list[str] | None, limits: PageLimits,
              file_origins: tuple[Origin, ...]) -> list[WheelSource]:
    """A wheel URL's source, or the wheels of an index URL's projects."""
    try:
        if urllib.parse.urlsplit(url).path.endswith(".whl"):
            return [_url_source(url)]
    except ValueError as exc:  # a malformed IPv6 host
        raise UsageError(url, str(exc)) from None
    except FetchError as exc:
        raise UsageError(url, exc.problem) from None
    return [s for s in _read_index(url, projects, problems, limits, file_origins)
            if s.problem or not linux_only or linux_or_pure(s.filename)]


def expand_sources(sources: Iterable[str], projects: Iterable[str] = (), linux_only: bool = True,
                   problems: list[str] | None = None, limits: PageLimits = PageLimits(),
                   file_origins: Iterable[str] = ()) -> list[WheelSource]:
    """Every wheel the sources name, once each (first mention wins).

    A source is a .whl file, a directory (its *.whl), a listing file (wheel paths or URLs, one a line), a
    wheel URL, or a simple-index URL: with ``projects`` only their pages are read, otherwise every project
    the index lists (unreadable project pages then go to ``problems`` when it is given). Wheels found
    through an index are kept only when ``linux_only`` admits their tag, and fetched only from the index's
    origin, pypi.org's file host for pypi.org, and ``file_origins``; entries that cannot be taken are kept
    as sources with their problem.
    """
    projects = list(projects)
    extra = file_origins_of(file_origins)
    found: list[WheelSource] = []
    for source in sources:
        if is_url(source):
            found.extend(_from_url(source, projects, linux_only, problems, limits, extra))
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
    seen: set[tuple[str, ...]] = set()
    unique = []
    for item in found:
        if item.key not in seen:
            seen.add(item.key)
            unique.append(item)
    return unique
