"""The colour language is safe for colour-blind readers, and no fact rests on colour alone.

- Every pair of role colours (overlap, residual, p, q, rejected, empirical) stays apart when
  protanopia, deuteranopia and tritanopia are simulated with the matrices of Machado,
  Oliveira & Fernandes (2009), "A Physiologically-based Model for Simulation of Color
  Vision Deficiency", IEEE TVCG 15(6), severity 1.0, applied in linear RGB. Distance:
  CIELAB ΔE*76. The old (matplotlib tab10) palette fails the same check: the test can fail.
- Overlap, residual and rejected mass have distinct patterns in the static figures, and
  distinct marks (✓ ↻ ✗) in the bar text where the widgets animate without patterns.
- Text drawn in a palette colour, and the apps' message boxes, reach WCAG AA contrast 4.5:1.
"""

from __future__ import annotations

import inspect
import itertools
import re

import numpy as np
import pytest

import specviz.figures as F
from specviz.figures.style import MASS_MARKS, PALETTE, PATTERNS, contrast_ratio, rgba, text_colour
from specviz.sampling import spec_sample
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
    return {m: (F.trace_by_meta(fig, m).marker.pattern.shape or "") for m in metas}


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
    assert all(not F.trace_by_meta(fig, m).marker.pattern.shape for m in MASSES)
    assert len(set(MASS_MARKS.values())) == 3
    for m in MASSES:
        texts = [s for s in F.trace_by_meta(fig, m).text if s]
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
    # every other colour written in the module (PASS/FAIL verdicts, notes) is text on white
    backgrounds = {err["background"].lower()}
    for colour in set(re.findall(r"#[0-9a-fA-F]{6}\b", inspect.getsource(base))):
        if colour.lower() not in backgrounds:
            assert contrast_ratio(colour) >= 4.5, colour


def test_contrast_ratio_matches_wcag_examples():
    assert contrast_ratio("#767676") == pytest.approx(4.54, abs=0.01)  # the lightest grey that passes on white
    assert contrast_ratio("#777777") < 4.5
