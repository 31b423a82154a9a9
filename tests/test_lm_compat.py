"""The Hugging Face adapter against transformers itself, on whichever transformers is installed.

Peer checks: greedy decoding through specviz's engine equals `model.generate(do_sample=False)`
token for token, and a cached session's logits equal an uncached forward pass at every step,
on the bundled pair and on tiny random GPT-2 and Llama pairs. `make test` runs this file a
second time against the lowest transformers that pyproject.toml admits (`make test-floor`);
the installed version is part of every test id, so the floor run shows in the output.
"""

import os
import re

import numpy as np
import pytest
import torch
import transformers
from lm_fixtures import spy_host_reads, tiny_checkpoint, tiny_llama_checkpoint

from specviz.lm import HFModel, autoregressive_generate, load_pair, speculative_generate
from specviz.lm.engine.models import cache_keyword

TF = transformers.__version__
DEVICE = os.environ.get("SPECVIZ_TEST_DEVICE", "cpu")  # benchmarks/bench_gpu.py reruns these on cuda
N_NEW = 24
PROMPTS = ["ROMEO:\n", "To be, or not to be", "The quality of mercy", "Enter "]
ATOL = 1e-4  # float32 logits, cached vs uncached attention
MIN_GAP = 1e-3  # greedy comparisons need the argmax to be clear of float32 rounding


@pytest.fixture(scope="module", params=["bundled", "gpt2", "llama"], ids=lambda kind: f"{kind}-transformers-{TF}")
def pair(request, tmp_path_factory):
    if request.param == "bundled":
        return load_pair(device=DEVICE)
    root = tmp_path_factory.mktemp(request.param)
    make = tiny_checkpoint if request.param == "gpt2" else tiny_llama_checkpoint
    # Weights from our own seeded generator (the same on every transformers version); init_std 0.3
    # keeps every greedy choice clear of near-ties. The draft is the target plus 4% noise, so its
    # greedy drafts are accepted about 2 times in 3 and both acceptance and rejection paths run.
    target = make(root / "target", layers=2, width=64, seed=1, init_std=0.3)
    draft = make(root / "draft", layers=2, width=64, seed=1, init_std=0.3, perturb=0.04)
    return load_pair(str(target), str(draft), device=DEVICE)


def prompt_ids(pair, text):
    return pair.tokenizer.encode(text, add_special_tokens=False)


def hf_greedy(model: HFModel, ids, n):
    """transformers' own greedy continuation of `ids` (n tokens, no stopping at EOS)."""
    x = torch.tensor([ids], device=model.device)
    out = model.model.generate(
        x,
        attention_mask=torch.ones_like(x),
        do_sample=False,
        max_new_tokens=n,
        min_new_tokens=0,
        eos_token_id=None,
        pad_token_id=0,
    )
    return out[0, len(ids) :].tolist()


def assert_clear_argmax(model: HFModel, ids, new_ids):
    """Every greedy choice in new_ids beats the runner-up by MIN_GAP (else the comparison is luck)."""
    logits = model.full_logits(ids + new_ids)[len(ids) - 1 : -1]  # rows predicting each new token
    top2 = logits.topk(2, dim=-1).values
    gaps = top2[:, 0] - top2[:, 1]
    assert (logits.argmax(-1).tolist() == new_ids) and gaps.min() > MIN_GAP, (
        f"near-tie in the reference (gap {gaps.min():.2g}): choose another seed or init_std"
    )


@pytest.fixture(scope="module")
def references(pair):
    """prompt -> (ids, greedy continuation by transformers' generate)."""
    refs = {}
    for text in PROMPTS:
        ids = prompt_ids(pair, text)
        new = hf_greedy(pair.target, ids, N_NEW)
        assert len(new) == N_NEW
        assert_clear_argmax(pair.target, ids, new)
        refs[text] = ids, new
    return refs


def test_greedy_autoregressive_equals_transformers_generate(pair, references):
    for text, (ids, expected) in references.items():
        assert autoregressive_generate(pair, ids, N_NEW, temperature=0).new_ids == expected, text


@pytest.mark.parametrize("gamma", [1, 3])
def test_greedy_speculative_equals_transformers_generate(pair, references, gamma):
    kinds = set()
    for text, (ids, expected) in references.items():
        r = speculative_generate(pair, ids, N_NEW, gamma, temperature=0)
        assert r.new_ids == expected, (text, gamma)
        kinds |= {s.kind for s in r.steps}
    assert {"resampled", "bonus"} <= kinds, f"both rejections and full acceptances should occur, saw {kinds}"


def check_rows(model, session, rows=None):
    """The session's next_logits (and `rows`, the last feed's output) equal an uncached forward pass."""
    full = model.full_logits(session.tokens)
    torch.testing.assert_close(session.next_logits, full[-1], atol=ATOL, rtol=0)
    if rows is not None:
        torch.testing.assert_close(rows, full[-len(rows) :], atol=ATOL, rtol=0)


@pytest.mark.parametrize("role", ["target", "draft"])
@pytest.mark.parametrize("chunk", [1, 3])
def test_cached_session_equals_uncached_forward_at_every_step(pair, references, role, chunk):
    model = getattr(pair, role)
    ids, new = references[PROMPTS[2]]
    stream = ids + new
    s = model.session(stream[:2])
    check_rows(model, s)
    for i in range(2, len(stream), chunk):
        check_rows(model, s, s.feed(stream[i : i + chunk]))
    assert s.tokens == stream
    s.truncate(s.length - 7)  # without next_logits: the last kept token is re-read
    assert s.tokens == stream[:-7]
    check_rows(model, s)
    rows = s.feed(torch.tensor(new[:4]))  # a 1-D int64 tensor is read like a list
    check_rows(model, s, rows)
    s.truncate(s.length - 2, next_logits=rows[1])  # with next_logits: a pure cache crop
    check_rows(model, s)
    for t in new[8:14]:
        check_rows(model, s, s.feed([t]))


def test_feed_refuses_tensors_that_are_not_1d_integer(pair):
    s = pair.draft.session([1, 2])
    with pytest.raises(TypeError, match="1-D integer tensor"):
        s.feed(torch.tensor([1.0, 2.0]))
    with pytest.raises(TypeError, match="1-D integer tensor"):
        s.feed(torch.tensor([[1, 2]]))
    assert s.tokens == [1, 2]


def test_a_model_that_ignores_the_cache_is_refused(pair, monkeypatch):
    """What transformers < 5.24 does with `cache=`: runs without it. The session must raise, not forget."""
    model = pair.draft
    forward = model.model.forward

    def forgetful(*args, **kwargs):
        kwargs.pop(model.cache_keyword)
        return forward(*args, **kwargs)

    monkeypatch.setattr(model.model, "forward", forgetful)
    pattern = rf"transformers {re.escape(TF)}: {type(model.model).__name__} ignored the KV cache"
    with pytest.raises(RuntimeError, match=pattern):
        model.session([1, 2, 3])


def test_cache_keyword_follows_the_forward_signature(pair):
    class Old:
        def forward(self, input_ids, past_key_values=None, use_cache=None): ...

    class New:
        def forward(self, input_ids, cache=None, use_cache=None): ...

    class Opaque:
        def forward(self, input_ids, **kwargs): ...

    assert cache_keyword(Old()) == "past_key_values" and cache_keyword(New()) == "cache"
    new_api = tuple(int(x) for x in re.findall(r"\d+", TF)[:2]) >= (5, 24)
    assert cache_keyword(Opaque()) == ("cache" if new_api else "past_key_values")
    assert pair.target.cache_keyword == ("cache" if new_api else "past_key_values")


def test_one_host_read_per_verify_step_with_real_sessions(pair, monkeypatch):
    """Drafting, verifying and rolling back read nothing from the device but the step's one transfer.

    Counted on CPU by spying on every Tensor method that copies to the host (on a GPU each one
    would be a synchronisation); transformers' own forward must not add any either.
    """
    reads = spy_host_reads(monkeypatch)
    marks = []
    r = speculative_generate(pair, [1, 2, 3], 40, 4, seed=0, on_step=lambda rec: marks.append(len(reads)))
    monkeypatch.undo()
    per_step = np.diff([0] + marks)
    assert len(r.steps) > 3 and any(s.accepted < s.gamma for s in r.steps)  # rollbacks happened
    assert (per_step == 1).all(), f"host reads per verify step: {per_step.tolist()} ({sorted(set(reads))})"
