"""Exercises of tutorial 8 (γ-step chains, deterministic drafts, multi-draft trees)."""

import numpy as np

from ..examples import TUTORIAL_P, TUTORIAL_Q
from ..gamma import expected_tokens
from ..theory import acceptance_rate, resample_dist
from ..tree import tree_expected_tokens
from .core import number_exercise

P, Q = TUTORIAL_P, TUTORIAL_Q  # target p and draft q of the running example (cat, dog, fish)
ONE_HOT_DOG = (0.0, 1.0, 0.0)  # a deterministic draft (prompt lookup) that proposes dog
P4, Q4 = (0.5, 0.3, 0.15, 0.05), (0.1, 0.2, 0.3, 0.4)  # the four-token multi-draft example

number_exercise(
    "8.1",
    "08",
    {
        "en": "Running example, γ = 3 drafts per verify step, each kept independently with probability "
        "α = Σ min(p, q). How many tokens does one verify step emit on average?",
        "zh": "贯穿全文的例子，每个验证步起草 γ = 3 个 token，每个草稿以概率 α = Σ min(p, q) 独立地被保留。"
        "一个验证步平均输出多少个 token？",
    },
    answer=lambda: expected_tokens(acceptance_rate(P, Q), 3),
    hints=[
        {
            "en": "The step always emits one token (a repair or the bonus), plus one per accepted draft.",
            "zh": "每一步总会输出一个 token（修正的或额外的 bonus），再加上每个被接受的草稿各一个。",
        },
        {
            "en": "Draft i is only reached if drafts 1..i−1 all passed: 1 + α + α² + α³.",
            "zh": "只有前 i−1 个草稿都通过，才轮得到第 i 个：1 + α + α² + α³。",
        },
    ],
    solution="answer = sv.expected_tokens(sv.acceptance_rate(sv.TUTORIAL_P, sv.TUTORIAL_Q), 3)",
    wrong=[4, 2.4, 5.0],  # 4: every draft accepted; 2.4: 3·α; 5: 1/(1 − α), the γ → ∞ limit
)

number_exercise(
    "8.2",
    "08",
    {
        "en": "A prompt-lookup draft proposes dog with certainty (q one-hot on dog); the target is the running "
        "example's p. Given that the draft is rejected, with what probability is the emitted token cat?",
        "zh": "一个 prompt lookup 草稿确定地提议 dog（q 全部落在 dog 上）；目标仍是贯穿全文的例子里的 p。"
        "已知草稿被拒绝，输出 cat 的概率是多少？",
    },
    answer=lambda: float(resample_dist(P, ONE_HOT_DOG)[0]),
    hints=[
        {
            "en": "After a rejection the token comes from (p − q)⁺ / Z. What is (p − q)⁺ when q is one-hot on dog?",
            "zh": "被拒绝后，token 来自 (p − q)⁺ / Z。当 q 全部落在 dog 上时，(p − q)⁺ 是什么？",
        },
        {
            "en": "It is p with dog removed; divide by what is left, 1 − p(dog).",
            "zh": "就是去掉 dog 的 p；再除以剩下的总量 1 − p(dog)。",
        },
    ],
    solution="answer = sv.resample_dist(sv.TUTORIAL_P, [0, 1, 0])[0]",
    wrong=[0.6, 0.0, 0.3],  # 0.6: p(cat) unconditionally; 0: the draft's q(cat); 0.3: p(dog)
)

number_exercise(
    "8.3",
    "08",
    {
        "en": "Draft tree with the four-token example p = (0.5, 0.3, 0.15, 0.05), q = (0.1, 0.2, 0.3, 0.4): "
        "k = 2 i.i.d. drafts at every node, depth 3, verified with the residual update. Expected tokens per "
        "verify step?",
        "zh": "草稿树，使用四个 token 的例子 p = (0.5, 0.3, 0.15, 0.05)、q = (0.1, 0.2, 0.3, 0.4)："
        "每个节点 k = 2 个独立草稿，深度 3，按残差更新规则验证。每个验证步的期望 token 数是多少？",
    },
    answer=lambda: tree_expected_tokens(P4, Q4, 2, 3),
    hints=[
        {
            "en": "At each node, P(some child accepted) = β is the multi-draft acceptance of k = 2 drafts.",
            "zh": "在每个节点上，P(某个子节点被接受) = β 就是 k = 2 个草稿的多草稿接受率。",
        },
        {
            "en": "Levels work like the chain of section 8.3 with β in place of α: 1 + β + β² + β³.",
            "zh": "各层就像链式情形，只是把 α 换成 β：1 + β + β² + β³。",
        },
    ],
    solution=(
        "beta = sv.multi_draft_acceptance_rate((0.5, 0.3, 0.15, 0.05), (0.1, 0.2, 0.3, 0.4), 2)\n"
        "answer = sum(beta**i for i in range(4))"
    ),
    wrong=[
        float(expected_tokens(acceptance_rate(P4, Q4), 3)),  # one draft per level: the chain
        float(np.sum([2**i for i in range(4)])),  # every drafted node counted
        4.0,  # every level accepted
    ],
)
