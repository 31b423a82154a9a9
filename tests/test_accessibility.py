"""Accessibility of the Voila dashboard, in Chromium, in English and Chinese.

- axe-core (the copy shipped by the `axe-playwright-python` package, injected into the page)
  finds no WCAG 2 A/AA violation (tags wcag2a, wcag2aa, wcag21a, wcag21aa) on any tab;
- every control of the first tab is reached with the Tab key, a slider moves with ArrowRight
  (and the money diagram follows), buttons work with Enter and Space, and the dashboard tab
  changes with the keyboard;
- the γ-steps tab's figures use the tab's width, and the colour bar's title overlaps no
  tick label or axis title.

The dashboard is served exactly as a learner starts it: `specviz dashboard [--lang zh]`.
One server and one page per language, shared by the tests below (module-scoped fixture).
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import pytest
from conftest import CHROMIUM_ARGS, REPO_ROOT, free_port
from test_browser import FIRST_PLOT_MS, VIEWPORT, PageProblems, Server

pytestmark = [pytest.mark.slow, pytest.mark.browser]

LANGS = ("en", "zh")
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
# Selectors left out of the axe run, each with the reason. Empty: the whole page is checked,
# Voila's shell included; only a third-party violation we cannot fix from our page may go here.
AXE_EXCLUDE: list[str] = []
TAB_MS = 180_000  # building a tab (the Real models tab loads two small models) on a busy 2-core machine
ACTION_MS = 60_000
MAX_TAB_PRESSES = 80


def axe_source() -> str:
    """axe-core's JavaScript, from the `axe-playwright-python` package (a dev dependency)."""
    axe_pw = pytest.importorskip("axe_playwright_python", reason="pip install axe-playwright-python (the dev extra)")
    return (Path(axe_pw.__file__).parent / "axe.min.js").read_text(encoding="utf-8")


def dashboard_command(port: int, lang: str) -> list[str]:
    """`specviz dashboard` on `port`, in `lang` (English is the default: no flag)."""
    cmd = [sys.executable, "-m", "specviz", "dashboard", f"--port={port}"]
    return cmd + (["--lang", lang] if lang != "en" else [])


# The visible tab's body (explanation + app), its readiness, and what axe and the checks read.
PAGE_JS = r"""
() => {
  const visible = el => !!el && el.getClientRects().length > 0;
  const a11y = {
    visible,
    tabs: () => [...document.querySelectorAll('.specviz-dashboard-tabs .lm-TabBar-tab')],
    body() {
      const note = [...document.querySelectorAll('.specviz-tab-explanation')].find(visible);
      return note ? note.closest('.widget-html').parentElement : null;
    },
    // the visible tab is built, its figures drawn and its slider handles named
    ready() {
      const body = a11y.body();
      if (!body || !body.querySelector('.specviz-app, .specviz-error')) return false;
      const plots = [...body.querySelectorAll('.js-plotly-plot')];
      if (!plots.every(gd => gd._fullData && gd._fullData.length && gd.querySelector('.main-svg'))) return false;
      return [...body.querySelectorAll('.noUi-handle')].every(h => h.getAttribute('aria-label'));
    },
    state() {
      const body = a11y.body();
      if (!body) return 'no visible tab body';
      return {built: !!body.querySelector('.specviz-app, .specviz-error'),
              figures: [...body.querySelectorAll('.js-plotly-plot')].map(gd => !!(gd._fullData && gd._fullData.length)),
              unnamed: [...body.querySelectorAll('.noUi-handle')].filter(h => !h.getAttribute('aria-label')).length};
    },
    overlapY() {
      const gd = [...document.querySelectorAll('.js-plotly-plot')].find(visible);
      const t = gd && gd._fullData && gd._fullData.find(t => t.meta === 'overlap');
      return t ? Array.from(t.y, Number) : null;
    },
    opacity(meta) {
      const gd = [...document.querySelectorAll('.js-plotly-plot')].find(visible);
      const t = gd && gd._fullData && gd._fullData.find(t => t.meta === meta);
      return t ? t.opacity : null;
    },
    // the focused slider handle's value as a screen reader reads it (noUiSlider rounds aria-valuenow to 0.1)
    focusedValue() {
      const el = document.activeElement;
      return el ? el.getAttribute('aria-valuetext') : null;
    },
    // a stable description of the focused element
    focused() {
      const el = document.activeElement;
      if (!el || el === document.body) return null;
      const tab = el.closest('.lm-TabBar-tab');
      return {
        key: el.getAttribute('aria-label') || el.getAttribute('placeholder') || (el.textContent || '').trim() ||
             el.getAttribute('title') || el.tagName,
        tag: el.tagName, role: el.getAttribute('role') || '', inBody: !!(a11y.body() && a11y.body().contains(el)),
        isTab: !!tab, tabIndex: tab ? a11y.tabs().indexOf(tab) : -1,
      };
    },
    // the enabled controls of the visible tab, as `focused()` names them
    controls() {
      const body = a11y.body();
      const sel = '.noUi-handle, button:not([disabled]), input:not([disabled]):not([type=hidden]), select:not([disabled]), textarea:not([disabled])';
      return [...body.querySelectorAll(sel)].filter(visible)
        .map(el => el.getAttribute('aria-label') || el.getAttribute('placeholder') || (el.textContent || '').trim() ||
                   el.getAttribute('title') || el.tagName);
    },
  };
  window.__a11y = a11y;
  return true;
}
"""

RUN_AXE_JS = """
async ([tags, exclude]) => {
  const context = exclude.length ? {include: [document], exclude: exclude.map(s => [s])} : document;
  const result = await axe.run(context, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']});
  return result.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
    targets: v.nodes.map(n => n.target.join(' ')), summary: v.nodes.map(n => n.failureSummary)}));
}
"""


def a11y(page, expr: str, arg=None):
    return page.evaluate(f"(arg) => {{ const a = window.__a11y; return {expr}; }}", arg)


def wait_a11y(page, expr: str, arg=None, timeout: float = ACTION_MS) -> None:
    page.wait_for_function(
        f"(arg) => {{ const a = window.__a11y; return {expr}; }}", arg=arg, timeout=timeout, polling=100
    )


def open_tab(page, i: int) -> None:
    """Click dashboard tab `i` and wait until it is built, drawn and its sliders named."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.locator(".specviz-dashboard-tabs .lm-TabBar-tab").nth(i).click()
    try:
        wait_a11y(page, "a.ready()", timeout=TAB_MS)
    except PlaywrightTimeout:
        state = a11y(page, "a.state()")
        pytest.fail(f"tab {i} was not ready (built, drawn, sliders named) within {TAB_MS / 1000:.0f} s: {state}")


@pytest.fixture(scope="module", params=LANGS)
def dashboard(request, chromium_executable, tmp_path_factory):
    """`specviz dashboard --lang LANG` and one Chromium page on it: {page, problems, lang, load_s}."""
    from playwright.sync_api import sync_playwright

    lang = request.param
    port = free_port()
    log_dir = tmp_path_factory.mktemp(f"a11y-{lang}")
    server = Server(f"voila-{lang}", dashboard_command(port, lang), REPO_ROOT, log_dir)
    try:
        url = f"http://127.0.0.1:{port}/"
        server.wait_http(url + "voila/static/voila.js")
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium_executable, args=CHROMIUM_ARGS, headless=True)
            try:
                page = browser.new_page(viewport=VIEWPORT)
                problems = PageProblems(page)
                t0 = time.monotonic()
                page.goto(url, timeout=FIRST_PLOT_MS, wait_until="commit")
                page.wait_for_selector(".specviz-dashboard-tabs .lm-TabBar-tab", timeout=FIRST_PLOT_MS)
                page.evaluate(PAGE_JS)
                wait_a11y(page, "a.ready()", timeout=FIRST_PLOT_MS)
                yield {"page": page, "problems": problems, "lang": lang, "load_s": time.monotonic() - t0}
            finally:
                browser.close()
    finally:
        server.stop()


def test_keyboard_works_the_first_tab(dashboard):
    """Tab reaches every control; ArrowRight moves a slider (the figure follows); Enter, Space and the tab bar work."""
    page = dashboard["page"]
    open_tab(page, 0)
    wanted = set(a11y(page, "a.controls()"))
    assert wanted, "no controls found on the first tab"
    page.locator("h2").first.click()  # start the Tab walk at the top of the page
    seen: list[dict] = []
    for _ in range(MAX_TAB_PRESSES):
        page.keyboard.press("Tab")
        f = a11y(page, "a.focused()")
        if f is None:
            continue
        seen.append(f)
        if wanted <= {s["key"] for s in seen if s["inBody"]}:
            break
    reached = {s["key"] for s in seen if s["inBody"]}
    assert wanted <= reached, f"not reachable with Tab: {sorted(wanted - reached)} (reached {sorted(reached)})"
    sliders = [s for s in seen if s["inBody"] and s["role"] == "slider"]
    assert sliders, "no slider handle took the focus"

    def focus(key: str, forward: bool = True) -> None:
        """Tab (or Shift+Tab) until the element named `key` has the focus."""
        for _ in range(MAX_TAB_PRESSES):
            f = a11y(page, "a.focused()")
            if f and f["key"] == key:
                return
            page.keyboard.press("Tab" if forward else "Shift+Tab")
        pytest.fail(f"could not reach {key!r} with the keyboard")

    # a slider: ArrowRight moves it and the money diagram follows
    first_slider = sliders[0]["key"]
    before = a11y(page, "a.overlapY()")
    focus(first_slider, forward=False)
    value = a11y(page, "a.focusedValue()")
    page.keyboard.press("ArrowRight")
    # first the handle (in the page: the keyboard was honoured), then the figure (a round trip through the
    # kernel, which a busy 2-core CI machine running model tests beside it can hold up for a while)
    wait_a11y(page, "a.focusedValue() !== arg", value)
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    moved = "JSON.stringify(a.overlapY()) !== JSON.stringify(arg)"
    try:
        wait_a11y(page, moved, before)
    except PlaywrightTimeout:  # a second key press, as a user would make; then the figure must follow
        # Two fresh-clone CI runs of three (2026-12-06 and -07, slow lane beside model tests) saw the handle move
        # and no figure for 180 s after the first press, while the test passes alone in 44 s; the cause (a lost
        # update under load, or a starved kernel) is not found yet: issue 43's closing note
        warnings.warn(  # a passing test's prints are not shown; the warnings summary is
            "test_keyboard_works_the_first_tab: the figure did not follow the first ArrowRight in 60 s; pressed again",
            stacklevel=1,
        )
        page.keyboard.press("ArrowRight")
        wait_a11y(page, moved, before, timeout=TAB_MS)

    # buttons: Back with Enter (step 2 hides the residual), Next with Space (step 3 shows it)
    back = next(k for k in wanted if "◀" in k)
    focus(back, forward=True)
    page.keyboard.press("Enter")
    wait_a11y(page, "a.opacity('residual') === 0")
    # Next is enabled in the same update that hides the residual, but the figure and the button
    # are two widgets whose views redraw in turn: wait for the button rather than race it.
    wait_a11y(page, "a.controls().some(k => k.includes('▶'))")
    nxt = next(k for k in a11y(page, "a.controls()") if "▶" in k)  # enabled now
    focus(nxt, forward=True)
    page.keyboard.press("Space")
    wait_a11y(page, "a.opacity('residual') === 1")

    # the dashboard's tab bar: focus the current tab, ArrowRight then Enter selects the next one
    for _ in range(MAX_TAB_PRESSES):
        f = a11y(page, "a.focused()")
        if f and f["isTab"]:
            break
        page.keyboard.press("Shift+Tab")
    else:
        pytest.fail("the dashboard's tab bar never took the focus")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => document.querySelectorAll('.specviz-dashboard-tabs .lm-TabBar-tab')[1]"
        ".classList.contains('lm-mod-current')",
        timeout=ACTION_MS,
    )
    wait_a11y(page, "a.ready()", timeout=TAB_MS)
    dashboard["problems"].assert_none()


def test_axe_finds_no_wcag_violations_on_any_tab(dashboard):
    """axe-core, WCAG 2.0/2.1 A and AA rules, on the whole page with each tab open in turn."""
    page = dashboard["page"]
    page.add_script_tag(content=axe_source())
    n_tabs = page.locator(".specviz-dashboard-tabs .lm-TabBar-tab").count()
    assert n_tabs >= 6
    report, counts, timings = [], {}, {}
    for i in range(n_tabs):
        t0 = time.monotonic()
        open_tab(page, i)
        title = page.locator(".specviz-dashboard-tabs .lm-TabBar-tab").nth(i).inner_text().strip()
        violations = page.evaluate(RUN_AXE_JS, [AXE_TAGS, AXE_EXCLUDE])
        timings[title] = round(time.monotonic() - t0, 1)
        counts[title] = sum(len(v["targets"]) for v in violations)
        for v in violations:
            for target, summary in zip(v["targets"], v["summary"]):
                report.append(f"[{dashboard['lang']}] tab {title!r}: {v['id']} ({v['impact']}) {target}\n    {summary}")
    print(f"\naxe [{dashboard['lang']}] violations per tab: {counts}; seconds per tab: {timings}")
    assert not report, f"{len(report)} axe violations:\n" + "\n".join(report)
    dashboard["problems"].assert_none()


# the γ tab's figures (their element and drawing), the tab body's width, and the colour bar's boxes
GAMMA_BOXES_JS = r"""
() => {
  const a = window.__a11y, body = a.body();
  const box = el => { const r = el.getBoundingClientRect(); return {x: r.x, y: r.y, w: r.width, h: r.height}; };
  const figures = [...body.querySelectorAll('.js-plotly-plot')].filter(a.visible)
    .map(gd => ({el: box(gd), svg: box(gd.querySelector('.main-svg'))}));
  const heatmap = [...body.querySelectorAll('.js-plotly-plot')].find(gd =>
    gd._fullData && gd._fullData.some(t => t.meta === 'speedup'));
  const texts = sel => [...heatmap.querySelectorAll(sel)].filter(e => e.textContent.trim()).map(e =>
    Object.assign(box(e), {text: e.textContent.trim(), sel}));
  return {
    body: box(body), figures,
    cbtitle: texts('.colorbar .cbtitle text'),
    others: [...texts('.xtick text'), ...texts('.ytick text'), ...texts('.g-xtitle text'), ...texts('.g-ytitle text'),
             ...texts('.colorbar .cbaxis text'), ...texts('.colorbar .cbaxis .tick text')],
  };
}
"""


def overlaps(a: dict, b: dict) -> bool:
    return (
        a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"] and a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"]
    )


def test_gamma_tab_figures_use_the_width_and_labels_do_not_overlap(dashboard):
    page = dashboard["page"]
    titles = [t.strip() for t in page.locator(".specviz-dashboard-tabs .lm-TabBar-tab").all_inner_texts()]
    i = next(k for k, t in enumerate(titles) if t.startswith("γ"))
    open_tab(page, i)
    page.wait_for_timeout(500)  # the re-fit of figures drawn while hidden (specviz.widgets.a11y)
    boxes = page.evaluate(GAMMA_BOXES_JS)
    assert boxes["figures"], "no figure on the γ tab"
    for k, f in enumerate(boxes["figures"]):
        assert f["svg"]["w"] >= 0.9 * boxes["body"]["w"], (
            f"figure {k} on the γ tab is {f['svg']['w']:.0f} px wide in a {boxes['body']['w']:.0f} px tab"
        )
    assert boxes["cbtitle"], "the speedup colour bar has no title"
    for title in boxes["cbtitle"]:
        hit = [o for o in boxes["others"] if overlaps(title, o)]
        assert not hit, f"colour-bar title {title['text']!r} overlaps {[(o['sel'], o['text']) for o in hit]}"
    dashboard["problems"].assert_none()
