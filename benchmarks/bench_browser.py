"""In a real browser: dashboard time-to-first-plot and slider-to-redraw latency.

Run with `make bench` (or `.venv/bin/python benchmarks/bench_browser.py [--help]`).
Starts Voila on notebooks/dashboard.ipynb exactly as `specviz dashboard` does (same
command line, on a free port), drives Debian's Chromium with Playwright, and measures

* time to first plot: navigation start -> the first `.js-plotly-plot` holding data
  (in-page clock; the first load has a cold browser cache, later ones a warm one; every
  load starts a fresh kernel, as a new visitor would);
* slider -> redraw: a key press on the `p(cat)` handle (in-page keydown time) -> the
  money diagram's "overlap" trace holds new data and plotly starts showing it: the bars
  start gliding (`plotly_transitioning`; the app animates moves over 250 ms) or, for an
  instant redraw, have been drawn (`plotly_afterplot`); over `--moves` presses alternating
  ArrowRight / ArrowLeft. "settled" is when the transition has finished.
  Each move is split into "slider echo" (key -> the `p(dog)` readout, which the kernel
  rescales: browser -> kernel -> browser plus the editor's Python), "figure message"
  (-> arrival of the websocket message carrying the figure update: the figure's Python
  and the message) and "plotly.js" (-> drawn).

`--profile` adds where the time goes: the kernel-side Python of one slider move
(timed in this process, no browser), and a CPU profile of the browser during the moves
(plotly.js vs the widget/Voila JavaScript vs idle, i.e. waiting for the kernel).
`specviz dashboard` keeps one pre-executed kernel (`--preheat_kernel=True`); `--cold`
also measures Voila without it (every visitor waits for a kernel to run the notebook).

Goals (issue 3): median slider latency <= 100 ms, time to first plot <= 8 s. Missing a
goal is reported, not an error (the exit status is 1 only with --strict).
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from specviz.cli import common, jupyter_args  # noqa: E402

GOAL_LATENCY_MS = 100.0
GOAL_FIRST_PLOT_S = 8.0
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

# Installed before any page script runs: marks of the first widget and the first plot.
MARKS_JS = """
window.__marks = {};
(() => {
  const tick = () => {
    const m = window.__marks, now = performance.now();
    if (!m.widget && document.querySelector('.widget-slider')) m.widget = now;
    if (!m.plot && [...document.querySelectorAll('.js-plotly-plot')].some(e => e._fullData && e._fullData.length)) {
      m.plot = now;
      return;
    }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
  const iv = setInterval(() => { tick(); if (window.__marks.plot) clearInterval(iv); }, 10);
})();
"""

# --profile: the arrival time of every kernel message carrying a plotly figure update.
WS_JS = """
window.__figmsgs = [];
(() => {
  const Native = window.WebSocket;
  const dec = new TextDecoder();
  window.WebSocket = function (...args) {
    const ws = new Native(...args);
    ws.addEventListener('message', ev => {
      const t = performance.now();
      const d = ev.data;
      const text = typeof d === 'string' ? d : (d instanceof ArrayBuffer && d.byteLength < 200000 ? dec.decode(d) : '');
      if (text.includes('_py2js_update') || text.includes('_py2js_animate')) window.__figmsgs.push(t);
    });
    return ws;
  };
  window.WebSocket.prototype = Native.prototype;
  Object.assign(window.WebSocket, {CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3});
})();
"""

# Per-move timing: keydown on the handle, p(dog) readout change, first redraw with new data.
LATENCY_JS = """
() => {
  const visible = el => !!el && el.getClientRects().length > 0;
  const slider = label => [...document.querySelectorAll('.widget-slider')].find(s => visible(s) &&
      s.querySelector('.widget-label').textContent.trim() === label);
  const gd = [...document.querySelectorAll('.js-plotly-plot')].find(e => e._fullData &&
      e._fullData.some(t => t.meta === 'overlap'));
  const overlap = () => JSON.stringify(['overlap', 'residual'].map(m => Array.from(gd._fullData.find(t => t.meta === m).y)));
  const S = window.__lat = {key: null, echo: null, drawn: null, settled: null, old: overlap(), oldDog: null};
  const dog = slider('p(dog)').querySelector('.widget-readout');
  new MutationObserver(() => { if (S.key !== null && S.echo === null && dog.textContent !== S.oldDog)
      S.echo = performance.now(); }).observe(dog, {childList: true, characterData: true, subtree: true});
  slider('p(cat)').querySelector('.noUi-handle').addEventListener('keydown', () => {
    S.key = performance.now(); S.echo = S.drawn = S.settled = null; S.old = overlap(); S.oldDog = dog.textContent;
  }, true);
  // No requestAnimationFrame polling here: it would make headless Chromium draw frames
  // continuously and slow down what is measured. plotly emits plotly_transitioning when the
  // bars start gliding to new data (Plotly.animate) and plotly_afterplot after a redraw
  // (Plotly.update, and the end of a transition): the first with new data is "drawn",
  // plotly_animated is "settled" (the transition has finished).
  const mark = () => {
    if (S.key !== null && S.drawn === null && overlap() !== S.old) S.drawn = performance.now();
  };
  gd.on('plotly_transitioning', mark);
  gd.on('plotly_afterplot', mark);
  gd.on('plotly_animated', () => { if (S.drawn !== null && S.settled === null) S.settled = performance.now(); });
  return true;
}
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def find_chromium() -> str | None:
    for path in (os.environ.get("SPECVIZ_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium")):
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


class Voila:
    def __init__(self, preheat: bool = True, log_dir: Path | None = None):
        self.port = free_port()
        notebook = common.find_notebooks_dir() / common.DASHBOARD_NOTEBOOK
        cmd = jupyter_args.build_dashboard_command(notebook, port=self.port, preheat=preheat)
        self.url = f"http://127.0.0.1:{self.port}/"
        self.log = open((log_dir or Path(tempfile.gettempdir())) / f"voila-{self.port}.log", "wb")
        self.proc = subprocess.Popen(
            cmd, cwd=notebook.parent, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True
        )
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.log.close()
                tail = Path(self.log.name).read_text(errors="replace").splitlines()[-15:]
                raise RuntimeError(f"voila exited ({self.proc.returncode}); end of its log:\n" + "\n".join(tail))
            try:
                urllib.request.urlopen(self.url + "voila/static/voila.js", timeout=5).close()
                return
            except urllib.error.HTTPError:
                return
            except OSError:
                time.sleep(0.25)
        raise RuntimeError(f"voila did not start in 90 s; log: {self.log.name}")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.log.close()


def load_dashboard(context, url: str, timeout_ms: int = 180_000, watch_messages: bool = False):
    """Open the dashboard in a new page; returns (page, s to first plot, s to first widget)."""
    page = context.new_page()
    page.add_init_script(MARKS_JS)
    if watch_messages:
        page.add_init_script(WS_JS)
    page.goto(url, timeout=timeout_ms, wait_until="commit")
    page.wait_for_function("() => window.__marks && window.__marks.plot", timeout=timeout_ms, polling=50)
    marks = page.evaluate("() => window.__marks")
    return page, marks["plot"] / 1000.0, marks.get("widget", float("nan")) / 1000.0


def measure_latency(page, moves: int) -> list[dict]:
    page.wait_for_function(
        "() => [...document.querySelectorAll('.widget-slider')].some(s => s.getClientRects().length &&"
        " s.querySelector('.widget-label').textContent.trim() === 'p(cat)')",
        timeout=60_000,
    )
    page.evaluate(LATENCY_JS)
    handle = page.locator(".widget-slider:visible", has=page.locator(".widget-label", has_text="p(cat)")).first.locator(
        ".noUi-handle"
    )
    handle.focus()
    results = []
    for i in range(moves + 2):  # the first two are warm-up
        handle.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")
        page.wait_for_function(
            "() => window.__lat.drawn !== null && window.__lat.echo !== null", timeout=60_000, polling=20
        )
        try:  # an animated redraw: also wait for the bars to settle
            page.wait_for_function("() => window.__lat.settled !== null", timeout=1500, polling=20)
        except Exception:  # an instant redraw has no transition to finish
            pass
        s = page.evaluate("() => ({...window.__lat})")
        if i >= 2:
            r = {"total": s["drawn"] - s["key"], "echo": s["echo"] - s["key"]}
            if s.get("settled") is not None:
                r["settled"] = s["settled"] - s["key"]
            msgs = page.evaluate("(k) => window.__figmsgs ? window.__figmsgs.filter(t => t >= k) : []", s["key"])
            before = [t for t in msgs if t <= s["drawn"]]
            if before:  # the figure message that was drawn: kernel side before it, plotly.js after it
                r["fig_msg"] = before[-1] - s["key"]
            results.append(r)
        time.sleep(0.15)
    return results


def pct(values, q):
    values = sorted(values)
    if not values:
        return float("nan")
    k = (len(values) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def python_side_ms(moves: int = 40) -> dict:
    """Kernel-side Python of one p(cat) move, without a browser or a kernel (comm messages are no-ops)."""
    import specviz.widgets as W

    app = W.money_diagram_app()
    s = app.sliders_p[0]
    editor_ms, total_ms = [], []
    orig_update = app.update
    for i in range(moves + 3):
        v = 0.61 if i % 2 == 0 else 0.60
        t0 = time.perf_counter()
        app.update = lambda: None  # the editor alone (rescale + write sliders)
        s.value = v
        t1 = time.perf_counter()
        app.update = orig_update
        app.update()
        t2 = time.perf_counter()
        if i >= 3:
            editor_ms.append((t1 - t0) * 1e3)
            total_ms.append((t2 - t0) * 1e3)
    return {"editor": statistics.median(editor_ms), "total": statistics.median(total_ms)}


def cpu_profile_summary(profile: dict, moves: int) -> list[tuple[str, float]]:
    nodes = {n["id"]: n for n in profile["nodes"]}
    by = collections.Counter()
    for sample, dt in zip(profile["samples"], profile["timeDeltas"]):
        cf = nodes[sample]["callFrame"]
        url, fn = cf["url"], cf["functionName"]
        if url.startswith("blob:"):
            key = "plotly.js (FigureWidget bundle)"
        elif "voila" in url or "remoteEntry" in url or ".js?v=" in url:
            key = "widgets / Voila / comm JavaScript"
        elif fn in ("(idle)",):
            key = "idle (waiting for the kernel)"
        elif fn in ("(program)", "(garbage collector)"):
            key = f"browser internals {fn}"
        elif not url and fn not in ("(root)",):
            key = "native browser code (layout, style, DOM)"
        else:
            key = "other (incl. this benchmark's probes)"
        by[key] += dt / 1000.0
    return [(k, v / moves) for k, v in by.most_common()]


def run_variant(pw, chromium: str, name: str, preheated: bool, loads: int, moves: int, profile: bool, workdir: Path):
    out = {"name": name}
    server = Voila(preheated, log_dir=workdir)
    try:
        if preheated:
            time.sleep(20)  # let the pool kernel execute the notebook, as on a server that has been up a while
        context = pw.chromium.launch_persistent_context(
            str(workdir / f"profile-{name}"),
            executable_path=chromium,
            args=CHROMIUM_ARGS,
            headless=True,
            viewport={"width": 1280, "height": 900},
        )
        try:
            firsts, widgets = [], []
            page = None
            for i in range(loads):
                if page is not None:
                    page.close()
                    time.sleep(20 if preheated else 2)
                page, first, widget = load_dashboard(context, server.url, watch_messages=i == loads - 1)
                firsts.append(first)
                widgets.append(widget)
                print(
                    f"  [{name}] load {i + 1}/{loads}: first widget {widget:.1f} s, first plot {first:.1f} s",
                    flush=True,
                )
            out["first_plot"] = firsts
            out["first_widget"] = widgets
            if moves:
                cdp = None
                if profile:
                    cdp = context.new_cdp_session(page)
                    cdp.send("Profiler.enable")
                    cdp.send("Profiler.setSamplingInterval", {"interval": 200})
                    cdp.send("Profiler.start")
                out["moves"] = measure_latency(page, moves)
                if cdp is not None:
                    out["cpu"] = cpu_profile_summary(cdp.send("Profiler.stop")["profile"], moves + 2)
            page.close()
        finally:
            context.close()
    finally:
        server.stop()
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--loads", type=int, default=3, help="page loads for time-to-first-plot (default 3)")
    ap.add_argument("--moves", type=int, default=20, help="slider moves for the latency (default 20)")
    ap.add_argument("--profile", action="store_true", help="also break the latency down (Python side, browser CPU)")
    ap.add_argument("--cold", action="store_true", help="also measure Voila without a preheated kernel")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a goal is missed")
    args = ap.parse_args(argv)

    chromium = find_chromium()
    if chromium is None:
        print("bench_browser: no Chromium (/usr/bin/chromium or $SPECVIZ_CHROMIUM): skipped")
        return 0
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("bench_browser: playwright is not installed: skipped")
        return 0

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"Browser benchmark: Voila dashboard in headless Chromium ({os.cpu_count()} CPUs, "
        f"load average {load:.1f} at start)"
    )
    variants = [("specviz dashboard", True)]
    if args.cold:
        variants.append(("specviz dashboard --no-preheat", False))
    results = []
    with tempfile.TemporaryDirectory(prefix="specviz-bench-") as tmp, sync_playwright() as pw:
        for i, (name, preheated) in enumerate(variants):
            results.append(
                run_variant(
                    pw, chromium, name, preheated, args.loads, args.moves if i == 0 else 0, args.profile, Path(tmp)
                )
            )

    missed = False
    print()
    print("| measure | value | goal | |")
    print("|---|---|---|---|")
    for r in results:
        fp = r["first_plot"]
        ok = statistics.median(fp) <= GOAL_FIRST_PLOT_S
        missed |= not ok and r is results[0]
        print(
            f"| time to first plot, {r['name']} (median of {len(fp)}; cold cache {fp[0]:.1f} s) | "
            f"{statistics.median(fp):.1f} s | <= {GOAL_FIRST_PLOT_S:.0f} s | {'ok' if ok else 'MISSED'} |"
        )
        print(f"| time to first widget, {r['name']} (median) | {statistics.median(r['first_widget']):.1f} s | | |")
    moves = results[0].get("moves")
    if moves:
        total = [m["total"] for m in moves]
        med = statistics.median(total)
        ok = med <= GOAL_LATENCY_MS
        missed |= not ok
        print(
            f"| slider -> redraw latency, median of {len(total)} | {med:.0f} ms | <= {GOAL_LATENCY_MS:.0f} ms | "
            f"{'ok' if ok else 'MISSED'} |"
        )
        print(f"| slider -> redraw latency, p90 | {pct(total, 0.9):.0f} ms | | |")
        settled = [m["settled"] for m in moves if "settled" in m]
        if settled:
            print(
                f"| slider -> bars settled at the new values (median; transition included) | "
                f"{statistics.median(settled):.0f} ms | | |"
            )
        print(
            f"| of which: key -> kernel -> slider echo (median) | {statistics.median(m['echo'] for m in moves):.0f} ms"
            " | | |"
        )
        fig = [m for m in moves if "fig_msg" in m]
        if fig:
            print(
                f"| of which: echo -> figure update message arrives (median) | "
                f"{statistics.median(m['fig_msg'] - m['echo'] for m in fig):.0f} ms | | |"
            )
            print(
                f"| of which: message -> plotly.js has drawn it (median) | "
                f"{statistics.median(m['total'] - m['fig_msg'] for m in fig):.0f} ms | | |"
            )
        else:
            print(
                f"| of which: echo -> figure drawn (median) | "
                f"{statistics.median(m['total'] - m['echo'] for m in moves):.0f} ms | | |"
            )
    if args.profile:
        py = python_side_ms()
        print()
        print(
            f"Kernel-side Python per move (no comm): editor {py['editor']:.1f} ms, "
            f"editor + figure update {py['total']:.1f} ms (median)"
        )
        if results[0].get("cpu"):
            print("Browser CPU per move (sampled):")
            for key, ms in results[0]["cpu"]:
                if ms >= 0.05:
                    print(f"  {ms:7.1f} ms  {key}")
    return 1 if (missed and args.strict) else 0


if __name__ == "__main__":
    sys.exit(main())
