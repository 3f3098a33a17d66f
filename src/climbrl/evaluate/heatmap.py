"""Annotated matrix heatmaps (matplotlib, Agg backend): the tournament's pairwise matrix and the
Dou Dizhu round robin's WP and ADP matrices share the drawing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def pyplot() -> Any:
    """matplotlib's pyplot on the file-only Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def short_labels(names: Sequence[str]) -> list[str]:
    """Tick labels: the last path part of a name, at most 18 characters."""
    return [s.split("/")[-1][:18] for s in names]


def draw_matrix(ax: Any, m: np.ndarray, labels: Sequence[str], title: str, vmin: float, vmax: float,
                fmt: str = "{:.2f}", cmap: str = "RdBu") -> Any:
    """``m`` on ``ax`` with a label per row and column and each off-diagonal value written in its
    cell (NaN cells stay blank); returns the image, for a colour bar."""
    im = ax.imshow(m, cmap=cmap, vmin=vmin, vmax=vmax)
    ax.set_xticks(range(len(labels)), labels, rotation=60, ha="right", fontsize=7)
    ax.set_yticks(range(len(labels)), labels, fontsize=7)
    for i in range(len(labels)):
        for j in range(len(labels)):
            if i != j:
                ax.text(j, i, fmt.format(m[i, j]), ha="center", va="center", fontsize=6)
    ax.set_title(title)
    return im
