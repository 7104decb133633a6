"""Reading an LLM judge's answer into a :class:`~goldeval.verdict.Verdict`: strict about meaning, forgiving about form.

Forgiving about form:
  * the verdict object may sit in a ```json fence, in prose, or after the judge's reasoning; every top-level JSON
    object in the text is found and the **last one that has a ``verdict`` key wins** (reasoning that mentions other
    labels, or an earlier draft object, never decides);
  * keys and verdict values are read case-folded, with invisible characters (zero-width U+200B–U+200D, U+2060,
    U+FEFF, the bidi marks U+200E/F and U+202A–E, U+2066–9, variation selectors…) and surrounding blanks
    removed; ``near-match`` / ``near match`` read as ``near_match``;
  * ``why`` may be spelled ``reason``, ``reasoning``, ``rationale`` or ``explanation``;
  * ``column_pairing`` may be the prompt's map ``{"<golden column>": "<answer column>"}`` or the verdict schema's
    list of ``{"golden": ..., "answer": ...}`` pairs;
  * a confidence given as ``"9"``, ``"7/10"``, ``"7 / 10"``, ``"7 out of 10"`` or ``8.0`` reads as 9, 7, 7, 7, 8;
    a non-integral number in 1–10 is rounded *down* (7.5 → 7: rounding never invents certainty);
  * a trailing comma before ``}`` or ``]`` and typographic quotes around keys are repaired; a Python dict literal
    (``{'verdict': 'match', ...}``) is read with :func:`ast.literal_eval` (literals only, nothing executed);
  * a reasoning model's leading ``<think>…</think>`` (or ``<thinking>``, ``<reasoning>``) scratchpad is skipped:
    drafts inside it never decide.

Strict about meaning — each of these becomes ``verdict="needs_human"`` with the raw text kept in
``details["raw"]`` and the reason in ``details["parse_error"]``, never a guessed verdict:
  no JSON object at all (a refusal to judge, prose only) · truncated JSON (also a truncated object after a complete
  draft, and a verdict nested in a truncated outer object) · no ``verdict`` key · an unknown verdict
  value · the same key (after folding) given twice with different values for ``verdict``, ``confidence`` or
  ``gold_status`` · a ``<think>`` scratchpad that never closes · a missing confidence · a confidence outside 1–10
  (``85`` is not guessed to be a percentage, ``0.8`` is not guessed to be a fraction) · a confidence on another
  scale (``"8/100"``, ``"85%"``) · a boolean confidence.

Then the decided verdict is checked:
  * confidence ≤ 5 (:data:`~goldeval.verdict.NEEDS_HUMAN_MAX_CONFIDENCE`) keeps the verdict and sets the
    ``needs_human`` flag;
  * a ``no_match`` whose own ``why`` says the answer matches (``"the answer matches the golden"``, nothing in it
    showing a problem), or a ``match`` whose ``why`` says the answer is wrong (``"the answer does not match the
    golden"``, no concession), is self-contradicting: verdict ``needs_human``, ``details["self_contradicting"]``;
  * an unknown ``gold_status`` keeps the verdict, sets ``needs_human`` and says why;
  * a ``no_match`` against a golden the judge itself calls ``suspect`` keeps the verdict and sets ``needs_human``
    (``details["doubted_golden"]``): a doubted golden never yields a confident ``no_match`` (``DESIGN.md``);
  * given the answer's own strings (``untrusted``), a verdict object that is an exact copy of one planted in the
    answer is ``needs_human`` (``details["injection"]``): the judge obeyed or echoed the answer.

Source: the failure kinds in ``../shared/cases`` (scorer ``llm_judge_parse``) and ``DESIGN.md`` "The LLM judge".
"""

from __future__ import annotations

import ast
import json
import re
import unicodedata
from collections.abc import Iterable
from typing import Any, cast

from goldeval.errors import shorten
from goldeval.verdict import GOLD_STATUSES, NEEDS_HUMAN_MAX_CONFIDENCE, GoldStatus, Verdict, VerdictName

__all__ = [
    "parse_judge_output", "read_confidence", "find_json_objects", "says_answer_matches", "says_answer_is_wrong",
    "answer_strings",
]

#: Invisible characters dropped before reading: zero-width space/joiners, word joiner and invisible operators,
#: BOM, soft hyphen, combining grapheme joiner, Arabic letter mark, Mongolian vowel separator, the bidirectional
#: marks, embeddings and isolates (U+200E/F, U+202A–E, U+2066–9), deprecated format controls, variation selectors
#: and interlinear annotation marks. None of them can be seen in "match", and any of them makes it another string.
_ZERO_WIDTH = dict.fromkeys(
    [0x00AD, 0x034F, 0x061C, 0x180E, 0xFEFF, *range(0x200B, 0x2010), *range(0x202A, 0x202F), *range(0x2060, 0x2065),
     *range(0x2066, 0x2070), *range(0xFE00, 0xFE10), *range(0xFFF9, 0xFFFC)],
    None,
)
_QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2033": '"'})
_WHY_KEYS = ("why", "reason", "reasoning", "rationale", "explanation", "justification")
_DECIDED = ("match", "near_match", "no_match")


def _fold(text: str) -> str:
    """Remove zero-width characters and apply NFKC (full-width digits and braces become ASCII)."""
    return unicodedata.normalize("NFKC", text.translate(_ZERO_WIDTH))


def _fold_key(key: Any) -> str:
    return _fold(str(key)).strip().lower().replace("-", "_").replace(" ", "_")


def _fold_label(value: str) -> str:
    return re.sub(r"[\s\-]+", "_", _fold(value).strip().strip(".\"'`*").lower())


_TRAILING_COMMA = re.compile(r",\s*([}\]])")


def find_json_objects(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object in *text*, in order (objects nested in another are not listed separately).

    A candidate that is not valid JSON is retried once with trailing commas removed and typographic double quotes
    straightened. Text that is not an object (a list, a number) is skipped.
    """
    return _scan(text)[0]


_KEY_START = re.compile(r"\{\s*[\"'\u201c]")
_OBJ_START = re.compile(r"\{\s*[\"'\u201c}]")
_OPEN_QUOTES = {'"': '"', "\u201c": '"\u201d', "'": "'"}


class _Obj(dict):
    """A decoded JSON object that remembers every key-value pair in order (duplicate keys included)."""

    pairs: list[tuple[str, Any]]


def _pairs_hook(pairs: list[tuple[str, Any]]) -> _Obj:
    obj = _Obj(pairs)
    obj.pairs = pairs
    return obj


_DECODER = json.JSONDecoder(object_pairs_hook=_pairs_hook)


def _scan(text: str) -> tuple[list[dict[str, Any]], int]:
    """The top-level JSON objects of *text* and the index just past the last one (0 when none).

    A ``{"`` that opens an object which never closes (truncated output) ends the scan: whatever follows is inside
    that object, so an object nested in it is not top-level and must not be read as the verdict. A ``{"`` region
    that closes but is not JSON even after repair is skipped whole, for the same reason. A bare ``{`` in prose
    (``{a, b}``) is just a character. Every region is read once, so the scan is linear in the text's length
    (a judge stuck repeating ``{`` cannot stall the run).
    """
    found: list[dict[str, Any]] = []
    i = last = 0
    while True:
        start = text.find("{", i)
        if start < 0:
            return found, last
        obj, end = _decode_at(text, start)
        if isinstance(obj, dict) and end is not None:  # (a decoded object always has its end)
            found.append(obj)
            i = last = end
        elif _KEY_START.match(text, start):
            if end is None:
                return found, last
            i = end
        else:
            i = start + 1


def _decode_at(text: str, start: int) -> tuple[Any, int | None]:
    """``(object, end)``; ``(None, None)`` when the braces never balance, ``(None, close)`` when balanced but not JSON.

    Only a ``{`` followed by a quoted key (or ``}``) is decoded: a bare ``{`` in prose cannot start an object. The
    region is cut at its balanced closing brace *before* decoding, so that each region is read once and a failed
    decode costs its region, not the rest of the text (the scan stays linear). Nesting too deep for the decoder,
    and an integer longer than Python's 4300-digit conversion limit, count as not JSON.
    """
    if not _OBJ_START.match(text, start):
        return None, None
    close = _balanced_end(text, start)
    chunk = text[start:] if close is None else text[start:close]
    try:
        obj, end = _DECODER.raw_decode(chunk)
        return obj, start + end
    except (ValueError, RecursionError):  # JSONDecodeError, or an integer past the 4300-digit limit
        pass
    if close is None:
        return None, None
    # Repair the common slips: trailing commas, typographic quotes, a Python dict literal.
    chunk = _TRAILING_COMMA.sub(r"\1", chunk.translate(_QUOTES))
    try:
        return _DECODER.decode(chunk), close
    except (ValueError, RecursionError):  # JSONDecodeError, or an integer past the 4300-digit limit
        pass
    return _python_dict(chunk), close


def _python_dict(chunk: str) -> _Obj | None:
    """A dict written as a Python literal (``{'verdict': 'match', 'confidence': 8}``), which small models emit
    for JSON; read with :func:`ast.literal_eval` (literals only, nothing is executed). ``None`` otherwise."""
    try:
        node = ast.parse(chunk.strip(), mode="eval").body
        if not isinstance(node, ast.Dict) or any(k is None for k in node.keys):
            return None
        pairs = [(ast.literal_eval(k), ast.literal_eval(v)) for k, v in zip(node.keys, node.values) if k is not None]
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        return None
    if not all(isinstance(k, str) for k, _ in pairs):
        return None
    return _pairs_hook(pairs)


def _balanced_end(text: str, start: int) -> int | None:
    """Index just past the ``}`` that closes the ``{`` at *start*, skipping braces inside ``"…"``, ``“…”`` and
    ``'…'`` strings (a string closes only on its own kind of quote); ``None`` when it never closes."""
    depth = 0
    closers = ""
    esc = False
    for j in range(start, len(text)):
        ch = text[j]
        if closers:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch in closers:
                closers = ""
        elif ch in _OPEN_QUOTES:
            closers = _OPEN_QUOTES[ch]
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return j + 1
    return None


_CONF_TEXT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(?:(/|out\s+of|of)\s*(\d+(?:\.\d+)?))?\s*[.!]?\s*$", re.IGNORECASE)


def read_confidence(value: Any) -> tuple[int | None, str | None]:
    """Read a judge's confidence as an integer 1–10.

    Args:
        value: What the judge wrote: an int, a float, or a string such as ``"9"``, ``"7/10"``, ``"7 out of 10"``.

    Returns:
        ``(confidence, None)`` when readable, else ``(None, reason)``. A fraction must be out of 10 (the scale we
        asked for); a non-integral value is rounded down; anything outside 1–10 is refused rather than rescaled.
    """
    if isinstance(value, bool) or value is None:
        return None, f"confidence must be a number 1-10, got {value!r}"
    if isinstance(value, str):
        m = _CONF_TEXT.match(_fold(value))
        if not m:
            return None, f"confidence {value!r} is not a number 1-10"
        num = float(m.group(1))
        if m.group(3) is not None and float(m.group(3)) != 10:
            return None, f"confidence {value!r} is on a scale other than 10; not rescaled"
    elif isinstance(value, int):  # compared as an int: a JSON integer of any size is no float (OverflowError)
        if not (1 <= value <= 10):
            return None, f"confidence {shorten(value, 40)} is outside 1-10; not rescaled"
        return value, None
    elif isinstance(value, float):
        num = value
    else:
        return None, f"confidence must be a number 1-10, got {type(value).__name__}"
    if not (1 <= num <= 10):
        return None, f"confidence {value!r} is outside 1-10; not rescaled"
    return int(num), None


_MATCH_CLAIM = re.compile(
    r"\b(?:answer|prediction|response|result|output|it|this|rows|values|everything)\b[^.;:!?]{0,40}?"
    r"\b(?:(?:fully|exactly|correctly|completely)\s+)?"
    r"(?:match(?:es)?|agrees?\s+with|is\s+(?:identical|equivalent)\s+to|are\s+(?:identical|equivalent)|is\s+correct|is\s+a\s+match|contains\s+(?:all|every|the\s+golden))\b",
    re.I,
)


#: Words that show the judge saw a problem somewhere in its ``why``: negation, contrast, concession, condition,
#: limitation, and the usual names of a defect. One of them anywhere means the why is not a plain claim of a match.
_QUALIFIED = re.compile(
    r"\b(not|no|never|nor|neither|nothing|none|nowhere|cannot|without|fails?|failed|"
    r"but|however|except|although|though|while|whilst|whereas|yet|despite|apart\s+from|other\s+than|instead|rather|"
    r"if|unless|would|could|should|might|only|partial|partially|partly|mostly|almost|nearly|approximately|"
    r"missing|misses|omits?|omitted|lacks?|lacking|extra|additional|wrong|incorrect|differs?|different|difference|"
    r"mismatch(?:es|ed)?|off|deviates?|instead|unlike|fewer|more\s+than|less\s+than)\b|n't\b",
    re.IGNORECASE,
)


def says_answer_matches(why: str) -> bool:
    """True when *why* plainly claims the answer matches and nothing in it qualifies the claim.

    Used to catch a self-contradicting ``no_match``. Deliberately narrow, because a false alarm is not harmless: it
    turns a decided ``no_match`` into ``needs_human``, which leaves the pass rate's denominator and so raises the
    pass rate. A why counts only when it holds a match claim (``"the answer matches the golden"``, ``"it is
    correct"``) and no word anywhere that shows a problem (:data:`_QUALIFIED`: negation, contrast, condition,
    limitation, a defect such as *missing*, *extra*, *wrong*, *differs*). ``"Nothing in the answer matches"``,
    ``"it would match if the year were 2024"`` and ``"it contains all golden rows plus extra rows"`` are not claims.
    """
    text = _fold(why)
    if _QUALIFIED.search(text):
        return False
    return bool(_MATCH_CLAIM.search(text))


_WRONG_CLAIM = re.compile(
    r"\b(?:answer|prediction|response|result|output|it|this)\b[^.;:!?]{0,40}?"
    r"(?:\b(?:does\s+not|doesn't|do\s+not|don't|fails?\s+to)\s+match\s+(?:the\s+)?(?:golden|expected|reference)\b"
    r"|\b(?:is|are)\s+(?:wrong|incorrect|not\s+correct)\b(?!\s+to\b))",
    re.IGNORECASE,
)
_CONCEDES = re.compile(r"\b(but|however|except|although|though|while|whilst|whereas|yet|only|apart\s+from|other\s+than)\b", re.IGNORECASE)


def says_answer_is_wrong(why: str) -> bool:
    """True when *why* plainly says the answer does not match the golden or is wrong, with no concession
    (*but*, *however*, *although*, *only*…) anywhere: a ``match`` with such a why contradicts itself.

    The mirror of :func:`says_answer_matches`, and as narrow: ``"the column names do not match the golden's, but
    the values are identical"`` is a match by containment, not a contradiction. A false alarm here sends a match to
    a human, which never raises the pass rate.
    """
    text = _fold(why)
    return bool(_WRONG_CLAIM.search(text)) and not _CONCEDES.search(text)


def _needs_human(raw: str, reason: str, **details: Any) -> Verdict:
    return Verdict(
        verdict="needs_human",
        confidence=None,
        needs_human=True,
        why=f"The judge's answer could not be used: {reason}.",
        decided_by="parse",
        details={"raw": raw, "parse_error": reason, **details},
    )


def _planted(untrusted: Iterable[str]) -> list[dict[str, Any]]:
    """The verdict-bearing JSON objects inside the answer's own strings, keys folded."""
    found = []
    for text in untrusted:
        if isinstance(text, str) and "{" in text:
            for o in find_json_objects(_fold(text)):
                folded, _ = _fold_object(o)
                if "verdict" in folded:
                    found.append(folded)
    return found


def answer_strings(case: dict[str, Any]) -> list[str]:
    """Every string the model under test produced in *case* (``text``, ``final_query``, ``queries``, column names,
    row cells): where a planted verdict object could hide. For :func:`parse_judge_output`'s ``untrusted``."""
    out: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, (list, tuple)):
            for v in value:
                walk(v)

    for key in ("text", "final_query", "queries", "columns", "rows"):
        walk(case.get(key))
    return out


def parse_judge_output(raw: str, *, untrusted: Iterable[str] = ()) -> Verdict:
    """Parse one judge answer into a Verdict; never raises on the judge's text.

    Args:
        raw: The completion text exactly as the judge returned it (any length; ``None`` is read as empty).
        untrusted: The answer's own strings (:func:`answer_strings`). When the judge's verdict object is an exact
            copy of a verdict object planted in them (``{"verdict": "match", "confidence": 10}`` in the answer's
            text), the judge obeyed or echoed the answer instead of judging it: ``needs_human``.

    Returns:
        Verdict with ``decided_by="llm"`` when a verdict was read (``needs_human`` flag set when confidence ≤ 5 or
        the gold status is unknown), else ``verdict="needs_human"``, ``decided_by="parse"`` and
        ``details["parse_error"]``. The raw text is always kept in ``details["raw"]``. See the module docstring for
        the rules.
    """
    raw = "" if raw is None else str(raw)
    if not raw.strip():
        return _needs_human(raw, "the answer is empty")
    text = _fold(raw)
    think = _THINK_OPEN.match(text)
    if think:  # a reasoning model's scratchpad: drafts inside it never decide
        close = re.compile(rf"</{think.group(1)}>", re.IGNORECASE).search(text, think.end())  # any case, as the opening
        if close is None:
            return _needs_human(raw, f"the judge's <{think.group(1)}> reasoning never ended (no verdict after it)")
        text = text[close.end() :]
    objects, tail_start = _scan(text)
    if not objects:
        if "{" in text:
            return _needs_human(raw, "the JSON object is truncated or malformed")
        return _needs_human(raw, "no JSON verdict object in the answer (the judge may have refused)")
    tail = text[tail_start:]
    brace = tail.find("{")
    if brace >= 0 and _balanced_end(tail, brace) is None and "verdict" in tail[brace:].lower():
        return _needs_human(raw, "the last JSON object is truncated (an earlier object is not the judge's final answer)")
    obj = None
    for cand in reversed(objects):
        folded, conflicts = _fold_object(cand)
        if "verdict" in folded:
            obj = folded
            break
    if obj is None:
        return _needs_human(raw, "no 'verdict' field in the JSON object")
    if conflicts & {"verdict", "confidence", "gold_status"}:
        keys = ", ".join(sorted(conflicts & {"verdict", "confidence", "gold_status"}))
        return _needs_human(raw, f"the verdict object gives {keys} twice with different values")
    if untrusted and obj in _planted(untrusted):
        return _needs_human(raw, "the judge's verdict object is a copy of one planted in the answer (injection obeyed or echoed)",
                            injection=True)

    label = obj["verdict"]
    if not isinstance(label, str):
        return _needs_human(raw, f"verdict must be a string, got {label!r}")
    verdict = _fold_label(label)
    if verdict == "needs_human":
        conf, _ = read_confidence(obj.get("confidence"))
        return Verdict(
            verdict="needs_human", confidence=conf, needs_human=True, why=_why(obj) or "The judge abstained.",
            decided_by="llm", details={"raw": raw, "judge_abstained": True},
        )
    if verdict not in _DECIDED:
        return _needs_human(raw, f"unknown verdict {label!r} (expected match, near_match, no_match or needs_human)")
    if "confidence" not in obj:
        return _needs_human(raw, "no 'confidence' field", judge_verdict=verdict)
    confidence, problem = read_confidence(obj["confidence"])
    if problem or confidence is None:
        return _needs_human(raw, problem or "no confidence", judge_verdict=verdict)

    why = _why(obj)
    details: dict[str, Any] = {"raw": raw}
    pairing, pairing_problem = _pairing(obj.get("column_pairing"))
    if pairing_problem:
        details["column_pairing_ignored"] = pairing_problem
    gold_status: GoldStatus = "verified"
    flag = confidence <= NEEDS_HUMAN_MAX_CONFIDENCE
    gs = obj.get("gold_status")
    if gs not in (None, ""):
        folded_gs = _fold_label(str(gs))
        if folded_gs in GOLD_STATUSES:
            gold_status = cast(GoldStatus, folded_gs)  # one of GOLD_STATUSES, checked just above
        else:
            flag = True
            details["gold_status_unknown"] = str(gs)
    gold_note = obj.get("gold_note")
    gold_note = None if gold_note in (None, "") else str(gold_note)
    if verdict == "no_match" and gold_status == "suspect":  # a doubted golden never yields a confident no_match
        flag = True
        details["doubted_golden"] = True

    if why and ((verdict == "no_match" and says_answer_matches(why)) or (verdict == "match" and says_answer_is_wrong(why))):
        details.update(self_contradicting=True, judge_verdict=verdict)
        return Verdict(
            verdict="needs_human", confidence=confidence, needs_human=True,
            why=f"Self-contradicting: verdict {verdict}, but the judge wrote: {why}",
            column_pairing=pairing, gold_status=gold_status, gold_note=gold_note, decided_by="llm", details=details,
        )
    return Verdict(
        # the verdict is one of _DECIDED (checked above)
        verdict=cast(VerdictName, verdict), confidence=confidence, needs_human=flag, why=why or "",
        column_pairing=pairing, gold_status=gold_status, gold_note=gold_note, decided_by="llm", details=details,
    )


_THINK_OPEN = re.compile(r"\s*<(think|thinking|reasoning)>", re.IGNORECASE)


def _fold_object(obj: dict[str, Any]) -> tuple[dict[str, Any], set[str]]:
    """Keys folded (case, zero-width, ``-``/space → ``_``), and the folded keys given twice with different values
    (``{"Verdict": "match", "verdict": "no_match"}``, or an exact repeat: JSON parsers silently keep the last)."""
    folded: dict[str, Any] = {}
    conflicts: set[str] = set()
    for k, v in getattr(obj, "pairs", None) or obj.items():
        fk = _fold_key(k)
        if fk in folded and folded[fk] != v:
            conflicts.add(fk)
        folded[fk] = v
    return folded, conflicts


def _why(obj: dict[str, Any]) -> str:
    for key in _WHY_KEYS:
        val = obj.get(key)
        if isinstance(val, str) and val.strip():
            return val.strip()
    return ""


def _pairing(value: Any) -> tuple[dict[str, str | None], str | None]:
    """The pairing as ``{golden column: answer column or None}`` from the prompt's map, or from the list of
    ``{"golden", "answer"}`` pairs the verdict schema asks for (:mod:`goldeval.llm.response_format`)."""
    if value in (None, "", {}, []):
        return {}, None
    if isinstance(value, list):
        pairs: dict[str, Any] = {}
        for item in value:
            item = _fold_object(item)[0] if isinstance(item, dict) else None
            if item is None or not isinstance(item.get("golden"), str):
                return {}, "column_pairing as a list must hold {\"golden\": ..., \"answer\": ...} objects"
            pairs[item["golden"]] = item.get("answer")
        value = pairs
    if not isinstance(value, dict):
        return {}, f"column_pairing must be an object, got {type(value).__name__}"
    out: dict[str, str | None] = {}
    for k, v in value.items():
        out[str(k)] = None if v in (None, "", "null") else str(v)
    return out, None
