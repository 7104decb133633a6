"""goldeval.engines.spark.fold_path: each task reads a byte range of the file with the local reader and folds it
into one partial; the figures equal the local run's (and score_path's) to the last digit, repeated ids included."""

from __future__ import annotations

import gzip
import hashlib
import json

import pytest

from conftest import EXAMPLES
from goldeval.errors import InputError
from goldeval.pipeline.files import score_file

PRIMOCK = EXAMPLES / "openscribe_primock57_predictions.jsonl"
ACI = EXAMPLES / "openscribe_acibench_predictions.jsonl"


def _agg(results):
    return {k: v for k, v in results["aggregate"].items() if k != "elapsed_sec"}


def test_line_ranges_cut_at_line_starts_with_their_line_numbers(tmp_path):
    from goldeval.engines.spark import line_ranges

    f = tmp_path / "abc.txt"
    f.write_bytes(b"a\nb\nc\n")
    # by hand: 6 bytes cut in 2 aims at byte 3 (inside line 2, "b\n" at 2-3): the next line starts at byte 4, line 3
    assert line_ranges(str(f), 2) == [(0, 4, 1), (4, 6, 3)]
    assert line_ranges(str(f), 1) == [(0, 6, 1)]
    # more ranges than lines: one range a line at most, never an empty one
    assert line_ranges(str(f), 10) == [(0, 2, 1), (2, 4, 2), (4, 6, 3)]
    g = tmp_path / "blank.txt"
    g.write_bytes(b"xxxxxxxx\n\n\nyy")  # one long line, two blank lines, a last line without a newline
    # by hand: 13 bytes in 3 aims at bytes 4 and 8: both fall in line 1 (bytes 0-8), whose end is the one cut: line
    # 2 starts at byte 9, and the last range holds the two blank lines and "yy"
    assert line_ranges(str(g), 3) == [(0, 9, 1), (9, 13, 2)]


def test_line_ranges_feed_the_hasher_every_byte(tmp_path):
    from goldeval.engines.spark import line_ranges

    h = hashlib.sha256()
    ranges = line_ranges(str(ACI), 7, hasher=h)
    data = ACI.read_bytes()
    assert h.hexdigest() == hashlib.sha256(data).hexdigest()
    assert ranges[0][0] == 0 and ranges[-1][1] == len(data)
    for (_, end, _), (start, _, line) in zip(ranges, ranges[1:]):  # contiguous, each starting a line
        assert end == start and data[start - 1:start] == b"\n"
        assert line == data[:start].count(b"\n") + 1


@pytest.mark.parametrize("range_bytes", [1, 20_000, 1 << 25])
def test_fold_path_gives_the_published_figures(spark, range_bytes):
    # Open-Scribe's published figures (DESIGN.md): PriMock57 0.27861937781204515 over 57; ACI-Bench test1
    # 0.4465338141844892 over 35 scored, 5 failed. range_bytes=1 puts every line in its own task.
    from goldeval.engines import spark as gs

    for path, figure in ((PRIMOCK, 0.27861937781204515), (ACI, 0.4465338141844892)):
        results = gs.fold_path(spark, str(path), "token_f1", range_bytes=range_bytes)
        local = score_file(path)
        assert results["aggregate"]["whole_note_f1_mean"] == figure
        assert _agg(results) == _agg(local) and results["failures"] == local["failures"]
        assert results["engine"]["name"] == "spark"
    assert gs.fold_path(spark, str(ACI), "token_f1", range_bytes=range_bytes)["engine"]["partitions"] >= 2


def _odd_file(tmp_path):
    """A byte order mark, blank lines, a null prediction (line 4), a line that is not JSON (7), a Latin-1 byte (9),
    a last line without a newline: each failing line fails alone, with its line number (decode_line's rules)."""
    rows = PRIMOCK.read_text().splitlines()[:10]
    bad = json.loads(rows[2])
    bad["prediction"] = None
    lines = [rows[0].encode(), rows[1].encode(), b"", json.dumps(bad).encode(), rows[3].encode(), b"   ",
             b"{not json", rows[4].encode(), b'{"id": "latin", "prediction": "caf\xe9", "reference": "a"}',
             rows[5].encode(), rows[6].encode()]
    f = tmp_path / "odd.jsonl"
    f.write_bytes(b"\xef\xbb\xbf" + b"\n".join(lines))
    return f


@pytest.mark.parametrize("range_bytes", [1, 900, 1 << 25])
def test_fold_path_reports_failing_lines_as_locally(spark, tmp_path, range_bytes):
    from goldeval.engines import spark as gs

    f = _odd_file(tmp_path)
    local = score_file(f)
    assert [x["line"] for x in local["failures"]] == [4, 7, 9]
    assert "byte 0xe9" in local["failures"][2]["error"]
    results = gs.fold_path(spark, str(f), "token_f1", range_bytes=range_bytes)
    assert results["failures"] == local["failures"]
    assert _agg(results) == _agg(local)
    assert (results["aggregate"]["n"], results["aggregate"]["n_failed"]) == (6, 3)  # rows 1, 2, 5, 8, 10, 11 scored


def test_a_repeated_id_is_unscored_as_locally(spark, tmp_path):
    # line 11 repeats line 2's id in another task's range: the file is scored again by score_path, which marks it
    from goldeval.engines import spark as gs

    rows = PRIMOCK.read_text().splitlines()[:12]
    rows[10] = rows[1]
    f = tmp_path / "rep.jsonl"
    f.write_text("\n".join(rows) + "\n")
    local = score_file(f)
    assert [x["line"] for x in local["failures"]] == [11] and "repeats line 2" in local["failures"][0]["error"]
    results = gs.fold_path(spark, str(f), "token_f1", range_bytes=2000)
    assert results["failures"] == local["failures"]
    assert _agg(results) == _agg(local) and results["aggregate"]["n"] == 11
    # without the repeat, the same file folds with no failure
    rows[10] = PRIMOCK.read_text().splitlines()[10]
    f.write_text("\n".join(rows) + "\n")
    assert gs.fold_path(spark, str(f), "token_f1", range_bytes=2000)["failures"] == []


def test_fold_path_folds_slices_as_locally(spark, tmp_path):
    # two slices of one file fold from the same partials: each gives Open-Scribe's published figure (README)
    from goldeval.engines import spark as gs
    from goldeval.scoring.registry import get_scorer
    from goldeval.scoring.slices import sliced

    lines = [json.dumps({**json.loads(x), "set": "primock"}) for x in PRIMOCK.read_text().splitlines() if x.strip()]
    lines += [json.dumps({**json.loads(x), "set": "aci"}) for x in ACI.read_text().splitlines() if x.strip()]
    f = tmp_path / "both.jsonl"
    f.write_text("\n".join(lines) + "\n")
    results = gs.fold_path(spark, str(f), sliced(get_scorer("token_f1"), "set"), range_bytes=50_000)
    assert results["slices"]["primock"]["whole_note_f1_mean"] == 0.27861937781204515
    assert results["slices"]["aci"]["whole_note_f1_mean"] == 0.4465338141844892


def test_only_a_plain_local_jsonl_file_folds(spark, tmp_path):
    from goldeval.engines import spark as gs

    assert gs.foldable(spark, str(ACI))
    z = tmp_path / "aci.jsonl.gz"
    z.write_bytes(gzip.compress(ACI.read_bytes()))
    assert not gs.foldable(spark, str(z))
    assert not gs.foldable(spark, str(tmp_path / "missing.jsonl"))
    with pytest.raises(InputError, match=r"aci\.jsonl\.gz: fold_path reads a plain JSONL file"):
        gs.fold_path(spark, str(z), "token_f1")


def test_cli_spark_without_store_folds_and_matches_the_local_run(spark, tmp_path):
    from click.testing import CliRunner

    from goldeval.cli import main

    out = tmp_path / "r.json"
    res = CliRunner().invoke(main, ["score", str(ACI), "--engine", "spark", "--spark-master", "local[2]", "--no-store",
                                    "-q", "--out", str(out)])
    assert res.exit_code == 0, res.output
    results = json.loads(out.read_text())
    local = score_file(ACI)
    assert _agg(results) == _agg(local) and results["failures"] == local["failures"]
    assert results["input"]["sha256"] == hashlib.sha256(ACI.read_bytes()).hexdigest()  # taken in the read that cuts it


@pytest.mark.parametrize("n_ranges", [1, 3, 7])
def test_a_task_folds_its_range_with_the_line_kernel_as_with_score_batch(tmp_path, monkeypatch, n_ranges):
    """_fold_range with token F1's compiled line kernel (what a local worker uses) gives what it gives row by row
    through score_batch: the same partial (finished: the aggregate and the failures) and row count, on
    the published files and on the odd one (BOM, blank lines, a null text, a line not JSON, a Latin-1 byte, no last
    newline), cut into 1, 3 and 7 ranges. No Spark session: a task's work alone."""
    from goldeval.engines import spark as gs
    from goldeval.freetext.scorer import TokenF1

    if TokenF1().line_kernel(TokenF1().configure(source="x")) is None:
        pytest.skip("no C build: no line kernel")
    for path in (PRIMOCK, ACI, _odd_file(tmp_path)):
        sc = TokenF1()
        config = sc.configure(source=path.name)
        ranges = gs.line_ranges(str(path), n_ranges)
        with_kernel = [gs._fold_range(sc, config, str(path), *r) for r in ranges]
        with monkeypatch.context() as m:
            m.setattr(TokenF1, "line_kernel", lambda self, config: None)
            by_rows = [gs._fold_range(sc, config, str(path), *r) for r in ranges]
        for (kp, kn), (rp, rn) in zip(with_kernel, by_rows, strict=True):
            assert kn == rn
            assert kp.n_rows == rp.n_rows
        total_k, total_r = sc.new_partial(config, keep_cases=False), sc.new_partial(config, keep_cases=False)
        for (kp, _), (rp, _) in zip(with_kernel, by_rows, strict=True):
            total_k.merge(kp)
            total_r.merge(rp)
        fk, fr = sc.finish(total_k, config), sc.finish(total_r, config)
        assert _agg(fk) == _agg(fr) and fk["failures"] == fr["failures"]
        assert _agg(fk) == _agg(score_file(path))


def test_master_cores_reads_the_local_masters():
    # by hand from Spark's master URLs: local = 1 thread, local[N] / local[N,F] = N, local[*] = the machine's cores,
    # local-cluster[workers, cores each, MiB] = workers x cores; any other master: this machine's cores
    import os

    from goldeval.engines.spark import master_cores

    cores = os.cpu_count() or 1
    assert [master_cores(m) for m in ("local", "local[2]", "local[3,2]", "local[*]", "local-cluster[2,3,1024]",
                                      "spark://h:7077", "yarn")] == [1, 2, 3, cores, 6, cores, cores]


def test_user_spark_keys_reads_spark_defaults_and_submit_args(tmp_path):
    from goldeval.engines.spark import user_spark_keys

    (tmp_path / "spark-defaults.conf").write_text(
        "# a comment\n\nspark.a  1\nspark.b=2\nspark.c:3\n   # spark.not.this 4\nspark.driver.defaultJavaOptions -Xss4m\n")
    env = {"SPARK_CONF_DIR": str(tmp_path), "PYSPARK_SUBMIT_ARGS": "--conf spark.d=4 --conf=spark.e=5 --master x pyspark-shell"}
    assert user_spark_keys(env) == {"spark.a", "spark.b", "spark.c", "spark.driver.defaultJavaOptions", "spark.d", "spark.e"}
    assert user_spark_keys({"SPARK_HOME": str(tmp_path / "none")}) == set()  # no conf folder: nothing set
    assert user_spark_keys({}) == set()


def test_local_defaults_yield_to_the_users_config(tmp_path):
    from goldeval.engines.spark import LOCAL_DEFAULTS, local_defaults

    key = "spark.driver.defaultJavaOptions"
    env = {"GOLDEVAL_SPARK_CDS": str(tmp_path / "cds"), "JAVA_HOME": str(tmp_path / "jdk")}
    (tmp_path / "jdk" / "bin").mkdir(parents=True)
    (tmp_path / "jdk" / "bin" / "java").write_text("")
    first = local_defaults("local[2]", {}, env)[key]
    # no archive yet: this process writes its own file, named after the archive, moved into place at exit
    assert first.startswith(LOCAL_DEFAULTS[key] + " -XX:ArchiveClassesAtExit=" + str(tmp_path / "cds" / "spark-"))
    assert ".jsa." in first and first.split()[2].endswith(".tmp") and "-Xlog:cds=off" in first
    archive = first.split()[2].split("=", 1)[1].rsplit(".", 2)[0]
    with open(archive, "wb"):
        pass
    # the archive there: mapped
    assert local_defaults("local[2]", {}, env)[key] == (LOCAL_DEFAULTS[key] + f" -XX:SharedArchiveFile={archive} "
                                                        "-Xshare:auto -Xlog:cds=off -Xlog:cds+dynamic=off")
    # turned off: the JVM options without an archive
    assert local_defaults("local[2]", {}, {**env, "GOLDEVAL_SPARK_CDS": "off"}) == LOCAL_DEFAULTS
    # the user's own setting (session's conf, spark-defaults.conf, PYSPARK_SUBMIT_ARGS) wins: nothing of ours for it
    daemon = {"spark.python.daemon.module": "goldeval.engines.spark_daemon"}
    assert local_defaults("local[2]", {key: "-Xss4m"}, env) == daemon
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "spark-defaults.conf").write_text(f"{key} -Xss4m\n")
    assert local_defaults("local[2]", {}, {**env, "SPARK_CONF_DIR": str(tmp_path / "conf")}) == daemon
    assert local_defaults("local[2]", {}, {**env, "PYSPARK_SUBMIT_ARGS": f"--conf {key}=-Xss4m pyspark-shell"}) == daemon
    # the user's own daemon module wins the same way
    assert "spark.python.daemon.module" not in local_defaults("local[2]", {"spark.python.daemon.module": "mine"}, env)
    # another master: nothing (its driver may run for hours, where C2 pays; its executors' Python is theirs)
    assert local_defaults("spark://h:7077", {}, env) == local_defaults("yarn", {}, env) == {}


def test_local_python_workers_import_the_installed_pyspark(spark):
    # The session of the tests is a local[2] one made by gs.session: its daemon is goldeval.engines.spark_daemon, so
    # the workers' pyspark is the installed package (its cached bytecode), not the pyspark.zip Spark put first on
    # their path (compiled from source at every session start). Where pyspark was installed with its zip inside it.
    import os

    import pyspark

    installed = os.path.dirname(pyspark.__file__)
    if not os.path.isfile(os.path.join(installed, "python", "lib", "pyspark.zip")):
        pytest.skip("this pyspark ships no python/lib/pyspark.zip inside its package: nothing to drop")
    assert spark.sparkContext.getConf().get("spark.python.daemon.module") == "goldeval.engines.spark_daemon"
    def pyspark_file(_):  # (defined here: pickled by value, the workers cannot import this test module)
        import pyspark

        return pyspark.__file__

    files = set(spark.sparkContext.parallelize(range(4), 2).map(pyspark_file).collect())
    assert files == {os.path.join(installed, "__init__.py")}, files


def _rows(path, n=6):
    return [x for x in path.read_text().splitlines() if x.strip()][:n]


@pytest.mark.parametrize("case", ["unique", "repeat", "repeat_on_a_nan_line", "int_and_text", "blank_ids"])
def test_fold_plan_finds_repeated_ids_as_the_local_first_pass(tmp_path, case):
    """fold_plan's answer (an id may repeat) against the local run's failures on the same file: every file where
    the local run unscores a repeat is sent to score_path. The cases by hand: a repeated id on lines 2 and 5; the
    first of them with a NaN literal (read only by the lenient reader, not by orjson); id 7 and "7" (one id text
    for token F1); blank ids (no id: never a repeat; the fast scan may still flag them, which costs time, not figures)."""
    from goldeval.engines.spark import fold_plan, line_ranges

    rows = [json.loads(x) for x in _rows(PRIMOCK)]
    lines = [json.dumps(r) for r in rows]
    if case == "repeat":
        lines[4] = json.dumps({**rows[4], "id": rows[1]["id"]})
    elif case == "repeat_on_a_nan_line":
        lines[1] = json.dumps({**rows[1], "score_hint": 1.0}).replace("1.0", "NaN")
        lines[4] = json.dumps({**rows[4], "id": rows[1]["id"]})
    elif case == "int_and_text":
        lines[1] = json.dumps({**rows[1], "id": 7})
        lines[4] = json.dumps({**rows[4], "id": "7"})
    elif case == "blank_ids":
        lines[1] = json.dumps({**rows[1], "id": " "})
        lines[4] = json.dumps({**rows[4], "id": " "})
    f = tmp_path / "f.jsonl"
    f.write_text("\n".join(lines) + "\n")
    local = score_file(f)
    repeats = [x for x in local["failures"] if "repeats line" in x["error"]]
    h = hashlib.sha256()
    plan = fold_plan(str(f), "token_f1", cores=2, hasher=h, range_bytes=1000)
    assert h.hexdigest() == hashlib.sha256(f.read_bytes()).hexdigest()
    # aimed at ceil(size / 1000) ranges rounded up to a multiple of the 2 cores (fewer where lines are longer)
    tasks = -(-f.stat().st_size // 1000)
    assert plan.ranges == line_ranges(str(f), 2 * -(-tasks // 2))
    if case in ("unique",):
        assert not repeats and plan.repeated is False
    elif case == "blank_ids":
        assert not repeats  # (plan.repeated may be either: a blank id's hash is counted by the C scan)
    else:
        assert [x["line"] for x in repeats] == [5] and plan.repeated is True


def test_fold_path_with_a_repeat_on_a_lenient_line_matches_the_local_run(spark, tmp_path):
    # the repeated id's first row holds a NaN literal, which token F1 reads leniently: the fold path sees the repeat
    # (its first pass reads that line with the local reader) and gives the local figures, line 5 unscored
    from goldeval.engines import spark as gs

    rows = [json.loads(x) for x in _rows(PRIMOCK)]
    lines = [json.dumps(r) for r in rows]
    lines[1] = json.dumps({**rows[1], "score_hint": 1.0}).replace("1.0", "NaN")
    lines[4] = json.dumps({**rows[4], "id": rows[1]["id"]})
    f = tmp_path / "nan.jsonl"
    f.write_text("\n".join(lines) + "\n")
    local = score_file(f)
    results = gs.fold_path(spark, str(f), "token_f1", range_bytes=500)
    assert [x["line"] for x in results["failures"]] == [5] and results["failures"] == local["failures"]
    assert _agg(results) == _agg(local)


def test_the_class_data_archive_is_written_once_then_used(tmp_path):
    """Two fresh `goldeval score --engine spark` processes with GOLDEVAL_SPARK_CDS naming an empty folder: the first
    writes the driver's class data archive as it exits (and says so on stderr), the second maps it (writes nothing);
    both give the local run's figures. Java refuses an archive that does not match, so a wrong one costs time only."""
    import os
    import subprocess
    import sys

    from conftest import _java

    if _java() is None:
        pytest.skip("Java is not installed")
    pytest.importorskip("pyspark")
    env = {**os.environ, "GOLDEVAL_SPARK_CDS": str(tmp_path / "cds")}
    local = score_file(ACI)
    archives = []
    for i in range(2):
        out = tmp_path / f"r{i}.json"
        res = subprocess.run([sys.executable, "-m", "goldeval", "score", str(ACI), "--engine", "spark", "--no-store",
                              "-q", "--out", str(out)], env=env, capture_output=True, text=True, timeout=600)
        assert res.returncode == 0, res.stderr[-2000:]
        assert ("writing Spark's class data archive" in res.stderr) == (i == 0)
        results = json.loads(out.read_text())
        assert _agg(results) == _agg(local) and results["failures"] == local["failures"]
        archives.append({p.name: p.stat().st_mtime_ns for p in (tmp_path / "cds").iterdir()})
    assert len(archives[0]) == 1 and next(iter(archives[0])).endswith(".jsa")  # one archive, no file left over
    assert archives[1] == archives[0]  # the second run wrote nothing


def test_fold_plan_stops_when_cancelled(tmp_path):
    # the CLI cancels the driver's read when the session cannot start (or Ctrl-C): it stops at its next block
    import threading

    from goldeval.engines.spark import fold_plan

    cancel = threading.Event()
    assert fold_plan(str(ACI), "token_f1", cores=2, cancel=cancel).repeated is False  # not set: the whole read
    cancel.set()
    with pytest.raises(InputError, match="cancelled"):
        fold_plan(str(ACI), "token_f1", cores=2, cancel=cancel)


@pytest.mark.parametrize("change", ["same size", "appended", "none"])
def test_fold_path_refuses_a_file_changed_after_its_plan_was_read(tmp_path, change):
    # fold_plan hashes the file on the driver; the tasks read their ranges of it later. A file rewritten with the
    # same size in between gave an aggregate of the new bytes under the old bytes' sha256; now refused (InputError,
    # exit 2). Here the "tasks" run in this process (a stand-in for the session's RDD), the first one rewrites it.
    import os

    from goldeval.engines import spark as gs

    f = tmp_path / "p.jsonl"
    data = b"".join(b'{"id": "r%d", "prediction": "chest pain %d", "reference": "chest pain"}\n' % (i, i)
                    for i in range(200))
    f.write_bytes(data)

    class Rdd:
        def __init__(self, items):
            self.items = items

        def map(self, fn):
            def each():
                for i, item in enumerate(self.items):
                    yield fn(item)
                    if i == 0 and change != "none":
                        if change == "same size":
                            f.write_bytes(data.replace(b"chest", b"chess"))
                        else:
                            with open(f, "ab") as fh:
                                fh.write(b'{"id": "x", "prediction": "a", "reference": "a"}\n')
                        os.utime(f, ns=(1, 1))
            return type("Done", (), {"collect": lambda _self: list(each())})()

    context = type("Context", (), {"master": "local[2]", "defaultParallelism": 2,
                                   "parallelize": lambda _self, items, n: Rdd(items)})()
    session = type("Session", (), {"sparkContext": context})()
    plan = gs.fold_plan(str(f), "token_f1", cores=2, hasher=hashlib.sha256(), range_bytes=2000)
    assert len(plan.ranges) > 1 and plan.identity is not None
    if change == "none":
        assert gs.fold_path(session, str(f), "token_f1", plan=plan)["aggregate"]["n"] == 200
    else:
        with pytest.raises(InputError, match="changed while it was scored"):
            gs.fold_path(session, str(f), "token_f1", plan=plan)
