"""The rows both tests of the third-party example scorer (tests/plugins/exact_match) read: the local engine's
(tests/unit/test_scorers.py, where the expected outcomes are worked out by hand) and Spark's
(tests/spark/test_spark_engine.py, which must give the same records)."""

EM_ROWS = [
    '{"id": "a", "prediction": "Paris ", "reference": "Paris"}',   # match after strip
    '{"id": "b", "prediction": "Lyon", "reference": "Paris"}',     # no match
    "not json",                                                     # line 3: unscored, by line
    '{"id": "a", "prediction": "x", "reference": "x"}',             # line 4: repeats line 1
    '{"id": "c", "prediction": 3, "reference": "x"}',               # line 5: not a string
]
