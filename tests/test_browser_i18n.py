"""`specviz dashboard --lang zh` in Chromium: Chinese tabs and figures, and the page's language toggle.

Starts the dashboard exactly as a user does (`python -m specviz dashboard --lang zh`), loads it in
Debian's Chromium (the fixtures and helpers of tests/test_browser.py), and checks that the tab
titles and the first figure's title and axis title are the catalogue's Chinese text; that a click
on "English" rebuilds the page in English (tabs, explanation, figure) and a click on "中文"
brings the Chinese back; and that no page error happened. A screenshot of each language goes to
the screenshot folder (Chinese glyphs need a CJK font: fonts-wqy-microhei).
"""

from __future__ import annotations

import os
import re
import sys
import time

import pytest
from conftest import REPO_ROOT, free_port
from test_browser import (  # noqa: F401 - chromium and screenshot_dir are fixtures used below
    FIRST_PLOT_MS,
    HELPERS_JS,
    PageProblems,
    Server,
    browser_test,
    chromium,
    save_shot,
    screenshot_dir,
    sv,
    wait_sv,
)

from specviz.foundation.i18n import t
from specviz.widgets.dashboard import DASHBOARD_TABS, REAL_MODELS_TAB

CJK = re.compile(r"[\u3400-\u9fff]")
TAB_KEYS = [key for key, _, _ in DASHBOARD_TABS] + [REAL_MODELS_TAB[0]]

FIRST_FIGURE_JS = """() => {
  const el = [...document.querySelectorAll('.js-plotly-plot')].find(e => e.getClientRects().length && e._fullLayout);
  if (!el) return null;
  const L = el._fullLayout;
  return {title: L.title.text, xaxis: L.xaxis.title.text, names: el._fullData.map(d => d.name)};
}"""


def tab_titles(page) -> list[str]:
    return [x.strip() for x in page.locator(".lm-TabBar-tab").all_inner_texts()]


def wait_language(page, lang: str) -> dict:
    """Wait until tabs, explanation and the money diagram are all in `lang`; returns the figure's texts."""
    want = {
        "tabs": [t(k, lang=lang) for k in TAB_KEYS],
        "title": t("money.title", lang=lang),
        "xaxis": t("figure.token", lang=lang),
        "explanation": t("dashboard.money_text", lang=lang)[:20],
    }
    page.wait_for_function(
        """(want) => {
          const tabs = [...document.querySelectorAll('.lm-TabBar-tab')].map(e => e.innerText.trim());
          const ex = [...document.querySelectorAll('.specviz-tab-explanation')].find(e => e.getClientRects().length);
          const el = [...document.querySelectorAll('.js-plotly-plot')].find(e => e.getClientRects().length && e._fullLayout);
          return JSON.stringify(tabs) === JSON.stringify(want.tabs) && ex && ex.textContent.includes(want.explanation)
            && el && el._fullLayout.title.text === want.title && el._fullLayout.xaxis.title.text === want.xaxis;
        }""",
        arg=want,
        timeout=FIRST_PLOT_MS,
        polling=100,
    )
    return page.evaluate(FIRST_FIGURE_JS)


@pytest.fixture(scope="module")
def zh_dashboard(chromium, tmp_path_factory):  # noqa: F811 - the fixture imported above
    """`specviz dashboard --lang zh` on a free port, and a page that loaded it: {page, problems, load_s}."""
    log_dir = tmp_path_factory.mktemp("server-logs-zh")
    env = dict(os.environ)
    env.pop("SPECVIZ_LANG", None)  # the language comes from --lang only
    env["JUPYTER_CONFIG_DIR"] = str(tmp_path_factory.mktemp("jupyter-config-zh"))
    port = free_port()
    cmd = [sys.executable, "-m", "specviz", "dashboard", "--lang", "zh", "--port", str(port)]
    server = Server("voila-zh", cmd, REPO_ROOT, log_dir, env=env)
    try:
        url = f"http://127.0.0.1:{port}/"
        server.wait_http(url + "voila/static/voila.js")
        page = chromium.new_page()
        problems = PageProblems(page)
        t0 = time.monotonic()
        page.goto(url, timeout=FIRST_PLOT_MS, wait_until="commit")
        page.wait_for_function(
            "() => [...document.querySelectorAll('.js-plotly-plot')].some(e => e._fullData && e._fullData.length)",
            timeout=FIRST_PLOT_MS,
            polling=100,
        )
        load_s = time.monotonic() - t0
        page.evaluate(HELPERS_JS)
        yield {"page": page, "problems": problems, "load_s": load_s, "server": server}
        page.close()
    finally:
        server.stop()


@browser_test
def test_dashboard_lang_zh_shows_chinese_and_the_toggle_switches(zh_dashboard, screenshot_dir):  # noqa: F811
    page, problems = zh_dashboard["page"], zh_dashboard["problems"]
    fig = wait_language(page, "zh")
    tabs = tab_titles(page)
    assert all(CJK.search(x) for x in tabs), tabs
    # the x axis says "token" in both languages (notebooks/zh/GLOSSARY.md keeps the English word): the title and
    # the legend carry the Chinese
    assert CJK.search(fig["title"]) and fig["xaxis"] == t("figure.token", lang="zh") == "token", fig
    assert any(CJK.search(n or "") for n in fig["names"]), fig["names"]
    page.wait_for_selector(
        ".specviz-dashboard[lang='zh-CN']", state="attached", timeout=FIRST_PLOT_MS
    )  # for screen readers
    assert sv(page, "sv.text('.specviz-p-accept')") == "0.800"  # the numbers do not change with the language
    save_shot(page, screenshot_dir, "voila-zh")

    toggle = page.locator(".specviz-language button")
    assert [x.strip() for x in toggle.all_inner_texts()] == ["English", "中文"]
    toggle.filter(has_text="English").click()
    fig = wait_language(page, "en")
    assert fig["title"].startswith("The money diagram") and fig["xaxis"] == "token"
    page.wait_for_selector(".specviz-dashboard[lang='en']", state="attached", timeout=FIRST_PLOT_MS)
    wait_sv(page, "sv.text('.specviz-p-accept') === '0.800' && sv.dist('p').length === 3")
    save_shot(page, screenshot_dir, "voila-zh-toggled-en")

    toggle.filter(has_text="中文").click()
    fig = wait_language(page, "zh")
    assert fig["title"] == t("money.title", lang="zh")
    wait_sv(page, "sv.text('.specviz-p-accept') === '0.800' && sv.dist('p').length === 3")
    problems.assert_none()
    print(f"zh dashboard: first plot {zh_dashboard['load_s']:.1f} s after navigation")
