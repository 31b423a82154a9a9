"""Exercises of tutorial 2 (importance sampling).

Each answer is a hand fraction, computed here from the pair's digits with `Fraction` arithmetic
(independently of `specviz.exact.theory`; tests/test_exercises.py checks that the two agree).
"""

from fractions import Fraction

from .core import number_exercise

P = (Fraction("0.6"), Fraction("0.3"), Fraction("0.1"))  # the running target p (cat, dog, fish), exact
Q_OTHER = (Fraction("0.25"), Fraction("0.5"), Fraction("0.25"))  # another draft, used by exercise 2.1
REWARD = (1, 0, 2)  # a score f(x) per token (cat, dog, fish), used by exercise 2.2
Q_NO_DOG = (Fraction("0.5"), Fraction(0), Fraction("0.5"))  # a draft that never proposes dog, exercise 2.3


def answer_2_1() -> Fraction:
    """w(fish) = p(fish) / q(fish) for the draft Q_OTHER."""
    return P[2] / Q_OTHER[2]


def answer_2_2() -> Fraction:
    """E_q[w f] = Σ_x p(x) f(x) for the running pair (q > 0 everywhere, so the q cancels)."""
    return sum(pi * fi for pi, fi in zip(P, REWARD))


def answer_2_3() -> Fraction:
    """E_q[w] for the draft Q_NO_DOG: Σ over the tokens it proposes of q·p/q."""
    return sum(qi * (pi / qi) for pi, qi in zip(P, Q_NO_DOG) if qi > 0)


number_exercise(
    "2.1",
    "02",
    {
        "en": "Keep the target p = (0.6, 0.3, 0.1) and take another draft, q = (0.25, 0.5, 0.25). What importance "
        "weight w(fish) = p(fish) / q(fish) does each drafted fish carry? (Checked to within 1e-6.)",
        "zh": "目标仍为 p = (0.6, 0.3, 0.1)，草稿换成 q = (0.25, 0.5, 0.25)。草稿每抽到一个 fish，"
        "它带的重要性权重 w(fish) = p(fish) / q(fish) 是多少？（误差不超过 1e-6 即算对。）",
    },
    answer=lambda: float(answer_2_1()),
    hints=[
        {"en": "Divide the target's probability by the draft's.", "zh": "用目标模型的概率除以草稿模型的概率。"},
        {
            "en": "This draft offers fish more often than the target wants it, so the weight is below 1.",
            "zh": "这个草稿给 fish 的概率比目标想要的高，所以权重小于 1。",
        },
    ],
    solution="answer = sv.importance_weights(sv.TUTORIAL_P, (0.25, 0.5, 0.25))[2]",
    wrong=[2.5, 1.0],  # 2.5: the ratio upside down (q/p); 1.0: the weight of fish in the running example
)

number_exercise(
    "2.2",
    "02",
    {
        "en": "A score gives f(cat) = 1, f(dog) = 0, f(fish) = 2. Drawing from the draft q of the running example "
        "and averaging w(x)·f(x) with w = p/q, what value does the average settle at (the exact value, not a "
        "simulation; checked to within 1e-6)?",
        "zh": "某个打分函数给出 f(cat) = 1、f(dog) = 0、f(fish) = 2。从例子中的草稿 q 采样，对 w(x)·f(x)（w = p/q）求平均，"
        "这个平均最终收敛到多少？（给出精确值，不是模拟结果；误差不超过 1e-6 即算对。）",
    },
    answer=lambda: float(answer_2_2()),
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
        "en": "The draft q = (0.5, 0, 0.5) never proposes dog. What is the average importance weight E_q[w] "
        "for this draft and the target p of the running example? (Checked to within 1e-6.)",
        "zh": "草稿 q = (0.5, 0, 0.5) 从不提议 dog。对这个草稿和例子中的目标 p，平均重要性权重 E_q[w] 是多少？"
        "（误差不超过 1e-6 即算对。）",
    },
    answer=lambda: float(answer_2_3()),
    hints=[
        {
            "en": "E_q[w] = Σ_x q(x)·p(x)/q(x), summed only over tokens the draft can propose.",
            "zh": "E_q[w] = Σ_x q(x)·p(x)/q(x)，只对草稿能提议的 token 求和。",
        },
        {
            "en": "It is 1 minus the target mass the draft never proposes (sv.importance_bias_mass).",
            "zh": "它等于 1 减去草稿永远不会提议的那部分目标概率（sv.importance_bias_mass）。",
        },
    ],
    solution=("q_no_dog = (0.5, 0.0, 0.5)\nanswer = np.dot(q_no_dog, sv.importance_weights(sv.TUTORIAL_P, q_no_dog))"),
    wrong=[1.0, 0.9],  # 1: true only when the draft covers p; 0.9: the blind draft of the notebook (no fish)
)
