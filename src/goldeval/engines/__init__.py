"""Engines: where a :class:`goldeval.scoring.Scorer` runs, with the same records and the same numbers everywhere.

Owns:
    :mod:`~goldeval.engines.local`        one process or every core of this machine (chunks, the repeated-id pass,
                                          resume, ``per_example`` streamed to the output and the store)
    :mod:`~goldeval.engines.spark`        any Scorer over a Spark DataFrame; partials merged on the driver
    :mod:`~goldeval.engines.spark_judge`  the data-answer judge on Spark (cases and attempts joined by id)

May import: :mod:`goldeval.runs` (the store's per-case columns), the domain packages and their Scorers,
:mod:`goldeval.scoring`, :mod:`goldeval.gates`, :mod:`goldeval.io`, the foundation modules. Never: report,
pipeline, cli (known exception until the run pipeline leaves cli/: ``spark_judge``'s LLM stage reads the CLI's
LLM options; see tests/unit/test_layout.py).
"""
