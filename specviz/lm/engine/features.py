"""A target's features for a draft that reads them: its last decoder layer's output, before the final norm.

A session whose `read_features` is True keeps, after each read, `features`: (k, H), one row per
position it read (`feed` or `feed_tree`). A Hugging Face model gives them through a forward hook
on its last decoder layer, registered for that one forward only (`reading`): a session that is
not asked pays nothing. The layer's output is taken, not transformers' `hidden_states[-1]`, which
for Llama-type models comes after the final norm. The n-gram toy's features are a fixed random
embedding of each token read (`toy_features`), so a feature-reading draft can be tested exactly.

>>> toy_features([2, 0], vocab_size=3).shape
torch.Size([2, 4])
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import torch

__all__ = ["TOY_FEATURES", "last_layer", "reading", "toy_features"]

TOY_FEATURES = 4  # the n-gram toy's feature width
LAYER_LISTS = ("model.layers", "transformer.h", "gpt_neox.layers", "model.decoder.layers")  # where models keep them


def toy_features(ids, vocab_size: int) -> torch.Tensor:
    """(len(ids), TOY_FEATURES) float32: a fixed random embedding of each token (seed 0, the same for every toy)."""
    table = torch.from_numpy(np.random.default_rng(0).standard_normal((vocab_size, TOY_FEATURES))).float()
    return table[torch.as_tensor(ids, dtype=torch.long).cpu()]


def last_layer(hf_model) -> torch.nn.Module:
    """The last decoder layer of a Hugging Face causal LM (a ValueError names where it was looked for)."""
    for where in LAYER_LISTS:
        obj = hf_model
        for part in where.split("."):
            obj = getattr(obj, part, None)
        if obj is not None and len(obj):
            return obj[-1]
    raise ValueError(f"{type(hf_model).__name__}: no decoder layers found at {', '.join(LAYER_LISTS)}")


@contextmanager
def reading(hf_model, session):
    """Around one forward of `hf_model`: if `session.read_features`, set `session.features` to its last layer's output.

    The hook is registered for this forward only and removed after it; without `read_features` nothing is.
    """
    if not session.read_features:
        yield
        return
    box = []
    hook = lambda module, args, out: box.append(out[0] if isinstance(out, tuple) else out)  # noqa: E731
    handle = last_layer(hf_model).register_forward_hook(hook)
    try:
        yield
    finally:
        handle.remove()
    if box:
        session.features = box[-1].reshape(-1, box[-1].shape[-1])  # (k, H): batch 1
