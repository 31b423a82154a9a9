"""The vLLM reader against hostile servers: every outcome is a sound figure or an error that names the problem.

Local HTTP servers (threads on 127.0.0.1, ephemeral ports) serve bad counters, bad encodings,
redirects, huge pages, pages that drip one byte at a time and sockets that never answer. The
reader (`read_vllm_metrics`), the command line (`python -m specviz vllm-stats`, a subprocess)
and the live app's refresh path (`VLLMLiveApp.read` and `start`) are driven against each, and
every outcome is classified:

- OK: figures, and the case is a sound page;
- GOOD_ERROR: a ValueError / TypeError / ConnectionError (CLI: exit 1, one `specviz vllm-stats:
  error:` line; live app: its message) whose one-line text names the problem;
- OBSCURE: any other exception, a traceback, a message that does not name the problem, or a
  sound page refused;
- SILENT: figures from a page no vLLM server can show;
- HANG: no answer within the timeout plus a margin.

The counts are printed (pytest -s); there must be no OBSCURE, SILENT or HANG.
"""

from __future__ import annotations

import collections
import concurrent.futures
import gzip
import http.server
import re
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from specviz.lm.serve.http_get import MAX_PAGE_BYTES
from specviz.lm.serve.vllm import ACCEPTED, ACCEPTED_PER_POS, DRAFT_TOKENS, DRAFTS, read_vllm_metrics

REPO = Path(__file__).resolve().parent.parent
DRIP_S = 0.2  # one byte every DRIP_S seconds: a per-read timeout of 1 s never fires
TIMEOUT = 1.0  # the reading's timeout in the slow cases
MARGIN = 2.5  # seconds past the timeout that count as a hang
BAD = ("OBSCURE", "SILENT", "HANG")


# ------------------------------------------------------------------------------ pages


def counts(drafts=10, draft_tokens=40, accepted=15, per_pos=(8, 5, 2, 0)) -> dict:
    """One engine's counters (values may be strings: written as they are); per_pos: a list or {label: value}."""
    pos = per_pos if isinstance(per_pos, dict) else dict(enumerate(per_pos))
    return {"drafts": drafts, "draft_tokens": draft_tokens, "accepted": accepted, "per_pos": pos}


def page(engines=None, models=("m",), extra: str = "", drop: str = "") -> str:
    """A vLLM /metrics page with the four counters for `engines` ({engine: counts()}) and each of `models`."""
    engines = engines or {"0": counts()}
    names = {"drafts": DRAFTS, "draft_tokens": DRAFT_TOKENS, "accepted": ACCEPTED}
    lines = []
    for key, name in names.items():
        lines.append(f"# TYPE {name}_total counter")
        lines += [f'{name}_total{{engine="{e}",model_name="{m}"}} {c[key]}' for m in models for e, c in engines.items()]
    lines.append(f"# TYPE {ACCEPTED_PER_POS}_total counter")
    for m in models:
        for e, c in engines.items():
            lines += [
                f'{ACCEPTED_PER_POS}_total{{engine="{e}",model_name="{m}",position="{p}"}} {v}'
                for p, v in c["per_pos"].items()
            ]
    text = "\n".join(line for line in lines if not (drop and drop in line)) + "\n"
    return text + extra


GOOD = page()
TWO_MODELS = page(models=("m", "n"))
BIG = b"# filler\n" * (MAX_PAGE_BYTES // 9 + 10)
BOMB = gzip.compress(b"\n" * (MAX_PAGE_BYTES + 2**20))


# ------------------------------------------------------------------------------ the hostile server


def send(h, body: bytes, status: int = 200, ctype: str = "text/plain; version=0.0.4; charset=utf-8", **headers):
    """A whole answer: status, Content-Type, Content-Length (unless given as None) and `headers`, then the body."""
    h.send_response(status)
    if ctype:
        h.send_header("Content-Type", ctype)
    if headers.get("length", len(body)) is not None:
        h.send_header("Content-Length", str(headers.pop("length", len(body))))
    headers.pop("length", None)
    for k, v in headers.items():
        h.send_header(k.replace("_", "-"), v)
    h.end_headers()
    h.wfile.write(body)


def drip(h, data: bytes, stop: threading.Event) -> None:
    """Write `data` one byte every DRIP_S seconds until it is sent, the client leaves or the server stops."""
    for b in data:
        if stop.wait(DRIP_S):
            return
        h.wfile.write(bytes([b]))
        h.wfile.flush()


def routes(port: int, stop: threading.Event) -> dict:
    """path -> handler(h) of every hostile answer."""
    other = f"http://localhost:{port}"  # the same server under another host name
    return {
        "/good": lambda h: send(h, GOOD.encode()),
        "/two-models": lambda h: send(h, TWO_MODELS.encode()),
        "/gzip": lambda h: send(h, gzip.compress(GOOD.encode()), Content_Encoding="gzip"),
        "/latin1": lambda h: send(h, page(models=("modèle",)).encode("latin-1"), ctype="text/plain; charset=latin-1"),
        "/bom": lambda h: send(h, b"\xef\xbb\xbf" + GOOD.encode()),
        "/no-ctype": lambda h: send(h, GOOD.encode(), ctype=""),
        "/redirect-same": lambda h: send(h, b"", 302, Location="/good"),
        "/redirect-other": lambda h: send(h, b"", 302, Location=f"{other}/good"),
        "/redirect-two-models": lambda h: send(h, b"", 302, Location=f"{other}/two-models"),
        "/redirect-js": lambda h: send(h, b"", 302, Location="javascript:alert(1)"),
        "/redirect-file": lambda h: send(h, b"", 301, Location="file:///etc/passwd"),
        "/redirect-loop": lambda h: send(h, b"", 307, Location="/redirect-loop"),
        "/redirect-none": lambda h: send(h, b"", 302),
        "/negative": lambda h: send(h, page({"0": counts(drafts=-10)}).encode()),
        "/accepted-over-drafted": lambda h: send(h, page({"0": counts(accepted=50)}).encode()),
        "/pos-over-drafts": lambda h: send(h, page({"0": counts(per_pos=(12, 2, 1, 0))}).encode()),
        "/pos-increasing": lambda h: send(h, page({"0": counts(per_pos=(5, 8, 2, 0))}).encode()),
        "/pos-sum-over-accepted": lambda h: send(h, page({"0": counts(accepted=10, per_pos=(8, 5, 2, 0))}).encode()),
        "/tokens-over-k": lambda h: send(h, page({"0": counts(draft_tokens=41)}).encode()),
        "/duplicate": lambda h: send(h, page(extra=f'{DRAFTS}_total{{engine="0",model_name="m"}} 10\n').encode()),
        "/duplicate-pos": lambda h: send(
            h, page(extra=f'{ACCEPTED_PER_POS}_total{{engine="0",model_name="m",position="01"}} 5\n').encode()
        ),
        "/gap": lambda h: send(h, page({"0": counts(per_pos={0: 8, 1: 5, 3: 2})}).encode()),
        "/huge-position": lambda h: send(
            h, page({"0": counts(per_pos={0: 8, 1: 5, 2: 2, 3: 0, "99999999999999999999": 0})}).encode()
        ),
        "/big-position": lambda h: send(h, page({"0": counts(per_pos={0: 8, 1: 5, 2: 2, 3: 0, 5000: 0})}).encode()),
        "/negative-position": lambda h: send(h, page({"0": counts(per_pos={0: 8, 1: 5, 2: 2, -1: 0})}).encode()),
        "/nan": lambda h: send(h, page({"0": counts(drafts="NaN")}).encode()),
        "/inf": lambda h: send(h, page({"0": counts(draft_tokens="+Inf")}).encode()),
        "/fraction": lambda h: send(h, page({"0": counts(accepted=14.5)}).encode()),
        "/astronomic": lambda h: send(h, page({"0": counts(drafts="1e300", draft_tokens="1e300")}).encode()),
        "/engines-disagree": lambda h: send(
            h, page({"0": counts(), "1": counts(draft_tokens=30, per_pos=(8, 5, 2))}).encode()
        ),
        "/engine-lacks": lambda h: send(
            h, page({"0": counts(), "1": counts()}, drop=f'{ACCEPTED}_total{{engine="1"').encode()
        ),
        "/empty": lambda h: send(h, b""),
        "/blank": lambda h: send(h, b"\n  \n\t\n"),
        "/html": lambda h: send(h, b"<!doctype html><p>Welcome</p>", ctype="text/html"),
        "/html-as-text": lambda h: send(h, b"<html><body>login</body></html>"),
        "/json": lambda h: send(h, b'{"drafts": 10}', ctype="application/json"),
        "/words": lambda h: send(h, b"hello there, general kenobi\n"),
        "/not-utf8": lambda h: send(h, GOOD.encode() + b"# \xff\xfe\x80\n"),
        "/unknown-charset": lambda h: send(h, GOOD.encode(), ctype="text/plain; charset=klingon-8"),
        "/rot13-charset": lambda h: send(h, GOOD.encode(), ctype="text/plain; charset=rot13"),
        "/gzip-bomb": lambda h: send(h, BOMB, Content_Encoding="gzip"),
        "/gzip-corrupt": lambda h: send(h, b"\x1f\x8b\x08\x00garbage", Content_Encoding="gzip"),
        "/brotli": lambda h: send(h, GOOD.encode(), Content_Encoding="br"),
        "/huge-length": lambda h: send(h, BIG),
        "/huge-stream": lambda h: send(h, BIG, length=None),
        "/incomplete": lambda h: send(h, GOOD.encode(), length=len(GOOD) + 500),
        "/404": lambda h: send(h, b"no", 404),
        "/500-long-reason": lambda h: (h.send_response(500, "x" * 5000), h.end_headers()),
        "/204": lambda h: send(h, b"", 204),
        "/drip-body": lambda h: (
            send(h, b"", length=len(GOOD)),
            drip(h, GOOD.encode(), stop),
        ),
        "/drip-headers": lambda h: drip(h, b"HTTP/1.0 200 OK\r\nX-Slow: " + b"a" * 1000, stop),
        "/silent": lambda h: stop.wait(10),
        "/not-http": lambda h: h.wfile.write(b"SSH-2.0-OpenSSH_9.6\r\n"),
        "/long-header": lambda h: h.wfile.write(b"HTTP/1.0 200 OK\r\nX: " + b"a" * 70000 + b"\r\n\r\n"),
    }


class Hostile:
    """One threaded HTTP server on 127.0.0.1 answering every path of `routes`."""

    def __init__(self):
        self.stop = threading.Event()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                handler = outer.routes.get(self.path.split("?")[0])
                try:
                    handler(self) if handler else send(self, b"no such page", 404)
                except OSError:  # the client left (a refused page, a deadline): nothing more to send
                    pass

            def log_message(self, *args):
                pass

        http.server.ThreadingHTTPServer.daemon_threads = True
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{port}"
        self.routes = routes(port, self.stop)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def hostile():
    s = Hostile()
    yield s
    s.close()


def refused_url() -> str:
    """An address where nothing listens (a port bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


# ------------------------------------------------------------------------------ the cases


@dataclass
class Case:
    """A hostile input: the path served (or a whole URL), what must come out, and the reader's keywords."""

    name: str
    where: str  # a path of the hostile server, or a full URL
    expect: str  # "ok", or a regex the one-line error must match
    kwargs: dict = field(default_factory=dict)
    slow: bool = False  # runs into the deadline


CASES = [
    Case("sound page", "/good", "ok"),
    Case("two models, one chosen", "/two-models", "ok", {"model": "n"}),
    Case("gzip page", "/gzip", "ok"),
    Case("latin-1 page", "/latin1", "ok"),
    Case("UTF-8 BOM", "/bom", "ok"),
    Case("no Content-Type", "/no-ctype", "ok"),
    Case("redirect on the same host", "/redirect-same", "ok"),
    Case("redirect to another host, allowed", "/redirect-other", "ok", {"allow_redirects": True}),
    Case("redirect to another host", "/redirect-other", r"redirects to another host .*--follow-redirects"),
    Case("redirect to javascript:", "/redirect-js", r"redirects to 'javascript:alert\(1\)', which is not an http"),
    Case("redirect to file:", "/redirect-file", r"which is not an http\(s\) address"),
    Case("redirect loop", "/redirect-loop", r"redirects more than 5 times"),
    Case("redirect without Location", "/redirect-none", r"redirect but no Location"),
    Case("negative counter", "/negative", r"drafts_total.* is -10.*which no counter can be"),
    Case("accepted > drafted", "/accepted-over-drafted", r"accepted tokens \(50\) exceed draft tokens \(40\)"),
    Case("per position > drafts", "/pos-over-drafts", r"accepted at position 0 \(12\) exceed drafts \(10\)"),
    Case("per position grows", "/pos-increasing", r"position 1 \(8\) exceed accepted at position 0 \(5\)"),
    Case("per position sum > accepted", "/pos-sum-over-accepted", r"sum to 15, more than accepted \(10\)"),
    Case("draft tokens > drafts × k", "/tokens-over-k", r"draft tokens \(41\) exceed drafts × positions \(10 × 4\)"),
    Case("duplicated sample", "/duplicate", r"lists the vllm:spec_decode_num_drafts sample of engine '0' twice"),
    Case("duplicated position (01 = 1)", "/duplicate-pos", r"at position 1 twice"),
    Case("gap in positions", "/gap", r"none at position\(s\) 2: positions run 0..k-1 without gaps"),
    Case("huge position label", "/huge-position", r"position '9999.*draft positions run from 0 to at most 1023"),
    Case("position beyond the cap", "/big-position", r"position '5000'.*at most 1023"),
    Case("negative position", "/negative-position", r"no whole-number `position` label"),
    Case("two models summed", "/two-models", r"counts 2 models \('m', 'n'\): choose one with --model"),
    Case("a model not on the page", "/two-models", r"no .* counters for model 'x'; it has 'm', 'n'", {"model": "x"}),
    Case("NaN counter", "/nan", r"is nan, which no counter can be"),
    Case("inf counter", "/inf", r"is inf, which no counter can be"),
    Case("fractional counter", "/fraction", r"is 14\.5, which no counter can be"),
    Case("astronomic counter", "/astronomic", r"is 1e\+300, which no counter can be"),
    Case("engines disagree on k", "/engines-disagree", r"different numbers of draft positions \(\[3, 4\]\)"),
    Case("engine lacks a counter", "/engine-lacks", r"engine '1' lacks the counter\(s\) vllm:spec_decode_num_accepted"),
    Case("empty page", "/empty", r"holds no Prometheus metrics at all"),
    Case("blank page", "/blank", r"holds no Prometheus metrics at all"),
    Case("HTML page", "/html", r"not a Prometheus metrics page \(it is an HTML page"),
    Case("HTML sent as text", "/html-as-text", r"not a Prometheus metrics page \(it starts with '<html"),
    Case("JSON page", "/json", r"not a Prometheus metrics page \(it starts with '\{"),
    Case("words", "/words", r"not a Prometheus metrics page: ValueError"),
    Case("non-UTF-8 bytes", "/not-utf8", r"not valid utf-8 text: byte 0xff at offset \d+"),
    Case("unknown charset", "/unknown-charset", r"declares the charset 'klingon-8', which is no text encoding"),
    Case("rot13 charset", "/rot13-charset", r"declares the charset 'rot13', which is no text encoding"),
    Case("gzip bomb", "/gzip-bomb", r"more than 8 MiB once decompressed"),
    Case("corrupt gzip", "/gzip-corrupt", r"gzip page that does not decompress"),
    Case("brotli", "/brotli", r"Content-Encoding 'br', which specviz cannot read"),
    Case("huge page (Content-Length)", "/huge-length", r"sent more than 8 MiB: not a metrics page"),
    Case("huge page (streamed)", "/huge-stream", r"sent more than 8 MiB: not a metrics page"),
    Case("connection closed mid-page", "/incomplete", r"closed the connection before its page was complete"),
    Case("404", "/404", r"answered HTTP 404 .*vLLM serves its metrics at /metrics"),
    Case("500 with a 5000-char reason", "/500-long-reason", r"answered HTTP 500 x+…$"),
    Case("204", "/204", r"answered HTTP 204"),
    Case("not HTTP", "/not-http", r"did not answer in HTTP \(BadStatusLine"),
    Case("a 70 kB header line", "/long-header", r"did not answer in HTTP \(LineTooLong"),
    Case("drip body", "/drip-body", r"did not send its whole page within 1 s", {"timeout": TIMEOUT}, True),
    Case("drip headers", "/drip-headers", r"did not send its whole page within 1 s", {"timeout": TIMEOUT}, True),
    Case("never answers", "/silent", r"did not send its whole page within 1 s", {"timeout": TIMEOUT}, True),
    Case("connection refused", "REFUSED", r"cannot reach the vLLM server at http://127\.0\.0\.1:\d+/metrics"),
    Case("https to an http server", "HTTPS", r"cannot reach the vLLM server at https://.*(SSL|ssl|TLS)"),
    Case("non-ASCII path", "/métrics", r"/m%C3%A9trics answered HTTP 404"),
]

ARGUMENT_CASES = [  # (name, url or None for the good page, keywords, expected error)
    ("timeout=inf", None, {"timeout": float("inf")}, r"timeout must be a finite number of seconds in \(0, 3600\]"),
    ("timeout=nan", None, {"timeout": float("nan")}, r"timeout must be a finite number"),
    ("timeout=0", None, {"timeout": 0}, r"timeout must be a finite number"),
    ("timeout=-1", None, {"timeout": -1}, r"timeout must be a finite number"),
    ("timeout=10**400", None, {"timeout": 10**400}, r"timeout must be a finite number"),
    ("timeout='5'", None, {"timeout": "5"}, r"timeout must be a number of seconds, got '5'"),
    ("timeout=True", None, {"timeout": True}, r"timeout must be a number of seconds, got True"),
    ("model=123", None, {"model": 123}, r"model must be a model_name"),
    ("javascript: URL", "javascript:alert(1)", {}, r"url 'javascript:alert\(1\)' is not an http\(s\) address"),
    ("ftp URL", "ftp://example.org/metrics", {}, r"is not an http\(s\) address"),
    ("file URL", "file:///etc/passwd", {}, r"is not an http\(s\) address"),
    ("no host", "http://", {}, r"is not an http\(s\) address"),
    ("port out of range", "http://127.0.0.1:99999", {}, r"its port is not a number from 1 to 65535"),
    ("port 0", "http://127.0.0.1:0", {}, r"its port is not a number from 1 to 65535"),
    ("user name", "http://user:pw@127.0.0.1:8000", {}, r"holds a user name or password"),
    ("space", "http://127.0.0.1:8000/me trics", {}, r"holds spaces or control characters"),
    ("newline", "http://127.0.0.1:8000/\nmetrics", {}, r"holds spaces or control characters"),
    ("bare number", "123", {}, r"its host '123' is a bare number"),
    ("bad host name", "http://" + "a" * 70 + ".example", {}, r"is not a valid host name"),
    ("unclosed IPv6 literal", "http://[::1", {}, r"Invalid IPv6 URL"),
    ("2 kB URL", "http://127.0.0.1/" + "a" * 2000, {}, r"longer than 2000 characters"),
    ("url=123", 123, {}, r"url must be the address of a vLLM server"),
    ("url=None", None, {"url": None}, r"url must be the address of a vLLM server"),
]


def url_of(case: Case, server: Hostile, refused: str) -> str:
    """The address a case reads."""
    if case.where in ("REFUSED", "HTTPS"):
        return refused if case.where == "REFUSED" else server.url.replace("http:", "https:") + "/good"
    return server.url + case.where


def judge(expect: str, outcome: str, detail: str) -> str:
    """OK / GOOD_ERROR / OBSCURE / SILENT for what came out (`outcome` "ok" or "error") against `expect`."""
    if outcome == "ok":
        return "OK" if expect == "ok" else "SILENT"
    if expect == "ok" or "\n" in detail or "Traceback" in detail or len(detail) > 600:
        return "OBSCURE"
    return "GOOD_ERROR" if re.search(expect, detail) else "OBSCURE"


def within(fn, budget: float) -> tuple[str, str]:
    """Run fn() in a thread: ("ok", ""), ("error", message), ("obscure", message) or ("hang", "")."""
    box = {}

    def run():
        try:
            fn()
            box["r"] = ("ok", "")
        except (ValueError, TypeError, ConnectionError) as e:
            box["r"] = ("error", str(e))
        except BaseException as e:  # noqa: BLE001 - any other exception is the finding
            box["r"] = ("obscure", f"{type(e).__name__}: {e}")

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(budget)
    return box.get("r", ("hang", ""))


def classify(fn, expect: str, budget: float) -> tuple[str, str]:
    """(class, detail) of one call."""
    t0 = time.monotonic()
    outcome, detail = within(fn, budget)
    if outcome == "hang":
        return "HANG", f"no answer after {time.monotonic() - t0:.1f} s"
    if outcome == "obscure":
        return "OBSCURE", detail
    return judge(expect, outcome, detail), detail


def report(surface: str, results: list) -> None:
    """Print the counts and the non-OK/GOOD_ERROR outcomes; fail on any OBSCURE, SILENT or HANG."""
    tally = collections.Counter(kind for _, kind, _ in results)
    print(f"\n{surface}: " + ", ".join(f"{k} {tally.get(k, 0)}" for k in ("OK", "GOOD_ERROR", *BAD)))
    bad = [f"  {kind}: {name}: {detail}" for name, kind, detail in results if kind in BAD]
    assert not bad, f"{surface}:\n" + "\n".join(bad)


def budget(case: Case) -> float:
    return case.kwargs.get("timeout", 5.0) + MARGIN if case.slow else 10.0


# ------------------------------------------------------------------------------ the reader


@pytest.mark.slow
def test_reader_against_hostile_servers(hostile):
    refused = refused_url()
    results = []
    slow = {}
    for case in CASES:
        url = url_of(case, hostile, refused)
        t0 = time.monotonic()
        kind, detail = classify(lambda: read_vllm_metrics(url, **case.kwargs), case.expect, budget(case))  # noqa: B023
        results.append((case.name, kind, detail))
        if case.slow:
            slow[case.name] = time.monotonic() - t0
    report("reader", results)
    late = {name: f"{s:.2f} s" for name, s in slow.items() if s > TIMEOUT + 0.75}
    assert not late, f"the timeout ({TIMEOUT} s) must cover the whole page: {late}"
    assert sum(kind == "OK" for _, kind, _ in results) == sum(c.expect == "ok" for c in CASES)


def test_reader_arguments(hostile):
    results = []
    for name, url, kwargs, expect in ARGUMENT_CASES:
        kw = dict(kwargs)
        target = kw.pop("url", hostile.url + "/good" if url is None else url)
        kind, detail = classify(lambda: read_vllm_metrics(target, **kw), expect, 10.0)  # noqa: B023
        results.append((name, kind, detail))
    report("reader arguments", results)


def test_sound_hostile_pages_give_the_right_figures(hostile):
    good = read_vllm_metrics(hostile.url + "/good")
    assert (good.drafts, good.draft_tokens, good.accepted, good.model) == (10, 40, 15, "m")
    assert good.per_position_acceptance == [0.8, 0.5, 0.2, 0.0]
    for path, kwargs in (("/gzip", {}), ("/bom", {}), ("/two-models", {"model": "n"}), ("/redirect-same", {})):
        c = read_vllm_metrics(hostile.url + path, **kwargs)
        assert c.per_position_acceptance == good.per_position_acceptance, path
    assert read_vllm_metrics(hostile.url + "/latin1").model == "modèle"
    moved = read_vllm_metrics(hostile.url + "/redirect-other", allow_redirects=True)
    assert moved.url.startswith("http://localhost:") and moved.url.endswith("/good")


# ------------------------------------------------------------------------------ the command line

CLI_CASES = [  # a few of each kind (the reader test has them all): a subprocess costs 2 s of start-up (torch)
    ("sound page", "/good", [], "ok"),
    ("model chosen, redirect followed", "/redirect-two-models", ["--follow-redirects", "--model", "n", "--json"], "ok"),
    ("two models", "/two-models", [], r"counts 2 models \('m', 'n'\): choose one with --model"),
    ("NaN counter", "/nan", ["--watch", "1", "--count", "1"], r"is nan, which no counter can be"),
    ("huge position", "/huge-position", [], r"at most 1023"),
    ("redirect to another host", "/redirect-other", [], r"redirects to another host"),
    ("drip body", "/drip-body", ["--timeout", "1"], r"did not send its whole page within 1 s"),
    ("connection refused", "REFUSED", ["--timeout", "1"], r"cannot reach the vLLM server"),
    ("javascript: URL", "javascript:alert(1)", [], r"is not an http\(s\) address"),
    ("--timeout inf", "/good", ["--timeout", "inf"], r"argument --timeout: must be a finite number > 0: inf"),
]


def run_cli(url: str, options: list) -> subprocess.CompletedProcess:
    """`python -m specviz vllm-stats URL OPTIONS` as a subprocess."""
    cmd = [sys.executable, "-m", "specviz", "vllm-stats", url, *options]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=30, cwd=REPO)


def judge_cli(expect: str, proc: subprocess.CompletedProcess) -> tuple[str, str]:
    """OK: exit 0 with figures; GOOD_ERROR: exit 1 and one `specviz vllm-stats: error:` line naming the problem
    (for an option's value: exit 2, argparse's error line, after its usage lines if any)."""
    err = proc.stderr.strip()
    if "Traceback" in proc.stderr + proc.stdout:
        return "OBSCURE", err[-300:]
    if proc.returncode == 0:
        sound = re.search(r"acceptance rate|acceptance_rate", proc.stdout)
        return ("OK" if sound else "OBSCURE") if expect == "ok" else "SILENT", proc.stdout[-200:]
    lines = err.splitlines()
    last = lines[-1] if lines else ""
    usage = proc.returncode == 2 and last.startswith("specviz vllm-stats: error: argument ")
    shaped = (proc.returncode == 1 and len(lines) == 1) or (usage and all(x.startswith(" ") for x in lines[1:-1]))
    if expect == "ok" or not shaped or not last.startswith("specviz vllm-stats: error: "):
        return "OBSCURE", f"exit {proc.returncode}: {err[-300:]}"
    return ("GOOD_ERROR" if re.search(expect, last) else "OBSCURE"), last


@pytest.mark.slow
def test_cli_against_hostile_servers(hostile):
    refused = refused_url()

    def one(case):
        name, where, options, expect = case
        url = (
            refused if where == "REFUSED" else where if "://" not in where and where[0] != "/" else hostile.url + where
        )
        t0 = time.monotonic()
        try:
            proc = run_cli(url, options)
        except subprocess.TimeoutExpired:
            return name, "HANG", f"no exit after {time.monotonic() - t0:.0f} s"
        return (name, *judge_cli(expect, proc))

    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(one, CLI_CASES))
    report("cli", results)
    assert sum(kind == "OK" for _, kind, _ in results) == sum(c[3] == "ok" for c in CLI_CASES)


def test_cli_without_torch_reads_the_server(hostile):
    """vllm-stats only reads a Prometheus page: it works where importing torch fails (the plain install)."""
    code = "import sys; sys.modules['torch'] = None; from specviz.cli import main; sys.exit(main(sys.argv[1:]))"
    cmd = [sys.executable, "-c", code, "vllm-stats", hostile.url + "/good"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=30, cwd=REPO)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert "acceptance rate 0.375" in proc.stdout, proc.stdout


def test_cli_without_prometheus_client_says_so_in_one_line(hostile):
    code = (
        "import sys; sys.modules['prometheus_client'] = None; "
        "from specviz.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    cmd = [sys.executable, "-c", code, "vllm-stats", hostile.url + "/good"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=30, cwd=REPO)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert re.fullmatch(
        r"specviz vllm-stats: error: prometheus_client is not installed: pip install \S+\n", proc.stderr
    )


# ------------------------------------------------------------------------------ the live app


def live_outcome(app, case: Case, url: str) -> tuple[str, str]:
    """(class, detail) of the live app's Read once on `url`: the reading drawn, or its message."""
    app.url.value = url
    app.model.value = case.kwargs.get("model", "")
    app.timeout = case.kwargs.get("timeout", 5.0)
    app.allow_redirects = case.kwargs.get("allow_redirects", False)
    box = {}

    def read():
        box["shown"] = app.read()

    outcome, detail = within(read, budget(case))
    if outcome != "ok":
        return ("HANG" if outcome == "hang" else "OBSCURE"), detail or "no answer"
    if box["shown"] is not None:
        sound = not app.last_error and "acceptance rate" in app.stats_html.value
        return ("OK" if sound else "OBSCURE") if case.expect == "ok" else "SILENT", ""
    message = app.message_text
    if case.expect == "ok" or not message:
        return "OBSCURE", message or "nothing drawn and no message"
    return judge(case.expect, "error", message), message


@pytest.mark.slow
def test_live_app_against_hostile_servers(hostile):
    pytest.importorskip("ipywidgets")
    from specviz.widgets.live.vllm import vllm_live_app

    refused = refused_url()
    app = vllm_live_app(hostile.url + "/good", timeout=5.0)
    cases = [c for c in CASES if c.where != "/drip-headers"]  # one slow case less: the reader covers it
    results = [(f"read: {c.name}", *live_outcome(app, c, url_of(c, hostile, refused))) for c in cases]
    for path, expect in (("/drip-body", r"within 1 s"), ("/two-models", r"counts 2 models")):  # the polling path
        app.url.value, app.model.value, app.timeout = hostile.url + path, "", TIMEOUT
        kind, detail = classify(lambda: app.start(blocking=True, count=1), "ok", TIMEOUT + MARGIN)
        if kind == "OK":  # the job ran; what it showed is the message
            kind = judge(expect, "error", app.message_text) if app.message_text else "SILENT"
            detail = app.message_text
        results.append((f"poll: {path}", kind, detail))
    report("live app", results)
    app.url.value, app.model.value, app.timeout = hostile.url + "/two-models", "n", 5.0  # still usable: choose a model
    assert app.read() is not None and not app.last_error and app.shown.model == "n"


@pytest.mark.parametrize(
    ("kwargs", "expect"),
    [
        ({"timeout": float("inf")}, r"timeout must be a finite number of seconds"),
        ({"timeout": 0}, r"timeout must be a finite number of seconds"),
        ({"interval_s": 0}, r"interval_s must be a finite number of seconds"),
        ({"interval_s": 1e6}, r"interval_s must be a finite number of seconds in \(0, 86400\]"),
        ({"interval_s": 0.001}, r"interval_s must be from 0.01 to 3600 seconds"),
        ({"gamma": 100}, r"gamma .* must be 1..64, got 100"),
        ({"gamma": -1}, r"gamma .* must be 1..64, got -1"),
        ({"source": 123}, r"source must be the address of a vLLM server"),
        ({"model": 5}, r"model must be a model_name"),
        ({"allow_redirects": "yes"}, r"allow_redirects must be True or False"),
    ],
)
def test_live_app_refuses_out_of_range_arguments(kwargs, expect):
    pytest.importorskip("ipywidgets")
    from specviz.widgets.live.vllm import VLLMLiveApp

    with pytest.raises((ValueError, TypeError), match=expect):
        VLLMLiveApp(**kwargs)
