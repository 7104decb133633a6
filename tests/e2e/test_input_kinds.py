"""Issue 29 item 7: inputs as users have them, each kind run through the CLI as a user would.

Compressed files (gzip, bzip2, xz, Zstandard) are read by their magic bytes, whatever their name; a UTF-16 or UTF-32
file with a byte order mark is decoded; a file that is one JSON array (pretty-printed or on one line) is read as
rows numbered by element; a ``.tsv`` is read as tab-separated. What cannot be read is refused with advice that fits
the bytes (never ``iconv -f latin1`` for a compressed file), and ``--store`` naming a file that is not a store is a
usage error (exit 2).

Every readable kind holds the same 200 pilot claims as ``claims.jsonl``, so each must give its numbers: by hand,
36 tp, 6 fp, 4 fn, 154 tn; F1 = 2·36 / (2·36 + 6 + 4) = 72/82.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import json
import lzma
import sqlite3

import pytest
import zstandard
from click.testing import CliRunner

from goldeval.cli import main
from goldeval.errors import InputError
from goldeval.io.reading import not_utf8_advice, read_jsonl, read_rows

F1 = 72 / 82


def pilot_rows() -> list[dict]:
    gold = ["escalate"] * 40 + ["approve"] * 160
    pred = ["escalate"] * 36 + ["approve"] * 4 + ["escalate"] * 6 + ["approve"] * 154
    return [{"id": f"claim-{i:03d}", "gold": g, "pred": p} for i, (g, p) in enumerate(zip(gold, pred))]


JSONL = "".join(json.dumps(r) + "\n" for r in pilot_rows()).encode("utf-8")


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def labels(path):
    """`goldeval labels PATH` with the results on stdout: (exit code, results or None, stderr)."""
    r = run("labels", path, "--positive", "escalate", "--no-store", "--out", "-")
    return r.exit_code, (json.loads(r.stdout) if r.exit_code == 0 else None), r.stderr


KINDS = {
    "claims.jsonl.gz": gzip.compress(JSONL),
    "claims.jsonl.bz2": bz2.compress(JSONL),
    "claims.jsonl.xz": lzma.compress(JSONL),
    "claims.jsonl.zst": zstandard.ZstdCompressor().compress(JSONL),
    "gzip_named_plain.jsonl": gzip.compress(JSONL),  # the magic bytes decide, not the name
    "claims_utf16.jsonl": JSONL.decode("utf-8").encode("utf-16"),  # Python writes the BOM (FF FE on little-endian)
    "claims_utf16be.jsonl": b"\xfe\xff" + JSONL.decode("utf-8").encode("utf-16-be"),
    "claims_utf32.jsonl": JSONL.decode("utf-8").encode("utf-32"),
    "claims_pretty.json": json.dumps(pilot_rows(), indent=2).encode("utf-8"),
    "claims_oneline.json": json.dumps(pilot_rows()).encode("utf-8"),
    "claims_array.json.gz": gzip.compress(json.dumps(pilot_rows(), indent=1).encode("utf-16")),  # all three at once
    "claims.tsv": ("id\tgold\tpred\n" + "".join(f"{r['id']}\t{r['gold']}\t{r['pred']}\n" for r in pilot_rows())).encode(),
    "claims.tsv.gz": gzip.compress(("id\tgold\tpred\n" + "".join(f"{r['id']}\t{r['gold']}\t{r['pred']}\n"
                                                                for r in pilot_rows())).encode()),
}


@pytest.mark.parametrize("name", sorted(KINDS))
def test_each_kind_is_read_as_the_same_rows(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(KINDS[name])
    code, results, err = labels(path)
    assert code == 0, err
    agg = results["aggregate"]
    assert (agg["tp"], agg["fp"], agg["fn"], agg["tn"], agg["n_failed"]) == (36, 6, 4, 154, 0)
    assert agg["f1"] == pytest.approx(F1, abs=1e-12)
    # the results name the user's file and the sha256 of its bytes on disk, never the decoded temporary copy
    assert results["dataset"] == {"path": str(path), "sha256": hashlib.sha256(KINDS[name]).hexdigest()}


def test_a_gz_input_is_recorded_in_the_store_by_its_own_name_and_hash(tmp_path):
    path = tmp_path / "claims.jsonl.gz"
    path.write_bytes(KINDS["claims.jsonl.gz"])
    store = tmp_path / "g.db"
    assert run("labels", path, "--positive", "escalate", "--store", store, "-q").exit_code == 0
    db = sqlite3.connect(store)
    inputs = json.loads(db.execute("SELECT inputs FROM runs").fetchone()[0])
    db.close()
    assert inputs["labels"]["path"] == str(path) and inputs["labels"]["decoded"] == "gzip"
    assert inputs["labels"]["sha256"] == hashlib.sha256(KINDS["claims.jsonl.gz"]).hexdigest()


def test_a_bad_element_of_a_json_array_is_named_by_its_element(tmp_path):
    rows = pilot_rows()[:5]
    rows[2] = 42  # element 3
    path = tmp_path / "claims.json"
    path.write_text(json.dumps(rows, indent=2))
    code, results, err = labels(path)
    assert code == 0  # four rows scored; the bad one is a counted failure
    assert results["failures"] == [{"line": 3, "id": None, "error": f"{path.name} element 3: expected a JSON object, got 42."}]
    assert f"{path.name} element 3: expected a JSON object, got 42." in err
    # free text: the same numbering in the results and on the terminal
    ft = tmp_path / "notes.json"
    ft.write_text(json.dumps([{"id": "a", "prediction": "x", "reference": "x"}, {"id": "b", "prediction": 5, "reference": "y"}],
                             indent=2))
    r = run("score", ft, "--no-store", "--out", "-")
    want = "notes.json element 2: field 'prediction' must be a string or an object of sections, got 5."
    assert json.loads(r.stdout)["failures"][0]["error"].startswith(want) and want in r.stderr


def test_a_broken_json_array_is_refused_where_it_breaks(tmp_path):
    path = tmp_path / "claims.json"
    text = json.dumps(pilot_rows()[:3], indent=2)
    path.write_text(text[:-30])  # cut inside element 3
    r = run("labels", path, "--positive", "escalate", "--no-store")
    assert r.exit_code == 2
    assert (f"{path}: read as one JSON array of rows, element 3 (line 12, column 3) is not valid JSON" in r.stderr
            and "write one JSON object per line (JSONL)" in r.stderr)
    # a TOML definition of done that opens with a table header is no JSON array: never decoded as rows
    dod = tmp_path / "dod.toml"
    dod.write_text('[gates]\nprecision = { min = 0.5 }\n')
    ok = tmp_path / "claims.jsonl"
    ok.write_bytes(JSONL)
    assert run("labels", ok, "--positive", "escalate", "--no-store", "--gates", dod, "-q").exit_code == 0


def test_a_truncated_compressed_file_says_so_and_what_to_check(tmp_path):
    path = tmp_path / "claims.jsonl.gz"
    path.write_bytes(KINDS["claims.jsonl.gz"][:200])
    r = run("labels", path, "--positive", "escalate", "--no-store")
    assert r.exit_code == 2
    assert f"{path}: begins as a gzip file but cannot be decompressed" in r.stderr and "`gzip -t claims.jsonl.gz`" in r.stderr
    assert "iconv" not in r.stderr


def test_utf16_without_a_byte_order_mark_gets_utf16_advice_not_latin1(tmp_path):
    path = tmp_path / "claims.jsonl"
    path.write_bytes(JSONL.decode("utf-8").encode("utf-16-le"))  # no BOM: nothing says the encoding
    r = run("labels", path, "--positive", "escalate", "--no-store")
    assert r.exit_code == 2
    assert "the bytes look like UTF-16 text without a byte order mark" in r.stderr
    assert "`iconv -f UTF-16LE -t UTF-8`" in r.stderr and "latin1" not in r.stderr


def test_the_advice_for_bytes_that_are_not_utf8_fits_the_bytes():
    gz = not_utf8_advice(gzip.compress(b'{"id": 1}\n'))
    assert "gzip-compressed" in gz and "iconv" not in gz
    assert "zstd-compressed" in not_utf8_advice(zstandard.ZstdCompressor().compress(b"x" * 10))
    assert "UTF-32" in not_utf8_advice('{"id": "é"}'.encode("utf-32-le"))
    latin1 = not_utf8_advice('{"id": "café"}'.encode("latin-1"))
    assert "`iconv -f latin1 -t utf-8`" in latin1  # only where a legacy encoding is the likely cause


def test_the_python_readers_refuse_what_they_cannot_read_with_a_way_forward(tmp_path):
    gz = tmp_path / "claims.jsonl.gz"
    gz.write_bytes(KINDS["claims.jsonl.gz"])
    with pytest.raises(InputError, match=r"claims.jsonl.gz: is gzip-compressed; .*goldeval.io.streams.decoded\(path\)") as info:
        list(read_jsonl(gz))
    assert "iconv" not in str(info.value)
    arr = tmp_path / "claims.json"
    arr.write_bytes(KINDS["claims_pretty.json"])
    with pytest.raises(InputError, match=r"line 1 opens a JSON array.*`jq -c '\.\[\]' FILE > rows\.jsonl`"):
        list(read_jsonl(arr))
    tsv = tmp_path / "claims.tsv"
    tsv.write_bytes(KINDS["claims.tsv"])
    first = next(iter(read_rows(tsv)))
    assert (first.line, first.data) == (2, {"id": "claim-000", "gold": "escalate", "pred": "escalate"})


def test_a_jsonl_row_that_is_an_array_is_still_one_failed_row(tmp_path):
    # only a first line that opens an array of rows ("[", "[{", "[]") is taken for a JSON array file
    path = tmp_path / "claims.jsonl"
    path.write_bytes(b'{"id": "a", "gold": "escalate", "pred": "escalate"}\n[1, 2]\n')
    items = list(read_jsonl(path))
    assert items[1].error == f"{path.name}:2: expected a JSON object, got [1, 2]."


def test_store_naming_a_file_that_is_not_a_store_is_a_usage_error(tmp_path):
    claims = tmp_path / "claims.jsonl"
    claims.write_bytes(JSONL)
    for args in (("labels", claims, "--positive", "escalate", "-q"), ("runs", "list")):
        r = run(*args, "--store", claims)
        assert r.exit_code == 2, r.output
        assert f"run store {claims}: not a SQLite database (it begins b'{{\"id\": \"claim-00'), so it is no goldeval run store" in r.stderr
    foreign = tmp_path / "app.db"
    db = sqlite3.connect(foreign)
    db.execute("CREATE TABLE users (id INTEGER)")
    db.commit()
    db.close()
    before = foreign.read_bytes()
    for args in (("runs", "list"), ("labels", claims, "--positive", "escalate", "-q")):
        r = run(*args, "--store", foreign)
        assert r.exit_code == 2 and "a SQLite database of another program" in r.stderr
    # refused before goldeval set its journal mode: the other program's file is byte for byte as it was
    assert foreign.read_bytes() == before and not (tmp_path / "app.db-wal").exists()
    # a goldeval store is still read: the silent case
    good = tmp_path / "g.db"
    assert run("labels", claims, "--positive", "escalate", "-q", "--store", good).exit_code == 0
    assert run("runs", "list", "--store", good).exit_code == 0


def test_a_report_of_a_run_read_from_a_gz_or_a_json_array_shows_its_texts(tmp_path):
    rows = [{"id": "a", "prediction": "the cat sat on the mat", "reference": "the cat sat"},
            {"id": "b", "prediction": "a dog barked twice", "reference": "the dog ran"}]
    gz = tmp_path / "notes.jsonl.gz"
    gz.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode()))
    arr = tmp_path / "notes.json"
    arr.write_text(json.dumps(rows, indent=2))
    store = tmp_path / "g.db"
    for path in (gz, arr):
        assert run("score", path, "--store", store, "-q").exit_code == 0
        page = tmp_path / f"{path.name}.html"
        r = run("report", "latest", "--store", store, "--out", page)
        assert r.exit_code == 0, r.output
        html = page.read_text()
        assert "the cat sat on the mat" in html and "a dog barked twice" in html
        assert "texts are not shown" not in html


def test_a_file_read_under_the_wrong_format_is_told_which_format_it_looks_like(tmp_path):
    # tab-separated cells in a .txt: read as JSONL, and the message names TSV and the ending that reads it
    txt = tmp_path / "claims.txt"
    txt.write_text("id\tgold\tpred\n1\tescalate\tescalate\n")
    r = run("labels", txt, "--positive", "escalate", "--no-store")
    assert r.exit_code == 2 and "claims.txt:1: not valid JSON" in r.stderr
    assert "the file looks like TSV; name it .tsv and it is read as TSV" in r.stderr and "iconv" not in r.stderr
    csv_ = tmp_path / "claims.jsonl"
    csv_.write_text("id,gold,pred\n1,escalate,escalate\n")
    r = run("labels", csv_, "--positive", "escalate", "--no-store")
    assert r.exit_code == 2 and "looks like CSV; name it .csv" in r.stderr
    # a JSONL row that is broken JSON keeps the plain advice
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "1", "gold": "escalate", "pred": "escalate"}\n{"id": "2", "gold": \n')
    r = run("labels", bad, "--positive", "escalate", "--no-store", "--out", "-")
    assert "bad.jsonl:2: not valid JSON" in r.stderr and "looks like" not in r.stderr
    assert "The file is Parquet: name it .parquet" in not_utf8_advice(b"PAR1\x15\x04\x15\xff")


def test_gzip_piped_to_stdin_is_decoded_and_named_as_stdin():
    piped = gzip.compress(JSONL)  # (gzip writes the time into its header: compress once)
    r = CliRunner().invoke(main, ["labels", "-", "--positive", "escalate", "--no-store", "--out", "-"],
                           input=piped, catch_exceptions=False)
    assert r.exit_code == 0, r.stderr
    results = json.loads(r.stdout)
    assert results["aggregate"]["f1"] == pytest.approx(F1, abs=1e-12)
    assert results["dataset"] == {"path": "-", "sha256": hashlib.sha256(piped).hexdigest()}
