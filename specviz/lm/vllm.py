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
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlparse, urlunparse

import numpy as np

from ..gamma import accepted_length_dist, expected_tokens

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from .stats import SpecStats

VLLM_SOURCE = "github.com/vllm-project/vllm, vllm/v1/spec_decode/metrics.py at commit ee4ceaae5953"
DRAFTS = "vllm:spec_decode_num_drafts"
DRAFT_TOKENS = "vllm:spec_decode_num_draft_tokens"
ACCEPTED = "vllm:spec_decode_num_accepted_tokens"
ACCEPTED_PER_POS = "vllm:spec_decode_num_accepted_tokens_per_pos"
COUNTERS = (DRAFTS, DRAFT_TOKENS, ACCEPTED, ACCEPTED_PER_POS)
MAX_PAGE_BYTES = 64 * 2**20  # a metrics page is kilobytes; refuse to read more than this
DEFAULT_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class SpecCounters:
    """vLLM's four speculative-decoding counters, summed over engines: one reading, or the difference of two."""

    drafts: float
    draft_tokens: float
    accepted: float
    accepted_per_position: tuple = ()
    engines: tuple = ()  # the `engine` label values seen
    read_at: float = float("nan")  # time.monotonic() of the reading (of the later one for a difference)
    seconds: float | None = None  # the interval of a difference; None for a reading (totals since start)
    url: str = ""
    restarted: bool = field(default=False)  # a counter went down between the two readings

    @property
    def gamma(self) -> int:
        """Draft positions the server reports (its num_speculative_tokens)."""
        return len(self.accepted_per_position)

    @property
    def acceptance_rate(self) -> float:
        """accepted / draft tokens (NaN when nothing was drafted)."""
        return self.accepted / self.draft_tokens if self.draft_tokens else float("nan")

    @property
    def mean_acceptance_length(self) -> float:
        """1 + accepted / drafts: tokens per verify step, the bonus or correction token included."""
        return 1 + self.accepted / self.drafts if self.drafts else float("nan")

    @property
    def per_position_acceptance(self) -> list:
        """accepted at position i / drafts, i = 0..γ-1 (NaN when there were no drafts)."""
        return [a / self.drafts if self.drafts else float("nan") for a in self.accepted_per_position]

    @property
    def accepted_hist(self) -> np.ndarray:
        """(γ+1,) drafts with exactly k accepted tokens: a draft with k accepted counts at positions 0..k-1."""
        reached = np.array([self.drafts, *self.accepted_per_position, 0.0])
        return np.maximum(np.round(reached[:-1] - reached[1:]), 0).astype(np.int64)

    @property
    def implied_alpha(self) -> float:
        """The i.i.d. acceptance α whose (1 - α^(γ+1)) / (1 - α) equals the mean acceptance length."""
        return implied_alpha(self.mean_acceptance_length, self.gamma)

    def __sub__(self, earlier: SpecCounters) -> SpecCounters:
        """The counts between `earlier` and this reading (the later reading alone after a restart)."""
        if not isinstance(earlier, SpecCounters):
            return NotImplemented
        g = max(self.gamma, earlier.gamma)
        now = np.array([self.drafts, self.draft_tokens, self.accepted, *_pad(self.accepted_per_position, g)])
        then = np.array(
            [earlier.drafts, earlier.draft_tokens, earlier.accepted, *_pad(earlier.accepted_per_position, g)]
        )
        restarted = bool((now < then).any())
        diff = now if restarted else now - then
        return SpecCounters(
            float(diff[0]),
            float(diff[1]),
            float(diff[2]),
            tuple(float(v) for v in diff[3 : 3 + self.gamma]),
            self.engines,
            self.read_at,
            self.read_at - earlier.read_at,
            self.url,
            restarted,
        )

    def to_dict(self) -> dict:
        """JSON-ready figures, named as specviz's `SpecStats.to_dict` names them (NaN as None)."""
        sec = self.seconds
        return {
            "url": self.url,
            "engines": list(self.engines),
            "interval_seconds": _num(sec),
            "drafts": int(self.drafts),
            "draft_tokens": int(self.draft_tokens),
            "accepted_tokens": int(self.accepted),
            "accepted_tokens_per_position": [int(v) for v in self.accepted_per_position],
            "acceptance_rate": _num(self.acceptance_rate),
            "mean_acceptance_length": _num(self.mean_acceptance_length),
            "per_position_acceptance": [_num(v) for v in self.per_position_acceptance],
            "implied_alpha": _num(self.implied_alpha),
            "accepted_tokens_per_second": _num(self.accepted / sec) if sec else None,
            "server_restarted": self.restarted,
            "metric_names_from": VLLM_SOURCE,
        }

    def summary(self) -> str:
        """One line: drafts, the three figures and (for an interval) accepted tokens per second."""
        if not self.drafts:
            what = "no drafts in this interval (the server was idle)" if self.seconds else "no drafts yet"
            return f"{what}: draft tokens {int(self.draft_tokens)}, accepted {int(self.accepted)}"
        pos = " ".join(f"{v:.3f}" for v in self.per_position_acceptance)
        line = (
            f"drafts {int(self.drafts)} · acceptance rate {self.acceptance_rate:.3f} · "
            f"mean acceptance length {self.mean_acceptance_length:.2f} · per position {pos}"
        )
        if self.seconds:
            line += f" · {self.accepted / self.seconds:.1f} accepted tokens/s"
        return line + (" · (server restarted)" if self.restarted else "")

    def stats(self) -> SpecStats:
        """These counts as a `SpecStats`, so specviz's acceptance figures and tables draw them.

        steps = drafts, generated = accepted + drafts; `alpha` is the implied α (the counters carry
        no p and q); the conditional per-position rate is accepted at i / accepted at i-1 (drafts
        for i = 0), exact when every draft proposes γ tokens. Timings unknown to vLLM are NaN.
        """
        from .stats import SpecStats

        g, d = self.gamma, self.drafts
        reached = np.array([d, *self.accepted_per_position[:-1]], dtype=float) if g else np.zeros(0)
        acc = np.array(self.accepted_per_position, dtype=float)
        with np.errstate(invalid="ignore", divide="ignore"):
            cond = np.where(reached > 0, acc / np.maximum(reached, 1e-300), np.nan)
        alpha = self.implied_alpha
        theory = accepted_length_dist(alpha, g) * d if g and math.isfinite(alpha) else np.zeros(g + 1)
        sec = self.seconds or float("nan")
        nan = float("nan")
        return SpecStats(
            gamma=g,
            steps=int(d),
            drafts=int(d),
            drafted=int(self.draft_tokens),
            accepted=int(self.accepted),
            generated=int(self.accepted + d),
            acceptance_rate=self.acceptance_rate,
            mean_acceptance_length=self.mean_acceptance_length,
            per_position=np.array(self.per_position_acceptance, dtype=float),
            per_position_conditional=cond,
            accepted_hist=self.accepted_hist,
            accepted_hist_theory=theory,
            alpha=alpha,
            seconds=sec,
            tokens_per_second=(self.accepted + d) / sec if self.seconds else nan,
            draft_token_s=nan,
            verify_step_s=nan,
            expected_tokens_per_step=expected_tokens(alpha, g) if math.isfinite(alpha) else nan,
        )


def _pad(values, n: int) -> list:
    return list(values) + [0.0] * (n - len(values))


def _num(v):
    if v is None:
        return None
    v = float(v)
    return v if math.isfinite(v) else None


def implied_alpha(mean_acceptance_length: float, gamma: int) -> float:
    """α in [0, 1] with expected_tokens(α, γ) = mean_acceptance_length (bisection; NaN when undefined).

    >>> round(implied_alpha(expected_tokens(0.7, 4), 4), 6)
    0.7
    """
    m = float(mean_acceptance_length)
    if not math.isfinite(m) or gamma < 1:
        return float("nan")
    if m <= 1:
        return 0.0
    if m >= gamma + 1:
        return 1.0
    lo, hi = 0.0, 1.0
    for _ in range(60):  # expected_tokens grows with α: halve the bracket to 1e-18
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if expected_tokens(mid, gamma) < m else (lo, mid)
    return (lo + hi) / 2


# ------------------------------------------------------------------------------ parsing


def parse_vllm_metrics(text: str, url: str = "") -> SpecCounters:
    """A vLLM `/metrics` page (Prometheus text format) -> its spec-decoding counters summed over engines.

    ValueError, naming `url` when given, for text that is not a metrics page, a page without
    vLLM metrics, or a vLLM page without the speculative-decoding counters.
    """
    from prometheus_client.parser import text_string_to_metric_families

    where = url or "the metrics text"
    if not isinstance(text, str):
        raise TypeError(f"text must be the str of a Prometheus /metrics page, got {type(text).__name__}")
    head = text.lstrip()[:200].lower()
    if head.startswith(("<!doctype", "<html", "<?xml", "{", "[")):
        raise ValueError(f"{where} is not a Prometheus metrics page (it starts with {text.lstrip()[:30]!r})")
    try:
        families = list(text_string_to_metric_families(text))
    except Exception as e:  # the parser raises ValueError, IndexError or KeyError on a malformed line
        raise ValueError(f"{where} is not a Prometheus metrics page: {type(e).__name__}: {e}") from None
    sums = {name: 0.0 for name in COUNTERS[:3]}
    per_pos: dict = {}
    engines, seen, vllm_names = set(), set(), set()
    for fam in families:
        if fam.name.startswith("vllm:"):
            vllm_names.add(fam.name)
        if fam.name not in COUNTERS:
            continue
        for s in fam.samples:
            if s.name != fam.name + "_total":  # `_created` timestamps are not counts
                continue
            seen.add(fam.name)
            if "engine" in s.labels:
                engines.add(s.labels["engine"])
            if fam.name == ACCEPTED_PER_POS:
                try:
                    pos = int(s.labels["position"])
                except (KeyError, ValueError):
                    raise ValueError(
                        f"{where}: a {ACCEPTED_PER_POS} sample has no integer `position` label: {s.labels}"
                    ) from None
                per_pos[pos] = per_pos.get(pos, 0.0) + float(s.value)
            else:
                sums[fam.name] += float(s.value)
    missing = [n for n in COUNTERS if n not in seen]
    if len(missing) == len(COUNTERS):
        if not families:
            raise ValueError(f"{where} holds no Prometheus metrics at all: is this the /metrics page of a vLLM server?")
        if not vllm_names:
            raise ValueError(
                f"{where} is a metrics page without any vllm:* metric ({len(families)} other metrics): "
                "is this a vLLM server?"
            )
        raise ValueError(
            f"{where} is a vLLM metrics page without speculative-decoding counters ({DRAFTS}, …): start the "
            "server with speculative decoding, e.g. vllm serve TARGET --speculative-config "
            '\'{"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4}\''
        )
    if missing:
        raise ValueError(f"{where} lacks the speculative-decoding counter(s) {', '.join(missing)}")
    gamma = max(per_pos) + 1 if per_pos else 0
    return SpecCounters(
        sums[DRAFTS],
        sums[DRAFT_TOKENS],
        sums[ACCEPTED],
        tuple(per_pos.get(i, 0.0) for i in range(gamma)),
        tuple(sorted(engines, key=lambda e: (len(e), e))),
        time.monotonic(),
        None,
        url,
    )


# ------------------------------------------------------------------------------ reading a server


def metrics_url(url: str) -> str:
    """'http://HOST:8000' (or its OpenAI base '/v1') -> 'http://HOST:8000/metrics'; other paths are kept.

    >>> metrics_url("http://localhost:8000"), metrics_url("localhost:8000/v1/")
    ('http://localhost:8000/metrics', 'http://localhost:8000/metrics')
    """
    if not isinstance(url, str) or not url.strip():
        raise TypeError(f"url must be the address of a vLLM server such as 'http://HOST:8000', got {url!r}")
    u = url.strip()
    if "://" not in u:
        u = "http://" + u
    parts = urlparse(u)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"url {url!r} is not an http(s) address such as 'http://HOST:8000'")
    path = parts.path.rstrip("/")
    if path in ("", "/v1"):
        path = "/metrics"
    return urlunparse(parts._replace(path=path))


def fetch_text(url: str, timeout: float = DEFAULT_TIMEOUT_S) -> str:
    """GET `url` as text; ConnectionError when the server cannot be reached, ValueError for an HTTP error."""
    req = urllib.request.Request(url, headers={"Accept": "text/plain"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - an http(s) URL, checked above
            body = resp.read(MAX_PAGE_BYTES + 1)
            charset = resp.headers.get_content_charset() or "utf-8"
    except urllib.error.HTTPError as e:
        hint = " (vLLM serves its metrics at /metrics on the API port)" if e.code == 404 else ""
        raise ValueError(f"{url} answered HTTP {e.code} {e.reason}{hint}") from None
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", e)
        raise ConnectionError(
            f"cannot reach the vLLM server at {url}: {reason}. Is it running (vllm serve …), on this host and port?"
        ) from None
    if len(body) > MAX_PAGE_BYTES:
        raise ValueError(f"{url} sent more than {MAX_PAGE_BYTES // 2**20} MiB: not a metrics page")
    return body.decode(charset, errors="replace")


def read_vllm_metrics(url: str, timeout: float = DEFAULT_TIMEOUT_S) -> SpecCounters:
    """Read the spec-decoding counters of the vLLM server at `url` ('http://HOST:8000' or its /metrics).

    ConnectionError when the server is down or does not answer within `timeout` seconds;
    ValueError for an HTTP error (404), a page that is not metrics, or no speculative counters.
    """
    full = metrics_url(url)
    timeout = float(timeout)
    if not timeout > 0:
        raise ValueError(f"timeout must be > 0 seconds, got {timeout}")
    return parse_vllm_metrics(fetch_text(full, timeout), full)


def watch_vllm(
    url: str,
    interval_s: float,
    count: int | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    sleep: Callable[[float], object] = time.sleep,
    keep_going: Callable[[], bool] = lambda: True,
) -> Iterator[SpecCounters]:
    """Read the server every `interval_s` seconds and yield the counts of each interval (`count` of them, or forever)."""
    interval_s = float(interval_s)
    if not interval_s > 0 or not math.isfinite(interval_s):
        raise ValueError(f"interval_s must be a positive number of seconds, got {interval_s}")
    if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 1):
        raise ValueError(f"count must be a positive number of intervals or None, got {count!r}")
    prev = read_vllm_metrics(url, timeout)
    n = 0
    while (count is None or n < count) and keep_going():
        sleep(interval_s)
        if not keep_going():
            return
        cur = read_vllm_metrics(url, timeout)
        yield cur - prev
        prev, n = cur, n + 1


__all__ = [
    "ACCEPTED",
    "ACCEPTED_PER_POS",
    "COUNTERS",
    "DRAFTS",
    "DRAFT_TOKENS",
    "SpecCounters",
    "VLLM_SOURCE",
    "fetch_text",
    "implied_alpha",
    "metrics_url",
    "parse_vllm_metrics",
    "read_vllm_metrics",
    "watch_vllm",
]
