"""Exercises of tutorial 10 (recap): the pitfalls in numbers, and a verifier of your own graded by `audit`."""

from fractions import Fraction as F
from functools import partial

import numpy as np

from ..foundation.examples import TUTORIAL_P, TUTORIAL_Q
from ..samplers.verifiers import BUGGY_VERIFIERS, ignores_the_draft
from .core import number_exercise, verifier_exercise

P, Q = TUTORIAL_P, TUTORIAL_Q  # target p and draft q of the running example (cat, dog, fish)
P3, Q3 = (0.5, 0.3, 0.2), (0.2, 0.3, 0.5)  # a pair notebook 10 never prints (exercise 10.1)
Q_ABS = (F(1, 10), F(3, 5), F(3, 10))  # a new draft for the target P3 (exercise 10.2); no page prints its output
TOL_EN = " Checked to within 1e-6."
TOL_ZH = "判分允许的误差为 1e-6。"


def abs_residual_output(p, q) -> list[F]:
    """The |p − q| pitfall's output law by exact enumeration: every draft x, kept or rejected, then every repair y."""
    p, q = [F(str(v)) for v in p], [F(str(v)) for v in q]  # 0.1 -> 1/10, not its binary float
    gaps = [abs(pi - qi) for pi, qi in zip(p, q)]
    out = [F(0)] * len(p)
    for x, (px, qx) in enumerate(zip(p, q)):
        if qx == 0:
            continue
        keep = min(F(1), px / qx)
        out[x] += qx * keep  # the draft x is kept
        for y, gap in enumerate(gaps):  # the draft x is rejected and y is drawn from |p − q| / Σ|p − q|
            out[y] += qx * (1 - keep) * gap / sum(gaps)
    return out


def verifier_pairs() -> list[tuple]:
    """(p, q) pairs that grade a verifier: the running example, q = p, disjoint supports, random pairs (seed 10)."""
    rng = np.random.default_rng(10)
    pairs = [(P, Q), (P, P), ((0.0, 0.5, 0.5), (1.0, 0.0, 0.0))]
    pairs += [(rng.dirichlet(np.ones(8)), rng.dirichlet(np.ones(8))) for _ in range(2)]
    return pairs


number_exercise(
    "10.1",
    "10",
    {
        "en": "A verifier repairs a rejection by drawing from the target p instead of from (p − q)⁺ / Z. "
        "On the pair p = (0.5, 0.3, 0.2), q = (0.2, 0.3, 0.5), with what probability does it output the first token?"
        + TOL_EN,
        "zh": "某个验证器在拒绝后直接从目标分布 p 重新采样，而不是从 (p − q)⁺ / Z 采样。"
        "在 p = (0.5, 0.3, 0.2)、q = (0.2, 0.3, 0.5) 这一对分布上，它输出第一个 token 的概率是多少？" + TOL_ZH,
    },
    # by hand: min(p, q) = (1/5, 3/10, 1/5), P(reject) = 3/10; 1/5 + 3/10 · 1/2 = 7/20
    answer=lambda: float(F(1, 5) + (1 - (F(1, 5) + F(3, 10) + F(1, 5))) * F(1, 2)),
    hints=[
        {
            "en": "P(out = x₁) = P(x₁ and accept) + P(reject)·p(x₁).",
            "zh": "P(输出 = x₁) = P(x₁ 且被接受) + P(拒绝)·p(x₁)。",
        },
        {
            "en": "P(x₁ and accept) = min(p(x₁), q(x₁)), and P(reject) = 1 − Σ_x min(p(x), q(x)).",
            "zh": "P(x₁ 且被接受) = min(p(x₁), q(x₁))，P(拒绝) = 1 − Σ_x min(p(x), q(x))。",
        },
    ],
    solution="answer = sv.output_dist((0.5, 0.3, 0.2), (0.2, 0.3, 0.5), rule='resample_target')[0]",
    wrong=[0.5, 0.52],  # 0.5: what a lossless verifier gives; 0.52: the running example's cat
)

number_exercise(
    "10.2",
    "10",
    {
        "en": "Another verifier repairs from |p − q| (normalised) instead of (p − q)⁺. On the target of 10.1 with a "
        "new draft, p = (0.5, 0.3, 0.2) and q = (0.1, 0.6, 0.3), with what probability does it output the second "
        "token, x₂?" + TOL_EN,
        "zh": "另一个验证器拒绝后从 |p − q|（归一化后）采样，而不是从 (p − q)⁺ 采样。目标仍是 10.1 的 "
        "p = (0.5, 0.3, 0.2)，换一个新草稿 q = (0.1, 0.6, 0.3)，它输出第二个 token x₂ 的概率是多少？" + TOL_ZH,
    },
    # exact enumeration over draft, verdict and repair (not specviz.exact.rules): 3/10 + 2/5 · 3/8 = 9/20 = (p + q)/2
    answer=lambda: float(abs_residual_output(P3, Q_ABS)[1]),
    hints=[
        {
            "en": "The accepted part is unchanged: min(p(x₂), q(x₂)).",
            "zh": "接受的那部分不变：min(p(x₂), q(x₂))。",
        },
        {
            "en": "The repair now also gives x₂ a share: P(reject)·|p(x₂) − q(x₂)| / Σ_x |p(x) − q(x)|, "
            "with P(reject) = 1 − Σ_x min(p(x), q(x)).",
            "zh": "修复这一步现在也会分给 x₂ 一份：P(拒绝)·|p(x₂) − q(x₂)| / Σ_x |p(x) − q(x)|，"
            "其中 P(拒绝) = 1 − Σ_x min(p(x), q(x))。",
        },
    ],
    solution="answer = sv.output_dist((0.5, 0.3, 0.2), (0.1, 0.6, 0.3), rule='abs_residual')[1]",
    wrong=[0.3, 0.4, 0.6],  # what a lossless verifier gives; the running example's dog; q(x₂)
)

verifier_exercise(
    "10.3",
    "10",
    {
        "en": "Write your own verifier my_verifier(p, q, n, rng) -> (drafts, out): draw n draft tokens from q, keep "
        "each with probability min(1, p/q), replace every rejected one by a draw from (p − q)⁺ / Z, and return "
        "the drafts with the n outputs. It is graded on the running example, on q = p, on disjoint supports and "
        "on random pairs: out must follow p (sv.audit, false-alarm rate 1e-3), and what the rule does with the "
        "draft is checked too: the share of outputs equal to their draft must match Σ min(p, q) (z-test, "
        "false-alarm rate 1e-6) and each (draft, out) pair must follow the rule.",
        "zh": "写一个自己的验证器 my_verifier(p, q, n, rng)，返回 (drafts, out)：从 q 采 n 个草稿 token，每个以 min(1, p/q) "
        "的概率保留，被拒绝的 token 用从 (p − q)⁺ / Z 采出的 token 替换，然后把草稿和 n 个输出一起返回。"
        "用例包括贯穿全文的例子、q = p、支撑集不相交和随机分布对：out 须服从 p（sv.audit，误报率 1e-3），"
        "规则如何处理草稿也要检查：输出等于其草稿的比例须与 Σ min(p, q) 一致（z 检验，误报率 1e-6），"
        "并且每一对 (草稿, 输出) 都须符合规则。",
    },
    pairs=verifier_pairs,
    hints=[
        {
            "en": "rng.choice(len(q), size=n, p=q) draws the drafts; rng.random(n) gives the uniform numbers r.",
            "zh": "rng.choice(len(q), size=n, p=q) 采出草稿 token；rng.random(n) 给出均匀随机数 r。",
        },
        {
            "en": "Where q(x) = 0 the ratio p/q is never needed (x is never drafted): use np.divide(p, q, "
            "out=np.ones_like(p), where=q > 0). When q = p nothing is rejected, so do not normalise an all-zero residual.",
            "zh": "q(x) = 0 的 token 永远不会被提议，用不到 p/q：可以写 np.divide(p, q, out=np.ones_like(p), where=q > 0)。"
            "q = p 时不会有拒绝，所以不要去归一化一个全为 0 的残差。",
        },
        {
            "en": "sv.correct_verifier is a reference implementation (with_drafts=True returns (drafts, out)); "
            "read it with sv.correct_verifier?? after trying.",
            "zh": "sv.correct_verifier 是一个参考实现（with_drafts=True 时返回 (drafts, out)）；"
            "自己试过之后，可以用 sv.correct_verifier?? 查看源码。",
        },
    ],
    solution=(
        "def my_verifier(p, q, n, rng):\n"
        "    drafts = rng.choice(len(q), size=n, p=q)\n"
        "    ratio = np.divide(p, q, out=np.ones_like(p), where=q > 0)\n"
        "    keep = rng.random(n) < np.minimum(1.0, ratio[drafts])\n"
        "    out = drafts.copy()\n"
        "    rejected = int((~keep).sum())\n"
        "    if rejected:\n"
        "        res = np.maximum(p - q, 0.0)\n"
        "        out[~keep] = rng.choice(len(p), size=rejected, p=res / res.sum())\n"
        "    return drafts, out\n"
        "\n"
        "answer = my_verifier"
    ),
    wrong=[
        *(
            partial(BUGGY_VERIFIERS[name], with_drafts=True)
            for name in ("resample_from_p", "abs_residual", "inverted_ratio", "off_by_one")
        ),
        ignores_the_draft,  # lossless, but it keeps a draft only Σ p·q of the time
        lambda p, q, n, rng: rng.choice(len(p), n, p=p),  # the output alone: nothing shows a draft was used
    ],
)
