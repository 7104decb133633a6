"""Charts for the HTML report, drawn by matplotlib as inline SVG (no JavaScript, nothing fetched).

Why matplotlib SVG and not Vega-Lite (Altair) with its JavaScript inlined: a matplotlib chart is a static SVG of
a few kilobytes (text kept as ``<text>``, a scatter of many points rasterized into one embedded PNG), so a report
holds no script but its own small table code, and its Content-Security-Policy can forbid every fetch and every
``eval``. Vega-Lite draws in the browser: it needs vega, vega-lite and vega-embed inlined (about 0.9 MB of
JavaScript per report), the per-case values embedded a second time for the charts, and ``'unsafe-eval'`` (its
expression parser compiles with ``new Function``). See ``benchmarks/bench_report.py`` for the sizes.

Every function returns one ``<svg>…</svg>`` string (no XML prolog, no DOCTYPE), ready to be placed in the page.
Untrusted text (section names, labels) is escaped by matplotlib's SVG writer and never parsed as mathtext, and its
control characters are shown escaped (``\\u202e``), as on the console.
"""

from __future__ import annotations

import io
import os.path
import re
import textwrap
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # matplotlib is imported only when a chart is drawn
    from matplotlib.typing import RcKeyType

from goldeval.io.printable import printable

__all__ = ["histogram", "scatter", "bars", "confusion", "interval", "tick_labels", "RASTERIZE_ABOVE", "TICK_CHARS"]

#: A scatter with more points than this is drawn as one embedded PNG inside the SVG (its size no longer grows
#: with the number of cases); axes and text stay vector.
RASTERIZE_ABOVE = 500

_LOCK = threading.Lock()  # matplotlib's rcParams are global: one chart at a time
_PASS, _FAIL, _OTHER, _BAR = "#2e7d32", "#c62828", "#6d6d6d", "#3f6fb5"
_RC: dict[RcKeyType, Any] = {
    "svg.fonttype": "none",  # text as <text>: smaller, selectable, shown in the page's font
    "svg.hashsalt": "goldeval",  # the same data gives the same SVG bytes
    "text.parse_math": False,  # a '$' in a label is a dollar sign, not mathtext
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
}


def _figure(width: float = 4.2, height: float = 2.8):
    from matplotlib.figure import Figure  # start-up: loaded only when a report or CI file is written

    return Figure(figsize=(width, height), dpi=100, layout="constrained")


def _svg(fig: Any) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    text = buf.getvalue()
    start = text.find("<svg")
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", text[start:], count=1, flags=re.S)
    # width/height in pt make the chart a fixed size; keep the viewBox and let CSS size it
    return re.sub(r'^<svg([^>]*?) width="[^"]*" height="[^"]*"', r'<svg\1 preserveAspectRatio="xMidYMid meet"', svg, count=1)


def _draw(width: float, height: float, draw) -> str:
    import matplotlib  # start-up: loaded only when a report or CI file is written

    with _LOCK, matplotlib.rc_context(_RC):
        fig = _figure(width, height)
        ax = fig.add_subplot()
        draw(fig, ax)
        _wrap_title(ax, width)
        _escape_controls(fig)
        return _svg(fig)


def _shown(value: Any) -> str:
    """A tick label (a label, a section name) with its control characters escaped, as on the console
    (:func:`goldeval.io.printable.printable`): a label holding U+202E drew what followed reversed."""

    return printable(str(value), keep_newlines=False)


def _escape_controls(fig: Any) -> None:
    """Every text the chart holds now (titles, axis labels, annotations) with its control characters escaped; tick
    labels are formatted at drawing time, so those from the user's data go through :func:`_shown` first."""
    from matplotlib.text import Text  # start-up: loaded only when a report or CI file is written


    for artist in fig.findobj(Text):
        text = artist.get_text()
        if text and printable(text) is not text:
            artist.set_text(printable(text))


def _whole_ticks(ax: Any) -> None:
    from matplotlib.ticker import MaxNLocator  # start-up: loaded only when a report or CI file is written

    ax.yaxis.set_major_locator(MaxNLocator(integer=True))


def _wrap_title(ax: Any, width_in: float) -> None:
    """Break the axes' title into lines that fit a figure *width_in* inches wide (a title of a narrow chart, such
    as a 2 × 2 confusion matrix, ran past both edges of its SVG). An average character is taken as 0.6 em."""

    title = ax.title
    text = title.get_text()
    per_line = max(12, int(width_in * 72 / (title.get_fontsize() * 0.6)))
    if len(text) > per_line:
        title.set_text(textwrap.fill(text, per_line))
    # The title is centred over the axes, not the figure: long tick labels on the left (a confusion matrix of
    # labels such as 'needs_review') move the axes right, and the title ran past the figure's right edge. Lay the
    # figure out once and narrow the lines to the room on the shorter side of the title's centre.
    fig = ax.figure
    fig.draw_without_rendering()
    box = title.get_window_extent()
    centre = (box.x0 + box.x1) / 2
    room = 2 * min(centre, fig.bbox.width - centre) - 4  # px, a small margin
    widest = max(title.get_text().split("\n"), key=len)
    if box.width > room > 0 and widest:
        px_per_char = box.width / len(widest)
        title.set_text(textwrap.fill(text, max(8, int(room / px_per_char))))


def histogram(values: Sequence[float], *, title: str, xlabel: str, bins: int = 20, threshold: float | None = None) -> str:
    """A histogram of values in [0, 1] (e.g. per-example F1), ``bins`` equal bins.

    Args:
        values: shape ``(n,)``, floats in [0, 1].
        title, xlabel: Text shown with the chart.
        bins: Number of equal-width bins over [0, 1].
        threshold: A vertical dashed line (e.g. ``--min-f1``), or ``None``.
    """

    def draw(fig, ax):
        ax.hist(list(values), bins=bins, range=(0.0, 1.0), color=_BAR, edgecolor="white", linewidth=0.5)
        if threshold is not None:
            ax.axvline(threshold, color=_FAIL, linestyle="--", linewidth=1, label=f"threshold {threshold:g}")
            ax.legend(frameon=False)
        ax.set_xlim(0, 1)
        _whole_ticks(ax)  # a count of cases: no tick at 2.5
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("cases")

    return _draw(4.2, 2.8, draw)


def scatter(x: Sequence[float], y: Sequence[float], *, title: str, xlabel: str, ylabel: str) -> str:
    """Points (x, y) in the unit square, e.g. precision against recall per example; rasterized above
    :data:`RASTERIZE_ABOVE` points."""

    def draw(fig, ax):
        many = len(x) > RASTERIZE_ABOVE
        ax.scatter(list(x), list(y), s=4 if many else 12, alpha=0.35 if many else 0.7, color=_BAR, linewidths=0,
                   rasterized=many)
        ax.plot([0, 1], [0, 1], color=_OTHER, linewidth=0.6, linestyle=":")
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.02, 1.02)
        ax.set_aspect("equal")
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)

    return _draw(3.4, 3.2, draw)


def bars(names: Sequence[str], values: Sequence[float], *, title: str, ylabel: str,
         colors: Sequence[str] | None = None, gates: Sequence[tuple[int, str, float]] = (),
         ymax: float | None = None, annotate: bool = True) -> str:
    """Vertical bars, one per name, with optional gate marks.

    Args:
        names, values: shape ``(k,)`` each.
        colors: one colour per bar (default: all the same).
        gates: ``(bar index, "min" | "max", limit)``: a short horizontal mark across that bar at the limit.
        ymax: Top of the y axis (default: fitted).
        annotate: Write each value above its bar.
    """
    if len(names) != len(values):
        raise ValueError(f"bars: {len(names)} names for {len(values)} values")

    def draw(fig, ax):
        xs = range(len(names))
        cols = list(colors) if colors is not None else [_BAR] * len(names)
        ax.bar(xs, list(values), color=cols, width=0.65)
        ax.set_xticks(list(xs), [_shown(n) for n in names], rotation=30 if max((len(str(n)) for n in names), default=0) > 10 else 0,
                      ha="right" if max((len(str(n)) for n in names), default=0) > 10 else "center")
        for i, op, limit in gates:
            ax.hlines(limit, i - 0.45, i + 0.45, colors="black", linestyles="--", linewidth=1.2)
            ax.annotate(f"{op} {limit:g}", (i + 0.46, limit), fontsize=7, va="center")
        if annotate:
            for i, v in enumerate(values):
                ax.annotate(f"{v:g}" if isinstance(v, int) or float(v).is_integer() else f"{v:.3f}", (i, v),
                            ha="center", va="bottom", fontsize=7, xytext=(0, 2), textcoords="offset points")
        top = max([*(float(v) for v in values), *(limit for _, _, limit in gates)], default=0.0)
        if ymax is not None:
            ax.set_ylim(0, ymax)
        elif min((float(v) for v in values), default=0.0) >= 0:  # counts and rates: the axis starts at 0
            ax.set_ylim(0, top * 1.15 if top > 0 else 1.0)  # all zero (no miss): 0 to 1, not -0.05 to 0.05
        else:
            ax.margins(y=0.15)
        if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            _whole_ticks(ax)  # counts (cases, misses): no tick at 2.5
        ax.set_title(title)
        ax.set_ylabel(ylabel)

    return _draw(max(3.2, 0.55 * len(names) + 1.6), 2.8, draw)


#: The longest tick label a confusion matrix draws whole (characters); a longer one is shortened in its middle.
TICK_CHARS = 16


def tick_labels(labels: Sequence[Any], limit: int = TICK_CHARS) -> list[str]:
    """The labels as a confusion matrix's ticks show them: control characters escaped (:func:`_shown`), and one
    longer than *limit* characters shortened in its middle to *limit* (``'requires_re…senior'``), so that every
    label stays told apart by its start and its end. Drawn whole, 30-character labels left the 3 × 3 matrix a
    fifth of its chart and 45-character ones collapsed it (matplotlib: "axes sizes collapsed to zero"). When
    two would shorten alike (``'requires_review_by_senior_team'``, ``'…_junior_team'``), the long labels are shown
    from where they start to differ (``'…senior_team'``), and numbered (``'…#2'``) only if that does not tell them
    apart either. The whole labels are in the page's case table."""

    shown = [_shown(x) for x in labels]
    head = (limit - 1) * 3 // 5
    tail = limit - 1 - head
    short = [s if len(s) <= limit else s[:head] + "…" + s[len(s) - tail:] for s in shown]
    if len(set(short)) == len(short):
        return short
    long_ones = [s for s in shown if len(s) > limit]
    start = len(os.path.commonprefix(long_ones))
    short = [s if len(s) <= limit else "…" + (s[start:] if len(s) - start < limit else s[start:start + limit - 2] + "…")
             for s in shown]
    if len(set(short)) == len(short):
        return short
    cut = limit - 1 - len(f"#{len(shown)}")
    return [s if len(s) <= limit else f"{s[:cut]}…#{i + 1}" for i, s in enumerate(shown)]


def confusion(matrix: Sequence[Sequence[int]], labels: Sequence[str], *, title: str) -> str:
    """A confusion matrix (rows gold, columns predicted) drawn by scikit-learn's ``ConfusionMatrixDisplay``; its
    tick labels are :func:`tick_labels` (at most :data:`TICK_CHARS` characters each)."""
    import numpy as np  # start-up: numpy / scipy load only when this runs
    from sklearn.metrics import ConfusionMatrixDisplay  # start-up: numpy / scipy load only when this runs

    def draw(fig, ax):
        disp = ConfusionMatrixDisplay(np.asarray(matrix), display_labels=tick_labels(labels))
        disp.plot(ax=ax, cmap="Blues", colorbar=False, values_format="d")
        ax.set_xlabel("predicted")
        ax.set_ylabel("gold")
        ax.set_title(title)
        if max((len(str(x)) for x in labels), default=0) > 8:
            for t in ax.get_xticklabels():
                t.set_rotation(30)
                t.set_ha("right")

    size = max(3.0, 0.5 * len(labels) + 2.0)
    return _draw(size, size * 0.9, draw)


def interval(name: str, value: float | None, low: float | None, high: float | None, *, title: str,
             gate: tuple[str, float] | None = None, passed: bool | None = None) -> str:
    """One value in [0, 1] with its interval as an error bar, and the gate's bound as a dashed line.

    Args:
        name: What the value is (``"pass rate"``).
        value, low, high: The point and the interval's ends (``None``: nothing to draw, the chart says so).
        gate: ``("min" | "max", limit)`` or ``None``.
        passed: colours the point green / red (``None``: neutral).
    """

    def draw(fig, ax):
        colour = _OTHER if passed is None else (_PASS if passed else _FAIL)
        if value is None:
            ax.text(0.5, 0.5, f"{name} undefined", ha="center", va="center", transform=ax.transAxes)
        else:
            lo = value if low is None else low
            hi = value if high is None else high
            ax.errorbar([value], [0], xerr=[[value - lo], [hi - value]], fmt="o", color=colour, capsize=6, markersize=7)
            ax.annotate(f"{value:.3f}  [{lo:.3f}, {hi:.3f}]", (value, 0), xytext=(0, 10), textcoords="offset points",
                        ha="left" if value < 0.25 else "right" if value > 0.75 else "center", fontsize=8)
        if gate is not None:
            ax.axvline(gate[1], color="black", linestyle="--", linewidth=1)
            # beside the line, on the side with room (centred on it, the line crossed the text)
            right = gate[1] < 0.5
            ax.annotate(f"gate {gate[0]} {gate[1]:g}", (gate[1], -0.8), xytext=(3 if right else -3, 0), textcoords="offset points",
                        ha="left" if right else "right", fontsize=7)
        ax.set_xlim(-0.03, 1.03)
        ax.set_ylim(-1, 1)
        ax.set_yticks([])
        ax.spines["left"].set_visible(False)
        ax.set_title(title)
        ax.set_xlabel(name)

    return _draw(4.2, 1.7, draw)
