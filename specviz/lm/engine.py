"""Speculative decoding on real (or toy) language models: the γ-step loop with KV-cache rollback.

One verify step: the draft proposes up to γ tokens from q (after the same temperature /
top-k / top-p processing as the target: "standardized sampling"), the target scores
all of them in one forward pass, drafts are accepted left to right with probability
min(1, p/q), the first rejection is replaced by a sample from (p - q)+ / Z, and when
all γ pass a bonus token comes from the target's next distribution. Both caches are
then cropped back to the accepted prefix.

Everything between two verify steps stays on the models' device: logits, the draft's
samples, the acceptance test and the resampling (`specviz.torch_sampling`). The host
learns the outcome once per verify step, in a single transfer of the drafts, the accepted
count, the extra token and the numbers the step record keeps.

A draft may propose fewer than γ tokens: a draft session whose `next_logits` is None has
no proposal, and the step verifies what it has. A deterministic draft (prompt lookup) has a
`propose_run(limit)` method instead: one lookup gives the whole run it proposes, q is one-hot
on it, and no per-token Python runs while drafting.

`gamma` is a whole number (the same γ every step), "auto" (`specviz.lm.adaptive.AutoGamma`:
each step drafts the number of tokens, 0 included, with the most expected tokens per second
from this run's measurements and those of the last auto run on the same models) or any
`GammaChooser`. Why a chosen γ keeps the output exact, and which choices would not, is
proved in `specviz.lm.adaptive`. A step with γ = 0 is a plain target step (fate "target")
and costs what a plain decoding step costs.

>>> from specviz.lm.models import NGramModel
>>> from specviz.lm.pair import Pair
>>> pair = Pair(NGramModel.random(5, seed=1), NGramModel.random(5, seed=2))
>>> r = speculative_generate(pair, [0], max_new_tokens=10, gamma=3, seed=0)
>>> len(r.new_ids), sum(s.n_emitted for s in r.steps)
(10, 10)
"""

from __future__ import annotations

import contextlib
import math
import numbers
import time
from types import SimpleNamespace
from typing import TYPE_CHECKING

import numpy as np
import torch

from ..checks import integer
from ..standardize import Sampling
from ..torch_sampling import categorical_torch, residual_rows, verify_chain_torch
from .adaptive import GammaChooser, as_chooser, recall, remember
from .results import GenerationResult, StepRecord

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from transformers import PreTrainedTokenizerBase

    from .models import LanguageModel, Session
    from .pair import Pair

__all__ = [
    "TOP_N",
    "GenerationResult",
    "NonFiniteLogitsError",
    "SpeculativeEngine",
    "StepRecord",
    "autoregressive_generate",
    "encode_prompt",
    "make_generator",
    "process_logits",
    "check_model",
    "check_pair",
    "probs_on_device",
    "process_probs",
    "speculative_generate",
    "torch_threads",
]

TOP_N = 8  # tokens of p and q kept per emitted position, for the live view


def process_probs(rows: torch.Tensor, s: Sampling, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """(k, V) or (V,) logits -> (k, V) probabilities after temperature, top-k, top-p, on the rows' device.

    Same semantics as `specviz.standardize`: temperature 0 is a one-hot argmax. The logits
    are shifted by their maximum before dividing, so a tiny temperature (1e-310) tends to
    the argmax instead of overflowing into NaN.

    >>> process_probs(torch.tensor([0.0, 1.0, 2.0]), Sampling(temperature=1e-310)).tolist()
    [[0.0, 0.0, 1.0]]
    """
    if not isinstance(s, Sampling):
        raise TypeError(f"s must be a specviz.standardize.Sampling, got {type(s).__name__}")
    if not isinstance(rows, torch.Tensor):  # lists and numpy arrays are converted; checks below need no sync
        if rows is None or isinstance(rows, (str, bytes)):
            raise TypeError(f"rows (logits) must be a tensor or an array of numbers, got {rows!r}")
        try:
            rows = torch.as_tensor(np.asarray(rows, dtype=np.float64))
        except (TypeError, ValueError) as e:
            raise TypeError(f"rows (logits) must be a tensor or an array of numbers: {e}") from None
    if rows.ndim not in (1, 2) or rows.shape[-1] == 0 or rows.is_complex() or rows.dtype == torch.bool:
        raise ValueError(
            f"rows (logits) must be a non-empty (V,) or (k, V) real tensor, got {rows.dtype} "
            f"of shape {tuple(rows.shape)}"
        )
    z = rows.detach().to(dtype)
    bad = torch.isnan(z) | torch.isposinf(z)  # -inf is a masked token; NaN and +inf are not logits
    if bool(bad.any()) or bool(torch.isneginf(z).all(-1).any()):  # one read: this is the checked entry point
        raise ValueError("rows (logits) contain NaN or +inf, or a row that is all -inf (no token can be sampled)")
    return probs_on_device(z, s, dtype)


def probs_on_device(rows: torch.Tensor, s: Sampling, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """`process_probs` without its checks: no host read, for the engine's hot loop (rows must be logits)."""
    z = rows.detach().to(dtype)
    if z.ndim == 1:
        z = z[None]  # (1, V)
    if s.temperature == 0:
        out = torch.zeros_like(z)
        return out.scatter_(-1, z.argmax(-1, keepdim=True), 1.0)
    if s.temperature < 1e-3:  # shift to max 0 first, or z / T overflows to inf (softmax shifts anyway)
        z = z - z.amax(-1, keepdim=True)
    z = z / s.temperature  # (k, V)
    if s.top_k:
        k = min(int(s.top_k), z.shape[-1])
        kth = torch.topk(z, k, dim=-1).values[:, -1:]
        z = z.masked_fill(z < kth, float("-inf"))
    prob = torch.softmax(z, dim=-1)
    if s.top_p is not None and s.top_p < 1:
        sp, order = torch.sort(prob, dim=-1, descending=True, stable=True)
        cum = sp.cumsum(-1)
        target = torch.full((len(cum), 1), s.top_p - 1e-12, dtype=cum.dtype, device=cum.device)
        keep_n = torch.searchsorted(cum, target) + 1
        keep_sorted = torch.arange(z.shape[-1], device=z.device)[None, :] < keep_n
        keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
        prob = torch.where(keep, prob, torch.zeros_like(prob))
        prob = prob / prob.sum(-1, keepdim=True)
    return prob


def process_logits(rows: torch.Tensor, s: Sampling) -> np.ndarray:
    """(k, V) logits -> (k, V) float64 numpy probabilities (`process_probs`, moved to the host)."""
    return process_probs(rows, s).cpu().numpy()


def make_generator(
    seed: int | np.random.Generator | torch.Generator | None, device: torch.device | str
) -> torch.Generator:
    """A torch.Generator on `device` from an int seed, a numpy Generator, a torch.Generator or None (fresh)."""
    if isinstance(seed, torch.Generator):
        return seed
    if isinstance(seed, np.random.Generator):
        seed = int(seed.integers(2**63))
    elif seed is None:
        seed = int(np.random.SeedSequence().entropy % 2**63)
    else:
        try:
            seed = integer(seed, "seed", lo=0, hi=2**63 - 1)
        except (TypeError, ValueError) as e:
            raise type(e)(f"{e} (seed: a non-negative integer, a numpy/torch Generator or None)") from None
    g = torch.Generator(device=device)
    g.manual_seed(int(seed))
    return g


@contextlib.contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Temporarily set torch's intra-op threads (1 is fastest for batch-1 decoding on CPU)."""
    if n is None:
        yield
        return
    n = integer(n, "threads", lo=1, hi=4096)
    old = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)


def encode_prompt(tokenizer: PreTrainedTokenizerBase, text: str, chat: str | bool = "auto") -> list:
    """Token ids of a text prompt: the tokenizer's chat template when it has one (chat="auto"/True), else plain."""
    from .pair import format_prompt

    return format_prompt(tokenizer, text, chat=chat)


def _prompt_ids(pair_or_model, prompt, chat="auto") -> list:
    if isinstance(prompt, str):
        if not prompt:
            raise ValueError("the prompt is empty: type at least one character")
        tok = getattr(pair_or_model, "tokenizer", None)
        if tok is None:
            raise ValueError("a text prompt needs a tokenizer; this model has none, pass token ids")
        ids = encode_prompt(tok, prompt, chat)
    else:
        if isinstance(prompt, (torch.Tensor, np.ndarray)):
            if prompt.ndim != 1:
                raise ValueError(f"prompt ids must be 1-D, got shape {tuple(prompt.shape)}")
            prompt = prompt.tolist()
        try:
            prompt = list(prompt)
        except TypeError:
            raise TypeError(
                f"the prompt must be text or a sequence of token ids, got {type(prompt).__name__}"
            ) from None
        ids = []
        for i, t in enumerate(prompt):
            if isinstance(t, bool) or not isinstance(t, numbers.Integral):
                raise ValueError(f"prompt token {i} is {t!r}: token ids must be integers")
            ids.append(int(t))
    if not ids:
        raise ValueError("the prompt is empty: give at least one token")
    return ids


def _check_ids_in_vocab(ids, models) -> None:
    for m in models:
        for i, t in enumerate(ids):
            if not 0 <= t < m.vocab_size:
                raise ValueError(
                    f"prompt token {i} has id {t}, outside {m.name}'s vocabulary of "
                    f"{m.vocab_size} (ids 0..{m.vocab_size - 1})"
                )


def _check_room(models, n_prompt: int, max_new_tokens: int) -> None:
    """The longest sequence a model reads is the prompt + max_new_tokens - 1 (the last token is never fed)."""
    for m in models:
        if m.max_positions is None:
            continue
        need = n_prompt + max_new_tokens - 1
        if need > m.max_positions:
            raise ValueError(
                f"prompt of {n_prompt} tokens + max_new_tokens {max_new_tokens} needs {need} positions, more than "
                f"{m.name}'s context of {m.max_positions} positions: shorten the prompt or ask for fewer tokens"
            )


MAX_NEW_TOKENS = 1_000_000  # a bound on one call (a model without a context limit would otherwise run on)


def _check_common(max_new_tokens, gamma, sampling_kw) -> tuple[int, GammaChooser, Sampling]:
    """(max_new_tokens, a GammaChooser, Sampling), checked; errors name the parameter."""
    n = integer(max_new_tokens, "max_new_tokens", lo=1, hi=MAX_NEW_TOKENS)
    return n, as_chooser(gamma), Sampling(**sampling_kw)  # a whole number is checked by FixedGamma


def check_callback(fn, name: str) -> None:
    """TypeError naming `name` unless it is None or callable."""
    if fn is not None and not callable(fn):
        raise TypeError(f"{name} must be a function (or None), got {type(fn).__name__}")


def check_pair(pair: object, name: str = "pair") -> None:
    """TypeError naming `name` unless it is a draft/target pair of language models (specviz.lm.Pair)."""
    for role in ("target", "draft"):
        m = getattr(pair, role, None)
        if m is None or not hasattr(m, "session") or not hasattr(m, "vocab_size"):
            raise TypeError(
                f"{name} must be a specviz.lm.Pair of target and draft models (load_pair(...)), "
                f"got {type(pair).__name__}"
            )


def check_model(model_or_pair: object, name: str = "model_or_pair") -> LanguageModel:
    """The model to decode with (a pair's target, or the model itself); TypeError naming `name` otherwise."""
    model = getattr(model_or_pair, "target", model_or_pair)
    if not hasattr(model, "session") or not hasattr(model, "vocab_size"):
        raise TypeError(f"{name} must be a specviz.lm.Pair or LanguageModel, got {type(model_or_pair).__name__}")
    return model


def eos_ids(pair_or_model: Pair | LanguageModel) -> set:
    """Ids that end a generation: the tokenizer's end token and the target's generation_config ones."""
    out = set()
    tok_eos = getattr(getattr(pair_or_model, "tokenizer", None), "eos_token_id", None)
    model = getattr(getattr(pair_or_model, "target", pair_or_model), "model", None)
    cfg_eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    for e in (tok_eos, cfg_eos):
        if e is not None:
            out.update(int(x) for x in (e if isinstance(e, (list, tuple)) else [e]))
    return out


def _device(model) -> torch.device:
    return torch.device(getattr(model, "device", None) or "cpu")


class _Clock:
    """Phase timer: CUDA events on a GPU (read after the step's one sync), perf_counter on CPU."""

    def __init__(self, device: torch.device):
        self.cuda = device.type == "cuda"
        self.marks = []

    def mark(self):
        if self.cuda:
            e = torch.cuda.Event(enable_timing=True)
            e.record()
            self.marks.append(e)
        else:
            self.marks.append(time.perf_counter())

    def seconds(self) -> list:
        """Seconds between consecutive marks (call after the host has synchronised)."""
        if self.cuda:
            return [a.elapsed_time(b) / 1e3 for a, b in zip(self.marks, self.marks[1:])]
        return [b - a for a, b in zip(self.marks, self.marks[1:])]


class SpeculativeEngine:
    """The γ-step loop, written once against the Session interface.

    The hooks (`residual`, `bonus_dist`, `rollback`, `target_row`) are the places where
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
        max_new_tokens: int = 64,
        gamma: int | str | GammaChooser = 4,
        temperature: float = 1.0,
        top_k: int | None = None,
        top_p: float | None = None,
        seed: int | np.random.Generator | torch.Generator | None = None,
        on_step: Callable[[StepRecord], bool | None] | None = None,
        threads: int | None = 1,
        stop_at_eos: bool = False,
        chat: str | bool = "auto",
    ) -> GenerationResult:
        check_pair(pair)
        check_callback(on_step, "on_step")
        max_new_tokens, gamma, s = _check_common(
            max_new_tokens, gamma, dict(temperature=temperature, top_k=top_k, top_p=top_p)
        )
        ids = _prompt_ids(pair, prompt, chat)
        _check_ids_in_vocab(ids, (pair.target, pair.draft))
        _check_room((pair.target, pair.draft), len(ids), max_new_tokens)
        gen_t = make_generator(seed, _device(pair.target))
        gen_d = (
            gen_t
            if _device(pair.draft) == _device(pair.target)
            else make_generator(
                int(torch.randint(2**62, (1,), generator=gen_t, device=_device(pair.target))), _device(pair.draft)
            )
        )
        eos = eos_ids(pair) if stop_at_eos else set()
        chooser = gamma
        recall(chooser, pair, s)  # gamma="auto": start from the last auto run on these models and settings
        result = GenerationResult(list(ids), [], gamma=chooser.label, tokenizer=getattr(pair, "tokenizer", None))
        result.finish_reason = "length"
        t_start = time.perf_counter()
        with torch_threads(threads), torch.inference_mode():
            T = pair.target.session(ids)
            D = pair.draft.session(ids)
            lookup = hasattr(D, "propose_run")  # a deterministic draft: one lookup proposes the whole run
            cpu = _device(pair.target).type == "cpu"  # a GPU step times its phases with CUDA events (`_Clock`)
            seq = list(ids)
            while len(result.new_ids) < max_new_tokens:
                room = max_new_tokens - len(result.new_ids) - 1
                run = match = None
                t0 = time.perf_counter()
                if lookup and room > 0:
                    D.read(seq[D.length :])
                    run, match = D.propose_run(min(room, chooser.max_gamma))
                    end = next((i for i, t in enumerate(run) if t in eos), None)
                    if end is not None:  # a run that ends the turn: what follows the end token would be wasted
                        run = run[: end + 1]
                lookup_s = time.perf_counter() - t0
                g = chooser.choose(room, run, match)
                # (the exact-int test first: an ABC isinstance costs microseconds every step)
                whole = g.__class__ is int or (isinstance(g, numbers.Integral) and not isinstance(g, bool))
                if not (whole and 0 <= g <= room):
                    raise ValueError(f"{type(chooser).__name__}.choose returned {g!r}: need a whole number 0..{room}")
                if run is not None:
                    run = run[:g]
                fed = len(seq) - T.length + g  # tokens the target reads in this step
                if g == 0 and cpu:  # a plain step, as lean as plain decoding's (no draft, no phase clock)
                    rec = self._target_step(T, seq, s, gen_t, len(result.steps), len(result.new_ids), t0 + lookup_s)
                else:
                    rec = self._step(T, D, seq, s, int(g), gen_t, gen_d, len(result.steps), len(result.new_ids), run)
                rec.draft_s += lookup_s
                emitted = rec.emitted
                seq += emitted
                result.new_ids += emitted
                result.steps.append(rec)
                if fed:  # the first step of a run may read nothing new (the prompt's logits): no timing to learn
                    # the chooser pays for the whole step: this loop's own work (choosing, sampling, records)
                    # costs the same at every γ, so leaving it out would make plain steps look cheaper than they are
                    loop_s = max(time.perf_counter() - t0 - rec.draft_s - rec.verify_s, 0.0)
                    chooser.observe(rec.gamma, rec.accepted, rec.draft_s, rec.verify_s + loop_s, match)
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

    def _draft(self, D, seq, s: Sampling, g: int, gen):
        """Up to g draft tokens from q: ((γ',) ids on the device, (γ', V) q rows, logits after each prefix)."""
        if g == 0:  # nothing to draft: the draft reads what it missed at its next drafting step
            return [], [], [None]
        pend = seq[D.length :]
        if pend:
            D.feed(pend)
        d_logits = [D.next_logits]  # d_logits[j]: the draft's logits after seq + drafts[:j]
        drafts, q_rows = [], []
        for j in range(g):
            if d_logits[j] is None:  # no proposal (e.g. prompt lookup without a match)
                break
            q_j = probs_on_device(d_logits[j], s)  # (1, V)
            x = categorical_torch(q_j, gen)  # (1,) stays on the device
            drafts.append(x)
            q_rows.append(q_j)
            if j < g - 1:
                D.feed(x)
                d_logits.append(D.next_logits)
        return drafts, q_rows, d_logits

    def _step(
        self, T, D, seq, s: Sampling, g: int, gen_t, gen_d, index: int, start: int, run: list | None = None
    ) -> StepRecord:
        n = len(seq)
        dev = _device(T.model)
        clock = _Clock(dev)
        clock.mark()
        if run is not None:  # a deterministic draft's run: q is one-hot on each proposed token
            drafts, q_rows, d_logits = [torch.tensor(run, dtype=torch.long, device=dev)] if run else [], None, [None]
            g = len(run)
        else:
            drafts, q_rows, d_logits = self._draft(D, seq, s, g, gen_d)
            g = len(drafts)
        clock.mark()
        if g == 0:
            return self._target_step(T, seq, s, gen_t, index, start, clock)
        # --- verify: one target forward over the pending tokens and all drafts
        pend_t = torch.tensor(seq[T.length :], dtype=torch.long, device=dev)
        x = torch.cat([d.to(dev) for d in drafts])  # (γ,), γ >= 1 here
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
            return self._greedy_verify(T, D, n, x, all_rows, base, d_logits, index, start, clock)
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
        top_n = min(self.top_n, V)
        tops = {}
        if top_n:
            tp, tq = P.topk(top_n, dim=-1), Q.topk(top_n, dim=-1)
            tops = dict(top_p_ids=tp.indices, top_p=tp.values, top_q_ids=tq.indices, top_q=tq.values)
        h = _read_once(
            drafted=x,  # (γ,)
            accepted=verdict.accepted,  # () drafts kept
            token=verdict.token,  # () replacement or bonus token, -1 for none
            p_x=P[:g].gather(-1, x[:, None])[:, 0],  # (γ,) p of each draft
            q_x=Q.gather(-1, x[:, None])[:, 0],  # (γ,) q of each draft
            alphas=torch.minimum(P[:g], Q).sum(-1),  # (γ,) Σ min(p, q) at each draft position
            target_bad=bad_rows(all_rows[base : base + g + 1]),  # (γ+1,) the target's rows
            draft_bad=self._draft_bad(d_logits, g, dev),  # (γ,) the draft's rows
            **tops,  # (γ+1, top_n) and (γ, top_n)
        )
        drafted = h.drafted.astype(np.int64).tolist()
        k, token = int(h.accepted), int(h.token)
        _raise_if_bad(h.target_bad, h.draft_bad, start, index)
        top_p, top_q = [], []
        if top_n:
            top_p = [_pairs(h.top_p_ids[j], h.top_p[j]) for j in range(k + 1)]
            top_q = [_pairs(h.top_q_ids[j], h.top_q[j]) for j in range(min(k + 1, g))] + ([[]] if k == g else [])
        # --- roll both caches back to the accepted prefix
        self.rollback(T, n + k, all_rows[base + k])
        self.rollback(D, n + k, d_logits[k] if k < len(d_logits) else None)
        clock.mark()
        draft_s, verify_s = clock.seconds()
        kind = "bonus" if k == g else "resampled"
        return StepRecord(
            index=index,
            start=start,
            drafted=drafted,
            q_drafted=h.q_x.tolist(),
            p_drafted=h.p_x.tolist(),
            accepted=k,
            token=None if token < 0 else token,
            kind=kind,
            alphas=h.alphas[: min(k + 1, g)].tolist(),
            top_p=top_p,
            top_q=top_q,
            draft_s=draft_s,
            verify_s=verify_s,
        )

    @staticmethod
    def _draft_bad(d_logits: list, g: int, dev) -> torch.Tensor:
        """(γ,) bool: which of the draft's logits rows behind the γ drafts are broken (all False for a lookup run)."""
        rows = [r for r in d_logits[:g] if r is not None]
        if not rows:
            return torch.zeros(g, dtype=torch.bool, device=dev)
        out = bad_rows(torch.stack([r.reshape(-1) for r in rows]).to(dev))
        return out if len(rows) == g else torch.cat([out, out.new_zeros(g - len(rows))])

    def _textbook_hooks(self) -> bool:
        """True when no hook is overridden (a planted bug must run through the general path)."""
        base = SpeculativeEngine
        return all(
            getattr(type(self), h) is getattr(base, h) for h in ("residual", "bonus_dist", "target_row", "rollback")
        )

    def _greedy_verify(self, T, D, n, x, all_rows, base, d_logits, index: int, start: int, clock) -> StepRecord:
        """Temperature 0: p and q are one-hot, so draft j is accepted iff it is the target's argmax (same verdict).

        The rule min(1, p/q) with one-hot p and q accepts x exactly when x = argmax p, and the
        residual (p - q)+ / Z is then p itself, one-hot on the argmax: the emitted tokens are
        the target's argmaxes up to the first mismatch, plus the argmax there. Comparing
        argmaxes of the float32 logits gives that verdict without building (γ+1, V) rows.
        """
        g = len(x)
        logits = all_rows[base : base + g + 1]  # (γ+1, V)
        am = logits.argmax(-1)  # (γ+1,) the target's greedy tokens
        k_dev = (am[:g] == x).long().cumprod(0).sum()  # drafts accepted before the first mismatch
        top_n = min(self.top_n, logits.shape[-1])
        tops = dict(top_p_ids=logits.topk(top_n, dim=-1).indices) if top_n else {}  # (γ+1, top_n)
        h = _read_once(
            drafted=x,  # (γ,)
            accepted=k_dev,  # () drafts kept
            greedy=am,  # (γ+1,) the target's argmaxes
            target_bad=bad_rows(logits),  # (γ+1,)
            draft_bad=self._draft_bad(d_logits, g, logits.device),  # (γ,)
            **tops,
        )
        drafted = h.drafted.astype(np.int64).tolist()
        k = int(h.accepted)
        greedy = h.greedy.astype(np.int64).tolist()
        _raise_if_bad(h.target_bad, h.draft_bad, start, index)
        top_p, top_q = [], []
        if top_n:
            for j in range(k + 1):
                rest = [int(i) for i in h.top_p_ids[j] if int(i) != greedy[j]]
                top_p.append([(greedy[j], 1.0)] + [(i, 0.0) for i in rest[: top_n - 1]])
            top_q = [[(drafted[j], 1.0)] for j in range(min(k + 1, g))] + ([[]] if k == g else [])
        p_x = [1.0 if drafted[j] == greedy[j] else 0.0 for j in range(g)]
        self.rollback(T, n + k, all_rows[base + k])
        self.rollback(D, n + k, d_logits[k] if k < len(d_logits) else None)
        clock.mark()
        draft_s, verify_s = clock.seconds()
        return StepRecord(
            index=index,
            start=start,
            drafted=drafted,
            q_drafted=[1.0] * g,
            p_drafted=p_x,
            accepted=k,
            token=greedy[k],
            kind="bonus" if k == g else "resampled",
            alphas=p_x[: min(k + 1, g)],
            top_p=top_p,
            top_q=top_q,
            draft_s=draft_s,
            verify_s=verify_s,
        )

    def _target_step(self, T, seq, s: Sampling, gen, index: int, start: int, clock) -> StepRecord:
        """A step with no drafts: one plain draw from the target's p (what plain decoding does), one host read.

        `clock`: the step's `_Clock` (marked once so far), or on CPU the perf_counter time the step began.
        """
        pend = seq[T.length :]
        logits = T.feed(pend)[-1] if pend else T.next_logits  # (V,)
        P = probs_on_device(logits, s)  # (1, V) float64
        y = categorical_torch(P, gen)  # (1,)
        top_n = min(self.top_n, P.shape[-1])
        parts = [y.to(P.dtype), bad_rows(logits[None]).to(P.dtype)]  # token, broken-logits flag
        if top_n:
            tp = P[0].topk(top_n)
            parts += [tp.indices.to(P.dtype), tp.values]  # (top_n,) ids, (top_n,) p
        host = torch.cat(parts).tolist()  # the one read (token ids below 2^53 are exact in float64)
        if host[1]:
            raise _non_finite("target", start, index)
        if isinstance(clock, float):
            draft_s, verify_s = 0.0, time.perf_counter() - clock
        else:
            clock.mark()
            draft_s, verify_s = clock.seconds()
        return StepRecord(
            index=index,
            start=start,
            drafted=[],
            q_drafted=[],
            p_drafted=[],
            accepted=0,
            token=int(host[0]),
            kind="target",
            alphas=[],
            top_p=[_pairs(host[2 : 2 + top_n], host[2 + top_n :])] if top_n else [],
            top_q=[[]] if top_n else [],
            draft_s=draft_s,
            verify_s=verify_s,
        )


class NonFiniteLogitsError(RuntimeError):
    """A model produced NaN or inf logits: decoding stops instead of emitting a token drawn from them."""


def bad_rows(logits: torch.Tensor) -> torch.Tensor:
    """(k,) bool on the device: rows of (k, V) logits holding NaN or +inf, or nothing but -inf (no token possible).

    A -inf entry alone is a masked token and fine.
    """
    return (torch.isnan(logits) | torch.isposinf(logits)).any(-1) | torch.isneginf(logits).all(-1)


def _non_finite(which: str, position: int, index: int | None = None) -> NonFiniteLogitsError:
    """The error for non-finite logits from the `which` model ("target" or "draft") at a generated position (from 0)."""
    step = "" if index is None else f", verify step {index}"
    return NonFiniteLogitsError(
        f"the {which} model produced non-finite logits (NaN or inf) for generated token {position + 1}"
        f"{step}: its weights or activations are broken (a corrupted file, or fp16 overflow: try float32 or bfloat16)"
    )


def _first_bad(flags) -> int | None:
    """Index of the first true flag (host floats), or None."""
    return next((j for j, f in enumerate(flags) if f), None)


def _raise_if_bad(target_flags, draft_flags, start: int, index: int) -> None:
    """Raise for the earliest broken row of a verify step (the draft's row j is used before the target's row j)."""
    jt, jd = _first_bad(target_flags), _first_bad(draft_flags)
    if jd is not None and (jt is None or jd <= jt):
        raise _non_finite("draft", start + jd, index)
    if jt is not None:
        raise _non_finite("target", start + jt, index)


def _read_once(**named: torch.Tensor) -> SimpleNamespace:
    """Named device tensors brought to the host in one transfer, each back as a float64 array of its own shape.

    The tensors are flattened, cast to float64 (exact for token ids below 2^53) and
    concatenated on the device; the one `.tolist()` is the step's host read, and the
    sizes recorded here split it back by name.

    >>> h = _read_once(ids=torch.tensor([3, 1]), k=torch.tensor(1), rows=torch.eye(2))
    >>> h.ids.tolist(), int(h.k), h.rows.shape
    ([3.0, 1.0], 1, (2, 2))
    """
    shapes = {name: tuple(t.shape) for name, t in named.items()}
    flat = torch.cat([t.reshape(-1).to(torch.float64) for t in named.values()]).tolist()  # the one read
    host, out, o = np.array(flat, dtype=np.float64), {}, 0
    for name, shape in shapes.items():
        n = math.prod(shape)
        out[name] = host[o : o + n].reshape(shape)
        o += n
    return SimpleNamespace(**out)


def _pairs(ids, probs) -> list:
    return [(int(i), float(v)) for i, v in zip(ids, probs)]


def _decode(pair, ids) -> str:
    tok = getattr(pair, "tokenizer", None)
    if tok is None:
        return " ".join(map(str, ids))
    return tok.decode(ids, skip_special_tokens=True, clean_up_tokenization_spaces=False)


def speculative_generate(
    pair: Pair,
    prompt: str | Sequence[int] | torch.Tensor | np.ndarray,
    max_new_tokens: int = 64,
    gamma: int | str | GammaChooser = 4,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    seed: int | np.random.Generator | torch.Generator | None = None,
    on_step: Callable[[StepRecord], bool | None] | None = None,
    threads: int | None = 1,
    stop_at_eos: bool = False,
    chat: str | bool = "auto",
) -> GenerationResult:
    """Generate with speculative decoding; the output is distributed exactly as the target's.

    `gamma`: drafts per verify step, a whole number >= 0 (0: plain decoding through the engine),
    "auto" (each step chooses, 0 included, from the measured times and acceptance of this run
    and of the last auto run on the same models and settings: `specviz.lm.adaptive.AutoGamma`,
    `specviz.lm.adaptive.forget` to start cold), or a `GammaChooser`. `stop_at_eos=True` ends the run at
    the tokenizer's end token or the generation config's end ids; `result.finish_reason` says
    "stop", "length" (max_new_tokens reached) or "abort" (on_step returned False).

    `prompt` is text (encoded with the pair's tokenizer, through its chat template when it has
    one and `chat` is "auto" or True) or a list of token ids. `on_step(record)` is called after
    each verify step (return False to stop). `threads` sets torch's CPU threads for the call
    (1 is fastest for batch-1 decoding). `seed`: int, numpy/torch Generator or None.
    """
    return SpeculativeEngine().generate(
        pair, prompt, max_new_tokens, gamma, temperature, top_k, top_p, seed, on_step, threads, stop_at_eos, chat
    )


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
) -> GenerationResult:
    """Plain token-by-token sampling from the target (or from a single model) with the same processing.

    Tokens stay on the device while decoding; the host reads them once at the end (or every
    token when `on_token` or `stop_at_eos` needs them).
    """
    model = check_model(model_or_pair)
    check_callback(on_token, "on_token")
    max_new_tokens, _, s = _check_common(max_new_tokens, 0, dict(temperature=temperature, top_k=top_k, top_p=top_p))
    ids = _prompt_ids(model_or_pair, prompt, chat)
    _check_ids_in_vocab(ids, (model,))
    _check_room((model,), len(ids), max_new_tokens)
    gen = make_generator(seed, _device(model))
    tok = getattr(model_or_pair, "tokenizer", None)
    eos = eos_ids(model_or_pair) if stop_at_eos else set()
    per_token = on_token is not None or bool(eos)
    result = GenerationResult(list(ids), [], tokenizer=tok, finish_reason="length")
    out, bad = [], []  # (1,) device tensors: tokens, and whether the logits they came from were broken
    t0 = time.perf_counter()
    with torch_threads(threads), torch.inference_mode():
        sess = model.session(ids)
        for i in range(max_new_tokens):
            logits = sess.next_logits
            y = categorical_torch(probs_on_device(logits, s), gen)  # (1,)
            out.append(y)
            bad.append(bad_rows(logits.reshape(1, -1)))
            if per_token:
                y_id, y_bad = torch.cat([y, bad[-1]]).tolist()  # this token's one read
                if y_bad:
                    raise _non_finite("target", i)
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
        if (j := _first_bad(host[len(out) :])) is not None:
            raise _non_finite("target", j)
        result.new_ids = host[: len(out)]
    result.seconds = time.perf_counter() - t0
    result.text = _decode(model_or_pair, result.new_ids)
    return result
