"""What a run hands back (:class:`Evaluation`) and the hooks a caller watches it through (:class:`Observer`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from goldeval.pipeline.gating import EXIT_BAD_INPUT, EXIT_GATE_FAILED, EXIT_OK

__all__ = ["Evaluation", "Observer"]


class Observer:
    """Hooks a run calls as it goes, in this order; each does nothing here. The CLI's observer prints (a progress
    bar, the run's note, the scorer's summary, the gate table); a library caller subclasses it to see the same.

    Example:
        >>> class Notes(Observer):
        ...     def recorded(self, note: str) -> None:
        ...         print(note)
    """

    def total(self, total: int) -> None:
        """The input holds *total* rows (known after the first pass over a file; for the data-answer judge, the
        cases of the case file)."""

    def progress(self, k: int) -> None:
        """*k* more rows were scored (the data-answer judge: one call per case judged by rule)."""

    def llm_progress(self, tally: Any) -> None:
        """The LLM judge of the rules-then-LLM stage is under way: *tally* is the running
        :class:`~goldeval.llm.accounting.CallTally` (``sent`` cases, ``cases`` done, ``calls``, ``cached``,
        ``failed``, ``spend_usd``), given once before the first call and after each case judged. Read it here;
        it changes after the call returns."""

    def ready(self, database: Any, config: Any) -> None:
        """The run is recorded and its database (if any) open: the first case comes next (the data-answer judge)."""

    def llm_stage(self, stage: Any) -> None:
        """The rules-then-LLM stage ran: *stage* is a :class:`~goldeval.pipeline.llm_stage.LlmStage` (its
        ``results`` ``None`` after a dry run)."""

    def recorded(self, note: str) -> None:
        """The run was recorded or resumed: one line saying which (e.g. ``run 1a2b… recorded; its report: …``)."""

    def summary(self, results: dict[str, Any], scorer: Any) -> None:
        """The results are aggregated (before the gates): *scorer* is the :class:`~goldeval.scoring.protocol.Scorer`."""

    def gates(self, report: Any) -> None:
        """The gates were evaluated: *report* is the :class:`~goldeval.gates.evaluate.GateReport`."""


@dataclass(slots=True)
class Evaluation:
    """The outcome of :func:`goldeval.evaluate`.

    Attributes:
        results: The results dict (what ``--out`` holds: ``scorer``, ``config``, ``aggregate``, ``failures``,
            ``gates`` when gated, ``run`` when recorded; ``per_example`` when kept).
        gate_report: The :class:`~goldeval.gates.evaluate.GateReport`, or ``None`` without gates.
        run_id: The recorded run's id (``None`` when nothing was recorded). resumed: Whether it was resumed.
        problem: Why nothing could be scored (``None`` when something was).
        dry_run: An LLM dry run: nothing was judged or recorded; ``results["llm_dry_run"]`` holds the count.
    """

    results: dict[str, Any]
    gate_report: Any = None
    run_id: str | None = None
    resumed: bool = False
    problem: str | None = None
    dry_run: bool = False

    @property
    def aggregate(self) -> dict[str, Any]:
        """``results["aggregate"]``: the scorer's aggregates (unrounded, with ``undefined``)."""
        return self.results["aggregate"]

    @property
    def passed(self) -> bool:
        """Every gate passes (``True`` without gates) and something was scored."""
        return self.problem is None and (self.gate_report is None or bool(self.gate_report.passed))

    @property
    def exit_code(self) -> int:
        """The exit decision the CLI makes of this run: 2 when nothing could be scored, 1 when a gate fails, else 0."""
        if self.dry_run:
            return EXIT_OK
        if self.problem is not None:
            return EXIT_BAD_INPUT
        if self.gate_report is not None and not self.gate_report.passed:
            return EXIT_GATE_FAILED
        return EXIT_OK
