"""goldeval.answers.rubric: each clause's marker, the verdict it fixes, and the part it played in the verdict.

The expected verdicts are the doctrine's marker table (DESIGN.md "Data answers", *Rubric markers*): PREFERRED,
ACCEPT → match; DIVERGENT → near_match; WRONG → no_match; REQUIRED omitted → no_match; CREDITED (and unmarked
clauses) omitted → match. The clauses are the clinic example's (examples/sql/cases.jsonl q13 and q14).
"""

from __future__ import annotations

import pytest

from goldeval.answers.rubric import MARKER_EFFECTS, clause_roles

Q13 = ["REQUIRED: names the busiest and the quietest month", "CREDITED: gives monthly counts", "WRONG: reports a steady decline"]
Q14 = ["PREFERRED: counts by admission date", "ACCEPT: counts by discharge date, if the answer says so"]


def roles(rubric, **kw):
    return [(c["marker"], c["role"]) for c in clause_roles(rubric, **kw)]


@pytest.mark.parametrize(("marker", "fixes", "when"), [
    ("PREFERRED", "match", "present"), ("ACCEPT", "match", "present"), ("DIVERGENT", "near_match", "present"),
    ("WRONG", "no_match", "present"), ("REQUIRED", "no_match", "omitted"), ("CREDITED", None, "omitted")])
def test_each_marker_fixes_the_verdict_of_the_doctrine_table(marker, fixes, when):
    (c,) = clause_roles([f"{marker}: some clause"], verdict=None, why=None, decided_by=None)
    assert (c["marker"], c["text"], c["fixes"], c["when"]) == (marker, "some clause", fixes, when)
    assert MARKER_EFFECTS[marker] == (fixes, when)


def test_an_unmarked_clause_and_an_unknown_marker_are_credited():
    got = clause_roles(["gives monthly counts", {"marker": "bogus", "text": "x"}], verdict=None, why=None, decided_by=None)
    assert [(c["marker"], c["text"]) for c in got] == [("CREDITED", "gives monthly counts"), ("CREDITED", "x")]
    assert got[0]["effect"] == "credited: omitting it still leaves a match"


def test_the_recorded_form_reads_as_the_case_file_form():
    recorded = [{"marker": "PREFERRED", "text": "counts by admission date"},
                {"marker": "ACCEPT", "text": "counts by discharge date, if the answer says so"}]
    assert clause_roles(recorded, verdict=None, why=None, decided_by=None) == clause_roles(Q14, verdict=None, why=None, decided_by=None)


def test_a_why_that_names_the_only_clause_of_a_marker_with_its_verdict_decided_by_it():
    # tests/e2e/test_report_browser.py's judge answer for q13: names WRONG (q13's only WRONG clause), verdict no_match
    why = "Reports a steady decline, which the rubric marks WRONG."
    assert roles(Q13, verdict="no_match", why=why, decided_by="llm") == [("REQUIRED", None), ("CREDITED", None), ("WRONG", "decided")]


def test_a_why_that_holds_the_clause_words_decided_by_it_case_and_punctuation_aside():
    why = "Counts by DISCHARGE date -- if the answer says so; it does."
    assert roles(Q14, verdict="match", why=why, decided_by="llm") == [("PREFERRED", None), ("ACCEPT", "decided")]


def test_a_cited_clause_whose_verdict_the_judge_did_not_give_is_cited_or_overridden_never_decided():
    # the doctrine's anchor: a DIVERGENT method with a wrong figure is no_match, and the why says the clause was overridden
    rubric = ["DIVERGENT: divides by clicks instead of visits"]
    why = 'The rate is wrong; rubric clause "divides by clicks instead of visits" was overridden.'
    assert roles(rubric, verdict="no_match", why=why, decided_by="llm") == [("DIVERGENT", "overridden")]
    # cited without an override (the REQUIRED clause met, a match): cited
    why = "Names the busiest and the quietest month, as REQUIRED."
    assert roles(Q13, verdict="match", why=why, decided_by="llm")[0] == ("REQUIRED", "cited")


def test_no_clause_is_cited_by_a_why_that_does_not_name_it():
    # "ACCEPT" twice in the rubric: naming the marker alone does not say which; the words of neither are in the why
    rubric = ["ACCEPT: counts transfers", "ACCEPT: counts day cases"]
    assert roles(rubric, verdict="match", why="Right count; the rubric's ACCEPT covers it.", decided_by="llm") == [("ACCEPT", None)] * 2
    assert roles(Q14, verdict="match", why="347 emergency admissions, as the golden.", decided_by="llm") == [("PREFERRED", None), ("ACCEPT", None)]
    # a one-word clause is not cited by a why that uses the word (the marker, named alone, still cites it)
    assert roles(["DIVERGENT: weekly", "ACCEPT: x y"], verdict="near_match", why="Weekly figures, right.", decided_by="llm") == [
        ("DIVERGENT", None), ("ACCEPT", None)]
    assert roles(["DIVERGENT: weekly"], verdict="near_match", why="Weekly figures, which the rubric marks DIVERGENT.",
                 decided_by="llm") == [("DIVERGENT", "decided")]
    # a why that mentions "steady" but not the clause's words in order
    assert roles(Q13, verdict="no_match", why="Not a steady account of the decline.", decided_by="llm")[2] == ("WRONG", None)


def test_only_an_llm_verdict_cites_a_clause():
    # the rules decide no verdict by a clause (answer.py hands such cases to the LLM judge): a rule verdict whose why
    # happens to hold a clause's words marks nothing
    why = "0 of 1 golden rows located; counts by discharge date, if the answer says so"
    assert roles(Q14, verdict="no_match", why=why, decided_by="rule") == [("PREFERRED", None), ("ACCEPT", None)]


def test_the_clauses_a_rule_verdict_was_held_open_for_are_marked():
    # answer.py's reason for q14 (arm B: 301 against 347, ACCEPT and PREFERRED clauses), as the judged record keeps it
    held = "an ACCEPT/PREFERRED/DIVERGENT rubric clause may cover this answer"
    assert roles(Q14, verdict="needs_human", why="By rule: …", decided_by="rule", undecided_because=held) == [
        ("PREFERRED", "held_open"), ("ACCEPT", "held_open")]
    assert roles(Q13, verdict="needs_human", why="…", decided_by="rule", undecided_because="a REQUIRED rubric clause may be unmet") == [
        ("REQUIRED", "held_open"), ("CREDITED", None), ("WRONG", None)]
    # a criteria golden: all its clauses are the key, none singled out; a final rule verdict holds nothing open
    assert roles(Q13, verdict="needs_human", why="…", decided_by="rule", undecided_because="criteria golden") == [
        ("REQUIRED", None), ("CREDITED", None), ("WRONG", None)]
    assert roles(Q14, verdict="no_match", why="…", decided_by="rule", undecided_because=held) == [("PREFERRED", None), ("ACCEPT", None)]


def test_no_rubric_is_no_clause():
    assert clause_roles(None, verdict="match", why="x", decided_by="llm") == []
    assert clause_roles([], verdict="match", why="x", decided_by="llm") == []
