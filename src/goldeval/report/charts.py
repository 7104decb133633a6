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
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # matplotlib is imported only when a chart is drawn
    from matplotlib.typing import RcKeyType

from goldeval.io.printable import printable

__all__ = ["histogram", "scatter", "bars", "confusion", "interval", "intervals", "flows", "paired_scatter", "timeline",
           "tick_labels", "RASTERIZE_ABOVE", "TICK_CHARS"]

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
        ax.hist(_points(values), bins=bins, range=(0.0, 1.0), color=_BAR, edgecolor="white", linewidth=0.5)
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
        ax.scatter(_points(x), _points(y), s=4 if many else 12, alpha=0.35 if many else 0.7, color=_BAR, linewidths=0,
                   rasterized=many)
        ax.plot([0, 1], [0, 1], color=_OTHER, linewidth=0.6, linestyle=":")
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.02, 1.02)
        ax.set_aspect("equal")
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)

    return _draw(3.4, 3.2, draw)


def _points(values: Sequence[Any]) -> Any:
    """*values* as matplotlib reads them fastest: a float array when every value is a number (a list of 100,000
    Python floats is masked value by value: 1.1 s of a 1.5 s scatter), else the list as it is (``None`` kept)."""
    import numpy as np  # start-up: loaded with matplotlib, only when a chart is drawn

    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return np.asarray(values, dtype=float)
    return list(values)


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


def intervals(rows: Sequence[tuple[str, float | None, float | None, float | None]], *, title: str, xlabel: str,
              xlim: tuple[float, float] = (0.0, 1.0), zero_line: bool = False,
              gate: tuple[str, float] | None = None) -> str:
    """Several values, one a line, each with its interval as an error bar (e.g. run A's and run B's pass rate).

    Args:
        rows: ``(label, value, low, high)`` per line, top to bottom; ``value`` ``None`` is written "undefined",
            ``low`` / ``high`` ``None`` draw the point alone.
        title, xlabel: Text shown with the chart.
        xlim: The x axis (``(-1, 1)`` for a difference of two proportions).
        zero_line: A dotted vertical line at 0 (no difference).
        gate: ``("min" | "max", limit)``: the gate's bound as a dashed line, or ``None``.
    """

    def draw(fig, ax):
        n = len(rows)
        span = xlim[1] - xlim[0]
        for i, (_, value, low, high) in enumerate(rows):
            y = n - 1 - i
            if value is None:
                ax.text((xlim[0] + xlim[1]) / 2, y, "undefined", ha="center", va="center", fontsize=8, color=_OTHER)
                continue
            lo = value if low is None else low
            hi = value if high is None else high
            ax.errorbar([value], [y], xerr=[[value - lo], [hi - value]], fmt="o", color=_BAR, capsize=5, markersize=6)
            frac = (value - xlim[0]) / span
            text = f"{value:+.4f}  [{lo:+.4f}, {hi:+.4f}]" if zero_line else f"{value:.3f}  [{lo:.3f}, {hi:.3f}]"
            ax.annotate(text, (value, y), xytext=(0, 7), textcoords="offset points", fontsize=7.5,
                        ha="left" if frac < 0.25 else "right" if frac > 0.75 else "center")
        if zero_line:
            ax.axvline(0, color=_OTHER, linestyle=":", linewidth=1)
        if gate is not None:
            ax.axvline(gate[1], color="black", linestyle="--", linewidth=1)
            right = (gate[1] - xlim[0]) / span < 0.5
            ax.annotate(f"gate {gate[0]} {gate[1]:g}", (gate[1], -0.55), xytext=(3 if right else -3, 0),
                        textcoords="offset points", ha="left" if right else "right", fontsize=7)
        pad = 0.03 * span
        ax.set_xlim(xlim[0] - pad, xlim[1] + pad)
        ax.set_ylim(-0.8, n - 0.4)
        ax.set_yticks(list(range(n)), [_shown(r[0]) for r in reversed(rows)])
        ax.set_title(title)
        ax.set_xlabel(xlabel)

    return _draw(4.2, 1.2 + 0.45 * len(rows), draw)


def flows(counts: Mapping[tuple[str, str], int], categories: Sequence[str], *, title: str,
          colors: Mapping[str, str] | None = None, left: str = "A", right: str = "B") -> str:
    """How cases moved between two runs: run A's categories stacked on the left, run B's on the right, and a band
    from each A category to each B category as wide as the number of cases that moved that way (an alluvial
    diagram, as in Rosvall & Bergstrom, PLoS ONE 5 (2010) e8694).

    Args:
        counts: ``(A's category, B's category) -> cases``; categories missing from *categories* are refused.
        categories: The categories, top to bottom, on both sides (e.g. match, no_match, near_match …).
        title: Shown above the chart.
        colors: category → colour of its blocks; a band takes the colour of the category it ends in, and a band
            between two different categories is drawn darker than one that stays.
        left, right: The two columns' captions.

    Raises:
        ValueError: a count names a category not in *categories*, or is negative.
    """
    order = list(categories)
    for (a, b), n in counts.items():
        if a not in order or b not in order:
            raise ValueError(f"flows: category {a if a not in order else b!r} is not one of {order}")
        if n < 0:
            raise ValueError(f"flows: a negative count {n} for {a} -> {b}")
    cols = dict(colors or {})

    def draw(fig, ax):
        from matplotlib.patches import PathPatch, Rectangle  # start-up: loaded only when a report or CI file is written
        from matplotlib.path import Path as MPath  # start-up: loaded only when a report or CI file is written

        total = sum(counts.values())
        if total == 0:
            ax.text(0.5, 0.5, "no case in either run", ha="center", va="center", transform=ax.transAxes)
            ax.set_axis_off()
            ax.set_title(title)
            return
        left_n = {c: sum(n for (a, _), n in counts.items() if a == c) for c in order}
        right_n = {c: sum(n for (_, b), n in counts.items() if b == c) for c in order}
        gap = 0.03 * total
        width = 0.08

        def tops(sizes: Mapping[str, int]) -> dict[str, float]:
            y, out = total + gap * (len(order) - 1), {}
            for c in order:
                out[c] = y
                if sizes[c]:
                    y -= sizes[c] + gap
            return out

        top_l, top_r = tops(left_n), tops(right_n)
        next_l, next_r = dict(top_l), dict(top_r)
        for a in order:  # bands leave A's block in B's order and reach B's block in A's order: no band crosses itself
            for b in order:
                n = counts.get((a, b), 0)
                if not n:
                    continue
                y0, y1 = next_l[a], next_r[b]
                next_l[a] -= n
                next_r[b] -= n
                x0, x1 = width, 1 - width
                xm = (x0 + x1) / 2
                verts = [(x0, y0), (xm, y0), (xm, y1), (x1, y1), (x1, y1 - n), (xm, y1 - n), (xm, y0 - n), (x0, y0 - n), (x0, y0)]
                codes = [MPath.MOVETO, MPath.CURVE4, MPath.CURVE4, MPath.CURVE4, MPath.LINETO, MPath.CURVE4, MPath.CURVE4,
                         MPath.CURVE4, MPath.CLOSEPOLY]
                ax.add_patch(PathPatch(MPath(verts, codes), facecolor=cols.get(b, _BAR), edgecolor="none",
                                       alpha=0.35 if a == b else 0.75))
                if a != b and n >= 0.25 * total:  # a label only where the band is wide enough to hold it
                    ax.text(xm, (y0 + y1) / 2 - n / 2, f"{a} → {b}: {n}", ha="center", va="center", fontsize=6.5,
                            color="#1b1b1b")
        for sizes, tops_, x, ha, tx in ((left_n, top_l, 0.0, "right", -0.01), (right_n, top_r, 1 - width, "left", 1.01)):
            for c in order:
                if not sizes[c]:
                    continue
                ax.add_patch(Rectangle((x, tops_[c] - sizes[c]), width, sizes[c], facecolor=cols.get(c, _BAR), edgecolor="white"))
                ax.text(tx, tops_[c] - sizes[c] / 2, f"{_shown(c)} {sizes[c]}", ha=ha, va="center", fontsize=7.5)
        ax.text(width / 2, total + gap * len(order), left, ha="center", va="bottom", fontsize=8, fontweight="bold")
        ax.text(1 - width / 2, total + gap * len(order), right, ha="center", va="bottom", fontsize=8, fontweight="bold")
        ax.set_xlim(-0.42, 1.42)
        ax.set_ylim(-gap, total + gap * (len(order) + 1.5))
        ax.set_axis_off()
        ax.set_title(title)

    return _draw(4.6, 3.2, draw)


def paired_scatter(a: Sequence[float], b: Sequence[float], *, marked: Sequence[tuple[float, float, str]] = (),
                   title: str, xlabel: str, ylabel: str) -> str:
    """Each case's value in run A (x) against run B (y), with the diagonal (no change); the *marked* cases (the
    biggest movers) drawn larger, red below the diagonal (worse in B) and green above it, with their ids.

    Args:
        a, b: shape ``(n_pairs,)`` each, values in [0, 1] (e.g. per-case F1); rasterized above
            :data:`RASTERIZE_ABOVE` points.
        marked: ``(a, b, id)`` of the cases to mark; an id longer than 18 characters is shortened in its middle.
        title, xlabel, ylabel: Text shown with the chart.

    Raises:
        ValueError: *a* and *b* differ in length.
    """
    if len(a) != len(b):
        raise ValueError(f"paired_scatter: {len(a)} values of A for {len(b)} of B")

    def draw(fig, ax):
        many = len(a) > RASTERIZE_ABOVE
        ax.plot([0, 1], [0, 1], color=_OTHER, linewidth=0.7, linestyle=":")
        ax.scatter(list(a), list(b), s=4 if many else 12, alpha=0.35 if many else 0.6, color=_BAR, linewidths=0, rasterized=many)
        for i, (x, y, cid) in enumerate(marked):
            ax.scatter([x], [y], s=30, color=_FAIL if y < x else _PASS, edgecolors="black", linewidths=0.5, zorder=3)
            step = 8 * (i % 3)  # movers at nearly one point: their ids one under another, not on top of each other
            ax.annotate(tick_labels([cid], 18)[0], (x, y), xytext=(4, -3 - step if y < x else 3 + step), textcoords="offset points",
                        fontsize=6.5, ha="left", va="top" if y < x else "bottom")
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.02, 1.02)
        ax.set_aspect("equal")
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)

    return _draw(3.8, 3.6, draw)


def timeline(points: Sequence[Mapping[str, Any]], *, title: str, ylabel: str,
             changes: Sequence[tuple[datetime, str]] = (), gate: tuple[str, float] | None = None,
             ylim: tuple[float, float] | None = (0.0, 1.0)) -> str:
    """A headline over time: one point per run at its time, its interval as an error bar, joined by a thin line;
    a dashed vertical marker, with what changed, where the measurement changed between two runs (judge version,
    rubric, dataset).

    Args:
        points: ``{"when": datetime, "value": float | None, "low", "high": float | None, "passed": bool | None}``,
            oldest first; a point without a value is skipped (its run is in the page's table); ``passed`` colours
            the point (gates passed green, failed red, not gated blue).
        title, ylabel: Text shown with the chart.
        changes: ``(when, what)``: a marker at *when* (between the two runs), labelled *what* (short: "1 rubric";
            the label is drawn inside the axes, along the marker).
        gate: ``("min" | "max", limit)``: the headline's gate as a dashed horizontal line.
        ylim: The y axis (``None``: fitted to the points and intervals).
    """

    def draw(fig, ax):
        import matplotlib.dates as mdates  # start-up: loaded only when a report or CI file is written

        shown = [p for p in points if p.get("value") is not None]
        if not shown:
            ax.text(0.5, 0.5, "no run has a value", ha="center", va="center", transform=ax.transAxes)
        xs = [p["when"] for p in shown]
        ys = [float(p["value"]) for p in shown]
        if len(shown) > 1:
            ax.plot(xs, ys, color=_OTHER, linewidth=0.7, zorder=1)
        for i, (p, x, y) in enumerate(zip(shown, xs, ys, strict=True)):
            colour = _BAR if p.get("passed") is None else (_PASS if p["passed"] else _FAIL)
            lo = y if p.get("low") is None else float(p["low"])
            hi = y if p.get("high") is None else float(p["high"])
            bar = ax.errorbar([x], [y], yerr=[[y - lo], [hi - y]], fmt="o", color=colour, capsize=3, markersize=4.5, zorder=2)
            bar.lines[0].set_gid(f"run-point-{i + 1}")  # the SVG names each run's point (the page's tests count them)
        top = ylim[1] if ylim is not None else max([float(p.get("high") or p["value"]) for p in shown] or [1.0])
        for when, what in changes:
            ax.axvline(when, color="#8d6e63", linestyle="--", linewidth=1, zorder=0)
            label = ax.annotate(_shown(what), (when, top), xytext=(2, -2), textcoords="offset points", rotation=90,
                                fontsize=6.5, ha="left", va="top", color="#5d4037", annotation_clip=True)
            label.set_in_layout(False)  # a long label stays inside the axes; it never shrinks them to make room
        if gate is not None:
            ax.axhline(gate[1], color="black", linestyle="--", linewidth=0.9)
            ax.annotate(f"gate {gate[0]} {gate[1]:g}", (0.0, gate[1]), xycoords=("axes fraction", "data"), xytext=(2, 2),
                        textcoords="offset points", fontsize=6.5)
        if ylim is not None:
            ax.set_ylim(ylim[0] - 0.03 * (ylim[1] - ylim[0]), ylim[1] + 0.03 * (ylim[1] - ylim[0]))
        if xs:
            span = (max(xs) - min(xs)) if len(xs) > 1 else None
            if not span:  # one run, or all at one instant: a window of an hour around it
                ax.set_xlim(min(xs) - timedelta(minutes=30), max(xs) + timedelta(minutes=30))
            else:
                ax.set_xlim(min(xs) - span * 0.05, max(xs) + span * 0.05)
        locator = mdates.AutoDateLocator(maxticks=6)
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
        ax.set_title(title)
        ax.set_ylabel(ylabel)
        ax.set_xlabel("recorded (UTC)")

    return _draw(5.6, 3.0, draw)
