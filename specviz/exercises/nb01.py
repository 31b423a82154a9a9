"""Exercises of tutorial 1 (why lossless, and the notation)."""

from fractions import Fraction as F

from .core import number_exercise

# The answers are hand fractions, computed without the functions the solutions call:
# p = (3/5, 3/10, 1/10) is the target of the running example, Q2 = (1/5, 3/10, 1/2) a second draft
# that the notebook defines as q2 just before the exercises and uses nowhere above them (so no answer sits
# on the page above its exercise).
P = (F(3, 5), F(3, 10), F(1, 10))
Q = (F(2, 5), F(1, 2), F(1, 10))
Q2 = (F(1, 5), F(3, 10), F(1, 2))
TOL_EN = " Checked to within 1e-6."
TOL_ZH = "判分允许的误差为 1e-6。"

number_exercise(
    "1.1",
    "01",
    {
        "en": "A second draft for the same target proposes q₂ = (0.2, 0.3, 0.5) for (cat, dog, fish). By how much "
        "does it over-propose fish: q₂(fish) − p(fish)?" + TOL_EN,
        "zh": "同一个目标模型配上第二个草稿，q₂ = (0.2, 0.3, 0.5)（对应 cat、dog、fish）。它给 fish 多给了多少概率："
        "q₂(fish) − p(fish)？" + TOL_ZH,
    },
    answer=lambda: float(Q2[2] - P[2]),  # 1/2 - 1/10 = 2/5
    hints=[
        {
            "en": "fish is the third token of the vocabulary (cat, dog, fish); p(fish) = 0.1.",
            "zh": "fish 是词表 (cat, dog, fish) 中的第三个 token；p(fish) = 0.1。",
        },
        {"en": "Subtract the target's probability from the draft's.", "zh": "用草稿的概率减去目标模型的概率。"},
    ],
    solution="q2 = (0.2, 0.3, 0.5)\nanswer = q2[2] - sv.TUTORIAL_P[2]",
    wrong=[-0.4, 0.5, 0.2],  # -0.4: p - q2; 0.5: q2(fish) alone; 0.2: the running example's dog
)

number_exercise(
    "1.2",
    "01",
    {
        "en": "How much probability does the target want beyond what the draft offers, summed over all tokens: "
        "Z = Σ_x max(0, p(x) − q(x))?" + TOL_EN,
        "zh": "把所有 token 上“目标模型想要、草稿却没给够”的概率加起来：Z = Σ_x max(0, p(x) − q(x)) 是多少？" + TOL_ZH,
    },
    answer=lambda: float(sum(max(F(0), pi - qi) for pi, qi in zip(P, Q))),  # only cat: 3/5 - 2/5 = 1/5
    hints=[
        {
            "en": "Only tokens with p(x) > q(x) contribute; the others count as 0.",
            "zh": "只有 p(x) > q(x) 的 token 有贡献，其余的 token 记为 0。",
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
        "en": "Someone passes the second draft q₂ = (0.2, 0.3, 0.5) in the target's place: "
        "sv.output_dist(q2, p), with the arguments swapped. With what probability does the output come out as fish?"
        + TOL_EN,
        "zh": "有人把第二个草稿 q₂ = (0.2, 0.3, 0.5) 放在了目标的位置上：sv.output_dist(q2, p)，参数顺序写反了。"
        "这时输出为 fish 的概率是多少？" + TOL_ZH,
    },
    answer=lambda: float(Q2[2]),  # the first argument is reproduced exactly: q2(fish) = 1/2
    hints=[
        {
            "en": "The first argument is always treated as the target, and the output follows the target exactly.",
            "zh": "第一个参数总被当作目标分布，而输出严格服从目标分布。",
        },
        {
            "en": "So the swapped call reproduces q₂. Read off q₂(fish).",
            "zh": "所以写反后输出的是 q₂，读出 q₂(fish) 即可。",
        },
    ],
    solution="q2 = (0.2, 0.3, 0.5)\nanswer = sv.output_dist(q2, sv.TUTORIAL_P)[2]",
    wrong=[0.1, 0.4],  # 0.1: p(fish), what the right order gives; 0.4: q2(fish) - p(fish)
)
