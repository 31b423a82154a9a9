"""Exercises of tutorial 12 (scaling: the cost ratio c, the cost of verification, large batches)."""

from ..exact.gamma import best_gamma, cost_model_speedup, speedup
from .core import number_exercise

C_70B = 4 / 70  # the cost ratio of notebook 12: a 4 B draft for a 70 B target, both memory-bound
ALPHA = 0.8  # the acceptance rate of exercise 12.2
ALPHA_1 = 0.85  # exercise 12.1: a value the notebook's best-γ table does not print

number_exercise(
    "12.1",
    "12",
    {
        "en": f"A 70 B target, a 4 B draft, both memory-bound, so c = 4/70. With α = {ALPHA_1}, which γ "
        "between 0 and 16 gives the largest textbook speed-up (a whole number, checked exactly)?",
        "zh": f"目标 70 B、草稿 4 B，两者都受内存带宽限制，所以 c = 4/70。α = {ALPHA_1} 时，"
        "0 到 16 之间哪个 γ 的教科书加速比最大（答案是整数，按精确值检查）？",
    },
    answer=lambda: best_gamma(ALPHA_1, C_70B, max_gamma=16),
    hints=[
        {
            "en": "The speed-up is (1 - α^(γ+1)) / ((1 - α)(γ c + 1)); try every γ.",
            "zh": "加速比是 (1 - α^(γ+1)) / ((1 - α)(γ c + 1))；把每个 γ 都试一遍。",
        },
        {
            "en": "In code: sv.best_gamma(0.85, 4 / 70, max_gamma=16)",
            "zh": "代码：sv.best_gamma(0.85, 4 / 70, max_gamma=16)",
        },
    ],
    solution="answer = sv.best_gamma(0.85, 4 / 70, max_gamma=16)",
    wrong=[16, 1, 4, 7],  # 7: the best γ at α = 0.8
    tol=0,
)

number_exercise(
    "12.2",
    "12",
    {
        "en": "Same pair, γ = 4, α = 0.8, but the batch is so large that scoring γ + 1 = 5 tokens per "
        "sequence costs 2 target steps instead of 1 (a draft step still costs c = 4/70 of a target "
        "step). What speed-up does the cost model predict (to within 1e-6)?",
        "zh": "同一对模型，γ = 4，α = 0.8，但批量大到每条序列评分 γ + 1 = 5 个 token 要花 2 个目标步，"
        "而不是 1 个（草稿一步仍是目标一步的 c = 4/70）。开销模型预测的加速比是多少（误差在 1e-6 以内）？",
    },
    answer=lambda: cost_model_speedup(ALPHA, 4, C_70B, 2.0, 1.0),
    hints=[
        {
            "en": "Tokens per verify step are unchanged; only the time of a verify step grows.",
            "zh": "每个验证步产出的 token 数不变，变的只是验证步的耗时。",
        },
        {
            "en": "In code: sv.cost_model_speedup(0.8, 4, draft_step_s=4/70, verify_step_s=2.0, target_step_s=1.0)",
            "zh": "代码：sv.cost_model_speedup(0.8, 4, draft_step_s=4/70, verify_step_s=2.0, target_step_s=1.0)",
        },
    ],
    solution="answer = sv.cost_model_speedup(0.8, 4, draft_step_s=4 / 70, verify_step_s=2.0, target_step_s=1.0)",
    wrong=[speedup(ALPHA, 4, C_70B)],  # the textbook value, which assumes verification is free
    tol=1e-6,
)
