"""Where a model runs: the device, the dtype, and a device map that splits a model over GPUs.

Each is checked before any weights are read, with an error that says what to give instead.

>>> pick_device("cpu"), parse_dtype("bf16")
('cpu', torch.bfloat16)
>>> parse_dtype("int8")
Traceback (most recent call last):
...
ValueError: unknown dtype 'int8': use None, 'auto', 'float32', 'float16' or 'bfloat16' (or a torch dtype)
"""

from __future__ import annotations

import torch

DTYPES = {
    "float32": torch.float32,
    "fp32": torch.float32,
    "float": torch.float32,
    "float16": torch.float16,
    "fp16": torch.float16,
    "half": torch.float16,
    "bfloat16": torch.bfloat16,
    "bf16": torch.bfloat16,
}
DEVICE_TYPES = ("cpu", "cuda", "mps", "xpu")
DEVICE_MAP_STRATEGIES = ("auto", "balanced", "balanced_low_0", "sequential")


def pick_device(device: str | torch.device | None = "auto") -> str:
    """'auto' -> 'cuda' when torch sees a GPU, else 'cpu'; anything else is checked and returned."""
    if device is None or (isinstance(device, str) and device == "auto"):
        return "cuda" if torch.cuda.is_available() else "cpu"
    if not isinstance(device, (str, torch.device)):
        raise TypeError(
            f"device must be a string such as 'cpu' or 'cuda:0' (or a torch.device), got {type(device).__name__}"
        )
    try:
        dev = torch.device(device)
    except (RuntimeError, ValueError):
        raise ValueError(f"unknown device {str(device)!r}: use 'auto', 'cpu', 'cuda' or 'cuda:N'") from None
    if dev.type not in DEVICE_TYPES:
        raise ValueError(f"unknown device {str(device)!r}: use 'auto', 'cpu', 'cuda' or 'cuda:N'")
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"device {str(device)!r} requested but torch sees no CUDA GPU; use 'cpu' or 'auto'")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise ValueError(f"device {str(device)!r} requested but torch sees {torch.cuda.device_count()} CUDA GPU(s)")
    if dev.type == "mps" and not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
        raise ValueError(f"device {str(device)!r} requested but torch has no MPS backend here; use 'cpu'")
    return str(dev)


def parse_dtype(dtype: str | torch.dtype | None) -> torch.dtype | str | None:
    """None, 'auto', a torch.dtype or a name ('float32', 'fp16', 'bf16', …) -> what from_pretrained takes."""
    if dtype is None or (isinstance(dtype, str) and dtype == "auto"):
        return dtype
    if isinstance(dtype, torch.dtype):
        if not dtype.is_floating_point:
            raise ValueError(f"dtype {dtype} is not a floating-point type: use float32, float16 or bfloat16")
        return dtype
    if isinstance(dtype, str) and dtype.lower().removeprefix("torch.") in DTYPES:
        return DTYPES[dtype.lower().removeprefix("torch.")]
    raise ValueError(
        f"unknown dtype {dtype!r}: use None, 'auto', 'float32', 'float16' or 'bfloat16' (or a torch dtype)"
    )


def check_device_map(device_map: object, name: str = "device_map") -> str | dict | None:
    """None, an accelerate strategy ('auto', 'balanced', …) or a {module name: device} dict, checked.

    Devices in a dict are GPU indices, 'cpu' or device strings ('cuda:1'); each is checked like
    `pick_device`. 'disk' offload needs an offload folder that `load_pair` does not take.

    >>> check_device_map({"": "cpu"})
    {'': 'cpu'}
    >>> check_device_map("everywhere")
    Traceback (most recent call last):
    ...
    ValueError: unknown device_map 'everywhere': use 'auto', 'balanced', 'balanced_low_0', 'sequential' or a {module name: device} dict
    """
    if device_map is None:
        return None
    if isinstance(device_map, str):
        if device_map not in DEVICE_MAP_STRATEGIES:
            raise ValueError(
                f"unknown {name} {device_map!r}: use {', '.join(map(repr, DEVICE_MAP_STRATEGIES[:-1]))}, "
                f"{DEVICE_MAP_STRATEGIES[-1]!r} or a {{module name: device}} dict"
            )
        return device_map
    if not isinstance(device_map, dict) or not device_map:
        raise TypeError(f"{name} must be a strategy such as 'auto' or a non-empty {{module name: device}} dict")
    out = {}
    for module, dev in device_map.items():
        if not isinstance(module, str):
            raise TypeError(f"{name} keys must be module names (str), got {module!r}")
        if isinstance(dev, bool) or not isinstance(dev, (int, str, torch.device)):
            raise TypeError(f"{name}[{module!r}] must be a GPU index, 'cpu' or a device string, got {dev!r}")
        if isinstance(dev, int):
            if dev < 0:
                raise ValueError(f"{name}[{module!r}] = {dev}: a GPU index is >= 0")
            pick_device(f"cuda:{dev}")
        elif str(dev) in ("disk", "meta"):
            raise ValueError(
                f"{name}[{module!r}] = {str(dev)!r}: offloading to {str(dev)} is not supported here; map modules "
                "to GPUs or 'cpu' (accelerate then keeps them in CPU memory and runs them on the main GPU)"
            )
        else:
            pick_device(dev)
        out[module] = dev
    return out


def describe_device_map(model) -> str:
    """'device map: cuda:0 (12 modules), cuda:1 (11 modules)' for a split model, else its one device."""
    from ..engine.models import main_device, split_device_map

    dm = split_device_map(model)
    if not dm:
        return str(main_device(model))
    counts: dict = {}
    for dev in dm.values():
        key = f"cuda:{dev}" if isinstance(dev, int) else str(dev)
        counts[key] = counts.get(key, 0) + 1
    return "device map: " + ", ".join(f"{d} ({n} module{'s' if n > 1 else ''})" for d, n in counts.items())


__all__ = [
    "DEVICE_MAP_STRATEGIES",
    "DEVICE_TYPES",
    "DTYPES",
    "check_device_map",
    "describe_device_map",
    "parse_dtype",
    "pick_device",
]
