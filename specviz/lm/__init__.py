"""Real draft/target language models: loading, the speculative engine, and its statistics.

>>> from specviz.lm import NGramModel, Pair, speculative_generate
>>> pair = Pair(NGramModel.random(4, seed=0), NGramModel.random(4, seed=1))
>>> len(speculative_generate(pair, [0], max_new_tokens=5, seed=0).new_ids)
5

Seven rooms, in the order a run uses them: `load` (a model named, fetched, checked, placed),
`engine` (the step loop, sessions, logits, settings, results), `drafts` (the draft kinds behind one
interface), `trees` (tree attention, the tree verifier, each step's shape), `gamma` (how many tokens
a step drafts), `stats` (what a run measured) and `serve` (a vLLM server's counters).

The names below load on first use, so the modules that never touch torch (`stats.stats`,
`serve.vllm`, `gamma.payoff`, `engine.results`, `stats.fates`, `load.catalog`, `engine.pair`,
`engine.settings`, `engine.inputs`, ...) import on the plain `pip install specviz`; a name that needs
torch, asked for without it, raises an ImportError naming the `[lm]` extra.
"""

from importlib import import_module

LM_EXTRA = "specviz.lm needs the [lm] extra (torch, transformers, ...): pip install 'specviz[lm]'"
"""The one-line message for a missing torch (or transformers)."""

HOMES = {  # public name -> the module of specviz.lm that defines it
    **dict.fromkeys(("SpeculativeEngine", "autoregressive_generate", "speculative_generate"), "engine.loop"),
    **dict.fromkeys(("NonFiniteLogitsError", "process_logits", "process_probs"), "engine.logits"),
    **dict.fromkeys(("GenerationResult", "StepRecord"), "engine.results"),
    **dict.fromkeys(("BUNDLED_DIR", "load_pair"), "load.loading"),
    "pick_device": "load.devices",
    **dict.fromkeys(("Pair", "format_prompt"), "engine.pair"),
    "GenerationSettings": "engine.settings",
    **dict.fromkeys(("HFModel", "LanguageModel", "NGramModel", "Session"), "engine.models"),
    "payoff_table": "gamma.payoff",
    "PromptLookupModel": "drafts.prompt_lookup",
    "compare": "stats.run",
    "StaticHFModel": "engine.static_cache",
    **dict.fromkeys(("SpecStats", "spec_stats"), "stats.stats"),
    "SpecCounters": "serve.vllm_counters",
    **dict.fromkeys(("parse_vllm_metrics", "read_vllm_metrics"), "serve.vllm"),
}
NEEDS_TORCH = ("torch", "transformers")
"""The packages of the [lm] extra whose absence `LM_EXTRA` names."""


def __getattr__(name: str):
    """Load a public name from its module on first use (PEP 562)."""
    home = HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        module = import_module(f"{__name__}.{home}")
    except ImportError as e:
        if (e.name or "").split(".")[0] in NEEDS_TORCH:
            raise ImportError(LM_EXTRA, name=e.name) from e
        raise
    value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list:
    return sorted(set(globals()) | set(HOMES))


__all__ = [
    "GenerationResult",
    "NonFiniteLogitsError",
    "SpeculativeEngine",
    "StepRecord",
    "autoregressive_generate",
    "process_logits",
    "process_probs",
    "speculative_generate",
    "BUNDLED_DIR",
    "GenerationSettings",
    "Pair",
    "format_prompt",
    "load_pair",
    "pick_device",
    "HFModel",
    "LanguageModel",
    "NGramModel",
    "Session",
    "payoff_table",
    "PromptLookupModel",
    "compare",
    "SpecStats",
    "spec_stats",
    "StaticHFModel",
    "SpecCounters",
    "parse_vllm_metrics",
    "read_vllm_metrics",
]
