"""The Spark engine: any :class:`goldeval.scoring.protocol.Scorer` over a Spark DataFrame, with the same numbers as locally.

Install with ``pip install 'goldeval[spark]'`` (pyspark, pyarrow, pandas); goldeval must be installed on the
executors too (a cluster's Python environment, or ``--py-files``)::

    from goldeval.engines import spark as gs
    per_case = gs.score(df, scorer="token_f1", tokenizer="openscribe")   # a per-case DataFrame (mapInArrow)
    results = gs.aggregate(per_case)                                     # the results dict, exactly

**Rows.** ``df`` holds one row per case, with the columns the scorer reads (``id``, ``prediction``, ``reference``
for token F1; a struct column reads as an object of sections). Its rows are numbered by the column ``line``
when it has one (as :func:`read` gives: the 1-based JSONL line, or the Parquet row index), else by their 1-based
position (``zipWithIndex``), so that messages read ``source:N: ...`` as locally.

**Per-case DataFrame** (:data:`PER_CASE_SCHEMA`): ``id`` string · ``line`` long · ``status`` string (``scored`` /
``unscored``) · ``error`` string · ``score`` double (the case's headline number, as the run store keeps it) ·
``record`` string (the whole per-case record as JSON, what the run store records). The scorer's name and
configuration travel in the ``record`` column's metadata, so :func:`aggregate` and ``goldeval runs import`` need
nothing else (they survive a round trip through Parquet).

**Ids.** A row whose id repeats an earlier row's (by line, across all partitions) is unscored with the same message
as locally ("id 'x' repeats line 3"): the repeated ids are found with one ``groupBy``; only they (usually none)
come to the driver, and are broadcast back to mark the later rows.

**Exact aggregation.** Each partition folds its records into the scorer's :class:`~goldeval.scoring.protocol.Partial`
(counts, and :class:`goldeval.scoring.sums.ExactSum` for every mean: exact dyadic sums, no rounding), which travels
pickled to the driver: one small row per partition, never the cases. The driver merges them exactly, in line
order, and rounds each mean once — equal to the local run to the last digit. Spark's ``avg`` is never used.

**No case kept** (no store, no per-case Parquet): :func:`fold_path` skips the per-case DataFrame. The driver reads
the local JSONL file once (:func:`fold_plan`: byte ranges, sha256, repeated ids as the local engine's first pass
finds them), while the session starts; each task reads a byte range with the local engine's reader and folds its
records into one partial as they come; one pickled partial a task comes back. Repeated ids send the file through
:func:`score_path`, so the numbers stay those of the local run.

**Start-up on a ``local[...]`` master** (:func:`session`, :data:`LOCAL_DEFAULTS`): the driver JVM runs with C1 only
and the serial collector, and maps a class data archive of Spark's start-up classes (:func:`class_archive`, written
once); each is left out where the user's own Spark configuration sets ``spark.driver.defaultJavaOptions``, and
the archive where ``GOLDEVAL_SPARK_CDS=off``. The Python daemon starts from the installed pyspark package
(:mod:`goldeval.engines.spark_daemon`), unless the user sets ``spark.python.daemon.module``.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import itertools
import os
import pickle
import re
import shutil
import sys
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple
from urllib.parse import urlparse

import orjson

from goldeval.engines.local import Stretch, kernel_records
from goldeval.errors import GoldevalError, InputError
from goldeval.io.decoding import compression_of, encoding_of
from goldeval.io.ids import scan_jsonl_ids
from goldeval.io.reading import Row, maps_as_dicts, decode_line, file_memo_key, is_parquet
from goldeval.runs.columns import case_columns
from goldeval.scoring.protocol import SLICE_KEY, Scorer, duplicate_error
from goldeval.scoring.slices import SlicedScorer, sliced
from goldeval.scoring.registry import get_scorer

__all__ = ["PER_CASE_SCHEMA", "FOLD_RANGE_BYTES", "session", "read", "score", "score_path", "aggregate", "fold_path",
           "FoldPlan", "fold_plan", "master_cores", "LOCAL_DEFAULTS", "local_defaults", "user_spark_keys",
           "class_archive", "CDS_ENV", "foldable", "line_ranges", "iter_records", "executor_failure",
           "executor_failures", "with_run"]

#: The per-case DataFrame's columns (a Spark DDL string).
PER_CASE_SCHEMA = "id string, line long, status string, error string, score double, record string"
_META_KEY = "goldeval"


#: What Spark says when a task failed on an executor (its Python worker died, the executor was lost, the task's
#: Python code raised), as opposed to what it says of a path it cannot read: the most telling words first.
_EXECUTOR_CAUSES = (
    re.compile(r"Python worker exited unexpectedly \(crashed\)"),
    re.compile(r"ExecutorLostFailure[^\n]*"),
    re.compile(r"(?:PythonException|pyspark\.errors\.exceptions\.\w+\.PythonException):[^\n]*(?:\n(?!\s*at )[^\n]*)*"),
    re.compile(r"Job aborted due to stage failure:[^\n]*?(?=: org\.apache|$)", re.MULTILINE),
)


def executor_failure(exc: BaseException) -> str | None:
    """What failed on a Spark executor, in Spark's words cut to one line, or ``None`` when *exc* is not a task that
    failed there (then it is, e.g., a path Spark cannot read).

    Args:
        exc: An exception raised by a Spark action (``Py4JJavaError``, ``PythonException``, ``SparkException``).

    Returns:
        E.g. ``"Python worker exited unexpectedly (crashed)"``, or ``None``.
    """
    text = str(exc)
    for cause in _EXECUTOR_CAUSES:
        m = cause.search(text)
        if m is not None:
            found = m.group(0)
            if found.startswith(("PythonException", "pyspark.")):
                lines = [x.strip() for x in found.splitlines() if x.strip()]
                found = "a Python error on the executor: " + (lines[-1] if lines else found)
            return " ".join(found.split())[:300]
    return None


@contextlib.contextmanager
def executor_failures(what: str) -> Iterator[None]:
    """Report a Spark action's failure on an executor as such: a :class:`~goldeval.errors.GoldevalError` (exit 3)
    naming what failed, instead of Spark's whole Java stack as an internal error, or a path it "cannot read".

    Args:
        what: What the action was doing, for the message (``"scoring preds.jsonl"``).

    Raises:
        GoldevalError: a task failed on an executor (see :func:`executor_failure`). Any other exception is left as
            it is.
    """
    try:
        yield
    except Exception as exc:
        failed = None if isinstance(exc, GoldevalError) else _executor_error(exc, what)
        if failed is None:
            raise
        raise failed from None


def _executor_error(exc: BaseException, what: str) -> GoldevalError | None:
    cause = executor_failure(exc)
    if cause is None:
        return None
    return GoldevalError(
        f"Spark executor failure while {what}: {cause}. The job was stopped by a failure on an executor (a Python "
        "worker that died: memory, a kill; a lost executor), not by the input: see the executors' logs (stderr of "
        "the Spark workers), then run again.")


def _pyspark():
    try:
        import pyspark  # noqa: F401
        from pyspark.sql import SparkSession  # optional heavy dependency: pyspark (extra spark)
    except ImportError:
        raise InputError("the Spark engine needs pyspark: pip install 'goldeval[spark]'.") from None
    try:
        import pyarrow  # noqa: F401  (the partitions travel as Arrow batches)
    except ImportError:
        raise InputError("the Spark engine needs pyarrow beside pyspark: pip install 'goldeval[spark]'.") from None
    return SparkSession


#: Set for a ``local[...]`` master (driver and executors in one short-lived JVM), unless the user's own Spark
#: configuration names the same key (:func:`session`'s *conf*, ``spark-defaults.conf``, ``--conf`` in
#: ``PYSPARK_SUBMIT_ARGS``). The driver JVM's default options: C1 only (``-XX:TieredStopAtLevel=1``: C2, the
#: optimising compiler, spends seconds of CPU compiling Spark's start-up code that a run of a few seconds never gets
#: back; the rows are scored in Python workers, not in the JVM) and the serial collector (``-XX:+UseSerialGC``: no GC
#: threads per core for a heap that stays small). Measured on ``local[2]`` (benchmarks/README.md, issue 31 item 3,
#: hD): the session and first job's CPU about halved. ``defaultJavaOptions`` is what Spark prepends to
#: ``spark.driver.extraJavaOptions``, so a user's ``-XX:TieredStopAtLevel=4`` there still wins.
#: ``spark.python.daemon.module``: :mod:`goldeval.engines.spark_daemon`, which starts Spark's Python daemon from the
#: installed pyspark package instead of the ``pyspark.zip`` Spark puts first on the workers' path (compiled from
#: source at every session: ~0.8 s of the first Python job; benchmarks/README.md, issue 31 item 3, lead).
LOCAL_DEFAULTS = {"spark.driver.defaultJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
                  "spark.python.daemon.module": "goldeval.engines.spark_daemon"}


def session(master: str | None = "local[2]", app_name: str = "goldeval", conf: Mapping[str, str] | None = None) -> Any:
    """A SparkSession (the active one when there is one and *master* is ``None``).

    Args:
        master: ``local[2]``, ``spark://host:7077``, ``yarn``…; ``None`` takes the active session or the
            environment's default.
        app_name: The application name shown in the Spark UI.
        conf: Extra Spark settings.

    The executors run this Python (``PYSPARK_PYTHON`` is set to ``sys.executable`` unless it is set already), so
    in local mode they import the same goldeval. Arrow is turned on. A ``local[...]`` master also gets
    :data:`LOCAL_DEFAULTS` where the user's configuration (*conf*, :func:`user_spark_keys`) does not set those keys,
    and with them the driver's class data archive (:func:`class_archive`): used when it exists, else written when
    this process exits.

    Raises:
        InputError: pyspark is not installed, or Java cannot be started.
    """
    SparkSession = _pyspark()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if master is None:
        active = SparkSession.getActiveSession()
        if active is not None:
            return active
    builder = SparkSession.builder.appName(app_name)
    if master is not None:
        builder = builder.master(master)
    settings = {"spark.sql.execution.arrow.pyspark.enabled": "true", "spark.ui.showConsoleProgress": "false",
                "spark.sql.shuffle.partitions": "8", **(conf or {})}
    local = local_defaults(master, settings) if master is not None else {}
    settings = {**local, **settings}
    m = re.search(r"-XX:ArchiveClassesAtExit=(\S+)", local.get("spark.driver.defaultJavaOptions", ""))
    dumping = m.group(1) if m is not None else None
    archive = dumping.rsplit(".", 2)[0] if dumping is not None else None
    for k, v in settings.items():
        builder = builder.config(k, v)
    try:
        spark = builder.getOrCreate()
    except Exception as exc:  # Java missing or not startable: a setup problem the user can fix
        raise InputError(f"Spark could not start (master {master!r}): {type(exc).__name__}: {str(exc)[:300]}. "
                         "The Spark engine needs Java 17 (JAVA_HOME or java on PATH).") from None
    if dumping is not None and archive is not None:
        _finish_archive_at_exit(spark, dumping, archive)
    return spark


def local_defaults(master: str, conf: Mapping[str, str], environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """What :func:`session` adds for *master*: :data:`LOCAL_DEFAULTS` for a ``local[...]`` master, less every key
    *conf* or the user's own Spark configuration (:func:`user_spark_keys`) sets, the driver's options extended by
    its class data archive (:func:`class_archive`): ``-XX:SharedArchiveFile`` when the archive exists, else
    ``-XX:ArchiveClassesAtExit`` to a file of this process's own (moved into place when it exits).

    Args:
        master: The master URL. conf: The settings given to :func:`session`. environ: The environment (default
            ``os.environ``).

    Returns:
        Settings to put before *conf*'s; ``{}`` for any other master, or when the user sets them all.
    """

    if not master.startswith("local"):
        return {}
    users = user_spark_keys(environ)
    local = {k: v for k, v in LOCAL_DEFAULTS.items() if k not in users and k not in conf}
    if "spark.driver.defaultJavaOptions" in local:
        archive = class_archive(environ)
        if archive is not None and os.path.isfile(archive):
            local["spark.driver.defaultJavaOptions"] += f" -XX:SharedArchiveFile={archive} {_CDS_QUIET}"
        elif archive is not None:
            dumping = f"{archive}.{os.getpid()}-{os.urandom(4).hex()}.tmp"
            local["spark.driver.defaultJavaOptions"] += f" -XX:ArchiveClassesAtExit={dumping} {_CDS_QUIET}"
    return local


#: The JVM's class data sharing messages (an archive it cannot use, a class it does not archive) are not the user's.
_CDS_QUIET = "-Xshare:auto -Xlog:cds=off -Xlog:cds+dynamic=off"

#: The environment variable naming the folder of the Spark driver's class data archives; ``off`` (or ``0``) for none.
CDS_ENV = "GOLDEVAL_SPARK_CDS"


def class_archive(environ: Mapping[str, str] | None = None) -> str | None:
    """Where the class data archive of a ``local[...]`` Spark driver goes (Java's class data sharing, ``-XX:SharedArchiveFile``): the classes the JVM
    loads to start Spark, already parsed and verified, mapped at start-up instead of read from the jars (measured on
    ``local[2]``: the session starts in about half the time; benchmarks/README.md, issue 31 item 3, hD).

    The first local session with no archive writes it when its JVM exits (the process waits for that once, some
    seconds); every later one maps it. An archive holds for one Java and one set of Spark jars, so its name carries
    a hash of the ``java`` that Spark starts (``JAVA_HOME/bin/java`` or ``java`` on ``PATH``: its real path, size
    and time) and of pyspark's jars (names, sizes, times); Java itself refuses an archive that does not match and
    starts without it.

    Args:
        environ: The environment (default ``os.environ``): :data:`CDS_ENV` names the folder (``off``: no archive),
            else ``$XDG_CACHE_HOME/goldeval/spark-cds`` or ``~/.cache/goldeval/spark-cds``.

    Returns:
        The archive's path (``…/spark-<hash>.jsa``, existing or not), or ``None``: turned off, no ``java`` found, no
        pyspark jars, or the folder cannot be made.
    """

    env = os.environ if environ is None else environ
    folder = env.get(CDS_ENV, "").strip()
    if folder.lower() in ("off", "0", "no", "false"):
        return None
    if not folder:
        cache = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        folder = os.path.join(cache, "goldeval", "spark-cds")
    java = os.path.join(env["JAVA_HOME"], "bin", "java") if env.get("JAVA_HOME") else shutil.which("java", path=env.get("PATH"))
    try:
        import pyspark  # optional heavy dependency: pyspark (extra spark)

        jars = os.path.join(os.path.dirname(pyspark.__file__), "jars")
        if java is None or not os.path.isdir(jars):
            return None
        real = os.path.realpath(java)
        st = os.stat(real)
        h = hashlib.sha256(f"{real}\0{st.st_size}\0{st.st_mtime_ns}\0{jars}".encode())
        with os.scandir(jars) as entries:
            for e in sorted(entries, key=lambda e: e.name):
                est = e.stat()
                h.update(f"\0{e.name}\0{est.st_size}\0{est.st_mtime_ns}".encode())
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return None
    return os.path.join(folder, f"spark-{h.hexdigest()[:20]}.jsa")


def _finish_archive_at_exit(spark: Any, dumping: str, archive: str) -> None:
    """At this process's exit: stop *spark*, let its JVM (started with ``-XX:ArchiveClassesAtExit=dumping``) exit and
    write the archive, then move it to *archive* (complete or not at all: a second process writing the same archive
    writes its own file, and the last move wins)."""
    try:  # the JVM this session started, and whether it was started with our flag (not an older gateway's JVM)
        proc = spark.sparkContext._gateway.proc
        flags = [str(x) for x in spark.sparkContext._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
                 .getInputArguments()]
    except Exception:  # (a pyspark without these: no archive; the next session tries again)
        return
    if proc is None or f"-XX:ArchiveClassesAtExit={dumping}" not in flags:
        return

    def finish() -> None:
        try:
            print("goldeval: writing Spark's class data archive for faster start-ups (once): "
                  f"{archive} ({CDS_ENV}=off for none)", file=sys.stderr, flush=True)
            spark.stop()
            proc.stdin.close()  # the gateway JVM exits on end of input, and writes the archive as it exits
            proc.wait(timeout=120)
            if proc.returncode == 0 and os.path.getsize(dumping) > 0:
                os.replace(dumping, archive)
        except Exception:  # (no archive this time: the next session writes one)
            with contextlib.suppress(Exception):
                proc.kill()  # a JVM that does not exit in two minutes: not waited for longer
        finally:
            with contextlib.suppress(OSError):
                os.remove(dumping)

    atexit.register(finish)


def user_spark_keys(environ: Mapping[str, str] | None = None) -> set[str]:
    """The Spark settings the user's own configuration names, outside goldeval: the keys of ``spark-defaults.conf``
    (in ``SPARK_CONF_DIR``, else ``SPARK_HOME/conf``) and of ``--conf KEY=VALUE`` in ``PYSPARK_SUBMIT_ARGS``, as
    Spark reads them (a ``spark-defaults.conf`` line is a key, then white space or ``=``; ``#`` starts a comment).

    Args:
        environ: The environment (default ``os.environ``).

    Returns:
        A set of keys, e.g. ``{"spark.driver.defaultJavaOptions"}``; empty when there is no such file or variable.
    """

    env = os.environ if environ is None else environ
    keys: set[str] = set()
    folder = env.get("SPARK_CONF_DIR") or (os.path.join(env["SPARK_HOME"], "conf") if env.get("SPARK_HOME") else None)
    if folder:
        try:
            with open(os.path.join(folder, "spark-defaults.conf"), encoding="utf-8", errors="replace") as fh:
                for text in fh:
                    text = text.strip()
                    if text and not text.startswith("#"):
                        keys.add(re.split(r"[\s=:]", text, maxsplit=1)[0])
        except OSError:
            pass
    args = env.get("PYSPARK_SUBMIT_ARGS", "").split()
    for flag, value in zip(args, args[1:]):
        if flag in ("--conf", "-c") and "=" in value:
            keys.add(value.split("=", 1)[0].strip("'\""))
    keys.update(a[len("--conf="):].split("=", 1)[0] for a in args if a.startswith("--conf=") and "=" in a[len("--conf="):])
    return keys


# ---------------------------------------------------------------------------------------------------------------
# reading


def read(spark: Any, path: str) -> Any:
    """A DataFrame of the rows of *path*, any path Spark reads (local, ``hdfs://``, ``s3a://``…).

    Parquet (a file or folder whose name ends in ``.parquet`` / ``.pq``): its columns, plus ``line``, the 1-based
    row index (in file order). Anything else is JSONL: ``line`` (1-based line number, blank lines counted and
    skipped) and ``_raw`` (the line's text), decoded by the scorer's partition as :func:`goldeval.io.reading.read_jsonl`
    decodes it (a line that is not a JSON object is an unscored row with its line number).

    Raises:
        InputError: the path does not exist or cannot be read.
    """

    try:
        if is_parquet(path.rstrip("/")):
            df = spark.read.parquet(path)
            cols = df.columns
            rdd = df.rdd.zipWithIndex().map(lambda ri: (*ri[0], ri[1] + 1))
            return rdd.toDF([*cols, "line"]) if cols else df
        lines = spark.sparkContext.textFile(path).zipWithIndex()
        rows = lines.filter(lambda li: li[0].strip() != "").map(lambda li: (li[1] + 1, li[0].lstrip("\ufeff") if li[1] == 0 else li[0]))
        return spark.createDataFrame(rows, "line long, _raw string")
    except InputError:
        raise
    except Exception as exc:
        failed = _executor_error(exc, f"reading {path}")  # a failure on an executor is not a path to check
        if failed is not None:
            raise failed from None
        name = type(exc).__name__
        text = str(exc).split("\n")[0][:300]
        raise InputError(f"{path}: Spark cannot read it ({name}: {text}). Check the path.") from None


# ---------------------------------------------------------------------------------------------------------------
# scoring


def _items(batch: Any, source: str, lenient: bool = False, path: str | None = None,
           id_field: str | None = None) -> Iterator[Any]:
    """The Row / RowError items of one Arrow batch (``line`` + the data columns, or ``line`` + ``_raw``), JSONL
    lines decoded as locally (:func:`_decode_line`; *id_field* as :func:`goldeval.io.reading.decode_line`'s)."""

    cols = batch.schema.names
    if "_raw" in cols:
        for line, raw in zip(batch.column("line").to_pylist(), batch.column("_raw").to_pylist()):
            yield _decode_line(line, raw, source, lenient, path, id_field)
        return
    names = [c for c in cols if c != "line"]
    lines = batch.column("line").to_pylist()
    data_cols = [batch.column(c).to_pylist() for c in names]

    for i, line in enumerate(lines):
        yield Row(line, {n: maps_as_dicts(col[i]) for n, col in zip(names, data_cols)})


def _record_columns(records: list[dict[str, Any]]) -> dict[str, list[Any]]:
    cols: dict[str, list[Any]] = {"id": [], "line": [], "status": [], "error": [], "score": [], "record": []}
    for rec in records:
        status, _verdict, num, reason, _raw = case_columns(rec)
        cols["id"].append(rec.get("id"))
        cols["line"].append(rec["line"])
        cols["status"].append(status)
        cols["error"].append(reason if status != "scored" else None)
        cols["score"].append(num)
        cols["record"].append(orjson.dumps(rec, option=orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS).decode())
    return cols


def _arrow_schema() -> Any:
    import pyarrow as pa  # optional heavy dependency: pyarrow (extras parquet, spark)

    return pa.schema([("id", pa.string()), ("line", pa.int64()), ("status", pa.string()), ("error", pa.string()),
                      ("score", pa.float64()), ("record", pa.string())])


def score(df: Any, scorer: str | Any = "token_f1", *, source: str = "rows", path: str | None = None, **options: Any) -> Any:
    """Score every row of *df* with *scorer*, on the executors: the per-case DataFrame (:data:`PER_CASE_SCHEMA`).

    Args:
        df: A Spark DataFrame, one row per case (see the module docstring for ``line`` and the columns).
        scorer: A scorer name (``token_f1``, ``labels``, an installed plug-in) or a :class:`~goldeval.scoring.protocol.Scorer`.
        source: The input's name in messages (``preds.jsonl`` gives ``preds.jsonl:4: ...``).
        path: The JSONL file *df* was read from (:func:`read`), when it is local: a line Spark read with U+FFFD
            in place of bytes that are not UTF-8 is read again from it (see :func:`_decode_line`).
        **options: The scorer's options (:meth:`~goldeval.scoring.protocol.Scorer.configure`).

    Returns:
        A lazy DataFrame: nothing runs until an action (``aggregate``, ``write``…).

    Raises:
        InputError: unknown scorer or option (before anything runs).
    """

    sc = scorer if isinstance(scorer, Scorer) else get_scorer(scorer)
    config = sc.configure(**options, source=source)
    if "line" not in df.columns:
        cols = df.columns
        df = df.rdd.zipWithIndex().map(lambda ri: (*ri[0], ri[1] + 1)).toDF([*cols, "line"])
    schema = _arrow_schema()
    local = _local_file(path) if path is not None else None

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa  # optional heavy dependency: pyarrow (extras parquet, spark)

        for batch in batches:
            records = list(sc.score_batch(_items(batch, source, sc.lenient_json, local), config))
            yield pa.RecordBatch.from_pydict(_record_columns(records), schema=schema)

    per_case = df.mapInArrow(run, PER_CASE_SCHEMA)
    return _with_repeats_marked(per_case, sc, config)


def _decode_line(line: int, raw: str, source: str, lenient: bool = False, path: str | None = None,
                 id_field: str | None = None) -> Any:
    """One JSONL line as a Row or a RowError, by :func:`goldeval.io.reading.decode_line`, the local readers' decoding: the
    same rows fail, with the same messages (NaN literals and lone surrogate escapes read or refused as the scorer's
    ``lenient_json`` says, integers past 64 bits kept as their digits where the local reader keeps them).

    Spark's Hadoop reader hands the line over as text, a byte that is not UTF-8 already replaced by U+FFFD. A line
    holding U+FFFD is therefore read again, as bytes, from *path* when the executor sees that file (a local path):
    a line that is not UTF-8 then fails with the local message (the byte and its column). On a file system the
    executor cannot open directly (``hdfs://``, ``s3a://``), Spark's replacement stands.
    """

    data = raw.encode("utf-8")
    if "\ufffd" in raw and path is not None:
        data = _raw_line(path, line) or data
    return decode_line(data, line, source, lenient=lenient, id_field=id_field)


def _local_file(path: str) -> str | None:
    """*path* as a local file name when it is one this process can read (no scheme, or ``file:``), else None."""

    u = urlparse(path)
    local = u.path if u.scheme == "file" else (path if not u.scheme or len(u.scheme) == 1 else None)
    return local if local is not None and os.path.isfile(local) else None


def _raw_line(path: str, line: int) -> bytes | None:
    """The bytes of line *line* (1-based) of the local file *path* (a byte order mark on line 1 removed)."""

    with open(path, "rb") as fh:
        raw = next(itertools.islice(fh, line - 1, None), None)
    if raw is not None and line == 1 and raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    return raw


def score_path(spark: Any, path: str, scorer: str | Any = "token_f1", *, source: str | None = None, **options: Any) -> Any:
    """:func:`score` of the rows of *path* (any path Spark reads), read the cheapest way: a JSONL file's lines go
    once to the Python workers (``textFile`` + ``zipWithIndex`` for the line numbers) and are scored there; a
    Parquet path goes through :func:`read` and :func:`score`. ``source`` defaults to the path's base name.

    Returns:
        The per-case DataFrame (:data:`PER_CASE_SCHEMA`), persisted (memory and disk): aggregating and recording
        it do not score twice.
    """

    source = source or os.path.basename(path.rstrip("/"))
    if is_parquet(path.rstrip("/")):
        return score(read(spark, path), scorer, source=source, **options)
    sc = scorer if isinstance(scorer, Scorer) else get_scorer(scorer)
    config = sc.configure(**options, source=source)
    lenient, local = sc.lenient_json, _local_file(path)
    try:
        lines = spark.sparkContext.textFile(path).zipWithIndex()
    except Exception as exc:
        failed = _executor_error(exc, f"reading {path}")  # a failure on an executor is not a path to check
        if failed is not None:
            raise failed from None
        raise InputError(f"{path}: Spark cannot read it ({type(exc).__name__}: {str(exc).splitlines()[0][:300]}). Check the path.") from None

    def run(pairs: Iterator[tuple[str, int]]) -> Iterator[tuple]:
        def items() -> Iterator[Any]:
            for text, index in pairs:
                if index == 0:
                    text = text.lstrip("\ufeff")
                if text.strip():
                    yield _decode_line(index + 1, text, source, lenient, local)

        dumps = orjson.dumps
        for rec in sc.score_batch(items(), config):
            status, _verdict, num, reason, _raw = case_columns(rec)
            yield (rec.get("id"), rec["line"], status, reason if status != "scored" else None, num,
                   dumps(rec, option=orjson.OPT_NON_STR_KEYS).decode())

    per_case = spark.createDataFrame(lines.mapPartitions(run), PER_CASE_SCHEMA)
    return _with_repeats_marked(per_case, sc, config)


#: About how many bytes of the input one :func:`fold_path` task reads (a range ends at the end of a line).
FOLD_RANGE_BYTES = 32 << 20
_BOM = b"\xef\xbb\xbf"


def foldable(spark: Any, path: str) -> bool:
    """Whether :func:`fold_path` can score *path* on *spark*: a plain JSONL file on this machine (not Parquet, not
    compressed, no UTF-16/32 byte order mark) and a ``local[...]`` master, whose executors open the file by its name.

    Args:
        spark: The SparkSession, or the master it is (to be) started with (a ``str``: known before the session is).
        path: The input, as given to :func:`score_path`.

    Returns:
        ``True`` or ``False``; never raises for a path that is not a local file (``False``).
    """

    master = spark if isinstance(spark, str) else str(spark.sparkContext.master)
    local = _local_file(path)
    if local is None or is_parquet(path.rstrip("/")) or not master.startswith("local"):
        return False
    try:
        with open(local, "rb") as fh:
            head = fh.read(16)
    except OSError:  # unreadable here: score_path's reading says why
        return False
    return bool(head) and compression_of(head) is None and encoding_of(head) is None


class FoldPlan(NamedTuple):
    """What :func:`fold_plan` learns of a file in one read on the driver, before any Spark job."""

    ranges: list[tuple[int, int, int]]  #: ``(start, end, first line)`` byte ranges of whole lines (:func:`line_ranges`)
    repeated: bool  #: some id's hash is on two rows or more (an id may repeat): the file goes through :func:`score_path`
    #: the file's :func:`goldeval.io.reading.file_memo_key` as read (``None``: not known); :func:`fold_path` refuses a
    #: file whose identity changed since, so that the tasks' bytes are those hashed
    identity: tuple[str, int, int, int, int] | None = None


def master_cores(master: str) -> int:
    """The cores a ``local`` master's executors have (``local`` 1, ``local[4]`` / ``local[4,2]`` 4, ``local[*]`` this
    machine's; ``local-cluster[2,1,1024]`` 2 workers x 1 core), else this machine's core count.

    Example: ``master_cores("local[2]")`` is 2.
    """

    m = re.fullmatch(r"local(?:\[(\d+|\*)(?:,\d+)?\])?", master.strip())
    if m is not None:
        return 1 if m.group(1) is None else (os.cpu_count() or 1) if m.group(1) == "*" else max(1, int(m.group(1)))
    m = re.fullmatch(r"local-cluster\[(\d+),\s*(\d+),\s*\d+\]", master.strip())
    if m is not None:
        return max(1, int(m.group(1)) * int(m.group(2)))
    return os.cpu_count() or 1


def fold_plan(path: str, scorer: str | Any = "token_f1", *, cores: int, source: str | None = None, hasher: Any = None,
              range_bytes: int = FOLD_RANGE_BYTES, cancel: Any = None, **options: Any) -> FoldPlan:
    """The driver's part of :func:`fold_path`, before any Spark job, in one read of *path*: its byte ranges (about
    *range_bytes* each, a multiple of *cores* of them, so that the last wave of tasks keeps every core busy), its
    sha256 (*hasher*) and whether an id may repeat, found as the local engine's first pass finds it
    (:func:`goldeval.io.ids.scan_jsonl_ids` with the scorer's id rule: the same rows' ids, the same lines read by
    the local reader where the fast rule does not take them). Needs no Spark session: :mod:`goldeval.pipeline.spark`
    runs it while the session starts.

    Args:
        path: A plain JSONL file on this machine. scorer: A scorer name or a :class:`~goldeval.scoring.protocol.Scorer`.
        cores: The session's cores (:func:`master_cores`). source: The input's name in messages.
        hasher: A ``hashlib`` object fed every byte of the file, in order. range_bytes: About how many bytes a task reads.
        cancel: A ``threading.Event``: once set, the read stops at its next block (a caller that no longer needs
            the plan, e.g. interrupted while the session started, does not wait for the whole file).
        **options: The scorer's options (its ``id_field``, when it has one, names the id).

    Returns:
        A :class:`FoldPlan`.

    Raises:
        InputError: an unknown scorer or option; *cancel* was set. OSError: the file cannot be read.
    """

    sc = scorer if isinstance(scorer, Scorer) else get_scorer(scorer)
    config = sc.configure(**options, source=source or os.path.basename(path.rstrip("/")))
    src, lenient = config.get("source") or "rows", sc.lenient_json
    identity = file_memo_key(path)
    size = identity[3]
    per = max(1, cores)
    tasks = max(1, -(-size // max(1, range_bytes)))
    n = per * -(-tasks // per)
    cutter = _Cutter(size, n, hasher, cancel)

    def slow(line: int, raw: bytes) -> Any:  # (what the scoring reads of a line the fast rule leaves: NaN, big ints)
        item = decode_line(raw, line, src, lenient=lenient)
        return item.data if type(item) is Row else None

    _, _, repeated = scan_jsonl_ids(path, config.get("id_field") or "id", sc.id_of, hasher=cutter, slow_decode=slow,
                                    ids_as_text=sc.ids_as_text)
    if file_memo_key(path) != identity:
        raise InputError(f"{src}: the file changed while it was read. Score a file that is not being written.")
    return FoldPlan(cutter.ranges(), bool(repeated), identity)


def fold_path(spark: Any, path: str, scorer: str | Any = "token_f1", *, source: str | None = None, hasher: Any = None,
              range_bytes: int = FOLD_RANGE_BYTES, plan: FoldPlan | None = None, **options: Any) -> dict[str, Any]:
    """The results of :func:`aggregate` over :func:`score_path` of *path*, to the last digit, without a per-case
    DataFrame: for a run that keeps no case (no store, no ``--per-case``).

    The driver reads the file once (:func:`fold_plan`, or *plan* when the caller made it already, e.g. while the
    session started): its byte ranges of whole lines, its sha256 (*hasher*) and whether an id may repeat. If one
    may, the file is scored by :func:`score_path`, whose rows mark each repeat as unscored as the local engine
    does, and that aggregate is returned. Otherwise one Spark task a range (plain RDD tasks: no DataFrame plan, no
    Arrow) reads it and scores it as a local worker does (:func:`goldeval.engines.local.kernel_records`: token F1's
    compiled line kernel where the scorer has one, else the local reader and ``score_batch``: the same rows fail with
    the same messages and line numbers), folding the records into the scorer's
    :class:`~goldeval.scoring.protocol.Partial` as they come; one pickled partial a task comes back, and the driver
    merges them in line order.

    Args:
        spark: A session whose master is ``local[...]`` (see :func:`foldable`).
        path: A plain JSONL file on this machine.
        scorer: A scorer name or a :class:`~goldeval.scoring.protocol.Scorer` (a sliced one folds its slices).
        source: The input's name in messages (default: the path's base name).
        hasher: A ``hashlib`` object fed every byte of the file, in order (e.g. ``hashlib.sha256()``); not used
            with *plan* (whose read fed it).
        range_bytes: About how many bytes a task reads (not used with *plan*).
        plan: What :func:`fold_plan` gave for this file, scorer and options.
        **options: The scorer's options (:meth:`~goldeval.scoring.protocol.Scorer.configure`).

    Returns:
        The scorer's results without ``per_example``, plus ``engine``: ``{"name": "spark", "partitions"}`` (the
        number of tasks), as :func:`aggregate` gives them.

    Raises:
        InputError: *path* is not :func:`foldable`; an unknown scorer or option.
    """

    if not foldable(spark, path):
        raise InputError(f"{path}: fold_path reads a plain JSONL file on this machine with a local[...] master; "
                         "use aggregate(score_path(...)) for any other path or master.")
    source = source or os.path.basename(path.rstrip("/"))
    sc = scorer if isinstance(scorer, Scorer) else get_scorer(scorer)
    config = sc.configure(**options, source=source)
    local = str(_local_file(path))
    if plan is None:
        plan = fold_plan(local, sc, cores=int(spark.sparkContext.defaultParallelism), hasher=hasher,
                         range_bytes=range_bytes, **config)
    if plan.repeated:  # an id on two rows: the rows that repeat it are unscored, as locally
        return aggregate(score_path(spark, path, sc, **config), scorer=sc, config=config)
    ranges = plan.ranges

    def run(task: tuple[int, int, int]) -> tuple[int, bytes]:
        start, end, line = task
        return line, pickle.dumps(_fold_range(sc, config, local, start, end, line)[0], protocol=5)

    with executor_failures(f"scoring {path}"):
        states = spark.sparkContext.parallelize(ranges, max(1, len(ranges))).map(run).collect()
    if plan.identity is not None and file_memo_key(local) != plan.identity:
        # (the tasks read the file again after the plan hashed it: a rewrite of the same size scores other bytes)
        raise InputError(f"{source}: the file changed while it was scored. Score a file that is not being written.")
    total = sc.new_partial(config, keep_cases=False)
    for _, state in sorted(states, key=lambda s: s[0]):
        total.merge(pickle.loads(state))
    results = sc.finish(total, config)
    results.pop("per_example", None)
    results["engine"] = {"name": "spark", "partitions": len(ranges)}
    return results


def line_ranges(path: str, n: int, *, hasher: Any = None) -> list[tuple[int, int, int]]:
    """*path* cut into at most *n* byte ranges of whole lines, in one read.

    Args:
        path: A file. n: How many ranges to aim for (about equal in bytes; fewer when the file has fewer lines).
        hasher: A ``hashlib`` object fed every byte read, in order.

    Returns:
        ``[(start, end, first line number), ...]``: byte offsets (``end`` exclusive) and the 1-based number of the
        range's first line; together they cover the file. ``[]`` for an empty file.

    Example: a file ``b"a\nb\nc\n"`` cut in 2 gives ``[(0, 4, 1), (4, 6, 3)]``.
    """

    cutter = _Cutter(os.path.getsize(path), n, hasher)
    with open(path, "rb") as fh:
        while True:
            block = fh.read(1 << 20)
            if not block:
                break
            cutter.update(block)
    return cutter.ranges()


class _Cutter:
    """Cuts a file of *size* bytes into at most *n* ranges of whole lines from its bytes, fed in order in blocks of
    any length (``update``, as a ``hashlib`` object is fed: it also feeds *hasher*)."""

    def __init__(self, size: int, n: int, hasher: Any = None, cancel: Any = None) -> None:
        self.size, self.hasher, self.cancel = size, hasher, cancel
        self.targets = [size * k // max(1, n) for k in range(1, max(1, n))]
        self.cuts: list[tuple[int, int]] = [(0, 1)]  # (offset of a line's start, its line number)
        self.off = self.newlines = self.t = 0

    def update(self, block: bytes) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise InputError("the driver's read of the input was cancelled.")
        if self.hasher is not None:
            self.hasher.update(block)
        off, targets, cuts = self.off, self.targets, self.cuts
        end = off + len(block)
        while self.t < len(targets) and targets[self.t] <= end:
            at = max(targets[self.t] - 1 - off, 0)  # a range starts after the first newline at or after target - 1
            nl = block.find(b"\n", at)
            if nl < 0:
                targets[self.t] = end + 1  # no line ends here: the next block's first newline
                break
            cut = off + nl + 1
            if cut > cuts[-1][0] and cut < self.size:
                cuts.append((cut, self.newlines + block.count(b"\n", 0, nl + 1) + 1))
            self.t += 1
        self.newlines += block.count(b"\n")
        self.off = end

    def ranges(self) -> list[tuple[int, int, int]]:
        if self.size == 0:
            return []
        cuts = self.cuts
        return [(start, nxt, line) for (start, line), (nxt, _) in zip(cuts, [*cuts[1:], (self.size, 0)], strict=True)]


def _fold_range(sc: Any, config: Mapping[str, Any], path: str, start: int, end: int, line: int) -> tuple[Any, int]:
    """Score the lines of *path* in ``[start, end)`` (the first numbered *line*), folded: ``(partial, rows)``."""

    src = config.get("source") or "rows"
    lenient = sc.lenient_json
    make = None if isinstance(sc, SlicedScorer) else getattr(sc, "line_kernel", None)
    kernel = make(config) if make is not None else None
    if kernel is not None:
        return _fold_range_kernel(sc, config, kernel, path, start, end, line)

    def items() -> Iterator[Any]:
        lineno, pos = line, start
        with open(path, "rb") as fh:
            fh.seek(start)
            for raw in fh:
                if pos >= end:
                    break
                pos += len(raw)
                if lineno == 1 and raw.startswith(_BOM):
                    raw = raw[3:]
                if raw.strip():
                    yield decode_line(raw, lineno, src, lenient=lenient)
                lineno += 1

    part = sc.new_partial(config, keep_cases=False)
    add = part.add
    n = 0
    for rec in sc.score_batch(items(), config):
        n += 1
        add(rec)
    return part, n


def _fold_range_kernel(sc: Any, config: Mapping[str, Any], kernel: Any, path: str, start: int, end: int,
                       line: int) -> tuple[Any, int]:
    """:func:`_fold_range` where the scorer has a compiled line kernel (token F1 under ``openscribe``): the range is
    read in one call and scored as a local worker scores its range (:func:`goldeval.engines.local.kernel_records`:
    the plain rows in C, folded with the partial's ``add_lines``; any other line through ``score_batch``). The same
    partial and row count."""
    with open(path, "rb") as fh:
        fh.seek(start)
        block = fh.read(end - start)
    if line == 1 and block.startswith(_BOM):
        block = block[3:]
    part = sc.new_partial(config, keep_cases=False)
    n = 0
    for rec in kernel_records(sc, config, (block, line), kernel, 0):
        if rec.__class__ is Stretch:
            part.add_lines(rec.n, rec.sums)
            n += rec.n
        else:
            n += 1
            part.add(rec)
    return part, n


def _with_repeats_marked(per_case: Any, sc: Any, config: Mapping[str, Any]) -> Any:
    """*per_case* (persisted) with every row whose id repeats an earlier line's turned unscored, with the local
    message; the scorer and its config in the ``record`` column's metadata."""
    from pyspark import StorageLevel  # optional heavy dependency: pyspark (extra spark)
    from pyspark.sql import functions as F  # optional heavy dependency: pyspark (extra spark)


    source = config.get("source") or "rows"
    schema = _arrow_schema()
    per_case = per_case.persist(StorageLevel.MEMORY_AND_DISK)
    # ids repeated across batches and partitions: the first line keeps the id, every later row is unscored. The
    # repeated ids (usually none) come to the driver, never the cases; without any, the cases pass unchanged.
    repeats = {r["id"]: r["_first"] for r in
               per_case.where(F.col("id").isNotNull()).groupBy("id").agg(F.min("line").alias("_first"), F.count("*").alias("_n"))
               .where(F.col("_n") > 1).select("id", "_first").toLocalIterator()}
    marked = per_case
    if repeats:
        firsts = per_case.sparkSession.sparkContext.broadcast(repeats)

        def mark(batches: Iterator[Any]) -> Iterator[Any]:
            import pyarrow as pa  # optional heavy dependency: pyarrow (extras parquet, spark)

            first_of = firsts.value
            for batch in batches:
                d = batch.to_pydict()
                for i, rid in enumerate(d["id"]):
                    first = first_of.get(rid) if rid is not None else None
                    if first is not None and d["line"][i] != first:
                        line = d["line"][i]
                        err = duplicate_error(source, line, rid, first)
                        rec = {"id": rid, "line": line, "status": "unscored", "duplicate_of": first, "error": err}
                        own = orjson.loads(d["record"][i]) if d["record"][i] else {}
                        if SLICE_KEY in own:  # (a sliced run counts it, unscored, in its slice as in the whole)
                            rec[SLICE_KEY] = own[SLICE_KEY]
                        d["status"][i], d["error"][i], d["score"][i] = "unscored", err, None
                        d["record"][i] = orjson.dumps(rec).decode()
                yield pa.RecordBatch.from_pydict(d, schema=schema)

        marked = per_case.mapInArrow(mark, PER_CASE_SCHEMA).persist(StorageLevel.MEMORY_AND_DISK)
    meta = {_META_KEY: {"scorer": sc.name, "version": sc.version, "config": dict(config)}}
    if isinstance(sc, SlicedScorer):  # aggregate() then slices as the scoring did
        meta[_META_KEY]["slice_by"] = sc.slice_by
    return marked.withColumn("record", F.col("record").alias("record", metadata=meta))


def with_run(per_case_df: Any, run_id: str) -> Any:
    """*per_case_df* with the id of the run it was recorded as in its ``record`` column's metadata (``"run"``), so
    that its Parquet names that run and ``goldeval runs import`` of it into the same store recognises the run
    instead of recording the same cases a second time.

    Args:
        per_case_df: A per-case DataFrame from :func:`score` / :func:`score_path` (its metadata names the scorer).
        run_id: The run the cases were recorded as.

    Returns:
        The same rows; only the column's metadata changes.

    Raises:
        InputError: the DataFrame carries no goldeval metadata.
    """
    from pyspark.sql import functions as F  # optional heavy dependency: pyspark (extra spark)

    meta = {_META_KEY: {**_meta(per_case_df), "run": run_id}}
    return per_case_df.withColumn("record", F.col("record").alias("record", metadata=meta))


def _meta(per_case_df: Any) -> dict[str, Any]:
    try:
        meta = per_case_df.schema["record"].metadata.get(_META_KEY)
    except (KeyError, AttributeError):
        meta = None
    if not isinstance(meta, dict) or "scorer" not in meta:
        raise InputError("per-case DataFrame: its 'record' column carries no goldeval metadata (scorer and config). "
                         "Pass the DataFrame goldeval.engines.spark.score returned (or read back from its Parquet), or give "
                         "scorer= and config= to aggregate.")
    return meta


def aggregate(per_case_df: Any, *, scorer: str | Any | None = None, config: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The results dict of a per-case DataFrame, exactly as the local run gives it (see the module docstring).

    Args:
        per_case_df: What :func:`score` returned (or its Parquet, read back).
        scorer, config: Override the scorer and configuration the DataFrame's metadata names.

    Returns:
        The scorer's results (``scorer``, ``config``, ``aggregate``, ``failures``…) without ``per_example`` (the
        cases stay in the DataFrame), plus ``engine``: ``{"name": "spark", "partitions"}``.

    Raises:
        InputError: no metadata and no *scorer* / *config*; a record that is not the scorer's.
    """

    meta = _meta(per_case_df) if scorer is None or config is None else {}
    sc = scorer if isinstance(scorer, Scorer) else get_scorer(scorer or meta["scorer"])
    if scorer is None and meta.get("slice_by"):
        sc = sliced(sc, meta["slice_by"])  # scored with --slice-by: the slices are aggregated again
    cfg = dict(config if config is not None else meta["config"])

    def fold(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa  # optional heavy dependency: pyarrow (extras parquet, spark)

        part = sc.new_partial(cfg, keep_cases=False)
        first = None
        for batch in batches:
            for raw in batch.column("record").to_pylist():
                rec = orjson.loads(raw)
                part.add(rec)
                line = rec.get("line")
                if line is not None and (first is None or line < first):
                    first = line
        yield pa.RecordBatch.from_pydict({"first_line": [first], "state": [pickle.dumps(part, protocol=5)]},
                                         schema=pa.schema([("first_line", pa.int64()), ("state", pa.binary())]))

    states = per_case_df.select("record").mapInArrow(fold, "first_line long, state binary").collect()
    parts = sorted(((r["first_line"], pickle.loads(r["state"])) for r in states), key=lambda fp: (fp[0] is None, fp[0] or 0))
    total = sc.new_partial(cfg, keep_cases=False)
    for _, p in parts:
        total.merge(p)
    results = sc.finish(total, cfg)
    results.pop("per_example", None)
    results["engine"] = {"name": "spark", "partitions": len(states)}
    return results


def iter_records(per_case_df: Any) -> Iterator[dict[str, Any]]:
    """The per-case records, partition by partition (``toLocalIterator``: the driver holds one partition at a
    time, never all rows): what the CLI records into the run store."""
    for row in per_case_df.select("record").toLocalIterator():
        rec = orjson.loads(row["record"])
        rec.pop("_llm_materials", None)  # what the LLM stage needs, not what the store keeps (goldeval.engines.spark_judge)
        yield rec
