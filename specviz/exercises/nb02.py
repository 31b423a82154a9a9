"""Exercises of tutorial 2 (importance sampling)."""

import numpy as np

from ..examples import TUTORIAL_P, TUTORIAL_Q
from ..theory import importance_weights
from .core import number_exercise

P, Q = TUTORIAL_P, TUTORIAL_Q  # target p and draft q of the running example (cat, dog, fish)
REWARD = (1.0, 0.0, 2.0)  # a score f(x) per token (cat, dog, fish), used by exercise 2.2
Q_BLIND = (0.5, 0.5, 0.0)  # a draft that never proposes fish, used by exercise 2.3

number_exercise(
    "2.1",
    "02",
    {
        "en": "What importance weight w(dog) = p(dog) / q(dog) does each drafted dog carry in the running example?",
        "zh": "在贯穿全文的例子里，每个草稿采到的 dog 带的重要性权重 w(dog) = p(dog) / q(dog) 是多少？",
    },
    answer=lambda: float(importance_weights(P, Q)[1]),
    hints=[
        {"en": "Divide the target's probability by the draft's.", "zh": "用目标模型的概率除以草稿模型的概率。"},
        {
            "en": "The weight is below 1: the target wants dog less than the draft offers it.",
            "zh": "这个权重小于 1：目标模型没有草稿那么想要 dog。",
        },
    ],
    solution="answer = sv.importance_weights(sv.TUTORIAL_P, sv.TUTORIAL_Q)[1]",
    wrong=[5 / 3, 0.3],  # 5/3: the ratio upside down (q/p)
)

number_exercise(
    "2.2",
    "02",
    {
        "en": "A score gives f(cat) = 1, f(dog) = 0, f(fish) = 2. Drawing from the draft q and averaging w(x)·f(x) "
        "with w = p/q, what value does the average settle at (the exact value, not a simulation)?",
        "zh": "某个打分函数给出 f(cat) = 1、f(dog) = 0、f(fish) = 2。从草稿 q 采样，对 w(x)·f(x)（w = p/q）求平均，"
        "这个平均最终收敛到多少？（给出精确值，不是模拟结果。）",
    },
    answer=lambda: float(np.dot(Q, importance_weights(P, Q) * np.array(REWARD))),
    hints=[
        {
            "en": "E_q[w·f] = Σ_x q(x)·(p(x)/q(x))·f(x): the q cancels wherever q(x) > 0.",
            "zh": "E_q[w·f] = Σ_x q(x)·(p(x)/q(x))·f(x)：只要 q(x) > 0，q 就约掉了。",
        },
        {
            "en": "So the answer is the target average Σ_x p(x)·f(x), not the plain draft average Σ_x q(x)·f(x).",
            "zh": "所以答案是目标分布下的平均 Σ_x p(x)·f(x)，而不是草稿分布下的普通平均 Σ_x q(x)·f(x)。",
        },
    ],
    solution=(
        "f = np.array([1.0, 0.0, 2.0])\n"
        "w = sv.importance_weights(sv.TUTORIAL_P, sv.TUTORIAL_Q)\n"
        "answer = np.dot(sv.TUTORIAL_Q, w * f)"
    ),
    wrong=[0.6],  # the plain draft average E_q[f]
)

number_exercise(
    "2.3",
    "02",
    {
        "en": "The draft q = (0.5, 0.5, 0) never proposes fish. What is the average importance weight E_q[w] "
        "for this draft and the target p of the running example?",
        "zh": "草稿 q = (0.5, 0.5, 0) 从不提议 fish。对这个草稿和例子中的目标 p，平均重要性权重 E_q[w] 是多少？",
    },
    answer=lambda: float(np.dot(Q_BLIND, importance_weights(P, Q_BLIND))),
    hints=[
        {
            "en": "E_q[w] = Σ_x q(x)·p(x)/q(x), summed only over tokens the draft can propose.",
            "zh": "E_q[w] = Σ_x q(x)·p(x)/q(x)，只对草稿能提议的词求和。",
        },
        {
            "en": "It is 1 minus the target mass the draft never proposes (sv.importance_bias_mass).",
            "zh": "它等于 1 减去草稿永远不会提议的那部分目标概率（sv.importance_bias_mass）。",
        },
    ],
    solution=("q_blind = (0.5, 0.5, 0.0)\nanswer = np.dot(q_blind, sv.importance_weights(sv.TUTORIAL_P, q_blind))"),
    wrong=[1.0],  # true only when the draft covers every token the target can produce
)
