"""The learned draft (`specviz.lm.drafts.learned`): an EAGLE-style head over the target's features, exact.

On a tiny random Llama target (V = 3, built here, no download) with a tiny random head whose
vocabulary leaves out token 1 (q = 0 there, as FR-Spec's restricted head has outside its tokens):
the output law of the first L = 3 tokens matches exact enumeration of the target, for a chain
drawn from q (min(1, p/q)) and for a tree of the head's distinct top-k children (the rule for
deterministic children). Chi-square at ALPHA = 1e-4 with fixed seeds: a correct engine fails one
with probability 1e-4, this file's three together under 3e-4. At temperature 0 the output is plain
greedy decoding's. The bundled head on SmolLM2 is checked in test_lm_smollm2.py.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.slow  # each test builds a transformers model (the file's first: 10 s); the fast lane has none

import numpy as np  # noqa: E402
from test_lm_tree_engine import PROMPT, L, V, chi_square_pvalue, exact_continuations  # noqa: E402

import specviz as sv  # noqa: E402
from specviz.exact.standardize import Sampling  # noqa: E402
from specviz.lm import Pair, SpeculativeEngine, autoregressive_generate, speculative_generate  # noqa: E402
from specviz.lm.drafts import KINDS, draft_for  # noqa: E402
from specviz.lm.drafts.feature_head import FeatureHead  # noqa: E402
from specviz.lm.drafts.learned import HeadDraft, HeadModel  # noqa: E402
from specviz.lm.engine.logits import probs_on_device  # noqa: E402
from specviz.lm.engine.models import HFModel  # noqa: E402

ALPHA = 1e-4
HEAD_VOCAB = [0, 2]  # token 1 is outside the head's vocabulary: q(1) = 0 everywhere


class TinyTarget(HFModel):
    """A random 2-layer Llama over 3 tokens, with the exact next-token law `exact_continuations` reads."""

    def probs_for(self, hist) -> np.ndarray:
        return torch.softmax(self.full_logits(hist)[-1].double(), -1).numpy()


def tiny_pair() -> Pair:
    import transformers

    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(
        vocab_size=V,
        hidden_size=8,
        intermediate_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=64,
        tie_word_embeddings=True,
    )
    hf = transformers.LlamaForCausalLM(cfg)
    with torch.no_grad():  # sharper rows than the default init, so p is far from uniform
        hf.model.embed_tokens.weight.mul_(6)
        hf.model.norm.weight.uniform_(0.5, 2.0)  # not ones: a second norm (features taken after it) must show
    target = TinyTarget(hf, "tiny-llama")
    torch.manual_seed(1)
    head = FeatureHead(hidden=8, heads=2, kv_heads=1, intermediate=16, vocab_ids=torch.tensor(HEAD_VOCAB)).eval()
    with torch.no_grad():
        head.fc.weight.mul_(4)
    return Pair(target, HeadModel(target, head, V, name="tiny-head"))


def law_pvalue(pair, tree, gamma, n, seed) -> float:
    rng = np.random.default_rng(seed)
    counts = np.zeros(V**L, dtype=np.int64)
    for _ in range(n):
        r = SpeculativeEngine().generate(pair, PROMPT, max_new_tokens=L, gamma=gamma, seed=rng, tree=tree)
        counts[sv.sequence_index(np.array([r.new_ids]), V)[0]] += 1
    return chi_square_pvalue(counts, exact_continuations(pair.target, PROMPT, L, Sampling()))


def test_the_head_is_a_registered_kind_and_its_q_is_zero_outside_its_vocabulary():
    pair = tiny_pair()
    assert isinstance(draft_for(pair.draft, pair.draft.session(PROMPT)), HeadDraft) and KINDS["head"] is HeadDraft
    r = speculative_generate(pair, PROMPT, 12, 2, temperature=1.0, seed=0)
    drafted = [(x, q) for s in r.steps for x, q in zip(s.drafted, s.q_drafted)]
    assert drafted and all(x in HEAD_VOCAB and q > 0 for x, q in drafted)
    assert any(s.accepted for s in r.steps) and any(s.accepted < s.gamma for s in r.steps)
    assert 1 in r.new_ids, "token 1 (q = 0) must still come out, from the residual"


def offline_first_q(pair, text: list, first_step: bool) -> torch.Tensor:
    """(V,) q of the first draft after `text`, recomputed without the engine: one uncached target forward for the
    features, one uncached head pass over the entries (f_i, x_{i+1}) (at the first step, the prompt's own f_{L-1})."""
    m, hf, box = pair.draft, pair.target.model, []
    handle = hf.model.layers[-1].register_forward_hook(
        lambda mod, a, out: box.append(out[0] if isinstance(out, tuple) else out)
    )
    with torch.no_grad():
        hf(input_ids=torch.tensor([text]), use_cache=False)
        handle.remove()
        fn = m.norm(box[-1].reshape(len(text), -1))  # (L, H)
        L = len(text)
        if first_step:
            f = fn[L - 1 :]
        else:
            out, _ = m.head(m.embed(torch.tensor(text[1:]))[None], fn[: L - 1][None], torch.arange(L - 1))
            f = m.norm(out[0, -1:])
        return torch.softmax(m.logits(f)[0].double(), -1)


def test_the_first_drafts_q_is_what_the_head_computes_from_the_targets_true_features():
    """The head's state in a run (its cache rolled back after each rejection, the features of the kept
    positions, before the final norm) gives the q an uncached pass over the text gives: checked at every
    drafting step of sampled runs with rejections and full acceptances."""
    pair = tiny_pair()
    checked, rejected = 0, 0
    for seed in range(3):
        r = speculative_generate(pair, PROMPT, 24, 3, temperature=1.0, seed=seed)
        text = r.prompt_ids + r.new_ids
        for i, s in enumerate(r.steps):
            if not s.drafted:
                continue
            q = offline_first_q(pair, text[: len(r.prompt_ids) + s.start], i == 0)
            assert abs(float(q[s.drafted[0]]) - s.q_drafted[0]) < 1e-5, (seed, i)
            checked += 1
            rejected += s.accepted < s.gamma
    assert checked >= 20 and rejected >= 5


@pytest.mark.parametrize("tree", [None, (2, 2)])
def test_greedy_output_equals_plain_greedy_decoding(tree):
    pair = tiny_pair()
    plain = autoregressive_generate(pair, PROMPT, 16, temperature=0).new_ids
    r = speculative_generate(pair, PROMPT, 16, 3 if tree is None else 2, temperature=0, tree=tree)
    assert r.new_ids == plain
    assert sum(s.accepted for s in r.steps) > 0


@pytest.mark.slow  # 1,500 generations on a transformers model each
@pytest.mark.parametrize("tree,gamma", [(None, 2), ((2, 1), 2)])
def test_output_law_matches_exact_enumeration(tree, gamma):
    p = law_pvalue(tiny_pair(), tree, gamma, 1500, seed=4)
    assert p >= ALPHA, f"tree {tree} γ {gamma}: p-value {p:.3g}"


class IidRuleOnTopK(HeadDraft):
    """A planted bug: the head's top-k children verified with min(1, R(x)/q(x)), the rule for i.i.d. children."""

    def propose(self, seq, s, g, widths, gen):
        prop = super().propose(seq, s, g, widths, gen)
        if prop.tree:  # depth 1: the root's q row is what the children would have been drawn from
            logits = self.m.logits(self._root(seq))
            prop.q, prop.logits = [probs_on_device(logits, s)], [logits]
        return prop


@pytest.mark.slow  # 1,500 generations
def test_top_k_children_verified_as_if_drawn_from_q_are_caught():
    """The check above has the power to see the wrong rule: Medusa/EAGLE-2-style top-k children under
    min(1, R/q) put too much mass on the head's favourites (notebook 13 shows it on cat/dog/fish)."""
    KINDS["head"] = IidRuleOnTopK
    try:
        p = law_pvalue(tiny_pair(), (2,), 1, 1500, seed=4)
    finally:
        KINDS["head"] = HeadDraft
    assert p < ALPHA, f"the biased rule passed: p-value {p:.3g}"


class RenormalisedTarget(TinyTarget):
    """A planted bug: the target's p cut to the head's vocabulary and renormalised there (the LM head "saved"
    on the target's side too); exact enumeration is of the real target."""

    def session(self, prompt_ids, read_features: bool = False):
        s = super().session(prompt_ids, read_features)
        forward, mask = s._forward, torch.full((V,), float("-inf"))
        mask[HEAD_VOCAB] = 0.0
        s._forward = lambda ids: forward(ids) + mask
        s.next_logits = s.next_logits + mask
        return s


@pytest.mark.slow  # 1,500 generations
def test_p_renormalised_to_the_heads_vocabulary_is_caught():
    """Only q may be cut to the kept vocabulary: the cut tokens' target mass must stay (in the residual)."""
    pair = tiny_pair()
    bad = RenormalisedTarget(pair.target.model, "renormalised")
    p = law_pvalue(Pair(bad, HeadModel(bad, pair.draft.head, V, name="tiny-head")), None, 2, 1500, seed=4)
    assert p < ALPHA, f"the renormalised target passed: p-value {p:.3g}"


def test_the_bundled_head_is_checked_and_refuses_another_target(tmp_path):
    """The shipped weights match their recorded sha256; a damaged copy and a target of another width are refused,
    each naming what is wrong and how to get it right."""
    import shutil

    from specviz.lm.drafts.learned import HEAD_DIR, load_head

    head = load_head()
    assert head.hidden == 576 and len(head.vocab_ids) == 8192
    bad = tmp_path / "head"
    shutil.copytree(HEAD_DIR, bad)
    data = (bad / "head.safetensors").read_bytes()
    (bad / "head.safetensors").write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match=r"head\.safetensors is damaged.*make head"):
        load_head(bad)
    (bad / "head.safetensors").unlink()
    with pytest.raises(FileNotFoundError, match="no head.safetensors"):
        load_head(bad)
    target = tiny_pair().target  # hidden size 8
    with pytest.raises(ValueError, match="features of width 576.*tiny-llama has hidden size 8"):
        HeadModel(target, head, V)


def test_the_closeup_names_the_mass_the_head_cannot_propose():
    """The live close-up of a drafted token: p recomputed exactly, and p's mass on the tokens outside the head's
    vocabulary (token 1 here) named, equal to the target's own p(1) after that prefix, read off the target."""
    from specviz.widgets.live.closeup import token_closeup

    pair = tiny_pair()
    r = speculative_generate(pair, PROMPT, 12, 2, seed=0)
    drafted = [i for s in r.steps for i in range(s.start, s.start + min(s.gamma, s.n_emitted))]
    assert drafted, "no drafted token to look at"
    for i in drafted[:3]:
        sel = token_closeup(pair, r, i)
        p_one = float(pair.target.probs_for(list(PROMPT) + list(r.new_ids[:i]))[1])
        assert abs(sel["outside_mass"] - p_one) < 1e-9, (sel["outside_mass"], p_one)
        assert f"{p_one:.3f}" in sel["explanation"] and sel["q"] is not None


def tiny_head_lookup_pair() -> Pair:
    from specviz.lm.drafts.head_lookup import HeadLookupModel

    pair = tiny_pair()
    return Pair(pair.target, HeadLookupModel(pair.target, pair.draft.head, V, name="tiny-head+lookup"))


def test_head_and_lookup_take_turns_and_the_output_law_is_the_targets():
    """The combined draft drafts lookup's runs where the text repeats and the head's q elsewhere (both kinds of step
    occur on V = 3), and the law of the first L tokens matches exact enumeration (chi-square at ALPHA)."""
    pair = tiny_head_lookup_pair()
    r = SpeculativeEngine().generate(pair, PROMPT, max_new_tokens=40, gamma=2, seed=0)
    kinds = {"lookup" if all(q == 1.0 for q in s.q_drafted) else "head" for s in r.steps if s.gamma}
    assert kinds == {"lookup", "head"}, kinds  # one-hot q rows (lookup's runs) and the head's own q
    assert law_pvalue(pair, None, 2, 1500, seed=7) > ALPHA
