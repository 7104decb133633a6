"""The data-answer judge on Spark: cases and attempts joined by id, the rules per partition, the LLM on the driver.

    from goldeval.engines import spark_judge
    cases = spark_judge.judge(spark, "cases.jsonl", "attempts.jsonl", db="clinic.sqlite")   # per-case DataFrame
    results = goldeval.engines.spark.aggregate(cases)                                                # pass-rate accounting

**Join.** Each file is read with :func:`goldeval.engines.spark.read` (JSONL by line, or Parquet) and decoded on the
executors into ``(id, line, json)``, the row kept whole as JSON text (a golden's rows mix types: no Spark schema
could hold them). A row that is not JSON, has no usable id, or repeats an id (found across partitions with one
``groupBy``) is a row failure with the message the local judge gives; an attempt with no case too. Cases are
joined to attempts by id (one row per case, left outer): the golden and the attempt travel as JSON text columns.

**Rules.** :class:`goldeval.answers.scorer.AnswerJudge` judges each partition. The database file is shipped to
the executors with ``SparkContext.addFile`` and opened there read-only (``ReadOnlyDatabase``, as locally: writes,
ATTACH and PRAGMA changes refused). A case the rules leave ``needs_human`` carries its LLM materials in its record
(``_llm_materials``, removed before anything is stored), so the LLM stage needs no second pass over the files.

**LLM stage** (:func:`llm_stage`): on the driver, only the undecided cases are gathered
(``toLocalIterator`` over the filtered DataFrame) and sent through :func:`goldeval.llm.judge_cases` with the
local cache, concurrency and spend options; the aggregate is the Spark partial state adjusted case by case for the
new verdicts (the one pass-rate accounting).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import orjson

from goldeval.answers.config import MATERIALS_KEY
from goldeval.engines import spark as gs
from goldeval.errors import InputError, given
from goldeval.io.reading import RowError
from goldeval.llm import JudgeCache, judge_cases
from goldeval.llm.wiring import from_answer_materials, merge_llm
from goldeval.scoring.protocol import SLICE_KEY, duplicate_error
from goldeval.scoring.registry import get_scorer
from goldeval.scoring.slices import sliced
from goldeval.verdict import pass_rate_class
from goldeval.llm.options import judge_config

__all__ = ["read_keyed", "judge", "row_failures", "llm_stage", "MATERIALS_KEY"]

_KEYED = "id string, line long, json string, error string"


def read_keyed(spark: Any, path: str) -> Any:
    """*path*'s rows as ``(id, line, json, error)``: ``error`` is set (and ``json`` null) for a row that is not a
    JSON object, has no usable id, or repeats an earlier row's id — with the local judge's message."""
    from pyspark.sql import functions as F  # optional heavy dependency: pyspark (extra spark)


    name = os.path.basename(path.rstrip("/"))
    df = gs.read(spark, path)
    local = gs._local_file(path)

    def decode(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa  # optional heavy dependency: pyarrow (extras parquet, spark)


        for batch in batches:
            out: dict[str, list[Any]] = {"id": [], "line": [], "json": [], "error": []}
            for item in gs._items(batch, name, False, local, "id"):
                rid, text, error = None, None, None
                if type(item) is RowError:
                    rid, error = item.id, item.error  # the id of a line refused for a NaN (io.decode_line's id_field)
                else:
                    raw = item.data.get("id")
                    if isinstance(raw, bool) or not isinstance(raw, (str, int)) or raw == "":
                        what = given(item.data, "id")  # the local message's wording (io.check_ids)
                        error = f"{name}:{item.line}: field 'id' must be a non-empty string, {what}. Give every row a stable id."
                    else:
                        rid, text = str(raw), orjson.dumps(item.data, option=orjson.OPT_NON_STR_KEYS).decode()
                out["id"].append(rid)
                out["line"].append(item.line)
                out["json"].append(text)
                out["error"].append(error)
            yield pa.RecordBatch.from_pydict(out, schema=pa.schema([("id", pa.string()), ("line", pa.int64()),
                                                                    ("json", pa.string()), ("error", pa.string())]))

    keyed = df.mapInArrow(decode, _KEYED)
    # A refused row keeps its id for its message only: as locally (io.check_ids), it neither repeats nor is repeated.
    repeats = (keyed.where(F.col("id").isNotNull() & F.col("error").isNull()).groupBy("id").agg(F.min("line").alias("_first"), F.count("*").alias("_n"))
               .where(F.col("_n") > 1).select("id", "_first"))
    dup_message = F.udf(lambda line, rid, first: duplicate_error(name, line, rid, first), "string")
    joined = keyed.join(F.broadcast(repeats), on="id", how="left")
    is_dup = F.col("_first").isNotNull() & (F.col("line") != F.col("_first")) & F.col("error").isNull()
    return joined.select(
        "id", "line",
        F.when(is_dup, F.lit(None).cast("string")).otherwise(F.col("json")).alias("json"),
        F.when(is_dup, dup_message("line", "id", "_first")).otherwise(F.col("error")).alias("error"),
    )


def row_failures(cases_keyed: Any, attempts_keyed: Any, cases_name: str, attempts_name: str) -> list[dict[str, Any]]:
    """The row failures of both files, in the local judge's order (the case file's by line, the attempt file's by
    line, then the attempts with no case, by line): ``[{"line", "id", "error", "file"}]``. Only failing rows come
    to the driver."""
    from pyspark.sql import functions as F  # optional heavy dependency: pyspark (extra spark)

    bad_cases = [r.asDict() for r in cases_keyed.where(F.col("error").isNotNull()).select("line", "id", "error").orderBy("line").collect()]
    bad_attempts = [r.asDict() for r in attempts_keyed.where(F.col("error").isNotNull()).select("line", "id", "error").orderBy("line").collect()]
    good_cases = cases_keyed.where(F.col("error").isNull()).select("id")
    orphans = (attempts_keyed.where(F.col("error").isNull()).join(good_cases, on="id", how="left_anti")
               .select("line", "id").orderBy("line").collect())
    out = [{**r, "file": cases_name} for r in bad_cases] + [{**r, "file": attempts_name} for r in bad_attempts]
    out += [{"line": r["line"], "id": r["id"], "error": f"{attempts_name}:{r['line']}: attempt {r['id']!r} has no case in {cases_name}.",
             "file": attempts_name} for r in orphans]
    return out


def judge(spark: Any, cases_path: str, attempts_path: str, *, db: str | None = None, timeout_s: float = 5.0,
          max_rows: int = 1_000_000, check_canonical: bool = True, keep_materials: bool = False,
          max_result_bytes: int = 256_000_000, slice_by: str | None = None) -> tuple[Any, list[dict[str, Any]]]:
    """Judge *cases_path* against *attempts_path* on Spark by rule.

    Args:
        spark: The SparkSession.
        cases_path, attempts_path: Any path Spark reads (JSONL or Parquet).
        db: A SQLite / DuckDB file on the driver: shipped to the executors, opened there read-only.
        timeout_s, max_rows, check_canonical: As ``goldeval judge``.
        max_result_bytes: Size limit per query, bytes (``goldeval judge --max-result-mb``).
        keep_materials: Keep the LLM materials of needs_human cases in their records (for :func:`llm_stage`).
        slice_by: A case field: each record gets its ``slice`` and :func:`goldeval.engines.spark.aggregate` gives
            ``slices`` (the slice field is in the DataFrame's metadata).

    Returns:
        ``(per-case DataFrame, row failures)``: the DataFrame as :func:`goldeval.engines.spark.score` returns it (one row per
        valid case, the verdict record as JSON; scorer ``answer_judge`` and its config in the metadata), the
        failures as :func:`row_failures` gives them.

    Raises:
        InputError: a missing database file.
    """
    from pyspark import SparkFiles  # optional heavy dependency: pyspark (extra spark)
    from pyspark.sql import functions as F  # optional heavy dependency: pyspark (extra spark)


    cname, aname = os.path.basename(cases_path.rstrip("/")), os.path.basename(attempts_path.rstrip("/"))
    url = db is not None and "://" in db  # a database server (PostgreSQL): the executors connect to it themselves
    if db is not None and not url and not os.path.isfile(db):
        raise InputError(f"--db {db}: no such file. Check the path.")
    scorer = get_scorer("answer_judge")
    if slice_by is not None:
        scorer = sliced(scorer, slice_by)
    config = scorer.configure(db=db, timeout_s=timeout_s, max_rows=max_rows, check_canonical=check_canonical,
                              max_result_bytes=max_result_bytes, cases_name=cname, attempts_name=aname)
    db_name = None
    if db is not None and not url:
        spark.sparkContext.addFile(os.path.abspath(db))
        db_name = os.path.basename(db)
    ck, ak = read_keyed(spark, cases_path).cache(), read_keyed(spark, attempts_path).cache()
    failures = row_failures(ck, ak, cname, aname)
    attempt_errors = {f["id"]: f["error"] for f in failures if f.get("id") and f["file"] == aname}
    cases = ck.where(F.col("error").isNull()).select("id", F.col("line").alias("case_line"), F.col("json").alias("case"))
    atts = ak.where(F.col("error").isNull()).select("id", F.col("line").alias("attempt_line"), F.col("json").alias("attempt"))
    joined = cases.join(atts, on="id", how="left")
    schema = gs._arrow_schema()

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa  # optional heavy dependency: pyarrow (extras parquet, spark)

        local = dict(config)
        if db_name is not None:
            local["db"] = SparkFiles.get(db_name)  # the shipped copy, opened read-only
        for batch in batches:
            d = batch.to_pydict()
            rows = []
            for i, cid in enumerate(d["id"]):
                att = d["attempt"][i]
                rows.append({"id": cid, "case": orjson.loads(d["case"][i]), "case_line": d["case_line"][i],
                             "attempt": orjson.loads(att) if att is not None else None, "attempt_line": d["attempt_line"][i],
                             "attempt_error": attempt_errors.get(cid) if att is None else None})
            records = list(scorer.score_batch(rows, {**local, "keep_materials": keep_materials}))
            yield pa.RecordBatch.from_pydict(gs._record_columns(records), schema=schema)

    per_case = joined.mapInArrow(run, gs.PER_CASE_SCHEMA)
    meta = {gs._META_KEY: {"scorer": scorer.name, "version": scorer.version, "config": config,
                           **({"slice_by": slice_by} if slice_by is not None else {})}}
    return per_case.withColumn("record", F.col("record").alias("record", metadata=meta)), failures


def _slice_list(names: Any) -> list[str]:
    return [names] if isinstance(names, str) else list(names or [])


def _recount(agg: dict[str, Any], moves: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
    """Move each case of *moves* (its rule record, its merged record) from its rule verdict's pass-rate class to
    its merged one in *agg*, and derive ``decided`` and ``pass_rate`` again (undefined when nothing is decided)."""
    counts = {k: agg[k] for k in ("match", "no_match", "near_match", "needs_human", "unscored", "verified_wrong")}
    for old, new in moves:
        counts[pass_rate_class(old)] -= 1
        counts[pass_rate_class(new)] += 1
    decided = counts["match"] + counts["no_match"]
    agg.update(counts)
    agg["decided"] = decided
    agg["pass_rate"] = counts["match"] / decided if decided else 0.0
    if decided:
        agg["undefined"].pop("pass_rate", None)
    else:
        agg["undefined"]["pass_rate"] = "no case was decided match or no_match"


def llm_stage(per_case: Any, rule_results: dict[str, Any], opts: Any, *, attempts_path: str | None = None) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """Send the cases the rules left undecided to the LLM judge, on the driver; merge the verdicts.

    Args:
        per_case: The DataFrame :func:`judge` returned with ``keep_materials=True``.
        rule_results: :func:`goldeval.engines.spark.aggregate` of it (the rule verdicts' accounting), changed in place.
        opts: The LLM options (:class:`goldeval.llm.options.LlmOptions`): model, endpoint, cache, repeat,
            concurrency, prices, ``--llm-send``.
        attempts_path: Unused (the attempt's model is in the materials); kept for symmetry with the local stage.

    Returns:
        ``(results, merged)``: the results with the merged accounting (``aggregate["llm_judge"]`` as locally) and
        the merged per-case records of the cases sent, by id (what the store records over the rule records).

    Raises:
        InputError / JudgeError: as the local LLM stage (bad option, endpoint refuses).
    """
    from pyspark.sql import functions as F  # optional heavy dependency: pyspark (extra spark)


    if opts.send == "all":
        raise InputError("--llm-send all with --engine spark: not supported (only the undecided cases go to the "
                         "LLM on Spark). Drop --llm-send all, or judge locally.")
    config = judge_config(opts)
    undecided = per_case.where(F.col("record").contains(f'"{MATERIALS_KEY}"')).select("record")
    records: dict[str, dict[str, Any]] = {}
    materials = []
    for row in undecided.toLocalIterator():
        rec = orjson.loads(row["record"])
        m = rec.pop(MATERIALS_KEY, None)
        if m is None:
            continue
        records[str(rec["id"])] = rec
        model = m.pop("_answer_model", None)
        materials.append(from_answer_materials(m, answer_model=model))
    cache = JudgeCache() if opts.cache else None
    try:
        llm_results = judge_cases(materials, config=config, cache=cache, repeat=opts.repeat, dry_run=opts.dry_run,
                                  send=opts.send, refresh=opts.refresh)
    finally:
        if cache is not None:
            cache.close()
    if opts.dry_run:
        rule_results["llm_dry_run"] = llm_results
        return rule_results, {}
    sub: dict[str, Any] = {"per_example": list(records.values()), "aggregate": {}}
    merge_llm(sub, llm_results)
    merged = {str(r["id"]): r for r in sub["per_example"]}
    agg = rule_results["aggregate"]
    moves = [(records[cid], new) for cid, new in merged.items()]
    _recount(agg, moves)
    slices = rule_results.get("slices")
    if isinstance(slices, dict):  # (--slice-by) each slice counts the LLM's verdicts of its cases as the whole does
        for name, sagg in slices.items():
            if "error" not in sagg:
                _recount(sagg, [(old, new) for old, new in moves if name in _slice_list(old.get(SLICE_KEY))])
    agg["llm_judge"] = sub["aggregate"].get("llm_judge")
    rule_results["llm_judge"] = sub.get("llm_judge")
    return rule_results, merged
