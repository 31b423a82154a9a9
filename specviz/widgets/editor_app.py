"""`EditorApp`: the base of the apps driven by a `DistributionEditor` (money, Monte-Carlo, pitfalls, multi-draft)."""

from __future__ import annotations

import ipywidgets as W
import numpy as np

from ..foundation.i18n import t
from .base import App
from .editor import DistributionEditor


class EditorApp(App):
    """An app driven by a `DistributionEditor` (`self.editor`): its handles follow the editor.

    `sliders_p` / `sliders_q` are properties because the editor rebuilds its sliders when
    the vocabulary size changes.
    """

    editor: DistributionEditor

    @property
    def hint(self) -> str:
        """Appended to errors about normalisation: how to fix them here (in the current language)."""
        return t("editor.hint")

    @property
    def sliders_p(self) -> list[W.FloatSlider]:
        """The editor's p sliders."""
        return self.editor.sliders_p

    @property
    def sliders_q(self) -> list[W.FloatSlider]:
        """The editor's q sliders."""
        return self.editor.sliders_q

    @property
    def p(self) -> np.ndarray:
        """The editor's target p."""
        return self.editor.p

    @property
    def q(self) -> np.ndarray:
        """The editor's draft q."""
        return self.editor.q

    @property
    def vocab(self) -> list[str]:
        """The editor's token names."""
        return self.editor.vocab
