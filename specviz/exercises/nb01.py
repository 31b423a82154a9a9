"""Exercises of tutorial 1 (why lossless, and the notation)."""

from ..examples import TUTORIAL_P, TUTORIAL_Q
from .core import number_exercise

P, Q = TUTORIAL_P, TUTORIAL_Q  # target p and draft q of the running example (cat, dog, fish)

number_exercise(
    "1.1",
    "01",
    {
        "en": "By how much does the draft over-propose dog in the running example: q(dog) − p(dog)？",
        "zh": "在贯穿全文的例子里，草稿模型给 dog 多给了多少概率：q(dog) − p(dog)？",
    },
    answer=lambda: Q[1] - P[1],
    hints=[
        {
            "en": "dog is the second token of the vocabulary (cat, dog, fish).",
            "zh": "dog 是词表 (cat, dog, fish) 中的第二个词。",
        },
        {"en": "Subtract the target's probability from the draft's.", "zh": "用草稿的概率减去目标模型的概率。"},
    ],
    solution="answer = sv.TUTORIAL_Q[1] - sv.TUTORIAL_P[1]",
    wrong=[-0.2, 0.5],
)
