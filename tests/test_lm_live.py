"""The live real-model view (specviz.widgets.live) and its figure builders (specviz.figures).

Driven without a browser, on a toy n-gram pair (exact probabilities, fast) and on tiny random
Hugging Face checkpoints (a byte-level tokenizer: partial UTF-8 and HTML-looking text).
"""

from __future__ import annotations

import html
import math
import os
import re
import sys
import time
from pathlib import Path

import ipywidgets
import numpy as np
import pytest
import torch

from specviz import figures as LF
from specviz.figures.live_panels import LIVE_PANELS
from specviz.figures.position_money import distinct_labels, token_label, top_union, with_other
from specviz.figures.run_data import host_array
from specviz.figures.style import trace_by_meta
from specviz.foundation.palette import PALETTE
from specviz.lm import BUNDLED_DIR, NGramModel, Pair, load_pair, speculative_generate
from specviz.lm.stats import fates as FT
from specviz.lm.stats.stats import spec_stats
from specviz.widgets.live import app as L
from specviz.widgets.live.closeup import token_closeup

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lm_fixtures import tiny_checkpoint  # noqa: E402

SPAN = re.compile(r"<span class='specviz-tok specviz-tok-(\w+)' data-pos='(\d+)'")


def _pair(V=8, seed=0, max_positions=None, cls=NGramModel):
    """A toy pair whose draft is close to the target, so all three fates show up."""
    t = NGramModel.random(V, seed=seed, concentration=0.5).table
    d = 0.7 * t + 0.3 * NGramModel.random(V, seed=seed + 1, concentration=0.5).table
    return Pair(
        cls(t, name="ngram-target", max_positions=max_positions),
        cls(d, name="ngram-draft", max_positions=max_positions),
    )


class SlowNGram(NGramModel):
    """An n-gram model that takes ~2 ms per logits row (to stop a run in flight)."""

    def logits_for(self, tokens):
        time.sleep(0.002)
        return super().logits_for(tokens)


@pytest.fixture(scope="module")
def ngram_pair():
    return _pair()


@pytest.fixture(scope="module")
def hf_folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("live-ckpt")
    target = tiny_checkpoint(root / "target", layers=2, width=32, seed=0)
    draft = tiny_checkpoint(root / "draft", layers=1, width=32, seed=1)
    other = tiny_checkpoint(root / "other-tokenizer", layers=1, width=32, seed=2, tokenizer_shift=1)
    return target, draft, other


@pytest.fixture(scope="module")
def hf_pair(hf_folders):
    target, draft, _ = hf_folders
    return load_pair(str(target), str(draft), device="cpu")


def _walk(w):
    yield w
    for c in getattr(w, "children", ()):
        yield from _walk(c)


def _spans(app):
    return [(fate, int(pos)) for fate, pos in SPAN.findall(app.text_html.value)]


def _y(fw, meta):
    return list(trace_by_meta(fw, meta).y)


def _same(a, b, tol=1e-12):
    a, b = list(a), list(b)
    assert len(a) == len(b), (a, b)
    for x, y in zip(a, b):
        if x is None or (isinstance(x, float) and math.isnan(x)):
            assert y is None or math.isnan(y), (a, b)
        else:
            assert abs(float(x) - float(y)) <= tol, (a, b)


# ----------------------------------------------------------------------------- generation and statistics


def test_generate_streams_coloured_tokens_and_plots_equal_spec_stats(ngram_pair):
    from specviz.widgets.live.sweep import MAX_ROUNDS

    app = L.live_app(ngram_pair, prompt="0 1", gamma=3, max_new_tokens=120, seed=3)
    result = app.generate(blocking=True)
    assert result is not None, app.message_text
    assert app.message_text == ""
    spans = _spans(app)
    assert len(spans) == len(result.new_ids) == 120
    assert [f for f, _ in spans] == result.fates() == app.token_fates
    assert [p for _, p in spans] == list(range(120))
    assert {"accepted", "resampled", "bonus"} <= set(result.fates())
    # colours: the same language as the money diagram
    assert f"border-bottom:2px solid {FT.FATE_COLORS['accepted']}" in app.text_html.value
    assert FT.FATE_COLORS["accepted"] == PALETTE["overlap"] and FT.FATE_COLORS["resampled"] == PALETTE["residual"]

    st = spec_stats(result)
    assert app.stats.steps == st.steps and app.stats.alpha == st.alpha
    fw = app.figures["per_position"]
    _same(_y(fw, "unconditional"), st.per_position)
    _same(_y(fw, "conditional"), st.per_position_conditional)
    _same(_y(fw, "theory_unconditional"), [st.alpha**i for i in range(1, 4)])
    _same(_y(fw, "alpha"), [st.alpha, st.alpha])
    fh = app.figures["accepted_hist"]
    _same(_y(fh, "accepted_measured"), st.accepted_hist)
    _same(_y(fh, "accepted_theory"), st.accepted_hist_theory)
    assert list(trace_by_meta(fh, "accepted_measured").x) == [0, 1, 2, 3]
    ft = app.figures["throughput"]
    assert app.ar_result is not None and len(app.ar_result.new_ids) == 120  # AR baseline, same settings
    # the speeds shown are pooled over timing rounds: this run and its baseline, then more rounds (next seeds)
    sp = app.speed
    assert 2 <= sp.rounds <= MAX_ROUNDS and sp.spec_tokens == sp.ar_tokens == 120 * sp.rounds
    assert sp.spec_seconds > result.seconds and sp.ar_seconds > app.ar_result.seconds
    _same(_y(ft, "tokens_per_second"), [sp.spec_tps, sp.ar_tps], tol=1e-9)
    assert f"{sp.speedup:.2f}× ({sp.rounds} rounds pooled)" in app.stats_html.value
    assert f"speed-up {sp.speedup:.2f}× over {sp.rounds} rounds" in app.status.value
    assert "α = mean Σ min(p, q)" in app.stats_html.value and "cost-model prediction" in app.stats_html.value
    assert app.token_selector.max == 119 and not app.token_selector.disabled
    assert "done" in app.status.value
    # one FigureWidget holds every plot (later FigureWidgets on a page missed updates in Voila)
    import plotly.graph_objects as go

    assert [w for w in _walk(app) if isinstance(w, go.FigureWidget)] == [app.figure]
    assert set(app.figures) == set(LIVE_PANELS) and all(f is app.figure for f in app.figures.values())


def test_hf_pair_text_is_escaped_and_decoded_defensively(hf_pair):
    app = L.live_app(hf_pair, prompt="<b>x & y</b>\n", gamma=4, max_new_tokens=60, seed=1, ar_baseline=False)
    assert "vocabulary 257" in app.pair_info.value and "cpu" in app.pair_info.value
    result = app.generate(blocking=True)
    assert result is not None, app.message_text
    assert len(_spans(app)) == len(result.new_ids) == 60
    assert [f for f, _ in _spans(app)] == result.fates()
    # the pieces put back together are exactly the decoded continuation (random bytes: partial UTF-8)
    assert "".join(app.token_pieces) == result.text
    assert "<b>" not in app.text_html.value and "&lt;b&gt;x &amp; y&lt;/b&gt;" in app.text_html.value
    # the static rendering for notebooks shows the same spans
    static = FT.fates_html(result, hf_pair.tokenizer)
    assert SPAN.findall(static) == SPAN.findall(app.text_html.value)


def test_piece_decoder_holds_back_partial_characters(hf_pair):
    tok = hf_pair.tokenizer
    prompt = tok.encode("a", add_special_tokens=False)
    ids = tok.encode("é!€", add_special_tokens=False)  # 2 + 1 + 3 bytes
    assert len(ids) == 6
    assert FT.token_pieces(tok, prompt, ids) == ["", "é", "!", "", "", "€"]
    cut = ids[:2] + ids[3:5]  # "é" then two of the three bytes of "€", never completed
    pieces = FT.token_pieces(tok, prompt, cut)
    assert pieces[:3] == ["", "é", ""] and pieces[3].startswith("\ufffd")
    assert "".join(pieces) == tok.decode(cut)
    assert FT.token_pieces(None, [0], [3, 1]) == ["3 ", "1 "]


def test_greedy_run_and_settings_reach_the_engine(ngram_pair):
    app = L.live_app(
        ngram_pair, prompt="2", gamma=2, temperature=0.0, top_k=3, top_p=0.9, max_new_tokens=20, ar_baseline=False
    )
    r = app.generate(blocking=True)
    assert r is not None and r.gamma == 2
    assert set(r.fates()) <= {"accepted", "resampled", "bonus"}
    assert app.current_run.kw == dict(
        temperature=0.0, top_k=3, top_p=0.9, max_new_tokens=20, seed=0, stop_at_eos=True
    )  # the live view stops at the end token unless "ignore the end token" is ticked
    app.ignore_eos.value = True
    assert app.generate(blocking=True) is not None and app.current_run.kw["stop_at_eos"] is False


# ----------------------------------------------------------------------------- one token up close


def _check_money(app, i, tol):
    sel = app.select_token(i)
    assert sel is not None, app.message_text
    fig = app.figures["money"]
    names = list(trace_by_meta(fig, "p").x)
    assert names == sel["names"] and names[-1] == "other"
    p = dict(zip(sel["ids"], _y(fig, "p")))
    for tid, prob in sel["top_p"]:
        assert abs(p[tid] - prob) <= tol, (tid, p[tid], prob)
    assert abs(sum(_y(fig, "p")) - 1) < 1e-9
    if sel["fate"] in ("accepted", "resampled"):
        q = dict(zip(sel["ids"], _y(fig, "q")))
        for tid, prob in sel["top_q"]:
            assert abs(q[tid] - prob) <= tol, (tid, q[tid], prob)
        assert abs(sum(_y(fig, "q")) - 1) < 1e-9
        overlap = _y(fig, "overlap")
        assert np.allclose(overlap, np.minimum(_y(fig, "p"), _y(fig, "q")))
        assert sel["token"] in sel["ids"]
    else:  # bonus: no draft at this position, only p
        for meta in ("overlap", "residual", "q", "rejected"):
            assert not any(_y(fig, meta)), meta
        assert sel["q"] is None and [t.meta for t in sel["figure"].data] == ["p"]
    title = next(a.text for a in fig.layout.annotations if a.name == "title:money")
    assert f"Token #{i}" in title
    assert f"token #{i}" in app.token_info.value
    assert f"data-pos='{i}' title" in app.text_html.value and "outline:2px solid" in app.text_html.value
    return sel


@pytest.mark.parametrize("which", ["ngram", "hf"])
def test_selecting_a_token_shows_its_money_diagram(which, ngram_pair, hf_pair):
    pair, prompt, tol = (ngram_pair, "0", 1e-12) if which == "ngram" else (hf_pair, "Hello", 2e-5)
    app = L.live_app(pair, prompt=prompt, gamma=3, max_new_tokens=80, seed=5, ar_baseline=False)
    r = app.generate(blocking=True)
    fates = r.fates()
    # after a run the rejection of the most confident draft is selected: its residual is where the proof happens
    rej = {s.start + s.accepted: s.q_drafted[s.accepted] for s in r.steps if s.kind == "resampled"}
    assert app.selected["position"] == app.default_token() and rej[app.selected["position"]] == max(rej.values())
    assert app.selected["fate"] == "resampled"
    seen = set()
    for i, f in enumerate(fates):
        if f not in seen:
            seen.add(f)
            sel = _check_money(app, i, tol)
            assert sel["fate"] == f and sel["exact"]
            assert trace_by_meta(app.figures["money"], "p").y is not None
    assert {"accepted", "resampled", "bonus"} <= seen
    # moving the slider selects too
    app.token_selector.value = 1
    assert app.selected["position"] == 1


def test_with_other_and_labels():
    ids, p, q = with_other(
        top_union([(3, 0.5), (1, 0.2)], [(1, 0.6), (2, 0.1)]), top_p=[(3, 0.5), (1, 0.2)], top_q=[(1, 0.6), (2, 0.1)]
    )
    assert ids == [3, 1, 2]
    assert np.allclose(p, [0.5, 0.2, 0.0, 0.3]) and np.allclose(q, [0.0, 0.6, 0.1, 0.3])
    full_p = np.array([0.1, 0.2, 0.3, 0.4])
    ids, p, q = with_other([3, 0], full_p, full_p[::-1])
    assert ids == [3, 0] and np.allclose(p, [0.4, 0.1, 0.5]) and np.allclose(q, [0.1, 0.4, 0.5])
    assert token_label(None, 5) == "#5"
    assert distinct_labels(None, [1, 2]) == ["#1", "#2"]
    fig = LF.position_money_diagram([0.5, 0.5], [0.25, 0.75], ["1", "other"])
    assert fig.layout.xaxis.type == "category"


def test_figure_builders_match_their_patches(ngram_pair):
    from specviz.lm import speculative_generate

    st = spec_stats(speculative_generate(ngram_pair, [0], 60, 4, seed=0))
    for build, patch in (
        (LF.per_position_figure, LF.per_position_patch),
        (LF.accepted_hist_figure, LF.accepted_hist_patch),
    ):
        fig, data = build(st), patch(st)["data"]
        for meta, props in data.items():
            _same(trace_by_meta(fig, meta).y, props["y"])
    fig = LF.gamma_sweep_figure([1, 2], [1.1, 1.3], [1.5, 1.7], [1.2, 1.4])
    metas = ["sweep_measured", "sweep_bound", "sweep_predicted", "break_even", "sweep_auto"]
    assert [t.meta for t in fig.data] == metas
    assert "best measured γ = 2" in fig.layout.title.subtitle.text
    assert list(trace_by_meta(fig, "sweep_auto").y) == [None, None]  # no auto run: no level line
    assert list(trace_by_meta(LF.gamma_sweep_figure([1], [1.1], [1.5], [1.2], auto=1.4), "sweep_auto").y) == [1.4] * 2
    assert list(LF.throughput_figure(200.0, 100.0, 180.0).data[0].y) == [200.0, 100.0]


# ----------------------------------------------------------------------------- a pair on a (fake) CUDA device
# No GPU here, so the models' logits are CPU tensors that behave like CUDA ones where host code can go
# wrong: `.device` says cuda:0, `.numpy()` / `np.asarray` raise as they do on a GPU, and an operation
# mixing them with a CPU tensor of one or more dimensions raises "Expected all tensors to be on the same
# device". Tensors that code allocates with device=cuda (torch.tensor, torch.full, torch.arange,
# torch.rand, generators, CUDA events) are made on the CPU and marked the same way, so an engine that
# keeps its work on the device runs. `.cpu()` / `.to("cpu")` give plain host tensors.

CUDA0 = torch.device("cuda", 0)
_SAME_DEVICE_EXEMPT = {"__getitem__", "__setitem__", "copy_", "to", "cpu"}


def _flat(x):
    if isinstance(x, (list, tuple)):
        for y in x:
            yield from _flat(y)
    elif isinstance(x, dict):
        for y in x.values():
            yield from _flat(y)
    else:
        yield x


def _is_cuda(spec) -> bool:
    return isinstance(spec, (str, torch.device)) and torch.device(spec).type == "cuda"


def _is_cpu(spec) -> bool:
    return isinstance(spec, (str, torch.device)) and torch.device(spec).type == "cpu"


class FakeCudaTensor(torch.Tensor):
    """A CPU tensor that reports cuda:0 and refuses what a CUDA tensor refuses (see above)."""

    @property
    def device(self):
        return CUDA0

    @property
    def is_cuda(self):
        return True

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        name = getattr(func, "__name__", "")
        if name in ("numpy", "__array__"):
            raise TypeError(
                "can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the "
                "tensor to host memory first."
            )
        if name not in _SAME_DEVICE_EXEMPT and any(
            type(t) is torch.Tensor and t.dim() > 0 for t in _flat((args, kwargs))
        ):
            raise RuntimeError(
                f"{name}: Expected all tensors to be on the same device, but found at least two "
                "devices, cuda:0 and cpu!"
            )
        to_host = name == "cpu" or (
            name == "to" and (any(_is_cpu(a) for a in args[1:]) or _is_cpu(kwargs.get("device")))
        )
        if name == "to":  # .to(cuda) stays here, marked
            args = tuple("cpu" if _is_cuda(a) else a for a in args)
            if _is_cuda(kwargs.get("device")):
                kwargs["device"] = "cpu"
        if name == "cuda":
            return args[0]
        with torch._C.DisableTorchFunctionSubclass():
            out = func(*args, **kwargs)
        return _unmark(out) if to_host else _mark(out)


def _mark(out):
    if isinstance(out, torch.Tensor) and not isinstance(out, FakeCudaTensor):
        return out.as_subclass(FakeCudaTensor)
    if type(out) in (tuple, list):
        return type(out)(_mark(o) for o in out)
    if isinstance(out, tuple):  # torch.return_types (topk, sort, ...)
        return type(out)([_mark(o) for o in out])
    return out


def _unmark(out):
    return out.as_subclass(torch.Tensor) if isinstance(out, torch.Tensor) else out


class _HostGenerator(torch.Generator):
    """torch.Generator(device="cuda") made on the CPU (torch.rand(device=cuda) is made there too)."""

    def __new__(cls, device="cpu"):
        return super().__new__(cls, "cpu")

    def __init__(self, device="cpu"):
        pass


class _FakeCudaEvent:
    def __init__(self, enable_timing=False):
        self.t = None

    def record(self, stream=None):
        self.t = time.perf_counter()

    def synchronize(self):
        pass

    def elapsed_time(self, end) -> float:
        return (end.t - self.t) * 1e3


@pytest.fixture
def fake_cuda(monkeypatch):
    """Allocations with device=cuda land on the CPU as FakeCudaTensor (for the test's duration)."""

    def factory(orig):
        def make(*args, **kwargs):
            if _is_cuda(kwargs.get("device")):
                kwargs["device"] = "cpu"
                return _mark(orig(*args, **kwargs))
            return orig(*args, **kwargs)

        return make

    for name in (
        "tensor",
        "as_tensor",
        "full",
        "zeros",
        "ones",
        "empty",
        "arange",
        "rand",
        "randn",
        "randint",
        "linspace",
    ):
        monkeypatch.setattr(torch, name, factory(getattr(torch, name)))
    monkeypatch.setattr(torch, "Generator", _HostGenerator)
    monkeypatch.setattr(torch.cuda, "Event", _FakeCudaEvent)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a, **k: None)
    return FakeCudaTensor


class CudaNGram(NGramModel):
    """An n-gram model whose logits come back as (fake) CUDA tensors."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.device = CUDA0
        self._logits = self._logits.as_subclass(FakeCudaTensor)


def _cuda_twin(pair):
    t, d = pair.target, pair.draft
    return Pair(CudaNGram(t.table, name=t.name), CudaNGram(d.table, name=d.name), device="cuda")


def test_fake_cuda_tensors_refuse_what_cuda_tensors_refuse(fake_cuda):
    x = CudaNGram(np.full((3, 3), 1 / 3)).session([0]).next_logits
    assert x.device.type == "cuda" and isinstance(x * 2, fake_cuda)
    with pytest.raises(TypeError, match="cuda"):
        x.numpy()
    with pytest.raises(TypeError, match="cuda"):
        np.asarray(x)
    with pytest.raises(RuntimeError, match="same device"):
        _ = x[None] < torch.arange(3)[None]  # a host tensor made without device=
    assert type(x.cpu()) is torch.Tensor and type(x.to("cpu", torch.float64)) is torch.Tensor
    assert isinstance(torch.arange(3, device=x.device), fake_cuda) and x.cpu().numpy().shape == (3,)


SAMPLING = dict(temperature=0.8, top_k=6, top_p=0.9)


def test_token_closeup_of_a_cuda_pair_is_exact(fake_cuda):
    """The close-up recomputes p and q from CUDA logits (top-k and top-p too): same numbers as on the CPU."""
    cpu = _pair()
    cuda = _cuda_twin(cpu)
    r = speculative_generate(cpu, [0, 1], 40, 3, seed=2, **SAMPLING)
    for i, fate in enumerate(r.fates()):
        host, dev = token_closeup(cpu, r, i, **SAMPLING), token_closeup(cuda, r, i, **SAMPLING)
        assert host["exact"] and dev["exact"], (i, fate)
        assert dev["ids"] == host["ids"] and np.allclose(dev["p"], host["p"], atol=1e-12)
        assert (dev["q"] is None) == (host["q"] is None)
        if host["q"] is not None:
            assert np.allclose(dev["q"], host["q"], atol=1e-12)
    # the figure helpers take distributions straight from the device, too
    p_dev = torch.softmax(cuda.target.session([0]).next_logits, -1)
    assert isinstance(p_dev, fake_cuda)
    ids, p_vec, q_vec = with_other([2, 0], p_dev, p_dev)
    assert np.allclose(p_vec[:2], cpu.target.probs_for([0])[ids]) and np.allclose(p_vec, q_vec)
    assert np.allclose(host_array(p_dev), cpu.target.probs_for([0]))


def test_live_view_with_a_cuda_pair(fake_cuda):
    """Generate, the baseline, the token close-up and the γ sweep on a CUDA pair: no error, the device shown."""
    pair = _cuda_twin(_pair())
    app = L.live_app(pair, prompt="0 1", gamma=3, max_new_tokens=40, seed=4, ar_baseline=True, **SAMPLING)
    assert "cuda" in app.pair_info.value
    r = app.generate(blocking=True)
    assert r is not None, app.message_text
    assert app.message_text == "" and app.ar_result is not None
    assert len(_spans(app)) == 40 and app.selected is not None and app.selected["exact"]
    for i in range(0, 40, 7):
        sel = app.select_token(i)
        assert sel is not None and sel["exact"], app.message_text
    data = app.gamma_sweep(blocking=True, gammas=(1, 2))
    assert data is not None and data["gammas"] == [1, 2], app.message_text


# ----------------------------------------------------------------------------- stop, busy, errors


def test_stop_takes_effect_within_one_verify_step(ngram_pair):
    app = L.live_app(ngram_pair, prompt="0", gamma=4, max_new_tokens=200, ar_baseline=True)
    app.step_listeners.append(lambda rec: app.stop() if rec.index == 1 else None)
    r = app.generate(blocking=True)
    assert r.stopped and len(r.steps) == 2
    assert len(_spans(app)) == len(r.new_ids) == sum(s.n_emitted for s in r.steps)
    assert app.ar_result is None  # a stopped run does not go on to the baseline
    assert "stopped" in app.status.value
    app.step_listeners.clear()
    r2 = app.generate(blocking=True)
    assert not r2.stopped and len(r2.new_ids) == 200


def test_stop_button_while_running_in_the_background():
    pair = _pair(cls=SlowNGram)
    app = L.live_app(pair, prompt="0", gamma=4, max_new_tokens=2000, ar_baseline=False, refresh_s=0.05)
    assert app.generate(blocking=False) is None
    time.sleep(0.3)
    assert app.busy and not app.stop_button.disabled and app.generate_button.disabled
    app.generate(blocking=False)  # a second run while busy: a message, not a crash
    assert "busy" in app.message_text
    sel = app.select_token(0)  # picking a token while it runs works
    assert sel is not None and sel["position"] == 0, app.message_text
    n_before = len(app.current_run.steps)
    app.stop_button.click()
    assert app.wait(5)
    r = app.result
    assert r.stopped and len(r.steps) <= n_before + 2  # the step in flight finishes, then it stops
    assert len(r.new_ids) < 2000 and len(_spans(app)) == len(r.new_ids)
    assert app.stop_button.disabled and not app.generate_button.disabled


def test_errors_show_a_message_and_the_app_stays_usable(ngram_pair, hf_folders, tmp_path):
    target, draft, other = hf_folders
    app = L.live_app(ngram_pair, prompt="0", max_new_tokens=10, ar_baseline=False)
    # a bad model path: message, the previous pair stays
    app.load(str(tmp_path / "no-such-model"), "bundled", device="cpu")
    assert "no such file or folder" in app.message_text and app.pair is ngram_pair
    # incompatible tokenizers
    app.load(str(target), str(other), device="cpu")
    assert "different tokenizers" in app.message_text and app.pair is ngram_pair
    # empty prompt, and text for a pair without tokenizer
    app.prompt.value = ""
    assert app.generate(blocking=True) is None and "empty" in app.message_text
    app.prompt.value = "ROMEO"
    assert app.generate(blocking=True) is None and "token ids" in app.message_text
    app.prompt.value = "99"
    assert app.generate(blocking=True) is None and "outside the vocabulary" in app.message_text
    # a valid run afterwards works and clears the message
    app.prompt.value = "0 1"
    r = app.generate(blocking=True)
    assert r is not None and len(r.new_ids) == 10 and app.message_text == ""
    assert not app.busy and not app.generate_button.disabled
    # selecting before anything exists, or out of range
    app.select_token(50)
    assert "outside" in app.message_text


def test_context_too_long_is_a_message(hf_folders):
    target, draft, _ = hf_folders
    app = L.live_app(
        None, target=str(target), draft=str(draft), device="cpu", prompt="x" * 120, max_new_tokens=50, ar_baseline=False
    )
    assert app.pair is not None, app.message_text
    assert app.max_new_tokens.max == 128 - 16
    assert app.generate(blocking=True) is None
    assert "context of 128" in app.message_text and "shorten the prompt" in app.message_text
    app.prompt.value = "Hi"
    assert app.generate(blocking=True) is not None and app.message_text == ""


def test_no_pair_loaded_is_a_message():
    app = L.live_app(None, load=False)
    assert app.pair is None
    assert app.generate(blocking=True) is None and "Load pair" in app.message_text
    assert app.gamma_sweep(blocking=True) is None and "Load pair" in app.message_text


# ----------------------------------------------------------------------------- γ sweep and the bundled pair


def test_gamma_sweep_plots_measured_speedup_against_theory(ngram_pair):
    import transformers

    bars_before = transformers.utils.logging.is_progress_bar_enabled()
    app = L.live_app(ngram_pair, prompt="0", gamma=4, max_new_tokens=40, ar_baseline=False)  # a fixed γ: no auto run
    seen = []  # (status, progress value, progress max, progress shown) while it runs
    app.status.observe(
        lambda ch: seen.append((ch["new"], app.progress.value, app.progress.max, app.progress.layout.display)),
        names="value",
    )
    data = app.gamma_sweep(blocking=True)
    assert data is not None, app.message_text
    assert data["gammas"] == list(range(1, 9))
    fw = app.figures["sweep"]
    assert list(trace_by_meta(fw, "sweep_measured").x) == list(range(1, 9))
    _same(_y(fw, "sweep_measured"), data["measured"])
    _same(_y(fw, "sweep_bound"), data["bound"])
    _same(_y(fw, "sweep_predicted"), data["predicted"])
    ar_tps = data["ar"].tokens_per_second
    for r, m in zip(data["results"], data["measured"]):
        assert m == pytest.approx(spec_stats(r).tokens_per_second / ar_tps)
    assert "γ sweep done" in app.status.value
    # progress: the status says which run is going, the bar counts finished runs (baseline + 8)
    running = [(v, n, mx, shown) for v, n, mx, shown in seen if "γ sweep:" in v]
    assert [v for v, *_ in running] == (
        ["<i>γ sweep: autoregressive baseline (0/8)…</i>"] + [f"<i>γ sweep: γ = {g} ({g}/8)…</i>" for g in range(1, 9)]
    )
    assert [n for _, n, _, _ in running] == list(range(9)) and {mx for _, _, mx, _ in running} == {9}
    assert {shown for *_, shown in running} == {None} and app.progress.layout.display == "none"
    # Hugging Face's own progress bars are left as they were
    assert transformers.utils.logging.is_progress_bar_enabled() == bars_before


def test_gamma_sweep_stops_and_reports_progress_so_far():
    pair = _pair(cls=SlowNGram)
    app = L.live_app(pair, prompt="0", max_new_tokens=30, ar_baseline=False)
    app.status.observe(lambda ch: app.stop() if "γ = 3 " in ch["new"] else None, names="value")
    data = app.gamma_sweep(blocking=True)
    assert data is not None and data["stopped"], app.message_text
    assert data["gammas"] == [1, 2, 3]  # the run in flight finishes (its on_step stops it early)
    assert "γ sweep stopped" in app.status.value and app.progress.layout.display == "none"


# ----------------------------------------------------------------------------- when does speculation pay?


def test_payoff_table_is_the_textbook_optimum():
    from specviz.exact.gamma import best_gamma, speedup
    from specviz.lm.gamma.payoff import PayoffRow, break_even_cost, payoff_sentence, payoff_table

    rows = payoff_table(0.8, (0.05, 0.25, 0.5), max_gamma=16)
    assert rows == [
        PayoffRow(c, best_gamma(0.8, c, 16), speedup(0.8, best_gamma(0.8, c, 16), c)) for c in (0.05, 0.25, 0.5)
    ]
    for alpha in (0.1, 0.45, 0.7, 0.95):
        for r in payoff_table(alpha, np.linspace(0, 1, 41), max_gamma=32):
            brute = max(speedup(alpha, g, r.c) for g in range(33))
            assert r.speedup == pytest.approx(brute, rel=1e-12)
            # speculation pays (best γ > 0) exactly while c < α
            if abs(r.c - alpha) > 1e-9:
                assert (r.best_gamma > 0) == (r.c < break_even_cost(alpha)), (alpha, r)
    # the cheaper the draft, the larger the gain
    gains = [r.speedup for r in payoff_table(0.7, (0.5, 0.25, 0.1, 0.05))]
    assert gains == sorted(gains) and gains[0] < 1.2 < 2 < gains[-1]
    text = payoff_sentence(0.62, 0.41)
    assert "c < α" in text and "c = 0.41" in text and f"{payoff_table(0.62, [0.41])[0].speedup:.2f}×" in text
    assert "no gain" in payoff_sentence(0.3, 0.5)
    fig = LF.payoff_figure(0.7, [0.5, 0.05], ["costly", "cheap"])
    assert [t.meta for t in fig.data] == ["best_speedup", "payoff_points", "break_even", "no_gain"]
    pts = trace_by_meta(fig, "payoff_points")
    assert list(pts.y) == [r.speedup for r in payoff_table(0.7, [0.5, 0.05])] and pts.text[1].startswith("cheap: ")
    curve = trace_by_meta(fig, "best_speedup")
    assert all(y == pytest.approx(1.0) for x, y in zip(curve.x, curve.y) if x >= 0.7)
    assert all(y > 1 for x, y in zip(curve.x, curve.y) if x < 0.7 - 1e-9)
    assert list(trace_by_meta(fig, "break_even").x) == [0.7, 0.7]
    for bad, exc in (
        ((1.5,), ValueError),
        (("x",), TypeError),
        ((0.5, [-0.1]), ValueError),
        ((0.5, [0.1], 0), ValueError),
        ((0.5, [float("nan")]), ValueError),
    ):
        with pytest.raises(exc):
            payoff_table(*bad)


def test_live_view_says_when_speculation_pays(ngram_pair):
    from specviz.lm.gamma.payoff import payoff_sentence
    from specviz.widgets.live.render import cost_ratio

    app = L.live_app(ngram_pair, prompt="0 1", gamma=3, max_new_tokens=60, seed=1, ar_baseline=False)
    app.generate(blocking=True)
    st = app.stats
    assert html.unescape(app.payoff_html.value).count(payoff_sentence(st.alpha)) == 1  # no c before the baseline
    assert "c needs the autoregressive baseline" in html.unescape(app.payoff_html.value)
    app.run_baseline(blocking=True)
    c = cost_ratio(st, app.ar_result)
    assert c is not None and c == pytest.approx(st.draft_token_s / (app.ar_result.seconds / 60))
    verify = st.verify_step_s / (app.ar_result.seconds / 60)
    assert payoff_sentence(st.alpha, c, verify=verify) in html.unescape(app.payoff_html.value)
    assert f"costs {verify:.2f}" in html.unescape(app.payoff_html.value) and "2211.17192" in app.payoff_html.value
    title = next(a.text for a in app.figure.layout.annotations if a.name == "title:throughput")
    assert "when does this pay?" in title and f"c = {c:.2f}" in title and f"α = {st.alpha:.2f}" in title
    assert ("cheap enough" if c < st.alpha else "too costly") in title
    assert f"verify step = {verify:.2f} target steps" in title


@pytest.mark.skipif(not (BUNDLED_DIR / "target" / "config.json").exists(), reason="bundled pair not built yet")
def test_bundled_pair_in_the_live_view():
    app = L.live_app(max_new_tokens=40, ar_baseline=False)
    assert app.pair is not None, app.message_text
    assert "bundled-target" in app.pair_info.value and "device" in app.pair_info.value
    r = app.generate(blocking=True)
    assert r is not None and len(_spans(app)) == 40
    assert "".join(app.token_pieces) == r.text


# ----------------------------------------------------------------------------- fates, model choice, instruct models, γ auto


def _lookup_pair(V=8, seed=0):
    """A toy target with a prompt-lookup draft: a step whose context has no match drafts 0 tokens (fate "target")."""
    from specviz.lm.drafts.prompt_lookup import PromptLookupModel

    return Pair(
        NGramModel.random(V, seed=seed, concentration=0.5, name="ngram-target"), PromptLookupModel(vocab_size=V)
    )


LOOKUP_PROMPT = "0 1 2 3 0 1 2 3 0 1 2"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_fate_of_a_run_has_a_legend_entry(lang):
    from specviz.foundation.i18n import set_language, t
    from specviz.lm.stats.fates import FATE_COLORS, FATE_KEYS, FATES

    app = L.live_app(_lookup_pair(), prompt=LOOKUP_PROMPT, gamma=4, max_new_tokens=60, seed=1, ar_baseline=False)
    r = app.generate(blocking=True)
    assert r is not None, app.message_text
    assert "target" in r.fates() and any(len(s.drafted) == 0 for s in r.steps)  # a step that drafted nothing
    assert set(r.fates()) <= set(FATES)
    before = FT.legend_html()
    try:
        set_language(lang)
        legend = FT.legend_html()
        for fate in set(r.fates()) | set(FATES):
            label = t(FATE_KEYS[fate], lang=lang)
            assert html.escape(label) in legend, (lang, fate)
            assert f"border-bottom:3px solid {FATE_COLORS[fate]}" in legend, fate
        assert len(set(re.findall(r"specviz-legend-(\w+)", legend))) == len(FATES)
    finally:
        set_language("en")
    assert before == FT.legend_html() and "plain target draw" in app.legend.value


def test_model_choice_fills_the_boxes_and_says_what_to_fetch(ngram_pair, monkeypatch, tmp_path):
    from specviz.foundation.i18n import set_language
    from specviz.lm.load import catalog
    from specviz.widgets.live.models import CUSTOM, pair_choices

    monkeypatch.setenv("SPECVIZ_CACHE", str(tmp_path))  # an empty cache: nothing is fetched
    values = [v for _, v in pair_choices()]
    assert values[0] == ("bundled", "bundled") and ("smollm2-135m", "prompt-lookup") in values and values[-1] == CUSTOM
    # the learned head bundled for it (specviz.lm.drafts.learned), offered first: what the name alone loads
    assert values.index(("smollm2-135m", "smollm2-head")) < values.index(("smollm2-135m", "prompt-lookup"))
    from specviz.widgets.live.models import named_pair

    assert named_pair("smollm2-135m") == ("smollm2-135m", "smollm2-head")
    assert {name for name in catalog.MODELS} <= {v[0] for v in values if v != CUSTOM}
    app = L.live_app(ngram_pair, prompt="0", max_new_tokens=10, ar_baseline=False)
    assert app.pair_choice.value == ("bundled", "bundled")
    assert isinstance(app.target_text, ipywidgets.Combobox) and not app.target_text.ensure_option
    assert "prompt-lookup" in app.draft_text.options and "smollm2-135m" in app.target_text.options
    app.pair_choice.value = ("smollm2-135m", "prompt-lookup")
    assert (app.target_text.value, app.draft_text.value) == ("smollm2-135m", "prompt-lookup")
    assert "not fetched yet" in app.pair_choice.label
    assert "specviz models fetch smollm2-135m" in app.models_hint.value
    app.target_text.value = "HuggingFaceTB/SmolLM2-135M-Instruct"  # free text: a hub id
    assert app.pair_choice.value == CUSTOM and app.draft_text.value == "prompt-lookup"
    # an unfetched catalogue model: a message in the current language, no traceback, the pair stays
    for lang, words in (("en", "has not been fetched yet"), ("zh", "尚未下载")):
        set_language(lang)
        try:
            app.load("smollm2-135m", "prompt-lookup", device="cpu")
        finally:
            set_language("en")
        assert words in app.message_text and "specviz models fetch smollm2-135m" in app.message_text
        assert "Traceback" not in app.message_text and app.pair is ngram_pair and not app.busy
    assert app.generate(blocking=True) is not None and app.message_text == ""  # still usable
    # once fetched (a fetch in a terminal), the choice says so without a restart
    monkeypatch.setattr(catalog, "local_path", lambda name, cache=None: tmp_path / "model.gguf")
    app.controls.models.refresh()
    assert "not fetched" not in app.pair_choice.label and "fetched, ready to load" in app.models_hint.value


def _chat_pair(hf_folders, template=True):
    target, draft, _ = hf_folders
    pair = load_pair(str(target), str(draft), device="cpu")
    if template:
        pair.tokenizer.chat_template = (
            "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
            "{% if add_generation_prompt %}<|assistant|>{% endif %}"
        )
    return pair


def test_an_instruct_model_reads_its_chat_template_greedily_and_stops_at_the_end(hf_folders):
    from specviz.lm.engine.pair import format_prompt
    from specviz.widgets.live.models import DEFAULT_CHAT_PROMPT, sampling_defaults

    pair = _chat_pair(hf_folders)
    assert sampling_defaults(_chat_pair(hf_folders, template=False)) is None  # a base model: controls untouched
    app = L.live_app(pair, max_new_tokens=12, ar_baseline=False, temperature=0.9, top_k=5)
    # greedy (its generation config does not sample) and a chat prompt instead of Shakespeare
    assert (app.temperature.value, app.top_k.value, app.top_p.value) == (0.0, 0, 1.0)
    assert app.prompt.value == DEFAULT_CHAT_PROMPT and not app.chat_checkbox.disabled
    app.prompt.value = "Hi"
    r = app.generate(blocking=True)
    assert r is not None, app.message_text
    assert app.current_run.prompt_ids == format_prompt(pair.tokenizer, "Hi") == r.prompt_ids
    assert "<|user|>Hi" in pair.tokenizer.decode(r.prompt_ids)
    # "Show the formatted prompt": the templated text, special markers included
    assert app.controls.formatted_prompt.layout.display == "none"
    app.show_prompt.value = True
    shown = html.unescape(app.controls.formatted_prompt.value)
    assert "<|user|>Hi\n<|assistant|>" in shown and f"({len(r.prompt_ids)} tokens)" in shown
    app.chat_checkbox.value = False  # the prompt as typed
    assert "<|user|>" not in html.unescape(app.controls.formatted_prompt.value)
    assert app.generate(blocking=True).prompt_ids == pair.tokenizer.encode("Hi", add_special_tokens=False)
    app.chat_checkbox.value = True
    # it stops at the end token by default; "ignore the end token" goes on to max new tokens
    app.ignore_eos.value = True
    full = app.generate(blocking=True)
    assert len(full.new_ids) == 12
    end = full.new_ids[2]
    pair.target.model.generation_config.eos_token_id = end  # the end of turn is that token
    app.ignore_eos.value = False
    cut = app.generate(blocking=True)
    assert cut.new_ids == full.new_ids[: full.new_ids.index(end) + 1] and len(cut.new_ids) <= 3
    # a generation config that samples gives its own settings
    pair.target.model.generation_config.do_sample = True
    pair.target.model.generation_config.temperature = 0.7
    pair.target.model.generation_config.top_p = 0.9
    pair.target.model.generation_config.top_k = 20
    assert sampling_defaults(pair) == dict(temperature=0.7, top_k=20, top_p=0.9)


def test_loading_an_instruct_model_sets_its_defaults_and_another_pair_puts_them_back(hf_folders, ngram_pair):
    pair = _chat_pair(hf_folders)
    app = L.live_app(ngram_pair, prompt="ROMEO:\n", max_new_tokens=10, ar_baseline=False, temperature=0.8)
    assert app.prompt.value == "0"  # a toy pair reads token ids
    app.prompt.value = "ROMEO:\n"
    app._set_pair(pair)  # what a load does once the models are in
    assert app.temperature.value == 0.0 and app.prompt.value.startswith("Rewrite the following paragraph")
    app._set_pair(_chat_pair(hf_folders, template=False))  # a base model: what was set before
    assert app.temperature.value == 0.8 and app.prompt.value == "ROMEO:\n" and app.chat_checkbox.disabled
    keep = L.live_app(pair, max_new_tokens=10, ar_baseline=False, temperature=0.8, model_defaults=False)
    assert keep.temperature.value == 0.8 and keep.prompt.value == "ROMEO:\n"


def test_gamma_auto_in_the_live_view():
    from specviz.widgets.live.settings import GAMMA_CHOICES

    assert GAMMA_CHOICES[0] == "auto" and list(GAMMA_CHOICES[1:]) == list(range(9))
    app = L.live_app(_lookup_pair(), prompt=LOOKUP_PROMPT, gamma="auto", max_new_tokens=80, seed=2, ar_baseline=False)
    assert app.gamma.value == "auto" and ("auto", "auto") in [(v, v) for _, v in app.gamma.options]
    r = app.generate(blocking=True)
    assert r is not None, app.message_text
    assert r.gamma == "auto" and app.current_run.gamma == "auto"
    drafted = [len(s.drafted) for s in r.steps]
    assert len(set(drafted)) > 1, drafted  # the engine chose different draft lengths
    # the γ of each verify step: the plot and the step table
    fw = app.figures["gamma_steps"]
    assert list(trace_by_meta(fw, "gamma_drafted").y) == drafted
    assert list(trace_by_meta(fw, "gamma_accepted").y) == [s.accepted for s in r.steps]
    assert list(trace_by_meta(fw, "gamma_drafted").x) == list(range(1, len(drafted) + 1))
    title = next(a.text for a in fw.layout.annotations if a.name == "title:gamma_steps")
    assert "γ auto" in title and f"longest {max(drafted)}" in title
    rows = re.findall(r"<tr><td[^>]*>(\d+)</td><td[^>]*>(\d+)</td><td[^>]*>(\d+)</td>", app.steps_html.value)
    latest = [(str(s.index + 1), str(len(s.drafted)), str(s.accepted)) for s in r.steps][::-1][:40]
    assert rows == latest
    # nothing sized by a fixed γ: the per-position plot follows the longest draft
    st = spec_stats(r)
    assert st.gamma == max(drafted)
    assert list(trace_by_meta(app.figure, "unconditional").x) == list(range(1, max(drafted) + 1))
    assert len(trace_by_meta(app.figure, "accepted_measured").x) == max(drafted) + 1
    assert f"auto (longest {max(drafted)})" in app.stats_html.value
    # the γ sweep keeps its fixed points and adds the auto run as a level line
    data = app.gamma_sweep(blocking=True, gammas=(1, 2))
    assert data is not None, app.message_text
    assert data["gammas"] == [1, 2] and data["auto"] is not None and data["auto"]["result"].gamma == "auto"
    assert list(trace_by_meta(app.figure, "sweep_auto").y) == pytest.approx([data["auto"]["measured"]] * 2)
    assert "γ=auto" in app.status.value


@pytest.mark.parametrize("gamma", [0, 3])
def test_fixed_gamma_steps_are_shown_too(gamma, ngram_pair):
    app = L.live_app(ngram_pair, prompt="0 1", gamma=gamma, max_new_tokens=20, seed=0, ar_baseline=False)
    r = app.generate(blocking=True)
    assert r is not None, app.message_text
    drafted = [len(s.drafted) for s in r.steps]
    assert set(drafted[:-1]) == {gamma} and drafted[-1] <= gamma  # the last step drafts at most what is left
    assert list(trace_by_meta(app.figure, "gamma_drafted").y) == drafted
    assert f"γ = {gamma}" in next(a.text for a in app.figure.layout.annotations if a.name == "title:gamma_steps")
    if gamma == 0:  # plain target steps: every token is a target draw, and the legend says so
        assert set(app.token_fates) == {"target"} and "plain target draw" in app.legend.value
        sel = app.select_token(5)  # its close-up: p only, no draft
        assert sel is not None and sel["fate"] == "target" and sel["q"] is None, app.message_text


def test_a_new_run_after_a_selection_shows_no_error(ngram_pair):
    app = L.live_app(ngram_pair, prompt="0 1", gamma=3, max_new_tokens=30, seed=0, ar_baseline=False)
    assert app.generate(blocking=True) is not None
    app.token_selector.value = 17  # a token picked with the slider
    assert app.selected["position"] == 17 and app.message_text == ""
    assert app.generate(blocking=True) is not None  # the new run resets the slider: no "generate first"
    assert app.message_text == "" and app.token_selector.max == 29


@pytest.mark.skipif(os.environ.get("SPECVIZ_SKIP_SMOLLM2") == "1", reason="SPECVIZ_SKIP_SMOLLM2=1: SmolLM2 tests off")
def test_smollm2_with_prompt_lookup_as_a_lecturer_runs_it():
    """The model choice's SmolLM2 + prompt lookup, loaded by the app: chat template, greedy, γ auto, end of turn."""
    from specviz.lm.engine.inputs import eos_ids
    from specviz.lm.load import catalog

    catalog.fetch("smollm2-135m")  # a no-op after `make models`
    app = L.live_app(None, load=False, max_new_tokens=120, ar_baseline=False)  # γ: auto, the default
    app.pair_choice.value = ("smollm2-135m", "prompt-lookup")
    assert "not fetched" not in app.pair_choice.label
    app.load(device="cpu", blocking=True)
    assert app.pair is not None, app.message_text
    assert app.temperature.value == 0.0 and app.prompt.value.startswith("Rewrite the following paragraph")
    app.show_prompt.value = True
    assert "&lt;|im_start|&gt;user" in app.controls.formatted_prompt.value
    r = app.generate(blocking=True)
    assert r is not None and app.message_text == "", app.message_text
    assert r.gamma == "auto" and "leather-bound log" in r.text
    assert r.new_ids[-1] in eos_ids(app.pair) and len(r.new_ids) < 120  # it stopped at the end of its turn
    assert any(len(s.drafted) > 1 for s in r.steps)  # prompt lookup found the paragraph to rewrite


def test_an_auto_run_that_drafts_nothing_shows_its_numbers_without_an_error(ngram_pair, monkeypatch):
    """gamma="auto" may find that nothing pays and draft nothing (it did on a loaded CI machine): the stats
    table then shows '—' for what needs drafts (predicted speed-up, suggested γ), never an error."""
    from specviz.lm.gamma.adaptive import AutoGamma

    monkeypatch.setattr(AutoGamma, "choose", lambda self, room, run=None, match=None: 0)
    app = L.live_app(ngram_pair, prompt="0", gamma="auto", max_new_tokens=30, ar_baseline=True)
    r = app.generate(blocking=True)
    assert r is not None and all(s.gamma == 0 for s in r.steps) and app.ar_result is not None
    assert not app.message_text, app.message_text
    assert "—" in app.view.stats_html.value


# ----------------------------------------------------------------------------- a draft tree's run: the tree panel


def _tree_of(fw) -> dict:
    """What a tree panel's figure shows: its title and the nodes of each fate."""
    fates = ("accepted", "rejected", "untested")
    return {"title": fw.layout.title.text, **{f: list(trace_by_meta(fw, f"nodes:{f}").customdata) for f in fates}}


def test_a_tree_run_draws_each_verify_steps_tree_and_the_slider_picks_the_step(ngram_pair):
    app = L.live_app(ngram_pair, prompt="0 1", gamma=3, tree=(3, 2, 1), max_new_tokens=30, seed=0, ar_baseline=False)
    assert app.tree.value == "3, 2, 1" and not app.tree_panel.shown  # nothing to show before a run
    r = app.generate(blocking=True)
    assert r is not None and app.message_text == "", app.message_text
    panel = app.tree_panel
    assert all(s.tree is not None for s in r.steps) and panel.shown and panel.step.max == len(r.steps)
    # after the run: the step of the token the close-up picked (the most confident rejection's)
    assert panel.step.value == app.selected["step"] + 1 and panel.info.value == ""
    for number in {1, len(r.steps)} - {panel.step.value}:  # the slider redraws the tree of the step picked
        panel.step.value = number
        tree = r.steps[number - 1].tree
        shown = _tree_of(panel.figure)
        assert shown["title"].startswith(f"Verify step {number}:") and shown["accepted"] == tree.path
        assert sorted(shown["accepted"] + shown["rejected"] + shown["untested"]) == list(range(len(tree.tokens)))
        assert panel.holder.children == (panel.figure,)
    # picking a token shows its step's tree
    app.select_token(len(r.new_ids) - 1)
    assert panel.step.value == len(r.steps) and _tree_of(panel.figure)["title"].startswith(
        f"Verify step {len(r.steps)}:"
    )
    assert app.message_text == ""


def test_a_chain_run_shows_no_tree_panel(ngram_pair):
    app = L.live_app(ngram_pair, prompt="0 1", gamma=3, tree=2, max_new_tokens=20, seed=0, ar_baseline=False)
    assert app.generate(blocking=True) is not None and app.tree_panel.shown and app.tree_panel.figure is not None
    assert app.result.steps[0].tree.widths == (2, 2, 2)  # "2": k = 2 at every depth, as `specviz run --tree 2`
    app.tree.value = app.tree.options[0]  # off (a chain)
    r = app.generate(blocking=True)
    assert r is not None and all(s.tree is None for s in r.steps)
    assert not app.tree_panel.shown and app.tree_panel.figure is None and app.tree_panel.holder.children == ()


def test_the_tree_control_offers_off_k_a_shape_and_auto_where_the_engine_takes_it():
    from specviz.lm.engine.settings import GenerationSettings
    from specviz.widgets.live.settings import read_tree

    app = L.live_app(_pair(), prompt="0", max_new_tokens=5, ar_baseline=False)
    try:
        GenerationSettings(tree="auto")
        auto = True
    except ValueError:
        auto = False
    assert list(app.tree.options) == ["off (a chain)", "2", "3, 2, 1"] + (["auto"] if auto else [])
    assert app.tree.value == "off (a chain)" and app.controls.settings().tree is None
    assert [read_tree(v) for v in ("4, 2", " 3 ", "", "Auto")] == [(4, 2), 3, None, "auto"]


@pytest.mark.parametrize("typed, said", [("3, 0", "tree[1] must be an integer >= 1, got 0"), ("wide", "tree must be")])
def test_a_bad_tree_setting_is_a_message_and_the_view_stays_usable(typed, said, ngram_pair):
    app = L.live_app(ngram_pair, prompt="0 1", gamma=3, max_new_tokens=12, seed=0, ar_baseline=False)
    app.tree.value = typed  # the box takes any text typed
    assert app.generate(blocking=True) is None and said in app.message_text, app.message_text
    assert not app.busy and not app.generate_button.disabled
    app.tree.value = "2, 2"
    r = app.generate(blocking=True)
    assert r is not None and app.message_text == "" and app.tree_panel.figure is not None
    assert {s.tree.widths for s in r.steps if s.tree is not None} <= {(2, 2), (2,)}


def test_a_tree_that_cannot_be_drawn_is_a_message_in_the_panel(ngram_pair, monkeypatch):
    from specviz.widgets.live import tree_panel

    app = L.live_app(ngram_pair, prompt="0 1", gamma=3, tree=2, max_new_tokens=20, seed=0, ar_baseline=False)
    assert app.generate(blocking=True) is not None
    good = tree_panel.real_tree_figure

    def broken(record, token_text=None):
        raise ValueError("planted")

    trees = [s.index + 1 for s in app.result.steps if s.tree is not None]
    first, second = [n for n in trees if n != app.tree_panel.step.value][:2]
    monkeypatch.setattr(tree_panel, "real_tree_figure", broken)
    app.tree_panel.step.value = first
    info = app.tree_panel.info.value
    assert "specviz-error" in info and "ValueError: planted" in info and app.tree_panel.figure is None
    monkeypatch.setattr(tree_panel, "real_tree_figure", good)
    app.tree_panel.step.value = second  # the next step draws again
    assert app.tree_panel.figure is not None and app.tree_panel.info.value == ""


def test_steps_without_a_tree_say_so_in_words(ngram_pair):
    """A tree run whose depth is 0 runs plain target steps: the panel says there is no tree to draw."""
    app = L.live_app(ngram_pair, prompt="0 1", gamma=0, tree=(3, 2, 1), max_new_tokens=6, seed=0, ar_baseline=False)
    assert app.generate(blocking=True) is not None and app.message_text == ""
    panel = app.tree_panel
    assert panel.shown and panel.figure is None and "drafted no tree (γ = 0)" in panel.info.value


@pytest.mark.parametrize("lang", ["zh"])
def test_the_tree_panel_and_control_speak_chinese(lang, ngram_pair):
    from test_i18n import problems_in, widget_texts, without_data

    from specviz.foundation.i18n import language, set_language

    before = language()
    set_language(lang)
    try:
        app = L.live_app(ngram_pair, prompt="0 1", gamma=3, tree=(3, 2, 1), max_new_tokens=15, ar_baseline=False)
        assert app.generate(blocking=True) is not None and app.message_text == ""
        seen = widget_texts(app.tree_panel.box) + widget_texts(app.tree)
        assert app.tree.value == "3, 2, 1" and app.tree.options[0] == "关（单链）"
        assert app.controls.settings().tree == (3, 2, 1)
    finally:
        set_language(before)
    problems = problems_in([(w, without_data(x)) for w, x in seen])
    assert not problems and any("草稿树" in x for _, x in seen), problems


def test_an_instruct_pair_starts_with_its_own_prompt_and_gives_it_up_for_the_next(hf_folders):
    """A learned head's pair starts on free text (nothing to copy: the head's q drafts), prompt lookup's on the
    rewrite; a prompt the view set itself follows the pair loaded, one the user typed stays."""
    from types import SimpleNamespace

    from specviz.widgets.live.models import DEFAULT_CHAT_PROMPT, HEAD_CHAT_PROMPT, chat_prompt_for

    pair = _chat_pair(hf_folders)
    app = L.live_app(pair, max_new_tokens=4, ar_baseline=False)
    assert app.prompt.value == DEFAULT_CHAT_PROMPT
    as_head = SimpleNamespace(target=pair.target, draft=SimpleNamespace(draft_kind="head"), tokenizer=pair.tokenizer)
    assert chat_prompt_for(as_head) == HEAD_CHAT_PROMPT != DEFAULT_CHAT_PROMPT
    app.controls.apply_model_defaults(as_head)
    assert app.prompt.value == HEAD_CHAT_PROMPT
    app.prompt.value = "my own words"
    app.controls.apply_model_defaults(pair)
    assert app.prompt.value == "my own words"
