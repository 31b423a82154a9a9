"""Draft kinds: each one module holding a `Draft` (`base`), registered here by name; a draft model names its kind.

A model's `draft_kind` attribute (absent: "model") picks its kind when the engine starts a run;
a new kind is one module and one `register` line.
"""

from __future__ import annotations

from .base import ONE_HOT, Draft, Proposal, Summary
from .lookup import LookupDraft
from .model import ModelDraft

__all__ = ["KINDS", "ONE_HOT", "Draft", "Proposal", "Summary", "draft_for", "register"]

KINDS: dict[str, type[Draft]] = {}


def register(name: str, kind: type[Draft]) -> type[Draft]:
    """Make `kind` the draft of every draft model whose `draft_kind` is `name`."""
    KINDS[name] = kind
    return kind


def draft_for(model, session) -> Draft:
    """The draft kind `model` names (`model.draft_kind`, "model" without one), around its `session`."""
    name = getattr(model, "draft_kind", "model")
    if name not in KINDS:
        raise ValueError(f"no draft kind {name!r} is registered (known: {', '.join(sorted(KINDS))})")
    return KINDS[name](session)


register("model", ModelDraft)
register("lookup", LookupDraft)
