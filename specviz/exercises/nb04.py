"""Exercises of tutorial 4 (the algorithm SpecSampleOne and the theorem)."""

from fractions import Fraction as F

import numpy as np

from ..exact.theory import resample_dist
from ..foundation.examples import TUTORIAL_P, TUTORIAL_Q
from .core import function_exercise, number_exercise

P, Q = TUTORIAL_P, TUTORIAL_Q  # target p and draft q of the running example (cat, dog, fish)
P4, Q4 = (0.4, 0.3, 0.2, 0.1), (0.1, 0.2, 0.3, 0.4)  # a four-token pair, used by exercise 4.2
TOL_EN = " Checked to within 1e-6."
TOL_ZH = "判分允许的误差为 1e-6。"


def repair_cases() -> list[tuple]:
    """(p, q) pairs that grade the repair distribution: the running example, q = p, disjoint supports, random pairs."""
    rng = np.random.default_rng(4)
    cases = [
        (P, Q),  # the running example: every rejection outputs cat
        (P, P),  # q = p: Z = 0, the branch is never taken; p stands in (no NaN)
        ((0.0, 0.75, 0.25), (1.0, 0.0, 0.0)),  # disjoint supports: p' is p itself
        (P4, Q4),
    ]
    cases += [(rng.dirichlet(np.full(6, 0.5)), rng.dirichlet(np.full(6, 0.5))) for _ in range(6)]
    return cases


number_exercise(
    "4.1",
    "04",
    {
        "en": "A four-token vocabulary with target p = (0.4, 0.3, 0.2, 0.1) and draft q = (0.1, 0.2, 0.3, 0.4). "
        "What fraction of all speculative steps draft the fourth token x₄ and then reject it? "
        "(The probability of the event 'draft = x₄ and rejected'.)" + TOL_EN,
        "zh": "四个 token 的词表，目标 p = (0.4, 0.3, 0.2, 0.1)，草稿 q = (0.1, 0.2, 0.3, 0.4)。"
        "所有投机步骤中有多大比例是“草稿提出第四个 token x₄、随后被拒绝”？（即事件“草稿 = x₄ 且被拒绝”的概率。）"
        + TOL_ZH,
    },
    answer=lambda: float(F(2, 5) * (1 - F(1, 10) / F(2, 5))),  # by hand: q(x4) (1 - p(x4)/q(x4)) = 3/10
    hints=[
        {
            "en": "Two independent draws must both go a certain way: the draft must be x₄, and the test must fail.",
            "zh": "两次独立的随机抽取都要落在特定结果上：草稿是 x₄，并且检验没有通过。",
        },
        {
            "en": "Multiply q(x₄) by 1 − a(x₄), where a(x₄) = min(1, p(x₄)/q(x₄)).",
            "zh": "用 q(x₄) 乘以 1 − a(x₄)，其中 a(x₄) = min(1, p(x₄)/q(x₄))。",
        },
    ],
    solution="answer = 0.4 * (1 - sv.acceptance_prob((0.4, 0.3, 0.2, 0.1), (0.1, 0.2, 0.3, 0.4))[3])",
    wrong=[0.75, 0.25, 0.1, 0.2],  # 1 - a(x4) alone; a(x4); the kept x4 mass; the running example's dog
)

number_exercise(
    "4.2",
    "04",
    {
        "en": "A four-token vocabulary with target p = (0.4, 0.3, 0.2, 0.1) and draft q = (0.1, 0.2, 0.3, 0.4). "
        "After a rejection, with what probability does the repair output the first token, p'(x₁)?" + TOL_EN,
        "zh": "四个 token 的词表，目标 p = (0.4, 0.3, 0.2, 0.1)，草稿 q = (0.1, 0.2, 0.3, 0.4)。"
        "被拒绝之后，修复分布输出第一个 token 的概率 p'(x₁) 是多少？" + TOL_ZH,
    },
    answer=lambda: float(F(3, 10) / (F(3, 10) + F(1, 10))),  # by hand: shortfalls (0.3, 0.1, 0, 0), Z = 0.4
    hints=[
        {
            "en": "First the shortfall (p − q)⁺ of every token; only tokens where p > q have one.",
            "zh": "先算每个 token 的缺口 (p − q)⁺；只有 p > q 的 token 才有缺口。",
        },
        {
            "en": "Divide the first token's shortfall by Z, the sum of all shortfalls.",
            "zh": "用第一个 token 的缺口除以 Z，也就是所有缺口之和。",
        },
    ],
    solution="answer = sv.resample_dist((0.4, 0.3, 0.2, 0.1), (0.1, 0.2, 0.3, 0.4))[0]",
    wrong=[0.3, 0.4, 0.5],  # 0.3: the shortfall, not normalised; 0.4: p(x1); 0.5: normalised by |p - q|
)

function_exercise(
    "4.3",
    "04",
    {
        "en": "Implement repair(p, q): the distribution p' = (p − q)⁺ / Z that a rejection draws from. "
        "When Z = 0 (q = p) a rejection never happens; return p then, never NaN. Graded against "
        "specviz.resample_dist on q = p, disjoint supports and random pairs.",
        "zh": "实现 repair(p, q)：被拒绝后抽样所用的分布 p' = (p − q)⁺ / Z。"
        "当 Z = 0（q = p）时不会发生拒绝，此时返回 p，绝不能返回 NaN。"
        "评分时与 specviz.resample_dist 比较，用例包括 q = p、支撑集不相交和随机分布对。",
    },
    reference=resample_dist,
    cases=repair_cases,
    hints=[
        {
            "en": "np.maximum(p - q, 0.0) is the shortfall; its sum is Z.",
            "zh": "np.maximum(p - q, 0.0) 就是缺口，它的和就是 Z。",
        },
        {
            "en": "Test Z > 0 before dividing; otherwise return p (a copy is fine).",
            "zh": "除法之前先判断 Z > 0；否则返回 p（返回副本也可以）。",
        },
    ],
    solution=(
        "def my_repair(p, q):\n"
        "    short = np.maximum(p - q, 0.0)\n"
        "    Z = short.sum()\n"
        "    return short / Z if Z > 0 else p.copy()\n"
        "\n"
        "answer = my_repair"
    ),
    wrong=[
        lambda p, q: np.maximum(p - q, 0.0),  # not normalised
        lambda p, q: np.maximum(p - q, 0.0) / np.maximum(p - q, 0.0).sum(),  # NaN when q = p
        lambda p, q: np.abs(p - q) / max(np.abs(p - q).sum(), 1e-300),  # |p - q|
        lambda p, q: p,  # repair from p: the pitfall of tutorial 7
    ],
)
