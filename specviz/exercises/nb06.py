"""Exercises of tutorial 6 (worked examples: the full table, a perfect draft and a hopeless one).

The answers are hand fractions, computed here with `Fraction` arithmetic from the pair's digits
(independently of `specviz.exact.gamma` and `specviz.exact.rules`; tests/test_exercises.py checks that they agree).
"""

from fractions import Fraction

from .core import number_exercise

P = (Fraction("0.6"), Fraction("0.3"), Fraction("0.1"))  # the running target p (cat, dog, fish), exact
Q = (Fraction("0.4"), Fraction("0.5"), Fraction("0.1"))  # the running draft q, exact
Q6 = (Fraction("0.2"), Fraction("0.2"), Fraction("0.6"))  # another draft for the running target, exercise 6.2
GAMMA = 3  # drafts per verify step in exercise 6.1 (the notebook's table uses 4)


def answer_6_1() -> Fraction:
    """Expected tokens per verify step: 1 + α + … + α^γ, with α = Σ min(p, q) and γ = GAMMA."""
    alpha = sum(min(pi, qi) for pi, qi in zip(P, Q))
    return sum(alpha**k for k in range(GAMMA + 1))


def answer_6_2() -> Fraction:
    """P(out = dog ∧ reject) for the draft Q6: P(reject) · p'(dog) = (p(dog) − q(dog))⁺."""
    shortfall = [max(pi - qi, Fraction(0)) for pi, qi in zip(P, Q6)]
    p_reject = 1 - sum(min(pi, qi) for pi, qi in zip(P, Q6))
    return p_reject * shortfall[1] / sum(shortfall)


number_exercise(
    "6.1",
    "06",
    {
        "en": "The draft of the running example now proposes γ = 3 tokens per verify step (the table in the "
        "notebook used 4), each kept with probability Σ min(p, q). How many tokens does one verify step produce "
        "on average (kept drafts plus the one token the target always adds)? (Checked to within 1e-6.)",
        "zh": "在贯穿全文的例子里，草稿现在每个验证步骤提出 γ = 3 个 token（教程里的表格用的是 4），"
        "每个 token 被保留的概率为 Σ min(p, q)。一次验证步骤平均产出多少个 token"
        "（被保留的草稿，加上目标模型总会补上的那一个 token）？（误差不超过 1e-6 即算对。）",
    },
    answer=lambda: float(answer_6_1()),
    hints=[
        {
            "en": "The step emits k + 1 tokens when the first k drafts are kept and the next is rejected "
            "(or all 3 are kept: 4 tokens).",
            "zh": "前 k 个草稿被保留、第 k + 1 个被拒绝时，这一步产出 k + 1 个 token（3 个全被保留时产出 4 个）。",
        },
        {
            "en": "Summing gives 1 + α + α² + α³ = (1 − α^(γ+1)) / (1 − α) with α = Σ min(p, q); "
            "sv.expected_tokens computes it.",
            "zh": "求和得到 1 + α + α² + α³ = (1 − α^(γ+1)) / (1 − α)，其中 α = Σ min(p, q)；"
            "sv.expected_tokens 可以直接算。",
        },
    ],
    solution="answer = sv.expected_tokens(sv.acceptance_rate(sv.TUTORIAL_P, sv.TUTORIAL_Q), 3)",
    wrong=[2.4, 3.4, 4, 3.3616],  # 2.4: 3 α; 3.4: 3 α + 1; 4: every draft kept; 3.3616: γ = 4
)

number_exercise(
    "6.2",
    "06",
    {
        "en": "Keep the target p = (0.6, 0.3, 0.1) and take the draft q = (0.2, 0.2, 0.6). "
        "What is P(out = dog ∧ reject), the probability that dog is produced by the repair? "
        "(Checked to within 1e-6.)",
        "zh": "目标仍为 p = (0.6, 0.3, 0.1)，草稿换成 q = (0.2, 0.2, 0.6)。"
        "P(输出 = dog ∧ 拒绝)，即 dog 由修复步骤产出的概率，是多少？（误差不超过 1e-6 即算对。）",
    },
    answer=lambda: float(answer_6_2()),
    hints=[
        {
            "en": "Step 3b of the proof: the reject part of a token is its shortfall (p − q)⁺.",
            "zh": "证明的第 3b 步：一个 token 的拒绝部分就是它的缺口 (p − q)⁺。",
        },
        {
            "en": "Do not stop at p'(dog): multiply it by P(reject) = Z, which gives the shortfall back.",
            "zh": "别停在 p'(dog)：还要乘以 P(拒绝) = Z，结果正好回到缺口本身。",
        },
    ],
    solution="answer = sv.joint(sv.TUTORIAL_P, (0.2, 0.2, 0.6)).reject[1]",
    wrong=[0.2, 0.3, 0.0],  # 0.2: p'(dog); 0.3: p(dog); 0: as if dog could not be repaired
)
