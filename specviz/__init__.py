"""specviz: see, and prove by running, why speculative decoding is lossless.

p is always the target distribution, q the draft.

>>> import specviz
>>> specviz.output_dist([0.6, 0.3, 0.1], [0.4, 0.5, 0.1], rule="lossless").round(12)
array([0.6, 0.3, 0.1])
"""

__version__ = "0.1.0"
from . import startup  # noqa: F401 - first: in the `specviz` command, Ctrl+C in the imports below is one line
from .display import notebook_setup
from .exact.gamma import accepted_length_dist, best_gamma, cost_model_speedup, expected_tokens, speedup
from .exact.multidraft import children_output_dist, multi_draft_acceptance_rate, multi_draft_output_dist, top_k_children
from .exact.rules import (
    RULES,
    Rule,
    compare_rules,
    get_rule,
    is_lossless,
    joint,
    output_dist,
    register,
    rule_acceptance_rate,
    rule_joint,
)
from .exact.standardize import Sampling, mismatch_output_dist, softmax, standardize, verify_output_dist
from .exact.theory import (
    Joint,
    acceptance_prob,
    acceptance_rate,
    entropy,
    envelope_constant,
    importance_bias_mass,
    importance_weights,
    overlap,
    rejection_acceptance,
    rejection_mass,
    rejection_output_dist,
    resample_dist,
    residual,
    tv_distance,
)
from .foundation.examples import TUTORIAL_P, TUTORIAL_Q, TUTORIAL_VOCAB
from .foundation.validate import as_dist, as_pair, normalize
from .samplers.audit import AuditReport, audit
from .samplers.chain import (
    ChainSample,
    MarkovPair,
    ar_chain_sample,
    random_pair,
    sequence_dist,
    sequence_index,
    spec_chain_sample,
    tutorial_pair,
)
from .samplers.coupling import (
    coupling_acceptance,
    coupling_marginals,
    independent_coupling,
    maximal_coupling,
    random_coupling,
)
from .samplers.sampling import (
    MultiDraftSample,
    SpecSample,
    importance_estimate,
    multi_draft_sample,
    rejection_sample,
    sample_from,
    spec_sample,
)
from .samplers.verifiers import BUGGY_VERIFIERS, correct_verifier


def spec_sample_torch(*args, **kwargs):
    """Torch batch sampler (imported lazily so `import specviz` stays light); see specviz.samplers.torch_sampling."""
    try:
        from .samplers.torch_sampling import spec_sample_torch as f
    except ImportError as e:
        raise ImportError("spec_sample_torch needs torch, in the [lm] extra: pip install 'specviz[lm]'") from e

    return f(*args, **kwargs)


# Widget apps and figure builders import plotly/ipywidgets; load them on first use.
_LAZY = {
    "figures": ("specviz.figures", None),
    "exercises": ("specviz.exercises", None),
    "widgets": ("specviz.widgets", None),
    "money_diagram_app": ("specviz.widgets", "money_diagram_app"),
    "monte_carlo_app": ("specviz.widgets", "monte_carlo_app"),
    "pitfall_app": ("specviz.widgets", "pitfall_app"),
    "predict": ("specviz.widgets", "predict"),
    "gamma_app": ("specviz.widgets", "gamma_app"),
    "multidraft_app": ("specviz.widgets", "multidraft_app"),
    "draft_tree_app": ("specviz.widgets", "draft_tree_app"),
    "standardization_app": ("specviz.widgets", "standardization_app"),
    "numerics_app": ("specviz.widgets", "numerics_app"),
    "dashboard_app": ("specviz.widgets", "dashboard_app"),
    "money_diagram": ("specviz.figures", "money_diagram"),
    "export_figure": ("specviz.figures.export", "export_figure"),
}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        mod = importlib.import_module(module)
        return mod if attr is None else getattr(mod, attr)
    raise AttributeError(f"module 'specviz' has no attribute {name!r}")


__all__ = [  # the public API (the lazy UI names load plotly/ipywidgets on first use)
    "__version__",
    "AuditReport",
    "audit",
    "ChainSample",
    "MarkovPair",
    "ar_chain_sample",
    "random_pair",
    "sequence_dist",
    "sequence_index",
    "spec_chain_sample",
    "tutorial_pair",
    "coupling_acceptance",
    "coupling_marginals",
    "independent_coupling",
    "maximal_coupling",
    "random_coupling",
    "accepted_length_dist",
    "best_gamma",
    "cost_model_speedup",
    "expected_tokens",
    "speedup",
    "multi_draft_acceptance_rate",
    "multi_draft_output_dist",
    "children_output_dist",
    "top_k_children",
    "RULES",
    "Rule",
    "compare_rules",
    "get_rule",
    "is_lossless",
    "joint",
    "output_dist",
    "register",
    "rule_acceptance_rate",
    "rule_joint",
    "MultiDraftSample",
    "SpecSample",
    "importance_estimate",
    "multi_draft_sample",
    "rejection_sample",
    "sample_from",
    "spec_sample",
    "Sampling",
    "mismatch_output_dist",
    "softmax",
    "standardize",
    "verify_output_dist",
    "Joint",
    "acceptance_prob",
    "acceptance_rate",
    "entropy",
    "envelope_constant",
    "importance_bias_mass",
    "importance_weights",
    "overlap",
    "rejection_acceptance",
    "rejection_mass",
    "rejection_output_dist",
    "resample_dist",
    "residual",
    "tv_distance",
    "as_dist",
    "as_pair",
    "normalize",
    "BUGGY_VERIFIERS",
    "correct_verifier",
    "TUTORIAL_P",
    "TUTORIAL_Q",
    "TUTORIAL_VOCAB",
    "spec_sample_torch",
    "notebook_setup",
    "exercises",
    "figures",
    "widgets",
    "money_diagram_app",
    "monte_carlo_app",
    "pitfall_app",
    "predict",
    "gamma_app",
    "multidraft_app",
    "draft_tree_app",
    "standardization_app",
    "numerics_app",
    "dashboard_app",
    "money_diagram",
    "export_figure",
]
