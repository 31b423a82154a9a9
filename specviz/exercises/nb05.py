"""Exercises of tutorial 5 (the proof in three steps, and why sum min(p, q) is the best acceptance)."""

from fractions import Fraction as F

import numpy as np

from ..foundation.examples import TUTORIAL_P, TUTORIAL_Q
from ..samplers.coupling import maximal_coupling
from .core import function_exercise, number_exercise

P, Q = TUTORIAL_P, TUTORIAL_Q  # target p and draft q of the running example (cat, dog, fish)
P2, Q2 = (0.7, 0.2, 0.1), (0.1, 0.2, 0.7)  # a second pair: the draft prefers fish, the target cat
TOL_EN = " Checked to within 1e-6."
TOL_ZH = "判分允许的误差为 1e-6。"


def coupling_cases() -> list[tuple]:
    """(p, q) pairs that grade the joint of the speculative rule: the examples, q = p, disjoint, random pairs."""
    rng = np.random.default_rng(5)
    cases = [(P, Q), (P2, Q2), (P, P), ((0.0, 0.75, 0.25), (1.0, 0.0, 0.0))]
    cases += [(rng.dirichlet(np.full(5, 0.5)), rng.dirichlet(np.full(5, 0.5))) for _ in range(6)]
    return cases


number_exercise(
    "5.1",
    "05",
    {
        "en": "Target p = (0.7, 0.2, 0.1), draft q = (0.1, 0.2, 0.7). What is the probability that a speculative "
        "step rejects its draft?" + TOL_EN,
        "zh": "目标 p = (0.7, 0.2, 0.1)，草稿 q = (0.1, 0.2, 0.7)。一次投机步骤拒绝草稿的概率是多少？" + TOL_ZH,
    },
    answer=lambda: float(1 - (F(1, 10) + F(2, 10) + F(1, 10))),  # by hand: 1 - Σ min(p, q) = 3/5
    hints=[
        {"en": "Step 2: P(reject) = 1 − Σ min(p, q).", "zh": "第 2 步：P(拒绝) = 1 − Σ min(p, q)。"},
        {
            "en": "It also equals Z = Σ (p − q)⁺ and TV(p, q) = ½ Σ |p − q|: any of the three will do.",
            "zh": "它同样等于 Z = Σ (p − q)⁺，也等于 TV(p, q) = ½ Σ |p − q|：三种算法任选其一。",
        },
    ],
    solution="answer = 1 - sv.acceptance_rate((0.7, 0.2, 0.1), (0.1, 0.2, 0.7))",
    wrong=[0.4, 1.2],  # 0.4: P(accept); 1.2: sum |p - q| without the half
)

number_exercise(
    "5.2",
    "05",
    {
        "en": "Same pair, p = (0.7, 0.2, 0.1) and q = (0.1, 0.2, 0.7). By how much does the speculative rule's "
        "acceptance exceed that of token matching (keep the draft iff it equals an independent sample from p)?"
        + TOL_EN,
        "zh": "仍是这一对分布，p = (0.7, 0.2, 0.1)，q = (0.1, 0.2, 0.7)。投机规则的接受率比 token 匹配"
        "（当且仅当草稿等于从 p 独立抽取的样本时保留草稿）高出多少？" + TOL_ZH,
    },
    # by hand: Σ min(p, q) = 2/5, token matching Σ q·p = 7/100 + 4/100 + 7/100 = 9/50; the gap is 11/50
    answer=lambda: float(F(2, 5) - (F(7, 100) + F(4, 100) + F(7, 100))),
    hints=[
        {
            "en": "The speculative rule keeps the draft with probability Σ min(p, q), the most any lossless verifier can.",
            "zh": "投机规则保留草稿的概率是 Σ min(p, q)，这是任何无损验证器能达到的最大值。",
        },
        {
            "en": "Token matching keeps it when two independent draws agree: Σ q(x) p(x).",
            "zh": "token 匹配在两个独立抽样恰好相同时才保留草稿：Σ q(x) p(x)。",
        },
    ],
    solution=(
        "p2, q2 = (0.7, 0.2, 0.1), (0.1, 0.2, 0.7)\n"
        "answer = sv.acceptance_rate(p2, q2) - sv.coupling_acceptance(sv.independent_coupling(p2, q2))"
    ),
    wrong=[0.4, 0.18, 0.6],  # 0.4: the speculative acceptance alone; 0.18: token matching's; 0.6: TV
)

function_exercise(
    "5.3",
    "05",
    {
        "en": "Implement joint(p, q): the V × V matrix J[x, y] = P(draft = x, output = y) of the speculative rule. "
        "Use the proof: the diagonal holds the kept drafts, and a rejected draft x (mass (q − p)⁺(x)) is "
        "replaced by y with probability p'(y). Graded against specviz.maximal_coupling.",
        "zh": "实现 joint(p, q)：投机规则的 V × V 矩阵 J[x, y] = P(草稿 = x, 输出 = y)。"
        "用证明里的结论：对角线上是被保留的草稿；被拒绝的草稿 x（概率质量 (q − p)⁺(x)）以概率 p'(y) 被换成 y。"
        "评分时与 specviz.maximal_coupling 比较。",
    },
    reference=maximal_coupling,
    cases=coupling_cases,
    hints=[
        {
            "en": "Start from np.diag(np.minimum(p, q)): Step 1 says the kept mass of x is min(p(x), q(x)).",
            "zh": "从 np.diag(np.minimum(p, q)) 开始：第 1 步告诉我们 x 被保留的质量是 min(p(x), q(x))。",
        },
        {
            "en": "Add np.outer(np.maximum(q - p, 0), np.maximum(p - q, 0)) / Z when Z > 0.",
            "zh": "当 Z > 0 时，再加上 np.outer(np.maximum(q - p, 0), np.maximum(p - q, 0)) / Z。",
        },
    ],
    solution=(
        "def my_joint(p, q):\n"
        "    J = np.diag(np.minimum(p, q))\n"
        "    short = np.maximum(p - q, 0.0)\n"
        "    Z = short.sum()\n"
        "    if Z > 0:\n"
        "        J = J + np.outer(np.maximum(q - p, 0.0), short) / Z\n"
        "    return J\n"
        "\n"
        "answer = my_joint"
    ),
    wrong=[
        lambda p, q: np.outer(q, p),  # token matching's independent coupling
        lambda p, q: np.diag(np.minimum(p, q)),  # the rejected mass is missing
        lambda p, q: np.diag(p),  # the output is right, but the draft marginal is p, not q
    ],
)
