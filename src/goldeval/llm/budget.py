"""The judge's spend cap: a worst-case reservation before every HTTP call, the spend as it was really reported.

Before each HTTP attempt (a retry is an attempt, and so is every sample of ``--repeat``) the caller *reserves* the
attempt's worst-case cost:

    reserved USD = (ceil(prompt characters / 4) · price_in + max_tokens · price_out) / 1,000,000

with the prices in USD per million tokens and the prompt's characters counted over every message sent (system and
user). Characters / 4 is the usual offline estimate of tokens for English text with an OpenAI tokenizer; it is an
estimate, not a count, and no tokenizer is loaded. The reservation is refused — and from then on every reservation
is refused, so no more calls are made — when the calls made would pass ``max_calls``, or when what has been spent
plus what is reserved by calls still in flight plus this reservation would pass ``max_cost_usd``. Cache hits are
never reserved: they cost nothing and do not count.

When the attempt is over its reservation is *settled*: the spend is the endpoint's usage figures at the prices when
it reported both token counts, else the reserved estimate (a time-out, a 429, a 5xx, an endpoint that reports no
usage), and the meter keeps the two parts apart so that the summary can say which it is. Settling replaces the
worst case by the reported cost, so a cap admits more calls when the judge answers briefly. With calls in flight
(``--max-concurrency`` > 1) their reservations are held at the worst case until they finish, so the cap may stop a
call earlier than one call at a time would; it never lets the reserved worst case pass the cap.

A cost cap needs both prices (else the worst case is unknown) and a ``max_tokens`` (else a completion is unbounded);
:class:`goldeval.llm.JudgeConfig` refuses one without them. The one exception, as issue 16 states it: a cost cap
without prices is accepted when ``max_calls`` is given, and then only the call cap is enforced
(:attr:`SpendMeter.cost_cap_note` says so, and the summary repeats it).

Source: issue 16 ("A spend cap"), goldeval; characters / 4 as OpenAI's rule of thumb for English
("What are tokens and how to count them?", OpenAI help centre).
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from typing import Any

__all__ = ["CAP_REACHED", "Reservation", "SpendMeter", "check_cap", "estimate_prompt_tokens"]

#: The reason every case left unsent by the cap carries.
CAP_REACHED = "spend cap reached"

#: Relative slack when comparing a sum of float costs with the cap: a reservation that lands exactly on the cap (a
#: hand-computed $0.0036 from three calls of $0.0012) is admitted, not refused by one unit in the last place.
_REL_EPS = 1e-9


def estimate_prompt_tokens(chars: int) -> int:
    """Offline worst-case token estimate of a prompt of *chars* characters: ``ceil(chars / 4)``."""
    return -(-int(chars) // 4)


@dataclass(frozen=True, slots=True)
class Reservation:
    """One admitted attempt: its estimated prompt tokens and reserved USD (``None`` when no price is known)."""

    prompt_tokens_est: int
    usd: float | None


class SpendMeter:
    """Counts the judge's HTTP attempts and their spend, and enforces the caps; thread-safe.

    Args:
        max_cost_usd: Cap on the spend in USD (``None`` = no cost cap).
        max_calls: Cap on HTTP attempts (``None`` = no call cap). 0 sends nothing.
        price_in, price_out: USD per million prompt / completion tokens (``None`` = unknown).
        max_tokens: The completion-token cap sent with each call (``None`` = not sent: unbounded).

    A cost cap is enforced only when both prices and ``max_tokens`` are known; :class:`JudgeConfig` refuses one
    that cannot be, except when ``max_calls`` is given (see the module docstring).
    """

    def __init__(self, *, max_cost_usd: float | None = None, max_calls: int | None = None,
                 price_in: float | None = None, price_out: float | None = None, max_tokens: int | None = None) -> None:
        self.max_cost_usd = max_cost_usd
        self.max_calls = max_calls
        self.price_in = price_in
        self.price_out = price_out
        self.max_tokens = max_tokens
        self._lock = threading.Lock()
        self.calls = 0
        self.held_usd = 0.0
        self.from_usage_usd = 0.0
        self.estimated_usd = 0.0
        self.calls_from_usage = 0
        self.calls_estimated = 0
        self.refused = 0
        self.reached: str | None = None  # why the cap was reached (None: not reached)

    @classmethod
    def from_config(cls, config: Any) -> SpendMeter:
        """The meter for a :class:`goldeval.llm.JudgeConfig` (its ``max_cost``, ``max_calls``, prices, max_tokens)."""
        return cls(max_cost_usd=getattr(config, "max_cost", None), max_calls=getattr(config, "max_calls", None),
                   price_in=config.price_in, price_out=config.price_out, max_tokens=config.max_tokens)

    @property
    def priced(self) -> bool:
        return self.price_in is not None and self.price_out is not None

    @property
    def cost_cap_enforced(self) -> bool:
        return self.max_cost_usd is not None and self.priced and self.max_tokens is not None

    @property
    def cost_cap_note(self) -> str | None:
        """Why a given cost cap is not enforced (no prices, with ``max_calls`` given), else ``None``."""
        if self.max_cost_usd is None or self.cost_cap_enforced:
            return None
        return (f"the cost cap ${self.max_cost_usd:g} is not enforced: no --price-in/--price-out to estimate a call's "
                f"cost; only the cap of {self.max_calls} calls applies")

    def estimate_usd(self, prompt_chars: int) -> float | None:
        """The worst-case USD of one attempt with a prompt of *prompt_chars* characters (``None`` without prices)."""
        if self.price_in is None or self.price_out is None:  # (not priced)
            return None
        completion = self.max_tokens or 0
        return (estimate_prompt_tokens(prompt_chars) * self.price_in + completion * self.price_out) / 1_000_000

    def reserve(self, prompt_chars: int) -> Reservation | None:
        """Admit one HTTP attempt, or refuse it (``None``) when it would pass a cap; once refused, always refused."""
        est = self.estimate_usd(prompt_chars)
        with self._lock:
            if self.reached is None and self.max_calls is not None and self.calls >= self.max_calls:
                self.reached = f"{self.max_calls} calls made (--max-calls {self.max_calls})"
            if self.reached is None and self.cost_cap_enforced:
                assert est is not None and self.max_cost_usd is not None
                total = self.from_usage_usd + self.estimated_usd + self.held_usd + est
                if total > self.max_cost_usd * (1 + _REL_EPS) + 1e-15:
                    self.reached = (f"the next call's worst case ${est:.6f} would take the spend to ${total:.6f}, "
                                    f"past the cap ${self.max_cost_usd:g} (--max-cost)")
            if self.reached is not None:
                self.refused += 1
                return None
            self.calls += 1
            if est is not None:
                self.held_usd += est
            return Reservation(estimate_prompt_tokens(prompt_chars), est)

    def settle(self, reservation: Reservation, prompt_tokens: int | None, completion_tokens: int | None) -> tuple[float | None, str | None]:
        """Close an attempt: its spend from the reported usage, else the reserved estimate.

        Returns:
            ``(usd, basis)`` with basis ``"usage"`` or ``"estimate"``; ``(None, None)`` without prices.
        """
        with self._lock:
            if reservation.usd is not None:
                self.held_usd = max(0.0, self.held_usd - reservation.usd)
            if self.price_in is None or self.price_out is None:  # (not priced)
                return None, None
            if prompt_tokens is not None and completion_tokens is not None:
                usd = (prompt_tokens * self.price_in + completion_tokens * self.price_out) / 1_000_000
                self.from_usage_usd += usd
                self.calls_from_usage += 1
                return usd, "usage"
            assert reservation.usd is not None
            self.estimated_usd += reservation.usd
            self.calls_estimated += 1
            return reservation.usd, "estimate"

    def summary(self) -> dict[str, Any]:
        """The spend and the caps, JSON-ready.

        Keys: ``calls`` (HTTP attempts made), ``spent_usd`` (``None`` without prices), ``from_usage_usd``,
        ``estimated_usd``, ``calls_from_usage``, ``calls_estimated``, ``basis`` (``"usage"``, ``"estimate"``,
        ``"usage and estimate"``, ``"none"`` (no call) or ``None`` without prices), ``max_cost_usd``, ``max_calls``,
        ``cost_cap_enforced``, ``cost_cap_note``, ``reached`` (why the cap stopped the calls, or ``None``),
        ``refused`` (attempts refused).
        """
        with self._lock:
            if not self.priced:
                basis = None
            elif self.calls_from_usage and self.calls_estimated:
                basis = "usage and estimate"
            elif self.calls_estimated:
                basis = "estimate"
            elif self.calls_from_usage:
                basis = "usage"
            else:
                basis = "none"
            return {
                "calls": self.calls,
                "spent_usd": (self.from_usage_usd + self.estimated_usd) if self.priced else None,
                "from_usage_usd": self.from_usage_usd if self.priced else None,
                "estimated_usd": self.estimated_usd if self.priced else None,
                "calls_from_usage": self.calls_from_usage,
                "calls_estimated": self.calls_estimated,
                "basis": basis,
                "max_cost_usd": self.max_cost_usd,
                "max_calls": self.max_calls,
                "cost_cap_enforced": self.cost_cap_enforced,
                "cost_cap_note": self.cost_cap_note,
                "reached": self.reached,
                "refused": self.refused,
            }


def check_cap(*, max_cost: float | None, max_calls: int | None, price_in: float | None, price_out: float | None,
              max_tokens: int | None) -> str | None:
    """Why this cap cannot be enforced (an input error's message), or ``None`` when it can.

    * ``max_cost`` without ``max_tokens`` (0 in ``GOLDEVAL_JUDGE_MAX_TOKENS``: not sent): a completion is unbounded;
    * ``max_cost`` without both prices, unless ``max_calls`` is given (issue 16);
    * a cap that is negative or not finite.
    """
    if max_cost is not None and (not math.isfinite(max_cost) or max_cost < 0):
        return f"--max-cost / $GOLDEVAL_JUDGE_MAX_COST: expected a finite number of USD ≥ 0, got {max_cost!r}. Fix the value."
    if max_calls is not None and (isinstance(max_calls, bool) or not isinstance(max_calls, int) or max_calls < 0):
        return f"--max-calls / $GOLDEVAL_JUDGE_MAX_CALLS: expected an integer ≥ 0, got {max_calls!r}. Fix the value."
    if max_cost is None:
        return None
    if max_tokens is None:
        return (f"--max-cost {max_cost:g}: a cost cap needs max_tokens to bound each call's completion, but "
                "GOLDEVAL_JUDGE_MAX_TOKENS is 0 (not sent). Set GOLDEVAL_JUDGE_MAX_TOKENS to a limit (default 1024), "
                "or cap the number of calls with --max-calls instead.")
    if (price_in is None or price_out is None) and max_calls is None:
        missing = " and ".join(n for n, p in (("--price-in", price_in), ("--price-out", price_out)) if p is None)
        return (f"--max-cost {max_cost:g}: a cost cap needs both prices to estimate each call's worst case, but "
                f"{missing} {'is' if ' and ' not in missing else 'are'} not given. Pass --price-in and --price-out "
                "(USD per million tokens; or $GOLDEVAL_JUDGE_PRICE_IN / _PRICE_OUT), or cap the calls with --max-calls N.")
    return None
