"""The learned head and prompt lookup as one draft: each step, lookup's run where the text repeats, else the head.

`load_pair("smollm2-135m", draft="smollm2-head+lookup")`. Before each step the lookup looks
(`LookupDraft.summary`, no target read, no randomness): if it found a run (its context agrees
with the text for at least `MIN_MATCH` tokens), the step drafts that run (q one-hot) and
gamma="auto" weighs it as prompt lookup's; otherwise the head drafts from its own q (a chain,
or its top-k tree) and gamma="auto" weighs it as a model draft's. The choice is a
function of the text so far, made before anything is drawn, so each step is a valid draft of one
kind or the other and the output keeps the target's law (the module doc of
`specviz.lm.drafts.base`). The head is given the target's features at every step, lookup's
too, so its cache stays whole; each kind rolls back its own state.

>>> from specviz.lm.drafts import BUILT, KINDS
>>> "smollm2-head+lookup" in BUILT and "head+lookup" in KINDS
True
"""

from __future__ import annotations

from types import SimpleNamespace

from .base import Summary
from .learned import HeadDraft, HeadModel, build_head
from .lookup import LookupDraft
from .prompt_lookup import PromptLookupModel

__all__ = ["MIN_MATCH", "HeadLookupDraft", "HeadLookupModel", "build_head_lookup"]

MIN_MATCH = 1
"""A lookup run is drafted when its context agrees with the text for this many tokens (fewer: the head drafts).

Measured greedy on SmolLM2 (80 tokens, best of 2, gamma="auto", speed-ups over plain): with 1, copy / edit / code
4.36 / 3.18 / 1.50x against prompt lookup's 4.25 / 2.99 / 1.50x and the head's 0.97 / 1.02 / 1.05x; with 3,
4.66 / 2.47 / 1.22x against lookup's 5.00 / 2.80 / 1.43x (the head took the steps where a short match would
have paid). On free text (no run) the two agree: 0.99x, lookup 0.98x, the head 0.88x."""


class HeadLookupModel(HeadModel):
    """The learned head with a prompt-lookup index beside it (`HeadLookupDraft` picks one per step)."""

    draft_kind = "head+lookup"

    def __init__(self, target, head, vocab_size: int, name: str = "smollm2-head+lookup"):
        super().__init__(target, head, vocab_size, name)
        self.lookup = PromptLookupModel(vocab_size, device=self.device)

    def session(self, prompt_ids, read_features: bool = False):
        return SimpleNamespace(model=self, prompt=list(prompt_ids), lookup=self.lookup.session(prompt_ids))


class HeadLookupDraft(HeadDraft):
    """Each step: prompt lookup's run when its context agrees for `MIN_MATCH` tokens, else the head's draft."""

    def __init__(self, session):
        super().__init__(session)
        self.lookup = LookupDraft(session.lookup)
        self.looked = None  # this step's lookup summary, when its run is the one drafted

    def summary(self, seq, limit, widths, eos) -> Summary | None:
        found = self.lookup.summary(seq, limit, widths, eos)
        self.looked = found if found.proposes and (found.match or 0) >= MIN_MATCH else None
        return self.looked  # None: the head drafts, and gamma="auto" treats the step as a model draft's

    def propose(self, seq, s, g, widths, gen):
        if self.looked is not None:
            self.looked = None
            proposal = self.lookup.propose(seq, s, g, widths, gen)
            proposal.state = "lookup"
            return proposal
        self.lookup.run = self.lookup.trie = None
        return super().propose(seq, s, g, widths, gen)

    def rollback(self, proposal, path, engine) -> None:
        if proposal.state == "lookup":
            self.lookup.rollback(proposal, path, engine)
        else:  # the head's drafted entries cropped (a lookup step left none)
            super().rollback(proposal, path, engine)


def build_head_lookup(target, vocab_size: int) -> HeadLookupModel:
    """The bundled SmolLM2 head with prompt lookup over a loaded target (`Built.build`)."""
    head = build_head(target, vocab_size)  # its checks: a Hugging Face target, the bundled weights, the width
    return HeadLookupModel(target, head.head, vocab_size)
