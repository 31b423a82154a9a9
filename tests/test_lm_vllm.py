"""specviz.lm.serve.vllm against a local HTTP server serving /metrics pages in vLLM's exact format.

The pages are built the way vLLM builds them: per engine, every draft runs vLLM's
`SpecDecodingStats.observe_draft` (drafts += 1, draft tokens += γ, accepted += k, position i
+= 1 for i < k), and the counters are written as prometheus_client writes them (`_total`
samples with `_created` twins, labels engine / model_name / position), next to unrelated
vLLM, process and Python metrics. A test checks the page text against prometheus_client's
own output for counters with vLLM's names and labels. The expected figures come from the
list of accepted counts k directly (mean of k + 1, mean of k > i, ...), not from the counters.
"""

from __future__ import annotations

import http.server
import json
import re
import socket
import threading
from pathlib import Path

import numpy as np
import pytest

from specviz.cli import main as cli_main
from specviz.lm.serve.vllm import metrics_url, parse_vllm_metrics, read_vllm_metrics, watch_vllm
from specviz.lm.serve.vllm_counters import SpecCounters, implied_alpha

GAMMA = 4
MODEL = "meta-llama/Llama-3.1-70B-Instruct"
CREATED = 1.7548e09


def draft_outcomes(seed: int, n: int, alpha: float) -> list[int]:
    """Accepted counts k of n drafts with i.i.d. acceptance α, capped at γ (a fixed seed)."""
    rng = np.random.default_rng(seed)
    u = rng.random((n, GAMMA)) < alpha
    return [int(np.argmin(row)) if not row.all() else GAMMA for row in u]


# two engines, three intervals each: the k of every draft, per engine and interval
CHUNKS = {
    "0": [draft_outcomes(1, 50, 0.8), draft_outcomes(2, 40, 0.6), draft_outcomes(3, 0, 0.5)],
    "1": [draft_outcomes(4, 30, 0.7), draft_outcomes(5, 60, 0.5), draft_outcomes(6, 0, 0.5)],
}


def observe(ks: list[int]) -> dict:
    """vLLM's SpecDecodingStats.observe_draft applied to every draft: the counter increments."""
    c = {"drafts": 0, "draft_tokens": 0, "accepted": 0, "per_pos": [0] * GAMMA}
    for k in ks:
        c["drafts"] += 1
        c["draft_tokens"] += GAMMA
        c["accepted"] += k
        for i in range(k):
            c["per_pos"][i] += 1
    return c


def cumulative(engine: str, upto: int) -> dict:
    return observe([k for chunk in CHUNKS[engine][: upto + 1] for k in chunk])


def fnum(v: float) -> str:
    return repr(float(v))  # prometheus_client writes floats with repr: 5.0, 1.7548e+09


def spec_lines(engines: dict) -> list[str]:
    """The four counters as prometheus_client writes them (text format 0.0.4), for {engine: counts}."""
    out = []
    docs = {
        "vllm:spec_decode_num_drafts": ("drafts", "Number of spec decoding drafts."),
        "vllm:spec_decode_num_draft_tokens": ("draft_tokens", "Number of draft tokens."),
        "vllm:spec_decode_num_accepted_tokens": ("accepted", "Number of accepted tokens."),
    }
    for name, (key, doc) in docs.items():
        out += [f"# HELP {name}_total {doc}", f"# TYPE {name}_total counter"]
        out += [f'{name}_total{{engine="{e}",model_name="{MODEL}"}} {fnum(c[key])}' for e, c in engines.items()]
        out += [f"# HELP {name}_created {doc}", f"# TYPE {name}_created gauge"]
        out += [f'{name}_created{{engine="{e}",model_name="{MODEL}"}} {fnum(CREATED)}' for e in engines]
    name, doc = "vllm:spec_decode_num_accepted_tokens_per_pos", "Accepted tokens per draft position."
    out += [f"# HELP {name}_total {doc}", f"# TYPE {name}_total counter"]
    for e, c in engines.items():
        out += [
            f'{name}_total{{engine="{e}",model_name="{MODEL}",position="{i}"}} {fnum(v)}'
            for i, v in enumerate(c["per_pos"])
        ]
    out += [f"# HELP {name}_created {doc}", f"# TYPE {name}_created gauge"]
    for e in engines:
        out += [
            f'{name}_created{{engine="{e}",model_name="{MODEL}",position="{i}"}} {fnum(CREATED)}' for i in range(GAMMA)
        ]
    return out


OTHER_METRICS = f"""# HELP python_gc_objects_collected_total Objects collected during gc
# TYPE python_gc_objects_collected_total counter
python_gc_objects_collected_total{{generation="0"}} 12345.0
# HELP process_resident_memory_bytes Resident memory size in bytes.
# TYPE process_resident_memory_bytes gauge
process_resident_memory_bytes 4.2e+09
# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{{engine="0",model_name="{MODEL}"}} 3.0
vllm:num_requests_running{{engine="1",model_name="{MODEL}"}} 2.0
# HELP vllm:prompt_tokens_total Number of prefill tokens processed.
# TYPE vllm:prompt_tokens_total counter
vllm:prompt_tokens_total{{engine="0",model_name="{MODEL}"}} 9000.0
vllm:prompt_tokens_total{{engine="1",model_name="{MODEL}"}} 8000.0
# HELP vllm:prompt_tokens_created Number of prefill tokens processed.
# TYPE vllm:prompt_tokens_created gauge
vllm:prompt_tokens_created{{engine="0",model_name="{MODEL}"}} {fnum(CREATED)}
vllm:prompt_tokens_created{{engine="1",model_name="{MODEL}"}} {fnum(CREATED)}
# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{{engine="0",le="0.1",model_name="{MODEL}"}} 4.0
vllm:time_to_first_token_seconds_bucket{{engine="0",le="+Inf",model_name="{MODEL}"}} 9.0
vllm:time_to_first_token_seconds_count{{engine="0",model_name="{MODEL}"}} 9.0
vllm:time_to_first_token_seconds_sum{{engine="0",model_name="{MODEL}"}} 2.5
"""


def page(snapshot: int) -> str:
    engines = {e: cumulative(e, snapshot) for e in CHUNKS}
    return OTHER_METRICS + "\n".join(spec_lines(engines)) + "\n"


PAGES = [page(i) for i in range(3)]
NO_SPEC = OTHER_METRICS
NOT_VLLM = OTHER_METRICS.split("# HELP vllm:")[0]
HTML = "<!doctype html><html><body><h1>Welcome</h1></body></html>"


def expected(ks: list[int]) -> dict:
    """vLLM's three figures straight from the accepted counts (no counters involved)."""
    ks = np.array(ks)
    return {
        "acceptance_rate": ks.sum() / (GAMMA * len(ks)),
        "mean_acceptance_length": float(np.mean(ks + 1)),
        "per_position_acceptance": [float(np.mean(ks > i)) for i in range(GAMMA)],
        "hist": np.bincount(ks, minlength=GAMMA + 1).tolist(),
    }


def interval_ks(i: int) -> list[int]:
    return [k for e in CHUNKS for k in CHUNKS[e][i]]


class Server:
    """A local HTTP server: /metrics serves PAGES in turn (one per GET, then the last one again)."""

    def __init__(self):
        self.hits = 0
        self.routes = {"/nospec/metrics": NO_SPEC, "/notvllm/metrics": NOT_VLLM, "/html/metrics": HTML}
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                if self.path == "/metrics":
                    body = PAGES[min(outer.hits, len(PAGES) - 1)]
                    outer.hits += 1
                elif self.path in outer.routes:
                    body = outer.routes[self.path]
                else:
                    self.send_error(404, "Not Found")
                    return
                data = body.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def server():
    s = Server()
    yield s
    s.close()


@pytest.fixture
def fresh(server):
    server.hits = 0
    return server


@pytest.fixture
def down_url():
    """An address where nothing listens (a port bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


# ------------------------------------------------------------------------------ the page format


def test_pages_are_written_as_prometheus_client_writes_vllms_counters():
    prometheus_client = pytest.importorskip("prometheus_client")
    reg = prometheus_client.CollectorRegistry()
    labels = ["model_name", "engine"]  # vLLM's PrometheusStatLogger labels
    counters = {
        "drafts": prometheus_client.Counter(
            "vllm:spec_decode_num_drafts", "Number of spec decoding drafts.", labels, registry=reg
        ),
        "draft_tokens": prometheus_client.Counter(
            "vllm:spec_decode_num_draft_tokens", "Number of draft tokens.", labels, registry=reg
        ),
        "accepted": prometheus_client.Counter(
            "vllm:spec_decode_num_accepted_tokens", "Number of accepted tokens.", labels, registry=reg
        ),
    }
    per_pos = prometheus_client.Counter(
        "vllm:spec_decode_num_accepted_tokens_per_pos",
        "Accepted tokens per draft position.",
        labels + ["position"],
        registry=reg,
    )
    engines = {e: cumulative(e, 1) for e in CHUNKS}
    for e, c in engines.items():
        for key, counter in counters.items():
            counter.labels(MODEL, e).inc(c[key])
        for i, v in enumerate(c["per_pos"]):
            per_pos.labels(MODEL, e, str(i)).inc(v)
    real = prometheus_client.generate_latest(reg).decode().splitlines()
    ours = spec_lines(engines)
    created = [i for i, line in enumerate(real) if "_created{" in line]
    assert len(real) == len(ours) and created
    for i, (a, b) in enumerate(zip(real, ours)):
        if i in created:  # the timestamps differ; everything before the value must not
            a, b = a.rsplit(" ", 1)[0], b.rsplit(" ", 1)[0]
        assert a == b


# ------------------------------------------------------------------------------ the figures


def test_one_reading_sums_the_engines_and_matches_the_draft_outcomes(fresh):
    c = read_vllm_metrics(fresh.url)
    want = expected(interval_ks(0))
    assert c.engines == ("0", "1") and c.gamma == GAMMA and c.url == fresh.url + "/metrics"
    assert c.acceptance_rate == pytest.approx(want["acceptance_rate"], abs=1e-12)
    assert c.mean_acceptance_length == pytest.approx(want["mean_acceptance_length"], abs=1e-12)
    assert c.per_position_acceptance == pytest.approx(want["per_position_acceptance"], abs=1e-12)
    assert c.accepted_hist.tolist() == want["hist"]
    st = c.stats()  # the same numbers as specviz's own statistics of a run
    assert st.acceptance_rate == c.acceptance_rate and st.mean_acceptance_length == c.mean_acceptance_length
    assert st.accepted_hist.tolist() == want["hist"] and st.steps == 80
    ks = np.array(interval_ks(0))
    cond = [np.mean(ks[ks >= i] > i) for i in range(GAMMA)]  # accepted at i / reached i
    assert st.per_position_conditional == pytest.approx(cond, abs=1e-12)


def test_created_samples_and_other_metrics_are_ignored():
    with_created = parse_vllm_metrics(PAGES[1])
    only_totals = "\n".join(line for line in PAGES[1].splitlines() if "_created" not in line) + "\n"
    assert parse_vllm_metrics(only_totals).drafts == with_created.drafts == 50 + 40 + 30 + 60


def test_intervals_are_differences_of_the_counters(fresh):
    first = read_vllm_metrics(fresh.url)
    second = read_vllm_metrics(fresh.url)
    d = second - first
    want = expected(interval_ks(1))
    assert d.seconds is not None and d.seconds >= 0 and not d.restarted
    assert d.drafts == 100 and d.draft_tokens == 400
    assert d.acceptance_rate == pytest.approx(want["acceptance_rate"], abs=1e-12)
    assert d.mean_acceptance_length == pytest.approx(want["mean_acceptance_length"], abs=1e-12)
    assert d.per_position_acceptance == pytest.approx(want["per_position_acceptance"], abs=1e-12)
    assert d.accepted_hist.tolist() == want["hist"]
    idle = read_vllm_metrics(fresh.url) - second  # no drafts in the last interval
    assert idle.drafts == 0 and np.isnan(idle.acceptance_rate) and "idle" in idle.summary()
    assert idle.to_dict()["acceptance_rate"] is None


def test_a_restarted_server_counts_from_zero():
    before, after = parse_vllm_metrics(PAGES[2]), parse_vllm_metrics(PAGES[0])
    d = after - before
    assert d.restarted and d.drafts == after.drafts and "restarted" in d.summary()


def test_watch_yields_one_interval_per_poll(fresh):
    got = list(watch_vllm(fresh.url, 0.01, count=2))
    assert len(got) == 2 and fresh.hits == 3
    for i, d in enumerate(got, start=1):
        want = expected(interval_ks(i)) if interval_ks(i) else None
        if want:
            assert d.mean_acceptance_length == pytest.approx(want["mean_acceptance_length"], abs=1e-12)
        else:
            assert d.drafts == 0


def test_implied_alpha_inverts_the_expected_tokens_formula():
    from specviz.exact.gamma import expected_tokens

    for a in (0.0, 0.3, 0.77, 0.999):
        assert implied_alpha(expected_tokens(a, 4), 4) == pytest.approx(a, abs=1e-9)
    assert implied_alpha(5.0, 4) == 1.0 and np.isnan(implied_alpha(float("nan"), 4))


def test_metrics_url_forms():
    assert metrics_url("localhost:8000") == "http://localhost:8000/metrics"
    assert metrics_url("https://h:8000/v1") == "https://h:8000/metrics"
    assert metrics_url("http://h:8000/metrics/") == "http://h:8000/metrics"
    assert metrics_url("http://h/proxy/vllm/metrics") == "http://h/proxy/vllm/metrics"
    with pytest.raises(ValueError, match="not an http"):
        metrics_url("ftp://h:8000")
    with pytest.raises(TypeError, match="url must be"):
        metrics_url("")


# ------------------------------------------------------------------------------ errors


def test_a_server_that_is_down_names_the_url(down_url):
    with pytest.raises(ConnectionError, match=r"cannot reach the vLLM server at http://127\.0\.0\.1:\d+/metrics"):
        read_vllm_metrics(down_url, timeout=2)


def test_a_404_names_the_url_and_the_status(server):
    with pytest.raises(ValueError, match=r"/elsewhere answered HTTP 404"):
        read_vllm_metrics(server.url + "/elsewhere")


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/nospec/metrics", "vLLM metrics page without speculative-decoding counters"),
        ("/notvllm/metrics", "without any vllm:\\* metric"),
        ("/html/metrics", "is not a Prometheus metrics page"),
    ],
)
def test_pages_without_spec_counters_get_a_clear_message(server, path, message):
    with pytest.raises(ValueError, match=message) as e:
        read_vllm_metrics(server.url + path)
    assert server.url + path in str(e.value)


def test_malformed_text_and_partial_counters():
    with pytest.raises(ValueError, match="not a Prometheus metrics page"):
        parse_vllm_metrics('vllm:spec_decode_num_drafts_total{engine="0" 1.0\n')
    partial = "\n".join(line for line in PAGES[0].splitlines() if "per_pos" not in line) + "\n"
    with pytest.raises(ValueError, match="lacks the speculative-decoding counter"):
        parse_vllm_metrics(partial)
    with pytest.raises(TypeError, match="text must be"):
        parse_vllm_metrics(None)


# ------------------------------------------------------------------------------ the command line


def test_cli_json_prints_one_object(fresh, capsys):
    assert cli_main(["vllm-stats", fresh.url, "--json"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1
    d = json.loads(out[0])
    want = expected(interval_ks(0))
    assert d["acceptance_rate"] == pytest.approx(want["acceptance_rate"], abs=1e-12)
    assert d["mean_acceptance_length"] == pytest.approx(want["mean_acceptance_length"], abs=1e-12)
    assert d["per_position_acceptance"] == pytest.approx(want["per_position_acceptance"], abs=1e-12)
    assert d["engines"] == ["0", "1"] and d["interval_seconds"] is None


def test_cli_text_and_watch(fresh, capsys):
    assert cli_main(["vllm-stats", fresh.url]) == 0
    text = capsys.readouterr().out
    assert "totals since the server started" in text and "2 engines" in text
    fresh.hits = 0
    assert cli_main(["vllm-stats", fresh.url, "--watch", "0.01", "--count", "2", "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.strip().splitlines()]
    assert len(lines) == 2 and all(d["interval_seconds"] is not None for d in lines)
    want = expected(interval_ks(1))
    assert lines[0]["per_position_acceptance"] == pytest.approx(want["per_position_acceptance"], abs=1e-12)
    assert lines[1]["drafts"] == 0 and lines[1]["acceptance_rate"] is None
    fresh.hits = 0
    assert cli_main(["vllm-stats", fresh.url, "--watch", "0.01", "--count", "1"]) == 0
    assert "mean acceptance length" in capsys.readouterr().out


def test_cli_errors_are_one_line(server, down_url, capsys):
    assert cli_main(["vllm-stats", down_url, "--timeout", "2"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("specviz vllm-stats: error: cannot reach") and err.count("\n") == 1
    assert cli_main(["vllm-stats", server.url + "/nospec/metrics"]) == 1
    assert "without speculative-decoding counters" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        cli_main(["vllm-stats", server.url, "--count", "2"])
    assert e.value.code == 2 and "--count needs --watch" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli_main(["vllm-stats", server.url, "--watch", "-1"])


# ------------------------------------------------------------------------------ the live view


def test_live_view_draws_the_interval_in_the_acceptance_plots(fresh):
    from specviz.figures.style import trace_by_meta
    from specviz.widgets.live import live_app

    app = live_app(source=fresh.url, interval_s=0.01)
    first = app.read()
    assert first is not None and first.seconds is None and not app.last_error
    second = app.read()
    want = expected(interval_ks(1))
    assert second.seconds is not None and app.shown is second
    bars = trace_by_meta(app.figure, "unconditional").y
    assert list(bars) == pytest.approx(want["per_position_acceptance"], abs=1e-12)
    assert list(trace_by_meta(app.figure, "accepted_measured").y) == want["hist"]
    assert "acceptance rate" in app.stats_html.value and f"{want['acceptance_rate']:.3f}" in app.stats_html.value
    fresh.hits = 0
    app.start(blocking=True, count=2)
    assert len(app.history) == 2 and not app.busy and not app.last_error


def test_live_view_shows_errors_in_the_ui(server, down_url):
    from specviz.widgets.live.vllm import vllm_live_app

    app = vllm_live_app(server.url + "/nospec/metrics", timeout=2)
    assert app.read() is None and "without speculative-decoding counters" in app.message_text
    app.url.value = server.url + "/missing"
    assert app.read() is None and "HTTP 404" in app.message_text
    app.url.value = down_url
    app.start(blocking=True, count=1)
    assert "cannot reach the vLLM server" in app.message_text and "ConnectionError" not in app.message_text
    app.url.value = "not a url://"
    assert app.read() is None and app.last_error


def test_counters_repr_is_a_dataclass():
    c = SpecCounters(10, 40, 20, (8.0, 6.0, 4.0, 2.0))
    assert c.mean_acceptance_length == 3.0 and c.acceptance_rate == 0.5 and c.gamma == 4
    assert c.accepted_hist.tolist() == [2, 2, 2, 2, 2]


# ------------------------------------------------------------------------------ vLLM's own definitions
#
# Independent of specviz's parser and statistics: the fixture is a page written by prometheus_client
# with vLLM's metric names, HELP texts and labels, and the counting and the three figures below are
# transcribed from vLLM's source (github.com/vllm-project/vllm):
#   vllm/v1/spec_decode/metrics.py at ee4ceaae5953d367d8edd2132fd86d6c42506e1e:
#     SpecDecodingStats.observe_draft, SpecDecodingLogging.log, the PromQL in SpecDecodingProm's docstring;
#   vllm/v1/core/sched/scheduler.py at 00024d314514900f361ad072af6931e403b7f589 (update_from_output):
#     a request with scheduled draft tokens calls observe_draft(num_draft_tokens=len(scheduled_spec_token_ids),
#     num_accepted_tokens=len(generated_token_ids) - 1).
# A change to specviz's formulas (e.g. accepted / (drafts × γ) for the acceptance rate) fails these tests.

FIXTURE = Path(__file__).parent / "fixtures" / "vllm_metrics_spec_decode.txt"
FIXTURE_K = 4  # the fixture's num_speculative_tokens


def fixture_drafts() -> dict:
    """{engine: [(num_draft_tokens, num_accepted_tokens), ...]}: the drafts listed in the fixture's header."""
    out = {}
    for line in FIXTURE.read_text().splitlines():
        if line.startswith("# drafts engine "):
            engine, pairs = line.removeprefix("# drafts engine ").split(": ")
            out[engine] = [tuple(int(x) for x in p.split(":")) for p in pairs.split()]
    return out


def vllm_observe(drafts, num_spec_tokens: int) -> dict:
    """SpecDecodingStats.observe_draft (metrics.py) applied to each (num_draft_tokens, num_accepted_tokens)."""
    s = {"num_drafts": 0, "num_draft_tokens": 0, "num_accepted_tokens": 0, "per_pos": [0] * num_spec_tokens}
    for num_draft_tokens, num_accepted_tokens in drafts:
        s["num_drafts"] += 1
        s["num_draft_tokens"] += num_draft_tokens
        s["num_accepted_tokens"] += num_accepted_tokens
        assert num_accepted_tokens <= num_spec_tokens
        for i in range(num_accepted_tokens):
            s["per_pos"][i] += 1
    return s


def vllm_figures(s: dict) -> dict:
    """SpecDecodingLogging.log's three figures (its acceptance rate is printed ×100; here as a fraction)."""
    return {
        "acceptance_rate": s["num_accepted_tokens"] / s["num_draft_tokens"],
        "mean_acceptance_length": 1 + s["num_accepted_tokens"] / s["num_drafts"],
        "per_position": [a / s["num_drafts"] for a in s["per_pos"]],
    }


def plain_samples(text: str) -> dict:
    """{(metric, engine, position): value} of the `_total` samples, by a regex (not prometheus_client's parser)."""
    out = {}
    pattern = re.compile(
        r'^(vllm:spec_decode_num_\w+)_total\{engine="(\d+)",model_name="[^"]*"(?:,position="(\d+)")?\} (\S+)$'
    )
    for line in text.splitlines():
        m = pattern.match(line)
        if m:
            out[(m[1].removeprefix("vllm:spec_decode_"), m[2], None if m[3] is None else int(m[3]))] = float(m[4])
    return out


def test_the_fixture_is_the_page_prometheus_client_writes_for_vllms_counters():
    prometheus_client = pytest.importorskip("prometheus_client")
    reg = prometheus_client.CollectorRegistry()
    labels = ["model_name", "engine"]  # loggers.py: labelnames
    running = prometheus_client.Gauge(
        "vllm:num_requests_running", "Number of requests in model execution batches.", labels, registry=reg
    )
    docs = {
        "drafts": "Number of spec decoding drafts.",
        "draft_tokens": "Number of draft tokens.",
        "accepted_tokens": "Number of accepted tokens.",
    }
    counters = {
        n: prometheus_client.Counter(f"vllm:spec_decode_num_{n}", d, labels, registry=reg) for n, d in docs.items()
    }
    per_pos = prometheus_client.Counter(
        "vllm:spec_decode_num_accepted_tokens_per_pos",
        "Accepted tokens per draft position.",
        labels + ["position"],
        registry=reg,
    )
    prompt = prometheus_client.Counter(
        "vllm:prompt_tokens", "Number of prefill tokens processed.", labels, registry=reg
    )
    model = re.search(r'model_name="([^"]*)"', FIXTURE.read_text())[1]
    for engine, drafts in fixture_drafts().items():
        s = vllm_observe(drafts, FIXTURE_K)  # SpecDecodingProm.observe: each counter .inc() by the stats
        running.labels(model, engine).set(2)
        prompt.labels(model, engine).inc(1234)
        for n in docs:
            counters[n].labels(model, engine).inc(s[f"num_{n}"])
        for i, v in enumerate(s["per_pos"]):
            per_pos.labels(model, engine, str(i)).inc(v)
    real = prometheus_client.generate_latest(reg).decode().splitlines()
    ours = [
        line for line in FIXTURE.read_text().splitlines() if line.startswith(("# HELP", "# TYPE")) or line[:1] != "#"
    ]
    assert len(real) == len(ours)
    for a, b in zip(real, ours):
        if "_created{" in a:  # creation timestamps differ; the sample's name and labels must not
            a, b = a.rsplit(" ", 1)[0], b.rsplit(" ", 1)[0]
        assert a == b


def test_the_fixture_counts_are_vllms_observe_draft_of_its_drafts():
    samples = plain_samples(FIXTURE.read_text())
    drafts = fixture_drafts()
    assert sorted(drafts) == ["0", "1"] and any(n < FIXTURE_K for d in drafts.values() for n, _ in d)
    for engine, ds in drafts.items():
        s = vllm_observe(ds, FIXTURE_K)
        for n in ("num_drafts", "num_draft_tokens", "num_accepted_tokens"):
            assert samples[(n, engine, None)] == s[n]
        for i, v in enumerate(s["per_pos"]):
            assert samples[("num_accepted_tokens_per_pos", engine, i)] == v


def test_specviz_reads_the_fixture_with_vllms_formulas():
    text = FIXTURE.read_text()
    samples = plain_samples(text)
    total = {
        n: sum(v for (m, _, _), v in samples.items() if m == n)
        for n in ("num_drafts", "num_draft_tokens", "num_accepted_tokens")
    }
    total["per_pos"] = [
        sum(v for (m, _, p), v in samples.items() if m == "num_accepted_tokens_per_pos" and p == i)
        for i in range(FIXTURE_K)
    ]
    want = vllm_figures(total)  # the PromQL of SpecDecodingProm's docstring, summed over engines
    c = parse_vllm_metrics(text)
    assert c.engines == ("0", "1") and c.gamma == FIXTURE_K
    assert c.acceptance_rate == want["acceptance_rate"]
    assert c.mean_acceptance_length == want["mean_acceptance_length"]
    assert c.per_position_acceptance == want["per_position"]
    # some drafts carry fewer than k tokens, so accepted / (drafts × k) would differ from vLLM's rate
    assert total["num_draft_tokens"] < FIXTURE_K * total["num_drafts"]
    assert c.acceptance_rate != total["num_accepted_tokens"] / (FIXTURE_K * total["num_drafts"])


@pytest.mark.parametrize("gamma", [4, "auto"])
def test_a_run_counted_as_vllms_scheduler_counts_gives_specvizs_figures(gamma):
    from specviz.lm import NGramModel, Pair, spec_stats, speculative_generate

    target = NGramModel.random(6, seed=3)
    draft = NGramModel(0.8 * target.table + 0.2 * NGramModel.random(6, seed=4).table)
    run = speculative_generate(Pair(target, draft), [0], max_new_tokens=302, gamma=gamma, seed=0)
    # scheduler.py: a request whose step carried draft tokens calls observe_draft(len(drafts), len(generated) - 1)
    drafts = [(len(step.drafted), len(step.emitted) - 1) for step in run.steps if step.drafted]
    k = max(n for n, _ in drafts)
    assert len({n for n, _ in drafts}) > 1  # steps of different lengths (the last ones, or auto's choices)
    want = vllm_figures(vllm_observe(drafts, k))
    st = spec_stats(run)
    assert st.acceptance_rate == pytest.approx(want["acceptance_rate"], abs=1e-15)
    assert st.mean_acceptance_length == pytest.approx(want["mean_acceptance_length"], abs=1e-15)
    assert list(st.per_position) == pytest.approx(want["per_position"], abs=1e-15)
