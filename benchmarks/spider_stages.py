"""Where one Spider case's time goes, stage by stage (issue 31 item 5, fourth pass; a diagnosis, not a goal's benchmark).

Cases are classed by whether their golden query was seen before in the pass (``first``/``seen``) and how they were
judged (the exact path, another match, anything else); each stage's time is exclusive of the stages nested in it
(each timer adds ~0.5-1 us). The stages are goldeval's own functions, wrapped by name, so this script follows the
code it measures and breaks loudly (AttributeError) when a wrapped name goes.

    python benchmarks/spider_stages.py --src src --file spider_dinsql-gpt4_cases.jsonl [--db small|world_1|...]
"""

# ruff: noqa: E402  (goldeval is imported from --src, put on sys.path first)
import argparse
import json
import sys
import tempfile
import time
import collections
import statistics
import gc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--src", default=str(ROOT / "src"), help="the goldeval source tree to measure (default: this one's)")
ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "spider"), help="the Spider data folder")
ap.add_argument("--file", default="spider_dinsql-gpt4_cases.jsonl", help="the published answers file in --data")
ap.add_argument("--db", default=None, help="only this database's rows, or 'small' for all but world_1")
args = ap.parse_args()
sys.path.insert(0, str(ROOT / "examples" / "spider"))
from to_cli import convert

src = str(Path(args.src).resolve())
sys.path.insert(0, src)
import goldeval

assert goldeval.__file__.startswith(src), goldeval.__file__
from goldeval.answers import AnswerConfig
from goldeval.pipeline.files import judge_file

fname, dbsel = args.file, args.db
data = Path(args.data)
rows = [json.loads(line) for line in (data / fname).read_text().splitlines() if line.strip()]
first = rows[:1]
if dbsel == "small":
    rows = [r for r in rows if r["db_id"] != "world_1"]
elif dbsel:
    rows = [r for r in rows if r["db_id"] == dbsel]
work = Path(tempfile.mkdtemp(prefix="goldeval-stages-"))
for name, subset in (("full", rows), ("one", first)):
    c, a = convert(subset)
    (work / f"{name}_c.jsonl").write_text("".join(json.dumps(x) + "\n" for x in c))
    (work / f"{name}_a.jsonl").write_text("".join(json.dumps(x) + "\n" for x in a))
cfg = AnswerConfig(timeout_s=10.0, db_dir=str(data / "database"))
judge_file(str(work / "one_c.jsonl"), str(work / "one_a.jsonl"), config=cfg)
import goldeval.answers.case as C
import goldeval.answers.doubt as DB
import goldeval.answers.sql as S
import goldeval.answers.answer as A
import goldeval.answers.table as T
import goldeval.answers.scorer as SC
import goldeval.verdict as VD

pc = time.perf_counter
cur = {}
stack = []


def wrap(mod, name, label):
    f = getattr(mod, name)

    def w(*a, **k):
        t = pc()
        stack.append(0.0)
        try:
            return f(*a, **k)
        finally:
            dt = pc() - t
            inner = stack.pop()
            cur[label] = cur.get(label, 0.0) + dt - inner  # exclusive of nested wrapped stages
            if stack:
                stack[-1] += dt

    setattr(mod, name, w)


wrap(S.ReadOnlyDatabase, "execute", "guard: signals held, deadline, checks")
wrap(S.ReadOnlyDatabase, "_execute_sqlite_inner", "SQLite prepare+run (authorizer, progress callbacks)")
wrap(S.ReadOnlyDatabase, "_fetch_limited", "rows fetched (bounded blocks)")
nstmt = [0]
_ex = S.ReadOnlyDatabase.execute


def _cnt(self, sql):
    nstmt[0] += 1
    cur["statements"] = cur.get("statements", 0) + 1e-6
    return _ex(self, sql)


S.ReadOnlyDatabase.execute = _cnt
wrap(C, "filter_doubt", "filter_doubt")
wrap(DB, "query_tokens", "sqlglot tokens")
wrap(C, "_match_may_be_fragile", "fragility gate (py)")
wrap(C, "_data_doubts", "data doubts (py)")
wrap(A, "check_golden", "check_golden")
wrap(A, "table_columns", "golden typing (table_columns)")
wrap(A, "judge_table", "judge_table (other)")
wrap(T, "_exact_match", "exact path")
wrap(C, "judge_answer", "judge_answer (own)")
wrap(C, "_prepared_golden", "prepared golden (own)")
wrap(C, "execute_remembered", "execute_remembered (own)")
wrap(C, "relabel_verdict", "relabel")
wrap(C, "direction_doubt", "direction")
wrap(C, "limit_tie_rows", "tie rows")
wrap(C, "deferred_tie_pool", "deferred tie pool")
rec = [0.0]
_td = VD.CaseOutcome.to_dict


def _td2(self):
    t = pc()
    try:
        return _td(self)
    finally:
        rec[0] += pc() - t


VD.CaseOutcome.to_dict = _td2
exact_hit = []
orig_exact = T._exact_match


def ex(*a, **k):
    r = orig_exact(*a, **k)
    exact_hit.append(r is not None)
    return r


T._exact_match = ex
wrap(T, "_exact_match", "exact path")
seen = set()
per = []
orig_jc = C.judge_case


def jc(case, attempt, *, db=None, **k):
    global cur
    cur = {}
    exact_hit.clear()
    stack.append(0.0)
    t = pc()
    r = orig_jc(case, attempt, db=db, **k)
    dt = pc() - t
    inner = stack.pop()
    cur["judge_case (own)"] = dt - inner
    key = (id(db), (case.get("golden") or {}).get("canonical_query"))
    firstseen = key not in seen
    seen.add(key)
    v = r.outcome.verdict
    cls = (
        ("first" if firstseen else "seen")
        + "/"
        + ("exact" if any(exact_hit) else ("match" if v is not None and v.verdict == "match" else "other"))
    )
    per.append((cls, dt, dict(cur)))
    return r


C.judge_case = jc
SC.judge_case = jc
gc.collect()
gc.freeze()
t = pc()
t0 = time.process_time()
res = judge_file(str(work / "full_c.jsonl"), str(work / "full_a.jsonl"), config=cfg)
tot = pc() - t
# record outside judge_case: attribute to_dict to last case
jc_sum = sum(p[1] for p in per)
print(
    f"{fname} {dbsel or 'all'}: {len(rows)} cases, total {tot * 1e3:.1f} ms ({tot / len(rows) * 1e3:.3f} ms a case); judge_case sum {jc_sum * 1e3:.1f} ms; "
    f"records (to_dict) {rec[0] * 1e3:.1f} ms ({rec[0] / len(rows) * 1e6:.1f} us a case); reading, pairing, engine, aggregate (the rest) {(tot - jc_sum - rec[0]) * 1e3:.1f} ms ({(tot - jc_sum - rec[0]) / len(rows) * 1e6:.1f} us a case)"
)
classes = collections.defaultdict(list)
for cls, dt, st in per:
    classes[cls].append((dt, st))
labels = sorted({k for _, _, st in per for k in st})
for cls in sorted(classes):
    L_ = classes[cls]
    tot_c = sum(d for d, _ in L_)
    print(
        f"\n{cls}: {len(L_)} cases, median {statistics.median(d for d, _ in L_) * 1e3:.3f} ms, mean {tot_c / len(L_) * 1e3:.3f} ms, sum {tot_c * 1e3:.1f} ms"
    )
    sums = collections.Counter()
    for _, st in L_:
        for k, v in st.items():
            sums[k] += v
    for k, v in sums.most_common():
        if k == "statements":
            print(f"   {v * 1e6 / len(L_):8.2f} statements a case")
            continue
        print(f"   {v / len(L_) * 1e6:8.1f} us a case  {v / tot_c * 100:5.1f}%  {k}")
