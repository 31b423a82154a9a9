"""Real draft/target language models: loading, the speculative engine, and its statistics.

>>> from specviz.lm import NGramModel, Pair, speculative_generate
>>> pair = Pair(NGramModel.random(4, seed=0), NGramModel.random(4, seed=1))
>>> len(speculative_generate(pair, [0], max_new_tokens=5, seed=0).new_ids)
5
"""

try:
    import torch  # noqa: F401
except ImportError as e:  # the light install: `pip install specviz` has no torch
    raise ImportError("specviz.lm needs the [lm] extra (torch, transformers, ...): pip install 'specviz[lm]'") from e

from .engine import (
    GenerationResult,
    NonFiniteLogitsError,
    SpeculativeEngine,
    StepRecord,
    autoregressive_generate,
    process_logits,
    process_probs,
    speculative_generate,
)
from .loading import BUNDLED_DIR, Pair, format_prompt, load_pair, pick_device
from .models import HFModel, LanguageModel, NGramModel, Session
from .payoff import payoff_table
from .prompt_lookup import PromptLookupModel
from .run import compare
from .static_cache import StaticHFModel
from .stats import SpecStats, spec_stats
from .vllm import SpecCounters, parse_vllm_metrics, read_vllm_metrics

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
