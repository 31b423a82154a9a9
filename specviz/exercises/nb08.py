"""Exercises of tutorial 8 (γ-step chains, deterministic drafts, multi-draft verification)."""

from ..exact.gamma import expected_tokens
from ..exact.multidraft import multi_draft_acceptance_rate
from ..exact.theory import acceptance_rate, resample_dist
from ..foundation.examples import TUTORIAL_P, TUTORIAL_Q
from .core import number_exercise

P, Q = TUTORIAL_P, TUTORIAL_Q  # target p and draft q of the running example (cat, dog, fish)
P_NEW, Q_NEW = (0.7, 0.2, 0.1), (0.2, 0.5, 0.3)  # a pair the notebook never prints (exercise 8.1)
P4 = (0.5, 0.3, 0.15, 0.05)  # the four-token target of the multi-draft section
ONE_HOT_SECOND = (0.0, 1.0, 0.0, 0.0)  # a deterministic draft (prompt lookup) that proposes the second token

number_exercise(
    "8.1",
    "08",
    {
        "en": f"A new pair: p = {P_NEW}, q = {Q_NEW}. With γ = 3 drafts per verify step, each kept independently "
        "with probability α = Σ min(p, q), how many tokens does one verify step emit on average "
        "(to within 1e-6)?",
        "zh": f"一对新的分布：p = {P_NEW}，q = {Q_NEW}。每个验证步起草 γ = 3 个 token，每个草稿都以概率 "
        "α = Σ min(p, q) 独立地被保留。一个验证步平均输出多少个 token（误差在 1e-6 以内）？",
    },
    answer=lambda: expected_tokens(acceptance_rate(P_NEW, Q_NEW), 3),
    hints=[
        {
            "en": "First α: add min(p, q) token by token. The step always emits one token (a repair or the "
            "bonus), plus one per accepted draft.",
            "zh": "先算 α：逐个 token 把 min(p, q) 加起来。每一步总会输出一个 token（修复的或额外 token），"
            "再加上每个被接受的草稿各一个。",
        },
        {
            "en": "Draft i is only reached if drafts 1..i−1 all passed: 1 + α + α² + α³ with α = 0.5.",
            "zh": "只有前 i−1 个草稿都通过，才轮得到第 i 个：1 + α + α² + α³，其中 α = 0.5。",
        },
    ],
    solution="alpha = sv.acceptance_rate((0.7, 0.2, 0.1), (0.2, 0.5, 0.3))\nanswer = sv.expected_tokens(alpha, 3)",
    wrong=[4, 1.5, 2.0],  # 4: every draft accepted; 1.5: 3·α; 2: 1/(1 − α), the γ → ∞ limit
)

number_exercise(
    "8.2",
    "08",
    {
        "en": f"The four-token target p4 = {P4} and a prompt-lookup draft that proposes the second token with "
        "certainty (q one-hot). Given that the proposal is rejected, with what probability is the emitted token "
        "the first one (to within 1e-6)?",
        "zh": f"四个 token 的目标 p4 = {P4}，一个提示词查找草稿确定地提议第二个 token（q 为 one-hot）。"
        "已知提议被拒绝，输出第一个 token 的概率是多少（误差在 1e-6 以内）？",
    },
    answer=lambda: float(resample_dist(P4, ONE_HOT_SECOND)[0]),
    hints=[
        {
            "en": "After a rejection the token comes from the repair distribution (p − q)⁺ / Z. What is (p − q)⁺ "
            "when q is one-hot on the second token?",
            "zh": "被拒绝后，token 来自修复分布 (p − q)⁺ / Z。当 q 全部落在第二个 token 上时，(p − q)⁺ 是什么？",
        },
        {
            "en": "It is p with the second token removed; divide by what is left, 1 − p(second).",
            "zh": "就是去掉第二个 token 的 p；再除以剩下的总量 1 − p(第二个)。",
        },
    ],
    solution="answer = sv.resample_dist((0.5, 0.3, 0.15, 0.05), (0, 1, 0, 0))[0]",
    wrong=[0.5, 0.0, 0.3],  # 0.5: p(first) unconditionally; 0: the draft's q(first); 0.3: p(second)
)

number_exercise(
    "8.3",
    "08",
    {
        "en": "The running example p, q (cat, dog, fish) with k = 2 i.i.d. drafts, verified with R updated "
        "after each rejection. What is the probability that one of the two drafts is kept (to within 1e-6)?",
        "zh": "贯穿全文的例子 p、q（cat、dog、fish），k = 2 个独立同分布的草稿，每次拒绝后都更新 R。"
        "两个草稿中有一个被保留的概率是多少（误差在 1e-6 以内）？",
    },
    answer=lambda: multi_draft_acceptance_rate(P, Q, 2),
    hints=[
        {
            "en": "The first draft is kept with probability Σ min(p, q). After it is rejected, R = (p − q)⁺ / Z: "
            "what is R for the running example?",
            "zh": "第一个草稿以概率 Σ min(p, q) 被保留。它被拒绝后，R = (p − q)⁺ / Z：贯穿全文的例子里 R 是什么？",
        },
        {
            "en": "R is all on cat, so the second draft (from q) is kept with probability Σ min(R, q) = q(cat). "
            "Add: P(first kept) + P(first rejected) · q(cat).",
            "zh": "R 全部落在 cat 上，所以第二个草稿（仍从 q 抽取）被保留的概率是 Σ min(R, q) = q(cat)。"
            "相加：P(第一个被保留) + P(第一个被拒绝) · q(cat)。",
        },
    ],
    solution="answer = sv.multi_draft_acceptance_rate(sv.TUTORIAL_P, sv.TUTORIAL_Q, 2)",
    wrong=[0.8, 0.96, 1.0],  # 0.8: one draft; 0.96: 1 − 0.2², as if R stayed p; 1: both always kept
)
