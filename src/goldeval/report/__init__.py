"""Rendering for people: terminal tables (rich), plain-language lines, the HTML report, JUnit XML and Markdown for
CI. All rounding happens here, nowhere else.

May import: :mod:`goldeval.runs` (a report of a recorded run), the domain packages (token spans, a judged query's
rows), :mod:`goldeval.io`, the foundation modules. Never: engines, pipeline, cli.
"""

from __future__ import annotations

from goldeval.io.printable import fmt

__all__ = ["fmt"]


