"""Exercises of tutorial 9 (when losslessness breaks: sampling settings, lossy rules, adaptive γ)."""

from fractions import Fraction as F

import numpy as np

from .core import number_exercise

TARGET_LOGITS, DRAFT_LOGITS = (2.0, 1.0, 0.0), (0.0, 1.0, 2.0)  # the logits of notebook 9, section 2
LENIENT_P, LENIENT_Q = (0.7, 0.2, 0.1), (0.1, 0.2, 0.7)  # the pair of notebook 9, section 4
ADAPTIVE_P, ADAPTIVE_Q = (0.5, 0.2, 0.3), (0.1, 0.4, 0.5)  # a pair notebook 9 never prints (exercise 9.4)
TOL_EN = " Checked to within 1e-6."
TOL_ZH = "判分允许的误差为 1e-6。"


def softmax_at(logits, temperature: float) -> np.ndarray:
    """softmax(logits / temperature), written out here so that the answers do not call specviz.exact.standardize."""
    z = np.asarray(logits, dtype=float) / temperature
    e = np.exp(z - z.max())
    return e / e.sum()


def mismatch_tv(
    t_target: float, t_sampled: float, t_ratio: float, t_user: float = 0.7, residual_from_sampled: bool = False
) -> float:
    """TV from the user's p of one verify step whose draft is sampled at t_sampled and whose ratio uses q at t_ratio.

    Written from the proof, independently of specviz.mismatch_output_dist: accepted mass s(x) min(1, p(x)/q(x)),
    the rest repaired from (p - q)+ / Z, with the ratio's q in the residual too (or the sampled s, if asked).
    """
    want, p = softmax_at(TARGET_LOGITS, t_user), softmax_at(TARGET_LOGITS, t_target)
    s, q = softmax_at(DRAFT_LOGITS, t_sampled), softmax_at(DRAFT_LOGITS, t_ratio)
    accepted = s * np.minimum(1.0, p / q)
    short = np.maximum(p - (s if residual_from_sampled else q), 0.0)
    out = accepted + (1.0 - accepted.sum()) * short / short.sum()
    return float(np.abs(out - want).sum() / 2)


number_exercise(
    "9.1",
    "09",
    {
        "en": "The user asks for temperature 0.7. The draft token is sampled at temperature 0.5 and the q in the ratio "
        "is also computed at 0.5; the target's p uses 0.7. What is the total variation distance between the "
        "output and the distribution the user asked for?" + TOL_EN,
        "zh": "用户要求温度 0.7。草稿 token 按温度 0.5 采样，比值里的 q 也按 0.5 计算；目标的 p 用 0.7。"
        "输出分布与用户想要的分布之间的总变差距离是多少？" + TOL_ZH,
    },
    answer=lambda: 0.0,  # by the theorem: the q in the ratio is the distribution the token came from
    hints=[
        {
            "en": "Ask whether the q in the ratio is the distribution the draft token was actually drawn from.",
            "zh": "先问一句：比值里的 q 是不是草稿 token 真正被采样出来的那个分布？",
        },
        {
            "en": "In code: sv.mismatch_output_dist(target_logits, draft_logits, sv.Sampling(0.7), "
            "draft_sampled=sv.Sampling(0.5), draft_ratio=sv.Sampling(0.5)).tv",
            "zh": "代码：sv.mismatch_output_dist(target_logits, draft_logits, sv.Sampling(0.7), "
            "draft_sampled=sv.Sampling(0.5), draft_ratio=sv.Sampling(0.5)).tv",
        },
    ],
    solution=(
        "m = sv.mismatch_output_dist([2.0, 1.0, 0.0], [0.0, 1.0, 2.0], sv.Sampling(0.7),\n"
        "                            draft_sampled=sv.Sampling(0.5), draft_ratio=sv.Sampling(0.5))\n"
        "answer = m.tv"
    ),
    wrong=[mismatch_tv(0.7, 0.5, 0.7), 0.1057],  # q at 0.7 while sampled at 0.5; p at T = 1.0
)

number_exercise(
    "9.2",
    "09",
    {
        "en": "Same logits, but now the draft token is sampled at temperature 0.5 while the verifier holds q at 0.7 "
        "(the user's setting) and uses that q in both the ratio and the residual. What is the total variation "
        "distance from the distribution the user asked for?" + TOL_EN,
        "zh": "还是这组 logits，但这次草稿 token 按温度 0.5 采样，验证器手里的 q 却是温度 0.7（用户的设置）下的，"
        "并且在比值和残差里都用这个 q。输出与用户想要的分布之间的总变差距离是多少？" + TOL_ZH,
    },
    answer=lambda: mismatch_tv(0.7, 0.5, 0.7),
    hints=[
        {
            "en": "This time the q in the ratio is not the distribution the token came from.",
            "zh": "这一次，比值里的 q 不是草稿 token 实际来自的那个分布。",
        },
        {
            "en": "Use sv.mismatch_output_dist with draft_sampled=sv.Sampling(0.5) and draft_ratio=sv.Sampling(0.7).",
            "zh": "用 sv.mismatch_output_dist，设 draft_sampled=sv.Sampling(0.5)、draft_ratio=sv.Sampling(0.7)。",
        },
    ],
    solution=(
        "m = sv.mismatch_output_dist([2.0, 1.0, 0.0], [0.0, 1.0, 2.0], sv.Sampling(0.7),\n"
        "                            draft_sampled=sv.Sampling(0.5), draft_ratio=sv.Sampling(0.7))\n"
        "answer = m.tv"
    ),
    # 0: it is not exact; 0.06: the T = 1.0 case the notebook prints; the last: the residual built from the sampled q
    wrong=[0.0, 0.06, mismatch_tv(0.7, 0.5, 0.7, residual_from_sampled=True)],
)

number_exercise(
    "9.3",
    "09",
    {
        "en": "Lenient acceptance with l = 0.4 on p = (0.7, 0.2, 0.1), q = (0.1, 0.2, 0.7), residual (p − q)⁺: "
        "with what probability does the output come out as the third token?" + TOL_EN,
        "zh": "在 p = (0.7, 0.2, 0.1)、q = (0.1, 0.2, 0.7) 上使用宽松接受，l = 0.4，残差仍为 (p − q)⁺。"
        "输出为第三个 token 的概率是多少？" + TOL_ZH,
    },
    answer=lambda: float(F(7, 10) * min(F(1), F(1, 10) / (F(2, 5) * F(7, 10)))),  # q·min(1, p/(l q)) = p/l = 1/4
    hints=[
        {
            "en": "The third token is over-proposed (q > p). It is now kept with probability min(1, p/(l·q)).",
            "zh": "第三个 token 被草稿多给了（q > p），现在它以 min(1, p/(l·q)) 的概率被保留。",
        },
        {
            "en": "The residual is 0 there, so its output probability is q·min(1, p/(l·q)).",
            "zh": "它的残差为 0，所以它的输出概率就是 q·min(1, p/(l·q))。",
        },
    ],
    solution="answer = sv.output_dist((0.7, 0.2, 0.1), (0.1, 0.2, 0.7), rule='lenient', l=0.4)[2]",
    wrong=[0.1, 0.2],  # 0.1: p of the third token (the exact rule, l = 1); 0.2: the l = 0.5 value
)

number_exercise(
    "9.4",
    "09",
    {
        "en": "Transfer: target p = (0.5, 0.2, 0.3), draft q = (0.1, 0.4, 0.5). An engine draws the draft x ~ q, and "
        "when q(x) < 0.2 it leaves x out and the target samples that position from p instead; otherwise x is "
        "verified as usual. With what probability is the first emitted token x₁? (Compare: the rule 'verify x, "
        "then stop drafting when q(x) < 0.2' decides before the next draft is drawn and gives exactly p(x₁) = 0.5.)"
        + TOL_EN,
        "zh": "迁移练习：目标 p = (0.5, 0.2, 0.3)，草稿 q = (0.1, 0.4, 0.5)。某个引擎先抽出草稿 x ~ q，"
        "若 q(x) < 0.2 就丢掉 x，改由目标模型从 p 中抽取这个位置；否则照常验证 x。第一个输出 token 是 x₁ 的概率是多少？"
        "（对照：规则“先验证 x，若 q(x) < 0.2 就不再提出新的草稿”在下一个草稿抽出之前就做了决定，"
        "得到的恰好是 p(x₁) = 0.5。）" + TOL_ZH,
    },
    # by hand: x1 is dropped (q = 0.1 < 0.2), mass 1/10 goes to a fresh draw from p; x2 and x3 are verified.
    # accepted: min(p, q) on x2, x3 = 1/5 + 3/10; rejected: 1/5 + 1/5 = 2/5, repaired onto x1 (the only shortfall).
    # P(out = x1) = 1/10 · 1/2 (fresh draw) + 2/5 (repairs) = 9/20
    answer=lambda: float(F(1, 10) * F(1, 2) + (F(2, 5) - F(1, 5)) + (F(1, 2) - F(3, 10))),
    hints=[
        {
            "en": "Split on the drawn draft. x₁ (probability 0.1) is dropped: then the output is a fresh draw from p. "
            "x₂ and x₃ go through the usual test, with the usual repair from (p − q)⁺ / Z.",
            "zh": "按抽到的草稿分情况。x₁（概率 0.1）被丢掉：这时输出是从 p 新抽的一个 token。"
            "x₂ 和 x₃ 照常检验，被拒绝时照常从 (p − q)⁺ / Z 修复。",
        },
        {
            "en": "Only x₁ has a shortfall, so every repair outputs x₁; the rejected mass is q(x₂) − p(x₂) + "
            "q(x₃) − p(x₃). The dropped draft costs x₁ its own accept part min(p(x₁), q(x₁)) = 0.1 and gives back "
            "only 0.1 · p(x₁). Check with specviz.exact.stopping.first_token_dist(p, q, 'drop_low_confidence', 0.2).",
            "zh": "只有 x₁ 有缺口，所以每次修复都输出 x₁；被拒绝的质量是 q(x₂) − p(x₂) + q(x₃) − p(x₃)。"
            "丢掉草稿让 x₁ 失去了自己的接受部分 min(p(x₁), q(x₁)) = 0.1，却只换回 0.1 · p(x₁)。"
            "可以用 specviz.exact.stopping.first_token_dist(p, q, 'drop_low_confidence', 0.2) 核对。",
        },
    ],
    solution=(
        "from specviz.exact import stopping\n"
        "answer = stopping.first_token_dist((0.5, 0.2, 0.3), (0.1, 0.4, 0.5), 'drop_low_confidence', 0.2)[0]"
    ),
    wrong=[0.5, 0.4, 0.55],  # 0.5: p(x1), the stop-after rule; 0.4: repairs alone; 0.55: the drop counted as kept
)
