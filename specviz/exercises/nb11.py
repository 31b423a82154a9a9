"""Exercises of tutorial 11 (real models): the measured statistics against the theory, computed in microseconds."""

import numpy as np

from ..exact.gamma import expected_tokens
from .core import number_exercise

ALPHA, GAMMA = 0.75, 4  # a run's measured alpha and its number of drafts per step (exercise 11.1)
P_PROPOSED = (0.9, 0.5, 0.8)  # target probabilities of three prompt-lookup proposals (exercise 11.2)

number_exercise(
    "11.1",
    "11",
    {
        "en": f"A run measures α = {ALPHA} with γ = {GAMMA}. If every draft were kept independently with "
        "probability α, what would the draft acceptance rate (accepted drafts / drafted tokens) be (to within 1e-6)?",
        "zh": f"一次运行测得 α = {ALPHA}，γ = {GAMMA}。假如每个草稿都以概率 α 独立地被保留，"
        "草稿接受率（被接受的草稿数 / 起草的 token 数）应是多少（误差在 1e-6 以内）？",
    },
    answer=lambda: (expected_tokens(ALPHA, GAMMA) - 1) / GAMMA,
    hints=[
        {
            "en": "Draft i is accepted only if drafts 1..i all pass: probability α^i.",
            "zh": "第 i 个草稿被接受，要求第 1 到第 i 个都通过：概率是 α^i。",
        },
        {
            "en": "Every step drafts γ tokens, so divide α + α² + … + α^γ by γ.",
            "zh": "每一步都起草 γ 个 token，所以把 α + α² + … + α^γ 除以 γ。",
        },
    ],
    solution="answer = (sv.expected_tokens(0.75, 4) - 1) / 4",
    wrong=[ALPHA, ALPHA**GAMMA, expected_tokens(ALPHA, GAMMA)],  # per-test rate; all pass; tokens per step
)

number_exercise(
    "11.2",
    "11",
    {
        "en": "A prompt-lookup draft proposes three tokens, each with certainty (q one-hot). The target gives "
        f"them probabilities {', '.join(map(str, P_PROPOSED))} (each in its own context). How many tokens does "
        "this verify step emit on average (to within 1e-6)?",
        "zh": "一个提示词查找草稿确定地（q 为 one-hot）提议了三个 token。目标模型给它们的概率依次是 "
        f"{'、'.join(map(str, P_PROPOSED))}（各自在自己的上下文里）。这个验证步平均输出多少个 token（误差在 1e-6 以内）？",
    },
    answer=lambda: 1 + float(np.cumprod(P_PROPOSED).sum()),
    hints=[
        {
            "en": "With a one-hot q, a proposal x is accepted with probability min(1, p(x)/1) = p(x).",
            "zh": "当 q 是 one-hot 时，提议 x 被接受的概率是 min(1, p(x)/1) = p(x)。",
        },
        {
            "en": "Proposal i counts only if proposals 1..i all pass; one more token (repair or bonus) always comes.",
            "zh": "只有前 i 个提议都通过，第 i 个才算数；另外总会再输出一个 token（修复的或额外 token）。",
        },
    ],
    solution="answer = 1 + np.cumprod([0.9, 0.5, 0.8]).sum()",
    wrong=[1 + sum(P_PROPOSED), 4.0, float(np.cumprod(P_PROPOSED).sum())],
)
