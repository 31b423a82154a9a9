"""Draft kinds: each one module holding a `Draft` (`base`), registered here by name; a draft model names its kind.

A model's `draft_kind` attribute (absent: "model") picks its kind when the engine starts a run.
A draft that is built from the target (prompt lookup; a head that reads the target's features)
also registers a `build(target, vocab_size)` under the name users type: `load_pair(draft=NAME)`,
`specviz run --draft NAME` and the live view's draft box then offer it. A new kind is one module
and one `register` line.

>>> {"model", "lookup"} <= set(KINDS), "prompt-lookup" in BUILT
(True, True)
>>> BUILT["prompt-lookup"].build(type("T", (), {"device": "cpu"})(), 50).vocab_size
50
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .base import ONE_HOT, Draft, Proposal, Summary
from .head_lookup import HeadLookupDraft, build_head_lookup
from .learned import HeadDraft, build_head
from .lookup import LookupDraft
from .model import ModelDraft
from .prompt_lookup import PromptLookupModel

__all__ = ["BUILT", "KINDS", "ONE_HOT", "Built", "Draft", "Proposal", "Summary", "draft_for", "register"]

KINDS: dict[str, type[Draft]] = {}
"""Draft kind name -> its `Draft` class."""


@dataclass(frozen=True)
class Built:
    """A draft built from the loaded target: `build(target, vocab_size)` -> a LanguageModel, and a line saying what."""

    build: Callable  # (target LanguageModel, the pair's shared vocabulary size) -> the draft LanguageModel
    describe: Callable  # the built draft -> one line for the loading log


BUILT: dict[str, Built] = {}
"""The draft names `load_pair` builds from the target (not a file, a hub id or a catalogue model)."""


def register(name: str, kind: type[Draft], built: str | None = None, build=None, describe=None) -> type[Draft]:
    """Make `kind` the draft of every draft model whose `draft_kind` is `name`; with `built`, also the name
    `load_pair(draft=built)` builds one from the target with `build(target, vocab_size)`."""
    KINDS[name] = kind
    if built is not None:
        BUILT[built] = Built(build, describe or (lambda draft: built))
    return kind


def draft_for(model, session) -> Draft:
    """The draft kind `model` names (`model.draft_kind`, "model" without one), around its `session`."""
    name = getattr(model, "draft_kind", "model")
    if name not in KINDS:
        raise ValueError(f"no draft kind {name!r} is registered (known: {', '.join(sorted(KINDS))})")
    return KINDS[name](session)


register("model", ModelDraft)
register(
    "lookup",
    LookupDraft,
    "prompt-lookup",
    lambda target, vocab_size: PromptLookupModel(vocab_size, device=target.device),
    lambda d: (
        f"prompt lookup over the target's {d.vocab_size} tokens (suffixes of {d.max_ngram} to {d.min_ngram} tokens)"
    ),
)
register(
    "head",
    HeadDraft,
    "smollm2-head",
    build_head,
    lambda d: f"a learned EAGLE-style head over the target's features ({len(d.ids)}-token vocabulary)",
)
register(
    "head+lookup",
    HeadLookupDraft,
    "smollm2-head+lookup",
    build_head_lookup,
    lambda d: f"prompt lookup where the text repeats, else the learned head ({len(d.ids)}-token vocabulary)",
)
