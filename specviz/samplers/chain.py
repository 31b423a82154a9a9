"""γ-step speculative decoding on a toy autoregressive pair (two Markov chains), with exact enumeration.

A `MarkovPair` holds a target table P and a draft table Q, each (V + 1, V): row c is
the next-token distribution after token c, and the last row is the distribution of
the first token. `spec_chain_sample` runs the full γ-step algorithm (draft γ tokens,
verify left to right, replace at the first rejection, bonus token when all pass) on
many sequences at once; `sequence_dist` enumerates the exact distribution of
sequences that plain autoregressive sampling from P produces, so the two can be
compared.

>>> pair = tutorial_pair()
>>> pair.vocab
('cat', 'dog', 'fish')
>>> s = spec_chain_sample(pair, length=3, gamma=2, n=20_000, seed=0)
>>> s.sequences.shape
(20000, 3)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..exact.gamma import accepted_run
from ..exact.theory import resample_dist
from ..foundation.checks import gamma_setting, integer, real
from ..foundation.examples import TUTORIAL_P, TUTORIAL_Q, TUTORIAL_VOCAB
from ..foundation.validate import as_dist
from .sampling import check_sample_count, make_rng

MAX_VOCAB = 10_000  # a toy chain: its tables hold (V + 1) x V numbers
MAX_SEQUENCES = 10**7  # sequence_dist enumerates V**length sequences


def as_table(table, name: str = "table") -> np.ndarray:
    """A (V + 1, V) bigram table as float64, every row a distribution; errors name the table."""
    if hasattr(table, "detach") and hasattr(table, "cpu"):
        table = table.detach().cpu().double().numpy()
    try:
        t = np.asarray(table, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{name} table must be a (V + 1, V) array of numbers: {e}") from None
    if t.ndim != 2 or t.shape[0] != t.shape[1] + 1 or t.shape[1] == 0:
        raise ValueError(f"{name} table must have shape (V + 1, V), got {t.shape}")
    for c in range(t.shape[0]):
        as_dist(t[c], f"{name}[{c}]")
    return t


@dataclass(frozen=True)
class MarkovPair:
    """Target and draft bigram tables over one vocabulary; row V is the start distribution."""

    target: np.ndarray  # (V + 1, V) P[c] = p(next | previous token c); P[V] = p(first token)
    draft: np.ndarray  # (V + 1, V) same for the draft q
    vocab: tuple

    def __post_init__(self):
        for name in ("target", "draft"):
            object.__setattr__(self, name, as_table(getattr(self, name), name))
        if self.target.shape != self.draft.shape:
            raise ValueError(f"target {self.target.shape} and draft {self.draft.shape} tables differ in size")
        if len(self.vocab) != self.target.shape[1]:
            raise ValueError(f"vocab has {len(self.vocab)} names for {self.target.shape[1]} tokens")

    @property
    def V(self) -> int:
        return self.target.shape[1]

    @property
    def start(self) -> int:
        """Context index of the empty prefix."""
        return self.V

    def alpha(self) -> np.ndarray:
        """(V + 1,) per-context acceptance rate sum_x min(p, q)."""
        return np.minimum(self.target, self.draft).sum(axis=1)


def tutorial_pair() -> MarkovPair:
    """cat/dog/fish chain: the first token uses the tutorial's p = (.6,.3,.1), q = (.4,.5,.1)."""
    P = np.array([[0.2, 0.5, 0.3], [0.6, 0.1, 0.3], [0.3, 0.3, 0.4], TUTORIAL_P])
    Q = np.array([[0.3, 0.4, 0.3], [0.5, 0.2, 0.3], [0.1, 0.5, 0.4], TUTORIAL_Q])
    return MarkovPair(P, Q, TUTORIAL_VOCAB)


def random_pair(V: int, seed: int | np.random.Generator | None = None, concentration: float = 1.0) -> MarkovPair:
    """A random Markov pair (Dirichlet rows); lower concentration = peakier, more zeros."""
    V = integer(V, "V (vocabulary size)", lo=1, hi=MAX_VOCAB)
    concentration = real(concentration, "concentration", lo=0, lo_open=True)
    rng = make_rng(seed)
    P = rng.dirichlet(np.full(V, concentration), size=V + 1)
    Q = rng.dirichlet(np.full(V, concentration), size=V + 1)
    return MarkovPair(P, Q, tuple(f"t{i}" for i in range(V)))


def _rows_categorical(probs: np.ndarray, rng) -> np.ndarray:
    """One draw per row of probs (m, V) -> (m,) ids; never a zero-probability entry."""
    cdf = np.cumsum(probs, axis=1)
    u = rng.random(len(probs)) * cdf[:, -1]
    idx = (cdf <= u[:, None]).sum(axis=1)
    last = probs.shape[1] - 1 - np.argmax(probs[:, ::-1] > 0, axis=1)
    return np.minimum(idx, last)


@dataclass(frozen=True)
class ChainSample:
    """Sequences from γ-step speculative decoding plus what happened in each verify step."""

    sequences: np.ndarray  # (n, L) int64 token ids
    accepted_per_step: np.ndarray  # (steps,) number of accepted drafts in each verify step
    steps: np.ndarray  # (n,) verify steps each sequence needed
    gamma: int

    def tokens_per_step(self) -> float:
        """Mean emitted tokens per verify step (before truncation at L)."""
        return float(np.mean(self.accepted_per_step + 1))


def spec_chain_sample(
    pair: MarkovPair, length: int, gamma: int, n: int, seed: int | np.random.Generator | None = None, bonus: bool = True
) -> ChainSample:
    """n sequences of `length` tokens by γ-step speculative decoding (vectorised over sequences).

    `bonus=False` drops the extra target token after a fully accepted round (a known
    bug that is still lossless but slower; kept for teaching).
    """
    if not isinstance(pair, MarkovPair):
        raise TypeError(f"pair must be a MarkovPair (e.g. tutorial_pair()), got {type(pair).__name__}")
    n, L = check_sample_count(n), check_sample_count(length, "length")
    gamma = gamma_setting(gamma, "gamma (number of drafted tokens)", lo=1)
    rng = make_rng(seed)
    P, Q = pair.target, pair.draft
    repair = np.array([resample_dist(P[c], Q[c]) for c in range(len(P))])  # (V + 1, V) (p - q)+ / Z per context
    seq = np.full((n, L + gamma + 1), -1, dtype=np.int64)
    pos = np.zeros(n, dtype=np.int64)
    ctx = np.full(n, pair.start, dtype=np.int64)
    steps = np.zeros(n, dtype=np.int64)
    accepted_log = []
    rows = np.arange(n)
    while True:
        act = rows[pos < L]
        if not act.size:
            break
        m = act.size
        drafts = np.empty((m, gamma), dtype=np.int64)
        ctxs = np.empty((m, gamma + 1), dtype=np.int64)
        ctxs[:, 0] = ctx[act]
        for j in range(gamma):  # the draft proposes γ tokens autoregressively
            drafts[:, j] = _rows_categorical(Q[ctxs[:, j]], rng)
            ctxs[:, j + 1] = drafts[:, j]
        p_x = P[ctxs[:, :gamma], drafts]  # (m, γ) target prob of each drafted token
        q_x = Q[ctxs[:, :gamma], drafts]  # (m, γ) draft prob (> 0: it was sampled)
        k = accepted_run(rng.random((m, gamma)) < np.minimum(1.0, p_x / q_x))  # (m,) accepted drafts
        # replacement at position k: the repair (p - q)+ / Z after a rejection, target p for the bonus
        c_k = ctxs[np.arange(m), k]
        full = k == gamma
        repl = _rows_categorical(np.where(full[:, None], P[c_k], repair[c_k]), rng)
        emit = np.where(np.arange(gamma + 1)[None, :] < k[:, None], np.pad(drafts, ((0, 0), (0, 1))), -1)
        emit[np.arange(m), k] = repl
        if not bonus:
            emit[full, gamma] = -1
        n_emit = np.where(full & (not bonus), k, k + 1)
        for j in range(gamma + 1):  # write emitted tokens at each sequence's position
            w = j < n_emit
            seq[act[w], pos[act[w]] + j] = emit[w, j]
        last = emit[np.arange(m), n_emit - 1]
        pos[act] += n_emit
        ctx[act] = last
        steps[act] += 1
        accepted_log.append(k)
    acc = np.concatenate(accepted_log) if accepted_log else np.zeros(0, np.int64)
    return ChainSample(seq[:, :L], acc, steps, int(gamma))


def ar_chain_sample(
    table: np.ndarray, length: int, n: int, seed: int | np.random.Generator | None = None
) -> np.ndarray:
    """(n, L) sequences by plain autoregressive sampling from a (V + 1, V) table."""
    table = as_table(table)
    n, L = check_sample_count(n), check_sample_count(length, "length")
    rng = make_rng(seed)
    V = table.shape[1]
    seq = np.empty((n, L), dtype=np.int64)
    ctx = np.full(n, V, dtype=np.int64)
    for t in range(L):
        seq[:, t] = _rows_categorical(table[ctx], rng)
        ctx = seq[:, t]
    return seq


def sequence_dist(table: np.ndarray, length: int) -> np.ndarray:
    """(V,)*L exact probability of every sequence under autoregressive sampling from `table`.

    >>> d = sequence_dist(tutorial_pair().target, 2)
    >>> d.shape, round(float(d.sum()), 12), round(float(d[0].sum()), 12)
    ((3, 3), 1.0, 0.6)
    """
    table = as_table(table)
    V = table.shape[1]
    length = integer(length, "length", lo=1)
    if length * math.log(V) > math.log(MAX_SEQUENCES):
        raise ValueError(f"length {length} over {V} tokens makes {V}**{length} sequences, more than {MAX_SEQUENCES:g}")
    dist = table[V].copy()  # (V,) first token
    for t in range(1, length):
        # dist has shape (V,)*t; multiply by P[last token] along a new axis
        dist = dist[..., None] * table[:V].reshape((1,) * (t - 1) + (V, V))
    return dist


def sequence_index(sequences: np.ndarray, V: int) -> np.ndarray:
    """(n, L) sequences -> (n,) flat index into sequence_dist(...).ravel() (base V)."""
    V = integer(V, "V (vocabulary size)", lo=1)
    if hasattr(sequences, "detach") and hasattr(sequences, "cpu"):
        sequences = sequences.detach().cpu().numpy()
    try:
        sequences = np.asarray(sequences)
    except ValueError as e:  # ragged lists
        raise ValueError(f"sequences must be an (n, L) array of token ids: {e}") from None
    if sequences.ndim != 2 or sequences.dtype.kind not in "iu":
        raise ValueError(
            f"sequences must be an (n, L) array of integer token ids, got {sequences.dtype} {sequences.shape}"
        )
    if sequences.size and (sequences.min() < 0 or sequences.max() >= V):
        raise ValueError(f"sequences hold ids outside 0..{V - 1} (V = {V} tokens)")
    if sequences.shape[1] * math.log(V) >= 63 * math.log(2):
        raise ValueError(f"V = {V} and length {sequences.shape[1]}: V**length sequences overflow an int64 index")
    weights = V ** np.arange(sequences.shape[1] - 1, -1, -1)
    return sequences @ weights
