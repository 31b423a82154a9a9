"""The colour language is safe for colour-blind readers, and no fact rests on colour alone.

- Every pair of role colours (overlap, residual, p, q, rejected, empirical) stays apart when
  protanopia, deuteranopia and tritanopia are simulated with the matrices of Machado,
  Oliveira & Fernandes (2009), "A Physiologically-based Model for Simulation of Color
  Vision Deficiency", IEEE TVCG 15(6), severity 1.0, applied in linear RGB. Distance:
  CIELAB ΔE*76. The old (matplotlib tab10) palette fails the same check: the test can fail.
- Overlap, residual and rejected mass have distinct patterns in the static figures, and
  distinct marks (✓ ↻ ✗) in the bar text where the widgets animate without patterns.
- Text drawn in a palette colour, and the apps' message boxes, reach WCAG AA contrast 4.5:1.

And the colours have one home: `specviz.foundation.palette` (plotly-free) holds every hex colour of the
package, the token fates' colours are its role colours, and `specviz.figures` exports figure
builders only (`is_builder`), the helpers staying in their modules.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest
import source_index

import specviz
import specviz.figures as F
from specviz.figures.style import trace_by_meta
from specviz.foundation import palette
from specviz.foundation.palette import MASS_MARKS, PALETTE, PATTERNS, STATUS, contrast_ratio, rgba, text_colour
from specviz.samplers.sampling import spec_sample
from specviz.widgets import base

ROLES = ("overlap", "residual", "p", "q", "rejected", "empirical")
MASSES = ("overlap", "residual", "rejected")
MIN_DELTA_E = 12.0  # CIELAB ΔE*76: ~2.3 is a just-noticeable difference; 12 keeps roles clearly apart
P, Q = [0.6, 0.3, 0.1], [0.4, 0.5, 0.1]

# Machado et al. (2009), Table 1 (severity 1.0), in linear RGB.
CVD = {
    "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
    "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]],
    "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]],
}
OLD_TAB10 = {
    "overlap": "#1f77b4",
    "residual": "#2ca02c",
    "p": "#d62728",
    "q": "#7f7f7f",
    "rejected": "#ff7f0e",
    "empirical": "#9467bd",
}


def linear_rgb(colour: str) -> np.ndarray:
    c = np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)]) / 255.0
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def lab(lin: np.ndarray) -> np.ndarray:
    """CIELAB (D65) of a linear-RGB colour."""
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ np.clip(lin, 0, 1)
    t = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(t > (6 / 29) ** 3, np.cbrt(t), t / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def closest_pair(palette: dict, matrix) -> tuple[float, str, str]:
    """The smallest ΔE*76 between two roles of `palette` as seen through `matrix`."""
    m = np.asarray(matrix)
    seen = {role: lab(m @ linear_rgb(palette[role])) for role in palette}
    return min((float(np.linalg.norm(seen[a] - seen[b])), a, b) for a, b in itertools.combinations(palette, 2))


def test_lab_of_white_and_black():
    assert np.allclose(lab(linear_rgb("#ffffff")), [100, 0, 0], atol=0.05)
    assert np.allclose(lab(linear_rgb("#000000")), [0, 0, 0], atol=1e-9)


@pytest.mark.parametrize("deficiency", sorted(CVD))
def test_role_colours_stay_apart_for_colour_blind_readers(deficiency):
    palette = {role: PALETTE[role] for role in ROLES}
    d, a, b = closest_pair(palette, CVD[deficiency])
    assert d >= MIN_DELTA_E, f"{deficiency}: {a} {palette[a]} and {b} {palette[b]} are only ΔE {d:.1f} apart"


def test_the_check_fails_on_the_old_palette():
    """The tab10 palette (blue/green/red/orange) collapses for red-green deficiencies."""
    worst = min(closest_pair(OLD_TAB10, CVD[k])[0] for k in ("protanopia", "deuteranopia"))
    assert worst < MIN_DELTA_E


def test_mass_fills_differ_in_lightness_too():
    """In greyscale: overlap, residual and the (translucent) rejected fill differ by ≥ 10 in L*."""
    rejected = re.findall(r"[\d.]+", rgba(PALETTE["rejected"], 0.35))
    over_white = np.array([float(v) for v in rejected[:3]]) / 255 * 0.35 + 0.65
    hexes = {
        "overlap": PALETTE["overlap"],
        "residual": PALETTE["residual"],
        "rejected": "#" + "".join(f"{round(v * 255):02x}" for v in over_white),
    }
    lightness = {k: lab(linear_rgb(v))[0] for k, v in hexes.items()}
    for a, b in itertools.combinations(lightness, 2):
        assert abs(lightness[a] - lightness[b]) >= 10, lightness


def shapes(fig, metas) -> dict:
    return {m: (trace_by_meta(fig, m).marker.pattern.shape or "") for m in metas}


def test_each_mass_has_its_own_pattern():
    assert len({PATTERNS[m] for m in MASSES}) == 3
    money = shapes(F.money_diagram(P, Q), MASSES)
    assert money == {m: PATTERNS[m] for m in MASSES}
    rule = shapes(F.rule_figure(P, Q, "lossless"), ("accept", "reject"))
    assert rule == {"accept": PATTERNS["overlap"], "reject": PATTERNS["residual"]}
    sample = F.monte_carlo_figure(P, Q, spec_sample(P, Q, 500, seed=0))
    assert shapes(sample, ("accepted", "resampled")) == {
        "accepted": PATTERNS["overlap"],
        "resampled": PATTERNS["residual"],
    }


def test_the_animated_money_diagram_marks_each_mass_in_its_text():
    """Without patterns (hatch=False, what the widget animates) the bar text names the mass."""
    fig = F.money_diagram(P, Q, hatch=False)
    assert all(not trace_by_meta(fig, m).marker.pattern.shape for m in MASSES)
    assert len(set(MASS_MARKS.values())) == 3
    for m in MASSES:
        texts = [s for s in trace_by_meta(fig, m).text if s]
        assert texts and all(s.startswith(MASS_MARKS[m] + " ") for s in texts), (m, texts)


@pytest.mark.parametrize("role", sorted(k for k, v in PALETTE.items() if isinstance(v, str)))
def test_text_in_a_palette_colour_is_readable(role):
    colour = text_colour(PALETTE[role])
    assert contrast_ratio(colour) >= 4.5
    assert contrast_ratio(PALETTE[role]) < 4.5 or colour.lower() == PALETTE[role].lower()  # only darkened if needed


def style_colours(style: str) -> dict:
    return dict(re.findall(r"(color|background):(#[0-9a-fA-F]{6})", style))


def test_message_boxes_and_verdicts_are_readable():
    err = style_colours(base.ERROR_STYLE)
    assert contrast_ratio(err["color"], err["background"]) >= 4.5
    assert contrast_ratio(style_colours(base.INFO_STYLE)["color"]) >= 4.5
    # the verdicts (PASS/FAIL, close/far, not answered) and the notes are text on white
    for name, colour in {**STATUS, **{k: palette.INK[k] for k in ("text", "dim")}}.items():
        assert contrast_ratio(colour) >= 4.5, (name, colour)
    assert contrast_ratio(STATUS["fail"], palette.STATUS_BG["fail"]) >= 4.5
    assert contrast_ratio(STATUS["pass"], palette.STATUS_BG["pass"]) >= 4.5


def test_contrast_ratio_matches_wcag_examples():
    assert contrast_ratio("#767676") == pytest.approx(4.54, abs=0.01)  # the lightest grey that passes on white
    assert contrast_ratio("#777777") < 4.5


# ----------------------------------------------------------------------------- one home for the colours

SPECVIZ = Path(specviz.__file__).parent
HEX = re.compile(r"(?<![\w/&])#(?:[0-9a-fA-F]{8}|[0-9a-fA-F]{6}|[0-9a-fA-F]{3,4})\b")
"""A hex colour (#rgb, #rgba, #rrggbb, #rrggbbaa), not an issue number (plotly.py#4933) or an HTML entity."""


def hex_colours(source: str) -> list[str]:
    """The hex colours in the string literals of Python `source`, f-strings included (docstrings and comments are prose)."""
    every_node = source_index.nodes(source)
    docstrings = {
        id(node.body[0].value)
        for node in every_node
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        m.group(0)
        for node in every_node
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
        for m in HEX.finditer(node.value)
    ]


def test_no_hex_colour_outside_the_palette():
    found = {
        str(path.relative_to(SPECVIZ.parent)): colours
        for path in source_index.python_files(SPECVIZ)
        if path != SPECVIZ / "foundation" / "palette.py" and (colours := hex_colours(source_index.text(path)))
    }
    assert not found, (
        f"hex colours outside specviz/foundation/palette.py (take them from specviz.foundation.palette): {found}"
    )
    assert (
        len(hex_colours((SPECVIZ / "foundation" / "palette.py").read_text(encoding="utf-8"))) > 20
    )  # the scan sees the palette's


def test_the_hex_check_finds_a_planted_colour():
    planted = 'COLOUR = "#1a7f37"\nCSS = f"color:#abc;border:{COLOUR}"\nBOX = "border:1px solid #ff818266"\n'
    assert sorted(hex_colours(planted)) == ["#1a7f37", "#abc", "#ff818266"]
    prose = '"""Blue (#0072B2)."""\n# a comment: #0072B2\nURL = "plotly.py#4933"\nENTITY = "&#1234;"\n'
    assert hex_colours(prose) == []
    # a real module with one colour planted in it fails the check
    module = (SPECVIZ / "widgets" / "base.py").read_text(encoding="utf-8")
    assert hex_colours(module) == []
    assert hex_colours(module + '\nWARN_STYLE = "color:#9a6700"\n') == ["#9a6700"]


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
def test_the_palette_imports_without_plotly_or_numpy():
    """specviz.foundation.palette and the text views built on it (fates, audit verdicts, exercise feedback) need no plotly."""
    code = (
        "import sys\n"
        "sys.modules['plotly'] = None  # any 'import plotly...' now fails\n"
        "import specviz.foundation.palette as P, specviz.lm.stats.fates, specviz.samplers.audit, specviz.exercises.core\n"
        "assert not any(m.startswith('plotly') for m in sys.modules if sys.modules[m] is not None)\n"
        "print(P.rgba(P.PALETTE['overlap'], 0.5))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "rgba(0,114,178,0.5)", out.stderr
    blocked = subprocess.run(
        [sys.executable, "-c", "import sys; sys.modules['plotly'] = None; import specviz.figures.style"],
        capture_output=True,
        text=True,
    )
    assert blocked.returncode != 0 and "plotly" in blocked.stderr  # the blocker works: the figures do need plotly
    imports = [
        n
        for n in ast.walk(ast.parse((SPECVIZ / "foundation" / "palette.py").read_text(encoding="utf-8")))
        if isinstance(n, ast.Import | ast.ImportFrom)
    ]
    assert {n.module for n in imports if isinstance(n, ast.ImportFrom)} <= {"__future__", "collections.abc"}
    assert not [n for n in imports if isinstance(n, ast.Import)]  # plain Python: no numpy, no plotly


def test_the_fate_colours_are_palette_entries():
    from specviz.lm.stats import fates

    assert fates.FATE_COLORS is palette.FATE_COLORS
    roles = {"accepted": "overlap", "resampled": "residual", "bonus": "empirical", "target": "p"}
    assert {fate: PALETTE[role] for fate, role in roles.items()} == palette.FATE_COLORS
    assert set(palette.FATE_COLORS) == set(fates.FATES)


def test_series_and_status_colours_are_hex():
    for name, colour in [
        *((f"LOSSLESS_SERIES[{i}]", c) for i, c in enumerate(palette.LOSSLESS_SERIES)),
        *((f"LOSSY_SERIES[{i}]", c) for i, c in enumerate(palette.LOSSY_SERIES)),
        *STATUS.items(),
        *palette.STATUS_BG.items(),
        *palette.INK.items(),
    ]:
        assert HEX.fullmatch(colour), (name, colour)


# ----------------------------------------------------------------------------- figures.__all__: builders only


def is_builder(name: str, obj) -> bool:
    """A figure builder: a function annotated `-> go.Figure` whose first parameter is not a figure (it makes one
    from data). Or a patch of one: `*_patch` / `*_patches` returning a dict, or `apply_*` taking the figure first."""
    if not inspect.isfunction(obj):
        return False
    sig = inspect.signature(obj)
    params = list(sig.parameters)
    returns = str(sig.return_annotation)  # a string: the modules use `from __future__ import annotations`
    if name.startswith("apply_"):
        return params[:1] == ["fig"]
    if re.search(r"_patch(es)?$", name):
        return returns.startswith("dict")
    return returns in ("go.Figure", "Figure") and params[:1] != ["fig"]


def test_figures_exports_builders_only():
    not_builders = [n for n in F.__all__ if not is_builder(n, getattr(F, n))]
    assert not not_builders, f"specviz.figures.__all__ lists helpers, not builders: {not_builders}"
    public = {n for n in vars(F) if not n.startswith("_") and not inspect.ismodule(getattr(F, n))}
    assert public == set(F.__all__), sorted(public ^ set(F.__all__))


def test_the_builder_rule_can_fail():
    from specviz.figures import empirical, style

    assert not is_builder("PALETTE", PALETTE) and not is_builder("DEFAULT_NS", empirical.DEFAULT_NS)
    for helper in ("trace_by_meta", "float_pair", "vocab_names", "base_layout", "mass_marker"):
        assert not is_builder(helper, getattr(style, helper)), helper
    assert is_builder("money_diagram", F.money_diagram) and is_builder("apply_patch", F.apply_patch)


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
def test_builders_of_p_and_q_build_a_figure_of_the_tutorial_pair():
    called = []
    for name in F.__all__:
        params = list(inspect.signature(getattr(F, name)).parameters.values())
        needed = [p.name for p in params if p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD]
        if needed == ["p", "q"] and not re.search(r"_patch(es)?$", name):
            assert isinstance(getattr(F, name)(P, Q), go.Figure), name
            called.append(name)
    assert {"money_diagram", "joint_table", "acceptance_figure", "rule_figure", "coupling_figure"} <= set(called)


def test_the_figures_package_exports_builders_only_with_no_old_names_kept():
    """No shims in a 0.1.0 package: a helper is imported from its home (`specviz.foundation.palette`, `figures.style`)."""
    for name in ("PALETTE", "trace_by_meta", "simulate_accepted_lengths", "figure_png", "no_such_name"):
        with pytest.raises(AttributeError):
            getattr(F, name)
        assert name not in F.__all__
