"""report.charts: a confusion matrix of long labels keeps its cells readable (a fresh-user run)."""

from __future__ import annotations

import re

from goldeval.report import charts


def test_long_labels_are_shortened_in_the_middle_and_kept_apart() -> None:
    # 16 characters at most: 9 of the start, '…', 6 of the end (head = 15 * 3 // 5 = 9, tail = 15 - 9 = 6)
    assert charts.tick_labels(["requires_review_by_senior_underwriter", "approve"]) == ["requires_…writer", "approve"]
    # control characters are escaped before the length is counted (as on the console)
    assert charts.tick_labels(["a\u202eb"]) == ["a\\u202eb"]
    # two labels that would shorten alike ('aaaaaaaaa…xxxxxx') are shown from where they differ (after their common
    # start 'aaaaaaaaaaaa_', 13 characters)
    got = charts.tick_labels(["aaaaaaaaaaaa_one_xxxxxx", "aaaaaaaaaaaa_two_xxxxxx", "ok"])
    assert got == ["…one_xxxxxx", "…two_xxxxxx", "ok"]
    # ... and cut at the end too when that part is long: '…' + 14 characters + '…'
    got = charts.tick_labels(["p_" * 9 + "one" + "z" * 20, "p_" * 9 + "two" + "z" * 20])
    assert got == ["…one" + "z" * 11 + "…", "…two" + "z" * 11 + "…"]
    # numbered only when even that cannot tell them apart: the 1st and 3rd share 'z' * 20 + 'a' + 'y' * 13 after
    # the common start; each is then 16 - 1 - len('#3') = 13 characters, '…' and its number
    got = charts.tick_labels(["z" * 20 + "a" + "y" * 30, "z" * 20 + "b" + "y" * 30, "z" * 20 + "a" + "y" * 20 + "c" + "y" * 9])
    assert got == ["z" * 13 + "…#1", "z" * 13 + "…#2", "z" * 13 + "…#3"]
    assert all(len(s) <= charts.TICK_CHARS for s in got)


def test_a_matrix_of_long_labels_keeps_its_cells_a_readable_share_of_the_chart() -> None:
    # Four 42-character labels (an underwriting queue's names): drawn whole, the 4 x 4 matrix image was 49 of the
    # chart's 288 px (17 %), and 45-character ones collapsed it altogether ("axes sizes collapsed to zero").
    # Shortened to 16 characters it takes 171 px (59 %); the bound below is 40 %.
    labels = [f"requires_review_by_{w}_underwriter_team" for w in ("senior", "junior", "externa", "regiona")]
    svg = charts.confusion([[5, 1, 0, 2], [0, 7, 1, 0], [1, 0, 4, 0], [0, 2, 0, 6]], labels, title="confusion matrix")
    view_width = float(re.search(r'viewBox="([^"]+)"', svg).group(1).split()[2])
    image_width = float(re.search(r'<image [^>]*width="([\d.]+)"', svg).group(1))
    assert image_width >= 0.4 * view_width
    shown = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    # the four share 'requires_review_by_' and '_team': each is shown from where they differ
    assert "…senior_underwr…" in shown and "…externa_underw…" in shown and not any(label in shown for label in labels)
