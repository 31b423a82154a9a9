"""Build the static site: every notebook executed and exported to HTML that needs no kernel and no internet.

    python tools/build_site.py [--out site] [--jobs 2] [--only 05_]      (`make site` runs it)

What it does, per notebook (notebooks/*.ipynb in English, notebooks/zh/*.ipynb in Chinese; not
dashboard.ipynb, a Voila app):

1. executes it headlessly with nbclient in the kernel "python3", with notebooks/ as the working
   directory for both languages (the code cells are the same), no widget state stored and no
   progress-bar widgets (HF_HUB_DISABLE_PROGRESS_BARS, TQDM_DISABLE);
2. keeps only the static form of each figure: `sv.notebook_setup` puts a PNG beside every plotly
   figure and an HTML snapshot (PNGs inside) beside every app's widget view. The plotly JSON and the
   widget view are dropped, so the page shows the picture; plotly.js and the widget manager (both
   from a CDN in nbconvert's templates) are not needed. A trade: the figures are not interactive;
3. exports it with nbconvert's "lab" template less its CDN scripts (tools/site_template/site.html.j2),
   MathJax 2.7 served from site/_static/mathjax (copied from the jupyter-server-mathjax package).

Then it writes site/index.html (every page in English and Chinese, titled by each notebook's first
heading) and site/_static/pages.json (per page: its figure outputs and math, which tests/test_site.py
checks in Chromium). Layout: site/index.html, site/en/NAME.html, site/zh/NAME.html, site/_static/.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import shutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = REPO / "notebooks"
TEMPLATE = Path(__file__).resolve().parent / "site_template" / "site.html.j2"
LANGS = {"en": NOTEBOOKS, "zh": NOTEBOOKS / "zh"}
OTHER = {"en": "zh", "zh": "en"}
LABELS = {"en": {"index": "← All notebooks", "twin": "中文版"}, "zh": {"index": "← 全部笔记本", "twin": "English"}}
EXCLUDED = {"dashboard.ipynb"}  # a Voila app: it needs a kernel (the index says how to start it)
MATHJAX_URL = "../_static/mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full,Safe"
PLOTLY = "application/vnd.plotly.v1+json"
WIDGET = "application/vnd.jupyter.widget-view+json"
STATIC_IMAGES = ("image/png", "image/svg+xml", "image/jpeg")
CELL_TIMEOUT_S = 600


def notebooks(only: str = "") -> list[tuple[str, Path]]:
    """(language, path) of every notebook the site shows, English first, in file-name order."""
    found = [(lang, p) for lang, d in LANGS.items() for p in sorted(d.glob("*.ipynb")) if p.name not in EXCLUDED]
    return [(lang, p) for lang, p in found if only in p.name]


def title_of(nb) -> str:
    """The text of the notebook's first heading ("untitled" when it has none).

    >>> title_of(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# 5 · The *proof*")]))
    '5 · The proof'
    """
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            match = re.search(r"^#\s+(.+)$", cell.source, re.M)
            if match:
                return re.sub(r"[*_`]", "", match.group(1)).strip()
    return nb.metadata.get("title", "untitled")


def is_figure(output) -> bool:
    """Whether an output is a figure: a plotly figure, a widget (an app) or an image; a guess box is not."""
    data = output.get("data", {})
    html = data.get("text/html", "")
    if "specviz-predict-static" in ("".join(html) if isinstance(html, list) else str(html)):
        return False  # a guess box (sv.predict): text with its answer folded, no picture
    return any(k in data for k in (PLOTLY, WIDGET, *STATIC_IMAGES))


def figure_title(fig: dict) -> str:
    """A plotly figure's title as plain text, for an image's alt text ("figure" when it has none).

    >>> figure_title({"layout": {"title": {"text": "<b>p</b> and q"}}})
    'p and q'
    """
    title = (fig.get("layout") or {}).get("title") or {}
    text = title.get("text") if isinstance(title, dict) else str(title)
    return re.sub(r"<[^>]+>", "", text or "").strip() or "figure"


def keep_static(nb) -> list[str]:
    """Drop the interactive forms (plotly JSON, widget views, scripts) from `nb`'s outputs, in place.

    Returns a problem per figure output left without a static form (no PNG or snapshot beside it).
    """
    problems = []
    for i, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            data = output.get("data")
            if not data:
                continue
            static = any(k in data for k in STATIC_IMAGES) or (WIDGET in data and "text/html" in data)
            if is_figure(output) and not static:
                problems.append(f"cell {i}: a figure output without a static image ({sorted(data)})")
            if PLOTLY in data:
                data.pop("text/html", None)  # plotly's own HTML loads plotly.js
                if "image/png" in data:
                    output.setdefault("metadata", {}).setdefault("image/png", {})["alt"] = figure_title(data[PLOTLY])
            for key in (PLOTLY, WIDGET, "application/javascript"):
                data.pop(key, None)
    nb.metadata.pop("widgets", None)
    return problems


def execute(nb, cwd: Path) -> None:
    """Run every cell of `nb` in place (kernel python3, working directory `cwd`)."""
    from nbclient import NotebookClient

    client = NotebookClient(
        nb,
        timeout=CELL_TIMEOUT_S,
        kernel_name="python3",
        store_widget_state=False,
        allow_errors=True,  # errors are reported per page (build_page), the rest of the page still runs
        resources={"metadata": {"path": str(cwd)}},
    )
    client.execute()


def export_html(nb, lang: str, twin: str | None) -> str:
    """`nb` as a page of the site (for site/<lang>/); `twin`: file name of the other language's page."""
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_file=str(TEMPLATE), mathjax_url=MATHJAX_URL, language_code=lang)
    labels = LABELS[lang]
    nav = {"index_label": labels["index"], "twin_label": labels["twin"], "twin_lang": OTHER[lang]}
    nav["twin_href"] = f"../{OTHER[lang]}/{twin}" if twin else ""
    body, _ = exporter.from_notebook_node(nb, resources={"sv_nav": nav, "metadata": {"name": title_of(nb)}})
    return relink(body)


def relink(body: str) -> str:
    """Links between notebooks made links between pages: NAME.ipynb -> NAME.html,
    ../NAME.ipynb (from notebooks/zh/) -> ../en/NAME.html, zh/NAME.ipynb -> ../zh/NAME.html; README.md
    and the dashboard (not a page) -> the index.

    >>> relink('<a href="06_x.ipynb#top">6</a> <a href="README.md">index</a> <a href="zh/06_x.ipynb">zh</a>')
    '<a href="06_x.html#top">6</a> <a href="../index.html">index</a> <a href="../zh/06_x.html">zh</a>'
    >>> relink('<a href="../README.md">i</a> <a href="../dashboard.ipynb">d</a> <a href="../06_x.ipynb">en</a>')
    '<a href="../index.html">i</a> <a href="../index.html#dashboard">d</a> <a href="../en/06_x.html">en</a>'
    """

    def page(m):
        up, folder, name, anchor = m[1], m[2], m[3], m[4] or ""
        if name == "README.md":
            return 'href="../index.html"'
        if name == "dashboard.ipynb":
            return 'href="../index.html#dashboard"'
        stem = name[: -len(".ipynb")]
        if folder or up:  # another language's page: zh/NAME from English, ../NAME from Chinese
            return f'href="../{"zh" if folder else "en"}/{stem}.html{anchor}"'
        return f'href="{stem}.html{anchor}"'

    return re.sub(r'href="(\.\./)?(zh/)?([\w.-]+\.ipynb|README\.md)(#[^"]*)?"', page, body)


def math_count(nb) -> int:
    """How many $...$ / $$...$$ spans the notebook's markdown holds (a rough count; 0 means no math)."""
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    return len(re.findall(r"\$\$.+?\$\$|\$[^$\n]+\$", text, re.S))


def build_page(lang: str, path: Path, out: Path, twin: str | None) -> dict:
    """Execute and export one notebook into out/<lang>/; its entry for pages.json."""
    start = time.monotonic()
    nb = nbformat.read(str(path), as_version=4)
    execute(nb, NOTEBOOKS)
    figures = sum(is_figure(o) for c in nb.cells for o in c.get("outputs", []))
    problems = keep_static(nb)
    errors = [
        f"{o.ename}: {o.evalue}"
        for c in nb.cells
        if "raises-exception" not in c.metadata.get("tags", [])
        for o in c.get("outputs", [])
        if o.output_type == "error"
    ]
    page = out / lang / path.name.replace(".ipynb", ".html")
    page.write_text(export_html(nb, lang, twin), encoding="utf-8")
    return {
        "lang": lang,
        "href": f"{lang}/{page.name}",
        "source": str(path.relative_to(REPO)),
        "title": title_of(nb),
        "figures": figures,
        "math": math_count(nb),
        "problems": problems + errors,
        "seconds": round(time.monotonic() - start, 1),
    }


def copy_mathjax(out: Path) -> None:
    """MathJax 2.7 from the jupyter-server-mathjax package into out/_static/mathjax."""
    import jupyter_server_mathjax

    source = Path(jupyter_server_mathjax.__file__).parent / "static"
    shutil.copytree(source, out / "_static" / "mathjax", dirs_exist_ok=True)


def index_html(pages: list[dict]) -> str:
    """The site's front page: a table of every notebook, English beside Chinese."""
    by_name: dict[str, dict[str, dict]] = {}
    for p in pages:
        by_name.setdefault(Path(p["href"]).name, {})[p["lang"]] = p

    def cell(p):
        return f'<a href="{p["href"]}">{html.escape(p["title"])}</a>' if p else "—"

    rows = "\n".join(
        f'<tr><td lang="en">{cell(v.get("en"))}</td><td lang="zh">{cell(v.get("zh"))}</td></tr>'
        for _, v in sorted(by_name.items())
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>specviz · why speculative decoding is lossless</title>
<style>body {{ font-family: sans-serif; max-width: 60em; margin: 2em auto; padding: 0 1em; line-height: 1.5; }}
table {{ border-collapse: collapse; width: 100%; }} td, th {{ border-bottom: 1px solid #ddd; padding: .4em; text-align: left; }}
a {{ color: #1a5fb4; }}</style></head>
<body><main>
<h1>specviz · why speculative decoding is lossless</h1>
<p>The tutorial notebooks, executed, with their figures as pictures. <span lang="zh">教程笔记本（已运行，图以图片显示）。</span></p>
<table><thead><tr><th>English</th><th lang="zh">中文</th></tr></thead>
<tbody>
{rows}
</tbody></table>
<p id="dashboard">The dashboard (<code>notebooks/dashboard.ipynb</code>) is interactive and needs a running
kernel: <code>make dashboard</code> or <code>specviz dashboard</code> (<code>--lang zh</code> in Chinese).
<span lang="zh">仪表盘需要运行中的内核：<code>specviz dashboard --lang zh</code>。</span></p>
</main></body></html>
"""


def build(out: Path, jobs: int = 2, only: str = "") -> list[dict]:
    """Build the site into `out` (replaced); the pages' entries, as written to _static/pages.json."""
    os.environ.setdefault("BROWSER_PATH", os.environ.get("SPECVIZ_CHROMIUM", "/usr/bin/chromium"))  # kaleido
    for name in ("HF_HUB_DISABLE_PROGRESS_BARS", "TQDM_DISABLE"):  # no progress-bar widgets in the pages
        os.environ.setdefault(name, "1")
    if out.exists():
        shutil.rmtree(out)
    for lang in LANGS:
        (out / lang).mkdir(parents=True)
    copy_mathjax(out)
    todo = notebooks(only)
    names = {lang: {p.name for lg, p in todo if lg == lang} for lang in LANGS}

    def twin(lang, path):
        return path.name.replace(".ipynb", ".html") if path.name in names[OTHER[lang]] else None

    with ProcessPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(build_page, lang, p, out, twin(lang, p)) for lang, p in todo]
        pages = [f.result() for f in futures]
    (out / "index.html").write_text(index_html(pages), encoding="utf-8")
    (out / "_static" / "pages.json").write_text(json.dumps(pages, ensure_ascii=False, indent=1), encoding="utf-8")
    return pages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "site", help="output folder (replaced)")
    parser.add_argument("--jobs", type=int, default=2, help="notebooks executed at once")
    parser.add_argument("--only", default="", help="only notebooks whose file name contains this")
    args = parser.parse_args(argv)
    start = time.monotonic()
    pages = build(args.out, args.jobs, args.only)
    size = sum(f.stat().st_size for f in args.out.rglob("*") if f.is_file())
    for p in pages:
        print(f"{p['href']:45} {p['seconds']:6.1f} s  {p['figures']:3d} figures  {p['title']}")
        for problem in p["problems"]:
            print(f"  PROBLEM: {problem}")
    print(f"site: {len(pages)} pages, {size / 1e6:.1f} MB in {args.out} ({time.monotonic() - start:.0f} s)")
    return 1 if any(p["problems"] for p in pages) else 0


if __name__ == "__main__":
    sys.exit(main())
