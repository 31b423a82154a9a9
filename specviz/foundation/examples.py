"""The source tutorial's running example, in one place: three tokens, a target p and a draft q.

>>> dict(zip(TUTORIAL_VOCAB, TUTORIAL_P))
{'cat': 0.6, 'dog': 0.3, 'fish': 0.1}
"""

TUTORIAL_VOCAB = ("cat", "dog", "fish")
TUTORIAL_P = (0.6, 0.3, 0.1)  # target
TUTORIAL_Q = (0.4, 0.5, 0.1)  # draft

__all__ = ["TUTORIAL_P", "TUTORIAL_Q", "TUTORIAL_VOCAB"]
