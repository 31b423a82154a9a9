"""Exercises of tutorial 1 (why lossless, and the notation)."""

from ..examples import TUTORIAL_P, TUTORIAL_Q
from ..rules import output_dist
from ..theory import rejection_mass
from .core import number_exercise

P, Q = TUTORIAL_P, TUTORIAL_Q  # target p and draft q of the running example (cat, dog, fish)

number_exercise(
    "1.1",
    "01",
    {
        "en": "By how much does the draft over-propose dog in the running example: q(dog) − p(dog)?",
        "zh": "在贯穿全文的例子里，草稿模型给 dog 多给了多少概率：q(dog) − p(dog)？",
    },
    answer=lambda: Q[1] - P[1],
    hints=[
        {
            "en": "dog is the second token of the vocabulary (cat, dog, fish).",
            "zh": "dog 是词表 (cat, dog, fish) 中的第二个词。",
        },
        {"en": "Subtract the target's probability from the draft's.", "zh": "用草稿的概率减去目标模型的概率。"},
    ],
    solution="answer = sv.TUTORIAL_Q[1] - sv.TUTORIAL_P[1]",
    wrong=[-0.2, 0.5],
)

number_exercise(
    "1.2",
    "01",
    {
        "en": "How much probability does the target want beyond what the draft offers, summed over all tokens: "
        "Z = Σ_x max(0, p(x) − q(x))?",
        "zh": "把所有词上“目标模型想要、草稿却没给够”的概率加起来：Z = Σ_x max(0, p(x) − q(x)) 是多少？",
    },
    answer=lambda: float(rejection_mass(P, Q)),
    hints=[
        {
            "en": "Only tokens with p(x) > q(x) contribute; the others count as 0.",
            "zh": "只有 p(x) > q(x) 的词有贡献，其余的词记为 0。",
        },
        {
            "en": "In the running example only cat has p > q. In code: sv.rejection_mass(p, q).",
            "zh": "在这个例子里只有 cat 满足 p > q。代码里是 sv.rejection_mass(p, q)。",
        },
    ],
    solution="answer = sv.rejection_mass(sv.TUTORIAL_P, sv.TUTORIAL_Q)",
    wrong=[0.4, 0.0],  # 0.4: the sum of |p - q|, counting the over-proposed dog as well
)

number_exercise(
    "1.3",
    "01",
    {
        "en": "Someone calls the verifier with the arguments swapped, sv.output_dist(q, p). "
        "With what probability does the output come out as cat?",
        "zh": "有人把参数顺序写反了，调用 sv.output_dist(q, p)。这时输出为 cat 的概率是多少？",
    },
    answer=lambda: float(output_dist(Q, P)[0]),
    hints=[
        {
            "en": "The first argument is always treated as the target, and the output follows the target exactly.",
            "zh": "第一个参数总被当作目标分布，而输出严格服从目标分布。",
        },
        {
            "en": "So the swapped call reproduces the draft q. Read off q(cat).",
            "zh": "所以写反后输出的是草稿分布 q，读出 q(cat) 即可。",
        },
    ],
    solution="answer = sv.output_dist(sv.TUTORIAL_Q, sv.TUTORIAL_P)[0]",
    wrong=[0.6, 0.52],
)
