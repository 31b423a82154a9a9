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


def _defer_rfc3987_syntax() -> None:
    """specviz's lazy stand-in for rfc3987_syntax, in place before any test module imports nbformat/jsonschema:
    its ~40 lark grammars cost 3 s of every test process's collection (specviz.widgets.fastload says why).
    The module is loaded from its file, so that importing specviz.widgets (and what it imports) stays a
    test's own business."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "_specviz_fastload", REPO_ROOT / "specviz" / "widgets" / "fastload.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.defer_rfc3987_syntax()


_defer_rfc3987_syntax()
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
    """A TCP port that was free on 127.0.0.1 a moment ago, below Linux's ephemeral range (32768-60999).

    A port the kernel hands out for bind(0) comes from the ephemeral range, where the next outgoing connection
    (Chromium's, another worker's) may take it before the server binds it: a server started with
    port_retries=0 then fails ("port ... is already in use", seen once in CI). Below that range only another
    listener can take it."""
    import random

    rng = random.Random()
    for _ in range(200):
        port = rng.randrange(20000, 32000)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
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
    "test_lm_tree_sessions.py",  # the bundled pair's tree rows against uncached forwards (test-floor runs it too)
}


# Under pytest-xdist (`make test` runs `-n auto --dist loadfile --no-loadscope-reorder`) each file runs
# on one worker, so a module's fixtures (a loaded model, a server) are built once, and the files that drive
# Chromium run one after another on one worker: two browsers and two Jupyter servers at once on two cores
# made a page's widgets time out. The notebook runs start first (the longest job), the browser files on the
# other worker; the book's test (test_site.py) ends the browser files, when the notebooks it shows have run
# (first in that unit, it waited on the cache's lock while its worker sat idle; last in the whole run, it
# was the only test left for its last ~80 s, with one core idle). (pytest-xdist 3.8's `loadgroup` cannot
# group this under pytest 9.2: it renames `item._nodeid`, which pytest 9.2 no longer reads.)
LAST_FILES = ("test_site.py",)
BROWSER_FILES = {
    "test_accessibility.py",
    "test_browser.py",
    "test_browser_i18n.py",
    "test_slides.py",
    "test_packaging.py",
    *LAST_FILES,
}
FIRST_FILES = ("test_notebooks.py", *sorted(BROWSER_FILES - set(LAST_FILES)))


def work_unit(nodeid: str) -> str:
    """The tests that run together on one xdist worker: a file, or all of BROWSER_FILES.

    >>> work_unit("tests/test_slides.py::test_deck"), work_unit("tests/test_cli.py::test_x[a::b]")
    ('browser', 'tests/test_cli.py')
    """
    path = nodeid.split("::", 1)[0]
    return "browser" if Path(path).name in BROWSER_FILES else path


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    from xdist.scheduler import LoadScopeScheduling

    class ByWorkUnit(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            return work_unit(nodeid)

    return ByWorkUnit(config, log)


@pytest.fixture(scope="session")
def notebook_jobs() -> int:
    """Notebooks executed at once by tools/book.py: 2, or 1 per xdist worker (the other has the other core)."""
    return 1 if os.environ.get("PYTEST_XDIST_WORKER") else 2


def pytest_configure(config):
    if os.environ.get("PYTEST_XDIST_WORKER"):  # one worker per core: one thread each
        for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[name] = "1"


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.name in SLOW_FILES or item.get_closest_marker("browser"):  # a browser is never fast
            item.add_marker(pytest.mark.slow)
    rank = {name: i for i, name in enumerate(FIRST_FILES)}
    rank.update({name: len(FIRST_FILES) + 1 + i for i, name in enumerate(LAST_FILES)})
    items.sort(key=lambda item: rank.get(item.path.name, len(FIRST_FILES)))  # stable: the rest keep their order
