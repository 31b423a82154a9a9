"""Exercises of tutorial 13 (draft trees: tokens per step against the size of the tree)."""

from ..exact.gamma import expected_tokens
from ..exact.theory import acceptance_rate
from ..foundation.examples import TUTORIAL_P, TUTORIAL_Q
from ..samplers.tree import tree_expected_tokens
from .core import number_exercise

P, Q = TUTORIAL_P, TUTORIAL_Q  # the running example (cat, dog, fish)
P4, Q4 = (0.5, 0.3, 0.15, 0.05), (0.1, 0.2, 0.3, 0.4)  # notebook 8's four-token pair, a far draft

number_exercise(
    "13.1",
    "13",
    {
        "en": f"Draft tree on the four-token pair p4 = {P4}, q4 = {Q4}: k = 3 i.i.d. drafts at every node, "
        "depth 2, verified with R updated after each rejection. Expected tokens per verify step (to within 1e-6)?",
        "zh": f"在四个 token 的分布对 p4 = {P4}、q4 = {Q4} 上建草稿树：每个节点 k = 3 个独立同分布的草稿，"
        "深度 2，按每次拒绝后更新 R 的规则验证。每个验证步的期望 token 数是多少（误差在 1e-6 以内）？",
    },
    answer=lambda: tree_expected_tokens(P4, Q4, 3, 2),
    hints=[
        {
            "en": "At each node, β = P(some child accepted) is the multi-draft acceptance of k = 3 drafts: "
            "sv.multi_draft_acceptance_rate(p4, q4, 3).",
            "zh": "在每个节点上，β = P(某个子节点被接受) 就是 k = 3 个草稿的多草稿接受率："
            "sv.multi_draft_acceptance_rate(p4, q4, 3)。",
        },
        {
            "en": "Levels work like the chain of notebook 8 with β in place of α: 1 + β + β² at depth 2.",
            "zh": "各层就像第 8 篇的链，只是把 α 换成 β：深度 2 时是 1 + β + β²。",
        },
    ],
    solution=(
        "beta = sv.multi_draft_acceptance_rate((0.5, 0.3, 0.15, 0.05), (0.1, 0.2, 0.3, 0.4), 3)\n"
        "answer = 1 + beta + beta**2"
    ),
    wrong=[
        float(expected_tokens(acceptance_rate(P4, Q4), 2)),  # one draft per level: the chain
        1 + 3 + 9.0,  # every drafted node counted
        3.0,  # every level accepted
    ],
)

number_exercise(
    "13.2",
    "13",
    {
        "en": "Draft tree on the running example p, q (cat, dog, fish): k = 2 i.i.d. drafts per node, depth 2, "
        "verified with R updated after each rejection. Expected tokens per verify step (to within 1e-6)?",
        "zh": "在贯穿全文的例子 p、q（cat、dog、fish）上建草稿树：每个节点 k = 2 个独立同分布的草稿，深度 2，"
        "按每次拒绝后更新 R 的规则验证。每个验证步的期望 token 数是多少（误差在 1e-6 以内）？",
    },
    answer=lambda: tree_expected_tokens(P, Q, 2, 2),
    hints=[
        {
            "en": "β for k = 2 is exercise 8.3's answer: 0.8 + 0.2 · q(cat).",
            "zh": "k = 2 时的 β 就是练习 8.3 的答案：0.8 + 0.2 · q(cat)。",
        },
        {
            "en": "Then 1 + β + β².",
            "zh": "然后算 1 + β + β²。",
        },
    ],
    solution="beta = sv.multi_draft_acceptance_rate(sv.TUTORIAL_P, sv.TUTORIAL_Q, 2)\nanswer = 1 + beta + beta**2",
    wrong=[float(expected_tokens(acceptance_rate(P, Q), 2)), 3.0, 1 + 0.96 + 0.96**2],  # chain; all kept; R = p
)
