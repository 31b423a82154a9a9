"""test-floor's start-up hook (copied into the overlay folder as sitecustomize.py by `make test-floor`).

The overlay puts transformers 4.52.1 and its lowest dependencies in front of .venv, whose other
packages stay visible. Packages that a newer transformers requires but 4.52.1's users would not
have are hidden here: transformers 4.52.1 imports `kernels` whenever it is installed, and the
`kernels` that transformers >= 5.25 requires needs a newer huggingface_hub than the floor's 0.30.0.
"""

import importlib.util

HIDDEN = frozenset({"kernels"})
_find_spec = importlib.util.find_spec


def find_spec(name, package=None):
    """importlib.util.find_spec, with the HIDDEN packages absent (how transformers asks what is installed)."""
    if name.partition(".")[0] in HIDDEN:
        return None
    return _find_spec(name, package)


importlib.util.find_spec = find_spec
