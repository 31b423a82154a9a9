"""Prompt-lookup drafting: a draft "model" that proposes what followed the last occurrence of the current suffix.

The draft needs no weights. The engine (its "lookup" draft kind, `specviz.lm.drafts.lookup`) asks a session for a whole run at once
(`propose_run`): the tokens that followed an earlier occurrence of the longest matching
suffix (3 tokens, else 2, else 1) — of its last 8 occurrences, the one whose context agrees
with the end of the text for longest — as many as the step may verify, in one dictionary
lookup and a short backward comparison. For a draft tree it asks for all of them at once
(`propose_tree`): the runs after each of those occurrences, merged into a trie
(`specviz.lm.drafts.lookup_trie`). Token by token (`feed`, `next_logits`, for other engines), after
reading t_1..t_n it takes the suffix (t_{n-2}, t_{n-1}, t_n), finds the most recent *earlier*
place where those three tokens occurred, and proposes the token that followed them there;
failing that it tries the last two tokens, then the last one. When nothing matches it has no proposal, and its
session's `next_logits` is None: the engine then stops drafting for that verify step (a
step with γ = 0 is a plain target step). On text that repeats its context (copying,
editing, quoting, code) most proposals are right and several tokens are accepted per
target forward pass; on free text it rarely matches and costs almost nothing.

This is the drafting that vLLM calls `ngram` (`speculative_config={"method": "ngram",
"prompt_lookup_max": 3, "prompt_lookup_min": 1}`) and transformers calls
`prompt_lookup_num_tokens` (`PromptLookupCandidateGenerator` in
src/transformers/generation/candidate_generator.py, transformers 5.24.0), after
A. Saxena's prompt-lookup decoding (github.com/apoorvumang/prompt-lookup-decoding). One
difference: transformers copies the block after the *first* (leftmost) match of the
longest n-gram (at most 2 tokens by default); here the block comes from the recent match
whose context agrees longest with the text, so a copy in progress follows the passage it is
copying, and the engine also learns how far the text has agreed (see `agreement`).

**Why the output is still exactly the target's distribution.** The draft distribution q
is one-hot: q(x) = 1 for the proposed token x, 0 elsewhere (its logits are 0 at x and
-inf elsewhere, which stays one-hot after any temperature, top-k or top-p). The
speculative rule with a one-hot q becomes:

* accept x with probability min(1, p(x) / q(x)) = p(x);
* on rejection, sample from (p - q)+ / Z: that is p with x removed, renormalised,
  p(y) / (1 - p(x)) for y != x.

So P(emit x) = p(x), and for y != x, P(emit y) = (1 - p(x)) * p(y) / (1 - p(x)) = p(y):
the emitted token has the target's distribution p, whatever the proposal was. Under
greedy decoding (temperature 0, p one-hot on argmax) a proposal is accepted exactly when
it is the target's argmax, so the output equals plain greedy decoding token for token.

>>> lm = PromptLookupModel(vocab_size=10)
>>> lm.propose([1, 2, 3, 9, 1, 2])     # "1 2" was followed by 3
3
>>> lm.propose([4, 5, 6]) is None      # no earlier occurrence of any suffix
True
>>> s = lm.session([1, 2, 3, 1, 2])
>>> s.proposal, int(s.next_logits.argmax())
(3, 3)
>>> s.propose_run(4)                   # the whole run after the matched "1 2", in one lookup
([3, 1, 2], 2)
>>> trie, match = lm.session([1, 2, 3, 1, 2, 4, 1, 2]).propose_tree(4, widths=(2, 2, 2))
>>> trie.run, trie.tokens, trie.parents   # "1 2" was followed by 3 and by 4: two branches
([3, 1, 2, 4], (3, 4, 1, 1, 2, 2), (-1, -1, 0, 1, 2, 3))
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from ..engine.models import LanguageModel, Session
from .lookup_trie import LookupTrie, until_end

if TYPE_CHECKING:
    from collections.abc import Sequence


class PromptLookupSession(Session):
    """One prompt-lookup draft reading one sequence; `next_logits` is one-hot on the proposal, or None."""

    def __init__(self, model: PromptLookupModel, prompt_ids):
        self.model = model
        self._ids: list[int] = []  # the history, always on the host (lookups need the values)
        self.next_logits = None
        self.proposal: int | None = None
        # n-gram tuple -> position of the token that followed its most recent occurrence
        self._follower: dict[tuple, int] = {}
        # n-gram tuple -> positions of the tokens that followed each of its occurrences, oldest first
        self._after: dict[tuple, list] = {}
        # per position t: the index entries set when token t was read, with their previous values (for truncate)
        self._undo: list[list] = []
        ids = _id_list(prompt_ids)
        if not ids:
            raise ValueError("the prompt is empty: give at least one token")
        for t in ids:
            self._read(t)
        self._update()

    @property
    def tokens(self) -> list:
        """The ids read so far."""
        return self._ids

    @property
    def length(self) -> int:
        """Number of tokens read so far."""
        return len(self._ids)

    def _read(self, token: int) -> None:
        """Index one host token id (checked against the vocabulary)."""
        if not 0 <= token < self.model.vocab_size:
            raise ValueError(
                f"token id {token} is outside the prompt-lookup draft's vocabulary of {self.model.vocab_size}"
            )
        t = len(self._ids)
        undo = []
        for n in range(self.model.min_ngram, self.model.max_ngram + 1):
            if t >= n:
                key = tuple(self._ids[t - n : t])
                undo.append((key, self._follower.get(key)))
                self._follower[key] = t
                self._after.setdefault(key, []).append(t)
        self._ids.append(token)
        self._undo.append(undo)

    def read(self, ids: Sequence[int]) -> None:
        """Read host token ids into the index only (no logits: what the engine calls before `propose_run`)."""
        for t in ids:
            self._read(int(t))
        if ids:
            self._update()

    def propose_run(self, limit: int) -> tuple[list, int | None]:
        """(up to `limit` proposed tokens, how far the text agrees with the source) in one lookup.

        The longest suffix (max_ngram tokens, then fewer) that occurred before selects the
        candidate places: the last 8 of its earlier occurrences. Of these, the one whose
        preceding tokens agree with the end of the history for longest wins (the "longest
        match first"; ties go to the longer run, then the most recent). The run is what
        followed it, and the second number is that agreement: how many tokens before the
        run equal the last tokens of the history (at least the suffix length, at most
        `AGREEMENT_CAP`). A long agreement means a copy in progress, which is what
        `AutoGamma` keys its acceptance estimate on. ([], None) when nothing matches.
        """
        ranked, match = self._ranked(limit)
        return (self._ids[ranked[0] : ranked[0] + limit], match) if ranked else ([], None)

    def propose_tree(self, limit: int, widths, eos=()) -> tuple[LookupTrie, int | None]:
        """(trie, match): every candidate run `propose_run` ranks, cut after an end token in `eos`, merged into a trie.

        The candidates are the runs (up to `limit` tokens) after the same last 8 occurrences of the
        longest matching suffix, best first as `propose_run` ranks them, so `trie.run` is its run and
        `match` its agreement. Occurrences of shorter suffixes are not added: each agrees with the text
        for fewer tokens than any occurrence of the longest, so it would rank below all of them.
        The trie keeps at most widths[d] children per node at depth d (see `LookupTrie.build`).
        """
        ranked, match = self._ranked(limit)
        return LookupTrie.build([until_end(self._ids[p : p + limit], eos) for p in ranked], widths), match

    def _ranked(self, limit: int) -> tuple[list, int | None]:
        """(the candidate runs' start positions, best first; the best one's agreement), ([], None) without a match."""
        toks = self._ids
        end = len(toks)
        for n in range(min(self.model.max_ngram, end), self.model.min_ngram - 1, -1):
            after = self._after.get(tuple(toks[-n:]))
            if after:
                # most recent first, and a stable sort: a tie keeps the most recent (every stored position is < end)
                key = lambda pos, n=n: (agreement(toks, pos, n), min(end - pos, limit))  # noqa: E731
                ranked = sorted(reversed(after[-8:]), key=key, reverse=True)
                return ranked, key(ranked[0])[0]
        return [], None

    def _lookup(self) -> int | None:
        toks = self._ids
        for n in range(min(self.model.max_ngram, len(toks)), self.model.min_ngram - 1, -1):
            pos = self._follower.get(tuple(toks[-n:]))
            if pos is not None:
                return toks[pos]
        return None

    def _update(self) -> None:
        self.proposal = self._lookup()
        self.next_logits = None if self.proposal is None else self.model.one_hot_logits(self.proposal)

    def feed(self, ids: Sequence[int] | torch.Tensor) -> torch.Tensor:
        """Read `ids`; return (len(ids), V) logits, row i one-hot on the proposal after ids[i].

        A row where there was no proposal is all zeros (a uniform q, which keeps any engine
        exact); `next_logits` is None in that case, which tells the engine to stop drafting.
        """
        ids = _id_list(ids)
        V = self.model.vocab_size
        rows = torch.zeros((len(ids), V), dtype=torch.float32, device=self.model.device)
        for i, t in enumerate(ids):
            self._read(t)
            x = self._lookup()
            if x is not None:
                rows[i].fill_(float("-inf"))
                rows[i, x] = 0.0
        if ids:
            self._update()
        return rows

    def truncate(self, length: int, next_logits: torch.Tensor | None = None) -> None:
        """Forget everything after the first `length` tokens (exact; the proposal is looked up again)."""
        if not 0 < length <= self.length:
            raise ValueError(f"cannot truncate a session of {self.length} tokens to {length}")
        while len(self._ids) > length:
            self._ids.pop()
            for key, prev in reversed(self._undo.pop()):
                after = self._after[key]
                after.pop()
                if not after:
                    del self._after[key]
                if prev is None:
                    del self._follower[key]
                else:
                    self._follower[key] = prev
        self._update()


class PromptLookupModel(LanguageModel):
    """A weightless draft: proposes the token that followed the most recent earlier occurrence of the suffix.

    The longest suffix tried has `max_ngram` tokens, the shortest `min_ngram`. Its q is
    one-hot, so acceptance is p(proposal) (see the module docstring for why that is exact).
    The engine drives it as the "lookup" draft kind (`specviz.lm.drafts.lookup`).
    """

    draft_kind = "lookup"

    def __init__(
        self, vocab_size: int, max_ngram: int = 3, min_ngram: int = 1, name: str = "prompt-lookup", device="cpu"
    ):
        if isinstance(vocab_size, bool) or int(vocab_size) != vocab_size or vocab_size < 1:
            raise ValueError(f"vocab_size must be a positive integer, got {vocab_size!r}")
        for label, n in (("max_ngram", max_ngram), ("min_ngram", min_ngram)):
            if isinstance(n, bool) or int(n) != n or n < 1:
                raise ValueError(f"{label} must be an integer >= 1, got {n!r}")
        if min_ngram > max_ngram:
            raise ValueError(f"min_ngram ({min_ngram}) must not exceed max_ngram ({max_ngram})")
        self.vocab_size = int(vocab_size)
        self.max_ngram = int(max_ngram)
        self.min_ngram = int(min_ngram)
        self.name = name
        self.device = torch.device(device)
        self.max_positions = None

    def one_hot_logits(self, token: int) -> torch.Tensor:
        """(V,) float32 logits: 0 at `token`, -inf elsewhere (a one-hot q after softmax)."""
        z = torch.full((self.vocab_size,), float("-inf"), dtype=torch.float32, device=self.device)
        z[token] = 0.0
        return z

    def propose(self, tokens: Sequence[int] | torch.Tensor) -> int | None:
        """The token that followed the most recent earlier occurrence of the longest matching suffix, or None."""
        toks = _id_list(tokens)
        for n in range(min(self.max_ngram, len(toks) - 1), self.min_ngram - 1, -1):
            suffix = toks[-n:]
            for start in range(len(toks) - n - 1, -1, -1):  # most recent first; the suffix itself excluded
                if toks[start : start + n] == suffix:
                    return toks[start + n]
        return None

    def session(self, prompt_ids: Sequence[int] | torch.Tensor) -> PromptLookupSession:
        return PromptLookupSession(self, prompt_ids)

    def __repr__(self):
        return (
            f"PromptLookupModel(vocab_size={self.vocab_size}, max_ngram={self.max_ngram}, min_ngram={self.min_ngram})"
        )


AGREEMENT_CAP = 64  # the longest agreement propose_run measures (a longer copy predicts no better)


def agreement(toks: list, pos: int, known: int = 0) -> int:
    """How many tokens before `pos` equal the last tokens of `toks` (the first `known` are known to), capped.

    >>> agreement([7, 1, 2, 3, 9, 1, 2], 3)   # "1 2" precedes position 3 and ends the list
    2
    """
    k, end = known, len(toks)
    while k < AGREEMENT_CAP and pos - 1 - k >= 0 and toks[pos - 1 - k] == toks[end - 1 - k]:
        k += 1
    return k


def _id_list(ids) -> list:
    if isinstance(ids, torch.Tensor):
        if ids.ndim != 1 or ids.dtype.is_floating_point or ids.dtype.is_complex or ids.dtype == torch.bool:
            raise TypeError(f"token ids must be a 1-D integer tensor, got {ids.dtype} of shape {tuple(ids.shape)}")
        return ids.tolist()
    out = []
    for t in ids:
        if isinstance(t, bool) or int(t) != t:
            raise TypeError(f"token ids must be integers, got {t!r}")
        out.append(int(t))
    return out
