"""Exercises of tutorial 14 (real runs and serving): the payoff of a draft and vLLM's counters, by formula."""

from ..exact.gamma import best_gamma, expected_tokens, speedup
from .core import number_exercise

ALPHA, GAMMA = 0.75, 4  # a run's measured alpha and its number of drafts per step
COST = 0.1  # a cheap draft: one draft step costs a tenth of a target step (exercise 14.1)
DRAFTS, DRAFT_TOKENS, ACCEPTED = 2000, 8000, 5200  # a vLLM server's counters (exercise 14.2)

number_exercise(
    "14.1",
    "14",
    {
        "en": f"With α = {ALPHA} and a draft that costs c = {COST} target steps, what is the best textbook "
        "speed-up (1 − α^(γ+1)) / ((1 − α)(γ c + 1)) over all γ (to within 1e-6)?",
        "zh": f"α = {ALPHA}，草稿每步的开销是 c = {COST} 个目标步。对所有 γ 取最优时，"
        "教科书加速比 (1 − α^(γ+1)) / ((1 − α)(γ c + 1)) 是多少（误差在 1e-6 以内）？",
    },
    answer=lambda: speedup(ALPHA, best_gamma(ALPHA, COST), COST),
    hints=[
        {
            "en": "sv.best_gamma(alpha, c) finds the γ; sv.speedup(alpha, gamma, c) evaluates the formula.",
            "zh": "sv.best_gamma(alpha, c) 给出最优 γ；sv.speedup(alpha, gamma, c) 计算这个公式。",
        },
        {
            "en": "Or tabulate the formula for γ = 0..16 and take the largest value.",
            "zh": "也可以把 γ = 0..16 的值列成表，取其中最大的。",
        },
    ],
    solution="g = sv.best_gamma(0.75, 0.1)\nanswer = sv.speedup(0.75, g, 0.1)",
    wrong=[1 / (1 - ALPHA), float(best_gamma(ALPHA, COST)), expected_tokens(ALPHA, GAMMA)],
)

number_exercise(
    "14.2",
    "14",
    {
        "en": f"A vLLM server's /metrics page shows {DRAFTS:,} drafts (one per request per verify step that carried "
        f"draft tokens), {DRAFT_TOKENS:,} draft tokens and {ACCEPTED:,} accepted tokens since it started. "
        "What is its mean acceptance length (to within 1e-6)?",
        "zh": f"一台 vLLM 服务器的 /metrics 页面显示，自启动以来草稿次数为 {DRAFTS:,}（每个请求在每个带草稿 token 的验证步"
        f"里算一次）、草稿 token 数为 {DRAFT_TOKENS:,}、"
        f"被接受的 token 数为 {ACCEPTED:,}。它的平均接受长度是多少（误差在 1e-6 以内）？",
    },
    answer=lambda: 1 + ACCEPTED / DRAFTS,
    hints=[
        {
            "en": "One draft is one verify step. Each verify step emits its accepted draft tokens plus one token from "
            "the target (a repair or the bonus token).",
            "zh": "草稿次数里的一次就是一个验证步。每个验证步输出它被接受的草稿 token，再加上目标模型给出的一个 token"
            "（修复的或额外 token）。",
        },
        {
            "en": "Mean acceptance length = 1 + accepted tokens / drafts.",
            "zh": "平均接受长度 = 1 + 被接受的 token 数 / 草稿次数。",
        },
    ],
    solution="answer = 1 + 5200 / 2000",
    wrong=[ACCEPTED / DRAFT_TOKENS, ACCEPTED / DRAFTS, 1 + ACCEPTED / DRAFT_TOKENS],  # rate; no +1; per token
)
