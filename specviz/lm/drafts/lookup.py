"""Prompt lookup's draft (`specviz.lm.drafts.prompt_lookup`): the lookup runs in `summary`, before the γ chooser decides.

`summary` reads the pending tokens into the session's index and looks once: for a chain step its
best run (`propose_run`, cut after an end token), for a tree step its trie of candidate runs
(`propose_tree`, `specviz.lm.drafts.lookup_trie`) at the widest shape the step may take. The chooser sees
how many tokens that is and the run's agreement with the text (`Summary.match`). `propose` then
cuts what was found to the chosen γ or shape: a trie cut to a chain is a chain. Its q is one-hot
(`ONE_HOT`): each node's q is the point mass on its own token, chosen from the history before the
target is read. The session read no drafted node, so nothing is rolled back: it reads the emitted
tokens at its next lookup.
"""

from __future__ import annotations

import torch

from .base import ONE_HOT, Draft, Proposal, Summary, chain_parents
from .lookup_trie import until_end

__all__ = ["LookupDraft"]


class LookupDraft(Draft):
    """A prompt-lookup session (`propose_run`, `propose_tree`, `read`): one lookup proposes a whole run or trie."""

    run = trie = None  # this step's lookup, from `summary`

    def summary(self, seq, limit, widths, eos) -> Summary:
        D = self.session
        D.read(seq[D.length :])
        if widths is None:  # a chain run
            run, match = D.propose_run(limit)
            self.run, self.trie = until_end(run, eos), None
        else:
            self.trie, match = D.propose_tree(limit, widths, eos)
            self.run = self.trie.run
        return Summary(len(self.run), match)

    def propose(self, seq, s, g, widths, gen) -> Proposal:
        run, trie, self.run, self.trie = self.run, self.trie, None, None
        dev = getattr(self.session.model, "device", None) or "cpu"
        if run is None or g == 0:
            run = []
        elif trie is not None and widths is not None:  # the trie cut to the step's shape
            trie = trie.cut(widths)
            if trie.chain is None:
                tokens = torch.tensor(trie.tokens, dtype=torch.long, device=dev)
                return Proposal(tokens, list(trie.parents), ONE_HOT, [], True, trie.widths, trie.levels, len(seq))
            run = trie.chain
        else:
            run = run[:g]
        n = len(run)
        tokens = torch.tensor(run, dtype=torch.long, device=dev)
        return Proposal(
            tokens, chain_parents(n), ONE_HOT, [None], False, (1,) * n, tuple((j, 1) for j in range(n)), len(seq)
        )

    def rollback(self, proposal: Proposal, path: list, engine) -> None:
        if not proposal.tree:  # (the session read no node: the hook finds nothing to crop)
            engine.rollback(self.session, proposal.start + len(path), None)
