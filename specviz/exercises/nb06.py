"""Exercises of tutorial 6 (worked examples: the full table, a perfect draft and a hopeless one)."""

from ..examples import TUTORIAL_P, TUTORIAL_Q
from ..gamma import expected_tokens
from ..rules import joint
from ..theory import acceptance_rate
from .core import number_exercise

P, Q = TUTORIAL_P, TUTORIAL_Q  # target p and draft q of the running example (cat, dog, fish)
Q6 = (0.2, 0.2, 0.6)  # another draft for the running target, used by exercise 6.2

number_exercise(
    "6.1",
    "06",
    {
        "en": "The draft of the running example proposes γ = 4 tokens per verify step, each kept with probability "
        "Σ min(p, q). How many tokens does one verify step produce on average (kept drafts plus the one token "
        "the target always adds)?",
        "zh": "在贯穿全文的例子里，草稿每个验证步骤提出 γ = 4 个词，每个词被保留的概率为 Σ min(p, q)。"
        "一次验证步骤平均产出多少个词（被保留的草稿，加上目标模型总会补上的那一个词）？",
    },
    answer=lambda: float(expected_tokens(float(acceptance_rate(P, Q)), 4)),
    hints=[
        {
            "en": "The step emits k + 1 tokens when the first k drafts are kept and the next is rejected "
            "(or all 4 are kept: 5 tokens).",
            "zh": "前 k 个草稿被保留、第 k + 1 个被拒绝时，这一步产出 k + 1 个词（4 个全被保留时产出 5 个）。",
        },
        {
            "en": "Summing gives (1 − α^(γ+1)) / (1 − α) with α = Σ min(p, q); sv.expected_tokens computes it.",
            "zh": "求和得到 (1 − α^(γ+1)) / (1 − α)，其中 α = Σ min(p, q)；sv.expected_tokens 可以直接算。",
        },
    ],
    solution="answer = sv.expected_tokens(sv.acceptance_rate(sv.TUTORIAL_P, sv.TUTORIAL_Q), 4)",
    wrong=[3.2, 4.2, 5],  # 3.2: 4 α; 4.2: 4 α + 1; 5: every draft kept
)

number_exercise(
    "6.2",
    "06",
    {
        "en": "Keep the target p = (0.6, 0.3, 0.1) and take the draft q = (0.2, 0.2, 0.6). "
        "What is P(out = dog ∧ reject), the probability that dog is produced by the repair?",
        "zh": "目标仍为 p = (0.6, 0.3, 0.1)，草稿换成 q = (0.2, 0.2, 0.6)。"
        "P(out = dog ∧ 拒绝)，即 dog 由修复步骤产出的概率，是多少？",
    },
    answer=lambda: float(joint(P, Q6).reject[1]),
    hints=[
        {
            "en": "Step 3b of the proof: the reject part of a token is its shortfall (p − q)⁺.",
            "zh": "证明的第 3b 步：一个词的拒绝部分就是它的缺口 (p − q)⁺。",
        },
        {
            "en": "Do not stop at p'(dog): multiply it by P(reject) = Z, which gives the shortfall back.",
            "zh": "别停在 p'(dog)：还要乘以 P(拒绝) = Z，结果正好回到缺口本身。",
        },
    ],
    solution="answer = sv.joint(sv.TUTORIAL_P, (0.2, 0.2, 0.6)).reject[1]",
    wrong=[0.2, 0.3, 0.0],  # 0.2: p'(dog); 0.3: p(dog); 0: as if dog could not be repaired
)
