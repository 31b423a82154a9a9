"""Read a running vLLM server's speculative-decoding counters from its Prometheus `/metrics` page.

The metric names and the three figures are vLLM's own, as defined in vLLM's
`vllm/v1/spec_decode/metrics.py` (class `SpecDecodingProm` and the PromQL in its docstring),
read at commit ee4ceaae5953d367d8edd2132fd86d6c42506e1e of github.com/vllm-project/vllm
(the V1 engine; the names are the same since the V1 spec-decode metrics appeared):

- `vllm:spec_decode_num_drafts`: verify steps that carried a draft (one per request per step);
- `vllm:spec_decode_num_draft_tokens`: tokens proposed;
- `vllm:spec_decode_num_accepted_tokens`: proposed tokens the target accepted;
- `vllm:spec_decode_num_accepted_tokens_per_pos` (label `position` = 0, 1, …): accepted at draft position i.

All four are prometheus_client Counters with labels `model_name` and `engine`, so the page shows
them as `<name>_total` samples (plus `<name>_created` timestamps, which are not counts and are
ignored). A data-parallel server has one series per engine; they are summed. From the sums:

- acceptance rate = accepted / draft tokens;
- mean acceptance length = 1 + accepted / drafts (the 1 is the token every verify step adds);
- per-position acceptance[i] = accepted at position i / drafts.

Counters only grow, so a rate over an interval is the difference of two readings
(`later - earlier`, as PromQL's `rate()`); a counter that went down means the server restarted,
and the later reading is then taken as the whole interval.

A page is believed only when its counters are what a vLLM server can show: finite whole
numbers >= 0, each sample once, positions 0..k-1 without gaps, accepted <= draft tokens <=
drafts × k, accepted at a position <= drafts and <= accepted at the position before, one
`model_name` (or the one asked for: several are never summed). A reading is one GET of
http(s) only, the whole page within the timeout, at most MAX_PAGE_BYTES, redirected to
another host only when asked (`specviz.lm.serve.http_get`, told here how to name a vLLM server).
Anything else is a ValueError or ConnectionError naming it. The counters come back as a
`SpecCounters` (`specviz.lm.serve.vllm_counters`), which subtracts into an interval's counts.

>>> page = '''# TYPE vllm:spec_decode_num_drafts_total counter
... vllm:spec_decode_num_drafts_total{engine="0",model_name="m"} 10.0
... # TYPE vllm:spec_decode_num_draft_tokens_total counter
... vllm:spec_decode_num_draft_tokens_total{engine="0",model_name="m"} 30.0
... # TYPE vllm:spec_decode_num_accepted_tokens_total counter
... vllm:spec_decode_num_accepted_tokens_total{engine="0",model_name="m"} 15.0
... # TYPE vllm:spec_decode_num_accepted_tokens_per_pos_total counter
... vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="m",position="0"} 8.0
... vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="m",position="1"} 5.0
... vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="m",position="2"} 2.0
... '''
>>> c = parse_vllm_metrics(page)
>>> c.acceptance_rate, c.mean_acceptance_length, c.per_position_acceptance
(0.5, 2.5, [0.8, 0.5, 0.2])
"""

from __future__ import annotations

import math
import re
import string
import time
from typing import TYPE_CHECKING
from urllib.parse import quote, urlsplit, urlunsplit

import numpy as np

from .http_get import Wording, check_timeout, clip, fetch_text
from .vllm_counters import SpecCounters

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

DRAFTS = "vllm:spec_decode_num_drafts"
DRAFT_TOKENS = "vllm:spec_decode_num_draft_tokens"
ACCEPTED = "vllm:spec_decode_num_accepted_tokens"
ACCEPTED_PER_POS = "vllm:spec_decode_num_accepted_tokens_per_pos"
COUNTERS = (DRAFTS, DRAFT_TOKENS, ACCEPTED, ACCEPTED_PER_POS)
MAX_POSITIONS = 1024  # draft positions: a `position` label beyond this is refused before anything is allocated
MAX_COUNT = 2.0**53  # the largest whole number a float counter holds exactly
MAX_URL_CHARS = 2000
DEFAULT_TIMEOUT_S = 5.0
MAX_INTERVAL_S = 86400.0
VLLM_WORDING = Wording(
    server="the vLLM server",
    start_hint=" (vllm serve …)",
    page="a metrics page",
    page_kind="a Prometheus metrics page",
    not_found_hint=" (vLLM serves its metrics at /metrics on the API port)",
)
"""How the HTTP errors of a reading name a vLLM server and its page."""
_DIGITS = re.compile(r"[0-9]+")
_BARE_HOST = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[^/:@\[\]?#]+)(:[0-9]*)?([/?#]|$)")  # HOST[:PORT][/...], no scheme


# ------------------------------------------------------------------------------ parsing


def _count(value: float, what: str, where: str) -> float:
    """A counter's value, checked: a finite whole number in 0..2**53 (ValueError naming `what` otherwise)."""
    v = float(value)
    if not math.isfinite(v) or v < 0 or v != math.floor(v) or v > MAX_COUNT:
        raise ValueError(
            f"{where}: {what} is {value!r}, which no counter can be (counters are whole numbers from 0 to 2**53)"
        )
    return v


def _position(labels: dict, where: str) -> int:
    """The `position` label of an accepted-per-position sample, checked against MAX_POSITIONS before use."""
    label = labels.get("position")
    if label is None or not _DIGITS.fullmatch(label):
        raise ValueError(f"{where}: a {ACCEPTED_PER_POS} sample has no whole-number `position` label: {clip(labels)}")
    if len(label) > len(str(MAX_POSITIONS)) or int(label) >= MAX_POSITIONS:
        raise ValueError(
            f"{where}: a {ACCEPTED_PER_POS} sample has position {clip(label, 20)}; "
            f"draft positions run from 0 to at most {MAX_POSITIONS - 1}"
        )
    return int(label)


def _spec_samples(families) -> list:
    """(counter, labels, value) of every `<counter>_total` sample of the four counters (`_created` ones skipped)."""
    names = {name + "_total": name for name in COUNTERS}
    return [(names[s.name], s.labels, s.value) for fam in families for s in fam.samples if s.name in names]


def _no_counters_error(families, where: str) -> ValueError:
    """Why a parsed page holds none of the four counters: no metrics, no vLLM metrics, or no spec decoding."""
    if not families:
        return ValueError(f"{where} holds no Prometheus metrics at all: is this the /metrics page of a vLLM server?")
    if not any(fam.name.startswith("vllm:") for fam in families):
        return ValueError(
            f"{where} is a metrics page without any vllm:* metric ({len(families)} other metrics): is this a vLLM server?"
        )
    return ValueError(
        f"{where} is a vLLM metrics page without speculative-decoding counters ({DRAFTS}, …): start the "
        "server with speculative decoding, e.g. vllm serve TARGET --speculative-config "
        '\'{"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4}\''
    )


def _pick_model(samples: list, model: str | None, where: str) -> tuple[list, str | None]:
    """The samples of one `model_name`: `model`, or the only one on the page (ValueError listing them otherwise)."""
    names = sorted({labels.get("model_name") for _, labels, _ in samples}, key=lambda m: (m is None, m or ""))
    listed = ", ".join("(no model_name)" if m is None else clip(m) for m in names[:10])
    listed += f" and {len(names) - 10} more" if len(names) > 10 else ""
    if model is None:
        if len(names) > 1:
            raise ValueError(
                f"{where} counts {len(names)} models ({listed}): choose one with --model NAME (model=NAME); "
                "their counters are not summed"
            )
        model = names[0]
    elif model not in names:
        raise ValueError(f"{where} has no speculative-decoding counters for model {clip(model)}; it has {listed}")
    return [s for s in samples if s[1].get("model_name") == model], model


def _by_engine(samples: list, where: str) -> dict:
    """{engine: {counter: value, ACCEPTED_PER_POS: {position: value}}}, each sample checked and seen once."""
    engines: dict = {}
    seen = set()
    for name, labels, value in samples:
        engine = labels.get("engine", "")
        pos = _position(labels, where) if name == ACCEPTED_PER_POS else None
        rest = tuple(sorted((k, v) for k, v in labels.items() if k not in ("engine", "position")))
        key = (name, engine, pos, rest)
        if key in seen:
            at = f" at position {pos}" if pos is not None else ""
            raise ValueError(f"{where} lists the {name} sample of engine {clip(engine)}{at} twice")
        seen.add(key)
        what = f"{name}_total{{engine={clip(engine, 20)}" + (f", position={pos}}}" if pos is not None else "}")
        v = _count(value, what, where)
        counts = engines.setdefault(engine, {ACCEPTED_PER_POS: {}})
        if pos is None:
            counts[name] = counts.get(name, 0.0) + v
        else:
            counts[ACCEPTED_PER_POS][pos] = counts[ACCEPTED_PER_POS].get(pos, 0.0) + v
    return engines


def _positions(per_pos: dict, engine: str, where: str) -> tuple:
    """An engine's accepted-per-position counts as a tuple over positions 0..k-1 (ValueError for gaps)."""
    k = len(per_pos)
    if not k:
        raise ValueError(f"{where}: engine {clip(engine)} has no {ACCEPTED_PER_POS} samples")
    if max(per_pos) != k - 1:
        missing = [i for i in range(max(per_pos)) if i not in per_pos]
        shown = ", ".join(map(str, missing[:10])) + (", …" if len(missing) > 10 else "")
        raise ValueError(
            f"{where}: engine {clip(engine)} reports {ACCEPTED_PER_POS} at positions up to {max(per_pos)} "
            f"but none at position(s) {shown}: positions run 0..k-1 without gaps"
        )
    return tuple(per_pos[i] for i in range(k))


def _check_consistent(drafts: float, draft_tokens: float, accepted: float, per_pos: tuple, what: str) -> None:
    """The relations vLLM's counters keep, even read mid-update (ValueError naming the broken one)."""
    k = len(per_pos)
    if accepted > draft_tokens:
        raise ValueError(f"{what}: accepted tokens ({accepted:.0f}) exceed draft tokens ({draft_tokens:.0f})")
    if draft_tokens > drafts * k:
        raise ValueError(
            f"{what}: draft tokens ({draft_tokens:.0f}) exceed drafts × positions ({drafts:.0f} × {k}): "
            f"no draft proposes more than {k} tokens"
        )
    for i, a in enumerate(per_pos):
        if a > drafts:
            raise ValueError(f"{what}: accepted at position {i} ({a:.0f}) exceed drafts ({drafts:.0f})")
        if i and a > per_pos[i - 1]:
            raise ValueError(
                f"{what}: accepted at position {i} ({a:.0f}) exceed accepted at position {i - 1} "
                f"({per_pos[i - 1]:.0f}): a draft's accepted tokens are a prefix of it"
            )
    if sum(per_pos) > accepted:
        raise ValueError(
            f"{what}: accepted per position sum to {sum(per_pos):.0f}, more than accepted ({accepted:.0f})"
        )


def _engine_counts(engine: str, counts: dict, where: str) -> tuple:
    """One engine's (drafts, draft tokens, accepted, per-position tuple), complete and consistent."""
    lacking = [name for name in COUNTERS[:3] if name not in counts]
    if lacking:
        raise ValueError(f"{where}: engine {clip(engine)} lacks the counter(s) {', '.join(lacking)}")
    per_pos = _positions(counts[ACCEPTED_PER_POS], engine, where)
    row = (counts[DRAFTS], counts[DRAFT_TOKENS], counts[ACCEPTED], per_pos)
    _check_consistent(*row, f"{where}, engine {clip(engine)}")
    return row


def parse_vllm_metrics(text: str, url: str = "", model: str | None = None) -> SpecCounters:
    """A vLLM `/metrics` page (Prometheus text format) -> one model's spec-decoding counters summed over engines.

    ValueError, naming `url` when given, for text that is not a metrics page, a page without
    vLLM metrics or without the speculative-decoding counters, several models and no `model`,
    and counters no vLLM server can show: negative, NaN or fractional values, duplicated samples,
    gaps in the positions, accepted > draft tokens, more accepted at a position than drafts.
    """
    from prometheus_client.parser import text_string_to_metric_families

    where = url or "the metrics text"
    if not isinstance(text, str):
        raise TypeError(f"text must be the str of a Prometheus /metrics page, got {type(text).__name__}")
    if model is not None and (not isinstance(model, str) or not model):
        raise TypeError(f"model must be a model_name (a non-empty str) or None, got {model!r}")
    head = text.lstrip()[:200].lower()
    if head.startswith(("<!doctype", "<html", "<?xml", "{", "[")):
        raise ValueError(f"{where} is not a Prometheus metrics page (it starts with {clip(text.lstrip(), 30)})")
    try:
        families = list(text_string_to_metric_families(text))
    except Exception as e:  # the parser raises ValueError, IndexError or KeyError on a malformed line
        raise ValueError(f"{where} is not a Prometheus metrics page: {type(e).__name__}: {clip(e, 120)}") from None
    samples = _spec_samples(families)
    if not samples:
        raise _no_counters_error(families, where)
    samples, model = _pick_model(samples, model, where)
    missing = [n for n in COUNTERS if n not in {name for name, _, _ in samples}]
    if missing:
        raise ValueError(f"{where} lacks the speculative-decoding counter(s) {', '.join(missing)}")
    engines = _by_engine(samples, where)
    rows = [_engine_counts(e, counts, where) for e, counts in engines.items()]
    gammas = sorted({len(row[3]) for row in rows})
    if len(gammas) > 1:
        raise ValueError(f"{where}: the engines report different numbers of draft positions ({gammas})")
    return SpecCounters(
        sum(row[0] for row in rows),
        sum(row[1] for row in rows),
        sum(row[2] for row in rows),
        tuple(float(v) for v in np.sum([row[3] for row in rows], axis=0)),
        tuple(sorted((e for e in engines if e), key=lambda e: (len(e), e))),
        time.monotonic(),
        None,
        url,
        model=model or "",
    )


# ------------------------------------------------------------------------------ reading a server


def metrics_url(url: str) -> str:
    """'http://HOST:8000' (or its OpenAI base '/v1') -> 'http://HOST:8000/metrics'; other paths are kept.

    Only http(s) addresses with a host name (no user name, no whitespace, a port 1..65535).

    >>> metrics_url("http://localhost:8000"), metrics_url("localhost:8000/v1/")
    ('http://localhost:8000/metrics', 'http://localhost:8000/metrics')
    """
    if not isinstance(url, str) or not url.strip():
        raise TypeError(f"url must be the address of a vLLM server such as 'http://HOST:8000', got {url!r}")
    u = url.strip()
    bad = f"url {clip(url)} is not an http(s) address such as 'http://HOST:8000'"
    if len(u) > MAX_URL_CHARS:
        raise ValueError(f"{bad}: it is longer than {MAX_URL_CHARS} characters")
    if any(ch.isspace() or not ch.isprintable() for ch in u):
        raise ValueError(f"{bad}: it holds spaces or control characters")
    if "://" not in u:
        if not _BARE_HOST.match(u):
            raise ValueError(bad)
        u = "http://" + u
    try:
        parts = urlsplit(u)
    except ValueError as e:  # e.g. an unclosed [IPv6 literal
        raise ValueError(f"{bad}: {e}") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ValueError(bad)
    _check_netloc(parts, bad)
    path = parts.path.rstrip("/")
    if path in ("", "/v1"):
        path = "/metrics"
    ascii_only = string.punctuation  # keep ASCII as written; percent-encode the rest (as UTF-8)
    query = quote(parts.query, safe=ascii_only)
    return urlunsplit((parts.scheme.lower(), parts.netloc, quote(path, safe=ascii_only), query, ""))


def _check_netloc(parts, bad: str) -> None:
    """ValueError for a user name, a port outside 1..65535, a bare number or an unencodable host name."""
    if "@" in parts.netloc:
        raise ValueError(f"{bad}: it holds a user name or password, which specviz does not send")
    try:
        port = parts.port
    except ValueError:
        port = 0
    if port == 0 or (port is None and parts.netloc.endswith(":")):
        raise ValueError(f"{bad}: its port is not a number from 1 to 65535")
    host = parts.hostname
    if host.isdigit():
        raise ValueError(f"{bad}: its host {clip(host)} is a bare number (did you mean 'localhost:{host}'?)")
    try:
        host.encode("idna")
    except UnicodeError:
        raise ValueError(f"{bad}: {clip(host)} is not a valid host name") from None


def read_vllm_metrics(
    url: str, timeout: float = DEFAULT_TIMEOUT_S, *, model: str | None = None, allow_redirects: bool = False
) -> SpecCounters:
    """Read the spec-decoding counters of the vLLM server at `url` ('http://HOST:8000' or its /metrics).

    ConnectionError when the server is down or does not send its page within `timeout` seconds
    (the whole page, not each read); ValueError for an HTTP error (404), a page that is not metrics,
    no speculative counters, counters no server can show, several models and no `model` (the
    message lists them), or a redirect to another host unless `allow_redirects`.
    """
    final, text = fetch_text(url, timeout, allow_redirects, resolve=metrics_url, wording=VLLM_WORDING)
    return parse_vllm_metrics(text, final, model)


def watch_vllm(
    url: str,
    interval_s: float,
    count: int | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    sleep: Callable[[float], object] = time.sleep,
    keep_going: Callable[[], bool] = lambda: True,
    *,
    model: str | None = None,
    allow_redirects: bool = False,
) -> Iterator[SpecCounters]:
    """Read the server every `interval_s` seconds and yield the counts of each interval (`count` of them, or forever)."""
    interval_s = check_timeout(interval_s, "interval_s", MAX_INTERVAL_S)
    if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 1):
        raise ValueError(f"count must be a positive number of intervals or None, got {count!r}")
    check_timeout(timeout)

    def read():
        return read_vllm_metrics(url, timeout, model=model, allow_redirects=allow_redirects)

    prev = read()
    n = 0
    while (count is None or n < count) and keep_going():
        sleep(interval_s)
        if not keep_going():
            return
        cur = read()
        yield cur - prev
        prev, n = cur, n + 1


__all__ = [
    "ACCEPTED",
    "ACCEPTED_PER_POS",
    "COUNTERS",
    "DRAFTS",
    "DRAFT_TOKENS",
    "VLLM_WORDING",
    "metrics_url",
    "parse_vllm_metrics",
    "read_vllm_metrics",
    "watch_vllm",
]
