"""Engines: where a :class:`goldeval.scoring.protocol.Scorer` runs. :mod:`goldeval.engines.local` (one process or every
core of this machine) here; Spark in :mod:`goldeval.engines.spark`. Both run the same ``score_batch`` and partials."""
