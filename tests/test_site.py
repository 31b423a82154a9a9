"""The book (`make site`, tools/book.py: Sphinx + myst-nb + sphinx-book-theme) in Chromium, offline.

The book is built once into a temporary folder from the executed notebooks in the jupyter-cache
(tests/test_notebooks.py fills it first under `make test`, so nothing is executed twice; set
$SPECVIZ_SITE to a folder `make site` built to check that one instead) and served from 127.0.0.1.

- every page, both languages: every <img> has loaded (naturalWidth > 0), and as many outputs show an
  image as the executed notebook has figure outputs (plotly figures, apps, images: pages.json);
  MathJax has typeset every formula (as many rendered spans as math scripts, no TeX errors) and no raw
  TeX (``$$``, ``\\frac``, ``$x$``) is left in the visible prose; every relative link leads to a file
  of the site; previous/next lead to the neighbouring pages in reading order; the page offers its
  executed notebook (.ipynb, with outputs) for download and a Binder launch link. The suite's book
  executes every English notebook and one Chinese twin whole (`book.SUITE_ZH`); the other twins,
  whose code equals the English (tests/test_notebooks.py), are shown from their source and offer
  their committed notebook; `make site` executes every page (check it with $SPECVIZ_SITE);
- clicking "next" and "previous" moves between tutorials;
- a search for "residual" finds the proof notebook (05) in each language;
- no request goes to any host but 127.0.0.1/localhost: such requests are recorded and aborted.

`test_the_check_catches_a_broken_page` shows the checks fail on a page with a broken image, MathJax
from a CDN and a dead link. Chromium as in conftest.py: skipped without it locally, failing under CI=true.
"""

from __future__ import annotations

import doctest
import functools
import importlib.util
import json
import os
import sys
import threading
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlparse

import pytest
from conftest import CHROMIUM_ARGS, REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "tools"))
import book  # noqa: E402


def book_repository() -> str:
    """The repository address the book's buttons use (docs/book/conf.py: "" before one is public)."""
    spec = importlib.util.spec_from_file_location("_specviz_book_conf", REPO_ROOT / "docs" / "book" / "conf.py")
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    return conf.REPOSITORY


BOOK_REPOSITORY = book_repository()


def browser_test(fn):
    """Marks a test that drives Chromium (and builds or serves the book)."""
    return pytest.mark.browser(pytest.mark.slow(pytest.mark.timeout(1800)(fn)))


LOCAL_HOSTS = {"127.0.0.1", "localhost"}
PAGE_MS = 120_000
ORDER = {lang: ["index", *(p.stem for p in book.pages(lang))] for lang in book.LANGS}
PAGES = [f"{lang}/{stem}.html" for lang, stems in ORDER.items() for stem in stems[1:]]
PROOF = "05_the_proof_in_three_steps"

# What a page shows, read after MathJax has finished.
READ_PAGE_JS = r"""
async () => {
  if (window.MathJax && MathJax.Hub) await new Promise(done => MathJax.Hub.Queue(done));
  const article = document.querySelector('article.bd-article') || document.body;
  const imgs = [...document.querySelectorAll('img')];
  const outputs = [...article.querySelectorAll('.cell_output > *')];
  const prose = article.cloneNode(true);
  prose.querySelectorAll('.cell, code, pre, script, .MathJax, .MathJax_Display, .MathJax_Preview, .headerlink')
    .forEach(e => e.remove());
  const raw = prose.textContent.match(/\$\$|\\[a-zA-Z]+|\$[^$\n]{1,200}\$/g) || [];
  const links = [...document.querySelectorAll('a[href]')].filter(a => !/^(#|[a-z]+:)/i.test(a.getAttribute('href')))
    .map(a => new URL(a.href).pathname);
  const href = sel => { const a = document.querySelector(sel); return a ? a.getAttribute('href') : null; };
  return {
    links,
    mathjax: !!(window.MathJax && MathJax.Hub),
    images: imgs.length,
    broken: imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => (i.alt || i.src).slice(0, 60)),
    figureOutputs: outputs.filter(o => o.matches('img') || o.querySelector('img')).length,
    mathScripts: document.querySelectorAll('script[type^="math/tex"]').length,
    mathRendered: document.querySelectorAll('span.MathJax').length,
    mathErrors: document.querySelectorAll('.merror, .MathJax_Error').length,
    raw: raw.slice(0, 5),
    prev: href('a.left-prev'),
    next: href('a.right-next'),
    download: [...document.querySelectorAll('a[href$=".ipynb"]')].map(a => a.getAttribute('href')),
    binder: [...document.querySelectorAll('a[href^="https://mybinder.org/"]')].map(a => a.getAttribute('href')),
    placeholder: [...document.querySelectorAll('a[href*="/OWNER/"]')].map(a => a.getAttribute('href')),
  };
}
"""


@contextmanager
def serve(folder: Path, overlay: Path | None = None):
    """`folder` over HTTP on 127.0.0.1 (a free port), files in `overlay` first; yields the base URL."""

    class Handler(SimpleHTTPRequestHandler):
        def translate_path(self, path):
            found = super().translate_path(path)
            if overlay is not None:
                mine = overlay / Path(found).relative_to(folder.resolve())
                if mine.is_file():
                    return str(mine)
            return found

        def log_message(self, *args, **kwargs):
            pass

    handler = functools.partial(Handler, directory=str(folder.resolve()))
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
def site(tmp_path_factory, notebook_jobs) -> Path:
    prebuilt = os.environ.get("SPECVIZ_SITE")
    if prebuilt:
        return Path(prebuilt)
    out = tmp_path_factory.mktemp("site")
    book.build(out, jobs=notebook_jobs, unexecuted=book.suite_unexecuted())  # the zh twins' code runs in English
    return out


@pytest.fixture(scope="module")
def served(site):
    with serve(site) as url:
        yield (
            url,
            {p["href"]: p for p in json.loads((site / "_static" / "pages.json").read_text(encoding="utf-8"))},
            site,
        )


def new_page(browser, problems: list[str]):
    """A browser tab that records (and aborts) requests to other hosts, page errors and failed loads."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})

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
    page.set_default_timeout(PAGE_MS)
    return page


def open_page(browser, url: str) -> tuple[dict, list[str]]:
    """Load `url`; what it shows (READ_PAGE_JS) and its problems (outside requests, errors, failed loads)."""
    problems: list[str] = []
    page = new_page(browser, problems)
    try:
        page.goto(url, wait_until="load", timeout=PAGE_MS)
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


def neighbours(href: str) -> tuple[str | None, str | None]:
    """The pages before and after `href` ("en/NAME.html") in its book's reading order (index first)."""
    lang, name = href.split("/")
    order = ORDER[lang]
    i = order.index(name[: -len(".html")])
    return f"{order[i - 1]}.html", (f"{order[i + 1]}.html" if i + 1 < len(order) else None)


def test_book_docstring_examples():
    spec = importlib.util.spec_from_file_location("book_conf", REPO_ROOT / "docs" / "book" / "conf.py")
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    for module in (book, conf):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0, module.__name__


def test_reading_order():
    """Both books: the fourteen tutorials in order, then the solutions; neighbours follow that order."""
    for lang, order in ORDER.items():
        tutorials = [s for s in order if s[:2].isdigit()]
        assert tutorials == sorted(tutorials) and len(tutorials) >= 14, (lang, order)
        assert order[1 : len(tutorials) + 1] == tutorials and "solutions" in order, (lang, order)
    assert neighbours(f"en/{PROOF}.html") == ("04_the_algorithm_and_theorem.html", "06_worked_examples.html")
    assert neighbours("en/01_why_lossless_and_notation.html")[0] == "index.html"


@browser_test
def test_index_links_every_page(browser, served):
    url, pages, site = served
    assert set(pages) == set(PAGES), f"built {sorted(pages)}, expected {PAGES}"
    clean = sorted(href for href, entry in pages.items() if not entry["executed"])
    expected = [] if os.environ.get("SPECVIZ_SITE") else sorted(f"zh/{p.stem}.html" for p in book.suite_unexecuted())
    assert clean == expected, f"pages shown unexecuted: {clean}, expected {expected}"
    assert f"zh/{Path(book.SUITE_ZH).stem}.html" not in clean  # one Chinese twin always runs whole
    for lang in book.LANGS:
        shown, problems = open_page(browser, f"{url}{lang}/index.html")
        linked = {Path(link).name for link in shown["links"]}
        missing = [p for p in PAGES if p.startswith(lang) and Path(p).name not in linked]
        assert not missing and not problems, f"{lang}/index.html: missing {missing}; {problems}"
    page = browser.new_page()
    try:
        page.goto(url + "index.html")
        links = set(page.eval_on_selector_all("a", "els => els.map(a => a.getAttribute('href'))"))
    finally:
        page.close()
    assert {"en/index.html", "zh/index.html"} <= links, links


@browser_test
@pytest.mark.parametrize("href", PAGES)
def test_page_shows_figures_formulas_and_neighbours(browser, served, href):
    url, pages, site = served
    entry = pages[href]
    assert not entry["problems"], f"{entry['source']} did not build cleanly: {entry['problems']}"
    shown, problems = open_page(browser, url + href)
    problems += page_problems(shown, entry["figures"], entry["math"], site)
    prev, next_ = neighbours(href)
    if (shown["prev"], shown["next"]) != (prev, next_):
        problems.append(f"previous/next lead to {shown['prev']}, {shown['next']}; expected {prev}, {next_}")
    stem = Path(href).stem
    if entry["document"]:  # the notebook map, the claims register: Markdown pages, no notebook behind them
        assert not problems, f"{href}: {problems}"
        return
    if f"_sources/{stem}.ipynb" not in shown["download"]:
        problems.append(f"no .ipynb download link: {shown['download']}")
    if BOOK_REPOSITORY and not any(b.endswith(f"{stem}.ipynb") for b in shown["binder"]):
        problems.append(f"no Binder link to the notebook: {shown['binder']}")
    if not BOOK_REPOSITORY and shown["binder"]:
        problems.append(f"Binder links without a public repository address: {shown['binder']}")
    if shown["placeholder"]:
        problems.append(f"links to the placeholder address OWNER: {shown['placeholder']}")
    assert not problems, f"{href}: {problems}"
    if entry["math"]:
        assert shown["mathRendered"] > 0
    download = json.loads((site / Path(href).parent / "_sources" / f"{stem}.ipynb").read_text(encoding="utf-8"))
    outputs = sum(len(c.get("outputs", [])) for c in download["cells"])
    assert outputs == entry["outputs"], f"{href}: the .ipynb offered for download holds {outputs} outputs"


@browser_test
def test_the_book_holds_the_notebook_map_the_fidelity_table_and_the_claims_register(browser, served):
    """Links to README.md in a tutorial lead to the map with its tables, not to the bare table of contents."""
    url, _, _ = served
    page = browser.new_page()
    try:
        for href, heading, rows in (
            ("en/README.html", "Fidelity to the source tutorial", 40),
            ("zh/README.html", None, 14),
            ("en/CLAIMS.html", "01 · Why lossless, and notation", 14 * 4),
        ):
            page.goto(url + href)
            headings = page.eval_on_selector_all("h1, h2, h3", "els => els.map(e => e.textContent)")
            count = page.eval_on_selector_all("table tbody tr", "els => els.length")
            assert count >= rows, f"{href}: {count} table rows, expected at least {rows}"
            if heading:
                assert any(heading in h for h in headings), f"{href}: no heading {heading!r} in {headings}"
        page.goto(url + "en/10_recap.html")
        back = page.eval_on_selector_all("a", "els => els.map(a => a.getAttribute('href'))")
        assert "README.html" in back, f"10's link back to the index does not lead to the map: {back}"
    finally:
        page.close()


@browser_test
@pytest.mark.parametrize("lang", list(book.LANGS))
def test_next_and_previous_move_between_tutorials(browser, served, lang):
    url, _, _ = served
    problems: list[str] = []
    page = new_page(browser, problems)
    try:
        page.goto(f"{url}{lang}/01_why_lossless_and_notation.html", wait_until="load")
        page.click("a.right-next")
        page.wait_for_url(f"**/{lang}/02_importance_sampling.html")
        page.click("a.right-next")
        page.wait_for_url(f"**/{lang}/03_rejection_sampling.html")
        page.click("a.left-prev")
        page.wait_for_url(f"**/{lang}/02_importance_sampling.html")
    finally:
        page.close()
    # a page left at once leaves its MathJax font loads aborted: not a problem here
    problems = [p for p in problems if not p.endswith("net::ERR_ABORTED")]
    assert not problems, problems


@browser_test
@pytest.mark.parametrize("lang", list(book.LANGS))
def test_search_finds_the_proof(browser, served, lang):
    """Sphinx's own search (an index shipped with the site, no server) finds the proof notebook."""
    url, _, _ = served
    problems: list[str] = []
    page = new_page(browser, problems)
    try:
        page.goto(f"{url}{lang}/search.html?q=residual", wait_until="load")
        page.wait_for_function(
            "name => [...document.querySelectorAll('#search-results a')].some(a => a.href.includes(name))",
            arg=PROOF,
            timeout=60_000,
        )
        found = page.eval_on_selector_all("#search-results a", "els => els.map(a => a.getAttribute('href'))")
    finally:
        page.close()
    assert any(PROOF in f for f in found), found
    assert not problems, problems


@browser_test
def test_the_check_catches_a_broken_page(browser, served, tmp_path):
    """The proof page passes; the same page with a broken image, MathJax from a CDN and a dead link fails."""
    url, pages, site = served
    good = (site / "en" / f"{PROOF}.html").read_text(encoding="utf-8")
    entry = pages[f"en/{PROOF}.html"]
    assert 'src="_images/' in good and book.MATHJAX_URL in good and "</article>" in good
    bad = (
        good.replace('src="_images/', 'src="_images/missing-', 1)
        .replace("_static/" + book.MATHJAX_URL, "https://cdn.example.invalid/MathJax.js")
        .replace("</article>", '<a href="missing.html">a dead link</a></article>', 1)
    )
    (tmp_path / "en").mkdir()
    (tmp_path / "en" / "good.html").write_text(good, encoding="utf-8")
    (tmp_path / "en" / "bad.html").write_text(bad, encoding="utf-8")
    with serve(site, overlay=tmp_path) as overlay_url:
        shown, problems = open_page(browser, overlay_url + "en/good.html")
        assert not problems + page_problems(shown, entry["figures"], entry["math"], site)
        shown, problems = open_page(browser, overlay_url + "en/bad.html")
    found = " | ".join(problems + page_problems(shown, entry["figures"], entry["math"], site))
    for expected in ("request to another host", "images not shown", "raw TeX", "no formula rendered", "missing pages"):
        assert expected in found, f"the check missed {expected!r}: {found}"
    assert url  # the site itself stays served
