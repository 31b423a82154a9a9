"""The static site (`make site`, tools/build_site.py) in Chromium: every page shows its figures and formulas, offline.

The site is built once into a temporary folder (about 10 minutes on 2 cores; set $SPECVIZ_SITE to a
folder `make site` built to check that one instead) and served from 127.0.0.1. On every page:

- every <img> has loaded (naturalWidth > 0), and the number of outputs showing an image equals the
  number of figure outputs (plotly figures, apps, images) the executed notebook holds (pages.json);
- MathJax has typeset every formula (as many rendered spans as math scripts, no TeX errors) and no
  raw TeX (``$$``, ``\\frac``, ``$x$``) is left in the visible text of the markdown cells;
- every relative link leads to a file of the site;
- no request goes to any host but 127.0.0.1/localhost: such requests are recorded and aborted.

`test_the_check_catches_a_broken_page` shows the check fails on a page with a broken image and
MathJax from a CDN. Chromium as in conftest.py: skipped without it locally, failing under CI=true.
"""

from __future__ import annotations

import base64
import doctest
import functools
import json
import os
import sys
import threading
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlparse

import nbformat
import pytest
from conftest import CHROMIUM_ARGS, REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "tools"))
import build_site  # noqa: E402


def browser_test(fn):
    """Marks a test that drives Chromium (and builds or serves the site)."""
    return pytest.mark.browser(pytest.mark.slow(fn))


LOCAL_HOSTS = {"127.0.0.1", "localhost"}
PAGE_MS = 120_000
PAGES = [f"{lang}/{p.stem}.html" for lang, p in build_site.notebooks()]
# A 2 x 2 PNG, for the self-check page.
TINY_PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8Dwn4GBgYGJgYGBAQArBwMBOWi6VgAAAABJRU5ErkJggg=="
)

# What a page shows, read after MathJax has finished.
READ_PAGE_JS = r"""
async () => {
  if (window.MathJax && MathJax.Hub) await new Promise(done => MathJax.Hub.Queue(done));
  const imgs = [...document.querySelectorAll('img')];
  const children = [...document.querySelectorAll('.jp-OutputArea-child')];
  const raw = [...document.querySelectorAll('.jp-MarkdownCell .jp-RenderedMarkdown')].map(el => {
    const copy = el.cloneNode(true);
    copy.querySelectorAll('code, pre, script, .MathJax, .MathJax_Display, .MathJax_Preview').forEach(e => e.remove());
    const m = copy.textContent.match(/\$\$|\\[a-zA-Z]+|\$[^$\n]{1,200}\$/);
    return m ? m[0] : null;
  }).filter(Boolean);
  const links = [...document.querySelectorAll('a[href]')].filter(a => !/^(#|[a-z]+:)/i.test(a.getAttribute('href')))
    .map(a => new URL(a.href).pathname);
  return {
    links,
    mathjax: !!(window.MathJax && MathJax.Hub),
    images: imgs.length,
    broken: imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => (i.alt || i.src).slice(0, 60)),
    figureOutputs: children.filter(c => c.querySelector('img')).length,
    mathScripts: document.querySelectorAll('script[type^="math/tex"]').length,
    mathRendered: document.querySelectorAll('span.MathJax').length,
    mathErrors: document.querySelectorAll('.merror, .MathJax_Error').length,
    raw,
  };
}
"""


@contextmanager
def serve(folder: Path):
    """`folder` over HTTP on 127.0.0.1 (a free port); yields the base URL."""
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(folder))
    handler.log_message = lambda *a, **k: None
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser(chromium_executable):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        instance = pw.chromium.launch(executable_path=chromium_executable, args=CHROMIUM_ARGS, headless=True)
        try:
            yield instance
        finally:
            instance.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    prebuilt = os.environ.get("SPECVIZ_SITE")
    if prebuilt:
        return Path(prebuilt)
    out = tmp_path_factory.mktemp("site")
    build_site.build(out, jobs=2)
    return out


@pytest.fixture(scope="module")
def served(site):
    with serve(site) as url:
        yield (
            url,
            {p["href"]: p for p in json.loads((site / "_static" / "pages.json").read_text(encoding="utf-8"))},
            site,
        )


def open_page(browser, url: str) -> tuple[dict, list[str]]:
    """Load `url`; what it shows (READ_PAGE_JS) and its problems (outside requests, errors, failed loads)."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    problems: list[str] = []

    def route(r):
        parsed = urlparse(r.request.url)
        if parsed.scheme in ("http", "https") and parsed.hostname not in LOCAL_HOSTS:
            problems.append(f"request to another host: {r.request.url}")
            r.abort()
        else:
            r.continue_()

    page.route("**/*", route)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on(
        "requestfailed",
        lambda r: urlparse(r.url).hostname in LOCAL_HOSTS and problems.append(f"failed: {r.url} {r.failure}"),
    )
    try:
        page.goto(url, wait_until="load", timeout=PAGE_MS)
        page.set_default_timeout(PAGE_MS)
        shown = page.evaluate(READ_PAGE_JS)
    finally:
        page.close()
    return shown, problems


def page_problems(shown: dict, figures: int, math: int, folder: Path) -> list[str]:
    """What is wrong with a page that showed `shown`, given its notebook's figure outputs and math spans
    and the `folder` the site is served from (relative links must lead to its files)."""
    problems = []
    dead = sorted({link for link in shown["links"] if not (folder / link.lstrip("/")).is_file()})
    if dead:
        problems.append(f"links to missing pages: {dead}")
    if shown["broken"]:
        problems.append(f"images not shown: {shown['broken']}")
    if shown["figureOutputs"] != figures:
        problems.append(f"{shown['figureOutputs']} outputs show an image, the notebook has {figures} figure outputs")
    if math and not (shown["mathjax"] and shown["mathRendered"] > 0):
        problems.append("no formula rendered (MathJax missing or idle)")
    if shown["mathRendered"] != shown["mathScripts"] or shown["mathErrors"]:
        problems.append(
            f"{shown['mathRendered']} of {shown['mathScripts']} formulas rendered, {shown['mathErrors']} TeX errors"
        )
    if shown["raw"]:
        problems.append(f"raw TeX in the text: {shown['raw'][:5]}")
    return problems


def test_builder_docstring_examples():
    result = doctest.testmod(build_site)
    assert result.attempted > 0 and result.failed == 0


@browser_test
def test_index_links_every_page(browser, served):
    url, pages, _ = served
    page = browser.new_page()
    try:
        page.goto(url + "index.html")
        links = set(page.eval_on_selector_all("a", "els => els.map(a => a.getAttribute('href'))"))
    finally:
        page.close()
    assert set(pages) <= links, f"index.html does not link {sorted(set(pages) - links)}"
    assert set(pages) == set(PAGES), f"built {sorted(pages)}, expected {PAGES}"


@browser_test
@pytest.mark.parametrize("href", PAGES)
def test_page_shows_figures_and_formulas(browser, served, href):
    url, pages, site = served
    entry = pages[href]
    assert not entry["problems"], f"{entry['source']} did not build cleanly: {entry['problems']}"
    shown, problems = open_page(browser, url + href)
    problems += page_problems(shown, entry["figures"], entry["math"], site)
    assert not problems, f"{href}: {problems}"
    if entry["math"]:
        assert shown["mathRendered"] > 0


@browser_test
def test_the_check_catches_a_broken_page(browser, tmp_path):
    """A good page passes; the same page with a broken image, MathJax from a CDN and a dead link fails."""
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("# Self-check\n\n$$\\frac{1}{2} = \\min(p, q)$$ and $x$."),
            nbformat.v4.new_code_cell(
                "fig", outputs=[nbformat.v4.new_output("display_data", data={"image/png": TINY_PNG})]
            ),
        ]
    )
    build_site.copy_mathjax(tmp_path)
    (tmp_path / "en").mkdir()
    good = build_site.export_html(nb, "en", None)
    bad = (
        good.replace(TINY_PNG, base64.b64encode(b"not a png").decode())
        .replace(build_site.MATHJAX_URL, "https://cdn.example.invalid/MathJax.js")
        .replace("</main>", '<a href="missing.html">a dead link</a></main>')
    )
    (tmp_path / "index.html").write_text("<!DOCTYPE html><title>index</title>", encoding="utf-8")
    (tmp_path / "en" / "good.html").write_text(good, encoding="utf-8")
    (tmp_path / "en" / "bad.html").write_text(bad, encoding="utf-8")
    with serve(tmp_path) as url:
        shown, problems = open_page(browser, url + "en/good.html")
        assert not problems + page_problems(shown, figures=1, math=2, folder=tmp_path)
        assert shown["mathRendered"] == 2
        shown, problems = open_page(browser, url + "en/bad.html")
    found = " | ".join(problems + page_problems(shown, figures=1, math=2, folder=tmp_path))
    for expected in ("request to another host", "images not shown", "raw TeX", "no formula rendered", "missing pages"):
        assert expected in found, f"the check missed {expected!r}: {found}"
