"""specviz: see, and prove by running, why speculative decoding is lossless."""

__version__ = "0.1.0"
