"""A running vLLM server: its Prometheus counters read over HTTP."""
