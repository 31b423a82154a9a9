"""Exercises of tutorial 7 (pitfalls, and auditing a verifier you write yourself)."""

from functools import partial

import numpy as np

from ..examples import TUTORIAL_P, TUTORIAL_Q
from ..rules import output_dist
from ..verifiers import BUGGY_VERIFIERS, ignores_the_draft
from .core import number_exercise, verifier_exercise

P, Q = TUTORIAL_P, TUTORIAL_Q  # target p and draft q of the running example (cat, dog, fish)
P2, Q2 = (0.7, 0.2, 0.1), (0.1, 0.2, 0.7)  # the second pair of the tutorial


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
        "en": "The Q1 pitfall: on a rejection, resample from the target p instead of (p − q)⁺ / Z. "
        "In the running example, what is P(out = cat) then?",
        "zh": "Q1 陷阱：被拒绝时从目标 p 重新抽样，而不是从 (p − q)⁺ / Z 抽样。在贯穿全文的例子里，此时 P(out = cat) 是多少？",
    },
    answer=lambda: float(output_dist(P, Q, rule="resample_target")[0]),
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
    solution='answer = sv.output_dist(sv.TUTORIAL_P, sv.TUTORIAL_Q, rule="resample_target")[0]',
    wrong=[0.6, 0.4, 0.12],  # 0.6: the target; 0.4: the accept part only; 0.12: the reject part only
)

number_exercise(
    "7.2",
    "07",
    {
        "en": "Same pitfall on the second pair, p = (0.7, 0.2, 0.1) and q = (0.1, 0.2, 0.7): "
        "what is P(out = fish)? (The target wants 0.1.)",
        "zh": "同一个陷阱，换成第二对分布 p = (0.7, 0.2, 0.1)、q = (0.1, 0.2, 0.7)：P(out = fish) 是多少？（目标要的是 0.1。）",
    },
    answer=lambda: float(output_dist(P2, Q2, rule="resample_target")[2]),
    hints=[
        {"en": "Accept part: min(p(fish), q(fish)).", "zh": "接受部分：min(p(fish), q(fish))。"},
        {
            "en": "Reject part: (1 − Σ min(p, q)) · p(fish).",
            "zh": "拒绝部分：(1 − Σ min(p, q)) · p(fish)。",
        },
    ],
    solution='answer = sv.output_dist((0.7, 0.2, 0.1), (0.1, 0.2, 0.7), rule="resample_target")[2]',
    wrong=[0.1, 0.7, 0.06],  # 0.1: p(fish); 0.7: q(fish); 0.06: the reject part only
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
        "zh": "自己写一个验证器：函数 verifier(p, q, n, rng) 返回 (drafts, out)，即 n 次独立投机步骤的 n 个草稿和 n 个词的编号"
        "（从 q 抽草稿，以 min(1, p/q) 的概率保留，否则从 (p − q)⁺ / Z 抽样）。"
        "在五对分布上评分，其中包括 q = p 和支撑集不相交的情形：out 须服从 p（sv.audit 的卡方检验，误报率 1e-3），"
        "草稿须服从 q，输出等于其草稿的比例须与 Σ min(p, q) 一致（z 检验，误报率 1e-6），"
        "并且每一对 (草稿, 输出) 都须符合规则（被保留的草稿原样输出）。",
    },
    pairs=verifier_pairs,
    hints=[
        {
            "en": "Vectorise: x = rng.choice(len(q), size=n, p=q) drafts all n tokens; u = rng.random(n) are the "
            "uniforms; keep where u * q[x] < p[x] (no division).",
            "zh": "向量化：x = rng.choice(len(q), size=n, p=q) 一次抽出全部 n 个草稿；u = rng.random(n) 是均匀随机数；"
            "在 u * q[x] < p[x] 处保留（不做除法）。",
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
