"""A target session's features (specviz/lm/engine/features.py): its last decoder layer's output, before the final norm.

The reference is transformers' own uncached forward with `output_hidden_states=True`, whose last
entry for GPT-2 and Llama comes after the final norm: the session's features, put through that
norm, must equal it (1e-4: float32 activations of these models are O(1)). Checked for the cached
Hugging Face session and the static-cache session on chains, and the tree forward (each node
against the uncached forward over its own path; a static cache reads no tree), on a GPT-2 and a
Llama model, and the prompt's rows when a session is asked from the start. A session not asked registers no hook
(counted), and keeps no features.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from specviz.lm import HFModel  # noqa: E402
from specviz.lm.engine.features import last_layer  # noqa: E402
from specviz.lm.engine.static_cache import StaticHFModel  # noqa: E402
from specviz.lm.trees.attention import tree_paths  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_lm_static_cache import tiny_gpt2, tiny_llama  # noqa: E402, F401, F811 - the same two models (fixtures)

TOL = 1e-4
PROMPT = [72, 101, 108, 108, 111]


def final_norm(model):
    """The norm between the last decoder layer and the LM head (GPT-2's ln_f, Llama's norm)."""
    base = getattr(model, "transformer", None) or model.model
    return getattr(base, "ln_f", None) or base.norm


def normed_reference(model, ids) -> torch.Tensor:
    """(len(ids), H): transformers' last hidden states (after the final norm), one uncached forward."""
    with torch.no_grad():
        return model(torch.tensor([ids]), output_hidden_states=True).hidden_states[-1][0]


def normed(model, features) -> torch.Tensor:
    with torch.no_grad():
        return final_norm(model)(features)


@pytest.mark.parametrize("name", ["tiny_gpt2", "tiny_llama"])
@pytest.mark.parametrize("wrap", [HFModel, StaticHFModel], ids=["hf", "static"])
def test_features_are_the_last_layer_before_the_norm_on_chains_and_trees(request, name, wrap):
    model = request.getfixturevalue(name)
    lm = wrap(model, name)
    s = lm.session(PROMPT[:1])
    s.read_features = True
    s.feed(PROMPT[1:])
    assert s.features.shape == (len(PROMPT) - 1, model.config.hidden_size)
    want = normed_reference(model, PROMPT)[1:]
    assert (normed(model, s.features) - want).abs().max() < TOL
    # before the norm, not after it: the raw features differ from transformers' last hidden state
    assert (s.features - want).abs().max() > 10 * TOL
    # asked at the start (what the engine does for a draft that reads features): the prompt's rows too
    whole = lm.session(PROMPT, read_features=True)
    assert whole.features.shape == (len(PROMPT), model.config.hidden_size)
    assert (normed(model, whole.features) - normed_reference(model, PROMPT)).abs().max() < TOL
    if wrap is StaticHFModel:  # (a static cache reads no tree: trees run on HFModel's dynamic cache)
        return
    # a tree of 5 nodes under the text: each node's features are its own path's
    ids, parents = [40, 41, 42, 43, 44], [-1, -1, 0, 0, 2]
    s.feed_tree(torch.tensor(ids), parents)
    assert s.features.shape == (len(ids), model.config.hidden_size)
    for node, path in enumerate(tree_paths((ids,), parents, len(ids))):
        want = normed_reference(model, PROMPT + path)[-1]
        assert (normed(model, s.features[node]) - want).abs().max() < TOL, node


def test_a_session_not_asked_registers_no_hook_and_keeps_nothing(tiny_gpt2, monkeypatch):  # noqa: F811
    layer = last_layer(tiny_gpt2)
    registered = []
    real = type(layer).register_forward_hook

    def counting(self, *args, **kwargs):
        registered.append(self)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(type(layer), "register_forward_hook", counting)
    hooks = dict(layer._forward_hooks)  # (transformers keeps hooks of its own there)
    s = HFModel(tiny_gpt2, "gpt2").session(PROMPT)
    s.feed([40, 41])
    s.feed_tree(torch.tensor([1, 2]), [-1, 0])
    s.keep_path([0])
    assert registered == [] and s.features is None
    s.read_features = True
    s.feed([42])
    assert registered == [layer] and s.features.shape == (1, tiny_gpt2.config.hidden_size)
    assert dict(layer._forward_hooks) == hooks  # ours removed after its forward


def test_a_model_without_decoder_layers_is_named():
    with pytest.raises(ValueError, match="no decoder layers found"):
        last_layer(torch.nn.Linear(2, 2))
