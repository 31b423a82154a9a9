"""Shared test helpers. Keep this small; add fixtures as the suite grows.

Browser tests drive Debian's Chromium (``/usr/bin/chromium``, or $SPECVIZ_CHROMIUM)
through Playwright; Playwright's own browser download does not work here. Without a
Chromium they skip locally, but fail under CI=true.
"""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")

# Flags Chromium needs on this closed network (without them it stalls).
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


def find_chromium() -> str | None:
    candidates = [os.environ.get("SPECVIZ_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium")]
    for path in candidates:
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def free_port() -> int:
    """A TCP port that was free on 127.0.0.1 a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def chromium_executable() -> str:
    """Path to Chromium; skips without one, except under CI=true where it fails."""
    path = find_chromium()
    if path is None:
        message = "no Chromium at /usr/bin/chromium (install: make chromium, or apt-get install chromium)"
        if IN_CI:
            pytest.fail(message + " -- required under CI=true")
        pytest.skip(message)
    return path


@pytest.fixture
def browser_context(chromium_executable, tmp_path):
    """A Playwright persistent Chromium context with a fresh profile."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"),
            executable_path=chromium_executable,
            args=CHROMIUM_ARGS,
            headless=True,
        )
        try:
            yield context
        finally:
            context.close()


# The fast lane (`make test-fast`, pytest -m "not slow") leaves out whole files whose tests load real
# models, run statistical checks on the real-model engine, or start servers and browsers.
SLOW_FILES = {
    "test_browser.py",  # Chromium + Voila / JupyterLab servers
    "test_lm_smollm2.py",  # a 135 M-parameter model
    "test_lm_compat.py",  # transformers' generate on three model pairs
    "test_lm_bundled.py",  # the bundled pair: loading, greedy equality, exact two-token distribution
    "test_lm_static_cache.py",  # StaticCache sessions, one torch.compile
    "test_lm_prompt_lookup.py",  # 20,000 speculative runs against exact enumeration
    "test_lm_live.py",  # the live view generating on the bundled pair
    "test_lm_engine.py",  # chi-square tests over thousands of generations
}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.name in SLOW_FILES:
            item.add_marker(pytest.mark.slow)
