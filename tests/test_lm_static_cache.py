"""StaticHFModel: a StaticCache session gives the uncached forward's logits at every step, rollback included.

Every check compares with `HFModel.full_logits` (one uncached forward over the whole sequence) at
a tolerance of 1e-4 (float32 logits of these models are O(1..10); the cached and uncached sums
differ by ~1e-5 at most). Random feed/truncate sequences use fixed seeds: deterministic.
A planted bug (a cache that never rolls back, so stale slots stay visible) shows the check bites.
"""

import random
import sys
from pathlib import Path

import pytest
import torch

from specviz.lm import HFModel, Pair, autoregressive_generate, load_pair, speculative_generate
from specviz.lm.engine.static_cache import StaticHFModel

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lm_fixtures import byte_tokenizer, tiny_checkpoint  # noqa: E402

TOL = 1e-4
PROMPTS = ["ROMEO:\n", "HAMLET:\nTo be, or not to be", "PORTIA:\nThe quality of mercy", "Enter "]


@pytest.fixture(scope="module")
def bundled():
    return load_pair(device="cpu")


@pytest.fixture(scope="module")
def tiny_gpt2(tmp_path_factory):
    from transformers import AutoModelForCausalLM

    folder = tiny_checkpoint(tmp_path_factory.mktemp("tiny-gpt2"), layers=2, width=32, seed=3, positions=64)
    return AutoModelForCausalLM.from_pretrained(folder).eval()


@pytest.fixture(scope="module")
def tiny_llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(4)
    cfg = LlamaConfig(
        num_hidden_layers=2,
        hidden_size=32,
        intermediate_size=64,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=257,
        max_position_embeddings=64,
        bos_token_id=256,
        eos_token_id=256,
    )
    model = LlamaForCausalLM(cfg).eval()
    with torch.no_grad():  # transformers' init is near zero: give the logits some spread
        for p in model.parameters():
            p.add_(torch.randn(p.shape) * 0.1)
    return model


def _model(request, name):
    if name == "bundled-draft":
        return request.getfixturevalue("bundled").draft.model
    return request.getfixturevalue(name.replace("-", "_"))


def _random_walk(static, ref, seed, steps, as_tensor_every=3):
    """Drive a session by random feeds (lists and tensors, 1..9 tokens) and truncates (with and without
    next_logits); return the largest |next_logits - uncached| seen and how many truncates re-fed other tokens."""
    rng = random.Random(seed)
    cap = static.max_length
    toks = [rng.randrange(256) for _ in range(rng.randrange(1, 8))]
    s = static.session(toks)
    worst, refed = (s.next_logits - ref.full_logits(toks)[-1]).abs().max().item(), 0
    for step in range(steps):
        if s.length > 1 and (rng.random() < 0.35 or s.length > cap - 10):
            keep = rng.randrange(1, s.length)
            if rng.random() < 0.5:
                s.truncate(keep)
            else:
                s.truncate(keep, ref.full_logits(toks[:keep])[-1])
            toks = toks[:keep]
            new = [rng.randrange(256) for _ in range(rng.randrange(1, 4))]  # different tokens over stale slots
            refed += 1
        else:
            new = [rng.randrange(256) for _ in range(rng.choice([1, 1, 1, 2, 3, 5, 9]))]
        rows = s.feed(torch.tensor(new) if step % as_tensor_every == 0 else new)
        full = ref.full_logits(toks + new)
        toks += new
        assert rows.shape == (len(new), static.vocab_size)
        worst = max(worst, (rows - full[-len(new) :]).abs().max().item())
        worst = max(worst, (s.next_logits - full[-1]).abs().max().item())
        assert s.tokens == toks and s.length == len(toks)
    return worst, refed


@pytest.mark.parametrize("name", ["bundled-draft", "tiny-gpt2", "tiny-llama"])
def test_every_step_matches_the_uncached_forward(request, name):
    model = _model(request, name)
    static, ref = StaticHFModel(model, name, max_length=64), HFModel(model, name)
    worst, refed = _random_walk(static, ref, seed=0, steps=120)
    assert refed > 20  # the walk really rolled back and overwrote stale slots
    assert worst < TOL


def test_truncate_then_different_tokens_never_sees_the_stale_slots(bundled):
    model = bundled.draft.model
    static, ref = StaticHFModel(model, "draft", max_length=64), HFModel(model, "draft")
    prefix, stale, fresh = [72, 101, 108], [120, 121, 122, 123, 124, 125, 126, 127], [33, 34]
    s = static.session(prefix + stale)
    s.truncate(len(prefix))  # re-reads the last kept token: no logits given
    assert (s.next_logits - ref.full_logits(prefix)[-1]).abs().max() < TOL
    rows = s.feed(fresh)  # fills 2 of the 8 stale slots; 6 stale ones lie beyond the position
    assert (rows - ref.full_logits(prefix + fresh)[len(prefix) :]).abs().max() < TOL
    rows = s.feed([40] * 9)  # a chunk that runs over the stale slots and past them
    assert (rows - ref.full_logits(prefix + fresh + [40] * 9)[-9:]).abs().max() < TOL


class _AppendOnly(StaticHFModel):
    """Planted bug: the cache never moves back, so rolled-back slots stay visible and new tokens land after them."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.high = {}

    def forward_at(self, cache, x, position, eager=False):
        position = max(position, self.high.get(id(cache), 0))
        self.high[id(cache)] = position + x.shape[1]
        return super().forward_at(cache, x, position, eager)

    def rewind(self, cache, n_drop):
        pass


def test_the_check_catches_a_cache_that_never_rolls_back(bundled):
    model = bundled.draft.model
    worst, refed = _random_walk(_AppendOnly(model, "bug", max_length=256), HFModel(model, "ref"), seed=0, steps=30)
    assert refed > 0 and worst > 1e-2


def _buffer_addresses(cache):
    if hasattr(cache, "layers"):  # transformers 5.x: one StaticLayer per layer
        return [t.data_ptr() for layer in cache.layers for t in (layer.keys, layer.values)]
    return [t.data_ptr() for t in cache.key_cache + cache.value_cache]  # 4.x


def test_truncate_runs_no_forward_and_keeps_the_buffers(bundled):
    model = bundled.draft.model
    static = StaticHFModel(model, "draft", max_length=64)
    s = static.session(list(range(40, 60)))
    rows = s.feed([1, 2, 3])
    buffers = _buffer_addresses(s.cache)
    calls = []
    handle = model.register_forward_hook(lambda *a: calls.append(1))
    try:
        s.truncate(21, rows[0])
    finally:
        handle.remove()
    assert calls == [] and s.length == 21 and s.tokens == list(range(40, 60)) + [1]
    assert _buffer_addresses(s.cache) == buffers


def test_a_reused_cache_forgets_the_previous_session(bundled):
    model = bundled.draft.model
    static, ref = StaticHFModel(model, "draft", max_length=64), HFModel(model, "ref")
    s = static.session([7] * 50)
    first = s.cache
    del s  # its cache goes back to the pool
    s = static.session([65, 66])
    assert s.cache is first
    assert (s.next_logits - ref.full_logits([65, 66])[-1]).abs().max() < TOL
    other = static.session([67])  # two live sessions: two caches
    assert other.cache is not s.cache
    assert (s.feed([68]) - ref.full_logits([65, 66, 68])[-1:]).abs().max() < TOL


@pytest.mark.parametrize("gamma", [1, 3, 6])
def test_greedy_generation_equals_the_dynamic_cache(bundled, gamma):
    V = bundled.target.vocab_size
    static = Pair(
        StaticHFModel(bundled.target.model, "t", vocab_size=V),
        StaticHFModel(bundled.draft.model, "d", vocab_size=V),
        bundled.tokenizer,
    )
    for prompt in PROMPTS:
        want = speculative_generate(bundled, prompt, max_new_tokens=40, gamma=gamma, temperature=0)
        got = speculative_generate(static, prompt, max_new_tokens=40, gamma=gamma, temperature=0)
        assert got.new_ids == want.new_ids
        assert [st.accepted for st in got.steps] == [st.accepted for st in want.steps]
    want = autoregressive_generate(bundled, PROMPTS[1], max_new_tokens=60, temperature=0)
    assert autoregressive_generate(static, PROMPTS[1], max_new_tokens=60, temperature=0).new_ids == want.new_ids


def test_greedy_generation_equals_the_dynamic_cache_on_tiny_models(tiny_gpt2, tiny_llama):
    tok = byte_tokenizer()
    for target, draft in ((tiny_gpt2, tiny_llama), (tiny_llama, tiny_gpt2)):
        dynamic = Pair(HFModel(target, "t"), HFModel(draft, "d"), tok)
        static = Pair(StaticHFModel(target, "t"), StaticHFModel(draft, "d"), tok)
        for gamma in (2, 5):
            want = speculative_generate(dynamic, "abc", max_new_tokens=30, gamma=gamma, temperature=0)
            assert (
                speculative_generate(static, "abc", max_new_tokens=30, gamma=gamma, temperature=0).new_ids
                == want.new_ids
            )


def test_the_engine_refuses_to_overflow_max_length(bundled):
    V = bundled.target.vocab_size
    pair = Pair(
        StaticHFModel(bundled.target.model, "t", vocab_size=V, max_length=32),
        StaticHFModel(bundled.draft.model, "d", vocab_size=V, max_length=32),
        bundled.tokenizer,
    )
    assert pair.target.max_positions == 32
    with pytest.raises(ValueError, match="context of 32"):
        speculative_generate(pair, "ROMEO:\n", max_new_tokens=30, gamma=4, temperature=0)


def test_bad_input_is_a_clear_error(bundled):
    model = bundled.draft.model
    with pytest.raises(ValueError, match="exceeds"):
        StaticHFModel(model, "d", max_length=10_000)
    with pytest.raises(ValueError, match="verify_bucket"):
        StaticHFModel(model, "d", verify_bucket=4)
    for bad in (1, (2, 1), (), 2.5, 10_000):
        with pytest.raises(ValueError, match="verify_bucket"):
            StaticHFModel(model, "d", compile=True, verify_bucket=bad)
    static = StaticHFModel(model, "d", max_length=16)
    with pytest.raises(ValueError, match="empty"):
        static.session([])
    with pytest.raises(ValueError, match="token id 300"):
        static.session([1, 300])
    with pytest.raises(ValueError, match="token id -1"):
        static.session(torch.tensor([1, -1]))
    with pytest.raises(TypeError, match="2.5"):
        static.session([1, 2.5])
    s = static.session([1, 2])
    with pytest.raises(TypeError, match="1-D integer tensor"):
        s.feed(torch.tensor([1.0]))
    with pytest.raises(ValueError, match="overflows its static cache of 16"):
        s.feed(list(range(15)))
    with pytest.raises(ValueError, match="cannot truncate"):
        s.truncate(3)
    assert s.feed([]).shape == (0, static.vocab_size) and s.tokens == [1, 2]
    assert static.warmup() >= 0 and not static.compiled  # an eager model warms up by just running


def test_an_unknown_static_cache_signature_names_the_version(bundled, monkeypatch):
    import transformers

    class Odd:
        def __init__(self, cfg, slots):
            pass

    monkeypatch.setattr(transformers, "StaticCache", Odd)
    with pytest.raises(RuntimeError, match=f"transformers {transformers.__version__}"):
        StaticHFModel(bundled.draft.model, "d")


class _IgnoresCache(torch.nn.Module):
    """A causal LM that takes a cache keyword and drops it (what old model classes do with unknown keywords)."""

    def __init__(self, inner):
        super().__init__()
        self.inner, self.config = inner, inner.config

    def get_input_embeddings(self):
        return self.inner.get_input_embeddings()

    def forward(self, input_ids=None, past_key_values=None, position_ids=None, cache_position=None, use_cache=None):
        return self.inner(input_ids=input_ids, position_ids=position_ids, use_cache=False)


def test_a_model_that_ignores_the_cache_is_refused(bundled):
    import transformers

    static = StaticHFModel(_IgnoresCache(bundled.draft.model), "d")
    with pytest.raises(RuntimeError, match=f"transformers {transformers.__version__}.*did not use it"):
        static.session([1, 2, 3])


@pytest.mark.slow
def test_compiled_steps_equal_eager_steps(bundled):
    """torch.compile of the 1-token step and of chunks padded to 2 or 4 (5-10 s of compiling on CPU)."""
    model = bundled.draft.model
    eager = StaticHFModel(model, "eager", max_length=64)
    compiled = StaticHFModel(model, "compiled", max_length=64, compile=True, verify_bucket=(2, 4))
    ref = HFModel(model, "ref")
    assert compiled.compiled and compiled.compile_mode == "default"
    for seed in (0, 1):  # the second session reuses the first one's cache
        a, b = eager.session([10 + seed, 11]), compiled.session([10 + seed, 11])
        toks = [10 + seed, 11]
        rng = random.Random(seed)
        for step in range(40):
            if step % 4 == 3:
                keep = rng.randrange(1, a.length)
                a.truncate(keep), b.truncate(keep)
                toks = toks[:keep]
            n = rng.choice([1, 1, 2, 3, 4, 6])
            if a.length + n > 60:
                n = 1
            new = [rng.randrange(256) for _ in range(n)]
            ra, rb = a.feed(new), b.feed(torch.tensor(new))
            toks += new
            assert (ra - rb).abs().max() < TOL
            assert (rb[-1] - ref.full_logits(toks)[-1]).abs().max() < TOL
        assert b.tokens == toks
    V = bundled.target.vocab_size
    draft = StaticHFModel(model, "d", vocab_size=V, compile=True, verify_bucket=2)
    draft.warmup()
    pair = Pair(bundled.target, draft, bundled.tokenizer)
    want = speculative_generate(bundled, PROMPTS[2], max_new_tokens=30, gamma=3, temperature=0)
    with torch._dynamo.config.patch(error_on_recompile=True):  # after warmup: new sessions, tensor ids,
        for _ in range(2):  # inference mode never recompile
            assert (
                speculative_generate(pair, PROMPTS[2], max_new_tokens=30, gamma=3, temperature=0).new_ids
                == want.new_ids
            )
        old = torch.get_num_threads()
        torch.set_num_threads(1)  # the thread count it was warmed up with (compiled code guards on it)
        try:
            with torch.inference_mode():
                s = draft.session(torch.tensor([65, 66]))
            s.feed(torch.tensor([3], dtype=torch.int32)), s.feed([4, 5]), s.feed(torch.tensor([6]))
        finally:
            torch.set_num_threads(old)
        assert s.tokens == [65, 66, 3, 4, 5, 6]


def test_load_pair_static_cache_option_gives_the_same_tokens():
    from specviz.lm import StaticHFModel, load_pair

    fast = load_pair(device="cpu", static_cache=True, progress=False)
    plain = load_pair(device="cpu", progress=False)
    assert isinstance(fast.target, StaticHFModel) and isinstance(fast.draft, StaticHFModel)
    for gamma in (1, 4):
        assert (
            speculative_generate(fast, "ROMEO:\n", 24, gamma, temperature=0).new_ids
            == speculative_generate(plain, "ROMEO:\n", 24, gamma, temperature=0).new_ids
        )


def test_static_sessions_never_read_the_device_themselves(monkeypatch):
    """Rollbacks with the logits at hand move only the write position: no read of the ids by the session.

    (transformers' own mask code for a StaticCache reads a padding mask per forward; only reads made by
    specviz's session code count here: before, every rollback copied the ids to the host.)
    """
    import traceback

    plain = load_pair(device="cpu", progress=False)
    pair = Pair(StaticHFModel(plain.target.model, "t"), StaticHFModel(plain.draft.model, "d"), plain.tokenizer)
    session_reads = []
    for name in ("item", "tolist", "numpy", "__int__", "__bool__", "__float__", "__index__", "cpu"):
        orig = getattr(torch.Tensor, name)

        def spy(self, *a, _orig=orig, _name=name, **k):
            caller = traceback.extract_stack(limit=2)[0].filename
            if caller.endswith(("lm/engine/static_cache.py", "lm/engine/models.py")):
                session_reads.append(_name)
            return _orig(self, *a, **k)

        monkeypatch.setattr(torch.Tensor, name, spy)
    T, D = pair.target.session([72, 101, 108]), pair.draft.session([72, 101, 108])
    session_reads.clear()  # the constructor checks the cache grew, once per session
    r = speculative_generate(pair, [72, 101, 108], 40, 4, seed=0)
    monkeypatch.undo()
    assert T.length == 3 and D.length == 3
    assert any(st.accepted < st.gamma for st in r.steps)  # rollbacks happened
    reads_per_generation = len(session_reads)
    assert reads_per_generation <= 2, f"session code read the device {reads_per_generation} times: {session_reads}"
