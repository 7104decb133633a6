"""Scoring: the one Scorer protocol every scorer implements, exact running sums, and the scorer registry.

Owns:
    :mod:`~goldeval.scoring.protocol`   :class:`Scorer`, :class:`Partial`, :class:`MetricSpec`, the record helpers
    :mod:`~goldeval.scoring.sums`       :class:`ExactSum`: means exact to the last digit whatever the split
    :mod:`~goldeval.scoring.registry`   :func:`get_scorer`, :func:`register_scorer`, the ``goldeval.scorers`` entry
                                        points; the built-in scorers are named there as strings and imported
                                        on first use, so this package imports no domain package

The built-in Scorers live with their domain: :mod:`goldeval.freetext.scorer`, :mod:`goldeval.labels.scorer`,
:mod:`goldeval.answers.scorer`.

May import: :mod:`goldeval.gates` (a scorer's metrics become gateable), :mod:`goldeval.io`, the foundation
modules. Never: a domain package, an engine, runs, report, pipeline, cli.
"""
