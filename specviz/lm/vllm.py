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
another host only when asked. Anything else is a ValueError or ConnectionError naming it.

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

import codecs
import contextlib
import http.client
import math
import numbers
import re
import socket
import string
import threading
import time
import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import quote, urljoin, urlsplit, urlunsplit

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
MAX_PAGE_BYTES = 8 * 2**20  # a metrics page is kilobytes; refuse to read (and parse) more than this
MAX_POSITIONS = 1024  # draft positions: a `position` label beyond this is refused before anything is allocated
MAX_COUNT = 2.0**53  # the largest whole number a float counter holds exactly
MAX_URL_CHARS = 2000
MAX_REDIRECTS = 5
DEFAULT_TIMEOUT_S = 5.0
MAX_TIMEOUT_S = 3600.0
MAX_INTERVAL_S = 86400.0
REQUEST_HEADERS = {"Accept": "text/plain", "Accept-Encoding": "identity", "User-Agent": "specviz"}
_DIGITS = re.compile(r"[0-9]+")
_BARE_HOST = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[^/:@\[\]?#]+)(:[0-9]*)?([/?#]|$)")  # HOST[:PORT][/...], no scheme


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
    model: str = ""  # the `model_name` label read ("" when the page has none)

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
        if earlier.model != self.model:
            raise ValueError(f"cannot subtract a reading of model {earlier.model!r} from one of {self.model!r}")
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
            self.model,
        )

    def to_dict(self) -> dict:
        """JSON-ready figures, named as specviz's `SpecStats.to_dict` names them (NaN as None)."""
        sec = self.seconds
        return {
            "url": self.url,
            "model": self.model or None,
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


def _clip(text, n: int = 60) -> str:
    """`text` as a short one-line repr, for quoting what a server sent inside an error message."""
    text = str(text)
    return repr(text[:n] + "…" if len(text) > n else text)


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
        raise ValueError(f"{where}: a {ACCEPTED_PER_POS} sample has no whole-number `position` label: {_clip(labels)}")
    if len(label) > len(str(MAX_POSITIONS)) or int(label) >= MAX_POSITIONS:
        raise ValueError(
            f"{where}: a {ACCEPTED_PER_POS} sample has position {_clip(label, 20)}; "
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
    listed = ", ".join("(no model_name)" if m is None else _clip(m) for m in names[:10])
    listed += f" and {len(names) - 10} more" if len(names) > 10 else ""
    if model is None:
        if len(names) > 1:
            raise ValueError(
                f"{where} counts {len(names)} models ({listed}): choose one with --model NAME (model=NAME); "
                "their counters are not summed"
            )
        model = names[0]
    elif model not in names:
        raise ValueError(f"{where} has no speculative-decoding counters for model {_clip(model)}; it has {listed}")
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
            raise ValueError(f"{where} lists the {name} sample of engine {_clip(engine)}{at} twice")
        seen.add(key)
        what = f"{name}_total{{engine={_clip(engine, 20)}" + (f", position={pos}}}" if pos is not None else "}")
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
        raise ValueError(f"{where}: engine {_clip(engine)} has no {ACCEPTED_PER_POS} samples")
    if max(per_pos) != k - 1:
        missing = [i for i in range(max(per_pos)) if i not in per_pos]
        shown = ", ".join(map(str, missing[:10])) + (", …" if len(missing) > 10 else "")
        raise ValueError(
            f"{where}: engine {_clip(engine)} reports {ACCEPTED_PER_POS} at positions up to {max(per_pos)} "
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
        raise ValueError(f"{where}: engine {_clip(engine)} lacks the counter(s) {', '.join(lacking)}")
    per_pos = _positions(counts[ACCEPTED_PER_POS], engine, where)
    row = (counts[DRAFTS], counts[DRAFT_TOKENS], counts[ACCEPTED], per_pos)
    _check_consistent(*row, f"{where}, engine {_clip(engine)}")
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
        raise ValueError(f"{where} is not a Prometheus metrics page (it starts with {_clip(text.lstrip(), 30)})")
    try:
        families = list(text_string_to_metric_families(text))
    except Exception as e:  # the parser raises ValueError, IndexError or KeyError on a malformed line
        raise ValueError(f"{where} is not a Prometheus metrics page: {type(e).__name__}: {_clip(e, 120)}") from None
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
    bad = f"url {_clip(url)} is not an http(s) address such as 'http://HOST:8000'"
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
        raise ValueError(f"{bad}: its host {_clip(host)} is a bare number (did you mean 'localhost:{host}'?)")
    try:
        host.encode("idna")
    except UnicodeError:
        raise ValueError(f"{bad}: {_clip(host)} is not a valid host name") from None


def check_timeout(timeout, name: str = "timeout", most: float = MAX_TIMEOUT_S) -> float:
    """`timeout` as float seconds: a finite number in (0, `most`] (TypeError or ValueError naming `name`)."""
    if isinstance(timeout, bool) or not isinstance(timeout, numbers.Real):
        raise TypeError(f"{name} must be a number of seconds, got {timeout!r}")
    try:
        seconds = float(timeout)
    except OverflowError:
        seconds = math.inf
    if not (math.isfinite(seconds) and 0 < seconds <= most):
        raise ValueError(f"{name} must be a finite number of seconds in (0, {most:g}], got {_clip(timeout, 30)}")
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


def _network_error(e: Exception, url: str, deadline: _Deadline, connected: bool) -> Exception:
    """The error to raise for an exception of the connection to `url` (one line, naming the cause)."""
    if deadline.passed or isinstance(e, TimeoutError):
        return ConnectionError(
            f"the vLLM server at {url} did not send its whole page within {deadline.seconds:g} s "
            "(the timeout covers the whole reading)"
        )
    if isinstance(e, http.client.IncompleteRead):
        return ValueError(f"{url} closed the connection before its page was complete ({len(e.partial)} bytes came)")
    if isinstance(e, http.client.HTTPException) and not isinstance(e, OSError):
        return ValueError(f"{url} did not answer in HTTP ({type(e).__name__}: {_clip(e)})")
    if isinstance(e, UnicodeError):
        return ValueError(f"{url} cannot be requested: {_clip(e, 120)}")
    reason = getattr(e, "strerror", None) or str(e) or type(e).__name__
    if connected:
        return ConnectionError(f"the connection to the vLLM server at {url} failed while reading: {reason}")
    return ConnectionError(
        f"cannot reach the vLLM server at {url}: {reason}. Is it running (vllm serve …), on this host and port?"
    )


def _read_body(resp, url: str) -> bytes:
    """The response body, refused beyond MAX_PAGE_BYTES (by its Content-Length, or as it comes)."""
    limit = f"{url} sent more than {MAX_PAGE_BYTES // 2**20} MiB: not a metrics page"
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


def _get(url: str, deadline: _Deadline) -> tuple[int, str, object, bytes]:
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
            body = _read_body(resp, url) if resp.status == 200 else b""
            deadline.left()  # a read the timer cut short ends like the end of the page
            return resp.status, resp.reason, resp.headers, body
        finally:
            timer.cancel()
            conn.close()
    except ValueError as e:
        if isinstance(e, UnicodeError):
            raise _network_error(e, url, deadline, connected) from None
        raise
    except (OSError, http.client.HTTPException) as e:
        raise _network_error(e, url, deadline, connected) from None


def _redirect(url: str, location: str | None, allow_redirects: bool) -> str:
    """Where a 3xx answer of `url` points, if it may be followed (ValueError otherwise)."""
    if not location or not location.strip():
        raise ValueError(f"{url} answered with a redirect but no Location")
    try:
        target = metrics_url(urljoin(url, location.strip()))
    except (TypeError, ValueError):
        raise ValueError(f"{url} redirects to {_clip(location)}, which is not an http(s) address") from None
    a, b = urlsplit(url), urlsplit(target)
    other_host = a.hostname.lower() != b.hostname.lower()
    downgrade = a.scheme == "https" and b.scheme == "http"
    if (other_host or downgrade) and not allow_redirects:
        what = "another host" if other_host else "plain http"
        raise ValueError(
            f"{url} redirects to {what} ({_clip(target, 80)}): not followed unless asked "
            "(--follow-redirects, allow_redirects=True)"
        )
    return target


def _http_error(url: str, status: int, reason: str) -> ValueError:
    """The error for a non-200 answer: the status, and where vLLM serves its metrics for a 404."""
    hint = " (vLLM serves its metrics at /metrics on the API port)" if status == 404 else ""
    return ValueError(f"{url} answered HTTP {status} {_clip(reason, 40)[1:-1]}{hint}")


def _decode(body: bytes, headers, url: str) -> str:
    """The body as text: gzip/deflate undone (capped), its charset known and every byte valid in it."""
    body = _inflate(body, (headers.get("Content-Encoding") or "").strip().lower(), url)
    if headers.get_content_type() in ("text/html", "application/xhtml+xml"):
        raise ValueError(f"{url} is not a Prometheus metrics page (it is an HTML page, Content-Type text/html)")
    charset = headers.get_content_charset() or "utf-8"
    try:
        known = codecs.lookup(charset)._is_text_encoding
    except (LookupError, ValueError, TypeError):
        known = False
    if not known:
        raise ValueError(f"{url} declares the charset {_clip(charset, 30)}, which is no text encoding Python knows")
    try:
        text = body.decode(charset)
    except UnicodeDecodeError as e:
        raise ValueError(
            f"{url} is not valid {charset} text: byte 0x{body[e.start]:02x} at offset {e.start} "
            "(a metrics page is UTF-8 text)"
        ) from None
    return text.removeprefix("\ufeff")


def _inflate(body: bytes, encoding: str, url: str) -> bytes:
    """`body` decompressed for a gzip or deflate Content-Encoding, refused beyond MAX_PAGE_BYTES."""
    if encoding in ("", "identity"):
        return body
    if encoding not in ("gzip", "x-gzip", "deflate"):
        raise ValueError(f"{url} sent its page with Content-Encoding {_clip(encoding, 30)}, which specviz cannot read")
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


def _fetch(url: str, timeout: float, allow_redirects: bool = False) -> tuple[str, str]:
    """(the address finally read, its text): GET `url`, following permitted redirects, all within `timeout`."""
    deadline = _Deadline(check_timeout(timeout))
    for _ in range(MAX_REDIRECTS + 1):
        status, reason, headers, body = _get(url, deadline)
        if status not in (301, 302, 303, 307, 308):
            break
        url = _redirect(url, headers.get("Location"), allow_redirects)
    else:
        raise ValueError(f"{url} redirects more than {MAX_REDIRECTS} times")
    if status != 200:
        raise _http_error(url, status, reason)
    return url, _decode(body, headers, url)


def fetch_text(url: str, timeout: float = DEFAULT_TIMEOUT_S, allow_redirects: bool = False) -> str:
    """GET `url` (as `metrics_url` completes it) as text, the whole page within `timeout` seconds.

    ConnectionError when the server cannot be reached or does not finish in time; ValueError for an
    HTTP error, a redirect to another host (unless `allow_redirects`), a page over MAX_PAGE_BYTES,
    an unknown charset or bytes that are not text in it.
    """
    return _fetch(metrics_url(url), timeout, allow_redirects)[1]


def read_vllm_metrics(
    url: str, timeout: float = DEFAULT_TIMEOUT_S, *, model: str | None = None, allow_redirects: bool = False
) -> SpecCounters:
    """Read the spec-decoding counters of the vLLM server at `url` ('http://HOST:8000' or its /metrics).

    ConnectionError when the server is down or does not send its page within `timeout` seconds
    (the whole page, not each read); ValueError for an HTTP error (404), a page that is not metrics,
    no speculative counters, counters no server can show, several models and no `model` (the
    message lists them), or a redirect to another host unless `allow_redirects`.
    """
    full = metrics_url(url)
    seconds = check_timeout(timeout)
    final, text = _fetch(full, seconds, allow_redirects)
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
    "SpecCounters",
    "VLLM_SOURCE",
    "fetch_text",
    "implied_alpha",
    "metrics_url",
    "parse_vllm_metrics",
    "read_vllm_metrics",
    "watch_vllm",
]
