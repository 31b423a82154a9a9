"""Draft trees in a session: `feed_tree` reads a whole tree in one forward, `keep_path` keeps one path.

Every row of `feed_tree` is compared with the uncached reference `HFModel.full_logits` over the
prefix and the path down to that node (fp32, atol 1e-4: cached and uncached sums differ by ~1e-5),
for GPT-2 (the bundled target with its default attention, a tiny GPT-2 with eager attention) and
Llama (tiny random ones with SDPA and eager attention; SmolLM2 when it has been fetched), for several
tree shapes, read at once and level by level. After `keep_path` the session must equal a fresh one
over prefix + path. Planted bugs (a node that sees its siblings, position ids off, a cache that keeps
a rejected branch) show that the comparisons bite. The n-gram toy is compared exactly with
`probs_for`. The Makefile's test-floor runs this file on the lowest transformers too. Seeded: deterministic.
"""

import random
import re
import sys
from pathlib import Path

import pytest
import torch

import specviz.lm.trees.attention as tree_attention
from specviz.lm import HFModel, NGramModel, load_pair
from specviz.lm.engine.models import transformers_version
from specviz.lm.engine.static_cache import StaticHFModel
from specviz.lm.load import catalog
from specviz.lm.trees.attention import keep_cache_path, path_to

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lm_fixtures import tiny_checkpoint  # noqa: E402

TOL = 1e-4
BUG = 1e-2  # a planted bug moves the logits by far more than this
SHAPES = {"branching-3-2-1": (3, 2, 1), "binary-2-2-2": (2, 2, 2), "chain-1-1-1": (1, 1, 1), "single": (1,)}
MODELS = ["bundled", "tiny-gpt2-eager", "tiny-llama-sdpa", "tiny-llama-eager"]


def tiny_llama(attn):
    from transformers import AutoModelForCausalLM, LlamaConfig

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
    model = AutoModelForCausalLM.from_config(cfg, attn_implementation=attn).eval()
    with torch.no_grad():  # transformers' init is near zero: give the logits some spread
        for p in model.parameters():
            p.add_(torch.randn(p.shape) * 0.1)
    return HFModel(model, f"tiny-llama-{attn}")


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    from transformers import AutoModelForCausalLM

    folder = tiny_checkpoint(tmp_path_factory.mktemp("tiny-gpt2"), layers=2, width=32, seed=3, positions=64)
    gpt2 = AutoModelForCausalLM.from_pretrained(folder, attn_implementation="eager").eval()
    return {
        "bundled": load_pair(device="cpu", progress=False).target,
        "tiny-gpt2-eager": HFModel(gpt2, "tiny-gpt2-eager"),
        "tiny-llama-sdpa": tiny_llama("sdpa"),
        "tiny-llama-eager": tiny_llama("eager"),
    }


def random_levels(shape, seed, vocab=256):
    """A random tree, level by level: each level a list of (token, parent), parents indexing all earlier nodes."""
    rng = random.Random(seed)
    levels, frontier, n = [], [-1], 0
    for width in shape:
        level = [(rng.randrange(vocab), p) for p in frontier for _ in range(width)]
        frontier = list(range(n, n + len(level)))
        n += len(level)
        levels.append(level)
    return levels


def flatten(levels):
    nodes = [node for level in levels for node in level]
    return [t for t, _ in nodes], [p for _, p in nodes]


def prompt(seed, n=7):
    rng = random.Random(seed + 100)
    return [rng.randrange(256) for _ in range(n)]


def read_tree(session, levels, at_once=True):
    """Feed the tree at once or one level per call; return all the rows."""
    if at_once:
        return session.feed_tree(*flatten(levels))
    return torch.cat([session.feed_tree(*flatten([level])) for level in levels])


def tree_error(model, prefix, levels, at_once=True):
    """Largest |feed_tree row - full_logits(prefix + path to the node)| over the tree's nodes."""
    s = model.session(prefix)
    committed = s.next_logits.clone()
    rows = read_tree(s, levels, at_once)
    ids, parents = flatten(levels)
    assert rows.shape == (len(ids), model.vocab_size)
    assert s.length == len(prefix) and s.tree_parents == tuple(parents)
    assert torch.equal(s.next_logits, committed)  # the committed tokens' logits are untouched
    worst = 0.0
    for node in range(len(ids)):
        ref = model.full_logits(prefix + [ids[j] for j in path_to(parents, node)])[-1]
        worst = max(worst, (rows[node] - ref).abs().max().item())
    return worst


def keep_error(model, prefix, levels, path, give_logits, follow=17):
    """Largest gap between a session after keep_path(path) (then a feed) and the uncached reference."""
    s = model.session(prefix)
    rows = s.feed_tree(*flatten(levels))
    ids, _ = flatten(levels)
    kept = [ids[j] for j in path]
    s.keep_path(path, rows[path[-1]] if give_logits and path else None)
    assert s.tree_parents == () and s.length == len(prefix) + len(path) and s.tokens == prefix + kept
    ref = model.full_logits(prefix + kept + [follow])
    worst = (s.next_logits - ref[-2]).abs().max().item()
    return max(worst, (s.feed([follow])[0] - ref[-1]).abs().max().item())


def leaf_paths(levels):
    """The path to every leaf, and to one inner node."""
    _, parents = flatten(levels)
    leaves = [n for n in range(len(parents)) if n not in parents]
    return [path_to(parents, n) for n in leaves] + [path_to(parents, leaves[-1])[:-1]]


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("shape", SHAPES)
def test_every_row_of_a_tree_equals_the_uncached_forward_of_its_path(models, name, shape):
    model, levels = models[name], random_levels(SHAPES[shape], seed=len(shape))
    assert tree_error(model, prompt(1), levels) < TOL
    if len(levels) > 1:  # grown level by level, as a draft drafts it
        assert tree_error(model, prompt(2), levels, at_once=False) < TOL


@pytest.mark.parametrize("name", MODELS)
def test_a_tree_read_depth_first_and_from_a_one_token_prompt(models, name):
    # the nodes in depth-first order: parents still come before children, siblings are far apart
    levels = [[(11, -1), (12, 0), (13, 1), (14, 1), (15, 0), (16, -1), (17, 5), (18, 5)]]
    assert tree_error(models[name], [3], levels) < TOL
    assert tree_error(models[name], prompt(3, n=20), levels) < TOL


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("shape", ["branching-3-2-1", "binary-2-2-2", "chain-1-1-1"])
def test_keep_path_leaves_the_session_of_prefix_plus_path(models, name, shape):
    model, levels = models[name], random_levels(SHAPES[shape], seed=7)
    for i, path in enumerate(leaf_paths(levels) + [[]]):
        assert keep_error(model, prompt(i), levels, path, give_logits=i % 2 == 0) < TOL, path


@pytest.mark.parametrize("name", MODELS)
def test_rounds_of_tree_then_path_stay_exact(models, name):
    # what verification does step after step: a tree, one path kept, a correction fed, the next tree
    model, rng = models[name], random.Random(5)
    seq = prompt(5)
    s = model.session(seq)
    for step in range(4):
        levels = random_levels((2, 2, 1), seed=step)
        rows = read_tree(s, levels, at_once=step % 2 == 0)
        ids, parents = flatten(levels)
        path = path_to(parents, rng.randrange(len(ids)))[: rng.randrange(4)]
        s.keep_path(path, rows[path[-1]] if path and step < 2 else None)
        seq += [ids[j] for j in path]
        assert s.tokens == seq
        assert (s.next_logits - model.full_logits(seq)[-1]).abs().max().item() < TOL
        seq.append(rng.randrange(256))
        s.feed(seq[-1:])
    assert (s.next_logits - model.full_logits(seq)[-1]).abs().max().item() < TOL


def test_ids_fed_as_tensors_are_kept_as_tensors_until_tokens_is_read(models):
    model = models["bundled"]
    s = model.session([72, 101])
    rows = s.feed_tree(torch.tensor([108, 108, 111]), [-1, 0, -1])
    s.feed_tree(torch.tensor([33], dtype=torch.int32), [1])
    s.keep_path([0, 1, 3], None)
    assert s.length == 5 and s.tree_parents == ()
    assert s.tokens == [72, 101, 108, 108, 33]
    ref = model.full_logits([72, 101, 108, 108, 33])
    assert (s.next_logits - ref[-1]).abs().max().item() < TOL
    assert (rows[1] - ref[-2]).abs().max().item() < TOL


# ------------------------------------------------------------------------------ planted bugs


def sees_siblings(real):
    def mask(parents, n_new, committed, dtype, device):
        m = real(parents, n_new, committed, dtype, device)
        for row, node in enumerate(range(len(parents) - n_new, len(parents))):
            for other, p in enumerate(parents):
                if p == parents[node]:
                    m[0, 0, row, committed + other] = 0
        return m

    return mask


def all_at_the_root(parents, n_new, committed, device):
    return torch.full((1, n_new), committed, dtype=torch.long, device=device)


@pytest.mark.parametrize("name", MODELS)
def test_planted_a_node_seeing_its_siblings_is_caught(models, name, monkeypatch):
    model, levels = models[name], random_levels((3, 2, 1), seed=3)
    assert tree_error(model, prompt(1), levels) < TOL
    monkeypatch.setattr(tree_attention, "tree_mask", sees_siblings(tree_attention.tree_mask))
    assert tree_error(model, prompt(1), levels) > BUG


@pytest.mark.parametrize("name", MODELS)
def test_planted_position_ids_off_are_caught(models, name, monkeypatch):
    model, levels = models[name], random_levels((2, 2, 2), seed=3)
    monkeypatch.setattr(tree_attention, "tree_positions", all_at_the_root)
    assert tree_error(model, prompt(1), levels) > BUG
    monkeypatch.setattr(
        tree_attention, "tree_positions", lambda parents, n, committed, device: torch.full((1, n), committed + 1)
    )
    assert tree_error(model, prompt(1), [[(5, -1)]]) > BUG  # one node, one position too far


@pytest.mark.parametrize("name", MODELS)
def test_planted_a_cache_keeping_a_rejected_branch_is_caught(models, name, monkeypatch):
    model, levels = models[name], random_levels((3, 2, 1), seed=3)
    _, parents = flatten(levels)
    path = path_to(parents, len(parents) - 1)  # the last leaf: its branch's first node has two elder siblings
    assert keep_error(model, prompt(1), levels, path, give_logits=True) < TOL

    def keeps_a_sibling(self, path):  # the first node of the branch swapped for a rejected sibling
        keep_cache_path(self.cache, self.length, [0, *path[1:]], len(self.tree_parents))

    monkeypatch.setattr(type(model.session([1])), "_keep_path", keeps_a_sibling)
    assert keep_error(model, prompt(1), levels, path, give_logits=True) > BUG
    assert keep_error(model, prompt(1), levels, path, give_logits=False) > BUG


# ------------------------------------------------------------------------------ refusals


def test_misuse_is_refused_in_one_line(models):
    s = models["tiny-llama-sdpa"].session([1, 2, 3])
    with pytest.raises(ValueError, match="parent 1: give -1"):
        s.feed_tree([5, 6], [-1, 1])
    with pytest.raises(ValueError, match="2 token ids but 1 parents"):
        s.feed_tree([5, 6], [-1])
    with pytest.raises(TypeError, match="1-D integer tensor"):
        s.feed_tree(torch.tensor([[5]]), [-1])
    assert s.feed_tree([], []).shape == (0, 257) and s.tree_parents == ()
    s.feed_tree([5, 6, 7], [-1, -1, 0])
    with pytest.raises(ValueError, match="call keep_path first"):
        s.feed([9])
    for bad in ([2], [1, 2], [0, 1], [3]):  # not a chain down from a child of the root, or no such node
        with pytest.raises(ValueError, match="keep_path takes a chain"):
            s.keep_path(bad)
    s.truncate(2)  # drops the tree, then the last committed token
    assert s.tree_parents == () and s.tokens == [1, 2]
    assert (s.next_logits - models["tiny-llama-sdpa"].full_logits([1, 2])[-1]).abs().max().item() < TOL


def test_a_static_cache_refuses_a_tree(models):
    s = StaticHFModel(models["tiny-llama-sdpa"].model, "tiny-static", max_length=32).session([1, 2])
    with pytest.raises(ValueError, match="static KV cache cannot read a draft tree.*dynamic cache"):
        s.feed_tree([5], [-1])


@pytest.mark.parametrize(
    "attr, value, why",
    [
        ("_attn_implementation", "flash_attention_2", "its flash_attention_2 attention takes no dense 4-D mask"),
        ("sliding_window", 16, "its sliding-window attention"),
    ],
)
def test_a_model_that_cannot_take_a_tree_mask_says_so(models, monkeypatch, attr, value, why):
    model = models["tiny-llama-sdpa"]
    s = model.session([1, 2])
    monkeypatch.setattr(model.model.config, attr, value, raising=False)
    expected = f"transformers {transformers_version()}: LlamaForCausalLM cannot verify a draft tree: {why}"
    with pytest.raises(ValueError, match=re.escape(expected)) as err:
        s.feed_tree([5], [-1])
    assert "\n" not in str(err.value) and s.tree_parents == ()


def test_a_tree_past_the_context_is_refused(models):
    s = models["tiny-gpt2-eager"].session(list(range(62)))
    with pytest.raises(ValueError, match="position 64 is past its 64 positions"):
        s.feed_tree([1, 2, 3], [-1, 0, 1])


# ------------------------------------------------------------------------------ the n-gram toy and SmolLM2


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("at_once", [True, False])
def test_ngram_tree_rows_and_kept_paths_are_exact(shape, at_once):
    lm = NGramModel.random(vocab_size=5, order=3, seed=len(shape))
    levels = random_levels(SHAPES[shape], seed=2, vocab=5)
    ids, parents = flatten(levels)
    for path in leaf_paths(levels) + [[]]:
        s = lm.session([1, 4])
        rows = read_tree(s, levels, at_once)
        for node in range(len(ids)):
            want = lm.probs_for([1, 4] + [ids[j] for j in path_to(parents, node)])
            assert torch.allclose(rows[node].exp(), torch.from_numpy(want), atol=1e-12)
        s.keep_path(path)
        hist = [1, 4] + [ids[j] for j in path]
        assert s.tokens == hist and s.tree_parents == ()
        assert torch.allclose(s.next_logits.exp(), torch.from_numpy(lm.probs_for(hist)), atol=1e-12)
        assert torch.allclose(s.feed([3])[0].exp(), torch.from_numpy(lm.probs_for(hist + [3])), atol=1e-12)


@pytest.mark.slow
def test_smollm2_tree_rows_and_kept_path():
    if catalog.local_path("smollm2-135m") is None:
        pytest.skip("SmolLM2 is not fetched (make models)")
    model = load_pair("smollm2-135m", "smollm2-135m", device="cpu", hf_progress=False).target
    levels = random_levels((3, 2, 1), seed=1, vocab=5000)
    assert tree_error(model, prompt(1), levels) < TOL
    assert tree_error(model, prompt(2), levels, at_once=False) < TOL
    _, parents = flatten(levels)
    assert keep_error(model, prompt(3), levels, path_to(parents, 13), give_logits=False) < TOL
