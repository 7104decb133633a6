"""Spark's Python daemon for a local master, with pyspark imported from its installed package.

Spark puts ``$SPARK_HOME/python/lib/pyspark.zip`` first on its Python workers' ``PYTHONPATH``. The zip holds no
compiled bytecode, so the daemon compiles pyspark from source each time it starts: about 0.8 s of CPU, paid by the
first Python job of every session (measured on ``local[2]``: a session's first trivial Python RDD job 0.9-1.2 s, its
second 0.07 s; with this daemon 0.31 s). When that zip ships inside an installed pyspark package
(``pip install pyspark``: the zip holds that package's own files), this module drops it from ``sys.path`` and runs
:mod:`pyspark.daemon` from the installed package, whose bytecode is cached; the workers the daemon forks inherit
it. A zip anywhere else (a Spark distribution of its own, ``SPARK_HOME`` elsewhere) is left where Spark put it, and
py4j's zip is always left. So is the zip of an installed package that the workers' Python would not import from
the rest of its path (``PYSPARK_PYTHON`` an environment without pyspark, as executors' often are, or a pyspark the
driver put on its own ``sys.path``): there the zip is where the workers' pyspark comes from, as Spark intends.

Used through ``spark.python.daemon.module`` (:data:`goldeval.engines.spark.LOCAL_DEFAULTS`, local masters only,
never where the user's configuration sets that key).
"""

from __future__ import annotations

import importlib.machinery
import os
import runpy
import sys

__all__ = ["installed_zips", "main"]


def installed_zips(path: list[str]) -> list[str]:
    """The entries of *path* that are the ``pyspark.zip`` shipped inside an installed pyspark package
    (``<site>/pyspark/python/lib/pyspark.zip`` where ``<site>/pyspark/__init__.py`` exists) whose package is the
    ``pyspark`` that *path* without those entries imports (found by :class:`importlib.machinery.PathFinder` on it,
    in its order): dropping them then changes only where the same files are read from.

    Notes:
        A zip whose package the rest of *path* does not import (the workers' Python has no pyspark of its own,
        or finds another one first) is not listed: without it ``import pyspark`` would fail, or read another
        version than the JVM's.

    Example:
        >>> installed_zips(["/nowhere/pyspark/python/lib/pyspark.zip", "/usr/lib/python3/dist-packages"])
        []
    """
    out = []
    for entry in path:
        if os.path.basename(entry) != "pyspark.zip":
            continue
        lib = os.path.dirname(entry)
        package = os.path.dirname(os.path.dirname(lib))
        if (os.path.basename(lib) == "lib" and os.path.basename(os.path.dirname(lib)) == "python"
                and os.path.basename(package) == "pyspark" and os.path.isfile(os.path.join(package, "__init__.py"))):
            out.append(entry)
    if not out:
        return out
    rest = [p for p in path if p not in out]
    try:
        spec = importlib.machinery.PathFinder.find_spec("pyspark", rest)
    except (ImportError, ValueError):  # (an entry the path finder cannot read: keep Spark's path as it is)
        return []
    found = os.path.realpath(os.path.dirname(spec.origin)) if spec is not None and spec.origin else None
    return [z for z in out if found == os.path.realpath(os.path.dirname(os.path.dirname(os.path.dirname(z))))]


def main() -> None:
    """Drop :func:`installed_zips` from ``sys.path`` and run :mod:`pyspark.daemon` as Spark would
    (``python -m pyspark.daemon <worker module>``; ``sys.argv[1:]`` is passed on unchanged)."""
    dropped = set(installed_zips(sys.path))
    sys.path[:] = [p for p in sys.path if p not in dropped]
    runpy.run_module("pyspark.daemon", run_name="__main__")


if __name__ == "__main__":
    main()
