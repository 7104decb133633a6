"""``goldeval runs import PER_CASE.parquet``: a Spark run's per-case output into the run store, idempotently.

The per-case Parquet (a file, or the folder Spark writes) is what :func:`goldeval.engines.spark.score` returns, written out:
columns ``id, line, status, error, score, record`` (:data:`goldeval.engines.spark.PER_CASE_SCHEMA`), with the scorer's name
and configuration in the ``record`` column's metadata (Spark keeps it in the Parquet footer). The import streams
the records in batches (memory does not grow with the file), aggregates them exactly as
:func:`goldeval.engines.spark.aggregate` does (the scorer's partial, exact sums), and records each case under (run, case
id). Importing the same data again finds the same run by its key (scorer, version, configuration, arm, sha256 of
the Parquet bytes) and upserts the same cases: never a second run, never a duplicated case. ``compare``, ``runs
show``, ``runs export`` and the gates then work on it as on a local run.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from goldeval import __version__
from goldeval.errors import InputError, shorten
from goldeval.runs.recorder import Recorder, dataset_hash, run_key, start_run
from goldeval.runs.store import RunMeta
from goldeval.scoring.registry import get_scorer, with_extra

__all__ = ["per_case_files", "per_case_meta", "iter_per_case", "import_per_case"]

_SPARK_META = b"org.apache.spark.sql.parquet.row.metadata"


def per_case_files(path: str | os.PathLike[str]) -> list[Path]:
    """The Parquet files of *path*: itself, or a folder's ``*.parquet`` parts in name order (Spark's order).

    Raises:
        InputError: missing path, or a folder without Parquet parts.
    """
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: no such file or folder. Pass the per-case Parquet a Spark run wrote (--per-case PATH).")
    if p.is_file():
        return [p]
    parts = sorted(x for x in p.iterdir() if x.is_file() and x.name.endswith(".parquet") and not x.name.startswith(("_", ".")))
    if not parts:
        raise InputError(f"{p}: a folder without .parquet parts. Pass the per-case Parquet a Spark run wrote (--per-case PATH).")
    return parts


def _parquet(path: str | os.PathLike[str]) -> Any:
    """``pyarrow.parquet`` (an optional dependency, imported when a per-case file is read).

    Raises:
        InputError: pyarrow is not installed: the message names the extra that installs it.
    """
    try:
        import pyarrow.parquet as pq  # optional heavy dependency: pyarrow (extras parquet, spark)
    except ImportError:
        raise InputError(f"{path}: runs import reads Parquet, which needs pyarrow: pip install 'goldeval[parquet]' "
                         "(or 'goldeval[spark]', which the Spark run that wrote it had).") from None
    return pq


def per_case_meta(files: list[Path]) -> dict[str, Any]:
    """``{"scorer", "version", "config"}`` from the ``record`` column's metadata in the first part's footer.

    Raises:
        InputError: pyarrow is not installed; not Parquet, not a per-case file (columns), or no goldeval metadata.
    """
    pq = _parquet(files[0])

    try:
        schema = pq.read_schema(files[0])
    except Exception as exc:
        raise InputError(f"{files[0]}: not a Parquet file ({exc}).") from None
    missing = [c for c in ("id", "line", "status", "record") if c not in schema.names]
    if missing:
        raise InputError(f"{files[0]}: not a goldeval per-case file: no column {', '.join(missing)} (it has "
                         f"{', '.join(schema.names[:12])}). Pass what `goldeval score --engine spark --per-case PATH` wrote.")
    raw = (schema.metadata or {}).get(_SPARK_META)
    meta = None
    if raw:
        for field in orjson.loads(raw).get("fields", []):
            if field.get("name") == "record":
                meta = (field.get("metadata") or {}).get("goldeval")
    if not isinstance(meta, dict) or not isinstance(meta.get("scorer"), str) or not isinstance(meta.get("config"), dict):
        raise InputError(f"{files[0]}: the 'record' column carries no goldeval metadata (scorer, config). Pass the "
                         "per-case Parquet goldeval.engines.spark.score wrote, unchanged.")
    return meta


def iter_per_case(files: list[Path]) -> Iterator[dict[str, Any]]:
    """The per-case records of *files*, in batches of 4,096 rows.

    Raises:
        InputError: pyarrow is not installed; a ``record`` cell that is not a JSON object (with its file and row
            index).
    """
    pq = _parquet(files[0])

    for f in files:
        index = 0
        for batch in pq.ParquetFile(f).iter_batches(batch_size=4096, columns=["record"]):
            for raw in batch.column("record").to_pylist():
                index += 1
                try:
                    rec = orjson.loads(raw)
                except (orjson.JSONDecodeError, TypeError):
                    rec = None
                if not isinstance(rec, dict) or "line" not in rec or "status" not in rec:
                    raise InputError(f"{f.name}:{index}: the record is not a goldeval per-case record, got {shorten(raw)}.")
                yield rec


def _sha256(files: list[Path]) -> str:
    h = hashlib.sha256()
    for f in files:
        with open(f, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()


def import_per_case(store: Any, path: str | os.PathLike[str], *, arm: str | None = None, gate: Any = None) -> dict[str, Any]:
    """Record a per-case Parquet as a run of *store*, or again into the run it already made (idempotent).

    Args:
        store: An open :class:`goldeval.runs.store.RunStore`.
        path: The per-case Parquet file or folder.
        arm: The arm name recorded with the run (part of its key).
        gate: ``gate(results, recorder)``: called before the run is finished (the CLI applies ``--gates`` there).

    Returns:
        ``{"run_id", "created": bool, "n_cases": int, "results": dict, "recorded": bool}``; ``results`` is what
        :func:`goldeval.engines.spark.aggregate` gives for the same per-case data. ``recorded`` is true when the
        Parquet names a run (the Spark run recorded it when it scored, see
        :func:`goldeval.engines.spark.with_run`) that is in *store* already: then nothing is written (the cases are
        there), ``n_cases`` counts that run's cases and ``results`` are its stored results.

    Raises:
        InputError: see :func:`per_case_files`, :func:`per_case_meta`, :func:`iter_per_case`; an unknown scorer.
    """

    files = per_case_files(path)
    meta = per_case_meta(files)
    named = meta.get("run")
    if isinstance(named, str) and named:
        try:
            run = store.get_run(named)
        except InputError:  # another store (a laptop importing a CI job's Parquet): imported as a run of its own
            run = None
        if run is not None and run["id"] == named:
            if gate is not None:
                gate(run["results"], None)  # the gates are read off the stored results; the run is not rewritten
            return {"run_id": named, "created": False, "n_cases": run["n_recorded"], "results": run["results"],
                    "recorded": True}
    scorer = get_scorer(meta["scorer"])
    config = meta["config"]
    if str(meta.get("version", scorer.version)) != str(scorer.version):
        raise InputError(f"{path}: scored by {scorer.name} version {meta.get('version')}, but this goldeval has version "
                         f"{scorer.version}; import it with the goldeval that scored it.")
    digest = _sha256(files)
    stored_config = scorer.store_config(config)
    key = run_key(scorer_name=scorer.name, scorer_version=scorer.version, input_hashes={"per_case": digest},
                  config=stored_config, arm=arm)
    existing = next((r for r in store.list_runs(limit=None) if r.get("run_key") == key), None)
    if existing is not None:
        recorder = Recorder(store, existing["id"], resumed=True, background=False)
        created = False
    else:
        run_meta = RunMeta(run_key=key, scorer_name=scorer.name, scorer_version=str(scorer.version),
                           dataset_hash=dataset_hash({"per_case": digest}),
                           inputs={"per_case": {"path": str(path), "sha256": digest}}, config=stored_config, arm=arm,
                           tokenizer=config.get("tokenizer"), judge_version=None, rubric_hash=None, dod_hash=None,
                           goldeval_version=__version__)
        recorder = start_run(store, run_meta, background=False)
        created = not recorder.resumed
    partial = scorer.new_partial(config, keep_cases=False)
    n_cases = 0
    try:
        for rec in iter_per_case(files):
            rec.pop("_llm_materials", None)  # what a Spark judge's LLM stage needed, not what the store keeps
            partial.add(rec)
            if rec.get("id") is not None and "duplicate_of" not in rec:
                recorder.record(rec)
                n_cases += 1
        results = scorer.finish(partial, config)
        results.pop("per_example", None)
        results = with_extra(scorer, results, {"input": {"path": str(path), "sha256": digest}})
        results["engine"] = {"name": "spark", "imported_from": str(path)}
        if gate is not None:
            gate(results, recorder)
        recorder.finish(results)
    except BaseException:
        recorder.close(interrupted=True)
        raise
    recorder.close()
    return {"run_id": recorder.run_id, "created": created, "n_cases": n_cases, "results": results, "recorded": False}
