"""Speculative decoding on real (or toy) language models: the γ-step loop with KV-cache rollback.

One verify step: the draft proposes up to γ tokens from q (after the same temperature /
top-k / top-p processing as the target: "standardized sampling"), the target scores
all of them in one forward pass, drafts are accepted left to right with probability
min(1, p/q), the first rejection is replaced by a sample from (p - q)+ / Z, and when
all γ pass a bonus token comes from the target's next distribution. Both caches are
then cropped back to the accepted prefix.

Everything between two verify steps stays on the models' device: logits, the draft's
samples, the acceptance test and the resampling (`specviz.samplers.torch_sampling`, with the
distributions from `specviz.lm.engine.logits`). The host learns the outcome once per verify step,
in a single transfer of the drafts, the accepted count, the extra token and the numbers the
step record keeps; `specviz.lm.engine.readout` makes the step's `StepRecord` from that read.

The draft side of a step is one protocol (`specviz.lm.drafts`): before the γ chooser decides, the
draft gives a `Summary` of what it can propose (prompt lookup looks up its run there; a model draft
gives none), then proposes a chain or a tree (a model draft draws from q; prompt lookup's q is
one-hot on its run or trie), then is told what the target kept and rolls back. The engine has one
chain step and one tree step for every kind. A draft may propose fewer than γ tokens (a session
whose `next_logits` is None has no proposal): the step verifies what it has.

A run's settings are one `GenerationSettings` (as keywords or `settings=`). γ is a whole number,
"auto" (`specviz.lm.gamma.adaptive.AutoGamma` chooses each step's, 0 included, from what the run
measured) or any `GammaChooser`; why a chosen γ keeps the output exact is proved in
`specviz.lm.gamma.adaptive`. A step with γ = 0 is a plain target step (fate "target"). With `tree=` a step of
depth γ > 0 verifies a draft tree in one target forward (`specviz.lm.engine.tree_step`).

>>> from specviz.lm.engine.models import NGramModel
>>> from specviz.lm.engine.pair import Pair
>>> pair = Pair(NGramModel.random(5, seed=1), NGramModel.random(5, seed=2))
>>> r = speculative_generate(pair, [0], max_new_tokens=10, gamma=3, seed=0)
>>> len(r.new_ids), sum(s.n_emitted for s in r.steps)
(10, 10)
>>> r2 = SpeculativeEngine().generate(pair, [0], GenerationSettings(max_new_tokens=10, gamma=3, seed=0))
>>> r2.new_ids == r.new_ids
True
"""

from __future__ import annotations

import numbers
import time
from types import SimpleNamespace
from typing import TYPE_CHECKING

import numpy as np
import torch

from ...samplers.torch_sampling import categorical_torch, residual_rows, verify_chain_torch
from ..drafts import ONE_HOT, Proposal, draft_for
from ..gamma.adaptive import as_chooser, recall, remember
from ..trees.shape import tree_plan
from .inputs import check_callback, check_model, check_pair, eos_ids, model_prompt
from .logits import (
    bad_rows,
    draft_bad_rows,
    first_bad,
    make_generator,
    non_finite_error,
    pair_generators,
    probs_on_device,
    raise_if_bad,
    torch_threads,
)
from .readout import StepClock, read_once, step_record, top_tokens
from .results import GenerationResult, StepRecord
from .settings import DEFAULT_MAX_NEW_TOKENS, GenerationSettings, keyword_settings, settings_or
from .tree_step import TreeSteps

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from ...exact.standardize import Sampling
    from ..drafts import Draft
    from ..gamma.chooser import GammaChooser
    from .models import LanguageModel, Session
    from .pair import Pair

__all__ = ["TOP_N", "SpeculativeEngine", "autoregressive_generate", "speculative_generate"]

TOP_N = 8  # tokens of p and q kept per emitted position, for the live view


class SpeculativeEngine(TreeSteps):
    """The γ-step loop, written once against the Session interface.

    The hooks (`residual`, `bonus_dist`, `rollback`, `target_row`; `keep` for trees) are the places where
    known bugs live; tests subclass the engine to plant them and check they are caught.
    They receive torch tensors on the target's device.
    """

    top_n = TOP_N  # top tokens of p and q recorded per emitted position (0: none)

    def residual(self, p_rows: torch.Tensor, q_rows: torch.Tensor) -> torch.Tensor:
        """(γ, V) replacement distributions after a rejection at each position: (p - q)+ / Z."""
        return residual_rows(p_rows, q_rows)

    def bonus_dist(self, p_rows: torch.Tensor, gamma: int) -> torch.Tensor | None:
        """Distribution of the extra token after all γ drafts pass (None: no bonus)."""
        return p_rows[gamma]

    def target_row(self, j: int) -> int:
        """Which target row is compared with drafted token j."""
        return j

    def rollback(self, session: Session, keep: int, next_logits: torch.Tensor | None) -> None:
        """Crop a session's cache back to `keep` tokens."""
        if keep < session.length:
            session.truncate(keep, next_logits)
        elif next_logits is not None:
            session.next_logits = next_logits

    def generate(
        self,
        pair: Pair,
        prompt: str | Sequence[int] | torch.Tensor | np.ndarray,
        settings: GenerationSettings | None = None,
        *args,
        on_step: Callable[[StepRecord], bool | None] | None = None,
        **kwargs,
    ) -> GenerationResult:
        """One generation: verify steps until max_new_tokens, an end token (stop_at_eos) or `on_step` returns False.

        `settings`: a `GenerationSettings` (None: the defaults); `on_step(record)` is called after
        each verify step. `speculative_generate`'s keyword form (max_new_tokens, gamma, ... by
        position or by name, after the prompt) is read into settings as that function reads it.
        """
        if args or kwargs or not isinstance(settings, (GenerationSettings, type(None))):
            settings, on_step = _keyword_form(settings, args, dict(kwargs, on_step=on_step))
        if settings is None:
            settings = GenerationSettings()
        check_pair(pair)
        check_callback(on_step, "on_step")
        chooser = as_chooser(
            settings.gamma, checked=True
        )  # read by the settings; a new chooser each run: "auto" learns within one run
        plan, chooser = tree_plan(settings.tree, chooser)  # None: chains; tree="auto" chooses shape and depth
        s = settings.sampling
        ids = model_prompt(pair, prompt, (pair.target, pair.draft), settings.chat, settings.max_new_tokens)
        gen_t, gen_d = pair_generators(settings.seed, _device(pair.target), _device(pair.draft))
        eos = eos_ids(pair) if settings.stop_at_eos else set()
        max_new_tokens = settings.max_new_tokens
        recall(chooser, pair, s)  # gamma="auto": start from the last auto run on these models and settings
        result = GenerationResult(list(ids), [], gamma=chooser.label, tokenizer=getattr(pair, "tokenizer", None))
        result.finish_reason = "length"
        t_start = time.perf_counter()
        with torch_threads(settings.threads), torch.inference_mode():
            draft = draft_for(pair.draft, pair.draft.session(ids))  # its kind: `specviz.lm.drafts`
            if draft.features:  # a draft that reads the target's features: from the prompt on, which it is given
                T = pair.target.session(ids, read_features=True)
                draft.start(T.features)
            else:  # (a target model of the caller's own may take the prompt alone)
                T = pair.target.session(ids)
            cpu = _device(pair.target).type == "cpu"  # a GPU step times its phases with CUDA events (`StepClock`)
            seq = list(ids)
            while len(result.new_ids) < max_new_tokens:
                room = max_new_tokens - len(result.new_ids) - 1
                summary = None
                t0 = time.perf_counter()
                if room > 0:  # what the draft can propose (a lookup looks here: its run, with a tree its trie of runs)
                    limit = min(room, chooser.max_gamma)
                    widest = None if plan is None else plan.widths(limit) if limit >= 1 else ()
                    summary = draft.summary(seq, limit, widest, eos)
                lookup_s = time.perf_counter() - t0
                g = chooser.choose(room, summary)
                # (the exact-int test first: an ABC isinstance costs microseconds every step)
                whole = g.__class__ is int or (isinstance(g, numbers.Integral) and not isinstance(g, bool))
                if not (whole and 0 <= g <= room):
                    raise ValueError(f"{type(chooser).__name__}.choose returned {g!r}: need a whole number 0..{room}")
                fed = len(seq) - T.length + g  # tokens the target reads in this step
                widths = plan.widths(int(g)) if plan is not None and g else None  # a tree of depth g, or a chain
                if g == 0 and cpu:  # a plain step, as lean as plain decoding's (no draft, no phase clock)
                    rec = self._target_step(
                        T, seq, s, gen_t, len(result.steps), len(result.new_ids), t0 + lookup_s, draft
                    )
                else:
                    rec = self._step(
                        T, draft, seq, s, int(g), widths, gen_t, gen_d, len(result.steps), len(result.new_ids)
                    )
                rec.draft_s += lookup_s
                emitted = rec.emitted
                seq += emitted
                result.new_ids += emitted
                result.steps.append(rec)
                if fed:  # the first step of a run may read nothing new (the prompt's logits): no timing to learn
                    # the chooser pays for the whole step: this loop's own work (choosing, sampling, records)
                    # costs the same at every γ, so leaving it out would make plain steps look cheaper than they are
                    loop_s = max(time.perf_counter() - t0 - rec.draft_s - rec.verify_s, 0.0)
                    match = None if summary is None else summary.match
                    chooser.observe(rec.gamma, rec.accepted, rec.draft_s, rec.verify_s + loop_s, match)
                    if plan is not None:
                        plan.observe_step(rec)
                if on_step is not None and on_step(rec) is False:
                    result.stopped = True
                    result.finish_reason = "abort"
                    break
                hit = [i for i, t in enumerate(emitted) if t in eos] if eos else None
                if hit:
                    result.new_ids = result.new_ids[: len(result.new_ids) - len(emitted) + hit[0] + 1]
                    result.finish_reason = "stop"
                    break
        remember(chooser, pair, s)  # for the next auto run on these models and settings
        result.seconds = time.perf_counter() - t_start
        result.text = _decode(pair, result.new_ids)
        return result

    def propose(self, draft: Draft, seq: list, s: Sampling, g: int, widths: tuple | None, gen) -> Proposal:
        """The step's proposal: a chain of up to g drafts (`widths` None) or a tree (a hook: `specviz.lm.gamma.peeking`)."""
        return draft.propose(seq, s, g, widths, gen)

    def _step(self, T, draft: Draft, seq, s: Sampling, g: int, widths, gen_t, gen_d, index: int, start: int):
        """One verify step: the draft proposes a chain or a tree, the chain step or the tree step verifies it."""
        clock = StepClock(_device(T.model))
        clock.mark()
        prop = self.propose(draft, seq, s, g, widths, gen_d)
        clock.mark()
        if not prop.size:  # nothing proposed (a draft with no proposal here): a plain target step
            return self._target_step(T, seq, s, gen_t, index, start, clock, draft)
        verify = self._tree_step if prop.tree else self._chain_step
        return verify(T, draft, prop, seq, s, gen_t, index, start, clock)

    def _chain_step(self, T, draft: Draft, prop: Proposal, seq, s: Sampling, gen_t, index: int, start: int, clock):
        """A chain's verify: one target forward, accept or replace, one host read, both sides rolled back."""
        n = len(seq)
        dev = _device(T.model)
        g = prop.size
        q_rows, d_logits = (None if prop.q is ONE_HOT else prop.q), prop.logits
        # --- verify: one target forward over the pending tokens and all drafts
        pend_t = torch.tensor(seq[T.length :], dtype=torch.long, device=dev)
        x = prop.tokens.to(dev)  # (γ,), γ >= 1 here
        before = T.next_logits
        rows = T.feed(torch.cat([pend_t, x]))  # (len(pending) + γ, V)
        # all_rows[i]: logits after T.length_old - 1 + i tokens, on the target's one device (`.to` is a no-op when
        # they are there; a model split over devices brings its logits back there, see models.main_device)
        base = len(pend_t)  # all_rows[base + j] scores the token at position n + j
        if base:  # the usual case: no copy of the rows, a view
            all_rows = rows.to(dev)[base - 1 :]
            base = 0
        else:
            all_rows = torch.cat([before[None].to(dev), rows.to(dev)], dim=0)
        if s.temperature == 0 and self._textbook_hooks():  # greedy: compare argmaxes, no (γ+1, V) float64 work
            h, k, token = self._greedy_verify(x, all_rows[base : base + g + 1], d_logits, index, start)
        else:
            P = probs_on_device(all_rows[base : base + g + 1], s)  # (γ+1, V)
            V = P.shape[-1]
            if q_rows is None:  # one-hot rows of the run, in one op
                Q = P.new_zeros((g, V)).scatter_(-1, x[:, None], 1.0)  # (γ, V)
            else:
                Q = torch.cat(q_rows).to(dev)  # (γ, V)
            rows_j = [self.target_row(j) for j in range(g)]
            P_sel = P[:g] if rows_j == list(range(g)) else P[rows_j]  # (γ, V)
            bonus = self.bonus_dist(P, g)
            verdict = verify_chain_torch(P_sel, Q, x, gen_t, replacement_rows=self.residual(P[:g], Q), bonus_row=bonus)
            # --- the one host synchronisation of this step
            tops = top_tokens(P, Q, min(self.top_n, V))
            h = read_once(
                drafted=x,  # (γ,)
                accepted=verdict.accepted,  # () drafts kept
                token=verdict.token,  # () replacement or bonus token, -1 for none
                p_x=P[:g].gather(-1, x[:, None])[:, 0],  # (γ,) p of each draft
                q_x=Q.gather(-1, x[:, None])[:, 0],  # (γ,) q of each draft
                alphas=torch.minimum(P[:g], Q).sum(-1),  # (γ,) Σ min(p, q) at each draft position
                target_bad=bad_rows(all_rows[base : base + g + 1]),  # (γ+1,) the target's rows
                draft_bad=draft_bad_rows(d_logits, g, dev),  # (γ,) the draft's rows
                **tops,  # (γ+1, top_n) and (γ, top_n)
            )
            k, token = int(h.accepted), int(h.token)
            raise_if_bad(h.target_bad, h.draft_bad, start, index)
        # --- roll both caches back to the accepted prefix
        self.rollback(T, n + k, all_rows[base + k])
        self.tell(draft, prop, list(range(k)), T.features[: len(pend_t) + k] if draft.features else None)
        return step_record(h, k, token, index, start, clock)

    def _textbook_hooks(self) -> bool:
        """True when no hook is overridden (a planted bug must run through the general path)."""
        base = SpeculativeEngine
        return all(
            getattr(type(self), h) is getattr(base, h) for h in ("residual", "bonus_dist", "target_row", "rollback")
        )

    def _greedy_verify(self, x, logits, d_logits, index: int, start: int) -> tuple[SimpleNamespace, int, int]:
        """Temperature 0: p and q are one-hot, so draft j is accepted iff it is the target's argmax (same verdict).

        The rule min(1, p/q) with one-hot p and q accepts x exactly when x = argmax p, and the
        residual (p - q)+ / Z is then p itself, one-hot on the argmax: the emitted tokens are
        the target's argmaxes up to the first mismatch, plus the argmax there. Comparing
        argmaxes of the float32 (γ+1, V) `logits` gives that verdict without building (γ+1, V)
        rows. Returns the step's host read as `step_record` takes it, the drafts accepted, the token.
        """
        g = len(x)
        am = logits.argmax(-1)  # (γ+1,) the target's greedy tokens
        k_dev = (am[:g] == x).long().cumprod(0).sum()  # drafts accepted before the first mismatch
        top_n = min(self.top_n, logits.shape[-1])
        tops = dict(top_p_ids=logits.topk(top_n, dim=-1).indices) if top_n else {}  # (γ+1, top_n)
        h = read_once(
            drafted=x,  # (γ,)
            accepted=k_dev,  # () drafts kept
            greedy=am,  # (γ+1,) the target's argmaxes
            target_bad=bad_rows(logits),  # (γ+1,)
            draft_bad=draft_bad_rows(d_logits, g, logits.device),  # (γ,)
            **tops,
        )
        k = int(h.accepted)
        raise_if_bad(h.target_bad, h.draft_bad, start, index)
        drafted = h.drafted.astype(np.int64).tolist()
        greedy = h.greedy.astype(np.int64).tolist()
        p_x = [1.0 if drafted[j] == greedy[j] else 0.0 for j in range(g)]  # one-hot p at each draft
        out = SimpleNamespace(drafted=drafted, p_x=p_x, q_x=[1.0] * g, alphas=p_x)
        if top_n:  # p is one-hot: the argmax at 1, then the next best logits at 0; q is one-hot on the draft
            out.top_p_ids = [
                [greedy[j]] + [int(i) for i in h.top_p_ids[j] if int(i) != greedy[j]] for j in range(k + 1)
            ]
            out.top_p_ids = [ids[:top_n] for ids in out.top_p_ids]
            out.top_p = [[1.0] + [0.0] * (len(ids) - 1) for ids in out.top_p_ids]
            out.top_q_ids, out.top_q = [[t] for t in drafted], [[1.0]] * g
        return out, k, greedy[k]

    def _target_step(self, T, seq, s: Sampling, gen, index: int, start: int, clock, draft=None) -> StepRecord:
        """A step with no drafts: one plain draw from the target's p (what plain decoding does), one host read.

        `clock`: the step's `StepClock` (marked once so far), or on CPU the perf_counter time the step began;
        a `draft` that reads features is given the target's features at the pending tokens it read (an empty path).
        """
        pend = seq[T.length :]
        logits = T.feed(pend)[-1] if pend else T.next_logits  # (V,)
        if pend and draft is not None and draft.features:
            draft.accept(Proposal(None, [], ONE_HOT, [], start=len(seq)), [], T.features)
        P = probs_on_device(logits, s)  # (1, V) float64
        y = categorical_torch(P, gen)  # (1,)
        top_n = min(self.top_n, P.shape[-1])
        tops = {}
        if top_n:
            tp = P.topk(top_n, dim=-1)
            tops = dict(top_p_ids=tp.indices, top_p=tp.values)  # (1, top_n) each
        h = read_once(token=y, target_bad=bad_rows(logits[None]), **tops)  # the one read
        raise_if_bad(h.target_bad, [], start, index)
        h.drafted = h.p_x = h.q_x = h.alphas = []
        if top_n:
            h.top_q_ids = h.top_q = []
        return step_record(h, 0, int(h.token[0]), index, start, clock)


def _device(model) -> torch.device:
    return torch.device(getattr(model, "device", None) or "cpu")


def _decode(pair, ids) -> str:
    tok = getattr(pair, "tokenizer", None)
    if tok is None:
        return " ".join(map(str, ids))
    return tok.decode(ids, skip_special_tokens=True, clean_up_tokenization_spaces=False)


def speculative_generate(
    pair: Pair,
    prompt: str | Sequence[int] | torch.Tensor | np.ndarray,
    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
    gamma: int | str | GammaChooser | None = None,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    seed: int | np.random.Generator | torch.Generator | None = None,
    on_step: Callable[[StepRecord], bool | None] | None = None,
    threads: int | None = 1,
    stop_at_eos: bool = False,
    chat: str | bool = "auto",
    *,
    tree: tuple | int | None = None,
    settings: GenerationSettings | None = None,
) -> GenerationResult:
    """Generate with speculative decoding; the output is distributed exactly as the target's.

    `gamma`: drafts per verify step, a whole number >= 0 (0: plain decoding through the engine),
    None (the default: "auto" for a chain, a fixed tree's own depth: `specviz.lm.engine.settings.DEFAULT_GAMMA`),
    "auto" (each step chooses, 0 included, from the measured times and acceptance of this run
    and of the last auto run on the same models and settings: `specviz.lm.gamma.adaptive.AutoGamma`,
    `specviz.lm.gamma.adaptive.forget` to start cold), or a `GammaChooser`. `stop_at_eos=True` ends the run at
    the tokenizer's end token or the generation config's end ids; `result.finish_reason` says
    "stop", "length" (max_new_tokens reached) or "abort" (on_step returned False).

    `prompt` is text (encoded with the pair's tokenizer, through its chat template when it has
    one and `chat` is "auto" or True) or a list of token ids. `on_step(record)` is called after
    each verify step (return False to stop). `threads` sets torch's CPU threads for the call
    (1 is fastest for batch-1 decoding). `seed`: int, numpy/torch Generator or None.
    `tree=(3, 2, 1)` drafts a tree (3 per node at depth 1, ...; an int k: k at every depth), γ its depth.
    `settings=GenerationSettings(...)` gives all the settings at once, instead of the keywords.
    """
    settings = settings_or(
        settings,
        speculative_generate,
        max_new_tokens=max_new_tokens,
        gamma=gamma,
        temperature=temperature,
        top_k=top_k,
        top_p=top_p,
        seed=seed,
        threads=threads,
        stop_at_eos=stop_at_eos,
        chat=chat,
        tree=tree,
    )
    return SpeculativeEngine().generate(pair, prompt, settings, on_step=on_step)


def _keyword_form(first, args: tuple, kwargs: dict) -> tuple[GenerationSettings, Callable | None]:
    """(settings, on_step) from a `generate` call: (settings, on_step) by position, or `speculative_generate`'s form."""
    if isinstance(first, GenerationSettings):
        if len(args) == 1 and kwargs == {"on_step": None}:
            return first, args[0]
        kwargs["settings"] = first
    elif first is not None:
        args = (first, *args)
    if kwargs.get("on_step") is None:  # (it may come by position)
        kwargs.pop("on_step")
    settings, rest = keyword_settings(speculative_generate, None, None, *args, **kwargs)
    return settings, rest["on_step"]


def autoregressive_generate(
    model_or_pair: LanguageModel | Pair,
    prompt: str | Sequence[int] | torch.Tensor | np.ndarray,
    max_new_tokens: int = 64,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    seed: int | np.random.Generator | torch.Generator | None = None,
    threads: int | None = 1,
    stop_at_eos: bool = False,
    on_token: Callable[[int], bool | None] | None = None,
    chat: str | bool = "auto",
    *,
    settings: GenerationSettings | None = None,
) -> GenerationResult:
    """Plain token-by-token sampling from the target (or from a single model) with the same processing.

    Tokens stay on the device while decoding; the host reads them once at the end (or every
    token when `on_token` or `stop_at_eos` needs them). `settings=GenerationSettings(...)` gives
    all the settings at once (its γ is not used).
    """
    model = check_model(model_or_pair)
    check_callback(on_token, "on_token")
    settings = settings_or(
        settings,
        autoregressive_generate,
        max_new_tokens=max_new_tokens,
        temperature=temperature,
        top_k=top_k,
        top_p=top_p,
        seed=seed,
        threads=threads,
        stop_at_eos=stop_at_eos,
        chat=chat,
    )
    max_new_tokens, s = settings.max_new_tokens, settings.sampling
    ids = model_prompt(model_or_pair, prompt, (model,), settings.chat, max_new_tokens)
    gen = make_generator(settings.seed, _device(model))
    eos = eos_ids(model_or_pair) if settings.stop_at_eos else set()
    per_token = on_token is not None or bool(eos)
    result = GenerationResult(list(ids), [], tokenizer=getattr(model_or_pair, "tokenizer", None))
    result.finish_reason = "length"
    out, bad = [], []  # (1,) device tensors: tokens, and whether the logits they came from were broken
    t0 = time.perf_counter()
    with torch_threads(settings.threads), torch.inference_mode():
        sess = model.session(ids)
        for i in range(max_new_tokens):
            logits = sess.next_logits
            y = categorical_torch(probs_on_device(logits, s), gen)  # (1,)
            out.append(y)
            bad.append(bad_rows(logits.reshape(1, -1)))
            if per_token:
                y_id, y_bad = torch.cat([y, bad[-1]]).tolist()  # this token's one read
                if y_bad:
                    raise non_finite_error("target", i)
                y_id = int(y_id)
                if on_token is not None and on_token(y_id) is False:
                    result.stopped = True
                    result.finish_reason = "abort"
                    break
                if y_id in eos:
                    result.finish_reason = "stop"
                    break
            if i < max_new_tokens - 1:
                sess.feed(y)
        host = torch.cat(out + [torch.cat(bad).long()]).tolist() if out else []  # the one read at the end
        if (j := first_bad(host[len(out) :])) is not None:
            raise non_finite_error("target", j)
        result.new_ids = host[: len(out)]
    result.seconds = time.perf_counter() - t0
    result.text = _decode(model_or_pair, result.new_ids)
    return result
