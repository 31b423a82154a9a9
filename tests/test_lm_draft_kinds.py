"""One draft interface (`specviz.lm.drafts`): a toy kind registered here runs through the engine's one chain step
and one tree step, with no edit to them, and is exact.

The toy kind reads the target's features (`Draft.features = True`): its q after a token is a fixed
function of that token and of the target's last-layer features at the last position the target
kept (the n-gram toy's features are a fixed random embedding of the token read). The q is a
function of the past only, so the output must follow the target's law. Goodness-of-fit checks are
chi-square tests at ALPHA = 1e-4 with fixed seeds (a correct engine fails one with probability
1e-4 over random seeds, this file's 4 together under 4e-4), against exact enumeration of the
target's law of the first L = 3 tokens (`test_lm_tree_engine.law_pvalue`, the toy trigram pair).
"""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from test_lm_tree_engine import PROMPT, law_pvalue, toy_pair  # noqa: E402

from specviz.lm import (  # noqa: E402
    NGramModel,
    Pair,
    PromptLookupModel,
    SpeculativeEngine,
    autoregressive_generate,
    speculative_generate,
)
from specviz.lm.drafts import BUILT, KINDS, Draft, Proposal, draft_for, register  # noqa: E402
from specviz.lm.drafts.base import chain_parents  # noqa: E402
from specviz.lm.drafts.lookup import LookupDraft  # noqa: E402
from specviz.lm.drafts.model import ModelDraft  # noqa: E402
from specviz.lm.engine.features import TOY_FEATURES, toy_features  # noqa: E402
from specviz.lm.engine.logits import probs_on_device  # noqa: E402
from specviz.lm.engine.models import LanguageModel  # noqa: E402
from specviz.lm.gamma.adaptive import AutoGamma  # noqa: E402
from specviz.lm.stats.run import compare  # noqa: E402

ALPHA = 1e-4
V = 3
GEN = torch.Generator().manual_seed(7)
W_TOKEN = torch.randn((V, V), generator=GEN)  # logits after a token: W_TOKEN[token] + features @ W_FEATURE
W_FEATURE = 2.0 * torch.randn((TOY_FEATURES, V), generator=GEN)


class FeatureDraft(Draft):
    """Proposes from q(. | token, f) = softmax(W_TOKEN[token] + f @ W_FEATURE), f the target's last kept features."""

    features = True
    seen: list = []  # (the token at the last kept position, the features the engine gave for it), every step
    prompts: list = []  # the prompt's features, as `start` was given them, every run

    def __init__(self, session):
        super().__init__(session)
        self.prompt = list(session or ())  # (the toy model's session is its prompt; None in a test of the picking)
        self.last = torch.zeros(TOY_FEATURES)  # `start` sets it: the features at the prompt's last token

    def start(self, features) -> None:
        FeatureDraft.prompts.append((self.prompt, features))
        self.last = features[-1].float().cpu()

    def logits(self, tokens: torch.Tensor) -> torch.Tensor:
        return W_TOKEN[tokens] + self.last @ W_FEATURE  # (n, V)

    def propose(self, seq, s, g, widths, gen) -> Proposal:
        shape = tuple(widths) if widths is not None and max(widths) > 1 else (1,) * g
        above = torch.tensor([seq[-1]])
        tokens, parents, q_rows, logit_rows, levels, nodes = [], [], [], [], [], [-1]
        for k in shape:
            logits = self.logits(above)  # (len(above), V)
            q = probs_on_device(logits, s)
            ids = torch.multinomial(q.float(), k, replacement=True, generator=gen).reshape(-1)
            level = [p for p in nodes for _ in range(k)]
            levels.append((len(parents), len(level)))
            nodes = list(range(len(parents), len(parents) + len(level)))
            parents += level
            tokens.append(ids)
            q_rows.append(q)
            logit_rows.append(logits if widths is not None and max(widths) > 1 else logits[0])
            above = ids
        tree = widths is not None and max(widths) > 1
        t = torch.cat(tokens) if tokens else torch.zeros(0, dtype=torch.long)
        return Proposal(
            t, parents if tree else chain_parents(g), q_rows, logit_rows, tree, shape, tuple(levels), len(seq)
        )

    def accept(self, proposal, path, features) -> None:
        if features is None or not len(features):
            return
        self.last = features[-1].float().cpu()
        token = int(proposal.tokens[path[-1]]) if path else None
        FeatureDraft.seen.append((token, features[-1]))

    def rollback(self, proposal, path, engine) -> None:
        """It keeps no cache: nothing to roll back."""


@pytest.fixture(autouse=True, scope="module")
def registered():
    """The toy kind, registered for this file's tests (one line, as a new kind's module has), then removed."""
    register("toy-features", FeatureDraft)
    yield
    del KINDS["toy-features"]


class FeatureDraftModel(LanguageModel):
    """A draft model with no weights of its own: the "toy-features" kind does the drafting."""

    draft_kind = "toy-features"
    vocab_size = V
    device = torch.device("cpu")
    max_positions = None
    name = "toy-features"

    def session(self, prompt_ids):
        return list(prompt_ids)


def toy_feature_pair() -> Pair:
    return Pair(toy_pair().target, FeatureDraftModel())


def test_the_kinds_are_registered_and_picked_by_the_model():
    assert {"model", "lookup", "toy-features"} <= set(KINDS)
    assert isinstance(draft_for(NGramModel.random(3, seed=0), None), ModelDraft)
    assert isinstance(draft_for(PromptLookupModel(vocab_size=3), None), LookupDraft)
    assert isinstance(draft_for(FeatureDraftModel(), None), FeatureDraft)
    with pytest.raises(ValueError, match="no draft kind 'nope'"):
        draft_for(type("M", (), {"draft_kind": "nope"})(), None)


def test_the_engine_steps_know_no_draft_kind():
    src = "".join(
        (Path(__file__).parents[1] / "specviz" / "lm" / "engine" / f).read_text() for f in ("loop.py", "tree_step.py")
    )
    for word in ("hasattr(D", "propose_run", "propose_tree", "LookupTrie", "_lookup", "PromptLookup"):
        assert word not in src, word


def test_the_toy_draft_reads_the_targets_features_at_the_last_kept_position():
    FeatureDraft.seen.clear()
    FeatureDraft.prompts.clear()
    r = SpeculativeEngine().generate(toy_feature_pair(), PROMPT, max_new_tokens=20, gamma=2, seed=0)
    [(prompt, features)] = FeatureDraft.prompts  # given once, before the first step: one row per prompt token
    assert prompt == r.prompt_ids and torch.equal(features, toy_features(r.prompt_ids, V))
    assert sum(s.accepted for s in r.steps) > 0, "the check needs accepted drafts"
    ids = r.prompt_ids + r.new_ids
    checked = 0
    for token, f in FeatureDraft.seen:
        if token is not None:
            assert torch.equal(f, toy_features([token], V)[0])
            checked += 1
    assert checked and len(ids) > len(PROMPT)


# ------------------------------------------------------------------------------ the contract, every kind

PAIRS = {  # every registered kind on the toy trigram target (V = 3)
    "model": toy_pair,
    "lookup": lambda: Pair(toy_pair().target, PromptLookupModel(V)),
    "toy-features": toy_feature_pair,
}
STEPS = {  # chain γ / tree shape and depth cap, and the choosers each is run with
    "chain γ1": (None, (1, "auto", 0)),
    "chain γ3": (None, (3, "auto", AutoGamma(max_gamma=2))),
    "chain γ8": (None, (8,)),
    "tree (2,)": ((2,), (1,)),
    "tree (3,2,1)": ((3, 2, 1), (3, None)),
    "tree k=2 depth 4": (2, (4,)),
    "tree (1,1)": ((1, 1), (2,)),
    "tree auto": ("auto", (None,)),
}
GREEDY_PROMPTS = ([1, 2], [2, 2, 0], [0, 1, 2, 0, 1, 2, 0])  # the last repeats: prompt lookup proposes


@pytest.mark.parametrize("step", STEPS)
@pytest.mark.parametrize("kind", PAIRS)
def test_greedy_output_equals_plain_greedy_decoding(kind, step):
    """The contract, on every draft kind x every step kind x every chooser: at temperature 0 the output is
    plain greedy decoding's, token for token (the one place this is checked on the toy pair; real models:
    test_lm_compat, test_lm_static_cache, test_lm_smollm2, test_lm_tree_engine against transformers)."""
    pair = PAIRS[kind]()
    tree, choosers = STEPS[step]
    assert type(draft_for(pair.draft, None)) is KINDS[kind]
    accepted = trees = 0
    for prompt in GREEDY_PROMPTS:
        plain = autoregressive_generate(pair, prompt, 24, temperature=0).new_ids
        for gamma in choosers:
            chooser = gamma if not isinstance(gamma, AutoGamma) else AutoGamma(max_gamma=2)  # a fresh one per run
            r = speculative_generate(pair, prompt, 24, chooser, temperature=0, tree=tree)
            assert r.new_ids == plain, (kind, step, gamma, prompt)
            assert sum(s.n_emitted for s in r.steps) == 24
            if gamma == 0:
                assert all(s.gamma == 0 for s in r.steps)
            accepted += sum(s.accepted for s in r.steps)
            trees += sum(s.tree is not None for s in r.steps)
    assert accepted > 0, f"{kind} {step}: no draft was ever accepted, the check saw only target steps"
    branches = tree is not None and tree != "auto" and (isinstance(tree, int) or max(tree) > 1)
    assert trees > 0 or not branches, f"{kind} {step}: no step verified a tree"


def test_a_run_through_compare_what_specviz_run_calls():
    out = compare(toy_feature_pair(), PROMPT, max_new_tokens=16, gamma=2, temperature=0, warmup_tokens=2)
    assert out["greedy_equal"] and len(out["ids"]) == 16
    out = compare(toy_feature_pair(), PROMPT, max_new_tokens=16, gamma=2, temperature=1.0, tree=(2, 2), seed=3)
    assert len(out["ids"]) == 16


@pytest.mark.slow  # 2,000 generations each
@pytest.mark.parametrize(
    "tree,gamma,sampling", [(None, 2, {}), (None, 3, {"top_k": 2}), ((2, 2), 2, {}), ((2, 2, 1), 3, {"top_p": 0.8})]
)
def test_output_law_matches_exact_enumeration(tree, gamma, sampling):
    p = law_pvalue(SpeculativeEngine(), toy_feature_pair(), tree, gamma, 2000, seed=5, **sampling)
    assert p >= ALPHA, f"tree {tree} γ {gamma} {sampling}: p-value {p:.3g}"


@pytest.mark.slow  # the live view's first run
def test_the_live_view_runs_the_toy_kind():
    from specviz.widgets.live import app as L

    app = L.live_app(toy_feature_pair(), prompt="0", max_new_tokens=8, ar_baseline=False)
    app.gamma.value, app.tree.value = 2, "2"
    r = app.generate(blocking=True)
    assert len(r.new_ids) == 8 and any(s.tree is not None for s in r.steps)


@pytest.mark.slow  # the bundled target, loaded, and a CLI run
def test_a_built_kind_loads_by_name_and_is_offered_in_the_live_view():
    """`load_pair(draft=NAME)`, `specviz run --draft NAME` and the draft box read the registry: no edit to them."""
    from specviz.cli import main
    from specviz.lm import load_pair
    from specviz.widgets.live.models import draft_options

    built = []

    def build(target, vocab_size):  # a unigram draft over the target's vocabulary
        built.append(vocab_size)
        return NGramModel.random(vocab_size, order=1, seed=0, name="toy-built")

    register("model", ModelDraft, "toy-built", build, lambda d: f"a toy unigram over {d.vocab_size} tokens")
    try:
        pair = load_pair("bundled", "toy-built", device="cpu")
        assert pair.draft.name == "toy-built" and built == [pair.target.vocab_size]
        assert "toy-built" in draft_options()
        assert main(["run", "--draft", "toy-built", "--max-new-tokens", "4", "--device", "cpu", "--json"]) == 0
        with pytest.raises(ValueError, match="toy-built is a draft built from the target"):
            load_pair("toy-built", "bundled")
    finally:
        del BUILT["toy-built"]
