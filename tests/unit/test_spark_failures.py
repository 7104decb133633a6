"""goldeval.engines.spark.executor_failure tells a task that failed on an executor from a path Spark cannot read, on the
words Spark uses (no Spark needed). Source: issue 25 item 7; the messages are Spark 3.5's."""

from __future__ import annotations

import pytest

from goldeval.errors import GoldevalError, InputError
from goldeval.engines.spark import executor_failure, executor_failures

CRASHED = ("An error occurred while calling o90.toPythonIterator.\n: org.apache.spark.SparkException: Job aborted due to "
           "stage failure: Task 0 in stage 1.0 failed 1 times, most recent failure: Lost task 0.0 in stage 1.0 (TID 2) "
           "(192.0.2.2 executor driver): org.apache.spark.SparkException: Python worker exited unexpectedly (crashed). "
           "Consider setting 'spark.python.worker.faulthandler.enabled'\n\tat org.apache.spark.api.python.BasePythonRunner")
LOST = ("Job aborted due to stage failure: Task 3 in stage 2.0 failed 4 times, most recent failure: Lost task 3.3 "
        "(TID 41) (10.0.0.7 executor 2): ExecutorLostFailure (executor 2 exited caused by one of the running tasks) "
        "Reason: Container killed by YARN for exceeding memory limits.\n\tat org.apache.spark.scheduler.DAGScheduler")
RAISED = ("An exception was thrown from the Python worker. Please see the stack trace below.\nTraceback (most recent "
          "call last):\n  File \"worker.py\", line 1, in main\npyspark.errors.exceptions.base.PythonException: "
          "ValueError: boom")
NO_PATH = ("An error occurred while calling o31.partitions.\n: org.apache.hadoop.mapred.InvalidInputException: Input "
           "path does not exist: file:/tmp/missing.jsonl\n\tat org.apache.hadoop.mapred.FileInputFormat")


def test_failures_on_an_executor_are_named_in_one_line():
    assert executor_failure(RuntimeError(CRASHED)) == "Python worker exited unexpectedly (crashed)"
    assert executor_failure(RuntimeError(LOST)).startswith("ExecutorLostFailure (executor 2 exited")
    assert executor_failure(RuntimeError(RAISED)).endswith("ValueError: boom")


def test_a_missing_path_is_not_an_executor_failure():
    assert executor_failure(RuntimeError(NO_PATH)) is None


def test_executor_failures_turns_only_those_into_a_goldeval_error():
    with pytest.raises(GoldevalError, match=r"^Spark executor failure while scoring p\.jsonl: Python worker exited"):
        with executor_failures("scoring p.jsonl"):
            raise RuntimeError(CRASHED)
    with pytest.raises(RuntimeError, match="Input path does not exist"):
        with executor_failures("scoring p.jsonl"):
            raise RuntimeError(NO_PATH)
    with pytest.raises(InputError):  # goldeval's own errors pass through
        with executor_failures("scoring p.jsonl"):
            raise InputError("bad option")
