"""Runs: the run store (a SQLite file or a PostgreSQL server), the Recorder scorers write through, comparing two runs, judge regressions.

May import: the domain packages (the judge to replay a regression, label counts to compare two label runs, kappa),
:mod:`goldeval.scoring`, :mod:`goldeval.gates`, :mod:`goldeval.io`, the foundation modules. Never: engines,
report, pipeline, cli.

Modules (import the one you need; this package imports none of them eagerly):

``backends``     :func:`~goldeval.runs.backends.open_store` — opens the store a location names (file or URL).
``store``        :class:`~goldeval.runs.store.RunStore` — runs, per-case records, reviews, tags (WAL, migrations).
``pgstore``      the same store on a PostgreSQL server (``open_store("postgresql://…")``; advisory-lock claims).
``location``     where a store lives: a file, a ``postgresql://`` URL, a refused scheme; its name without password.
``bundle``       run bundles: one finished run as a ``.tar.gz``, imported into any store idempotently.
``migrations``   the append-only schema migrations (and their PostgreSQL statements).
``recorder``     :class:`~goldeval.runs.recorder.Recorder`, :func:`~goldeval.runs.recorder.start_run` (re-exports
                 the names of ``identity`` and those of ``writer`` it uses).
``identity``     run keys: :func:`~goldeval.runs.identity.run_key`, dataset hash, rubric text, reported input hashes.
``writer``       the writer process a large run's cases are committed by, and its batch messages.
``compare``      :func:`~goldeval.runs.compare.compare_runs`, McNemar exact test, paired bootstrap.
``regressions``  the judge-regressions file, replay, review export / import.
``reviews``      human reviews of a case settled into one verdict (shared by regressions and calibration).
``calibration``  the judge against people: agreement and kappa per decider.
``corrected``    the pass rate corrected for the judge's measured sensitivity and specificity (Rogan–Gladen).
"""
