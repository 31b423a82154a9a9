"""Sphinx configuration of the book (both languages). Run through tools/book.py (`make site`), which
sets SPECVIZ_BOOK_LANG (en or zh), SPECVIZ_NB_CACHE (the jupyter-cache holding every executed
notebook) and SPECVIZ_BOOK_SKIP (notebooks that failed to execute: built without outputs)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))
import book  # noqa: E402

LANG = os.environ.get("SPECVIZ_BOOK_LANG", "en")
T = book.TEXTS[LANG]


def repository_url() -> str:
    """The GitHub repository for the Binder and repository buttons: $SPECVIZ_REPOSITORY, else the origin
    remote when it is on GitHub, else "" (no public address yet: the book then shows neither button, never
    one that leads to a placeholder)."""
    url = os.environ.get("SPECVIZ_REPOSITORY", "")
    if not url:
        try:
            url = subprocess.run(
                ["git", "remote", "get-url", "origin"], cwd=REPO, capture_output=True, text=True, check=False
            ).stdout.strip()
        except OSError:
            url = ""
    m = re.search(r"github\.com[:/]([\w.-]+)/([\w.-]+?)(?:\.git)?$", url)
    return f"https://github.com/{m[1]}/{m[2]}" if m else ""


project = "specviz"
author = "specviz contributors"
copyright = "specviz contributors"
language = "en" if LANG == "en" else "zh_CN"
html_title = T["title"]
root_doc = "index"
extensions = ["myst_nb"]
exclude_patterns = ["*.ipynb"]  # the .ipynb twins are there for the Binder button; Sphinx reads the .md

# MyST: $...$ and $$...$$ math, ::: fences; the notebooks' own heading anchors.
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3
myst_dmath_double_inline = True  # $$...$$ inside a list item or a paragraph is display math too

# myst-nb: outputs come from the cache tools/book.py filled (nothing is executed here).
nb_execution_mode = "cache"
nb_execution_cache_path = os.environ.get("SPECVIZ_NB_CACHE", str(REPO / "build" / "jupyter_cache" / "unset"))
CLEAN = json.loads(os.environ.get("SPECVIZ_BOOK_CLEAN", "[]"))  # shown from the source: not executed, on purpose
nb_execution_excludepatterns = json.loads(os.environ.get("SPECVIZ_BOOK_SKIP", "[]")) + CLEAN
nb_execution_timeout = book.CELL_TIMEOUT_S
nb_execution_raise_on_error = False
nb_ipywidgets_js = {}  # no widget manager from a CDN: apps show their static snapshot
# Pictures first: a plotly figure shows its PNG (not plotly's HTML, which loads plotly.js), an app its
# HTML snapshot (it has no PNG); widget views and scripts are never rendered.
nb_mime_priority_overrides = [
    ("html", "application/vnd.jupyter.widget-view+json", None),
    ("html", "application/javascript", None),
    ("html", "image/png", 21),
    ("html", "image/jpeg", 22),
    ("html", "image/svg+xml", 23),
]
nb_merge_streams = True
suppress_warnings = ["mystnb.unknown_mime_type"]  # the plotly JSON and widget views left out above

# Math typeset offline: MathJax 2.7 served from the site's own _static/mathjax (tools/book.py copies it).
myst_update_mathjax = False  # its settings are for MathJax 3
mathjax_path = book.MATHJAX_URL
mathjax2_config = {
    "tex2jax": {"inlineMath": [["$", "$"], ["\\(", "\\)"]], "processEscapes": True},
    # jupyter-server-mathjax ships the STIX web fonts only (as Jupyter's own MathJax settings use)
    "HTML-CSS": {"availableFonts": [], "preferredFont": None, "webFont": "STIX-Web", "imageFont": None},
    "messageStyle": "none",
}

html_theme = "sphinx_book_theme"
html_static_path = ["_static"]
html_js_files = ["chinese-stemmer.js"] if LANG == "zh" else []  # see the file; Chinese words: jieba
html_last_updated_fmt = None
html_copy_source = True
REPOSITORY = repository_url()
html_theme_options = {
    "repository_branch": "HEAD",
    "path_to_docs": "notebooks" if LANG == "en" else "notebooks/zh",
    "use_download_button": True,
    "use_repository_button": bool(REPOSITORY),
    "use_fullscreen_button": False,
    "home_page_in_toc": True,
    "show_navbar_depth": 1,
}
if REPOSITORY:  # the repository and Binder buttons, only where they lead somewhere
    html_theme_options["repository_url"] = REPOSITORY
    html_theme_options["launch_buttons"] = {"binderhub_url": "https://mybinder.org", "notebook_interface": "jupyterlab"}

# Links between notebooks, written for Jupyter (NAME.ipynb), made links between pages.
LINK = re.compile(r"\[([^\]\n]+)\]\((\.\./|zh/)?([\w.-]+)\.(ipynb|md)(#[^)\s]*)?\)")
# Any other relative link (a file of the repository that is not a page: CONTRIBUTING.md, jupytext.toml)
OTHER_LINK = re.compile(r"(?<!!)\[([^\]\n]+)\]\((?![a-z]+:|#)([^)\s]+)\)")


def relink(text: str, lang: str) -> str:
    """Markdown links to notebooks and documents as HTML links to their pages: NAME.ipynb -> NAME.html,
    ../NAME.ipynb (Chinese to English) -> ../en/NAME.html, zh/NAME.ipynb -> ../zh/NAME.html, README.md (the
    notebook map) -> README.html; the dashboard (not a page) -> the index; a link to a file that is no page
    -> its label, as text (the book has no repository to link to).

    >>> relink("see [6](06_worked_examples.ipynb#top) and [map](README.md#fidelity)", "en")
    'see <a href="06_worked_examples.html#top">6</a> and <a href="README.html#fidelity">map</a>'
    >>> relink("[d](../dashboard.ipynb) [e](../06_worked_examples.ipynb) [m](../README.md)", "zh")
    '<a href="index.html#dashboard">d</a> <a href="../en/06_worked_examples.html">e</a> <a href="../en/README.html">m</a>'
    >>> relink("[c](../CONTRIBUTING.md), [`t.toml`](t.toml), [w](https://x.org), ![i](a.png)", "en")
    'c, `t.toml`, [w](https://x.org), ![i](a.png)'
    """
    folders = {"": "en", "zh/": "zh"} if lang == "en" else {"": "zh", "../": "en"}

    def page(m):
        label, folder, stem, anchor = m[1], m[2] or "", m[3], m[5] or ""
        target = folders.get(folder)
        if stem == "dashboard":
            return f'<a href="index.html#dashboard">{label}</a>'
        if target is None or not (book.LANGS[target] / f"{stem}.md").exists():
            return label
        prefix = "" if target == lang else f"../{target}/"
        return f'<a href="{prefix}{stem}.html{anchor}">{label}</a>'

    return OTHER_LINK.sub(lambda m: m[1], LINK.sub(page, text))


def _source_read(app, docname, source):
    source[0] = relink(source[0], LANG)


def _twin_button(app, pagename, templatename, context, doctree):
    """A header button to the same page in the other language (when it exists)."""
    other = book.OTHER[LANG]
    if pagename != "index" and not (book.LANGS[other] / f"{pagename}.md").exists():
        return
    buttons = context.get("header_buttons")
    if buttons is not None:
        buttons.insert(
            0,
            {
                "type": "link",
                "url": f"../{other}/{pagename}.html",
                "text": T["twin"],
                "tooltip": T["twin"],
                "icon": "fas fa-language",
                "label": "twin-language-button",
            },
        )


def _executed_notebook(app, pagename, templatename, context, doctree):
    """Put the executed notebook where sphinx-book-theme takes its ".ipynb" download from (myst-nb 1.4 in
    cache mode writes the notebook without its outputs there)."""
    source = Path(app.srcdir) / f"{pagename}.md"
    if pagename == "index" or not source.exists() or source.name in book.DOCUMENTS:
        return
    target = Path(app.outdir).parent / "jupyter_execute" / f"{pagename}.ipynb"
    if source.name in CLEAN:  # a page shown unexecuted offers the committed notebook (no outputs), as Binder opens it
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source.with_suffix(".ipynb"), target)
        return
    nb = book.executed(source, Path(nb_execution_cache_path))
    if nb is None:  # not in this cache: never offer the outputs of an earlier build
        target.unlink(missing_ok=True)
        return
    import nbformat

    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(target))


def _ipynb_download(app, pagename, templatename, context, doctree):
    """Offer the executed notebook as the ".ipynb" download when there are no launch buttons (no public
    repository yet): sphinx-book-theme copies it into _sources only while setting those buttons up."""
    if REPOSITORY or pagename == "index":
        return
    executed = Path(app.outdir).parent / "jupyter_execute" / f"{pagename}.ipynb"
    if executed.exists():
        target = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(executed, target)
        context["ipynb_source"] = f"{pagename}.ipynb"


def setup(app):
    app.connect("html-page-context", _executed_notebook, priority=100)
    app.connect("html-page-context", _ipynb_download, priority=500)  # before the theme's header buttons (501)
    app.connect("source-read", _source_read)
    app.connect("html-page-context", _twin_button, priority=900)
