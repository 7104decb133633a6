"""The resume and recording policy of a run: which store, which arm, start a run or resume an unfinished one.

One policy for every scoring run (``goldeval score``, ``labels``, ``judge``, :func:`goldeval.evaluate`, Spark):

* The run's key is the scorer and its version, the sha256 of every input (or a database's identity), the resolved
  configuration, the definition of done's sha256 and the arm. An unfinished run with the same key is resumed
  (its finished cases are reused) unless its input was read from a stream, which only ``resume=RUN`` resumes.
* Inputs of :data:`LARGE_INPUT_BYTES` or more are not hashed up front when nothing could be resumed: the run's key
  is set when it finishes, from the sha256 the scorer reports; an interrupted one is recognised by a stamp (path,
  size, modification time and a sample's sha256).
* A run that fails on bad input (``InputError``) before anything was reused or finished is removed (the same
  command would fail again); one stopped otherwise is left ``interrupted``, to be resumed.

Imports the store only when a run is recorded (``goldeval --help`` stays fast).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from goldeval import __version__
from goldeval.errors import InputError, StoreError
from goldeval.io import streams as _streams
from goldeval.io.outputs import sqlite_files
from goldeval.io.reading import file_sha256
from goldeval.io.streams import relabel
from goldeval.paths import default_store
from goldeval.runs.location import check_store_target, is_server_store, store_label
__all__ = ["FINISHED_RUNS", "LARGE_INPUT_BYTES", "STREAM_RUNS", "RunRecording", "store_file"]

#: Inputs at least this large (all files together) are recorded by a writer process, and — when there is no
#: unfinished run of the same scorer, configuration and arm to resume — not hashed before the scoring: the run's
#: key is set when it finishes, from the sha256 the scorer reports for what it read.
LARGE_INPUT_BYTES = 8_000_000


def store_file(store: str | None) -> str:
    """The run store: *store* (``--store``: a SQLite file or a ``postgresql://`` URL) or
    ``goldeval.paths.default_store()`` (``$GOLDEVAL_STORE``, else the default SQLite file).

    Raises:
        InputError: the store is a URL of a scheme goldeval does not serve (``mysql://…``, from ``--store`` or
            ``$GOLDEVAL_STORE``): it would otherwise be read as a local path.
    """
    target = default_store() if store is None else store
    check_store_target(target)
    return target


@dataclass(slots=True)
class RunRecording:
    """Where and how one run is recorded: the store, the arm, a run to resume, or nothing (``no_store``).

    The resume and recording policy of every scoring run (``goldeval score``, ``labels``, ``judge``,
    :func:`goldeval.evaluate`): :meth:`recording` starts the run or resumes the unfinished run of the same inputs,
    scorer, configuration and arm; after it, :attr:`run_id`, :attr:`resumed` and :attr:`note` say what happened.

    Attributes:
        store: The store's SQLite file (``None``: :func:`store_file`'s default). no_store: Record nothing.
        no_texts: Record the run without its texts: the input files are not kept in the store (for sensitive data; a
            report then reads the texts from the inputs while they are unchanged, as before texts were kept).
            Without it a finished run keeps its input files, compressed (:mod:`goldeval.runs.texts`).
        arm: The arm name recorded with the run. resume: The id of the run to resume (else an unfinished run of
            the same inputs is resumed). run_id, resumed, n_previous: Set by :meth:`recording`.

    Example:
        >>> RunRecording(no_store=True).path is None
        True
    """

    store: str | None = None
    no_store: bool = False
    no_texts: bool = False
    arm: str | None = None
    resume: str | None = None
    run_id: str | None = None
    resumed: bool = False
    n_previous: int = 0
    #: Why an input's texts were not kept with the finished run (changed while it was scored, the store refused).
    texts_notes: list[str] = field(default_factory=list)

    def signal_guard(self) -> contextlib.AbstractContextManager[None]:
        """The context the scoring runs in once the run is started. Here: nothing (a library leaves the process's
        signal handlers alone); the CLI turns SIGTERM into an interrupt, so a terminated run commits its last batch
        and is left interrupted, as after Ctrl-C."""
        return contextlib.nullcontext()

    @property
    def path(self) -> str | None:
        """The store's database file this invocation records in (``None`` with ``--no-store``)."""
        if self.no_store:
            return None
        return store_file(self.store)

    def files(self) -> list[str]:
        """The store's files (database, -wal, -shm, -journal) for :func:`goldeval.io.outputs.check_outputs` (none
        for a store on a server)."""
        path = self.path
        return [] if path is None or is_server_store(path) else sqlite_files(path)

    @property
    def note(self) -> str | None:
        """One line for stderr saying which run was recorded (``None`` with --no-store or before recording)."""
        if self.run_id is None:
            return None
        # a server store is named without its password (PGPASSWORD or ~/.pgpass give it to the next command)
        store = "" if self.store is None else f" --store {store_label(self.store) if is_server_store(self.store) else self.store}"
        hint = f"; its report: goldeval report {self.run_id}{store} --out report.html"
        if self.texts_notes:
            hint += " (" + "; ".join(self.texts_notes) + ")"
        if self.resumed:
            return f"run {self.run_id} resumed ({self.n_previous} case(s) reused from the store){hint}"
        return f"run {self.run_id} recorded{hint}"

    def run_block(self) -> dict[str, Any] | None:
        """``{"id", "arm", "store"}`` of the run this invocation recorded (``None`` with --no-store): the top-level
        ``"run"`` of every results file, so that CI scripts compare runs by id."""
        if self.run_id is None:
            return None
        return {"id": self.run_id, "arm": self.arm, "store": store_label(self.path) if self.path else None}

    def stamp(self, results: dict[str, Any]) -> dict[str, Any]:
        """Put :meth:`run_block` at the top of *results* as ``"run"`` (nothing with --no-store), and name the inputs
        read from streams as given (:func:`goldeval.io.streams.relabel`); returns *results*."""

        block = self.run_block()
        if block is not None:
            results["run"] = block
        return relabel(results)  # an input read from a stream is named as given ('-'), not by its temporary copy

    @contextlib.contextmanager
    def recording(
        self,
        *,
        scorer_name: str,
        scorer_version: str,
        inputs: Mapping[str, str | os.PathLike[str] | None],
        config: Mapping[str, Any],
        tokenizer: str | None = None,
        judge_version: str | None = None,
        rubric_text: str | None = None,
        rubric_hash: str | None = None,
        dod: str | os.PathLike[str] | None = None,
        identities: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> Iterator[Any]:
        """Open the store, start or resume the run, yield its Recorder (``None`` with ``--no-store``).

        Args:
            scorer_name, scorer_version: The scorer and its version (part of the run key).
            inputs: role → path of every input file (``predictions``, ``cases``…); ``None`` paths are skipped.
                Their bytes' sha256 go into the run key and the dataset hash.
            config: The resolved configuration (JSON-ready; part of the run key).
            tokenizer, judge_version: Recorded with the run.
            rubric_text / rubric_hash: The rubric (its sha256 is recorded) or its hash.
            dod: The definition-of-done file (its sha256 is recorded and is part of the run key).
            identities: role → identity of an input that is not a file (a PostgreSQL database: server version,
                database name, catalog sha256, redacted URL). The sha256 of its canonical JSON stands in for a
                file's sha256 in the run key, so a run resumes only on the same database; the identity is recorded
                with the run's inputs.

        On leaving the block, pending records are committed; a run whose ``finish`` was not called (an error,
        Ctrl-C, SIGTERM) is marked ``interrupted`` and is resumed by the next identical invocation.
        """
        if self.no_store:
            if self.resume:
                raise _input_error("--resume and --no-store exclude each other: a run can only be resumed from the store. Drop one.")
            yield None
            return

        # start-up: the run store (sqlite3, multiprocessing, the writer) loads only when a run is recorded
        from goldeval.runs.identity import input_entry
        from goldeval.runs.recorder import dataset_hash, run_key, start_run
        from goldeval.runs.backends import open_store
        from goldeval.runs.store import RunMeta

        paths: dict[str, str] = {}
        streamed: dict[str, Any] = {}  # role -> Spooled: an input read from stdin or a FIFO (see goldeval.io.streams)
        for role, path in inputs.items():
            if path is None:
                continue
            if not os.path.isfile(path):
                if os.path.exists(path):  # '--db /dev/null' read "no such file"
                    raise _input_error(f"{path}: not a regular file (the {role} input is read as a file, and this is "
                                       f"{_file_kind(os.fspath(path))}). Give the file.")
                raise _input_error(f"{path}: no such file (the {role} input). Check the path.")
            paths[role] = str(path)
            if (sp := _streams.spooled(path)) is not None:
                streamed[role] = sp
        once = {r: sp for r, sp in streamed.items() if sp.is_stream}  # read once: a decoded file can be read again
        dod_hash = file_sha256(dod) if dod is not None else None
        if rubric_hash is None and rubric_text is not None:
            rubric_hash = hashlib.sha256(rubric_text.encode("utf-8")).hexdigest()
        key_config = {**config, "_dod_hash": dod_hash} if dod_hash else dict(config)
        large = sum(os.path.getsize(p) for p in paths.values()) >= LARGE_INPUT_BYTES
        ident_hashes = {role: hashlib.sha256(_canonical_json(ident)).hexdigest() for role, ident in (identities or {}).items()}

        def meta_for(hashes: dict[str, str] | None) -> Any:
            if hashes is None:  # large inputs, nothing to resume: the identity is set when the run finishes

                key, data_hash, files = "pending:" + secrets.token_hex(16), "pending", {r: _stamp(p) for r, p in paths.items()}
            else:
                hashes = {**hashes, **ident_hashes}
                key = run_key(scorer_name=scorer_name, scorer_version=scorer_version, input_hashes=hashes, config=key_config, arm=self.arm)
                data_hash = dataset_hash(hashes)
                files = {r: input_entry(paths[r], h) for r, h in hashes.items() if r in paths}
                for r, sp in streamed.items():  # the stream's name ('-' for stdin) and the sha256 of what was read
                    files[r] = ({"path": sp.name, "sha256": sp.sha256, "stream": sp.kind} if sp.is_stream else
                                {"path": sp.name, "sha256": sp.sha256, "decoded": sp.kind})
                for r, ident in (identities or {}).items():
                    files[r] = {"path": ident.get("url"), "sha256": ident_hashes[r], "identity": dict(ident)}
            return RunMeta(
                run_key=key, scorer_name=scorer_name, scorer_version=str(scorer_version), dataset_hash=data_hash,
                inputs=files, config=dict(config), arm=self.arm, tokenizer=tokenizer, judge_version=judge_version,
                rubric_hash=rubric_hash, dod_hash=dod_hash, goldeval_version=__version__,
            )

        store = open_store(self.store)
        recorder: Any = None
        try:
            background = "process" if large else "thread"
            candidates = (
                store.unfinished_like(scorer_name=scorer_name, scorer_version=str(scorer_version), arm=self.arm, config=config)
                if large and self.resume is None and not identities and not once else None  # hash up front
            )
            if candidates == []:
                # Nothing to resume: do not hash large inputs up front (the scorer hashes what it reads and reports
                # it in its results; the run's key is set from those when it finishes).
                deferred = {"inputs": paths, "scorer_name": scorer_name, "scorer_version": str(scorer_version),
                            "config": key_config, "arm": self.arm}
                recorder = start_run(store, meta_for(None), auto_resume=False, background=background, deferred=deferred)
            else:
                hashes = {role: file_sha256(p) for role, p in paths.items()}
                meta = meta_for(hashes)
                if self.resume is not None:
                    candidates = [store.get_run(self.resume, with_results=False)]
                for run in candidates or []:
                    # a large run interrupted before it finished has no key yet: the same files (path, size,
                    # modification time) and the same definition of done make it this run
                    same_run = (
                        run["run_key"].startswith("pending:") and run["scorer_name"] == scorer_name
                        and run["scorer_version"] == str(scorer_version) and run["arm"] == self.arm
                        and run["config"] == dict(config) and run["dod_hash"] == dod_hash
                    )
                    if same_run and _stamps_match(run["inputs"], paths):
                        store.set_identity(run["id"], run_key=meta.run_key, dataset_hash=meta.dataset_hash, inputs=meta.inputs)
                        break
                # a run read from a stream is resumed only by --resume RUN: the same command may be fed other bytes
                recorder = start_run(store, meta, resume=self.resume, auto_resume=not once, background=background)
            if streamed:
                recorder.results_hook = _streams.relabel  # results name '-' / the FIFO / the file, not the temporary copy
            if once:
                STREAM_RUNS.append((recorder.run_id, " and ".join(
                    f"{role} {'- (stdin)' if sp.kind == 'stdin' else sp.name}" for role, sp in once.items())))
            if not self.no_texts:  # the scorer may copy these as it reads them (Recorder.input_copy)
                recorder.keep_texts_of = dict(paths)
            self.run_id = recorder.run_id
            self.resumed = recorder.resumed
            self.n_previous = len(recorder.previous())
            with self.signal_guard():
                try:
                    yield recorder
                except BaseException as exc:
                    recorder.close(interrupted=True)
                    if isinstance(exc, _input_error_type()) and not recorder.resumed and not recorder.finished:
                        # bad input (an empty or unreadable file, a wrong --positive, a row the scorer refuses):
                        # the same command would fail again, so the run is not left to be resumed — it is removed
                        store.delete_run(recorder.run_id)
                        self.run_id = None
                    raise
                recorder.close()
                if recorder.finished:
                    FINISHED_RUNS.append(recorder.run_id)
                    if not self.no_texts:
                        self.texts_notes = _keep_texts(store, recorder.run_id, paths, recorder.input_copies)
        finally:
            for copy in recorder.input_copies.values() if recorder is not None else ():
                copy.discard()  # (its temporary file)
            store.close()


def _keep_texts(store: Any, run_id: str, paths: Mapping[str, str], copies: Mapping[str, Any]) -> list[str]:
    """Keep the finished run's input files in the store (:func:`goldeval.runs.texts.keep_inputs`; *copies*: those the
    scorer made as it read them); what could not be kept is a note, never a failure of the run (its scores are
    recorded already)."""
    from goldeval.runs.texts import keep_inputs  # start-up: loads with the store (see recording)

    try:
        inputs = store.get_run(run_id, with_results=False, with_cases=False)["inputs"] or {}
        return keep_inputs(store, run_id, paths, inputs, copies)
    except StoreError as exc:
        return [f"the texts of run {run_id} were not kept in the store ({exc})"]


def _canonical_json(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str).encode("utf-8")


def _stamp(path: str) -> dict[str, Any]:
    """What identifies an input file before it is hashed: its path, resolved path, size, modification time and
    the sha256 of a sample of its bytes (see :func:`_sample_sha256`)."""

    st = os.stat(path)
    from goldeval.runs.identity import input_entry  # start-up: loads with the store (see recording)
    return input_entry(path, None, realpath=os.path.realpath(path), size=st.st_size, mtime_ns=st.st_mtime_ns,
                       sample_sha256=_sample_sha256(path, st.st_size))


#: What :func:`_sample_sha256` reads: the first and the last MiB, and this many 4 KiB blocks spread between them.
_SAMPLE_EDGE, _SAMPLE_BLOCKS, _SAMPLE_BLOCK = 1 << 20, 62, 4096


def _sample_sha256(path: str, size: int) -> str:
    """sha256 of the first and last MiB of a file and of 62 blocks of 4 KiB spread evenly between them (about
    2.2 MiB read, whatever the size). A large input is not hashed whole before an interrupted run is resumed: this
    sample, with the size and modification time, is what says it is still the same file. A rewrite that keeps the
    size and the modification time and changes only bytes outside the sample goes unseen (the full sha256 is
    recorded when the run finishes)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        h.update(fh.read(_SAMPLE_EDGE))
        for k in range(1, _SAMPLE_BLOCKS + 1):
            fh.seek(size * k // (_SAMPLE_BLOCKS + 1))
            h.update(fh.read(_SAMPLE_BLOCK))
        fh.seek(max(0, size - _SAMPLE_EDGE))
        h.update(fh.read(_SAMPLE_EDGE))
    return h.hexdigest()


def _stamps_match(recorded: Any, paths: dict[str, str]) -> bool:
    """True when every input recorded with a stamp (see :func:`_stamp`) is the same file, unchanged, by role (a
    stamp recorded before samples were taken is compared on path, size and modification time)."""
    if not isinstance(recorded, dict) or set(recorded) != set(paths):
        return False
    for role, path in paths.items():
        old = recorded[role]
        if not isinstance(old, dict):
            return False
        now = _stamp(path)
        keys = ("realpath", "size", "mtime_ns", "sample_sha256") if "sample_sha256" in old else ("realpath", "size", "mtime_ns")
        if any(old.get(k) != now[k] for k in keys):
            return False
    return True


#: The runs this process finished in the store (so that a Ctrl-C after that, before --out is written, says the run
#: is finished and how to export it, instead of offering a resume).
FINISHED_RUNS: list[str] = []

#: ``(run id, its streamed inputs' names)`` of the runs this process recorded from stdin or a FIFO: such a run is
#: resumed only by ``--resume RUN`` (the next invocation cannot be known to read the same stream), and a Ctrl-C says so.
STREAM_RUNS: list[tuple[str, str]] = []


def _input_error_type() -> type:
    return InputError


def _file_kind(path: str) -> str:
    """'a folder', 'a character device', 'a FIFO', 'a socket' or 'a block device': what an existing path that is not
    a regular file is, for a message."""

    mode = os.stat(path).st_mode
    for test, kind in ((stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a character device"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return kind
    return "not a regular file"


def _input_error(message: str) -> Exception:
    return InputError(message)
