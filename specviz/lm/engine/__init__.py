"""The speculative engine: the step loop, model sessions and caches, logits, settings and results."""
