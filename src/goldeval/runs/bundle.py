"""Run bundles: one finished run as one ``.tar.gz`` file, to move between stores without a server.

``goldeval runs export RUN --bundle run.tar.gz`` writes it; ``goldeval runs import run.tar.gz`` merges it into any
store (SQLite or PostgreSQL), idempotently: the run keeps its id, its cases are upserted by ``(run, case id)`` and
a review is added only once, so importing the same bundle twice gives one run. A CI job uploads the bundle as an
artifact; a later job, a laptop or the team's server imports it.

Inside (plain files, readable with ``tar xzf``):

``bundle.json``   ``{"format": "goldeval-run-bundle", "version": 1, "run": the run's stored row (identity, pinned
                  versions, the inputs' sha256, the resolved configuration, counts, headline, the results JSON as
                  stored), "n_cases", "cases_sha256", "n_reviews"}``
``cases.jsonl``   one case a line, its stored columns ``[case_id, seq, status, verdict, score, reason, raw, data]``
                  (``data``: the per-case record's JSON text as stored: the case texts the record holds)
``reviews.jsonl`` the run's human reviews, one a line
``inputs/ROLE.zst`` each input file kept with the run (its case texts, :mod:`goldeval.runs.texts`): its zstd frames
                  one after the other (``zstd -d`` reads them as one file); ``bundle.json``'s ``"inputs"`` gives per
                  role ``{"sha256", "name", "size", "content_sha256", "frames": [compressed bytes of each frame]}``.
                  None for a run recorded with ``--no-texts``. A bundle without them is still version 1.

The rows are the stored ones, unchanged: numbers travel as JSON numbers (a double's shortest repr, which reads back
as the same double), so a run compared in the store it came from and in the one it went to gives the same result
to the last digit. Tags are names a store gives, not part of a run: they stay behind.

Source: goldeval issue 28 item 2; the tar format (POSIX.1-2001 pax) through :mod:`tarfile`.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import re
import tarfile
from collections.abc import Iterator
from typing import Any

import orjson
import zstandard

from goldeval.errors import InputError, shorten
from goldeval.runs.store import RUN_ID, RunStore

__all__ = ["BUNDLE_FORMAT", "BUNDLE_VERSION", "export_bundle", "import_bundle", "is_bundle", "read_bundle"]

BUNDLE_FORMAT = "goldeval-run-bundle"
BUNDLE_VERSION = 1
_MEMBERS = ("bundle.json", "cases.jsonl", "reviews.jsonl")


def export_bundle(store: RunStore, ref: str) -> bytes:
    """The bundle (``.tar.gz`` bytes) of the finished run *ref* names.

    Args:
        store: The open store.
        ref: A run id, tag, unique prefix or ``latest``.

    Returns:
        The gzip-compressed tar archive; the same run gives the same bytes (fixed member times and owners).

    Raises:
        InputError: *ref* names no single run, or a run that has not finished (resume it first: an unfinished run's
            cases are not all there).

    Example:
        >>> import tempfile, os
        >>> from goldeval.runs.store import RunMeta
        >>> st = RunStore(os.path.join(tempfile.mkdtemp(), "a.db"))
        >>> run_id = st.create_run(RunMeta(run_key="k", scorer_name="labels", scorer_version="1", dataset_hash="d"))
        >>> st.finish_run(run_id, {"aggregate": {"n": 0}})
        >>> read_bundle(io.BytesIO(export_bundle(st, run_id)))["run"]["id"] == run_id
        True
        >>> st.close()
    """
    row = store.stored_run(ref)
    if row["status"] != "finished":
        raise InputError(f"runs export --bundle: run {row['id']} is {row['status']}, not finished, so its cases are not "
                         "all recorded. Resume it (the same scoring command) and export it when it has finished.")
    cases = b"".join(orjson.dumps(list(c), option=orjson.OPT_APPEND_NEWLINE) for c in store.stored_cases(row["id"]))
    reviews = store.stored_reviews(row["id"])
    kept: dict[str, Any] = {}
    kept_members: dict[str, bytes] = {}
    for role, info in store.kept_inputs(row["id"]).items():
        frames = list(store.kept_input_parts(row["id"], role))
        content = hashlib.sha256()
        dec = zstandard.ZstdDecompressor()
        for frame in frames:
            content.update(dec.decompress(frame))
        kept[role] = {"sha256": info["sha256"], "name": info["name"], "size": info["size"],
                      "content_sha256": content.hexdigest(), "frames": [len(f) for f in frames]}
        kept_members[f"inputs/{role}.zst"] = b"".join(frames)
    head = {
        "format": BUNDLE_FORMAT, "version": BUNDLE_VERSION, "run": row,
        "n_cases": cases.count(b"\n"), "cases_sha256": hashlib.sha256(cases).hexdigest(), "n_reviews": len(reviews),
        **({"inputs": kept} if kept else {}),
    }
    members = {
        "bundle.json": orjson.dumps(head, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE),
        "cases.jsonl": cases,
        "reviews.jsonl": b"".join(orjson.dumps(r, option=orjson.OPT_APPEND_NEWLINE) for r in reviews),
        **kept_members,
    }
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in members:
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(members[name]), 0o644, 0
            tar.addfile(info, io.BytesIO(members[name]))
    return gzip.compress(raw.getvalue(), mtime=0)


def is_bundle(path: str | os.PathLike[str]) -> bool:
    """True when *path* is a file that starts like a gzip-compressed tar holding ``bundle.json`` first (what
    :func:`export_bundle` writes); a Parquet file or folder is not."""
    if not os.path.isfile(path):
        return False
    with open(path, "rb") as fh:
        if fh.read(2) != b"\x1f\x8b":
            return False
    try:
        with tarfile.open(path, "r:gz") as tar:
            first = tar.next()
    except (tarfile.TarError, OSError, EOFError):
        return False
    return first is not None and first.name == "bundle.json"


def read_bundle(source: str | os.PathLike[str] | io.BytesIO) -> dict[str, Any]:
    """The parts of a bundle: ``{"run": row, "cases": [rows], "reviews": [rows], "inputs": {role: {"sha256", "name",
    "size", "frames": [(size, zstd frame)]}}}``, checked.

    Raises:
        InputError: not a goldeval run bundle (not a gzip tar, a member missing, another format or a newer version),
            its run id is not one goldeval makes (:data:`~goldeval.runs.store.RUN_ID`), or its cases do not match
            the sha256 and count its ``bundle.json`` records (a damaged or edited file).
    """
    where = source if isinstance(source, (str, os.PathLike)) else "bundle"
    try:
        tar = tarfile.open(source, "r:gz") if isinstance(source, (str, os.PathLike)) else tarfile.open(fileobj=source, mode="r:gz")
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise InputError(f"{where}: not a goldeval run bundle (a .tar.gz from `goldeval runs export RUN --bundle`): {exc}.") from None
    with tar:
        data: dict[str, bytes] = {}
        for name in _MEMBERS:
            try:
                member = tar.getmember(name)
                fh = tar.extractfile(member) if member.isfile() else None
            except KeyError:
                fh = None
            if fh is None:
                raise InputError(f"{where}: not a goldeval run bundle: it holds no {name}. Pass the file "
                                 "`goldeval runs export RUN --bundle FILE` wrote, unchanged.")
            data[name] = fh.read()
        try:
            head = orjson.loads(data["bundle.json"])
        except orjson.JSONDecodeError as exc:
            raise InputError(f"{where}: bundle.json is not JSON ({exc}).") from None
        kept = _kept_inputs(tar, head.get("inputs") if isinstance(head, dict) else None, where)
    try:
        head = orjson.loads(data["bundle.json"])
    except orjson.JSONDecodeError as exc:
        raise InputError(f"{where}: bundle.json is not JSON ({exc}).") from None
    if not isinstance(head, dict) or head.get("format") != BUNDLE_FORMAT:
        raise InputError(f"{where}: bundle.json is not a goldeval run bundle's (format {shorten(head.get('format') if isinstance(head, dict) else head)}).")
    if not isinstance(head.get("version"), int) or head["version"] > BUNDLE_VERSION:
        raise InputError(f"{where}: a run bundle of version {head.get('version')!r}; this goldeval reads version "
                         f"{BUNDLE_VERSION}. Upgrade goldeval to import it.")
    run = head.get("run")
    if not isinstance(run, dict) or not isinstance(run.get("id"), str) or not isinstance(run.get("run_key"), str):
        raise InputError(f"{where}: bundle.json names no run (an id and a run_key).")
    if not RUN_ID.fullmatch(run["id"]):
        # any other text could be 'latest' or a tag (baseline/main), which the imported id would then hide
        raise InputError(f"{where}: bundle.json's run id {shorten(run['id'])} is not a run id goldeval makes "
                         "(YYYYmmdd-HHMMSS-xxxxxx): a damaged or edited bundle; nothing was imported. Export the run again.")
    cases = data["cases.jsonl"]
    if hashlib.sha256(cases).hexdigest() != head.get("cases_sha256") or cases.count(b"\n") != head.get("n_cases"):
        raise InputError(f"{where}: cases.jsonl does not match the sha256 and count in bundle.json (a damaged or edited "
                         "bundle); nothing was imported. Export the run again.")
    return {"run": run, "cases": list(_lines(cases)), "reviews": list(_lines(data["reviews.jsonl"])), "inputs": kept}


def _kept_inputs(tar: tarfile.TarFile, spec: Any, where: Any) -> dict[str, dict[str, Any]]:
    """role → ``{"sha256", "name", "size", "frames": [bytes]}`` of the inputs a bundle carries (``inputs/ROLE.zst``),
    each checked against the ``content_sha256`` and size its ``bundle.json`` records.

    Raises:
        InputError: a member named in ``bundle.json`` is missing, cut, or does not decompress to what was recorded.
    """
    if spec is None:
        return {}
    if not isinstance(spec, dict):
        raise InputError(f"{where}: bundle.json's inputs is {shorten(spec)}, not an object of role → kept input.")
    out: dict[str, dict[str, Any]] = {}
    for role, info in spec.items():
        name = f"inputs/{role}.zst"
        try:
            member = tar.getmember(name)
            fh = tar.extractfile(member) if member.isfile() else None
        except KeyError:
            fh = None
        lengths = info.get("frames") if isinstance(info, dict) else None
        if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", role) or not isinstance(info.get("sha256") if isinstance(info, dict) else None, str):
            raise InputError(f"{where}: bundle.json names a kept input {shorten(role)} that is not a plain role with a sha256 "
                             "(a damaged or edited bundle); nothing was imported. Export the run again.")
        if fh is None or not isinstance(lengths, list) or not all(isinstance(n, int) and n > 0 for n in lengths):
            raise InputError(f"{where}: bundle.json names the kept {role} input, and {name} is missing or its frames are "
                             "not listed (a damaged or edited bundle); nothing was imported. Export the run again.")
        blob = fh.read()
        frames, at = [], 0
        for n in lengths:
            frames.append(blob[at:at + n])
            at += n
        content = hashlib.sha256()
        sizes: list[int] = []
        try:
            dec = zstandard.ZstdDecompressor()
            for frame in frames:
                plain = dec.decompress(frame)
                content.update(plain)
                sizes.append(len(plain))
        except zstandard.ZstdError as exc:
            raise InputError(f"{where}: {name} does not decompress ({exc}); nothing was imported. Export the run again.") from None
        if at != len(blob) or content.hexdigest() != info.get("content_sha256") or sum(sizes) != info.get("size"):
            raise InputError(f"{where}: {name} does not match the size and sha256 in bundle.json (a damaged or edited "
                             "bundle); nothing was imported. Export the run again.")
        out[role] = {"sha256": info.get("sha256"), "name": info.get("name"), "size": sum(sizes),
                     "frames": list(zip(sizes, frames, strict=True))}
    return out


def import_bundle(store: RunStore, source: str | os.PathLike[str]) -> dict[str, Any]:
    """Merge the run in the bundle *source* into *store* (see :meth:`RunStore.put_stored_run`: idempotent).

    Returns:
        ``{"run_id", "created": bool, "n_cases", "n_reviews"}``: ``created`` is false when the run was already in
        the store (its rows are then replaced by the bundle's, which are the same run's).

    Raises:
        InputError: see :func:`read_bundle`; or the store holds another run under the same id.
    """
    parts = read_bundle(source)
    run = parts["run"]
    for i, case in enumerate(parts["cases"], 1):
        if not isinstance(case, list) or len(case) != 8 or not isinstance(case[0], str) or not isinstance(case[7], str):
            raise InputError(f"{source}: cases.jsonl line {i}: expected [case_id, seq, status, verdict, score, reason, "
                             f"raw, data], got {shorten(case)}. Export the run again.")
    created = store.put_stored_run(run, parts["cases"], parts["reviews"])
    for role, kept in parts["inputs"].items():
        store.keep_input(run["id"], role, str(kept["sha256"]), str(kept["name"]), kept["frames"])
    return {"run_id": run["id"], "created": created, "n_cases": len(parts["cases"]), "n_reviews": len(parts["reviews"])}


def _lines(blob: bytes) -> Iterator[Any]:
    for line in blob.splitlines():
        if line.strip():
            yield orjson.loads(line)

