"""One hardened GET of a text page over http(s): a deadline for the whole reading, a size cap, one-line errors.

What a reader of a server's plain-text page (a status or metrics page) needs, and nothing
about any particular server: the caller names the server and its page in the errors
(`Wording`) and checks and completes each address, a redirect's target included
(`resolve`). A reading is one GET of http(s) only, the whole page within the timeout (a
timer shuts the socket when it passes, whatever is in progress), at most MAX_PAGE_BYTES
before and after gzip or deflate, redirected to another host or to plain http only when
asked, decoded in its declared charset with every byte valid. Anything else is a
ValueError or ConnectionError naming it. No torch, no third-party package.

>>> check_timeout(2), clip("x" * 80, 5)
(2.0, "'xxxxx…'")
>>> check_timeout(0)
Traceback (most recent call last):
...
ValueError: timeout must be a finite number of seconds in (0, 3600], got '0'
"""

from __future__ import annotations

import codecs
import contextlib
import http.client
import math
import numbers
import socket
import threading
import time
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

if TYPE_CHECKING:
    from collections.abc import Callable

MAX_PAGE_BYTES = 8 * 2**20  # a status or metrics page is kilobytes; refuse to read (and parse) more than this
MAX_REDIRECTS = 5
MAX_TIMEOUT_S = 3600.0
REQUEST_HEADERS = {"Accept": "text/plain", "Accept-Encoding": "identity", "User-Agent": "specviz"}


@dataclass(frozen=True)
class Wording:
    """How the errors name the server and its page; the defaults name no server in particular."""

    server: str = "the server"  # "cannot reach {server} at URL"
    start_hint: str = ""  # after "Is it running": how the server is started, e.g. " (NAME serve …)"
    page: str = "a text page"  # "URL sent more than 8 MiB: not {page}"
    page_kind: str = "a plain-text page"  # "URL is not {page_kind} (it is an HTML page, …)"
    not_found_hint: str = ""  # after "answered HTTP 404 Not Found": where the server serves its page


def clip(text, n: int = 60) -> str:
    """`text` as a short one-line repr, for quoting what a server sent inside an error message."""
    text = str(text)
    return repr(text[:n] + "…" if len(text) > n else text)


def check_timeout(timeout, name: str = "timeout", most: float = MAX_TIMEOUT_S) -> float:
    """`timeout` as float seconds: a finite number in (0, `most`] (TypeError or ValueError naming `name`)."""
    if isinstance(timeout, bool) or not isinstance(timeout, numbers.Real):
        raise TypeError(f"{name} must be a number of seconds, got {timeout!r}")
    try:
        seconds = float(timeout)
    except OverflowError:
        seconds = math.inf
    if not (math.isfinite(seconds) and 0 < seconds <= most):
        raise ValueError(f"{name} must be a finite number of seconds in (0, {most:g}], got {clip(timeout, 30)}")
    return seconds


class _Deadline:
    """The end of one reading: a timer shuts the connection's socket when it passes, whatever is in progress."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.end = time.monotonic() + seconds
        self.passed = False
        self.sock = None  # the connection's socket, once connected (http.client drops it from the connection)

    def left(self) -> float:
        """Seconds left; TimeoutError once none are."""
        left = self.end - time.monotonic()
        if self.passed or left <= 0:
            self.passed = True
            raise TimeoutError("deadline passed")
        return left

    def cut(self) -> None:
        """The timer's action: mark the deadline passed and shut the socket (a blocked read then returns)."""
        self.passed = True
        sock = self.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                socket.socket.shutdown(sock, socket.SHUT_RDWR)


def _network_error(e: Exception, url: str, deadline: _Deadline, connected: bool, wording: Wording) -> Exception:
    """The error to raise for an exception of the connection to `url` (one line, naming the cause)."""
    if deadline.passed or isinstance(e, TimeoutError):
        return ConnectionError(
            f"{wording.server} at {url} did not send its whole page within {deadline.seconds:g} s "
            "(the timeout covers the whole reading)"
        )
    if isinstance(e, http.client.IncompleteRead):
        return ValueError(f"{url} closed the connection before its page was complete ({len(e.partial)} bytes came)")
    if isinstance(e, http.client.HTTPException) and not isinstance(e, OSError):
        return ValueError(f"{url} did not answer in HTTP ({type(e).__name__}: {clip(e)})")
    if isinstance(e, UnicodeError):
        return ValueError(f"{url} cannot be requested: {clip(e, 120)}")
    reason = getattr(e, "strerror", None) or str(e) or type(e).__name__
    if connected:
        return ConnectionError(f"the connection to {wording.server} at {url} failed while reading: {reason}")
    return ConnectionError(
        f"cannot reach {wording.server} at {url}: {reason}. Is it running{wording.start_hint}, on this host and port?"
    )


def _read_body(resp, url: str, wording: Wording) -> bytes:
    """The response body, refused beyond MAX_PAGE_BYTES (by its Content-Length, or as it comes)."""
    limit = f"{url} sent more than {MAX_PAGE_BYTES // 2**20} MiB: not {wording.page}"
    if resp.length is not None and resp.length > MAX_PAGE_BYTES:
        raise ValueError(limit)
    chunks, size = [], 0
    while chunk := resp.read(2**16):
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_PAGE_BYTES:
            raise ValueError(limit)
    if resp.length:  # http.client ends a short read at the connection's end without a word
        raise http.client.IncompleteRead(b"".join(chunks), resp.length)
    return b"".join(chunks)


def _get(url: str, deadline: _Deadline, wording: Wording) -> tuple[int, str, object, bytes]:
    """One GET of `url` within the deadline: (status, reason, headers, body; the body of a 200 only)."""
    parts = urlsplit(url)
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    connected = False
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        conn = kind(parts.hostname, port, timeout=deadline.left())
        timer = threading.Timer(deadline.left(), deadline.cut)
        timer.daemon = True
        timer.start()
        try:
            conn.connect()
            deadline.sock = conn.sock
            deadline.left()  # a timer that fired during connect() found no socket to shut
            connected = True
            conn.request("GET", target, headers=REQUEST_HEADERS)
            resp = conn.getresponse()
            body = _read_body(resp, url, wording) if resp.status == 200 else b""
            deadline.left()  # a read the timer cut short ends like the end of the page
            return resp.status, resp.reason, resp.headers, body
        finally:
            timer.cancel()
            conn.close()
    except ValueError as e:
        if isinstance(e, UnicodeError):
            raise _network_error(e, url, deadline, connected, wording) from None
        raise
    except (OSError, http.client.HTTPException) as e:
        raise _network_error(e, url, deadline, connected, wording) from None


def _redirect(url: str, location: str | None, allow_redirects: bool, resolve: Callable[[str], str]) -> str:
    """Where a 3xx answer of `url` points, as `resolve` completes it, if it may be followed (ValueError otherwise)."""
    if not location or not location.strip():
        raise ValueError(f"{url} answered with a redirect but no Location")
    try:
        target = resolve(urljoin(url, location.strip()))
    except (TypeError, ValueError):
        raise ValueError(f"{url} redirects to {clip(location)}, which is not an http(s) address") from None
    a, b = urlsplit(url), urlsplit(target)
    other_host = a.hostname.lower() != b.hostname.lower()
    downgrade = a.scheme == "https" and b.scheme == "http"
    if (other_host or downgrade) and not allow_redirects:
        what = "another host" if other_host else "plain http"
        raise ValueError(
            f"{url} redirects to {what} ({clip(target, 80)}): not followed unless asked "
            "(--follow-redirects, allow_redirects=True)"
        )
    return target


def _http_error(url: str, status: int, reason: str, wording: Wording) -> ValueError:
    """The error for a non-200 answer: the status, and for a 404 where the server serves its page."""
    hint = wording.not_found_hint if status == 404 else ""
    return ValueError(f"{url} answered HTTP {status} {clip(reason, 40)[1:-1]}{hint}")


def _decode(body: bytes, headers, url: str, wording: Wording) -> str:
    """The body as text: gzip/deflate undone (capped), its charset known and every byte valid in it."""
    body = _inflate(body, (headers.get("Content-Encoding") or "").strip().lower(), url)
    if headers.get_content_type() in ("text/html", "application/xhtml+xml"):
        raise ValueError(f"{url} is not {wording.page_kind} (it is an HTML page, Content-Type text/html)")
    charset = headers.get_content_charset() or "utf-8"
    try:
        known = codecs.lookup(charset)._is_text_encoding
    except (LookupError, ValueError, TypeError):
        known = False
    if not known:
        raise ValueError(f"{url} declares the charset {clip(charset, 30)}, which is no text encoding Python knows")
    try:
        text = body.decode(charset)
    except UnicodeDecodeError as e:
        raise ValueError(
            f"{url} is not valid {charset} text: byte 0x{body[e.start]:02x} at offset {e.start} "
            f"({wording.page} is UTF-8 text)"
        ) from None
    return text.removeprefix("\ufeff")


def _inflate(body: bytes, encoding: str, url: str) -> bytes:
    """`body` decompressed for a gzip or deflate Content-Encoding, refused beyond MAX_PAGE_BYTES."""
    if encoding in ("", "identity"):
        return body
    if encoding not in ("gzip", "x-gzip", "deflate"):
        raise ValueError(f"{url} sent its page with Content-Encoding {clip(encoding, 30)}, which specviz cannot read")
    inflater = zlib.decompressobj(zlib.MAX_WBITS | 32)  # gzip or zlib header, detected
    try:
        out = inflater.decompress(body, MAX_PAGE_BYTES + 1)
    except zlib.error as e:
        raise ValueError(f"{url} sent a {encoding} page that does not decompress ({e})") from None
    if len(out) > MAX_PAGE_BYTES:
        raise ValueError(f"{url} sent a page of more than {MAX_PAGE_BYTES // 2**20} MiB once decompressed")
    if not inflater.eof:
        raise ValueError(f"{url} sent a {encoding} page that does not decompress (it ends early)")
    return out


def fetch_text(
    url: str,
    timeout: float,
    allow_redirects: bool = False,
    *,
    resolve: Callable[[str], str],
    wording: Wording = Wording(),
) -> tuple[str, str]:
    """(the address finally read, its text): GET `resolve(url)`, following permitted redirects, all within `timeout`.

    `resolve` checks and completes an address, the first one and each redirect's target
    (TypeError or ValueError for one it refuses). ConnectionError when the server cannot be
    reached or does not finish in time; ValueError for an HTTP error, a redirect to another
    host or to plain http (unless `allow_redirects`), more than MAX_REDIRECTS redirects, a page
    over MAX_PAGE_BYTES (compressed or not), an HTML page, an unknown charset or bytes that are
    not text in it.
    """
    url = resolve(url)
    deadline = _Deadline(check_timeout(timeout))
    for _ in range(MAX_REDIRECTS + 1):
        status, reason, headers, body = _get(url, deadline, wording)
        if status not in (301, 302, 303, 307, 308):
            break
        url = _redirect(url, headers.get("Location"), allow_redirects, resolve)
    else:
        raise ValueError(f"{url} redirects more than {MAX_REDIRECTS} times")
    if status != 200:
        raise _http_error(url, status, reason, wording)
    return url, _decode(body, headers, url, wording)


__all__ = [
    "MAX_PAGE_BYTES",
    "MAX_REDIRECTS",
    "MAX_TIMEOUT_S",
    "REQUEST_HEADERS",
    "Wording",
    "check_timeout",
    "clip",
    "fetch_text",
]
