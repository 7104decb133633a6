"""goldeval.io.outputs: the same-file test and the atomic writer (issue 10 item 1)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from goldeval.errors import InputError
from goldeval.io.outputs import OutputClashError, check_outputs, open_output, same_file, write_output


def test_same_file_by_path_symlink_and_hard_link(tmp_path: Path) -> None:
    a = tmp_path / "a"
    a.write_text("x")
    (tmp_path / "s").symlink_to(a)
    os.link(a, tmp_path / "h")
    assert same_file(a, tmp_path / "s")
    assert same_file(a, tmp_path / "h")
    assert same_file(a, tmp_path / "sub" / ".." / "a")
    assert not same_file(a, tmp_path / "b")
    # neither exists yet: still the same path
    assert same_file(tmp_path / "n.db", str(tmp_path / "n.db"))


def test_check_outputs_names_both_roles_and_is_an_input_error(tmp_path: Path) -> None:
    a = tmp_path / "a.jsonl"
    a.write_text("x")
    with pytest.raises(OutputClashError) as exc:
        check_outputs({"--out": a}, {"FILE": a, "--gates": None})
    assert isinstance(exc.value, InputError)
    assert "--out" in str(exc.value) and "FILE" in str(exc.value)
    # two outputs onto one file clash too
    with pytest.raises(OutputClashError):
        check_outputs({"--out": tmp_path / "r", "--junit": tmp_path / "r"}, {})
    # '-' and None are never a clash; /dev/null may be given as an output and an input
    check_outputs({"--out": "-", "--junit": None}, {"FILE": a})
    check_outputs({"--out": "/dev/null"}, {"FILE": "/dev/null"})


def test_a_crash_while_writing_leaves_the_old_file(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    out.write_bytes(b"old")
    with pytest.raises(RuntimeError):
        with open_output(out) as fh:
            fh.write(b"half")
            raise RuntimeError("crash")
    assert out.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def test_write_output_append_and_symlink_target(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("a\n")
    write_output(summary, b"b\n", append=True)
    assert summary.read_text() == "a\nb\n"
    real = tmp_path / "real.json"
    real.write_text("old")
    (tmp_path / "link.json").symlink_to(real)
    write_output(tmp_path / "link.json", b"new")
    assert (tmp_path / "link.json").is_symlink()  # the link is kept, its target replaced
    assert real.read_text() == "new"


def test_unwritable_places_are_input_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not exist"):
        check_outputs({"--out": tmp_path / "no" / "r.json"}, {})
    with pytest.raises(InputError, match="folder"):
        check_outputs({"--out": tmp_path}, {})


def test_two_outputs_onto_one_stream_are_refused(tmp_path: Path) -> None:
    # A fresh-user run: `goldeval score p.jsonl --out - --junit -` wrote the results JSON and then the JUnit XML to
    # stdout, exit 0: json.load of that stdout fails ("Extra data: line 103"). Two outputs onto one stream are refused
    # like two outputs onto one file; /dev/null takes any number (it keeps nothing that could be mixed).
    with pytest.raises(OutputClashError, match=r"--junit -: standard output is also the --out output"):
        check_outputs({"--out": "-", "--junit": "-"}, {})
    fifo = tmp_path / "ci.pipe"
    os.mkfifo(fifo)
    with pytest.raises(OutputClashError, match=r"--summary-md .*ci\.pipe is also the --junit output"):
        check_outputs({"--junit": fifo, "--summary-md": fifo}, {})
    check_outputs({"--out": "/dev/null", "--junit": "/dev/null", "--summary-md": "-"}, {})
    check_outputs({"--out": "-", "--junit": fifo}, {})
