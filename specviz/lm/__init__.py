"""Real draft/target language models: loading, the speculative engine, and its statistics.

>>> from specviz.lm import NGramModel, Pair, speculative_generate
>>> pair = Pair(NGramModel.random(4, seed=0), NGramModel.random(4, seed=1))
>>> len(speculative_generate(pair, [0], max_new_tokens=5, seed=0).new_ids)
5
"""

from .engine import (GenerationResult, SpeculativeEngine, StepRecord, autoregressive_generate, process_logits,
                     speculative_generate)
from .loading import BUNDLED_DIR, Pair, load_pair, pick_device
from .models import HFModel, LanguageModel, NGramModel, Session

__all__ = ["GenerationResult", "SpeculativeEngine", "StepRecord", "autoregressive_generate", "process_logits",
           "speculative_generate", "BUNDLED_DIR", "Pair", "load_pair", "pick_device", "HFModel", "LanguageModel",
           "NGramModel", "Session"]
