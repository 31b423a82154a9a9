"""Draft trees through the real engine (`specviz.lm.engine.tree_step`): exact laws, planted bugs, greedy peers, records.

Goodness-of-fit checks are chi-square tests (`stats_helpers.chi_square_pvalue`) at ALPHA = 1e-4 with
fixed seeds: a correct engine fails a given check with probability 1e-4 over random seeds (this
file's 19 checks together with under 2e-3); with the fixed seeds each outcome is deterministic. The
toy pair is two random trigrams (order 3) over V = 3 tokens, so the law of the first L new tokens is
known exactly, and a wrong token kept in a cache changes the next law (a bigram would only look at
the final token, which no cache bug touches). Planted bugs subclass the engine (`keep`), swap in a
test-local broken copy of the tree walk (as tests/test_tree_verify.py does), or give the toy's
sessions a wrong tree reading. Greedy trees are compared token for token with plain greedy decoding
and with transformers' `generate(do_sample=False)` on tiny GPT-2 and Llama pairs, the bundled pair and
SmolLM2 (the Makefile's test-floor runs those on the lowest transformers too).
"""

from __future__ import annotations

import itertools
import json
import os
import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from lm_fixtures import spy_host_reads, tiny_checkpoint, tiny_llama_checkpoint  # noqa: E402
from stats_helpers import chi_square_pvalue  # noqa: E402
from test_lm_tree_sessions import sees_siblings  # noqa: E402
from test_tree_verify import PLANTED, planted  # noqa: E402 - the walk's planted bugs, one copy

import specviz as sv  # noqa: E402
import specviz.lm.trees.attention as tree_attention  # noqa: E402
from specviz.exact.standardize import Sampling  # noqa: E402
from specviz.lm import (  # noqa: E402
    GenerationSettings,
    LanguageModel,
    NGramModel,
    NonFiniteLogitsError,
    Pair,
    Session,
    SpeculativeEngine,
    autoregressive_generate,
    load_pair,
    spec_stats,
    speculative_generate,
)
from specviz.lm.engine import tree_step  # noqa: E402
from specviz.lm.load import catalog  # noqa: E402
from specviz.lm.trees.attention import path_ids  # noqa: E402

ALPHA = 1e-4
V, L = 3, 3  # vocabulary, continuation length
PROMPT = [1, 2]
SHAPES = {"(2,) g1": ((2,), 1), "(3,2) g2": ((3, 2), 2), "(2,2,1) g3": ((2, 2, 1), 3), "2 g3": (2, 3)}
SAMPLINGS = {"T=1": {}, "top-k": {"top_k": 2}, "top-p": {"top_p": 0.8}}
FAST = ("(2,2,1) g3", "T=1")  # the first case; the slow lane adds COVER
COVER = (("(2,) g1", "top-p"), ("(3,2) g2", "top-k"), ("2 g3", "top-p"))
"""With FAST: every shape once and every sampling at least once. The step processes P and Q with one call for
every shape (`probs_on_device` on all rows), so a sampling bug shows in any shape; the 12-case product (4 shapes
× 3 samplings, 185 worker-seconds at 0b81157) is not needed to see it."""
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def toy_pair(order: int = 3) -> Pair:
    target = NGramModel.random(V, order=order, seed=10, concentration=0.7, name="target")
    draft = NGramModel.random(V, order=order, seed=11, concentration=0.7, name="draft")
    return Pair(target, draft)


def exact_continuations(model: NGramModel, prompt, length, sampling: Sampling) -> np.ndarray:
    """(V**length,) exact probability of each continuation under plain sampling with `sampling`."""
    out = np.zeros(V**length)
    for i, seq in enumerate(itertools.product(range(V), repeat=length)):
        prob, hist = 1.0, list(prompt)
        for t in seq:
            logits = np.log(np.maximum(model.probs_for(hist), 1e-300))
            prob *= sv.standardize(logits, sampling.temperature, sampling.top_k, sampling.top_p)[t]
            hist.append(t)
        out[i] = prob
    return out


def law_pvalue(engine, pair, tree, gamma, n, seed, **kw) -> float:
    """p-value of the first L tokens of n seeded tree runs against exact enumeration of the target."""
    rng = np.random.default_rng(seed)
    counts = np.zeros(V**L, dtype=np.int64)
    for _ in range(n):
        r = engine.generate(pair, PROMPT, max_new_tokens=L, gamma=gamma, seed=rng, tree=tree, **kw)
        counts[sv.sequence_index(np.array([r.new_ids]), V)[0]] += 1
    return chi_square_pvalue(counts, exact_continuations(pair.target, PROMPT, L, Sampling(**kw)))


# ------------------------------------------------------------------------------ lossless by enumeration


@pytest.mark.slow  # 7 s: 2,000 generations (the house rule: a second or more is slow)
def test_tree_output_matches_exact_enumeration():
    shape, sampling = FAST
    tree, gamma = SHAPES[shape]
    p = law_pvalue(SpeculativeEngine(), toy_pair(), tree, gamma, 2000, seed=1, **SAMPLINGS[sampling])
    assert p >= ALPHA, f"{shape} {sampling}: p-value {p:.3g}"


def test_the_cases_cover_every_shape_and_every_sampling():
    cases = (FAST, *COVER)
    assert {s for s, _ in cases} == set(SHAPES) and {m for _, m in cases} == set(SAMPLINGS)


@pytest.mark.slow
@pytest.mark.parametrize("shape,sampling", COVER)
def test_tree_output_matches_exact_enumeration_every_shape(shape, sampling):
    tree, gamma = SHAPES[shape]
    p = law_pvalue(SpeculativeEngine(), toy_pair(), tree, gamma, 4000, seed=2, **SAMPLINGS[sampling])
    assert p >= ALPHA, f"{shape} {sampling}: p-value {p:.3g}"


# ------------------------------------------------------------------------------ planted bugs


class KeepsARejectedBranch(SpeculativeEngine):
    """The cache keeps a sibling of the path's last node (rejected or never tested) instead of that node."""

    def keep(self, session, path, next_logits):
        if path:
            parents = session.tree_parents
            siblings = [j for j, p in enumerate(parents) if p == parents[path[-1]] and j != path[-1]]
            path = path[:-1] + siblings[:1]
        super().keep(session, path, next_logits)


def sees_everything_before(self, ids, parents):
    """A toy session's tree read with a causal mask: node i sees every node before it (its siblings too)."""
    flat = [int(t) for t in path_ids((*self._tree_ids, ids), range(len(parents)))]
    first = len(parents) - len(ids)
    return torch.stack([self.model.logits_for(self.tokens + flat[: i + 1]) for i in range(first, len(parents))])


BUG_RUNS = {  # bug -> (tree, γ, runs): a shape where the bug shows (p-values 1e-10 or less with these seeds)
    "no residual update": ((3,), 1, 300),  # three siblings: the second and third tested against P
    "bonus after a rejected leaf": ((3,), 1, 300),
    "keeps a rejected branch": ((2,), 1, 1500),  # the next step reads a wrong token (the sessions test sees it at once)
    "a node sees its siblings": ((4, 1), 2, 2000),
}
SLOW_BUGS = ("keeps a rejected branch", "a node sees its siblings")


@pytest.mark.parametrize("bug", [pytest.param(b, marks=[pytest.mark.slow] if b in SLOW_BUGS else []) for b in BUG_RUNS])
def test_planted_bugs_are_caught(bug, monkeypatch):
    pair, engine = toy_pair(), SpeculativeEngine()
    if bug == "keeps a rejected branch":
        engine = KeepsARejectedBranch()
    elif bug in PLANTED:
        monkeypatch.setattr(tree_step, "verify_tree_torch", planted(*PLANTED[bug]))
    else:
        monkeypatch.setattr(type(pair.target.session([0])), "_forward_tree", sees_everything_before)
    tree, gamma, runs = BUG_RUNS[bug]
    p = law_pvalue(engine, pair, tree, gamma, runs, seed=3)
    assert p < ALPHA, f"{bug}: not caught, p-value {p:.3g}"


def test_the_planted_copy_of_the_walk_is_faithful(monkeypatch):
    """With no edit, the copy gives exactly the product's runs (so a caught bug is the edit's doing)."""
    pair = toy_pair()
    runs = [speculative_generate(pair, PROMPT, 20, 2, seed=s, tree=(2, 2)).new_ids for s in range(5)]
    monkeypatch.setattr(tree_step, "verify_tree_torch", planted())
    assert runs == [speculative_generate(pair, PROMPT, 20, 2, seed=s, tree=(2, 2)).new_ids for s in range(5)]


# ------------------------------------------------------------------------------ the sessions after each step


class Recorded(NGramModel):
    """An n-gram model that keeps every session it opens."""

    def session(self, prompt_ids):
        s = super().session(prompt_ids)
        self.sessions.append(s)
        return s


def recorded_pair() -> Pair:
    pair = toy_pair()
    for m in (pair.target, pair.draft):
        m.__class__, m.sessions = Recorded, []
    return pair


def session_errors(engine, pair, **kw) -> list:
    """Every step after which a session holds anything but the emitted sequence (or still holds tree nodes)."""
    seq, errors = list(PROMPT), []

    def check(rec):
        seq.extend(rec.emitted)
        T, D = pair.target.sessions[-1], pair.draft.sessions[-1]
        ok = T.length == len(seq) - 1 and D.length <= T.length and not T.tree_parents and not D.tree_parents
        if not (ok and T.tokens == seq[: T.length] and D.tokens == seq[: D.length]):
            errors.append((rec.index, seq[:], T.tokens[:], D.tokens[:]))

    engine.generate(pair, PROMPT, 60, on_step=check, **kw)
    return errors


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
@pytest.mark.parametrize("kw", [{"temperature": 1.0}, {"temperature": 0}, {"top_k": 2}], ids=str)
def test_both_sessions_hold_exactly_the_accepted_path(kw):
    pair = recorded_pair()
    for tree, gamma in ((3, 2, 1), 3), (2, 4), ((1,), 1):
        assert session_errors(SpeculativeEngine(), pair, gamma=gamma, tree=tree, seed=7, **kw) == []
    assert session_errors(KeepsARejectedBranch(), pair, gamma=3, tree=(3, 2, 1), seed=7, **kw), "the bug went unseen"


# ------------------------------------------------------------------------------ records


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
def test_records_of_a_tree_run_add_up():
    r = speculative_generate(toy_pair(), PROMPT, 200, 3, seed=0, tree=(3, 2, 1))
    steps = [s for s in r.steps if s.tree is not None]
    assert len(steps) == len(r.steps) and {s.kind for s in steps} == {"resampled", "bonus"}
    assert {s.accepted for s in steps} == {0, 1, 2, 3}
    for s in steps:
        t = s.tree
        depth = len(t.widths)
        assert s.gamma == depth and t.widths == (3, 2, 1)[:depth]
        assert len(t.tokens) == len(t.parents) == len(t.fates) == len(t.p_x) == len(t.q_x) == np.cumprod(t.widths).sum()
        assert s.accepted == len(t.path) and (s.kind == "bonus") == (s.accepted == depth)
        assert [t.parents[i] for i in t.path] == [-1, *t.path][: len(t.path)]  # a chain down from the root
        assert {i for i, f in enumerate(t.fates) if f == 1} == set(t.path)
        tested = [i for i, f in enumerate(t.fates) if f >= 0]
        assert all(t.parents[i] in [-1, *t.path] for i in tested)  # only children of the walk's nodes are tested
        assert len(s.drafted) == len(s.p_drafted) == len(s.alphas) == min(s.accepted + 1, depth)
        assert s.drafted[: s.accepted] == [t.tokens[i] for i in t.path]
        assert s.p_drafted[: s.accepted] == [t.p_x[i] for i in t.path] and s.emitted[-1] == s.token
        if s.accepted < depth:  # the first child tested at the stop, rejected
            stop = t.path[-1] if t.path else -1
            first = t.parents.index(stop)
            assert s.drafted[-1] == t.tokens[first] and t.fates[first] == 0 and s.q_drafted[-1] == t.q_x[first]
        assert len(s.top_p) == s.n_emitted and len(s.top_q) == s.n_emitted
    assert sum(s.accepted for s in r.steps) == len(r.new_ids) - len(r.steps)
    st = spec_stats(r)
    assert st.gamma == 3 and st.mean_acceptance_length == pytest.approx(1 + st.per_position.sum(), abs=1e-12)
    d = json.loads(json.dumps(r.to_dict(steps=True)))
    assert d["steps"][0]["tree"]["widths"] == list(r.steps[0].tree.widths)
    chain = speculative_generate(toy_pair(), PROMPT, 20, 3, seed=0)
    assert all(s.tree is None and "tree" not in s.to_dict() for s in chain.steps)


def test_depth_follows_gamma_and_the_tree():
    """γ caps the depth; a shape shorter than γ caps it too; γ = 0 steps are plain target steps."""
    pair = toy_pair()
    for tree, gamma, depth in (((3, 2, 1), 2, 2), ((2,), 5, 1), (2, 4, 4)):
        r = speculative_generate(pair, PROMPT, 40, gamma, seed=1, tree=tree)
        assert {s.gamma for s in r.steps[:-2]} == {depth}, (tree, gamma)
    r = speculative_generate(pair, PROMPT, 10, 0, seed=1, tree=(2, 2))
    assert len(r.steps) == 10 and {s.kind for s in r.steps} == {"target"} and r.steps[0].tree is None
    auto = speculative_generate(pair, PROMPT, 40, "auto", seed=1, tree=(2, 2))
    assert len(auto.new_ids) == 40 and max(s.gamma for s in auto.steps) <= 2


def test_settings_carry_the_tree_and_both_forms_agree():
    pair = toy_pair()
    s = GenerationSettings(max_new_tokens=30, gamma=2, seed=4, tree=[3, 2])
    assert s.tree == (3, 2)
    a = speculative_generate(pair, PROMPT, settings=s)
    b = speculative_generate(pair, PROMPT, 30, 2, seed=4, tree=(3, 2))
    c = SpeculativeEngine().generate(pair, PROMPT, s)
    assert a.new_ids == b.new_ids == c.new_ids and a.steps[0].tree is not None
    assert autoregressive_generate(pair, PROMPT, settings=s).new_ids  # the tree is not used there


@pytest.mark.parametrize(
    "tree,match",
    [((3, 0), r"tree\[1\] must be an integer >= 1, got 0"), ("Auto!", "tree must be"),
     (17, "tree must be an integer <= 16, got 17"), ((16, 16, 16), "more than 256 nodes"), ("3,2", "tree must be")],
)  # fmt: skip
def test_bad_trees_are_named_in_one_line(tree, match):
    for make in (lambda: GenerationSettings(tree=tree), lambda: speculative_generate(toy_pair(), PROMPT, 5, tree=tree)):
        with pytest.raises(ValueError, match=match) as e:
            make()
        assert "\n" not in str(e.value)


class BrokenNGram(NGramModel):
    """An n-gram model whose logits hold a NaN once the history holds `bad_from` tokens."""

    def logits_for(self, tokens):
        out = super().logits_for(tokens)
        return out if len(tokens) < self.bad_from else out.clone().fill_(float("nan"))


@pytest.mark.parametrize("which", ["target", "draft"])
@pytest.mark.parametrize("temperature", [0, 1.0])
def test_non_finite_logits_name_the_model_and_the_token(which, temperature):
    pair = toy_pair()
    broken = getattr(pair, which)
    broken.__class__, broken.bad_from = BrokenNGram, len(PROMPT) + 4  # the logits of generated token 5
    with pytest.raises(NonFiniteLogitsError, match=f"the {which} model .* generated token ([0-9]+),") as e:
        speculative_generate(pair, PROMPT, 20, 3, seed=0, temperature=temperature, tree=(2, 2, 1))
    token = int(re.search(r"generated token ([0-9]+),", str(e.value)).group(1))
    # the target's row for token 5 is always read; the draft's may be skipped (the target's bonus drew token 5)
    assert token == 5 if which == "target" else 5 <= token <= 7, str(e.value)


# ------------------------------------------------------------------------------ greedy and one host read


# Greedy trees on the toy pair (every shape, every draft kind): the contract in tests/test_lm_draft_kinds.py.


class DeviceTable(LanguageModel):
    """A bigram whose logits are looked up on the device from id tensors (trees too): no host reads of its own."""

    def __init__(self, vocab, seed, name):
        self.vocab_size, self.name, self.max_positions = vocab, name, None
        self.device = torch.device("cpu")
        self.table = torch.randn(vocab, vocab, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)

    def session(self, prompt_ids):
        return DeviceTableSession(self, prompt_ids)


class DeviceTableSession(Session):
    def _forward(self, ids):
        return self.model.table[torch.as_tensor(ids, dtype=torch.long)]  # (k, V): a bigram row per id

    def _crop(self, n_drop):
        pass

    def _forward_tree(self, ids, parents):
        return self.model.table[torch.as_tensor(ids, dtype=torch.long)]  # a bigram reads only the node itself

    def _keep_path(self, path):
        pass


@pytest.mark.parametrize("temperature", [1.0, 0])
def test_one_host_read_per_verify_step(monkeypatch, temperature):
    """Between two tree steps nothing leaves the device except one transfer (counted on CPU by patching)."""
    pair = Pair(DeviceTable(50, 0, "t"), DeviceTable(50, 1, "d"))
    reads = spy_host_reads(monkeypatch)
    marks = []
    settings = GenerationSettings(max_new_tokens=40, gamma=3, seed=0, temperature=temperature, tree=(3, 2, 1))
    r = SpeculativeEngine().generate(pair, [1, 2], settings, on_step=lambda rec: marks.append(len(reads)))
    per_step = np.diff([0, *marks])
    monkeypatch.undo()
    assert len(r.new_ids) == 40 and all((s.tree is None) == (s.kind == "target") for s in r.steps)
    assert sum(s.tree is not None for s in r.steps) >= 10
    assert (per_step == 1).all(), f"host reads per verify step: {per_step.tolist()} ({sorted(set(reads))})"


# ------------------------------------------------------------------------------ real models: greedy peers

N_NEW = 24
PROMPTS = ["ROMEO:\n", "To be, or not to be", "The quality of mercy"]
MIN_GAP = 1e-3  # greedy comparisons need the argmax to be clear of float32 rounding


def hf_greedy(model, ids, n):
    """transformers' own greedy continuation of `ids` (n tokens, no stopping at an end token), with clear argmaxes."""
    x = torch.tensor([ids], device=model.device)
    out = model.model.generate(
        x, attention_mask=torch.ones_like(x), do_sample=False, max_new_tokens=n, min_new_tokens=0, eos_token_id=None,
        pad_token_id=0,
    )[0, len(ids) :].tolist()  # fmt: skip
    logits = model.full_logits(ids + out)[len(ids) - 1 : -1]
    top2 = logits.topk(2, dim=-1).values
    assert (top2[:, 0] - top2[:, 1]).min() > MIN_GAP, "near-tie in the reference: choose another prompt or seed"
    return out


def tiny_pair(kind, root):
    make = tiny_checkpoint if kind == "gpt2" else tiny_llama_checkpoint
    target = make(root / "target", layers=2, width=64, seed=1, init_std=0.3)
    draft = make(root / "draft", layers=2, width=64, seed=1, init_std=0.3, perturb=0.04)
    return load_pair(str(target), str(draft), device="cpu")


def assert_greedy_trees_equal(pair, prompts, n, trees=(((3, 2, 1), 3), (2, 2))):
    kinds = set()
    for text in prompts:
        ids = pair.tokenizer.encode(text, add_special_tokens=False)
        expected = hf_greedy(pair.target, ids, n)
        assert autoregressive_generate(pair, ids, n, temperature=0).new_ids == expected, text
        for tree, gamma in trees:
            r = speculative_generate(pair, ids, n, gamma, temperature=0, tree=tree)
            assert r.new_ids == expected, (text, tree)
            kinds |= {s.kind for s in r.steps}
    assert {"resampled", "bonus"} <= kinds, f"both stops at a rejection and at a leaf should occur, saw {kinds}"


@pytest.mark.parametrize("kind", [pytest.param("gpt2", marks=pytest.mark.slow), "llama"])  # gpt2: a 3 s checkpoint
def test_greedy_tree_equals_transformers_generate(kind, tmp_path):
    assert_greedy_trees_equal(tiny_pair(kind, tmp_path), PROMPTS, N_NEW)


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
@pytest.mark.parametrize("bug", ["a node sees its siblings", "positions all at the root"])
def test_planted_mask_and_position_bugs_break_greedy_equality(bug, tmp_path, monkeypatch):
    pair = tiny_pair("gpt2", tmp_path)
    if bug == "a node sees its siblings":
        monkeypatch.setattr(tree_attention, "tree_mask", sees_siblings(tree_attention.tree_mask))
    else:
        monkeypatch.setattr(
            tree_attention, "tree_positions", lambda parents, n, committed, device: torch.full((1, n), committed)
        )
    wrong = 0
    for text in PROMPTS:
        ids = pair.tokenizer.encode(text, add_special_tokens=False)
        plain = autoregressive_generate(pair, ids, N_NEW, temperature=0).new_ids
        wrong += speculative_generate(pair, ids, N_NEW, 3, temperature=0, tree=(3, 2, 1)).new_ids != plain
    assert wrong, f"{bug}: not caught"


@pytest.mark.slow
def test_greedy_tree_on_the_bundled_pair_equals_transformers_generate():
    assert_greedy_trees_equal(load_pair(device="cpu"), PROMPTS, 40)


@pytest.mark.slow
def test_greedy_tree_on_smollm2_equals_transformers_generate():
    if os.environ.get("SPECVIZ_SKIP_SMOLLM2") == "1":
        pytest.skip("SPECVIZ_SKIP_SMOLLM2=1")
    if catalog.local_path("smollm2-135m") is None:
        if not IN_CI:
            pytest.skip("SmolLM2 is not fetched (make models); under CI=true it is fetched")
        catalog.fetch("smollm2-135m")
    pair = load_pair("smollm2-135m", "smollm2-135m", device="cpu", hf_progress=False)
    ids = pair.encode("What is the capital of France? Answer in one sentence.")
    expected = hf_greedy(pair.target, ids, 16)
    for tree, gamma in (((3, 2, 1), 3), (2, 2)):
        r = speculative_generate(pair, ids, 16, gamma, temperature=0, tree=tree)
        assert r.new_ids == expected, tree
