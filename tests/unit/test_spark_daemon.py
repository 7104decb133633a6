"""goldeval.engines.spark_daemon.installed_zips: which PYTHONPATH entries Spark's Python daemon may drop (the
pyspark.zip shipped inside an installed pyspark package, whose own files it holds) and which it must leave (any
other zip, py4j's, a Spark distribution's own). Paths made by hand in a temporary folder; no Spark needed (the
daemon itself, in a real session, is tested in tests/spark/test_spark_fold.py)."""

from __future__ import annotations

from goldeval.engines.spark_daemon import installed_zips


def _package(root, name="pyspark", init=True):
    lib = root / name / "python" / "lib"
    lib.mkdir(parents=True)
    (lib / "pyspark.zip").write_bytes(b"")
    (lib / "py4j-0.10.9.9-src.zip").write_bytes(b"")
    if init:
        (root / name / "__init__.py").write_text("")
    return lib


def test_the_installed_packages_zip_is_dropped_and_nothing_else(tmp_path):
    lib = _package(tmp_path / "site-packages")
    path = [str(lib / "pyspark.zip"), str(lib / "py4j-0.10.9.9-src.zip"), str(tmp_path / "site-packages"), "/x/spark-core.jar"]
    assert installed_zips(path) == [str(lib / "pyspark.zip")]


def test_a_spark_distributions_zip_is_left(tmp_path):
    # SPARK_HOME=/opt/spark: its python/lib/pyspark.zip is not inside a package named pyspark with an __init__.py
    dist = tmp_path / "opt" / "spark" / "python" / "lib"
    dist.mkdir(parents=True)
    (dist / "pyspark.zip").write_bytes(b"")
    assert installed_zips([str(dist / "pyspark.zip")]) == []
    # a folder named pyspark without __init__.py (not an installed package) is left too
    lib = _package(tmp_path / "other", init=False)
    assert installed_zips([str(lib / "pyspark.zip")]) == []
    # and a zip of another name in an installed package's lib
    lib = _package(tmp_path / "site2")
    assert installed_zips([str(lib / "py4j-0.10.9.9-src.zip"), str(tmp_path / "site2" / "pyspark" / "python" / "pyspark.zip")]) == []
