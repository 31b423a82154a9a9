"""Exercises of tutorial 9 (when losslessness breaks: sampling settings and lossy rules)."""

from ..rules import output_dist
from ..standardize import Sampling, mismatch_output_dist
from .core import number_exercise

TARGET_LOGITS, DRAFT_LOGITS = (2.0, 1.0, 0.0), (0.0, 1.0, 2.0)  # the logits of notebook 9, section 2
LENIENT_P, LENIENT_Q = (0.7, 0.2, 0.1), (0.1, 0.2, 0.7)  # the pair of notebook 9, section 4

number_exercise(
    "9.1",
    "09",
    {
        "en": "The user asks for temperature 0.7. The draft token is sampled at temperature 1.0 and the q in the ratio "
        "is also computed at 1.0; the target's p uses 0.7. What is the total variation distance between the "
        "output and the distribution the user asked for?",
        "zh": "用户要求温度 0.7。草稿词按温度 1.0 采样，比值里的 q 也按 1.0 计算；目标的 p 用 0.7。"
        "输出分布与用户想要的分布之间的总变差距离是多少？",
    },
    answer=lambda: (
        mismatch_output_dist(
            TARGET_LOGITS, DRAFT_LOGITS, Sampling(0.7), draft_sampled=Sampling(1.0), draft_ratio=Sampling(1.0)
        ).tv
    ),
    hints=[
        {
            "en": "Ask whether the q in the ratio is the distribution the draft token was actually drawn from.",
            "zh": "先问一句：比值里的 q 是不是草稿词真正被采样出来的那个分布？",
        },
        {
            "en": "In code: sv.mismatch_output_dist(target_logits, draft_logits, sv.Sampling(0.7), "
            "draft_sampled=sv.Sampling(1.0), draft_ratio=sv.Sampling(1.0)).tv",
            "zh": "代码：sv.mismatch_output_dist(target_logits, draft_logits, sv.Sampling(0.7), "
            "draft_sampled=sv.Sampling(1.0), draft_ratio=sv.Sampling(1.0)).tv",
        },
    ],
    solution=(
        "m = sv.mismatch_output_dist([2.0, 1.0, 0.0], [0.0, 1.0, 2.0], sv.Sampling(0.7),\n"
        "                            draft_sampled=sv.Sampling(1.0), draft_ratio=sv.Sampling(1.0))\n"
        "answer = m.tv"
    ),
    wrong=[0.06, 0.1057],  # the TVs of two real mismatches (q at 0.7 while sampled at 1.0; p at 1.0)
    tol=1e-9,
)

number_exercise(
    "9.2",
    "09",
    {
        "en": "Same logits, but now the draft token is sampled at temperature 1.0 while the ratio uses q at 0.7 "
        "(the user's setting). What is the total variation distance from the distribution the user asked for?",
        "zh": "还是这组 logits，但这次草稿词按温度 1.0 采样，比值里却用温度 0.7（用户的设置）下的 q。"
        "输出与用户想要的分布之间的总变差距离是多少？",
    },
    answer=lambda: (
        mismatch_output_dist(
            TARGET_LOGITS, DRAFT_LOGITS, Sampling(0.7), draft_sampled=Sampling(1.0), draft_ratio=Sampling(0.7)
        ).tv
    ),
    hints=[
        {
            "en": "This time the q in the ratio is not the distribution the token came from.",
            "zh": "这一次，比值里的 q 不是草稿词实际来自的那个分布。",
        },
        {
            "en": "Use sv.mismatch_output_dist with draft_sampled=sv.Sampling(1.0) and draft_ratio=sv.Sampling(0.7).",
            "zh": "用 sv.mismatch_output_dist，设 draft_sampled=sv.Sampling(1.0)、draft_ratio=sv.Sampling(0.7)。",
        },
    ],
    solution=(
        "m = sv.mismatch_output_dist([2.0, 1.0, 0.0], [0.0, 1.0, 2.0], sv.Sampling(0.7),\n"
        "                            draft_sampled=sv.Sampling(1.0), draft_ratio=sv.Sampling(0.7))\n"
        "answer = m.tv"
    ),
    wrong=[0.0],  # it is not exact: the ratio and the sampler disagree
    tol=1e-4,
)

number_exercise(
    "9.3",
    "09",
    {
        "en": "Lenient acceptance with l = 0.5 on p = (0.7, 0.2, 0.1), q = (0.1, 0.2, 0.7), residual (p − q)⁺: "
        "with what probability does the output come out as the third token?",
        "zh": "在 p = (0.7, 0.2, 0.1)、q = (0.1, 0.2, 0.7) 上使用宽松接受，l = 0.5，残差仍为 (p − q)⁺。"
        "输出为第三个词的概率是多少？",
    },
    answer=lambda: float(output_dist(LENIENT_P, LENIENT_Q, rule="lenient", l=0.5)[2]),
    hints=[
        {
            "en": "The third token is over-proposed (q > p). It is now kept with probability min(1, p/(l·q)).",
            "zh": "第三个词被草稿多给了（q > p），现在它以 min(1, p/(l·q)) 的概率被保留。",
        },
        {
            "en": "The residual is 0 there, so its output probability is q·min(1, p/(l·q)).",
            "zh": "它的残差为 0，所以它的输出概率就是 q·min(1, p/(l·q))。",
        },
    ],
    solution="answer = sv.output_dist((0.7, 0.2, 0.1), (0.1, 0.2, 0.7), rule='lenient', l=0.5)[2]",
    wrong=[0.1],  # p of the third token: what the exact rule (l = 1) gives
)
