"""A small matplotlib bar chart of an evaluation's headline metrics (PNG, headless)."""

from __future__ import annotations

from pathlib import Path


def bar_chart(path: Path, title: str, metrics: dict[str, float], note: str = "") -> Path:
    """Write a bar chart of ``metrics`` (values in [0, 1]) to ``path``; returns the path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names, values = list(metrics), [float(v) for v in metrics.values()]
    fig, ax = plt.subplots(figsize=(max(4.0, 1.4 * len(names) + 1.5), 3.6), dpi=100)
    bars = ax.bar(names, values, color=["#3b6ea5", "#e07b39", "#5a9e5a", "#9467bd", "#8c564b"][: len(names)])
    for bar, value in zip(bars, values, strict=True):
        ax.text(bar.get_x() + bar.get_width() / 2, value + 0.02, f"{value:.3f}", ha="center", fontsize=9)
    ax.set_ylim(0, 1.1)
    ax.set_title(title, fontsize=11)
    if note:
        ax.set_xlabel(note, fontsize=8)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path
