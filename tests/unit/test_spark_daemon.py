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


def test_a_zip_whose_package_the_rest_of_the_path_does_not_import_is_left(tmp_path):
    # break-fix (hG, 2026-12-05): the zip was dropped by its place alone, so a worker Python without pyspark of its
    # own (PYSPARK_PYTHON an executors' environment, which Spark supplies with pyspark through this very zip) lost
    # its only pyspark and the daemon died on import: every Python job of the session failed. Expected: the zip is
    # dropped only where the rest of the path imports the package it sits in (the first test above), left otherwise.
    lib = _package(tmp_path / "site-packages")
    zip_ = str(lib / "pyspark.zip")
    assert installed_zips([zip_, str(lib / "py4j-0.10.9.9-src.zip")]) == []  # no pyspark on the rest of the path
    # another pyspark found first (another version than the JVM's): left too
    (tmp_path / "other" / "pyspark").mkdir(parents=True)
    (tmp_path / "other" / "pyspark" / "__init__.py").write_text("")
    assert installed_zips([zip_, str(tmp_path / "other"), str(tmp_path / "site-packages")]) == []
    # the same package reached through a symbolic link is the same package: dropped
    (tmp_path / "link").symlink_to(tmp_path / "site-packages")
    assert installed_zips([zip_, str(tmp_path / "link")]) == [zip_]


def _daemon_zip(lib):
    """Replace the (empty) pyspark.zip in *lib* by one whose pyspark.daemon says it ran from the zip."""
    import zipfile

    with zipfile.ZipFile(lib / "pyspark.zip", "w") as z:
        z.writestr("pyspark/__init__.py", "")
        z.writestr("pyspark/daemon.py", "import sys\nprint('daemon from the zip', sys.argv[1:])\n")


def _run_daemon(pythonpath):
    """``python -S -m goldeval.engines.spark_daemon pyspark.worker`` with PYTHONPATH *pythonpath* and goldeval's
    source: the Python has no site-packages, so pyspark comes from *pythonpath* only."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    import goldeval

    src = str(Path(goldeval.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*pythonpath, src])}
    return subprocess.run([sys.executable, "-S", "-m", "goldeval.engines.spark_daemon", "pyspark.worker"], env=env,
                          capture_output=True, text=True, timeout=120)


def test_the_daemon_runs_from_the_zip_when_the_worker_python_has_no_pyspark(tmp_path):
    # The daemon itself, as Spark starts it: PYTHONPATH = the installed package's zip (and goldeval), no pyspark in
    # the worker Python's own path. Before the fix: "No module named 'pyspark'" (exit 1). The daemon here is a
    # stand-in that prints where it ran from and the arguments Spark gives it.
    lib = _package(tmp_path / "site-packages")
    _daemon_zip(lib)
    got = _run_daemon([str(lib / "pyspark.zip")])
    assert got.returncode == 0, got.stderr
    assert got.stdout.strip() == "daemon from the zip ['pyspark.worker']"
    # the healthy case: the package is on the path too, so the zip is dropped and the package's daemon runs
    (tmp_path / "site-packages" / "pyspark" / "daemon.py").write_text(
        "import sys\nprint('daemon from the package', sys.argv[1:])\n")
    got = _run_daemon([str(lib / "pyspark.zip"), str(tmp_path / "site-packages")])
    assert got.returncode == 0, got.stderr
    assert got.stdout.strip() == "daemon from the package ['pyspark.worker']"
