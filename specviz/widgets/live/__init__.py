"""The live views of real models: `live_app` (`LiveApp`, a draft/target pair) and `vllm_live_app` (`VLLMLiveApp`).

One module per part, and `LiveApp` (`app`) holds its parts: `controls` (the inputs) with
`settings` (their ranges, their widgets, the one `GenerationSettings` a click builds),
`pair_info` and `models` (the model choice), `view` (the outputs) with `render` (their HTML and
figure patches), `closeup` (one token's p and q) and `tree_panel` (a tree run's verify steps, each
step's tree), `jobs` (background jobs, Stop), `loading` (the pair, the prompt), `runs` (what the
buttons run) and `sweep` (the runs as plain functions).
`vllm` is a vLLM server's counters. The four names load on first use, so `vllm_live_app`
imports no torch.
"""


def __getattr__(name: str):
    """`LiveApp`, `live_app`, `VLLMLiveApp` and `vllm_live_app`, imported when first asked for."""
    if name in ("LiveApp", "live_app"):
        from . import app

        return getattr(app, name)
    if name in ("VLLMLiveApp", "vllm_live_app"):
        from . import vllm

        return getattr(vllm, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["LiveApp", "VLLMLiveApp", "live_app", "vllm_live_app"]
