"""Real-browser tests: the Voila dashboard and a tutorial notebook in JupyterLab.

Playwright drives Debian's Chromium (see conftest.py: skipped without one locally,
failing under CI=true). One Voila server and one dashboard page are shared by the
Voila tests, which run in file order on that page (loading it costs 10-30 s on a busy
2-core machine); each test leaves the dashboard in a state the next can start from
and checks that no page errors happened during its own actions.

What is checked: the page loads without page errors; moving the ``p(cat)`` slider with
the keyboard redraws the money diagram so that its overlap and residual traces equal
min(p, q) and (p - q)+ of the values the sliders *show*; a preset; the bars glide
to new values (a plotly.js transition with intermediate heights); the three-step
reveal; the Monte-Carlo tab's Run; JupyterLab and Notebook 7 each run a tutorial
notebook and render its widgets.

Screenshots go to a temporary folder (printed at the end of the session), or to
$SPECVIZ_SCREENSHOTS if set. With $SPECVIZ_README_SCREENSHOTS=docs/screenshots the few
shots used by the README are (re)written there too; a normal run writes nothing in the
repository.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
import warnings
from collections.abc import Iterable
from pathlib import Path

import pytest
from conftest import CHROMIUM_ARGS, REPO_ROOT, free_port


def browser_test(fn):
    """Marks a test that drives Chromium (and starts servers)."""
    return pytest.mark.browser(pytest.mark.slow(fn))


DASHBOARD = REPO_ROOT / "notebooks" / "dashboard.ipynb"
LAB_NOTEBOOK = REPO_ROOT / "notebooks" / "05_the_proof_in_three_steps.ipynb"
NB7_NOTEBOOK = REPO_ROOT / "notebooks" / "07_pitfalls.ipynb"  # opened in Notebook 7 (same server)
# Page errors that Notebook 7.6.5's own bundle (static/notebook/notebook_core.*.js) throws on
# jupyterlab 4.6.6 with no specviz and no other extension installed (reproduced in a venv holding
# only `notebook`): its shortcuts plugin reads the settings schema of a plugin the registry has
# not loaded; and, after a JupyterLab page in the same browser profile, it calls the file
# browser's command, which its notebook page does not have. Only these exact messages pass.
NOTEBOOK7_KNOWN_ERRORS = (
    "Cannot read properties of undefined (reading 'schema')",
    "Command 'filebrowser:open-path' not registered.",
)

# Generous: on a loaded 2-core machine the first plot took 16-30 s.
SERVER_START_S = 90
FIRST_PLOT_MS = 180_000
ACTION_MS = 60_000
# The figure must use exactly the values the sliders show (the editor keeps p and q on
# the grid of its readout), so this only absorbs float arithmetic, not display rounding.
ATOL = 1e-6

VIEWPORT = {"width": 1280, "height": 900}


# ----------------------------------------------------------------------------- servers


class Server:
    """A server subprocess (own process group) with its log file."""

    def __init__(self, name: str, cmd: list[str], cwd: Path, log_dir: Path, env: dict | None = None):
        self.name, self.cmd = name, cmd
        self.log_path = log_dir / f"{name}.log"
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            cmd, cwd=str(cwd), stdout=self._log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )

    def log_tail(self, n: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-n:]
        except OSError:
            return ""

    def wait_http(self, url: str, timeout: float = SERVER_START_S) -> None:
        """Wait until `url` answers (any HTTP status means the server is up)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"{self.name} exited with status {self.proc.returncode}:\n{self.log_tail()}")
            try:
                urllib.request.urlopen(url, timeout=5).close()
                return
            except urllib.error.HTTPError:
                return
            except OSError:
                time.sleep(0.25)
        pytest.fail(f"{self.name} did not answer {url} within {timeout:.0f} s:\n{self.log_tail()}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)  # the server shuts its kernels down
            try:
                self.proc.wait(timeout=8)
            except subprocess.TimeoutExpired:
                pass
        try:  # anything left in the server's own process group (its kernels)
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if self.proc.poll() is None:
            self.proc.wait(timeout=10)
        self._log.close()


def voila_command(port: int, notebook: Path = DASHBOARD) -> list[str]:
    """Exactly what `specviz dashboard` runs (kernel preheating included)."""
    from specviz.cli.jupyter_args import build_dashboard_command

    return build_dashboard_command(notebook, port=port)


def lab_command(port: int, root: Path, token: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "jupyter",
        "lab",
        "--no-browser",
        "--allow-root",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--ServerApp.root_dir={root}",
        f"--IdentityProvider.token={token}",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.news_url=",
        "--ServerApp.open_browser=False",
    ]


def notebook7_command(port: int, root: Path, token: str) -> list[str]:
    """`jupyter notebook` (Notebook 7), as a learner starts it: its own server.

    Not the JupyterLab server's /notebooks/ page: after a JupyterLab page has loaded a font
    of the same file name, jupyter_server's static-file cache (keyed by file name) answers
    Notebook 7's request for it with 403 "not in root static directory".
    """
    return [
        sys.executable,
        "-m",
        "jupyter",
        "notebook",
        "--no-browser",
        "--allow-root",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--ServerApp.root_dir={root}",
        f"--IdentityProvider.token={token}",
        "--ServerApp.open_browser=False",
    ]


@pytest.fixture(scope="module")
def screenshot_dir(tmp_path_factory) -> Path:
    override = os.environ.get("SPECVIZ_SCREENSHOTS")
    path = Path(override) if override else tmp_path_factory.mktemp("screenshots")
    path.mkdir(parents=True, exist_ok=True)
    yield path
    print(f"\nbrowser-test screenshots: {path}")


def save_shot(target, screenshot_dir: Path, name: str, readme: bool = False) -> Path:
    """Screenshot a page or locator to `screenshot_dir/name.png` (and, for README shots, to
    $SPECVIZ_README_SCREENSHOTS when set)."""
    out = screenshot_dir / f"{name}.png"
    page = getattr(target, "page", None)
    if page is None:  # a Page
        target.screenshot(path=str(out), animations="disabled")
    else:  # a Locator: make the window tall enough to hold it (a taller one renders blank at the edges)
        size = page.viewport_size
        box = target.bounding_box()
        if box and box["height"] + 40 > size["height"]:
            page.set_viewport_size({"width": size["width"], "height": int(box["height"]) + 80})
            page.wait_for_timeout(500)
        try:
            target.scroll_into_view_if_needed()
            target.screenshot(path=str(out), animations="disabled")
        finally:
            page.set_viewport_size(size)
    readme_dir = os.environ.get("SPECVIZ_README_SCREENSHOTS")
    if readme and readme_dir:
        Path(readme_dir).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(out, Path(readme_dir) / out.name)
    return out


@pytest.fixture(scope="module")
def servers(chromium_executable, tmp_path_factory):
    """Voila on the dashboard and JupyterLab on a copy of a tutorial, started together.

    JupyterLab gets a copy of the notebook in a temporary folder (and temporary Jupyter
    config / workspace folders) so running it never rewrites a file of the repository.
    """
    log_dir = tmp_path_factory.mktemp("server-logs")
    lab_root = tmp_path_factory.mktemp("lab-root")
    shutil.copyfile(LAB_NOTEBOOK, lab_root / LAB_NOTEBOOK.name)
    shutil.copyfile(NB7_NOTEBOOK, lab_root / NB7_NOTEBOOK.name)
    token = "specviz-browser-test"
    env = dict(os.environ)
    env["JUPYTER_CONFIG_DIR"] = str(tmp_path_factory.mktemp("jupyter-config"))
    env["JUPYTERLAB_WORKSPACES_DIR"] = str(tmp_path_factory.mktemp("lab-workspaces"))
    settings = tmp_path_factory.mktemp("lab-settings")
    (settings / "@jupyterlab" / "apputils-extension").mkdir(parents=True)
    (settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False})
    )
    env["JUPYTERLAB_SETTINGS_DIR"] = str(settings)
    env.pop("JUPYTER_TOKEN", None)
    voila_port, lab_port, nb7_port = free_port(), free_port(), free_port()
    started: list[Server] = []
    try:
        voila = Server("voila", voila_command(voila_port), REPO_ROOT, log_dir, env=env)
        started.append(voila)
        lab = Server("jupyterlab", lab_command(lab_port, lab_root, token), lab_root, log_dir, env=env)
        started.append(lab)
        nb7 = Server("notebook7", notebook7_command(nb7_port, lab_root, token), lab_root, log_dir, env=env)
        started.append(nb7)
        yield {
            "voila": voila,
            "voila_url": f"http://127.0.0.1:{voila_port}/",
            "lab": lab,
            "lab_url": f"http://127.0.0.1:{lab_port}/lab/tree/{LAB_NOTEBOOK.name}?token={token}",
            "lab_ping": f"http://127.0.0.1:{lab_port}/api/status?token={token}",
            "nb7": nb7,
            "nb7_url": f"http://127.0.0.1:{nb7_port}/notebooks/{NB7_NOTEBOOK.name}?token={token}",
            "nb7_ping": f"http://127.0.0.1:{nb7_port}/api/status?token={token}",
        }
    finally:
        for server in started:
            server.stop()


@pytest.fixture(scope="module")
def chromium(chromium_executable, tmp_path_factory):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path=chromium_executable,
            args=CHROMIUM_ARGS,
            headless=True,
            viewport=VIEWPORT,
        )
        try:
            yield context
        finally:
            context.close()


class PageProblems:
    """Page errors, console errors and failed local requests seen on a page.

    Failed requests to other hosts (the CDN of the icon font: there is no internet
    here) and the console errors they cause are ignored.
    """

    def __init__(self, page):
        self.errors: list[str] = []
        self.console: list[str] = []
        self.requests: list[str] = []
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        page.on("console", self._on_console)
        page.on("requestfailed", self._on_request_failed)

    @staticmethod
    def _local(url: str) -> bool:
        return url.startswith(("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:"))

    def _on_console(self, msg) -> None:
        if msg.type != "error":
            return
        url = (msg.location or {}).get("url", "")
        if msg.text.startswith("Failed to load resource") and not self._local(url):
            return
        self.console.append(f"{msg.text} ({url})")

    def _on_request_failed(self, request) -> None:
        if self._local(request.url) and not request.url.startswith("ws"):
            self.requests.append(f"{request.method} {request.url}: {request.failure}")

    def mark(self) -> tuple[int, int, int]:
        return len(self.errors), len(self.console), len(self.requests)

    def assert_none(self, since: tuple[int, int, int] = (0, 0, 0), known: Iterable[str] = ()) -> None:
        """No problems since `since`; `known` lists exact page-error messages of upstream bugs to let pass."""
        errors = [e for e in self.errors[since[0] :] if e not in set(known)]
        console = self.console[since[1] :]
        requests = self.requests[since[2] :]
        assert not errors, f"page errors: {errors}"
        assert not console, f"console errors: {console}"
        assert not requests, f"failed requests to the server: {requests}"


# ----------------------------------------------------------------------------- page helpers

# Installed into the dashboard page: find widgets and read plotly traces by `meta`.
HELPERS_JS = r"""
() => {
  const visible = el => !!el && el.getClientRects().length > 0;
  const sv = {
    visible,
    slider(label) {
      return [...document.querySelectorAll('.widget-slider')].find(s => visible(s) &&
        (s.querySelector('.widget-label') || {}).textContent?.trim() === label) || null;
    },
    readout(label) {
      const s = sv.slider(label);
      return s ? s.querySelector('.widget-readout').textContent.trim() : null;
    },
    // visible sliders of the distribution editor: [{label, token, text}]
    dist(which) {
      return [...document.querySelectorAll('.specviz-slider-' + which)].filter(visible).map(s => {
        const label = s.querySelector('.widget-label').textContent.trim();
        return {label, token: label.slice(2, -1), text: s.querySelector('.widget-readout').textContent.trim()};
      });
    },
    trace(meta) {
      for (const el of document.querySelectorAll('.js-plotly-plot')) {
        if (!visible(el) || !el._fullData) continue;
        const t = el._fullData.find(t => t.meta === meta);
        if (t) return {x: Array.from(t.x || []), y: Array.from(t.y || [], Number),
                       base: t.base == null ? null : (typeof t.base === 'number' ? t.base : Array.from(t.base, Number)),
                       opacity: t.opacity, visible: t.visible};
      }
      return null;
    },
    text(selector) {
      const el = [...document.querySelectorAll(selector)].find(visible);
      return el ? el.textContent.trim() : null;
    },
    // does the money diagram show min(p, q) and (p - q)+ of the slider readouts?
    moneyMatches(atol) {
      const P = sv.dist('p'), Q = sv.dist('q');
      const ov = sv.trace('overlap'), res = sv.trace('residual'), tp = sv.trace('p'), tq = sv.trace('q');
      if (!P.length || P.length !== Q.length || !ov || !res || !tp || !tq || ov.x.length !== P.length) return false;
      return P.every((pi, i) => {
        const p = parseFloat(pi.text), q = parseFloat(Q[i].text), j = ov.x.indexOf(pi.token);
        return j >= 0 && res.x[j] === pi.token && Math.abs(ov.y[j] - Math.min(p, q)) <= atol &&
               Math.abs(res.y[j] - Math.max(p - q, 0)) <= atol &&
               Math.abs(tp.y[j] - p) <= atol && Math.abs(tq.y[j] - q) <= atol;
      });
    },
  };
  window.__sv = sv;
  return true;
}
"""


def sv(page, expr: str, arg=None):
    """Evaluate `expr` (a JS expression using `sv`) in the page."""
    return page.evaluate(f"(arg) => {{ const sv = window.__sv; return {expr}; }}", arg)


def wait_sv(page, expr: str, arg=None, timeout: float = ACTION_MS):
    page.wait_for_function(
        f"(arg) => {{ const sv = window.__sv; return {expr}; }}", arg=arg, timeout=timeout, polling=50
    )


def read_money(page) -> dict:
    """Slider readouts (text and value) and the money diagram's traces, as Python data."""
    return sv(
        page,
        "({P: sv.dist('p'), Q: sv.dist('q'), overlap: sv.trace('overlap'), "
        "residual: sv.trace('residual'), p: sv.trace('p'), q: sv.trace('q'), "
        "rejected: sv.trace('rejected')})",
    )


def decimals(text: str) -> int:
    return len(text.split(".", 1)[1]) if "." in text else 0


def assert_money_matches_readouts(state: dict) -> tuple[list[float], list[float]]:
    """The overlap/residual traces equal min(p, q) and (p - q)+ of the shown values (Python check)."""
    P, Q = state["P"], state["Q"]
    tokens = [s["token"] for s in P]
    assert tokens == [s["token"] for s in Q]
    p = [float(s["text"]) for s in P]
    q = [float(s["text"]) for s in Q]
    # The readouts are a distribution as shown: they sum to 1 up to their own rounding.
    for name, vals, texts in (("p", p, P), ("q", q, Q)):
        slack = len(vals) * 0.5 * 10.0 ** -min(decimals(s["text"]) for s in texts) + 1e-9
        assert abs(sum(vals) - 1) <= slack, f"{name} readouts {vals} do not sum to 1"
    ov, res = state["overlap"], state["residual"]
    assert ov["x"] == tokens and res["x"] == tokens, (ov["x"], res["x"], tokens)
    for i, t in enumerate(tokens):
        assert ov["y"][i] == pytest.approx(min(p[i], q[i]), abs=ATOL), f"overlap[{t}] vs min(p, q) of the readouts"
        assert res["y"][i] == pytest.approx(max(p[i] - q[i], 0.0), abs=ATOL), f"residual[{t}] vs (p - q)+"
        # the stack fills p exactly, and p / q traces show the readouts too
        assert ov["y"][i] + res["y"][i] == pytest.approx(p[i], abs=ATOL)
        assert state["p"]["y"][i] == pytest.approx(p[i], abs=ATOL)
        assert state["q"]["y"][i] == pytest.approx(q[i], abs=ATOL)
    return p, q


def press(page, label: str, key: str, times: int = 1) -> None:
    """Focus the noUiSlider handle of the visible slider `label` and press `key`."""
    label_re = re.compile("^" + re.escape(label) + "$")
    slider = page.locator(".widget-slider:visible", has=page.locator(".widget-label", has_text=label_re))
    handle = slider.first.locator(".noUi-handle")
    handle.focus()
    for _ in range(times):
        handle.press(key)


def click_button(page, text: str) -> None:
    page.locator("button.jupyter-button:visible", has_text=text).first.click()


SHOWN_TAB_TEXT = """() => {
  const shown = [...document.querySelectorAll('.specviz-tab-explanation')].find(e => e.offsetParent !== null);
  if (!shown) return '(no tab body on show)';
  const next = shown.closest('.widget-html')?.nextElementSibling;
  return next ? next.innerText.slice(0, 200) || '(an app with no text yet)' : '(nothing under the explanation)';
}"""
"""What the tab body on show holds under its explanation (the loading note, an error, the app), for the log."""

RECLICK_MS = 60_000  # a tab not ready after this long is clicked away from and back to, once, as a user would


def open_tab(page, title: str, ready: str = "sv.trace('overlap') !== null", timeout: float = FIRST_PLOT_MS) -> None:
    """Click the dashboard tab `title` and wait until the JS condition `ready` holds
    (default: the Money diagram's figure is there, i.e. back on the first tab).

    Not ready after RECLICK_MS: warn with what the tab shows, click another tab and this one again (a new
    selected_index for the kernel), then wait the full `timeout`. A fresh-clone CI run (2026-12-07, the slow
    lane beside model tests) saw the Numerics tab stay unbuilt for 180 s after one click, as the first-tab
    keyboard test in test_accessibility.py saw a figure not follow a key press; the cause is not found.
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    tabs = page.locator(".lm-TabBar-tab")
    tab = tabs.filter(has_text=title).first
    tab.click()
    try:
        wait_sv(page, ready, timeout=min(timeout, RECLICK_MS))
        return
    except PlaywrightTimeout:
        if timeout <= RECLICK_MS:
            raise
    shown = page.evaluate(SHOWN_TAB_TEXT)
    # a warning, not a print: pytest keeps a passing test's output to itself, but lists warnings in its summary
    warnings.warn(
        f"open_tab({title!r}): not ready in {RECLICK_MS / 1000:.0f} s, showing {shown!r}; clicked away and back",
        stacklevel=2,
    )
    away = 1 if title in tabs.first.inner_text() else 0
    tabs.nth(away).click()
    tab.click()
    try:
        wait_sv(page, ready, timeout=timeout)
    except PlaywrightTimeout:
        pytest.fail(
            f"tab {title!r} not ready ({ready}) after two clicks and {(RECLICK_MS + timeout) / 1000:.0f} s; "
            f"it shows {page.evaluate(SHOWN_TAB_TEXT)!r}"
        )


# ----------------------------------------------------------------------------- Voila


@pytest.fixture(scope="module")
def dashboard(servers, chromium, screenshot_dir):
    """The dashboard page, loaded once for the Voila tests: {page, problems, load_s}."""
    servers["voila"].wait_http(servers["voila_url"] + "voila/static/voila.js")
    page = chromium.new_page()
    problems = PageProblems(page)
    t0 = time.monotonic()
    page.goto(servers["voila_url"], timeout=FIRST_PLOT_MS, wait_until="commit")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.js-plotly-plot')].some(e => e._fullData && e._fullData.length)",
        timeout=FIRST_PLOT_MS,
        polling=100,
    )
    load_s = time.monotonic() - t0
    page.evaluate(HELPERS_JS)
    wait_sv(page, "sv.dist('p').length === 3 && sv.dist('q').length === 3 && sv.moneyMatches(arg)", ATOL)
    yield {"page": page, "problems": problems, "load_s": load_s}
    page.close()


@browser_test
def test_dashboard_loads_without_errors(dashboard, screenshot_dir):
    page, problems = dashboard["page"], dashboard["problems"]
    tabs = page.locator(".lm-TabBar-tab").all_inner_texts()
    assert [t.strip() for t in tabs] == [
        "Money diagram",
        "Sampling check",
        "Pitfalls",
        "γ-steps & trees",
        "Numerics",
        "Real models",
    ]
    assert page.locator(".specviz-tab-explanation:visible").count() == 1
    assert "whole proof" in page.locator(".specviz-tab-explanation:visible").inner_text()
    # Sources are hidden: no code cell input is rendered.
    assert (
        page.locator(
            ".jp-CodeCell .jp-InputArea:visible, .jp-CodeMirrorEditor:visible, .jp-InputPrompt:visible"
        ).count()
        == 0
    )
    assert "import specviz" not in page.content()
    # The tutorial's example: p = (0.6, 0.3, 0.1), q = (0.4, 0.5, 0.1).
    state = read_money(page)
    p, q = assert_money_matches_readouts(state)
    assert p == [0.6, 0.3, 0.1] and q == [0.4, 0.5, 0.1]
    assert sv(page, "sv.text('.specviz-p-accept')") == "0.800"
    assert sv(page, "sv.text('.specviz-z')") == "0.200"
    assert page.locator(".specviz-error:visible").count() == 0
    save_shot(page, screenshot_dir, "voila-loaded")
    problems.assert_none()
    print(f"dashboard: first plot {dashboard['load_s']:.1f} s after navigation")


@browser_test
def test_moving_p_slider_redraws_money_diagram(dashboard, screenshot_dir):
    page, problems = dashboard["page"], dashboard["problems"]
    mark = problems.mark()
    before = read_money(page)
    assert_money_matches_readouts(before)
    p_cat = sv(page, "sv.readout('p(cat)')")

    press(page, "p(cat)", "ArrowRight", times=3)
    # Wait until the readout shows the new value and the figure agrees with what every slider shows.
    want = f"{float(p_cat) + 0.03:.2f}"
    wait_sv(page, "sv.readout('p(cat)') === arg.want && sv.moneyMatches(arg.atol)", {"want": want, "atol": ATOL})
    after = read_money(page)
    p, q = assert_money_matches_readouts(after)
    assert p[0] == pytest.approx(float(p_cat) + 0.03, abs=1e-9), "three ArrowRight presses = +0.03"
    assert after["overlap"]["y"] != before["overlap"]["y"] or after["residual"]["y"] != before["residual"]["y"]
    assert after["residual"]["y"][0] == pytest.approx(p[0] - q[0], abs=ATOL)

    # and the draft: q(cat) up past p(cat) moves mass from the residual to the overlap
    q_cat = sv(page, "sv.readout('q(cat)')")
    press(page, "q(cat)", "ArrowRight", times=25)
    want = f"{float(q_cat) + 0.25:.2f}"
    wait_sv(page, "sv.readout('q(cat)') === arg.want && sv.moneyMatches(arg.atol)", {"want": want, "atol": ATOL})
    p, q = assert_money_matches_readouts(read_money(page))
    assert q[0] > p[0]
    # the live numbers follow the shown values
    pa = sum(min(a, b) for a, b in zip(p, q))
    wait_sv(page, "sv.text('.specviz-p-accept') === arg", f"{pa:.3f}")
    save_shot(page.locator(".specviz-app:visible").first, screenshot_dir, "voila-slider-moved")
    problems.assert_none(mark)


@browser_test
def test_preset_perfect_draft(dashboard, screenshot_dir):
    page, problems = dashboard["page"], dashboard["problems"]
    mark = problems.mark()
    click_button(page, "Perfect draft q = p")
    wait_sv(page, "sv.dist('p').every((s, i) => s.text === sv.dist('q')[i].text) && sv.moneyMatches(arg)", ATOL)
    p, q = assert_money_matches_readouts(read_money(page))
    assert p == q
    state = read_money(page)
    assert all(abs(v) <= ATOL for v in state["residual"]["y"]), state["residual"]["y"]
    assert all(abs(v) <= ATOL for v in state["rejected"]["y"]), state["rejected"]["y"]
    wait_sv(page, "sv.text('.specviz-p-accept') === '1.000' && sv.text('.specviz-z') === '0.000'")
    assert sv(page, "sv.text('.specviz-tv')") == "0.000"

    # back to the tutorial's example: the numbers of the proof
    click_button(page, "Tutorial example")
    wait_sv(page, "sv.readout('p(cat)') === '0.60' && sv.readout('q(cat)') === '0.40' && sv.moneyMatches(arg)", ATOL)
    state = read_money(page)
    assert_money_matches_readouts(state)
    assert state["overlap"]["y"] == pytest.approx([0.4, 0.3, 0.1], abs=ATOL)
    assert state["residual"]["y"] == pytest.approx([0.2, 0.0, 0.0], abs=ATOL)
    wait_sv(page, "sv.text('.specviz-p-accept') === '0.800'")
    save_shot(page.locator(".specviz-dashboard"), screenshot_dir, "dashboard-money-diagram", readme=True)
    problems.assert_none(mark)


GLIDE_JS = """
() => {
  // Watch the drawn height of the residual bar of the first token while the diagram changes:
  // plotly.js events plus the bar's on-screen height at every animation frame.
  const gd = [...document.querySelectorAll('.js-plotly-plot')].find(e => e.getClientRects().length &&
      e._fullData && e._fullData.some(t => t.meta === 'overlap'));
  const idx = gd._fullData.findIndex(t => t.meta === 'residual');
  const height = () => {
    const traces = gd.querySelectorAll('.barlayer .trace.bars');
    const path = traces[idx] && traces[idx].querySelector('.point path');
    return path ? path.getBBox().height : 0;
  };
  const G = window.__glide = {events: [], heights: [height()]};
  gd.on('plotly_transitioning', () => G.events.push('transitioning'));
  gd.on('plotly_animated', () => G.events.push('animated'));
  const t0 = performance.now();
  const sample = () => { G.heights.push(height()); if (performance.now() - t0 < 4000) requestAnimationFrame(sample); };
  requestAnimationFrame(sample);
  return G.heights[0];
}
"""


@browser_test
def test_diagram_glides_to_new_values(dashboard):
    """The bars move smoothly: a change shows intermediate heights (a plotly.js transition), then settles."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page, problems = dashboard["page"], dashboard["problems"]
    mark = problems.mark()
    wait_sv(page, "sv.readout('p(cat)') === '0.60' && sv.readout('q(cat)') === '0.40' && sv.moneyMatches(arg)", ATOL)
    start = page.evaluate(GLIDE_JS)
    assert start > 10, f"residual bar of cat (p - q = 0.2) should be visible, height {start} px"
    click_button(page, "Perfect draft q = p")  # residual of cat: 0.2 -> 0
    try:
        page.wait_for_function("() => window.__glide.events.includes('animated')", timeout=15_000, polling=50)
    except PlaywrightTimeout:
        pass  # asserted below, with what was seen
    page.wait_for_timeout(300)
    g = page.evaluate("() => window.__glide")
    assert g["events"][:2] == ["transitioning", "animated"], g["events"]
    end = g["heights"][-1]
    assert end < 1.0, f"residual bar should vanish with q = p, height {end} px"
    between = [h for h in g["heights"] if end + 1.0 < h < start - 1.0]
    assert len(between) >= 2, f"no intermediate heights between {start:.1f} and {end:.1f} px: {g['heights']}"
    click_button(page, "Tutorial example")
    wait_sv(page, "sv.readout('p(cat)') === '0.60' && sv.readout('q(cat)') === '0.40' && sv.moneyMatches(arg)", ATOL)
    problems.assert_none(mark)


def _step(page) -> dict:
    return sv(
        page,
        "({label: sv.text('.specviz-step-label'), residual: sv.trace('residual').opacity, "
        "rejected: sv.trace('rejected').opacity, overlap: sv.trace('overlap').opacity})",
    )


@browser_test
def test_step_reveal(dashboard, screenshot_dir):
    page, problems = dashboard["page"], dashboard["problems"]
    mark = problems.mark()
    back = page.locator("button.jupyter-button:visible", has_text="◀ Back").first
    nxt = page.locator("button.jupyter-button:visible", has_text="Next ▶").first
    s = _step(page)
    assert s["label"].startswith("Step 3 of 3"), s
    assert (s["overlap"], s["rejected"], s["residual"]) == (1, 1, 1)
    assert nxt.is_disabled() and back.is_enabled()

    back.click()
    wait_sv(page, "sv.text('.specviz-step-label').startsWith('Step 2 of 3') && sv.trace('residual').opacity === 0")
    s = _step(page)
    assert (s["overlap"], s["rejected"], s["residual"]) == (1, 1, 0), s
    assert "reject" in s["label"]

    back.click()
    wait_sv(page, "sv.text('.specviz-step-label').startsWith('Step 1 of 3') && sv.trace('rejected').opacity === 0")
    s = _step(page)
    assert (s["overlap"], s["rejected"], s["residual"]) == (1, 0, 0), s
    assert "accept" in s["label"]
    page.wait_for_function("(el) => el.disabled", arg=back.element_handle(), timeout=ACTION_MS)
    # hidden traces keep their data: the proof's parts are still exact
    assert_money_matches_readouts(read_money(page))

    nxt.click()
    wait_sv(page, "sv.text('.specviz-step-label').startsWith('Step 2 of 3') && sv.trace('rejected').opacity === 1")
    nxt.click()
    wait_sv(page, "sv.text('.specviz-step-label').startsWith('Step 3 of 3') && sv.trace('residual').opacity === 1")
    s = _step(page)
    assert (s["overlap"], s["rejected"], s["residual"]) == (1, 1, 1), s
    problems.assert_none(mark)


@browser_test
def test_monte_carlo_run_updates_histogram(dashboard, screenshot_dir):
    page, problems = dashboard["page"], dashboard["problems"]
    mark = problems.mark()
    open_tab(
        page,
        "Sampling check",
        "sv.trace('accepted') !== null && sv.trace('resampled') !== null && sv.dist('p').length === 3",
    )
    before = sv(page, "({acc: sv.trace('accepted').y, res: sv.trace('resampled').y})")
    assert sum(before["acc"]) + sum(before["res"]) == 0, "empty histogram before Run"
    P = sv(page, "sv.dist('p')")
    Q = sv(page, "sv.dist('q')")
    p = [float(s["text"]) for s in P]
    q = [float(s["text"]) for s in Q]
    assert sv(page, "sv.text('.specviz-verdict')") == "press Run to sample"

    click_button(page, "Run")
    wait_sv(page, "!!sv.text('.specviz-verdict-pass') || !!sv.text('.specviz-verdict-fail')", timeout=FIRST_PLOT_MS)
    wait_sv(page, "sv.trace('accepted').y.reduce((a, b) => a + b, 0) > 0")
    assert sv(page, "sv.text('.specviz-verdict-pass')") == "PASS", sv(page, "sv.text('.specviz-verdict')")
    data = sv(
        page,
        "({x: sv.trace('accepted').x, acc: sv.trace('accepted').y, res: sv.trace('resampled').y, "
        "p: sv.trace('p').y, exact: sv.trace('overlap_exact').y})",
    )
    emp = [a + r for a, r in zip(data["acc"], data["res"])]
    # fractions of N = 10,000 samples: they sum to 1 and follow p (5 sigma is < 0.025 here)
    assert sum(emp) == pytest.approx(1.0, abs=1e-9)
    assert data["p"] == pytest.approx(p, abs=ATOL)
    assert data["exact"] == pytest.approx([min(a, b) for a, b in zip(p, q)], abs=ATOL)
    for i, tok in enumerate(data["x"]):
        assert emp[i] == pytest.approx(p[i], abs=0.025), f"empirical {tok}"
        assert data["acc"][i] == pytest.approx(min(p[i], q[i]), abs=0.025), f"accepted {tok}"
        assert data["res"][i] == pytest.approx(max(p[i] - q[i], 0), abs=0.025), f"resampled {tok}"
    assert sorted(range(len(p)), key=lambda i: -emp[i]) == sorted(range(len(p)), key=lambda i: -p[i])
    save_shot(page.locator(".specviz-dashboard"), screenshot_dir, "dashboard-sampling-check", readme=True)
    open_tab(page, "Money diagram")
    problems.assert_none(mark)


@browser_test
def test_gamma_tab_updates_both_of_its_figures(dashboard, screenshot_dir):
    """The γ tab holds two FigureWidgets (γ-steps and multi-draft): both must redraw in the page."""
    page, problems = dashboard["page"], dashboard["problems"]
    mark = problems.mark()
    open_tab(page, "γ-steps", "sv.trace('current') !== null && sv.trace('acceptance:update') !== null")
    gamma0 = sv(page, "sv.trace('current').x[0]")
    k0 = sv(page, "sv.trace('acceptance:update').x.length")
    press(page, "γ (drafts)", "ArrowRight", 2)
    wait_sv(page, "sv.trace('current').x[0] === arg", arg=gamma0 + 2)
    press(page, "drafts k ≤", "ArrowRight", 1)
    wait_sv(page, "sv.trace('acceptance:update').x.length === arg", arg=k0 + 1)
    save_shot(page.locator(".specviz-dashboard"), screenshot_dir, "dashboard-gamma")
    open_tab(page, "Money diagram")
    problems.assert_none(mark)


@browser_test
def test_numerics_tab_updates_both_of_its_figures(dashboard, screenshot_dir):
    """The Numerics tab holds two FigureWidgets (precision, standardisation): both must redraw."""
    page, problems = dashboard["page"], dashboard["problems"]
    mark = problems.mark()
    open_tab(page, "Numerics", "sv.trace('output') !== null && sv.trace('abs_err:float16') !== null")
    out0 = sv(page, "sv.trace('output').y")
    err0 = sv(page, "sv.trace('abs_err:float16').y")
    press(page, "logit scale", "ArrowRight", 2)
    wait_sv(page, "JSON.stringify(sv.trace('abs_err:float16').y) !== JSON.stringify(arg)", arg=err0)
    click_button(page, "Fix: use one standardised distribution")
    wait_sv(page, "JSON.stringify(sv.trace('output').y) !== JSON.stringify(arg)", arg=out0)
    open_tab(page, "Money diagram")
    problems.assert_none(mark)


@browser_test
def test_real_models_tab_builds_on_first_view(dashboard, screenshot_dir):
    """The extra tab imports specviz.widgets.live only when opened, and builds without an error."""
    page, problems = dashboard["page"], dashboard["problems"]
    mark = problems.mark()
    open_tab(page, "Real models", "!!sv.text('.specviz-live') || !!sv.text('.specviz-error')")
    error = sv(page, "sv.text('.specviz-error')")
    assert error is None, f"the Real models tab shows an error: {error}"
    assert "draft language model" in page.locator(".specviz-tab-explanation:visible").inner_text()
    save_shot(page, screenshot_dir, "voila-real-models")
    open_tab(page, "Money diagram")
    problems.assert_none(mark)


def live_dropdown(page, label: str):
    """The <select> of the live view's dropdown labelled `label`."""
    label_re = re.compile("^" + re.escape(label) + "$")
    return page.locator(
        ".specviz-live .widget-dropdown:visible", has=page.locator(".widget-label", has_text=label_re)
    ).locator("select")


def live_generate(page, timeout: float = FIRST_PLOT_MS) -> tuple[float, float]:
    """Press the live view's Generate and wait for its timing rounds: (speed-up shown, tokens per verify step)."""
    status = ".specviz-live .specviz-status"
    page.locator(".specviz-live button.jupyter-button:visible", has_text=re.compile(r"^Generate$")).click()
    wait_sv(page, "/ over \\d+ rounds?/.test(sv.text(arg) || '')", status, timeout=timeout)
    text = sv(page, "sv.text(arg)", status)
    stats = sv(page, "sv.text('.specviz-live-stats')")
    found = re.search(r"speed-up ([\d.]+)× over (\d+) rounds?", text)
    speedup = float(found.group(1))
    assert f"{speedup:.2f}×" in stats, (text, stats)  # the table reads the same pooled figure
    counted = re.search(r"(\d+) tokens in (\d+) verify steps", text)
    assert counted, text
    return speedup, int(counted.group(1)) / int(counted.group(2))


# The first Generate of each offered pair, at its defaults, as a lecturer presses it (issue 31). The panel's
# speed-up is pooled over timing rounds (live.sweep.speed_rounds), never one 0.6 s run, and it is shown, not
# held to a bar: a speed-up is a timing, and timings are measured by benchmarks, not asserted in tests. A bar
# of 1.5x on SmolLM2 + prompt lookup's first click (2.8-3.1x here on an idle machine) read 1.09x in a CI run
# with the other worker's notebooks and test-floor on the two cores. What this test holds is the count that
# makes the gain, which the clock moves far less (auto reads it, so the steps vary a little): greedy SmolLM2
# copies the rewrite's paragraph, 79 tokens to the end of its turn, in 10-19 verify steps (auto 10-14, 13 with
# three CPU hogs beside it; a fixed γ of 4 19, γ 8 12: 4.2-7.9 tokens a step; plain decoding is 1.0). Below LOOKUP_TOKENS_PER_STEP_MIN the view's lookup drafts little or has its
# drafts refused. The speed itself is guarded by `make bench-check` (prompt-lookup: ours against
# transformers' on the copy prompt) and measured by bench_prompt_lookup.py (edit prompt, 3.2x); the bundled
# pair's gain by bench-check's auto-vs-plain (fail below 0.90x).
LOOKUP_TOKENS_PER_STEP_MIN = 3.0


@browser_test
def test_real_models_first_generate_shows_auto_and_a_pooled_speedup(dashboard, screenshot_dir):
    page, problems = dashboard["page"], dashboard["problems"]
    mark = problems.mark()
    open_tab(page, "Real models", "!!sv.text('.specviz-live') || !!sv.text('.specviz-error')")
    status = ".specviz-live .specviz-status"
    # the pair warmed up as it loaded, apart from any measured run; γ starts at auto
    wait_sv(page, "(sv.text(arg) || '').includes('warmed up')", status, timeout=FIRST_PLOT_MS)
    gamma = live_dropdown(page, "γ (drafts/step)")
    assert gamma.evaluate("s => s.options[s.selectedIndex].text") == "auto"
    assert "free text" in sv(page, "sv.text('.specviz-models')")  # why free text gains little with prompt lookup
    bundled, _ = live_generate(page)
    assert 0 < bundled < float("inf"), f"bundled pair, first Generate: {bundled}"
    save_shot(page, screenshot_dir, "voila-real-models-generated")

    # SmolLM2-135M with prompt lookup (fetched by `make models`): it opens on a rewrite
    live_dropdown(page, "models").select_option(label="smollm2-135m + prompt lookup")
    page.locator(".specviz-live button.jupyter-button:visible", has_text="Load pair").click()
    wait_sv(page, "/smollm2-135m.*warmed up/.test(sv.text(arg) || '')", status, timeout=FIRST_PLOT_MS)
    prompt = page.locator(".specviz-live textarea:visible").first.input_value()
    assert prompt.startswith("Rewrite the following paragraph"), prompt
    lookup, per_step = live_generate(page)
    print(
        f"first Generate: bundled pair {bundled:.2f}x, "
        f"SmolLM2 + prompt lookup (rewrite) {lookup:.2f}x, {per_step:.2f} tokens per verify step"
    )
    assert 0 < lookup < float("inf"), f"SmolLM2 + prompt lookup, first Generate: {lookup}"
    assert per_step >= LOOKUP_TOKENS_PER_STEP_MIN, (
        f"SmolLM2 + prompt lookup, rewrite prompt: {per_step:.2f} tokens/step"
    )
    open_tab(page, "Money diagram")
    problems.assert_none(mark)


@browser_test
def test_no_page_errors_during_the_session(dashboard):
    dashboard["problems"].assert_none()


# ----------------------------------------------------------------------------- JupyterLab


def run_all_and_check(page, url: str, notebook: Path) -> None:
    """Open `notebook` at `url` (JupyterLab or Notebook 7), Run All, and check every cell ran cleanly."""
    page.goto(url, timeout=FIRST_PLOT_MS)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=FIRST_PLOT_MS)
    # the cells appear in batches after the kernel is idle: wait for all of them
    n_cells = len(json.loads(notebook.read_text(encoding="utf-8"))["cells"])
    page.wait_for_function(
        "(n) => document.querySelectorAll('.jp-Notebook .jp-Cell').length === n",
        arg=n_cells,
        timeout=FIRST_PLOT_MS,
        polling=250,
    )
    page.locator(".lm-MenuBar-item", has_text=re.compile(r"^Run$")).click()
    page.locator(".lm-Menu-item[data-command='runmenu:run-all']").click()
    page.wait_for_selector(".jp-OutputArea .widget-slider", timeout=FIRST_PLOT_MS)
    # every code cell ran: each prompt holds a number, and no cell shows an error
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt')]"
        ".every(p => /\\[\\d+\\]/.test(p.textContent))",
        timeout=FIRST_PLOT_MS,
        polling=250,
    )
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=FIRST_PLOT_MS)
    # an exception renders as a stderr output holding the traceback
    tracebacks = [
        t
        for t in page.locator(
            ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"
        ).all_inner_texts()
        if "Traceback" in t or re.search(r"^\w+(Error|Exception)\b", t, re.M)
    ]
    assert not tracebacks, tracebacks[0]


@browser_test
def test_jupyterlab_runs_tutorial_and_renders_widgets(servers, chromium, screenshot_dir):
    lab = servers["lab"]
    lab.wait_http(servers["lab_ping"])
    page = chromium.new_page()
    problems = PageProblems(page)
    try:
        run_all_and_check(page, servers["lab_url"], LAB_NOTEBOOK)
        # JupyterLab's windowed notebook draws an output only once its cell has been in view, and
        # Run All leaves the view at the bottom: each poll brings the next cell into view until
        # the money diagram's figure has been drawn.
        page.wait_for_function(
            "() => { if ([...document.querySelectorAll('.jp-OutputArea .js-plotly-plot')].some(e => e._fullData && "
            "e._fullData.some(t => t.meta === 'overlap'))) return true; "
            "const cells = [...document.querySelectorAll('.jp-Notebook .jp-Cell')]; "
            "window.__svCell = ((window.__svCell ?? -1) + 1) % Math.max(cells.length, 1); "
            "if (cells.length) cells[window.__svCell].scrollIntoView(); return false; }",
            timeout=FIRST_PLOT_MS,
            polling=250,
        )
        # text_contents, not inner_texts: JupyterLab's windowed notebook leaves cells out of view unrendered
        sliders = [t.strip() for t in page.locator(".jp-OutputArea .widget-slider .widget-label").all_text_contents()]
        assert "p(cat)" in sliders and "q(cat)" in sliders, sliders
        app = page.locator(".jp-OutputArea .specviz-app").first
        app.scroll_into_view_if_needed()
        save_shot(page, screenshot_dir, "jupyterlab-tutorial-05", readme=True)
        problems.assert_none()
    finally:
        page.close()


@browser_test
def test_notebook7_runs_tutorial_and_renders_widgets(servers, chromium, screenshot_dir):
    """The tutorials open in Notebook 7 too: the pitfalls notebook runs and its explorer works."""
    servers["nb7"].wait_http(servers["nb7_ping"])
    page = chromium.new_page()
    problems = PageProblems(page)
    try:
        run_all_and_check(page, servers["nb7_url"], NB7_NOTEBOOK)
        assert page.locator("#jp-NotebookPanel, .jp-NotebookPanel").count() >= 1
        assert page.locator(".jp-LabShell").count() == 0, "expected the Notebook 7 page, got JupyterLab"
        # the pitfall explorer rendered: a plot with the rule's output next to p, and a verdict
        page.wait_for_function(
            "() => [...document.querySelectorAll('.jp-OutputArea .js-plotly-plot')].some(e => e._fullData && "
            "e._fullData.length > 0)",
            timeout=FIRST_PLOT_MS,
            polling=250,
        )
        page.wait_for_selector(".jp-OutputArea .specviz-app", timeout=ACTION_MS)
        page.wait_for_function(
            "() => [...document.querySelectorAll('.jp-OutputArea [class*=specviz-verdict-]')].length > 0",
            timeout=FIRST_PLOT_MS,
            polling=250,
        )
        save_shot(page, screenshot_dir, "notebook7-tutorial-07")
        problems.assert_none(known=NOTEBOOK7_KNOWN_ERRORS)
    finally:
        page.close()


# ----------------------------------------------------------------------------- load time (no browser)


@pytest.mark.parametrize(
    "start",
    [
        "import specviz.widgets as w\napp = w.money_diagram_app()\n",
        # every tutorial's first cell: the renderer it registers imports plotly.io -> nbformat -> jsonschema
        "import specviz as sv\nsv.notebook_setup(lang='en', static=False)\nsv.money_diagram(sv.TUTORIAL_P, sv.TUTORIAL_Q)\n",
    ],
    ids=["first FigureWidget", "notebook_setup"],
)
def test_figurewidget_import_leaves_rfc3987_grammars_for_later(start):
    """specviz.widgets and notebook_setup keep the first figure from compiling rfc3987_syntax's ~40 lark
    grammars (2.5-5 s of the dashboard kernel's start, ~1.3 s of each notebook's), and jsonschema's "iri"
    format check still works."""
    code = (
        "import sys\n" + start + "print('lark' in sys.modules)\n"
        "import jsonschema\n"
        "fc = jsonschema.FormatChecker()\n"
        "print(fc.conforms('http://example.com/\u00e4', 'iri'), fc.conforms('::not an iri', 'iri'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.split()
    assert lines[0] == "False", "a FigureWidget imported lark (rfc3987_syntax) eagerly"
    try:
        import rfc3987_syntax  # noqa: F401
    except ImportError:
        return  # without it jsonschema has no iri check either
    assert lines[1:] == ["True", "False"], out.stdout
