"""The shape of specviz in one place: layers, no import cycle, a size cap, and docs/architecture.md kept true.

* **Layers.** Every module belongs to one layer of `LAYERS` and imports (deferred imports and the
  packages' lazy names included) only from its own layer and the ones listed before it: the real-model
  runtime (`specviz.lm`) imports no figure or widget, the figures import no widget. A few
  finer rules: what the figure builders may use, which widgets may use `specviz.lm`, no
  `_private` name imported across modules, relative imports outside the entry points.
* **Without torch.** `specviz.lm`'s torch-free modules import where torch cannot, and
  importing `specviz.figures` loads no torch, ipywidgets or real-model runtime.
* **No import cycle**, deferred (function-level) imports included.
* **One size cap**, a smoke alarm: `MAX_LINES` (600) per module, and the message catalogue,
  which is data, on `OVER_THE_CAP`. Modules are split by idea, not by length.
* **The map is true**: docs/architecture.md names every module (under its layer's heading)
  and no module that does not exist, and lists every tests/test_*.py file once.

Each rule is a function over the source, and each has a planted case showing it can fail.
"""

from __future__ import annotations

import ast
import functools
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import source_index

REPO = Path(__file__).resolve().parent.parent
ROOT = REPO / "specviz"
DOC = REPO / "docs" / "architecture.md"

# ----------------------------------------------------------------------------- the rules, as data

LAYERS = (  # lowest first: a module imports only from its own layer and the ones before it
    ("foundation", ("foundation",)),  # input checks, messages, colours, budgets, child processes
    ("exact math", ("exact",)),  # the rules and their laws, enumerated
    ("samplers", ("samplers",)),  # draws by the rules, and the audit
    ("real models", ("lm",)),  # the runtime: no plotly, no ipywidgets
    ("figures", ("figures", "htmlkit")),
    ("widgets", ("widgets",)),
    ("entry points", ("", "startup", "__main__", "cli", "display", "exercises")),  # "": the package itself
)
"""Layer name -> its modules and packages (a package's modules are in its layer), relative to `specviz`."""

TORCH_FREE = (
    "specviz.lm.stats.stats",
    "specviz.lm.stats.fates",
    "specviz.lm.serve.vllm",
    "specviz.lm.serve.vllm_counters",
    "specviz.lm.serve.http_get",
    "specviz.lm.load.hub",
    "specviz.lm.load.card",
    "specviz.lm.gamma.payoff",
    "specviz.lm.engine.results",
    "specviz.lm.engine.pair",
    "specviz.lm.engine.settings",
    "specviz.lm.engine.inputs",
)
"""The real-model modules that import on the plain install (`specviz vllm-stats` needs no torch)."""

FIGURES_USE = {  # what a figure builder may import from outside specviz/figures: the torch-free core
    *(f"specviz.foundation.{m}" for m in ("checks", "examples", "i18n", "palette", "validate")),
    *(f"specviz.exact.{m}" for m in ("gamma", "multidraft", "numerics", "rules", "standardize", "theory")),
    *(f"specviz.samplers.{m}" for m in ("coupling", "sampling", "tree")),
    "specviz.lm.gamma.payoff",  # the one real-model module a figure reads (numbers of the core, no torch)
}
FIGURE_SIBLINGS = {  # beside `style`: static images reuse export's browser lookup; a real run's views share `run_data`
    "static": {"export"},
    "per_position": {"run_data"},
    "accepted_hist": {"run_data"},
    "gamma_sweep": {"run_data"},
    "position_money": {"money", "run_data"},
    "acceptance_panels": {"accepted_hist", "per_position"},
    "live_panels": {"accepted_hist", "gamma_per_step", "gamma_sweep", "money", "per_position"}
    | {"position_money", "throughput"},
}
"""The other views a figure module may import; every other view imports only `style` (and `style` no view)."""

MAX_LINES = 600  # a smoke alarm, not a design rule: a module holds one idea, however long that takes
OVER_THE_CAP = {  # module -> (its ceiling, why it is one module); shrink the list, do not grow it
    "specviz/foundation/messages.py": (1400, "data, not logic: every UI and figure string in English and Chinese"),
}

ENTRY_POINTS_ONLY = "entry points"  # the one layer that may import `specviz` absolutely
DYNAMIC_IMPORTS = {  # the files that import by a computed name, and what they load that way
    "specviz/__init__.py": "the lazy UI names (`_LAZY`)",
    "specviz/lm/__init__.py": "its public names on first use (`HOMES`)",
    "specviz/widgets/__init__.py": "the live views on first use (`LIVE`)",
    "specviz/exercises/__init__.py": "each tutorial's exercises (`nb*.py`)",
    "specviz/widgets/fastload.py": "`rfc3987_syntax` (not specviz)",
}


# ----------------------------------------------------------------------------- reading the source


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = ["specviz", *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_files(root: Path = ROOT) -> dict[str, Path]:
    return {module_name(p, root): p for p in source_index.python_files(root)}


def imports(path: Path, name: str, files: dict[str, Path]) -> list[tuple[str, ast.AST]]:
    """(specviz module, the import node) for every import in the file, at any depth."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in source_index.nodes(source_index.text(path)):
        if isinstance(node, ast.Import):
            found += [(a.name, node) for a in node.names if a.name.split(".")[0] == "specviz"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "specviz":
                continue
            subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in files]
            found += [(d, node) for d in (subs if subs and len(subs) == len(node.names) else [target])]
    return [(d, node) for d, node in found if d in files and d != name]


def lazy_edges(files: dict[str, Path]) -> dict[str, set[str]]:
    """The names a package loads on first use (PEP 562), as import edges, the package root's own included."""
    import specviz
    import specviz.lm
    import specviz.widgets

    edges = {
        "specviz": {module for module, _ in specviz._LAZY.values()},  # noqa: SLF001 - the table the root reads
        "specviz.lm": {f"specviz.lm.{m}" for m in specviz.lm.HOMES.values()},
        "specviz.widgets": {f"specviz.widgets.{m}" for m in specviz.widgets.LIVE.values()},
        "specviz.exercises": {m for m in files if m.startswith("specviz.exercises.nb")},
    }
    return {k: {d for d in v if d in files} for k, v in edges.items()}


def import_graph(root: Path = ROOT, lazy: bool = False) -> dict[str, set[str]]:
    """module -> the specviz modules it imports anywhere in its source (and, with `lazy`, loads on first use)."""
    files = module_files(root)
    graph = {name: {d for d, _ in imports(path, name, files)} for name, path in files.items()}
    if lazy:
        for name, deps in lazy_edges(files).items():
            graph[name] |= deps
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as [a, b, ..., a], or None (depth-first search)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node):
        state[node] = 1
        path.append(node)
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                return path[path.index(dep) :] + [dep]
            if dep not in state and (found := visit(dep)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def layer_of(module: str) -> int | None:
    """The index in `LAYERS` of a module's layer (a package's modules share its layer), or None."""
    for rank, (_, members) in enumerate(LAYERS):
        for m in members:
            full = f"specviz.{m}" if m else "specviz"
            if module == full or (m and module.startswith(full + ".")):
                return rank
    return None


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """Every import of a module from a layer listed after its own, and every module in no layer."""
    bad = [f"{m} is in no layer of LAYERS" for m in graph if layer_of(m) is None]
    for m, deps in sorted(graph.items()):
        for d in sorted(deps):
            if None not in (layer_of(m), layer_of(d)) and layer_of(d) > layer_of(m):
                bad.append(f"{m} ({LAYERS[layer_of(m)][0]}) imports {d} ({LAYERS[layer_of(d)][0]})")
    return bad


def finer_violations(graph: dict[str, set[str]]) -> list[str]:
    """The rules the layer order alone leaves open: what figures use, which widgets use `specviz.lm`."""
    bad = []
    for m, deps in sorted(graph.items()):
        view = m.removeprefix("specviz.figures.")
        if m.startswith("specviz.figures."):
            siblings = {"specviz.figures.style"} - {m} | {f"specviz.figures.{s}" for s in FIGURE_SIBLINGS.get(view, ())}
            bad += [f"{m} imports {d}" for d in sorted(deps - FIGURES_USE - siblings)]
        tutorial_widget = m.startswith("specviz.widgets.") and not m.startswith("specviz.widgets.live")
        if tutorial_widget:  # the tutorial apps run without torch: they never touch the real models
            bad += [f"{m} imports {d}" for d in sorted(deps) if d.startswith("specviz.lm")]
    return bad


def import_style_violations(files: dict[str, Path]) -> list[str]:
    """`_private` names imported from another module (specviz's or a library's), and absolute `specviz`
    imports outside the entry points."""
    top = [name for name, _ in LAYERS].index(ENTRY_POINTS_ONLY)
    bad = []
    for name, path in files.items():
        for node in source_index.nodes(source_index.text(path)):
            if isinstance(node, ast.ImportFrom) and node.module != "__future__":
                private = [a.name for a in node.names if a.name.startswith("_")]
                source = "." * node.level + (node.module or "")
                bad += [f"{name} imports the private name {p} from {source}" for p in private]
        for d, node in imports(path, name, files):
            if not getattr(node, "level", 0) and layer_of(name) != top:
                bad.append(f"{name} imports {d} absolutely (use a relative import)")
    return sorted(set(bad))


def dynamic_import_sites(root: Path = ROOT) -> set[str]:
    """The files that call `import_module(...)` or `__import__(...)`."""
    sites = set()
    for path in source_index.python_files(root):
        for node in source_index.nodes(source_index.text(path)):
            if isinstance(node, ast.Call):
                f = node.func
                if getattr(f, "id", None) in ("import_module", "__import__") or getattr(f, "attr", None) == (
                    "import_module"
                ):
                    sites.add(path.relative_to(root.parent).as_posix())
    return sites


def oversized(root: Path = ROOT, allowed: dict[str, tuple[int, str]] = OVER_THE_CAP) -> list[str]:
    """Modules over their cap, and allow-list entries that no longer need to be there."""
    bad, files = [], module_files(root)
    for path in files.values():
        rel = path.relative_to(root.parent).as_posix()
        cap = MAX_LINES
        lines = len(path.read_text(encoding="utf-8").splitlines())
        ceiling = allowed.get(rel, (cap, ""))[0]
        if lines > ceiling:
            bad.append(f"{rel}: {lines} lines, over {ceiling} (split it by job)")
        elif rel in allowed and lines <= cap:
            bad.append(f"{rel}: {lines} lines, under the cap of {cap}: take it off OVER_THE_CAP")
    known = {p.relative_to(root.parent).as_posix() for p in files.values()}
    bad += [f"{rel} is on OVER_THE_CAP but does not exist" for rel in sorted(set(allowed) - known)]
    return bad


# ----------------------------------------------------------------------------- the graph is read


@functools.cache
def package_graph() -> dict[str, set[str]]:
    """The real package's graph, lazy names included (read once, when a test first asks)."""
    return import_graph(lazy=True)


@pytest.mark.slow
def test_the_graph_is_really_read():
    assert "specviz.lm.engine.results" in package_graph()["specviz.lm.engine.loop"]
    assert "specviz.lm.gamma.payoff" in package_graph()["specviz.figures.payoff"]
    assert "specviz.figures" in package_graph()["specviz.widgets.live.view"]  # `from .. import figures as LF`
    assert "specviz.lm.serve.vllm" in package_graph()["specviz.cli.vllm_stats"]  # a deferred import counts
    assert (
        "specviz.widgets.base" in package_graph()["specviz.widgets.money"]
        or "specviz.widgets.editor_app" in package_graph()["specviz.widgets.money"]
    )
    assert "specviz.lm.engine.loop" in package_graph()["specviz.lm"]  # a lazy name counts
    assert "specviz.widgets.live" in package_graph()["specviz.widgets"]
    assert "specviz.exercises.nb01" in package_graph()["specviz.exercises"]


def test_names_are_loaded_by_a_computed_name_only_where_known():
    """A new lazy table would hide imports from the graph: each such file is listed (and read) here."""
    unknown = dynamic_import_sites() - set(DYNAMIC_IMPORTS)
    assert not unknown, f"{sorted(unknown)} import by a computed name: read their table in lazy_edges, list them here"
    assert "specviz/lm/__init__.py" in dynamic_import_sites()  # the scan is really done


# ----------------------------------------------------------------------------- layers


def test_every_module_imports_only_its_own_layer_and_the_ones_before():
    """core -> samplers -> the real-model runtime -> figures -> widgets -> entry points, never back."""
    assert not layer_violations(package_graph()), "\n".join(layer_violations(package_graph()))


def test_figures_use_the_torch_free_core_and_widgets_the_real_models_only_in_the_live_views():
    assert not finer_violations(package_graph()), "\n".join(finer_violations(package_graph()))


def test_no_private_names_across_modules_and_relative_imports_outside_the_entry_points():
    assert not import_style_violations(module_files()), "\n".join(import_style_violations(module_files()))


def planted_package(tmp_path: Path, sources: dict[str, str]) -> Path:
    root = tmp_path / "specviz"
    for rel, text in {"__init__.py": "", "lm/__init__.py": "", "figures/__init__.py": "", **sources}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_planted_layer_breaks_are_caught(tmp_path):
    root = planted_package(
        tmp_path,
        {
            "lm/results.py": "def html():\n    from ..figures.money import bars  # deferred, still upward\n",
            "figures/money.py": "from ..exact.theory import overlap\nfrom . import _helpers\nfrom ..lm.engine import step\n"
            "from plotly.io import _stash\n",
            "figures/_helpers.py": "",
            "exact/theory.py": "",
            "lm/engine.py": "",
            "scratch.py": "import specviz.exact.theory\n",
            "figures/lazy.py": "import importlib\n\nWIDGETS = importlib.import_module('specviz.widgets')\n",
        },
    )
    assert dynamic_import_sites(root) == {"specviz/figures/lazy.py"}  # hidden from the graph, so it must be listed
    graph = import_graph(root)
    assert layer_violations(graph) == [
        "specviz.scratch is in no layer of LAYERS",
        "specviz.lm.results (real models) imports specviz.figures.money (figures)",
    ]
    assert finer_violations(graph) == [
        "specviz.figures.money imports specviz.figures._helpers",
        "specviz.figures.money imports specviz.lm.engine",
    ]
    files = module_files(root)
    assert import_style_violations(files) == [
        "specviz.figures.money imports the private name _helpers from .",
        "specviz.figures.money imports the private name _stash from plotly.io",
        "specviz.scratch imports specviz.exact.theory absolutely (use a relative import)",
    ]


# ----------------------------------------------------------------------------- no import cycle


def test_no_import_cycle_deferred_imports_included():
    cycle = find_cycle(package_graph())
    assert cycle is None, " -> ".join(cycle)


def test_a_planted_cycle_is_found(tmp_path):
    root = planted_package(
        tmp_path,
        {
            "lm/results.py": "def html():\n    from .render import fates_html  # deferred\n",
            "lm/render.py": "from .results import html\n",
        },
    )
    assert find_cycle(import_graph(root)) == ["specviz.lm.render", "specviz.lm.results", "specviz.lm.render"]
    (root / "lm" / "results.py").write_text("")
    assert find_cycle(import_graph(root)) is None


# ----------------------------------------------------------------------------- without torch

WITHOUT_TORCH = r"""
import importlib, json, sys
for name in ("torch", "transformers"):
    sys.modules[name] = None  # as on `pip install specviz`: importing them fails
result = {}
for module in sys.argv[1:]:
    try:
        importlib.import_module(module)
        result[module] = "ok"
    except ImportError as e:
        result[module] = f"ImportError: {e}"
print(json.dumps(result))
"""


def import_without_torch(*modules: str) -> dict[str, str]:
    out = subprocess.run(
        [sys.executable, "-c", WITHOUT_TORCH, *modules], capture_output=True, text=True, timeout=120, cwd=REPO
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout)


def test_the_torch_free_real_model_modules_import_without_torch():
    result = import_without_torch(*TORCH_FREE, "specviz.lm.engine.loop")
    assert {m: result[m] for m in TORCH_FREE} == dict.fromkeys(TORCH_FREE, "ok")
    assert "torch" in result["specviz.lm.engine.loop"]  # the check can fail: the engine needs torch


def test_importing_figures_loads_no_torch_widgets_or_real_model_runtime():
    code = (
        "import json, sys, specviz.figures; "
        "print(json.dumps([sorted(m for m in ('torch', 'ipywidgets', 'specviz.widgets') if m in sys.modules), "
        "sorted(m for m in sys.modules if m.startswith('specviz.lm'))]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    heavy, lm = json.loads(out.stdout)
    assert heavy == []
    used = {m for m in FIGURES_USE if m.startswith("specviz.lm.")}  # payoff: no torch
    assert lm == sorted({"specviz.lm", *used, *(packages(m) for m in used)})
    assert set(lm) <= {"specviz.lm", *TORCH_FREE, *(packages(m) for m in TORCH_FREE)}


def packages(module: str) -> str:
    """The package a module of specviz.lm sits in (specviz.lm.gamma.payoff -> specviz.lm.gamma)."""
    return module.rpartition(".")[0]


# ----------------------------------------------------------------------------- one size cap


def test_every_module_is_under_the_size_cap_or_on_the_short_allow_list():
    assert not oversized(), "\n".join(oversized())
    assert len(OVER_THE_CAP) <= 15, "the allow-list is meant to be short: split a module instead"
    assert all(reason for _, reason in OVER_THE_CAP.values())


def test_a_planted_long_module_is_caught(tmp_path):
    root = planted_package(tmp_path, {"exact/theory.py": "x = 1\n" * (MAX_LINES + 1), "widgets/live.py": "\n" * 261})
    allowed = {"specviz/exact/rules.py": (400, "gone"), "specviz/lm/__init__.py": (400, "small now")}
    assert oversized(root, allowed) == [
        f"specviz/exact/theory.py: {MAX_LINES + 1} lines, over {MAX_LINES} (split it by job)",
        f"specviz/lm/__init__.py: 0 lines, under the cap of {MAX_LINES}: take it off OVER_THE_CAP",
        "specviz/exact/rules.py is on OVER_THE_CAP but does not exist",
    ]


# ----------------------------------------------------------------------------- docs/architecture.md is true

MODULE_PATH = re.compile(r"`(specviz/[\w/]+\.py)`")
TEST_PATH = re.compile(r"`(tests/test_\w+\.py)`")


def section(text: str, heading: str) -> str:
    """The text under a `## heading`, up to the next `## `."""
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, f"docs/architecture.md has no '## {heading}' section"
    return match.group(1)


def doc_problems(text: str, files: dict[str, Path], repo: Path = REPO) -> list[str]:
    """Modules the doc does not name (or names under another layer's heading), and paths it names that do not exist."""
    rel = {name: path.relative_to(repo).as_posix() for name, path in files.items()}
    named = set(MODULE_PATH.findall(text))
    bad = [f"{p} is named in docs/architecture.md but does not exist" for p in sorted(named - set(rel.values()))]
    bad += [f"{p} is not named in docs/architecture.md" for p in sorted(set(rel.values()) - named)]
    module_map = section(text, "Module map")
    headed = {}  # path -> the ### heading it is listed under
    for block in re.split(r"^### ", module_map, flags=re.M)[1:]:
        heading = block.splitlines()[0].strip()
        headed.update(dict.fromkeys(MODULE_PATH.findall(block), heading))
    for name, path in sorted(rel.items()):
        want = LAYERS[layer_of(name)][0] if layer_of(name) is not None else None
        if want is not None and path in named and headed.get(path) != want:
            bad.append(f"{path} belongs in the module map under '### {want}' (found: {headed.get(path)})")
    for test in sorted(set(TEST_PATH.findall(text))):
        if not (repo / test).is_file():
            bad.append(f"{test} is named in docs/architecture.md but does not exist")
    return bad


def listed_tests_problems(text: str, repo: Path = REPO) -> list[str]:
    """Every tests/test_*.py file listed once in the doc's 'Tests by layer'."""
    listed = TEST_PATH.findall(section(text, "Tests by layer"))
    files = sorted(p.relative_to(repo).as_posix() for p in (repo / "tests").glob("test_*.py"))
    bad = [f"{t} is not in 'Tests by layer'" for t in files if t not in listed]
    bad += [
        f"{t} is listed {listed.count(t)} times in 'Tests by layer'" for t in sorted(set(listed)) if listed.count(t) > 1
    ]
    return bad


def test_the_architecture_doc_names_every_module_under_its_layer():
    problems = doc_problems(DOC.read_text(encoding="utf-8"), module_files())
    assert not problems, "\n".join(problems)


def test_the_architecture_doc_lists_every_test_file_once():
    problems = listed_tests_problems(DOC.read_text(encoding="utf-8"))
    assert not problems, "\n".join(problems)


def test_a_stale_doc_is_caught(tmp_path):
    root = planted_package(tmp_path, {"exact/theory.py": "", "lm/engine.py": ""})
    (tmp_path / "tests").mkdir()
    for t in ("test_theory.py", "test_lm_engine.py"):
        (tmp_path / "tests" / t).write_text("")
    doc = (
        "## Module map\n### exact math\n`specviz/exact/theory.py` `specviz/lm/engine.py` `specviz/lm/gone.py`\n"
        "### entry points\n`specviz/__init__.py`\n"
        "## Tests by layer\n`tests/test_theory.py` `tests/test_theory.py` `tests/test_gone.py`\n"
    )
    assert doc_problems(doc, module_files(root), tmp_path) == [
        "specviz/lm/gone.py is named in docs/architecture.md but does not exist",
        "specviz/figures/__init__.py is not named in docs/architecture.md",
        "specviz/lm/__init__.py is not named in docs/architecture.md",
        "specviz/lm/engine.py belongs in the module map under '### real models' (found: exact math)",
        "tests/test_gone.py is named in docs/architecture.md but does not exist",
    ]
    assert listed_tests_problems(doc, tmp_path) == [
        "tests/test_lm_engine.py is not in 'Tests by layer'",
        "tests/test_theory.py is listed 2 times in 'Tests by layer'",
    ]


# ----------------------------------------------------------------------------- one γ parser

GAMMA_PARSER = "specviz/foundation/checks.py"
"""The one module that reads and checks a γ (`checks.gamma_setting`) and holds its bound (`MAX_GAMMA`)."""
GAMMA_READINGS = {  # what reading or bounding a γ looks like, anywhere else
    "parses 'auto'": re.compile(r"\.(?:lower|strip|casefold)\(\)[^#\n]*(?:\bAUTO\b|[\"']auto[\"'])"),
    "checks a γ as an integer": re.compile(r"\b(?:integer|whole)\(\s*\w+,\s*[\"']gamma\b"),
    "defines a γ bound": re.compile(r"^\s*MAX_GAMMA\s*=", re.M),
}


def gamma_readings(root: Path = ROOT) -> list[str]:
    """Every place outside GAMMA_PARSER that parses, checks or bounds a γ on its own."""
    bad = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).as_posix()
        if rel == GAMMA_PARSER:
            continue
        text = path.read_text(encoding="utf-8")
        for what, pattern in GAMMA_READINGS.items():
            for m in pattern.finditer(text):
                bad.append(
                    f"{rel}:{text.count(chr(10), 0, m.start()) + 1} {what}: call specviz.foundation.checks.gamma_setting"
                )
    return bad


def test_a_gamma_is_read_and_checked_in_one_function():
    problems = gamma_readings()
    assert not problems, "\n".join(problems)


def test_a_planted_second_gamma_parser_is_caught(tmp_path):
    root = planted_package(
        tmp_path,
        {
            "foundation/checks.py": "MAX_GAMMA = 1000\ndef gamma_setting(x):\n    return 'auto' if x.strip().lower() == 'auto' else x\n",
            "cli.py": "def gamma_value(text):\n    if text.strip().lower() == 'auto':\n        return 'auto'\n",
            "lm/adaptive.py": "MAX_GAMMA = 1_000\ndef f(g):\n    return integer(g, 'gamma', lo=0)\n",
            "samplers/chain.py": "n = integer(gamma, \"gamma (number of drafted tokens)\", lo=1)\nok = integer(k, 'top_k')\n",
        },
    )
    assert gamma_readings(root) == [
        "specviz/cli.py:2 parses 'auto': call specviz.foundation.checks.gamma_setting",
        "specviz/lm/adaptive.py:3 checks a γ as an integer: call specviz.foundation.checks.gamma_setting",
        "specviz/lm/adaptive.py:1 defines a γ bound: call specviz.foundation.checks.gamma_setting",
        "specviz/samplers/chain.py:1 checks a γ as an integer: call specviz.foundation.checks.gamma_setting",
    ]


# ----------------------------------------------------------------------------- lm/ in rooms

LM_ROOMS = 8


def lm_layout(root: Path = ROOT) -> tuple[list[str], list[str]]:
    """(the packages of specviz/lm, its modules outside them but its own __init__)."""
    lm = root / "lm"
    rooms = sorted(p.parent.name for p in lm.glob("*/__init__.py"))
    loose = sorted(p.name for p in lm.glob("*.py") if p.name != "__init__.py")
    return rooms, loose


def test_lm_is_a_few_rooms_with_no_loose_module():
    rooms, loose = lm_layout()
    assert len(rooms) <= LM_ROOMS, f"specviz/lm has {len(rooms)} packages: {rooms}"
    assert loose == [], f"modules of specviz/lm outside its packages: {loose}"


def test_a_loose_module_and_a_ninth_room_are_caught(tmp_path):
    root = planted_package(tmp_path, {f"lm/room{i}/__init__.py": "" for i in range(LM_ROOMS + 1)} | {"lm/loose.py": ""})
    rooms, loose = lm_layout(root)
    assert len(rooms) == LM_ROOMS + 1 and loose == ["loose.py"]
