"""A golden prepared once per database (issue 15: a many-database set asks the same canonical query again and again).

What the database tells about a golden that only names its canonical query (its rows, the doubts, the tie rows)
is remembered per open database: the second case with the same golden runs none of those queries again, and its
verdict and materials are those a fresh database gives. No timing here (benchmarks/bench_judge_cli.py times it).
"""

from __future__ import annotations

import sqlite3

from goldeval.answers import AnswerConfig, ReadOnlyDatabase, judge_case
from goldeval.answers import case as case_mod


class _Counting(ReadOnlyDatabase):
    """A read-only database that counts the queries it runs."""

    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.ran: list[str] = []

    def execute(self, sql):
        self.ran.append(sql)
        return super().execute(sql)


def _db(tmp_path, cls=ReadOnlyDatabase):
    # Made up, with the shapes the preparation looks at: a literal some rows hold only folded ('dog' for 'Dog'),
    # and a tie at the LIMIT boundary (Bouvet and Heard both at population 0).
    path = tmp_path / "p.sqlite"
    if not path.exists():
        con = sqlite3.connect(path)
        con.execute("CREATE TABLE pets (petid INTEGER, pettype TEXT, weight REAL)")
        con.executemany("INSERT INTO pets VALUES (?, ?, ?)", [(1, "cat", 12.0), (2, "dog", 13.4), (3, "dog", 9.3)])
        con.execute("CREATE TABLE country (name TEXT, population INTEGER)")
        con.executemany("INSERT INTO country VALUES (?, ?)", [("Bouvet", 0), ("Heard", 0), ("Nauru", 12000)])
        con.commit()
        con.close()
    return cls(path)


CASES = [
    ({"id": "a", "question": "Weights of dogs or of pet 1?",
      "golden": {"kind": "value", "canonical_query": "SELECT weight FROM pets WHERE pettype = 'Dog' OR petid = 1"}},
     {"id": "a", "final_query": "SELECT weight FROM pets"}),
    # The same golden worded another way (Spider's paraphrased questions), another answer.
    ({"id": "b", "question": "What do the dogs, and pet 1, weigh?",
      "golden": {"canonical_query": "SELECT weight FROM pets WHERE pettype = 'Dog' OR petid = 1", "kind": "value"}},
     {"id": "b", "final_query": "SELECT weight FROM pets WHERE petid = 1"}),
    ({"id": "c", "question": "Which country has the fewest people?",
      "golden": {"kind": "value", "canonical_query": "SELECT name FROM country ORDER BY population LIMIT 1"}},
     {"id": "c", "final_query": "SELECT name FROM country WHERE population = 0 LIMIT 1 OFFSET 1"}),
    ({"id": "d", "question": "Name the least populous country.",
      "golden": {"kind": "value", "canonical_query": "SELECT name FROM country ORDER BY population LIMIT 1"}},
     {"id": "d", "final_query": "SELECT name FROM country ORDER BY population LIMIT 1"}),
    ({"id": "e", "question": "Broken golden?",
      "golden": {"kind": "value", "canonical_query": "SELECT x FROM nowhere"}},
     {"id": "e", "final_query": "SELECT 1"}),
    ({"id": "f", "question": "Broken golden, again?",
      "golden": {"kind": "value", "canonical_query": "SELECT x FROM nowhere"}},
     {"id": "f", "final_query": "SELECT 1"}),
]


def _judged(case, att, db):
    res = judge_case(case, att, db=db, config=AnswerConfig())
    return res.outcome.to_dict(), res.materials


def test_a_golden_asked_again_is_judged_as_on_a_fresh_database(tmp_path):
    shared = _db(tmp_path, _Counting)
    for case, att in CASES:
        fresh = _db(tmp_path)
        assert _judged(case, att, shared) == _judged(case, att, fresh), case["id"]
        fresh.close()
    # The doubts and the ties were worked out: the verdicts are not trivial ones.
    out = {c["id"]: _judged(c, a, shared)[0] for c, a in CASES}
    # Case a's answer (every pet's weight) disagrees with the golden (pet 1 only), so the data doubts run: 'Dog' holds
    # 0 rows, 2 folded, and folded the golden is the three pets, which is the answer. Case b's answer is the golden's
    # row: a match asks no data probe (issue 26, speed), so its golden stays verified.
    assert out["a"]["verdict"] == "match" and out["a"]["gold_status"] == "verified_wrong"
    assert "'dog' (2 rows)" in out["a"]["gold_note"]
    assert out["b"]["verdict"] == "match" and out["b"]["gold_status"] == "verified"
    assert out["c"]["verdict"] == "match" and "tied" in out["c"]["why"]
    assert out["f"]["status"] == "unscored" and "case 'f'" in out["f"]["reason"] and "no such table" in out["f"]["reason"]
    shared.close()


def test_the_second_case_with_the_same_golden_runs_only_its_own_query(tmp_path):
    db = _db(tmp_path, _Counting)
    judge_case(*CASES[0], db=db, config=AnswerConfig())
    first = list(db.ran)
    db.ran.clear()
    judge_case(*CASES[1], db=db, config=AnswerConfig())
    # Case a ran the canonical query, the literal check and the tie-pool query besides its own, and read the text
    # values of the pets columns its golden compares (pettype, petid) in one statement (the data doubts' read, issue
    # 26 item 2, h12: kept for this database). Case b, a match, compares pets.pettype: its column gate is answered
    # from that read, so it runs its own query and the declared column types (PRAGMA table_info, read once per
    # database) only, and no canonical query again.
    assert len(first) >= 3 and db.ran[0] == CASES[1][1]["final_query"]
    assert sum(1 for s in first if s.startswith("SELECT (SELECT json_group_array") and '"pets"' in s) == 1
    rest = [s for s in db.ran[1:] if not s.startswith("PRAGMA table_info")]
    assert rest == []
    db.ran.clear()
    judge_case(*CASES[1], db=db, config=AnswerConfig())
    assert db.ran == [CASES[1][1]["final_query"]]  # the gate is remembered for this database
    # The failed canonical query is remembered as its message, not run again.
    judge_case(*CASES[4], db=db, config=AnswerConfig())
    db.ran.clear()
    judge_case(*CASES[5], db=db, config=AnswerConfig())
    assert db.ran == []  # the golden fails, so the case is unscored before its own query runs
    db.close()


def test_changing_one_case_golden_leaves_the_next_one_alone(tmp_path):
    db = _db(tmp_path)
    res = judge_case(*CASES[2], db=db, config=AnswerConfig())
    res.materials["golden"]["rows"][0][0] = "changed"
    res.materials["golden"]["rows"].append(["more"])
    again = judge_case(*CASES[3], db=db, config=AnswerConfig())
    assert again.materials["golden"]["rows"] == [["Bouvet"]]
    assert again.outcome.verdict.verdict == "match"
    db.close()


def test_goldens_with_their_own_rows_are_not_remembered_and_the_memory_is_bounded(tmp_path, monkeypatch):
    db = _db(tmp_path)
    given = {"id": "g", "question": "Weights?", "golden": {"kind": "value", "columns": ["weight"], "rows": [[12.0]],
                                                            "canonical_query": "SELECT weight FROM pets WHERE petid = 1"}}
    judge_case(given, {"id": "g", "final_query": "SELECT 12.0"}, db=db, config=AnswerConfig())
    assert not case_mod._PREPARED.get(db)
    monkeypatch.setattr(case_mod, "_PREPARED_ENTRIES", 2)
    for i in range(4):
        c = {"id": str(i), "question": "q", "golden": {"kind": "value", "canonical_query": f"SELECT {i}"}}
        judge_case(c, {"id": str(i), "final_query": "SELECT 1"}, db=db, config=AnswerConfig())
    assert len(case_mod._PREPARED[db]) == 2  # the two most recent goldens
    db.close()


def test_without_materials_the_outcome_is_the_same(tmp_path):
    # The scorer builds an LLM judge's materials only when it keeps them (--llm): the outcome does not depend on it.
    db = _db(tmp_path)
    for case, att in CASES:
        with_m = judge_case(case, att, db=_db(tmp_path), config=AnswerConfig())
        without = judge_case(case, att, db=db, config=AnswerConfig(), materials=False)
        assert without.outcome.to_dict() == with_m.outcome.to_dict()
        assert without.materials == {"id": case["id"]}
        # (an unscored golden carries no materials either way: nothing for an LLM judge to read)
        assert with_m.materials.get("rule", with_m.outcome.to_dict()) == with_m.outcome.to_dict()
    assert sum("rule" in judge_case(c, a, db=db, config=AnswerConfig()).materials for c, a in CASES) == 4
    db.close()


def _json_key(canonical, golden, rel_tol):
    """The key's definition (see case._prepared_key): the JSON text of the query, golden and tolerance."""
    import json

    try:
        return json.dumps([canonical, golden, rel_tol], sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):
        return None


def test_the_prepared_key_tells_goldens_apart_exactly_as_their_json_does():
    # Two goldens share a key exactly when their JSON texts (the definition) are equal, on goldens of text and
    # booleans (keyed by a tuple) and of everything else (keyed by the JSON text): "1" / 1 / 1.0 / True, key order,
    # -0.0 and 0.0 tolerances, a NaN tolerance (not cached), a nested top_n, random mixes of these.
    import itertools
    import random

    q = "SELECT name FROM t ORDER BY x LIMIT 1"
    values = ["1", 1, 1.0, True, False, "true", None, "value", {"by": "x", "n": 1}, ["a"], 0.0, -0.0]
    goldens = [{"kind": "value", "canonical_query": q}, {"canonical_query": q, "kind": "value"},
               {"kind": "value", "canonical_query": q, "ordered": True}, {"kind": "value", "canonical_query": q, "ordered": 1},
               {"kind": "value", "canonical_query": q, "rows": None}, {"kind": "value", "canonical_query": q, "top_n": {"by": "x"}}]
    rng = random.Random(15)
    for _ in range(300):
        goldens.append({"canonical_query": q, **{rng.choice("abcd"): rng.choice(values) for _ in range(rng.randint(0, 3))}})
    tolerances = [1e-9, 1e-9 + 1e-24, 0.0, -0.0, 1, float("nan"), float("inf"), 1e-6]
    items = [(g, t) for g in goldens for t in tolerances]
    keys = [(case_mod._prepared_key(q, g, AnswerConfig(rel_tol=t)), _json_key(q, g, t)) for g, t in items]
    for (k1, j1), (k2, j2) in itertools.combinations(rng.sample(keys, 400), 2):
        assert (k1 == k2) == (j1 == j2), (k1, k2)
    for k, j in keys:
        assert (k is None) == (j is None)
        hash(k)  # a key of the cache
    assert case_mod._prepared_key(q, goldens[0], AnswerConfig()) == case_mod._prepared_key(q, goldens[1], AnswerConfig())
    assert case_mod._prepared_key(q, goldens[2], AnswerConfig()) != case_mod._prepared_key(q, goldens[3], AnswerConfig())


def test_the_cache_keeps_the_query_rows_as_tuples_and_hands_out_new_lists(tmp_path):
    # The cached golden holds the canonical query's row tuples (nothing to copy or change); a case that hits it gets
    # row lists equal to those the preparation gave the first case, and none of them shared.
    db = _db(tmp_path)
    first = judge_case(*CASES[0], db=db, config=AnswerConfig())
    (kept, _, cells, _), = [v for v in case_mod._PREPARED[db].values() if not isinstance(v, str)]
    assert isinstance(kept["rows"], tuple) and all(isinstance(r, tuple) for r in kept["rows"])
    # (only pet 1 is kept: no pettype is 'Dog' exactly)
    assert [list(r) for r in kept["rows"]] == first.materials["golden"]["rows"] == [[12.0]]
    # The cells counted are the golden's; its folded result ('Dog' folded keeps the three pets: issue 26, item 2),
    # asked because case a's answer disagrees, is kept beside it in the data doubts' memory, 3 cells.
    assert "normalised_result" not in kept and cells == 1
    (found, norm, n), = case_mod._DOUBTED[db].values()
    assert found[0] == "suspect" and len(norm["rows"]) == 3 and n == 3 == case_mod._DOUBTED[db].cells
    golden = dict(CASES[1][0]["golden"])
    hit, _ = case_mod._prepared_golden(db, golden["canonical_query"], golden, AnswerConfig())
    assert hit["rows"] == first.materials["golden"]["rows"] and all(type(r) is list for r in hit["rows"])
    assert not any(a is b for a in hit["rows"] for b in first.materials["golden"]["rows"])
    db.close()


def test_goldens_judged_without_materials_share_rows_the_judge_leaves_unchanged(tmp_path):
    # Without materials the golden goes to judge_answer only, so the cases of one query share its row lists (made
    # once, by the first case of the query): the judge reads them and never changes them (each case below would see the
    # change), and every verdict is the one a fresh database gives. A case with materials still gets its own rows.
    import copy

    db = _db(tmp_path)
    for case, att in CASES:
        judge_case(case, att, db=db, config=AnswerConfig(), materials=False)
    before = copy.deepcopy(dict(case_mod._PREPARED[db]))
    for _ in range(2):
        for case, att in CASES:
            fresh = judge_case(case, att, db=_db(tmp_path), config=AnswerConfig(), materials=False)
            again = judge_case(case, att, db=db, config=AnswerConfig(), materials=False)
            assert again.outcome.to_dict() == fresh.outcome.to_dict(), case["id"]
    after = dict(case_mod._PREPARED[db])
    assert after == before | {k: v[:3] + (after[k][3],) for k, v in before.items() if not isinstance(v, str)}
    shared = [v[3] for v in after.values() if not isinstance(v, str)]
    assert shared and all(s == [list(r) for r in v[0]["rows"]] for s, v in zip(shared, (v for v in after.values() if not isinstance(v, str))))
    with_m = judge_case(*CASES[1], db=db, config=AnswerConfig())
    assert not any(r is s for r in with_m.materials["golden"]["rows"] for v in shared for s in v)
    db.close()


def test_the_data_doubts_memory_is_bounded_by_entries_and_cells(tmp_path, monkeypatch):
    # Six goldens that differ only in a clause that keeps nothing ("OR i = -1"): each is pet 1 ([12.0]) as typed and
    # the three pets folded ('Dog' holds the two 'dog' rows only folded): 3 cells of folded result each. The answer
    # (pet 2, [13.4]) disagrees, so each golden's data doubts are asked and remembered: past 16 cells the least
    # recently used goes (5 kept, 15 cells); past 2 entries, all but the two most recent.
    db = _db(tmp_path)
    monkeypatch.setattr(case_mod, "_PREPARED_CELLS", 16)

    def judge(i):
        c = {"id": str(i), "question": "Weights?", "golden": {
            "kind": "value", "canonical_query": f"SELECT weight FROM pets WHERE pettype = 'Dog' OR petid = 1 OR {i} = -1"}}
        return judge_case(c, {"id": str(i), "final_query": "SELECT weight FROM pets WHERE petid = 2"}, db=db,
                          config=AnswerConfig()).outcome.verdict

    for i in range(6):
        v = judge(i)
        assert v.verdict == "needs_human" and v.gold_status == "suspect"
    memo = case_mod._DOUBTED[db]
    assert len(memo) == 5 and memo.cells == 15
    monkeypatch.setattr(case_mod, "_PREPARED_ENTRIES", 2)
    judge(6)
    assert len(memo) == 2 and memo.cells == 6
    db.close()
