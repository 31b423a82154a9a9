"""Build the book: every notebook executed once, then Sphinx + myst-nb + sphinx-book-theme, offline.

    python tools/book.py [--out site] [--jobs 2]          (`make site` runs it)

The book is built into a fresh folder beside --out, then swapped in: --out is replaced whole, so
it must be new, empty, or a book this builder made (it leaves a .specviz-book marker file in it);
any other folder (a user's files) is refused, named, and left as it is.

1. **Execute once.** Every MyST text notebook (notebooks/NAME.md, notebooks/zh/NAME.md) is read as
   myst-nb reads it and executed headlessly (kernel python3, notebooks/ as the working directory for
   both languages, no widget state, no progress bars) into a jupyter-cache in
   build/jupyter_cache/<digest>. The digest covers the specviz sources and every installed package's
   version, so a change to the library (or an upgrade) executes everything again, while an unchanged
   tree reuses the outputs: tests/test_notebooks.py checks the very outputs the book shows.
2. **Two Sphinx builds**, English and Chinese (language zh_CN: Chinese search and theme labels),
   from build/book/src/<lang>/ (the .md sources copied beside a generated index.md; the .ipynb twins
   too, so the Binder button opens the notebook). myst-nb runs in "cache" mode against the same
   cache, so Sphinx executes nothing. Configuration: docs/book/conf.py.
3. The HTML goes to site/en/ and site/zh/, with site/index.html choosing the language, MathJax 2.7
   (from jupyter-server-mathjax) in site/_static/mathjax, and site/_static/pages.json: per page its
   figure outputs and math spans, which tests/test_site.py checks in Chromium.

Figures are pictures: the PNG beside each plotly figure and the HTML snapshot beside each app
(sv.notebook_setup makes both) are shown, never plotly.js or a widget manager from a CDN.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import hashlib
import html
import importlib.metadata
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = REPO / "notebooks"
CONF_DIR = REPO / "docs" / "book"
WORK = REPO / "build" / "book"
CACHE_ROOT = REPO / "build" / "jupyter_cache"
LANGS = {"en": NOTEBOOKS, "zh": NOTEBOOKS / "zh"}
OTHER = {"en": "zh", "zh": "en"}
NOT_PAGES = {"dashboard.md"}  # the Voila app (it needs a kernel)
# plain Markdown pages, never executed: the notebook map (with the fidelity table) and the claims register
DOCUMENTS = ("README.md", "CLAIMS.md")
MORE_ORDER = {"solutions.md": 0, "README.md": 1, "CLAIMS.md": 2}  # after the tutorials; the rest by name
MATHJAX_URL = "../../_static/mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full,Safe"  # from <lang>/_static
PLOTLY = "application/vnd.plotly.v1+json"
WIDGET = "application/vnd.jupyter.widget-view+json"
STATIC_IMAGES = ("image/png", "image/svg+xml", "image/jpeg")
CELL_TIMEOUT_S = 600
# The test suite's book executes every English notebook and one Chinese twin whole (the twins' code
# equals the English, tests/test_notebooks.py checks it); `make site` executes every page.
SUITE_ZH = "05_the_proof_in_three_steps.md"
TEXTS = {
    "en": {
        "title": "specviz · why speculative decoding is lossless",
        "intro": "The tutorial notebooks, executed, with their figures as pictures. "
        "Each page can be downloaded as a notebook (.ipynb) to run in JupyterLab.",
        "twin": "中文版",
        "tutorials": "Tutorials",
        "more": "More",
        "dashboard": "The dashboard (`notebooks/dashboard.ipynb`) is interactive and needs a running kernel: "
        "`make dashboard` or `specviz dashboard`.",
    },
    "zh": {
        "title": "specviz · 为什么投机解码是无损的",
        "intro": "教程笔记本（已运行，图以图片显示）。每页都可以下载为笔记本（.ipynb），在 JupyterLab 里运行。",
        "twin": "English",
        "tutorials": "教程",
        "more": "更多",
        "dashboard": "仪表盘（`notebooks/dashboard.ipynb`）需要运行中的内核：`specviz dashboard --lang zh`。",
    },
}


# ----------------------------------------------------------------------------------------- sources


def sources() -> list[Path]:
    """Every MyST text notebook in notebooks/ and notebooks/zh/ (the dashboard too), English first."""
    return [p for d in LANGS.values() for p in sorted(d.glob("*.md")) if p.name not in DOCUMENTS]


def page_order(name: str) -> tuple:
    """Where a page stands in the book: the tutorials by number, then the solutions, the notebook map, the
    claims register and the rest by name.

    >>> sorted(["README.md", "solutions.md", "GLOSSARY.md", "CLAIMS.md", "02_b.md", "01_a.md"], key=page_order)
    ['01_a.md', '02_b.md', 'solutions.md', 'README.md', 'CLAIMS.md', 'GLOSSARY.md']
    """
    return (0, 0, name) if re.match(r"\d\d_", name) else (1, MORE_ORDER.get(name, len(MORE_ORDER)), name)


def suite_unexecuted() -> list[Path]:
    """The Chinese twins the test suite's book shows unexecuted: every zh notebook with an English twin
    (same code) but `SUITE_ZH`."""
    return [p for p in pages("zh") if p.name not in (*DOCUMENTS, SUITE_ZH) and (NOTEBOOKS / p.name).exists()]


def pages(lang: str) -> list[Path]:
    """The text notebooks that are pages of the `lang` book, in reading order ($SPECVIZ_BOOK_ONLY: only
    those whose file name contains it, for a quick look at a few pages)."""
    only = os.environ.get("SPECVIZ_BOOK_ONLY", "")
    found = [p for p in LANGS[lang].glob("*.md") if p.name not in NOT_PAGES and only in p.name]
    return sorted(found, key=lambda p: page_order(p.name))


def lang_of(path: Path) -> str:
    return "zh" if path.parent == LANGS["zh"] else "en"


def title_of(text: str) -> str:
    """The first level-1 heading of a MyST text ("untitled" when it has none).

    >>> title_of("---\\nkernelspec: {}\\n---\\n\\n# 5 · The *proof*\\n\\ntext")
    '5 · The proof'
    """
    match = re.search(r"^#\s+(.+)$", text, re.M)
    return re.sub(r"[*_`]", "", match.group(1)).strip() if match else "untitled"


# ------------------------------------------------------------------------------------------- cache


def environment_digest() -> str:
    """A digest of what the notebooks' outputs depend on besides their own code cells: the specviz
    sources and data, the Python version and every installed distribution's version."""
    h = hashlib.sha256(sys.version.encode())
    for path in sorted((REPO / "specviz").rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            h.update(str(path.relative_to(REPO)).encode())
            h.update(path.read_bytes())
    # the environment's own site-packages only: what sys.path adds (a checkout's specviz.egg-info, the
    # script's folder, pytest's rootdir) must not change the digest between `make test` and `make site`
    site = sorted({sysconfig.get_path("purelib"), sysconfig.get_path("platlib")})
    dists = {f"{d.metadata['Name']}=={d.version}" for d in importlib.metadata.distributions(path=site)}
    h.update("\n".join(sorted(dists)).encode())
    return h.hexdigest()[:16]


def cache_path() -> Path:
    """The jupyter-cache of this tree and environment ($SPECVIZ_NB_CACHE overrides)."""
    override = os.environ.get("SPECVIZ_NB_CACHE")
    return Path(override) if override else CACHE_ROOT / environment_digest()


def read_notebook(path: Path):
    """A MyST text notebook as myst-nb reads it (so its cache key is the one the Sphinx build looks up)."""
    from myst_nb.core.read import read_myst_markdown_notebook

    return read_myst_markdown_notebook(path.read_text(encoding="utf-8"), path=path)


def _execute(path: Path) -> tuple:
    """Run one notebook (in a worker process): (notebook, error text or None, seconds)."""
    import tempfile

    from jupyter_cache.executors.utils import single_nb_execution

    from specviz.figures.static import DEFER_ENV, defer_into, draw_deferred_outputs

    nb = read_notebook(path)
    with tempfile.TemporaryDirectory(prefix="specviz-png-") as folder:
        # the kernel saves each figure for its static picture, and this process draws them all: one browser
        # for every notebook this worker runs, instead of one started by each kernel (~3 s of CPU each)
        os.environ[DEFER_ENV] = defer_into(folder)  # marked as the book build's: a hand-set value is ignored
        try:
            result = single_nb_execution(
                nb, cwd=str(NOTEBOOKS), timeout=CELL_TIMEOUT_S, allow_errors=False, store_widget_state=False
            )
        finally:
            del os.environ[DEFER_ENV]
        start = time.perf_counter()
        for cell in nb.cells:
            draw_deferred_outputs(cell.get("outputs", []), Path(folder))
    seconds = result.time + time.perf_counter() - start
    return nb, (result.exc_string or str(result.err)) if result.err else None, seconds


def execute_all(paths: list[Path] | None = None, jobs: int = 2, log=print) -> dict[Path, dict]:
    """Every notebook of `paths` (default: all sources) with its outputs, executing only those the cache
    lacks (`jobs` at once) and caching those that ran without error.

    Returns per path: {"nb": the executed notebook or None, "error": None or the traceback,
    "seconds": execution time, "cached": whether the outputs came from an earlier run}.
    """
    for name in ("HF_HUB_DISABLE_PROGRESS_BARS", "TQDM_DISABLE"):  # no progress-bar widgets in the outputs
        os.environ.setdefault(name, "1")
    os.environ.setdefault("BROWSER_PATH", os.environ.get("SPECVIZ_CHROMIUM", "/usr/bin/chromium"))  # kaleido
    paths = sources() if paths is None else paths
    with cache_lock():  # pytest-xdist workers (and a `make site` beside `make test`) take turns
        return _execute_all(paths, jobs, log)


@contextlib.contextmanager
def cache_lock(root: Path = CACHE_ROOT):
    """An exclusive lock on the notebook cache (the file root/.lock), held while one process fills it: a
    second process waits, then finds the outputs cached instead of executing every notebook again."""
    import fcntl

    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as handle:  # closing the file releases the lock
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _execute_all(paths: list[Path], jobs: int, log) -> dict[Path, dict]:
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    path = cache_path()
    if path.parent == CACHE_ROOT:  # outputs of another tree or environment (cache_lock made CACHE_ROOT)
        for old in CACHE_ROOT.iterdir():
            if old != path and old.is_dir():
                shutil.rmtree(old, ignore_errors=True)
    cache = get_cache(str(path))
    results: dict[Path, dict] = {}
    todo = []
    for p in paths:
        try:
            record = cache.match_cache_notebook(read_notebook(p))
        except KeyError:
            todo.append(p)
            continue
        _, nb = cache.merge_match_into_notebook(read_notebook(p))
        results[p] = {"nb": nb, "error": None, "seconds": record.data.get("execution_seconds"), "cached": True}
    if todo:
        log(f"executing {len(todo)} notebooks ({len(paths) - len(todo)} cached) into {path}")
        with ProcessPoolExecutor(max_workers=max(1, jobs)) as pool:
            for p, (nb, error, seconds) in zip(todo, pool.map(_execute, todo)):
                log(f"  {p.relative_to(REPO)}: {seconds:.1f} s" + (" FAILED" if error else ""))
                results[p] = {"nb": nb, "error": error, "seconds": seconds, "cached": False}
                if error is None:
                    name_images(nb)
                    bundle = CacheBundleIn(nb, str(p), data={"execution_seconds": seconds})
                    cache.cache_notebook_bundle(bundle, check_validity=False, overwrite=True)
    return {p: results[p] for p in paths}


# ----------------------------------------------------------------------------------------- outputs


def is_figure(output) -> bool:
    """Whether an output is a figure: a plotly figure, a widget (an app) or an image; a guess box is not."""
    data = output.get("data", {})
    text = data.get("text/html", "")
    if "specviz-predict-static" in ("".join(text) if isinstance(text, list) else str(text)):
        return False  # a guess box (sv.predict): text with its answer folded, no picture
    return any(k in data for k in (PLOTLY, WIDGET, *STATIC_IMAGES))


def figure_title(fig: dict) -> str:
    """A plotly figure's title as plain text ("figure" when it has none).

    >>> figure_title({"layout": {"title": {"text": "<b>p</b> and q"}}})
    'p and q'
    """
    title = (fig.get("layout") or {}).get("title") or {}
    text = title.get("text") if isinstance(title, dict) else str(title)
    return re.sub(r"<[^>]+>", "", text or "").strip() or "figure"


def name_images(nb) -> None:
    """Give each plotly figure's PNG its figure's title as alt text (output metadata, which myst-nb uses)."""
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if PLOTLY in data and "image/png" in data:
                output.setdefault("metadata", {}).setdefault("image/png", {})["alt"] = figure_title(data[PLOTLY])


def executed(path: Path, cache_dir: Path):
    """The executed notebook of the text notebook `path` from the cache in `cache_dir` (None when absent)."""
    from jupyter_cache import get_cache

    try:
        return get_cache(str(cache_dir)).merge_match_into_notebook(read_notebook(path))[1]
    except KeyError:
        return None


def static_problems(nb) -> list[str]:
    """Figure outputs the book would show as nothing: no PNG (or image) and no HTML snapshot beside them."""
    problems = []
    for i, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            static = any(k in data for k in STATIC_IMAGES) or (WIDGET in data and "text/html" in data)
            if is_figure(output) and not static:
                problems.append(f"cell {i}: a figure output without a static image ({sorted(data)})")
    return problems


def math_count(text: str) -> int:
    """How many $...$ / $$...$$ spans a MyST text holds outside code cells (a rough count; 0 means no math).

    >>> math_count("$a$ and $$b$$\\n```{code-cell}\\nx = '$c$'\\n```")
    2
    """
    prose = re.sub(r"^```\{code-cell\}.*?^```", "", text, flags=re.S | re.M)
    return len(re.findall(r"\$\$.+?\$\$|\$[^$\n]+\$", prose, re.S))


# -------------------------------------------------------------------------------------------- build


def _sync(src: Path, dst: Path) -> None:
    """Copy `src` to `dst` unless it holds the same bytes (Sphinx rebuilds only what changed)."""
    if not dst.exists() or dst.read_bytes() != src.read_bytes():
        shutil.copy2(src, dst)


def index_md(lang: str) -> str:
    """The root page of the `lang` book: what it is, the other language, the dashboard, the table of contents."""
    t = TEXTS[lang]
    tutorials = [p.stem for p in pages(lang) if re.match(r"\d\d_", p.name)]
    more = [p.stem for p in pages(lang) if p.stem not in tutorials]
    toc = "\n".join(tutorials)
    extra = "\n".join(more)
    return f"""# {t["title"]}

{t["intro"]}

<a href="../{OTHER[lang]}/index.html" lang="{OTHER[lang]}">{t["twin"]}</a>

(dashboard)=
{t["dashboard"]}

```{{toctree}}
:caption: {t["tutorials"]}
:maxdepth: 1

{toc}
```

```{{toctree}}
:caption: {t["more"]}
:maxdepth: 1

{extra}
```
"""


def prepare_sources(lang: str) -> Path:
    """build/book/src/<lang>/: the pages' .md and .ipynb copied beside a generated index.md."""
    src = WORK / "src" / lang
    src.mkdir(parents=True, exist_ok=True)
    wanted = {"index.md"}
    for md in pages(lang):
        for p in (md, md.with_suffix(".ipynb")):
            if p.exists():
                _sync(p, src / p.name)
                wanted.add(p.name)
    index = src / "index.md"
    if not index.exists() or index.read_text(encoding="utf-8") != index_md(lang):
        index.write_text(index_md(lang), encoding="utf-8")
    for stale in src.iterdir():
        if stale.name not in wanted:
            stale.unlink()
    return src


def outputs_digest(nbs: list) -> str:
    """A digest of the outputs of the notebooks `nbs` (what a page shows besides its source text)."""
    blob = json.dumps([[c.get("outputs", []) for c in nb.cells] for nb in nbs], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def sphinx(lang: str, cache: Path, failed: list[Path], fresh: bool = False, clean=()) -> subprocess.Popen:
    """Start the Sphinx build of the `lang` book into build/book/<lang>/html (`fresh`: re-read every page;
    `clean`: pages shown without outputs, offering their committed .ipynb)."""
    src = prepare_sources(lang)
    env = dict(
        os.environ,
        SPECVIZ_BOOK_LANG=lang,
        SPECVIZ_NB_CACHE=str(cache),
        SPECVIZ_BOOK_SKIP=json.dumps([p.name for p in failed if lang_of(p) == lang]),
        SPECVIZ_BOOK_CLEAN=json.dumps([p.name for p in clean if lang_of(p) == lang]),
    )
    out = WORK / lang
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-c", str(CONF_DIR), "-d", str(out / "doctrees")]
    if fresh:
        cmd.append("-E")
    return subprocess.Popen([*cmd, str(src), str(out / "html")], env=env, cwd=REPO)


def copy_mathjax(out: Path) -> None:
    """MathJax 2.7 from the jupyter-server-mathjax package into out/_static/mathjax."""
    import jupyter_server_mathjax

    source = Path(jupyter_server_mathjax.__file__).parent / "static"
    shutil.copytree(source, out / "_static" / "mathjax", dirs_exist_ok=True)


def front_page() -> str:
    """site/index.html: the two books."""
    links = "\n".join(
        f'<li lang="{lang}"><a href="{lang}/index.html">{html.escape(TEXTS[lang]["title"])}</a></li>' for lang in LANGS
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>specviz</title>
<style>body {{ font-family: sans-serif; max-width: 40em; margin: 3em auto; padding: 0 1em; line-height: 1.6; }}
a {{ color: #1a5fb4; }}</style></head>
<body><main><h1>specviz</h1>
<ul>
{links}
</ul></main></body></html>
"""


def build(out: Path, jobs: int = 2, log=print, unexecuted: tuple | list = ()) -> list[dict]:
    """Build the book into `out` (replaced); the pages' entries, as written to _static/pages.json.

    `unexecuted`: text notebooks shown from their source, without outputs (their committed, clean
    .ipynb is the download); the test suite's book passes `suite_unexecuted()`.
    """
    start = time.monotonic()
    problem = out_problem(out)  # before minutes of executing notebooks
    if problem:
        raise OutError(problem)
    book = {lang: pages(lang) for lang in LANGS}
    unexecuted = set(unexecuted)
    notebooks = [p for ps in book.values() for p in ps if p.name not in DOCUMENTS and p not in unexecuted]
    results = execute_all(notebooks, jobs=jobs, log=log)
    for p in (p for ps in book.values() for p in ps if p.name in DOCUMENTS or p in unexecuted):
        results[p] = {"nb": None, "error": None, "seconds": 0.0, "cached": True, "unexecuted": p in unexecuted}
    log(f"notebooks ready in {time.monotonic() - start:.0f} s")
    failed = [p for p, r in results.items() if r["error"]]
    cache = cache_path()
    # Sphinx re-reads only the sources that changed since its last build, but a notebook executed
    # again (a new or cleared cache) keeps its source and changes its outputs: then every page is re-read.
    digests = {
        lang: outputs_digest([results[p]["nb"] for p in paths if results[p]["nb"]]) for lang, paths in book.items()
    }
    stamps = {lang: WORK / lang / "outputs.sha256" for lang in LANGS}
    fresh = {lang: not s.exists() or s.read_text(encoding="utf-8") != digests[lang] for lang, s in stamps.items()}
    shown_clean = [p for p in unexecuted if p in results]
    builds = {lang: sphinx(lang, cache, failed, fresh[lang], shown_clean) for lang in LANGS}
    codes = {lang: b.wait() for lang, b in builds.items()}
    if any(codes.values()):
        raise RuntimeError(f"sphinx-build failed: {codes}")
    for lang, stamp in stamps.items():
        stamp.write_text(digests[lang], encoding="utf-8")
    with staged(out) as stage:  # a fresh folder beside `out`, swapped in once complete
        return write_site(stage, book, results)


def write_site(out: Path, book: dict[str, list[Path]], results: dict) -> list[dict]:
    """The HTML of both languages, MathJax, the front page and _static/pages.json, into the new folder `out`."""
    for lang in LANGS:
        shutil.copytree(WORK / lang / "html", out / lang, ignore=shutil.ignore_patterns(".buildinfo", ".doctrees"))
    copy_mathjax(out)
    (out / "index.html").write_text(front_page(), encoding="utf-8")
    entries = [entry for lang, paths in book.items() for entry in page_entries(lang, paths, results)]
    (out / "_static" / "pages.json").write_text(json.dumps(entries, ensure_ascii=False, indent=1), encoding="utf-8")
    return entries


def page_entries(lang: str, paths: list[Path], results: dict) -> list[dict]:
    """The pages.json entry of each page of `lang`: its figures, math spans and problems."""
    entries = []
    for p in paths:
        r = results[p]
        problems = [f"did not execute: {r['error'].strip().splitlines()[-1]}"] if r["error"] else []
        problems += static_problems(r["nb"]) if r["nb"] else []
        cells = r["nb"].cells if r["nb"] else []
        entries.append(
            {
                "lang": lang,
                "href": f"{lang}/{p.stem}.html",
                "source": str(p.relative_to(REPO)),
                "title": title_of(p.read_text(encoding="utf-8")),
                "document": p.name in DOCUMENTS,
                "outputs": sum(len(c.get("outputs", [])) for c in cells),
                "figures": sum(is_figure(o) for c in cells for o in c.get("outputs", [])),
                "math": math_count(p.read_text(encoding="utf-8")),
                "problems": problems,
                "seconds": r["seconds"],
                "cached": r["cached"],
                "executed": not r.get("unexecuted", False),  # False: shown from its source (the suite's zh twins)
            }
        )
    return entries


# ----------------------------------------------------------------------------------------- the --out folder

OUT_MARKER = ".specviz-book"  # in every folder this builder makes: only such a folder is ever replaced
OLD_BOOK = {"index.html", "_static", "en", "zh"}  # what a book built before the marker holds, and nothing else


class OutError(ValueError):
    """--out names something the builder must not replace (a user's folder, a file, a link)."""


def out_problem(out: Path) -> str | None:
    """Why the builder may not replace `out` (None: it is missing, empty, or a book this builder made)."""
    try:
        mode = os.lstat(out).st_mode
        names = set(os.listdir(out)) if stat.S_ISDIR(mode) else set()
    except FileNotFoundError:
        return None
    except OSError as e:
        return f"--out {out}: {e.strerror}"
    if stat.S_ISLNK(mode) or not stat.S_ISDIR(mode):
        kind = "a symbolic link" if stat.S_ISLNK(mode) else "a file" if stat.S_ISREG(mode) else "a device or a pipe"
        return f"--out {out} is {kind}, not a folder: give a folder (the build replaces it whole)"
    if not names or OUT_MARKER in names or (names <= OLD_BOOK and (out / "_static" / "pages.json").is_file()):
        return None
    shown = ", ".join(sorted(names, key=lambda n: (n[:1] == ".", n))[:3]) + (", ..." if len(names) > 3 else "")
    return (
        f"--out {out} holds files this builder did not make ({shown}; no {OUT_MARKER} in it), and the build "
        "replaces its --out folder whole: give a new or empty folder; nothing was changed"
    )


def _lock(folder: Path) -> int | None:
    """An fd holding an exclusive lock on `folder`; None if someone else holds it (or it cannot be opened)."""
    import fcntl

    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return fd
    except OSError:
        os.close(fd)
        return None


@contextlib.contextmanager
def staged(out: Path):
    """A new folder beside `out` to build into; swapped in for `out` (refused if not ours) when the block ends."""
    out = Path(os.path.abspath(out))
    problem = out_problem(out)
    if problem:
        raise OutError(problem)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        for left in out.parent.glob(f".{glob.escape(out.name)}.new-*"):  # what a killed build left behind
            fd = _lock(left) if left.is_dir() and not left.is_symlink() and (left / OUT_MARKER).is_file() else None
            if fd is not None:  # its builder is gone (a live one holds the lock)
                shutil.rmtree(left, ignore_errors=True)
                os.close(fd)
        stage = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.new-"))
    except OSError as e:
        raise OutError(f"--out {out}: cannot make a folder beside it: {e.strerror}") from None
    fd = _lock(stage)
    try:
        (stage / OUT_MARKER).write_text("tools/book.py made this folder; it replaces it whole on the next build\n")
        stage.chmod(0o755)  # mkdtemp makes it 0700
        yield stage
        problem = out_problem(out)  # it may have changed during the build
        if problem:
            raise OutError(problem)
        try:
            if os.path.lexists(out):  # the old book moves into the new one's folder, then goes
                os.rename(out, stage / ".previous")
            os.rename(stage, out)
        except OSError as e:
            raise OutError(f"--out {out}: cannot swap the new book in: {e.strerror}") from None
        shutil.rmtree(out / ".previous", ignore_errors=True)
    finally:
        shutil.rmtree(stage, ignore_errors=True)  # only still there if the build failed
        if fd is not None:
            os.close(fd)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "site", help="output folder (replaced; new or a book)")
    parser.add_argument("--jobs", type=int, default=2, help="notebooks executed at once")
    parser.add_argument("--only", default="", help="only the pages whose file name contains this")
    args = parser.parse_args(argv)
    if args.only:
        os.environ["SPECVIZ_BOOK_ONLY"] = args.only
    start = time.monotonic()
    try:
        entries = build(args.out, args.jobs)
    except OutError as e:
        print(f"book: error: {e}", file=sys.stderr)
        return 2
    size = sum(f.stat().st_size for f in args.out.rglob("*") if f.is_file())
    for p in entries:
        ran = "cached" if p["cached"] else f"{p['seconds'] or 0:6.1f} s"
        print(f"{p['href']:45} {ran:>8}  {p['figures']:3d} figures  {p['title']}")
        for problem in p["problems"]:
            print(f"  PROBLEM: {problem}")
    print(f"book: {len(entries)} pages, {size / 1e6:.1f} MB in {args.out} ({time.monotonic() - start:.0f} s)")
    return 1 if any(p["problems"] for p in entries) else 0


if __name__ == "__main__":
    sys.exit(main())
