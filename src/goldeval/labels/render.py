"""Terminal rendering of label (classification) results."""

from __future__ import annotations

from typing import Any

import click
from goldeval.intervals import WILSON, interval_words, wilson_interval
from goldeval.io.printable import printable
from goldeval.io.streams import relabel

__all__ = ["render_labels"]


def echo(message: str) -> None:
    """A line on stderr that may hold the user's data: control characters escaped, a spooled stream named as given."""

    click.echo(printable(relabel(message)), err=True)


def render_labels(results: dict[str, Any], console: Any) -> None:
    """The summary of a labels results dict: precision, recall, missed, F1, kappa, accuracy, counts; the per-label
    table (more than two labels); annotator agreement; what is undefined and why; then the first failed rows and
    warnings on stderr.

    Args:
        results: What :func:`goldeval.labels.reader.score_label_file` (or the ``labels`` scorer) returns.
        console: A ``rich.console.Console``.
    """
    from rich.markup import escape  # start-up: rich loads only when a table is rendered
    from rich.table import Table  # start-up: rich loads only when a table is rendered

    a = results["aggregate"]
    und = a.get("undefined", {})

    def rate(key: str, digits: int = 3) -> str:
        return "undefined" if key in und else f"{a[key]:.{digits}f}"

    def wilson(k: int, n: int, scale: float = 1.0, digits: int = 3) -> str:
        ci = wilson_interval(k, n) if 0 <= k <= n else None
        return "—" if ci is None else f"{scale * ci[0]:.{digits}f}–{scale * ci[1]:.{digits}f}"

    t = Table(title=escape(f"labels: positive = {results['positive']!r}"), title_justify="left")
    t.add_column("metric", justify="left")
    t.add_column("value", justify="right")
    t.add_column(interval_words(WILSON, 0.95), justify="right")
    t.add_column("from", justify="left")
    tp, fp, fn, tn = a["tp"], a["fp"], a["fn"], a["tn"]
    t.add_row("precision", rate("precision"), wilson(tp, tp + fp), f"{tp} of {a['predicted_positives']} predicted positive")
    t.add_row("recall", rate("recall"), wilson(tp, tp + fn), f"{tp} of {a['gold_positives']} gold positives")
    t.add_row("missed", str(a["missed"]), wilson(fn, tp + fn, 100.0, 1) + " per 100",
              f"{rate('missed_per_100', 1)} per 100 gold positives")
    t.add_row("f1", rate("f1"), "", "")
    t.add_row("kappa", rate("kappa"), "", "Cohen's, predictions vs gold")
    t.add_row("accuracy", rate("accuracy"), wilson(tp + tn, tp + fp + fn + tn), "never the headline")
    if "agreement" in a and len(results["per_label"]) > 2:  # binary: the same number as accuracy
        agree = round(a["agreement"] * a["n_scored"])  # a ratio of two whole numbers: the rounding is exact
        t.add_row("agreement", rate("agreement"), wilson(agree, a["n_scored"]), "all labels: predicted label = gold label")
    t.add_row("counts", "", "", f"tp {tp} · fp {fp} · fn {fn} · tn {tn}")
    t.add_row("cases", str(a["n"]), "", f"{a['n_scored']} scored, {a['n_failed']} failed, {a['null_predictions']} without a prediction")
    console.print(t)
    if len(results["per_label"]) > 2:
        pl = Table(title="per label (one-vs-rest)", title_justify="left")
        for col in ("label", "precision", "recall", "f1", "support", "predicted"):
            pl.add_column(col, justify="right")
        for r in results["per_label"]:
            und_r = r.get("undefined") or {}
            cells = ["undefined" if k in und_r else f"{r[k]:.3f}" for k in ("precision", "recall", "f1")]
            pl.add_row(escape(repr(str(r["label"]))), *cells, str(r["support"]), str(r["predicted"]))
        console.print(pl)
    if "annotator_kappa" in a:
        ak = "undefined" if "annotator_kappa" in und else f"{a['annotator_kappa']:.3f}"
        console.print(
            f"annotators: {a['annotator_n']} cases, agreement {a['annotator_agreement']:.3f}, kappa {ak}; "
            f"{len(results['disagreements'])} disagreements to adjudicate",
            markup=False, highlight=False, soft_wrap=True,
        )
    for key, why in und.items():
        console.print(f"{key} undefined: {why}", markup=False, highlight=False, soft_wrap=True)
    _print_problems(results)


def _print_problems(results: dict[str, Any]) -> None:
    fails = results.get("failures", [])
    warns = results.get("warnings", [])
    for f in fails[:10]:
        echo(f"failed: {f['error']}")
    if len(fails) > 10:
        click.echo(f"… and {len(fails) - 10} more failed rows (all listed in the results JSON under 'failures').", err=True)
    for w in warns[:10]:
        echo(f"warning: {w['warning']}")
    if len(warns) > 10:
        click.echo(f"… and {len(warns) - 10} more warnings (listed in the results JSON under 'warnings').", err=True)
