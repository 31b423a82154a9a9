"""Speculative decoding on real (or toy) language models: the γ-step loop with KV-cache rollback.

One verify step: the draft proposes γ tokens from q (after the same temperature /
top-k / top-p processing as the target: "standardized sampling"), the target scores
all of them in one forward pass, drafts are accepted left to right with probability
min(1, p/q), the first rejection is replaced by a sample from (p - q)+ / Z, and when
all γ pass a bonus token comes from the target's next distribution. Both caches are
then cropped back to the accepted prefix.

>>> from specviz.lm.models import NGramModel
>>> from specviz.lm.loading import Pair
>>> pair = Pair(NGramModel.random(5, seed=1), NGramModel.random(5, seed=2))
>>> r = speculative_generate(pair, [0], max_new_tokens=10, gamma=3, seed=0)
>>> len(r.new_ids), sum(s.n_emitted for s in r.steps)
(10, 10)
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field

import numpy as np
import torch

from ..sampling import categorical
from ..standardize import Sampling

TOP_N = 8  # tokens of p and q kept per emitted position, for the live view


def process_logits(rows: torch.Tensor, s: Sampling) -> np.ndarray:
    """(k, V) logits -> (k, V) float64 probabilities after temperature, top-k, top-p.

    Same semantics as `specviz.standardize` (temperature 0 = one-hot argmax).
    """
    z = rows.detach().to(torch.float64)
    if z.ndim == 1:
        z = z[None]
    if s.temperature == 0:
        out = torch.zeros_like(z)
        out.scatter_(-1, z.argmax(-1, keepdim=True), 1.0)
        return out.cpu().numpy()
    z = z / s.temperature
    if s.top_k:
        k = min(int(s.top_k), z.shape[-1])
        kth = torch.topk(z, k, dim=-1).values[:, -1:]
        z = z.masked_fill(z < kth, float("-inf"))
    prob = torch.softmax(z, dim=-1)
    if s.top_p is not None and s.top_p < 1:
        sp, order = torch.sort(prob, dim=-1, descending=True, stable=True)
        cum = sp.cumsum(-1)
        keep_n = torch.searchsorted(cum, torch.full((len(cum), 1), s.top_p - 1e-12, dtype=cum.dtype)) + 1
        keep_sorted = torch.arange(z.shape[-1])[None, :] < keep_n
        keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
        prob = torch.where(keep, prob, torch.zeros_like(prob))
        prob = prob / prob.sum(-1, keepdim=True)
    return prob.cpu().numpy()


def _top(dist: np.ndarray, n: int = TOP_N):
    idx = np.argsort(-dist, kind="stable")[:n]
    return [(int(i), float(dist[i])) for i in idx]


@dataclass
class StepRecord:
    """What happened in one verify step."""

    index: int  # verify step number, from 0
    start: int  # number of tokens generated before this step
    drafted: list  # γ drafted token ids
    q_drafted: list  # q(x_j) of each drafted token
    p_drafted: list  # p(x_j) of each drafted token
    accepted: int  # how many drafts were kept (0..γ)
    token: int | None  # the replacement (after a rejection) or bonus token; None if bonus_dist gave none
    kind: str  # "resampled", "bonus" (all γ accepted) or "target" (γ = 0: a plain target step)
    alphas: list  # sum_x min(p, q) at every verified position
    top_p: list  # per emitted position: [(id, p)] top tokens of p
    top_q: list  # per emitted position: [(id, q)] top tokens of q ([] for the bonus position)
    draft_s: float  # seconds spent drafting
    verify_s: float  # seconds in the target's verify forward and the accept/reject logic

    @property
    def gamma(self) -> int:
        return len(self.drafted)

    @property
    def emitted(self) -> list:
        return list(self.drafted[: self.accepted]) + ([] if self.token is None else [self.token])

    @property
    def n_emitted(self) -> int:
        return self.accepted + (self.token is not None)


@dataclass
class GenerationResult:
    """Output of one generation: ids, text, and (for speculative runs) a record per verify step."""

    prompt_ids: list
    new_ids: list
    text: str = ""
    steps: list = field(default_factory=list)
    seconds: float = 0.0
    gamma: int = 0
    stopped: bool = False  # True when on_step asked to stop

    @property
    def ids(self) -> list:
        return self.prompt_ids + self.new_ids

    @property
    def tokens_per_second(self) -> float:
        return len(self.new_ids) / self.seconds if self.seconds > 0 else float("nan")

    def fates(self) -> list:
        """Per generated token: "accepted", "resampled", "bonus" or "target"."""
        out = []
        for s in self.steps:
            out += ["accepted"] * s.accepted + ([] if s.token is None else [s.kind])
        return out[: len(self.new_ids)]


@contextlib.contextmanager
def torch_threads(n: int | None):
    """Temporarily set torch's intra-op threads (1 is fastest for batch-1 decoding on CPU)."""
    if n is None:
        yield
        return
    old = torch.get_num_threads()
    torch.set_num_threads(int(n))
    try:
        yield
    finally:
        torch.set_num_threads(old)


def _prompt_ids(pair_or_model, prompt) -> list:
    if isinstance(prompt, str):
        if not prompt:
            raise ValueError("the prompt is empty: type at least one character")
        tok = getattr(pair_or_model, "tokenizer", None)
        if tok is None:
            raise ValueError("a text prompt needs a tokenizer; this model has none, pass token ids")
        ids = tok.encode(prompt, add_special_tokens=False)
    else:
        ids = [int(t) for t in prompt]
    if not ids:
        raise ValueError("the prompt is empty: give at least one token")
    return ids


def _check_room(models, n_prompt: int, max_new_tokens: int, gamma: int) -> None:
    for m in models:
        if m.max_positions is None:
            continue
        need = n_prompt + max_new_tokens + gamma
        if n_prompt >= m.max_positions or need > m.max_positions:
            raise ValueError(
                f"prompt of {n_prompt} tokens + max_new_tokens {max_new_tokens} (+ gamma {gamma} lookahead) "
                f"does not fit {m.name}'s context of {m.max_positions} positions: shorten the prompt or "
                "ask for fewer tokens")


def _check_common(max_new_tokens, gamma, sampling_kw):
    if int(max_new_tokens) != max_new_tokens or max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be an integer >= 1, got {max_new_tokens!r}")
    if int(gamma) != gamma or gamma < 0:
        raise ValueError(f"gamma must be an integer >= 0, got {gamma!r}")
    return Sampling(**sampling_kw)


class SpeculativeEngine:
    """The γ-step loop, written once against the Session interface.

    The hooks (`residual`, `bonus_dist`, `rollback`, `target_row`) are the places where
    known bugs live; tests subclass the engine to plant them and check they are caught.
    """

    def residual(self, p_k: np.ndarray, q_k: np.ndarray) -> np.ndarray:
        """Replacement distribution after a rejection at a position with target p_k, draft q_k."""
        r = np.maximum(p_k - q_k, 0.0)
        z = r.sum()
        return r / z if z > 0 else p_k

    def bonus_dist(self, p_rows: np.ndarray, gamma: int) -> np.ndarray | None:
        """Distribution of the extra token after all γ drafts pass (None: no bonus)."""
        return p_rows[gamma]

    def target_row(self, j: int) -> int:
        """Which target row is compared with drafted token j."""
        return j

    def rollback(self, session, keep: int, next_logits) -> None:
        """Crop a session's cache back to `keep` tokens."""
        if keep < session.length:
            session.truncate(keep, next_logits)
        elif next_logits is not None:
            session.next_logits = next_logits

    def generate(self, pair, prompt, max_new_tokens=64, gamma=4, temperature=1.0, top_k=None, top_p=None,
                 seed=None, on_step=None, threads=1, stop_at_eos=False) -> GenerationResult:
        s = _check_common(max_new_tokens, gamma, dict(temperature=temperature, top_k=top_k, top_p=top_p))
        ids = _prompt_ids(pair, prompt)
        for m in (pair.target, pair.draft):
            if max(ids) >= m.vocab_size or min(ids) < 0:
                raise ValueError(f"prompt token id {max(ids)} is outside {m.name}'s vocabulary of {m.vocab_size}")
        _check_room((pair.target, pair.draft), len(ids), max_new_tokens, gamma)
        rng = np.random.default_rng(seed)
        eos = getattr(getattr(pair, "tokenizer", None), "eos_token_id", None) if stop_at_eos else None
        result = GenerationResult(list(ids), [], gamma=int(gamma))
        t_start = time.perf_counter()
        with torch_threads(threads):
            T = pair.target.session(ids)
            D = pair.draft.session(ids)
            seq = list(ids)
            while len(result.new_ids) < max_new_tokens:
                rec = self._step(T, D, seq, s, min(gamma, max_new_tokens - len(result.new_ids) - 1), rng,
                                 len(result.steps), len(result.new_ids))
                emitted = rec.emitted
                seq += emitted
                result.new_ids += emitted
                result.steps.append(rec)
                if on_step is not None and on_step(rec) is False:
                    result.stopped = True
                    break
                if eos is not None and eos in emitted:
                    cut = result.new_ids.index(eos) + 1
                    result.new_ids = result.new_ids[:cut]
                    break
        result.seconds = time.perf_counter() - t_start
        result.text = _decode(pair, result.new_ids)
        return result

    def _step(self, T, D, seq, s: Sampling, g: int, rng, index: int, start: int) -> StepRecord:
        n = len(seq)
        t0 = time.perf_counter()
        # --- draft g tokens autoregressively from q
        pend_d = seq[D.length:]
        if pend_d:
            D.feed(pend_d)
        d_logits = [D.next_logits]
        drafts, q_rows = [], []
        for j in range(g):
            q_j = process_logits(d_logits[j], s)[0]
            x = int(categorical(q_j, 1, rng)[0])
            drafts.append(x)
            q_rows.append(q_j)
            if j < g - 1:
                d_logits.append(D.feed([x])[0])
        t1 = time.perf_counter()
        # --- verify: one target forward over the pending tokens and all drafts
        pend_t = seq[T.length:]
        before = T.next_logits
        rows = T.feed(pend_t + drafts)
        all_rows = torch.cat([before[None], rows], dim=0)  # all_rows[i]: logits after token T.length_old - 1 + i
        base = len(pend_t)  # all_rows[base + j] scores the token at position n + j
        P = process_logits(all_rows[base: base + g + 1], s)  # (g+1, V)
        k = 0
        for j in range(g):
            x = drafts[j]
            p_x, q_x = P[self.target_row(j)][x], q_rows[j][x]
            if rng.random() * q_x < p_x:  # accept with probability min(1, p/q)
                k += 1
            else:
                break
        if k < g:
            token = int(categorical(self.residual(P[k], q_rows[k]), 1, rng)[0])
            kind = "resampled"
        else:
            bonus = self.bonus_dist(P, g) if g > 0 else P[0]
            token = int(categorical(bonus, 1, rng)[0]) if bonus is not None else None
            kind = "bonus" if g > 0 else "target"
        # --- roll both caches back to the accepted prefix
        self.rollback(T, n + k, all_rows[base + k])
        self.rollback(D, n + k, d_logits[k] if k < len(d_logits) else None)
        t2 = time.perf_counter()
        verified = min(k + 1, g)
        rec = StepRecord(
            index=index, start=start, drafted=drafts,
            q_drafted=[float(q_rows[j][drafts[j]]) for j in range(g)],
            p_drafted=[float(P[j][drafts[j]]) for j in range(g)],
            accepted=k, token=token, kind=kind,
            alphas=[float(np.minimum(P[j], q_rows[j]).sum()) for j in range(verified)],
            top_p=[_top(P[j]) for j in range(k + 1)],
            top_q=[_top(q_rows[j]) for j in range(min(k + 1, g))] + ([[]] if k == g else []),
            draft_s=t1 - t0, verify_s=t2 - t1)
        return rec


def _decode(pair, ids) -> str:
    tok = getattr(pair, "tokenizer", None)
    if tok is None:
        return " ".join(map(str, ids))
    return tok.decode(ids, skip_special_tokens=True, clean_up_tokenization_spaces=False)


def speculative_generate(pair, prompt, max_new_tokens=64, gamma=4, temperature=1.0, top_k=None, top_p=None,
                         seed=None, on_step=None, threads=1, stop_at_eos=False) -> GenerationResult:
    """Generate with speculative decoding; the output is distributed exactly as the target's.

    `on_step(record)` is called after each verify step (return False to stop).
    `threads` sets torch's CPU threads for the call (1 is fastest for batch-1 decoding).
    """
    return SpeculativeEngine().generate(pair, prompt, max_new_tokens, gamma, temperature, top_k, top_p, seed,
                                        on_step, threads, stop_at_eos)


def autoregressive_generate(model_or_pair, prompt, max_new_tokens=64, temperature=1.0, top_k=None, top_p=None,
                            seed=None, threads=1, stop_at_eos=False, on_token=None) -> GenerationResult:
    """Plain token-by-token sampling from the target (or from a single model) with the same processing."""
    s = _check_common(max_new_tokens, 0, dict(temperature=temperature, top_k=top_k, top_p=top_p))
    model = getattr(model_or_pair, "target", model_or_pair)
    ids = _prompt_ids(model_or_pair, prompt)
    _check_room((model,), len(ids), max_new_tokens, 0)
    rng = np.random.default_rng(seed)
    eos = getattr(getattr(model_or_pair, "tokenizer", None), "eos_token_id", None) if stop_at_eos else None
    result = GenerationResult(list(ids), [])
    t0 = time.perf_counter()
    with torch_threads(threads):
        sess = model.session(ids)
        for i in range(max_new_tokens):
            p = process_logits(sess.next_logits, s)[0]
            y = int(categorical(p, 1, rng)[0])
            result.new_ids.append(y)
            if on_token is not None and on_token(y) is False:
                result.stopped = True
                break
            if y == eos:
                break
            if i < max_new_tokens - 1:
                sess.feed([y])
    result.seconds = time.perf_counter() - t0
    result.text = _decode(model_or_pair, result.new_ids)
    return result
