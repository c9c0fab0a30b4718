"""Bounded HTTP GETs for the census: named origins only, a byte cap and a deadline over the whole fetch.

An index page and every file it links to are the attacker's, so a fetch stays on the origins (scheme, host,
port) the user gave, follows redirects only within them, reads http and https only, stops past ``max_bytes``
and ends when its deadline passes, whatever the server does: the deadline is a timer that shuts the
connection's socket down, so a server that sends one byte at a time cannot stretch it, in the headers or
in the body.
"""

from __future__ import annotations

import functools
import http.client
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from wheelcheck.errors import WheelcheckError

__all__ = ["FetchError", "Fetched", "Origin", "TooLarge", "fetch", "on_origin", "origin_of", "show_origins"]

CHUNK = 1 << 20
USER_AGENT = "wheelcheck-census"
_DEFAULT_PORTS = {"http": 80, "https": 443}
_URL_SAFE = "/%:@!$&'()*+,;=-._~"  # RFC 3986 path characters: what is already a valid path stays as it is

Origin = tuple[str, str, int]  # scheme, host, port


class FetchError(WheelcheckError):
    """A URL that could not be fetched within the census's bounds."""


class TooLarge(FetchError):
    """The response went past the byte cap of its fetch."""


@dataclass(frozen=True)
class Fetched:
    url: str  # after redirects
    content_type: str
    size: int


def origin_of(url: str) -> Origin:
    """(scheme, host, port) of an http(s) URL; FetchError for any other URL."""
    try:
        parts = urllib.parse.urlsplit(url)
        scheme, host, port = parts.scheme.lower(), parts.hostname, parts.port
    except ValueError as exc:  # a malformed IPv6 host, a port out of range or not a number
        raise FetchError(url, str(exc)) from None
    if scheme not in _DEFAULT_PORTS:
        raise FetchError(url, "not an http or https URL")
    if not host:
        raise FetchError(url, "no host")
    return scheme, host, port or _DEFAULT_PORTS[scheme]


def show_origins(origins: Iterable[Origin]) -> str:
    return ", ".join(f"{scheme}://{host}:{port}" for scheme, host, port in origins)


def on_origin(url: str, origins: Iterable[Origin]) -> str:
    """``url`` rebuilt from its parsed parts when it is on one of ``origins``, else FetchError.

    The rebuilt URL is what is requested, so the host urllib connects to is the host checked here, whatever
    a hostile URL's user part, backslashes or spaces would make of it in another parser."""
    origins = tuple(origins)
    origin = origin_of(url)
    if origin not in origins:
        raise FetchError(url, f"not on {show_origins(origins)}")
    parts = urllib.parse.urlsplit(url)
    scheme, host, port = origin
    netloc = f"[{host}]" if ":" in host else host
    if port != _DEFAULT_PORTS[scheme]:
        netloc += f":{port}"
    path = urllib.parse.quote(parts.path or "/", safe=_URL_SAFE)
    query = urllib.parse.quote(parts.query, safe=_URL_SAFE + "?")
    return urllib.parse.urlunsplit((scheme, netloc, path, query, ""))


def fetch(url: str, origins: Iterable[Origin], *, seconds: float, max_bytes: int, write: Callable[[bytes], Any],
          accept: str = "*/*") -> Fetched:
    """GET ``url`` (on one of ``origins``) and pass its body to ``write`` a chunk at a time.

    Raises FetchError naming ``url`` when the URL or a redirect leaves those origins, on an HTTP or network
    error, when the body passes ``max_bytes`` (TooLarge) or ends short of its Content-Length, and when the
    whole fetch, connection and redirects included, takes longer than ``seconds``."""
    origins = tuple(origins)
    try:
        target = on_origin(url, origins)
    except FetchError as exc:
        raise FetchError(url, f"not fetched: {exc.problem}") from None
    with _Deadline(url, seconds) as deadline:
        try:
            return _get(target, origins, deadline, max_bytes, write, accept)
        except (OSError, ValueError, http.client.HTTPException) as exc:
            if isinstance(exc, urllib.error.HTTPError):
                exc.close()  # the error response's body is never read
            if deadline.over:  # the timer shut the socket, or a socket time-out met the deadline first
                raise deadline.passed() from None
            raise FetchError(url, str(exc)[:300]) from None


def _get(url: str, origins: tuple[Origin, ...], deadline: _Deadline, max_bytes: int, write: Callable[[bytes], Any],
         accept: str) -> Fetched:
    request = urllib.request.Request(url, headers={"Accept": accept, "User-Agent": USER_AGENT})
    response = _opener(origins, deadline).open(request, timeout=deadline.remaining())
    if response is None:  # no handler for the scheme: on_origin admits none such, this is a second lock
        raise FetchError(url, "no handler for its scheme")
    with response:
        announced = _content_length(response)
        if announced is not None and announced > max_bytes:
            raise TooLarge(url, f"announces {announced} bytes, more than the {max_bytes} allowed")
        size = 0
        while chunk := response.read1(CHUNK):
            size += len(chunk)
            if size > max_bytes:
                raise TooLarge(url, f"more than the {max_bytes} bytes allowed")
            write(chunk)
        if deadline.over:  # the timer shut the socket: that end of the body is not the server's
            raise deadline.passed()
        if announced is not None and size != announced:
            raise FetchError(url, f"connection closed after {size} of the {announced} bytes announced")
        return Fetched(response.geturl(), response.headers.get_content_type(), size)


def _content_length(response: http.client.HTTPResponse) -> int | None:
    try:
        length = int(response.headers.get("Content-Length", ""))
    except ValueError:
        return None
    return length if length >= 0 else None


class _Deadline:
    """A timer over one fetch: when it fires, every socket the fetch opened is shut down, which ends any
    read or write blocked on it; ``over`` then tells that ending from the server's."""

    def __init__(self, url: str, seconds: float) -> None:
        self.url = url
        self.seconds = seconds
        self.end = time.monotonic() + seconds
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> _Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()

    @property
    def over(self) -> bool:
        return self.expired or time.monotonic() >= self.end

    def passed(self) -> FetchError:
        return FetchError(self.url, f"did not finish within {self.seconds:g} s")

    def remaining(self) -> float:
        left = self.end - time.monotonic()
        if left <= 0 or self.expired:
            raise self.passed()
        return left

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            expired = self.expired
        if expired:
            _shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)


def _shut(sock: socket.socket) -> None:
    try:  # the plain socket's shutdown, also under TLS: it must not touch the TLS object another thread reads
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass


class _Watched:
    """An HTTP(S) connection whose socket is opened within, and watched by, the fetch's deadline."""

    def __init__(self, *args: Any, deadline: _Deadline, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline = deadline
        self._create_connection = self._open_socket  # http.client's hook for making the socket

    def _open_socket(self, address: tuple[str, int], timeout: Any = None, source_address: Any = None) -> socket.socket:
        sock = socket.create_connection(address, self._deadline.remaining(), source_address)
        self._deadline.watch(sock)
        return sock


class _HTTPConnection(_Watched, http.client.HTTPConnection):
    pass


class _HTTPSConnection(_Watched, http.client.HTTPSConnection):
    pass


class _HTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self._deadline = deadline

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(functools.partial(_HTTPConnection, deadline=self._deadline), req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self._deadline = deadline

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(functools.partial(_HTTPSConnection, deadline=self._deadline), req)


class _SameOriginRedirects(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only within the fetch's origins; the redirect's own body is never read."""

    def __init__(self, origins: tuple[Origin, ...]) -> None:
        self._origins = origins

    def redirect_request(self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Any,
                         newurl: str) -> urllib.request.Request | None:
        fp.close()  # urllib reads a redirect's body whole before following it: there is nothing to read now
        try:
            target = on_origin(newurl, self._origins)
        except FetchError as exc:
            raise FetchError(req.full_url, f"redirect to {newurl[:200]!r} refused: {exc.problem}") from None
        return super().redirect_request(req, fp, code, msg, headers, target)


def _opener(origins: tuple[Origin, ...], deadline: _Deadline) -> urllib.request.OpenerDirector:
    """http and https only (no file:, ftp: or data: handler), redirects within ``origins``."""
    opener = urllib.request.OpenerDirector()
    for handler in (urllib.request.ProxyHandler(), _HTTPHandler(deadline), _HTTPSHandler(deadline),
                    _SameOriginRedirects(origins), urllib.request.HTTPDefaultErrorHandler(),
                    urllib.request.HTTPErrorProcessor()):
        opener.add_handler(handler)
    return opener
