"""Demo prompts, one per kind of task: what the live view opens with and what bench_prompt_lookup measures.

Prompt lookup drafts by copying what followed the same words earlier in the context, so its
gain depends on the task: a rewrite or an edit repeats most of its input, free text repeats
almost nothing. The live view opens the bundled pair with `SHAKESPEARE_PROMPT` and an
instruct model (a catalogue model with prompt lookup) with the rewrite `TASK_PROMPTS[LOOKUP_TASK]`,
and `benchmarks/bench_prompt_lookup.py` times the same texts, so the speed-up a first Generate
shows is the one the benchmark reports for that kind of prompt. Plain strings, no torch.

>>> sorted(TASK_PROMPTS)
['code', 'copy', 'edit', 'explanation', 'free text']
>>> TASK_PROMPTS[LOOKUP_TASK].splitlines()[0]
'Rewrite the following paragraph in the present tense. Change nothing else.'
"""

from __future__ import annotations

PARAGRAPH = (
    "The lighthouse stood on a narrow spit of rock at the mouth of the harbour. Every evening the keeper "
    "climbed the one hundred and twelve steps, trimmed the wick, wound the clockwork that turned the lens, "
    "and wrote the weather in a leather-bound log. Ships passed in the dark without ever seeing him, "
    "guided only by the steady white flash that swept the water every ten seconds."
)
"""The paragraph the copy and edit prompts work on."""

CODE = """def mean(xs):
    total = 0
    for x in xs:
        total += x
    return total / len(xs)


def variance(xs):
    m = mean(xs)
    return sum((x - m) ** 2 for x in xs) / len(xs)
"""
"""The code the docstring prompt works on."""

TASK_PROMPTS = {
    "copy": "Repeat the following paragraph word for word, and write nothing else.\n\n" + PARAGRAPH,
    "edit": "Rewrite the following paragraph in the present tense. Change nothing else.\n\n" + PARAGRAPH,
    "code": "Add a one-line docstring to each function below. Return the whole code.\n\n" + CODE,
    "free text": "Write a short story about a lighthouse keeper who finds a message in a bottle.",
    "explanation": "Explain in a few sentences why the sky is blue.",
}
"""An instruct model's prompts by task (read through its chat template)."""

SHAKESPEARE_PROMPT = "ROMEO:\n"
"""The bundled pair's prompt: it was trained on Shakespeare's plays."""

LOOKUP_TASK = "edit"
"""The task a prompt-lookup pair opens with: a rewrite keeps most of its input, so drafts are often right."""


__all__ = ["CODE", "LOOKUP_TASK", "PARAGRAPH", "SHAKESPEARE_PROMPT", "TASK_PROMPTS"]
