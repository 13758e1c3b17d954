"""The token chart: tokens per scenario for classic, PTC and hybrid (a PNG)."""

from __future__ import annotations

from pathlib import Path

from ptcbox.bench._results import MODES, TokenReport

__all__ = ["write_chart"]

_STYLE = {
    "classic": ("classic tool calling", "#c44e52"),
    "ptc": ("run_code only (PTC)", "#4c72b0"),
    "hybrid": ("hybrid (direct tools + run_code)", "#55a868"),
}


def write_chart(report: TokenReport, path: str | Path) -> Path:
    """Draw total tokens per scenario, one bar per kind, as a grouped bar chart (PNG).

    PTC and hybrid bars are annotated with their change in tokens against classic
    (``-80%``: 80% fewer; ``+37%``: 37% more); the title carries the median headline.
    Needs matplotlib (``pip install 'ptcbox[bench]'``); uses the non-interactive Agg
    backend.

    Args:
        report: The results.
        path: The PNG file to write; parent directories are created.

    Returns:
        The path written.

    Raises:
        ImportError: If matplotlib is not installed (the message names the extra).
    """
    try:
        import matplotlib  # noqa: PLC0415 - optional dependency

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # noqa: PLC0415
    except ImportError as exc:
        raise ImportError("the chart needs matplotlib: pip install 'ptcbox[bench]'") from exc
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    comparisons = report.comparisons
    width = 0.27
    fig, ax = plt.subplots(figsize=(max(11.0, 1.05 * len(comparisons) + 2), 6), dpi=110)
    try:
        for offset, mode in enumerate(MODES):
            label, color = _STYLE[mode]
            xs = [i + (offset - 1) * width for i in range(len(comparisons))]
            heights = [c.run(mode).total_tokens for c in comparisons]
            bars = ax.bar(xs, heights, width, label=label, color=color)
            for bar, comparison in zip(bars, comparisons, strict=True):
                text = _thousands(bar.get_height())
                if mode != "classic":
                    text = f"{-comparison.saving(mode):+.0f}%"  # -80%: 80% fewer tokens
                ax.annotate(
                    text,
                    (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                    ha="center",
                    va="bottom",
                    fontsize=7,
                    rotation=90,
                    xytext=(0, 2),
                    textcoords="offset points",
                )
        ax.set_yscale("log")
        ax.set_ylim(bottom=300, top=max(c.classic.total_tokens for c in comparisons) * 4)
        ax.set_xticks(list(range(len(comparisons))))
        ax.set_xticklabels(
            [f"{c.scenario}\n({c.shape})" for c in comparisons], rotation=35, ha="right", fontsize=8
        )
        ax.set_ylabel("total tokens per task (o200k_base, log scale)")
        ptc, hybrid = report.headline("ptc"), report.headline("hybrid")
        ax.set_title(
            f"Tokens per task ({report.model}); labels: tokens vs classic. Median saving: "
            f"PTC {ptc.median:.0f}% (range {ptc.low:.0f}% to {ptc.high:.0f}%), hybrid "
            f"{hybrid.median:.0f}% (range {hybrid.low:.0f}% to {hybrid.high:.0f}%), n={ptc.n}",
            fontsize=9,
        )
        ax.legend(fontsize=8)
        ax.grid(axis="y", alpha=0.3)
        fig.tight_layout()
        fig.savefig(out)
    finally:
        plt.close(fig)
    return out


def _thousands(value: float) -> str:
    return f"{value / 1000:.1f}k" if value >= 1000 else f"{value:.0f}"
