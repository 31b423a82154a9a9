"""Exercises of tutorial 7 (pitfalls, auditing a verifier you write yourself, and the lenient rule's law).

The number answers are hand fractions and 7.4's reference is an exact `Fraction` computation, all
written here from the formulas (independently of `specviz.exact.rules`; tests/test_exercises.py checks
that they agree with `sv.output_dist`).
"""

from fractions import Fraction
from functools import partial

import numpy as np

from ..foundation.examples import TUTORIAL_P, TUTORIAL_Q
from ..samplers.verifiers import BUGGY_VERIFIERS, ignores_the_draft
from .core import function_exercise, number_exercise, verifier_exercise

P, Q = TUTORIAL_P, TUTORIAL_Q  # target p and draft q of the running example (cat, dog, fish)
P2, Q2 = (0.7, 0.2, 0.1), (0.1, 0.2, 0.7)  # the second pair of the tutorial
Q6 = (0.2, 0.2, 0.6)  # the other draft of tutorial 6, used by exercises 7.1 and 7.2 (the notebook prints neither)
LENIENCE = Fraction("0.8")  # the lenience l of exercise 7.4 (the notebook's table uses the default 0.5)


def exact(dist) -> list[Fraction]:
    """A distribution's entries as exact fractions of the decimals they print as (0.1 -> 1/10)."""
    return [Fraction(str(float(v))) for v in dist]


def output_resample_from_p(p, q) -> list[Fraction]:
    """The Q1 pitfall's output law, by hand: min(p, q) + P(reject) · p."""
    p, q = exact(p), exact(q)
    p_reject = 1 - sum(min(pi, qi) for pi, qi in zip(p, q))
    return [min(pi, qi) + p_reject * pi for pi, qi in zip(p, q)]


def output_abs_residual(p, q) -> list[Fraction]:
    """The Q2 pitfall's output law, by hand: min(p, q) + P(reject) · |p − q| / Σ|p − q|."""
    p, q = exact(p), exact(q)
    p_reject = 1 - sum(min(pi, qi) for pi, qi in zip(p, q))
    gap = [abs(pi - qi) for pi, qi in zip(p, q)]
    total = sum(gap)
    return [min(pi, qi) + (p_reject * g / total if total else 0) for pi, qi, g in zip(p, q, gap)]


def lenient_output(p, q, lenience=LENIENCE) -> list[Fraction]:
    """The lenient rule's output law, exactly: keep x with min(1, p/(l q)), else draw from (p − q)⁺ / Z.

    The accept part is q(x)·min(1, p(x)/(l q(x))) = min(q(x), p(x)/l); a rejection, with probability
    1 − Σ min(q, p/l), is repaired from the shortfall as in the lossless rule.
    """
    p, q, lenience = exact(p), exact(q), Fraction(lenience)
    accept = [min(qi, pi / lenience) for pi, qi in zip(p, q)]
    p_reject = 1 - sum(accept)
    shortfall = [max(pi - qi, Fraction(0)) for pi, qi in zip(p, q)]
    z = sum(shortfall)
    return [a + (p_reject * s / z if z else 0) for a, s in zip(accept, shortfall)]


def lenient_reference(p, q) -> np.ndarray:
    """The hidden reference of exercise 7.4 (l = LENIENCE), as floats."""
    return np.array([float(v) for v in lenient_output(p, q)])


def lenient_cases() -> list[tuple]:
    """(p, q) pairs exercise 7.4 is graded on: both examples, q = p, disjoint supports, random pairs (seed 74)."""
    rng = np.random.default_rng(74)
    cases = [
        (P, Q),
        (P2, Q2),
        (P, P),  # nothing is ever rejected (min(1, 1/l) = 1)
        ((0.0, 0.75, 0.25), (1.0, 0.0, 0.0)),  # every draft is rejected
        ((0.25, 0.25, 0.5, 0.0), (0.0, 0.5, 0.25, 0.25)),
    ]
    cases += [(rng.dirichlet(np.full(6, 0.5)), rng.dirichlet(np.full(6, 0.5))) for _ in range(4)]
    return cases


def verifier_pairs() -> list[tuple]:
    """(p, q) pairs a written verifier is audited on: the two examples, q = p, disjoint supports, a random pair."""
    rng = np.random.default_rng(7)
    return [
        (P, Q),
        (P2, Q2),
        (P, P),  # Z = 0: a rejection never happens, so no 0/0 may be computed on the way
        ((0.0, 0.75, 0.25), (1.0, 0.0, 0.0)),  # every draft is rejected
        (rng.dirichlet(np.full(8, 0.5)), rng.dirichlet(np.full(8, 0.5))),
    ]


number_exercise(
    "7.1",
    "07",
    {
        "en": "The Q1 pitfall on a draft this notebook never uses: the target p = (0.6, 0.3, 0.1) of the running "
        "example, the draft q = (0.2, 0.2, 0.6), and on a rejection a resample from p instead of (p − q)⁺ / Z. "
        "What is P(out = cat) then? (The target wants 0.6; checked to within 1e-6.)",
        "zh": "换一个本篇没有用过的草稿来看 Q1 陷阱：目标是例子中的 p = (0.6, 0.3, 0.1)，草稿 q = (0.2, 0.2, 0.6)，"
        "被拒绝时从目标 p 重采样，而不是从 (p − q)⁺ / Z 抽样。此时 P(输出 = cat) 是多少？"
        "（目标要的是 0.6；误差不超过 1e-6 即算对。）",
    },
    answer=lambda: float(output_resample_from_p(P, Q6)[0]),
    hints=[
        {
            "en": "The accept branch is unchanged: it still delivers min(p(cat), q(cat)).",
            "zh": "接受分支没有变：它仍然贡献 min(p(cat), q(cat))。",
        },
        {
            "en": "The reject branch now adds P(reject) · p(cat), with P(reject) = 1 − Σ min(p, q).",
            "zh": "拒绝分支现在贡献 P(拒绝) · p(cat)，其中 P(拒绝) = 1 − Σ min(p, q)。",
        },
    ],
    solution='answer = sv.output_dist(sv.TUTORIAL_P, (0.2, 0.2, 0.6), rule="resample_target")[0]',
    wrong=[0.6, 0.2, 0.3, 0.52],  # the target; the accept part only; the reject part only; the running example
)

number_exercise(
    "7.2",
    "07",
    {
        "en": "The Q2 pitfall on the same pair, p = (0.6, 0.3, 0.1) and q = (0.2, 0.2, 0.6): on a rejection, "
        "draw from |p − q| / Σ|p − q| instead of (p − q)⁺ / Z. What is P(out = fish)? (The target wants 0.1; "
        "checked to within 1e-6.)",
        "zh": "同一对分布 p = (0.6, 0.3, 0.1)、q = (0.2, 0.2, 0.6) 上的 Q2 陷阱：被拒绝时从 |p − q| / Σ|p − q| 抽样，"
        "而不是从 (p − q)⁺ / Z 抽样。P(输出 = fish) 是多少？（目标要的是 0.1；误差不超过 1e-6 即算对。）",
    },
    answer=lambda: float(output_abs_residual(P, Q6)[2]),
    hints=[
        {"en": "Accept part: min(p(fish), q(fish)).", "zh": "接受部分：min(p(fish), q(fish))。"},
        {
            "en": "Reject part: (1 − Σ min(p, q)) · |p(fish) − q(fish)| / Σ_x |p(x) − q(x)|.",
            "zh": "拒绝部分：(1 − Σ min(p, q)) · |p(fish) − q(fish)| / Σ_x |p(x) − q(x)|。",
        },
    ],
    solution='answer = sv.output_dist(sv.TUTORIAL_P, (0.2, 0.2, 0.6), rule="abs_residual")[2]',
    wrong=[0.1, 0.6, 0.25, 0.15],  # p(fish); q(fish); the reject part only; the Q1 pitfall's fish
)

verifier_exercise(
    "7.3",
    "07",
    {
        "en": "Write your own verifier: a function verifier(p, q, n, rng) that returns (drafts, out), the n drafts "
        "and the n token ids of n independent speculative steps (draft from q, keep with probability "
        "min(1, p/q), else draw from (p − q)⁺ / Z). It is graded on five pairs, including q = p and disjoint "
        "supports: out must follow p (sv.audit's chi-square, false-alarm rate 1e-3), the drafts must follow q, "
        "the share of outputs equal to their draft must match Σ min(p, q) (z-test, false-alarm rate 1e-6), and "
        "each (draft, out) pair must follow the rule (a kept draft is output as is).",
        "zh": "自己写一个验证器：函数 verifier(p, q, n, rng) 返回 (drafts, out)，即 n 次独立投机步骤的 n 个草稿和 n 个 token 的编号"
        "（从 q 抽草稿，以 min(1, p/q) 的概率保留，否则从 (p − q)⁺ / Z 抽样）。"
        "在五对分布上评分，其中包括 q = p 和支撑集不相交的情形：out 须服从 p（sv.audit 的卡方检验，误报率 1e-3），"
        "草稿须服从 q，输出等于其草稿的比例须与 Σ min(p, q) 一致（z 检验，误报率 1e-6），"
        "并且每一对 (草稿, 输出) 都须符合规则（被保留的草稿原样输出）。",
    },
    pairs=verifier_pairs,
    hints=[
        {
            "en": "Vectorise: x = rng.choice(len(q), size=n, p=q) drafts all n tokens; r = rng.random(n) are the "
            "uniforms r of the notation table; keep where r * q[x] < p[x] (no division).",
            "zh": "向量化：x = rng.choice(len(q), size=n, p=q) 一次抽出全部 n 个草稿；r = rng.random(n) 是记号表里的均匀随机数 r；"
            "在 r * q[x] < p[x] 处保留（不做除法）。",
        },
        {
            "en": "For the rejected positions draw from short / short.sum() with short = np.maximum(p - q, 0), "
            "and only when there are rejected positions (with q = p there are none, and Z = 0). Return x, out.",
            "zh": "被拒绝的位置从 short / short.sum() 抽样，其中 short = np.maximum(p - q, 0)；"
            "只有确实存在被拒绝的位置时才这样做（q = p 时没有拒绝，而且 Z = 0）。最后返回 x, out。",
        },
    ],
    solution=(
        "def my_verifier(p, q, n, rng):\n"
        "    x = rng.choice(len(q), size=n, p=q)            # n drafts\n"
        "    keep = rng.random(n) * q[x] < p[x]             # accept with probability min(1, p/q)\n"
        "    out = x.copy()\n"
        "    rejected = np.flatnonzero(~keep)\n"
        "    if rejected.size:                               # never when q = p, where Z = 0\n"
        "        short = np.maximum(p - q, 0.0)\n"
        "        out[rejected] = rng.choice(len(p), size=rejected.size, p=short / short.sum())\n"
        "    return x, out                                   # the drafts, and what the rule made of them\n"
        "\n"
        "answer = my_verifier"
    ),
    wrong=[
        *(
            partial(BUGGY_VERIFIERS[name], with_drafts=True)
            for name in ("resample_from_p", "abs_residual", "off_by_one")
        ),
        ignores_the_draft,  # lossless, but it keeps a draft only Σ p·q of the time
        lambda p, q, n, rng: rng.choice(len(p), n, p=p),  # the output alone: nothing shows a draft was used
    ],
)

function_exercise(
    "7.4",
    "07",
    {
        "en": "A lenient verifier keeps a draft x with probability min(1, p(x) / (l·q(x))) for a lenience l < 1, and "
        "on a rejection draws from (p − q)⁺ / Z as before. Write lenient_output(p, q) that returns its exact output "
        "law P(out = x) for l = 0.8, for any pair of numpy arrays. It is graded against an exact reference on both "
        "pairs of this notebook, q = p, disjoint supports and random pairs, entry by entry to within 1e-9.",
        "zh": "宽松验证器对宽松度 l < 1 以概率 min(1, p(x) / (l·q(x))) 保留草稿 x，被拒绝时和原来一样从 (p − q)⁺ / Z 抽样。"
        "写一个函数 lenient_output(p, q)，对任意一对 numpy 数组返回 l = 0.8 时的精确输出分布 P(输出 = x)。"
        "评分时会和一个精确的参考结果逐项比较（误差不超过 1e-9），用例包括本篇的两对分布、q = p、支撑集不相交和随机分布对。",
    },
    reference=lenient_reference,
    cases=lenient_cases,
    hints=[
        {
            "en": "Split as in notebook 5. Accept part: q(x)·min(1, p(x)/(l q(x))) = min(q(x), p(x)/l), "
            "so P(reject) = 1 − Σ min(q, p/l), which is smaller than Z when l < 1.",
            "zh": "像第 5 篇那样拆开。接受部分：q(x)·min(1, p(x)/(l q(x))) = min(q(x), p(x)/l)，"
            "所以 P(拒绝) = 1 − Σ min(q, p/l)；l < 1 时它比 Z 小。",
        },
        {
            "en": "Reject part: P(reject) · (p − q)⁺ / Z, with Z = Σ (p − q)⁺; when Z = 0 (q = p) nothing is "
            "rejected, so add nothing instead of dividing by 0.",
            "zh": "拒绝部分：P(拒绝) · (p − q)⁺ / Z，其中 Z = Σ (p − q)⁺；Z = 0（q = p）时不会有拒绝，"
            "直接加 0，不要除以 0。",
        },
    ],
    solution=(
        "def lenient_output(p, q, l=0.8):\n"
        "    accept = np.minimum(q, p / l)                   # q·min(1, p/(l q)), also where q = 0\n"
        "    shortfall = np.maximum(p - q, 0.0)\n"
        "    z = shortfall.sum()\n"
        "    repair = (1 - accept.sum()) * shortfall / z if z > 0 else 0.0\n"
        "    return accept + repair\n"
        "\n"
        "answer = lenient_output"
    ),
    wrong=[
        lambda p, q: p,  # what a lossless rule gives: the lenient rule is not lossless
        lambda p, q: np.minimum(q, p / 0.8),  # the accept part alone
        lambda p, q: np.minimum(q, p / 0.8) + (1 - np.minimum(q, p / 0.8).sum()) * p,  # lenient, repair from p
        lambda p, q: np.minimum(q, 0.8 * p) + (1 - np.minimum(q, 0.8 * p).sum()) * p,  # l on the wrong side too
    ],
)
