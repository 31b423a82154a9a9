"""Exercises of tutorial 3 (rejection sampling, and the residual the repair draws from).

The number answers are hand fractions, computed here with `Fraction` arithmetic from the pair's
digits (independently of `specviz.exact.theory`; tests/test_exercises.py checks that the two agree).
"""

from fractions import Fraction

import numpy as np

from ..exact.theory import residual
from ..foundation.examples import TUTORIAL_P, TUTORIAL_Q
from .core import function_exercise, number_exercise

P, Q = TUTORIAL_P, TUTORIAL_Q  # target p and draft q of the running example (cat, dog, fish)
Q_FLAT = (0.2, 0.5, 0.3)  # another draft, used by exercise 3.1
M_LOW = Fraction("1.25")  # an envelope constant too small for the running example (exercise 3.2)


def exact(dist) -> list[Fraction]:
    """A distribution's entries as exact fractions of their decimal digits (0.1 -> 1/10)."""
    return [Fraction(str(v)) for v in dist]


def answer_3_1() -> Fraction:
    """The smallest envelope constant M = max_x p(x)/q(x) for the draft Q_FLAT: the mean number of tries."""
    return max(pi / qi for pi, qi in zip(exact(P), exact(Q_FLAT)))


def answer_3_2() -> Fraction:
    """P(out = cat) of rejection sampling with the envelope constant M_LOW: min(p, M q) renormalised, at cat."""
    clipped = [min(pi, M_LOW * qi) for pi, qi in zip(exact(P), exact(Q))]
    return clipped[0] / sum(clipped)


def residual_cases() -> list[tuple]:
    """(p, q) pairs that grade `residual`: q = p, the running example, disjoint supports, random pairs (seed 3)."""
    rng = np.random.default_rng(3)
    cases = [
        (P, P),  # q = p: nothing is missing
        (P, Q),  # the running example: only cat is missing mass
        ((0.0, 0.5, 0.5), (1.0, 0.0, 0.0)),  # disjoint supports: the residual is all of p
        ((0.25, 0.25, 0.5, 0.0), (0.0, 0.5, 0.25, 0.25)),
    ]
    cases += [(rng.dirichlet(np.full(6, 0.5)), rng.dirichlet(np.full(6, 0.5))) for _ in range(6)]
    return cases


number_exercise(
    "3.1",
    "03",
    {
        "en": "Classic rejection sampling with the target p of the running example and the draft q = (0.2, 0.5, 0.3), "
        "using the smallest valid envelope constant: how many tries does it need per output token, on average? "
        "(Checked to within 1e-6.)",
        "zh": "经典拒绝采样：目标是例子中的 p，草稿换成 q = (0.2, 0.5, 0.3)，包络常数取最小的合法值。"
        "平均每输出一个 token 需要尝试多少次？（误差不超过 1e-6 即算对。）",
    },
    answer=lambda: float(answer_3_1()),
    hints=[
        {
            "en": "Each try succeeds with probability 1/M, so the average number of tries is M.",
            "zh": "每次尝试成功的概率是 1/M，所以平均尝试次数就是 M。",
        },
        {"en": "The smallest valid M is max_x p(x)/q(x).", "zh": "最小的合法 M 是 max_x p(x)/q(x)。"},
    ],
    solution="answer = sv.envelope_constant(sv.TUTORIAL_P, (0.2, 0.5, 0.3))",
    wrong=[1 / 3, 1.5],  # 1/3: the per-try acceptance; 1.5: M of the original draft
)

number_exercise(
    "3.2",
    "03",
    {
        "en": "Run classic rejection sampling on the running example with an envelope constant that is too small, "
        "M = 1.25 (its tent 1.25·q is too low somewhere). "
        "With what probability does the output come out as cat (exactly, not simulated; checked to within 1e-6)?",
        "zh": "在贯穿全文的例子上做经典拒绝采样，但包络常数取得太小：M = 1.25（帐篷 1.25·q 在某处太低）。"
        "输出为 cat 的概率（精确值，不是模拟；误差不超过 1e-6 即算对）是多少？",
    },
    answer=lambda: float(answer_3_2()),
    hints=[
        {
            "en": "Where M·q(x) < p(x), the tent M·q clips p: the kept mass per try is min(p(x), M·q(x)) / M.",
            "zh": "在 M·q(x) < p(x) 的地方，帐篷 M·q 把 p 削平了：每次尝试得到并保留 x 的概率是 min(p(x), M·q(x)) / M。",
        },
        {
            "en": "Renormalise the clipped shape min(p, M·q) so that it sums to 1 (sv.rejection_output_dist).",
            "zh": "把削平后的形状 min(p, M·q) 重新归一化，使其和为 1（sv.rejection_output_dist）。",
        },
    ],
    solution="answer = sv.rejection_output_dist(sv.TUTORIAL_P, sv.TUTORIAL_Q, M=1.25)[0]",
    wrong=[0.6, 0.5, 6 / 11],  # 0.6: p(cat), as if the tent covered p; 0.5: not renormalised; 6/11: M = 1.2
)

function_exercise(
    "3.3",
    "03",
    {
        "en": "Implement residual(p, q): the residual (p − q)⁺ (the draft's shortfall), i.e. max(0, p(x) − q(x)) "
        "for every token, unnormalised. It takes two numpy arrays and returns an array of the same length. It is "
        "graded against specviz on q = p, disjoint supports (no token that both p and q give positive probability) "
        "and random pairs, entry by entry to within 1e-9.",
        "zh": "实现 residual(p, q)：残差 (p − q)⁺（草稿的缺口），即对每个 token 计算 max(0, p(x) − q(x))，不做归一化。"
        "输入是两个 numpy 数组，返回同样长度的数组。评分时会和 specviz 的结果逐项比较（误差不超过 1e-9），"
        "用例包括 q = p、支撑集不相交（p 和 q 没有共同的 token）和随机分布对。",
    },
    reference=residual,
    cases=residual_cases,
    hints=[
        {
            "en": "Work token by token: where the draft already offers enough (q ≥ p), the residual is 0.",
            "zh": "逐个 token 来看：草稿已经给够（q ≥ p）的地方，残差为 0。",
        },
        {
            "en": "np.maximum(a, 0.0) keeps the positive part of an array a. Do not divide by the sum.",
            "zh": "np.maximum(a, 0.0) 保留数组 a 中的正值（其余记为 0）。不要除以总和。",
        },
    ],
    solution="def my_residual(p, q):\n    return np.maximum(p - q, 0.0)\n\nanswer = my_residual",
    wrong=[
        lambda p, q: np.abs(p - q),  # |p - q| also adds mass where the draft over-proposed
        lambda p, q: np.maximum(q - p, 0.0),  # Chen et al.'s letters: the excess of the draft instead
        lambda p, q: p - q,  # no positive part
        lambda p, q: np.maximum(p - q, 0.0) / max(np.maximum(p - q, 0.0).sum(), 1e-300),  # normalised: that is p'
    ],
)
