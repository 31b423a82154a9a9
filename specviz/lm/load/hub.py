"""The Hugging Face hub from here: offline or not, a hub id in the local cache, the hub's host reachable, progress bars.

Nothing here downloads: `load_pair` asks these questions before it reads a hub id, so an id
that is neither cached nor reachable fails within seconds instead of after a long retry.
No torch at import.

>>> hub_cached("specviz-tests/no-such-model")  # the local cache only, never the network
False
"""

from __future__ import annotations

import contextlib
import functools
import os
import socket
import sys
import threading
from typing import TYPE_CHECKING
from urllib.parse import urlparse

if TYPE_CHECKING:
    from collections.abc import Iterator

HUB_PROBE_TIMEOUT_S = 3.0  # how long to wait for the hub's host before calling a hub id unreachable


def _env_true(name: str) -> bool:
    return os.environ.get(name, "").strip().upper() in ("1", "ON", "YES", "TRUE")


def hub_offline() -> bool:
    """True when HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE) says not to use the network."""
    if _env_true("HF_HUB_OFFLINE") or _env_true("TRANSFORMERS_OFFLINE"):
        return True
    try:
        from huggingface_hub import constants

        return bool(constants.HF_HUB_OFFLINE)
    except (ImportError, AttributeError):
        return False


def hub_cached(repo_id: str) -> bool:
    """True when the local Hugging Face cache holds `repo_id`'s config.json (no network)."""
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(repo_id, "config.json")
    except Exception:  # a malformed id or an old huggingface_hub: treat as not cached
        return False
    return isinstance(found, (str, os.PathLike))


def probe_hub(timeout: float = HUB_PROBE_TIMEOUT_S) -> str | None:
    """None if the hub's host accepts a TCP connection within `timeout` seconds, else why not.

    The connection (name lookup included) runs in a daemon thread, so a stalled DNS
    lookup cannot hold the caller longer than `timeout`.
    """
    try:
        from huggingface_hub import constants

        endpoint = constants.ENDPOINT
    except (ImportError, AttributeError):
        endpoint = "https://huggingface.co"
    url = urlparse(endpoint)
    host, port = url.hostname or "huggingface.co", url.port or (80 if url.scheme == "http" else 443)
    outcome = {}

    def connect():
        try:
            socket.create_connection((host, port), timeout=timeout).close()
            outcome["ok"] = True
        except BaseException as e:  # noqa: BLE001 - any failure means "unreachable"
            outcome["error"] = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__

    worker = threading.Thread(target=connect, daemon=True, name="specviz-hub-probe")
    worker.start()
    worker.join(timeout + 0.5)
    if outcome.get("ok"):
        return None
    return f"{host}:{port} unreachable ({outcome.get('error', f'no answer in {timeout:g} s')})"


@contextlib.contextmanager
def hf_progress_bars(enabled: bool) -> Iterator[None]:
    """Show or hide transformers' and huggingface_hub's progress bars inside the block; restore them after."""
    try:
        from huggingface_hub import utils as hub_utils
        from transformers.utils import logging as hf_logging
    except ImportError:  # pragma: no cover - transformers is a dependency
        yield
        return
    was_tf = hf_logging.is_progress_bar_enabled()
    was_hub_off = hub_utils.are_progress_bars_disabled()
    (hf_logging.enable_progress_bar if enabled else hf_logging.disable_progress_bar)()
    # transformers' GGUF loader (modeling_gguf_pytorch_utils, 4.4x-5.x) uses tqdm directly, outside that switch
    gguf_utils = sys.modules.get("transformers.modeling_gguf_pytorch_utils")
    if gguf_utils is None and not enabled:
        try:
            import transformers.modeling_gguf_pytorch_utils as gguf_utils
        except ImportError:
            gguf_utils = None
    gguf_tqdm = getattr(gguf_utils, "tqdm", None)
    if gguf_tqdm is not None and not enabled:
        gguf_utils.tqdm = functools.partial(gguf_tqdm, disable=True)
    try:
        yield
    finally:
        if gguf_tqdm is not None:
            gguf_utils.tqdm = gguf_tqdm
        (hf_logging.enable_progress_bar if was_tf else hf_logging.disable_progress_bar)()
        (hub_utils.disable_progress_bars if was_hub_off else hub_utils.enable_progress_bars)()


__all__ = ["HUB_PROBE_TIMEOUT_S", "hf_progress_bars", "hub_cached", "hub_offline", "probe_hub"]
