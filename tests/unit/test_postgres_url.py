"""goldeval.answers.postgres.parse_url on URLs urllib cannot split (no server needed): refused as bad input with
what is wrong, never an internal error, and never with the password. Source: issue 25 item 5."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from goldeval.answers.postgres import parse_url
from goldeval.cli import main
from goldeval.errors import InputError

BAD = {
    "IPv6 bracket never closed": ("postgresql://u:s3cret@[::1/clinic", "'[' or ']' of an IPv6 host without its pair"),
    "IPv6 bracket never opened": ("postgresql://u:s3cret@::1]/clinic", "'[' or ']' of an IPv6 host without its pair"),
    "a look-alike of '#' in the host": ("postgresql://u:s3cret@db\uff03x/clinic", "Unicode normalization"),
    "a '/' in the password": ("postgresql://u:s3/cret@db/clinic", "a '/', '?' or '#' comes before its '@'"),
    "a '?' in the password": ("postgresql://u:s3?cret@db/clinic", "a '/', '?' or '#' comes before its '@'"),
    "a password parameter too": ("postgresql://u:s3/cret@[::1/clinic?password=s3cret", "comes before its '@'"),
}


@pytest.mark.parametrize("url,why", BAD.values(), ids=BAD.keys())
def test_a_url_urllib_cannot_split_is_refused_without_its_password(url, why):
    with pytest.raises(InputError) as info:
        parse_url(url)
    message = str(info.value)
    assert why in message and "not a valid PostgreSQL URL" in message
    assert "s3" not in message and "cret" not in message, message


def test_judge_exits_2_on_such_a_url(tmp_path):
    (tmp_path / "c.jsonl").write_text(json.dumps({"id": "c", "question": "How many?", "golden": {"kind": "value", "value": 1}}) + "\n")
    (tmp_path / "a.jsonl").write_text(json.dumps({"id": "c", "final_query": "SELECT 1"}) + "\n")
    r = CliRunner().invoke(main, ["judge", str(tmp_path / "c.jsonl"), str(tmp_path / "a.jsonl"), "--no-store", "-q",
                                  "--db", "postgresql://u:s3cret@[::1/clinic"])
    assert r.exit_code == 2, r.output
    assert "IPv6 host without its pair" in r.output and "s3cret" not in r.output


def test_a_well_formed_url_keeps_its_host_and_hands_back_the_password():
    target = parse_url("postgresql://u:s3cret@[::1]:5432/clinic?sslmode=disable")
    assert target.url == "postgresql://u@[::1]:5432/clinic?sslmode=disable" and target.password == "s3cret"
    encoded = parse_url("postgresql://u:s3%2Fcret@db/clinic")  # a '/' written as the URL says
    assert encoded.url == "postgresql://u@db/clinic" and encoded.password == "s3/cret"


def test_a_url_without_a_host_keeps_its_slashes():
    # break-fix (hG, 2026-12-05): libpq's URI for the local socket (or PGHOST) has no host, postgresql:///dbname
    # (libpq's documentation, "Connection URIs"). The redacted URL lost its '//' (postgresql:/clinic), which libpq
    # cannot read: `--store postgresql:///clinic` and `--db postgresql:///clinic` were refused as "not a valid
    # PostgreSQL URL (missing "=" after ...)". Expected: the URL as given (less its password), as libpq reads it.
    from psycopg.conninfo import conninfo_to_dict

    for url, kept in (("postgresql:///clinic", "postgresql:///clinic"),
                      ("postgresql:///clinic?host=/var/run/postgresql", "postgresql:///clinic?host=%2Fvar%2Frun%2Fpostgresql"),
                      ("postgres://@/clinic?password=s3cret&sslmode=disable", "postgres://@/clinic?sslmode=disable")):
        target = parse_url(url)
        assert target.url == kept
        assert conninfo_to_dict(target.url)["dbname"] == "clinic"
    assert parse_url("postgresql:///clinic?password=s3cret").password == "s3cret"
