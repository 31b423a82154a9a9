"""Accessibility in the browser: named slider handles, readable tab titles, the page language, full-width figures.

ipywidgets 8 draws a slider with noUiSlider: its handle has role="slider" but no accessible
name, so a screen reader announces "slider 0.6" without saying which. `A11yHelper` is an
invisible anywidget whose front end names every handle (aria-label) from the slider's
description, and keeps doing so while widgets re-render (a MutationObserver), so one helper
per page covers every app on it. It also re-fits plotly figures that were drawn while their
tab was hidden (they would keep plotly's default 700 px instead of the page width). Its CSS raises the contrast of the tab titles (Lumino's
unselected-tab grey is 4.45:1 on its background; WCAG 2 AA asks 4.5:1 for text). It also
marks its app's language (`lang`) for screen readers.

>>> helper = a11y_helper("zh")
>>> helper.lang, helper.layout.display
('zh-CN', 'none')
"""

from __future__ import annotations

import anywidget
import ipywidgets as W
import traitlets

from ..foundation.i18n import language
from ..foundation.palette import PALETTE

HTML_LANG = {"en": "en", "zh": "zh-CN"}
"""specviz language code -> the BCP 47 tag written in the page's `lang` attributes."""

_ESM = r"""
const ROOTS = '.specviz-dashboard, .specviz-app';

// The accessible name of a noUiSlider handle: its slider's description (lower/upper for a range).
function handleName(handle) {
  const slider = handle.closest('.widget-slider');
  const label = slider && slider.querySelector('.widget-label');
  let name = label ? label.textContent.trim() : '';
  if (!name) name = (slider && slider.getAttribute('title')) || 'value';
  if (handle.classList.contains('noUi-handle-lower') && slider && slider.querySelectorAll('.noUi-handle').length > 1)
    name += ' (lower)';
  else if (handle.classList.contains('noUi-handle-upper')) name += ' (upper)';
  return name;
}

function labelAll(doc) {
  for (const handle of doc.querySelectorAll('.widget-slider .noUi-handle')) {
    const name = handleName(handle);
    if (handle.getAttribute('aria-label') !== name) handle.setAttribute('aria-label', name);
  }
}

// A figure drawn while its tab was hidden or not yet attached gets plotly's default 700 px;
// plotly's widget re-fits its figures (without a fixed width) on a window "resize" event,
// so send one when a figure's element and its drawing disagree by more than 2 px.
function fitter(doc) {
  let timer = null;
  const refit = () => { clearTimeout(timer); timer = setTimeout(() => window.dispatchEvent(new Event('resize')), 50); };
  const observer = new ResizeObserver(entries => {
    for (const e of entries) {
      const gd = e.target, width = e.contentRect.width, full = gd._fullLayout;
      if (width > 0 && full && (!gd.layout || gd.layout.width == null) && Math.abs(full.width - width) > 2) refit();
    }
  });
  const seen = new WeakSet();
  return () => {
    for (const gd of doc.querySelectorAll('.specviz-dashboard .js-plotly-plot, .specviz-app .js-plotly-plot')) {
      if (!seen.has(gd)) { seen.add(gd); observer.observe(gd); }
    }
  };
}

// One observer per page, however many helpers are rendered.
function install(doc) {
  if (doc.__specvizA11y) return doc.__specvizA11y;
  let queued = false;
  const watchFigures = fitter(doc);
  const run = () => { queued = false; labelAll(doc); watchFigures(); };
  const schedule = () => { if (!queued) { queued = true; requestAnimationFrame(run); } };
  const observer = new MutationObserver(schedule);
  observer.observe(doc.body, {childList: true, subtree: true, characterData: true});
  labelAll(doc);
  doc.__specvizA11y = {observer, labelAll: () => labelAll(doc)};
  return doc.__specvizA11y;
}

function render({model, el}) {
  el.classList.add('specviz-a11y');
  const a11y = install(el.ownerDocument);
  const setLang = () => {
    const root = el.closest(ROOTS);
    if (root) root.setAttribute('lang', model.get('lang'));
  };
  // the helper's element is attached to its app's DOM just after render
  requestAnimationFrame(() => { setLang(); a11y.labelAll(); });
  model.on('change:lang', setLang);
  return () => model.off('change:lang', setLang);
}

export default { render };
"""

_CSS = """
/* Unselected dashboard tab titles: darker than Lumino's grey (4.45:1 on its tab background, under WCAG AA). */
.specviz-dashboard .lm-TabBar-tab:not(.lm-mod-current),
.specviz-dashboard .p-TabBar-tab:not(.p-mod-current) { color: rgba(0, 0, 0, 0.8) !important; }
/* A visible keyboard focus ring on slider handles, tabs and buttons. */
.specviz-dashboard .noUi-handle:focus-visible,
.specviz-app .noUi-handle:focus-visible,
.specviz-dashboard .lm-TabBar-tab:focus-visible,
.specviz-dashboard button:focus-visible,
.specviz-app button:focus-visible { outline: 3px solid FOCUS; outline-offset: 2px; }
""".replace("FOCUS", PALETTE["overlap"])  # the focus ring: the palette's blue


class A11yHelper(anywidget.AnyWidget):
    """Invisible widget: names slider handles after their labels, fixes tab-title contrast, sets `lang`."""

    _esm = _ESM
    _css = _CSS
    lang = traitlets.Unicode("en").tag(sync=True)


def a11y_helper(lang: str | None = None) -> A11yHelper:
    """An `A11yHelper` for language `lang` ("en" or "zh"; default: the current language), hidden."""
    code = HTML_LANG.get(lang or language(), "en")
    return A11yHelper(lang=code, layout=W.Layout(display="none"))
