"""One self-contained HTML page from a report model (:func:`goldeval.report.model.build_model`).

The page is data plus a template, the way coverage.py's ``coverage html`` and pytest-html's self-contained report
are built:

* the model is embedded once, as compact JSON in a ``<script type="application/json">`` block, with ``<``, ``>``
  and ``&`` written as ``\\u003c`` … so that no case text can close the block (``</script>``) or open a comment;
* the page's only script (``report.js``, inline) builds the table from that JSON with ``textContent`` and
  ``createElement`` — never ``innerHTML`` — so an answer holding ``<script>`` or ``javascript:`` is shown as text
  and never runs, and no case text becomes a link;
* every text the template or the script shows has its control characters escaped (``\\x1b``, ``\\r``,
  ``\\u202e``, as :mod:`goldeval.io.printable` does on the console), so an id, a label or an answer holding a
  bidirectional override cannot show a line reversed (a FAIL read as a pass); the embedded JSON keeps the data as
  it is;
* the charts are inline SVG drawn by matplotlib (:mod:`goldeval.report.charts`);
* a Content-Security-Policy ``default-src 'none'`` forbids every fetch (scripts, styles, fonts, images but
  ``data:``, connections, frames, forms): the one script is allowed by its sha256, nothing else runs.

Jinja2 renders the template with autoescaping on.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator, Mapping
from importlib import resources
from typing import IO, Any, Protocol, runtime_checkable

import orjson

from goldeval.io.printable import printable

__all__ = ["render_html", "render_runs_html", "write_html", "embed_json", "CHUNK_ITEMS", "Chunked"]

_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def embed_json(obj: Any) -> str:
    """*obj* as compact JSON that is safe inside an HTML ``<script type="application/json">`` block: ``<``, ``>``,
    ``&``, U+2028 and U+2029 are written as JSON escapes (``JSON.parse`` reads them back unchanged)."""
    text = orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY).decode("utf-8")
    for ch, esc in _ESCAPES.items():  # str.replace per character: much faster than str.translate on megabytes
        if ch in text:
            text = text.replace(ch, esc)
    return text


#: embed_json's escapes on UTF-8 bytes: each character's encoding → its escape's (a character's UTF-8 encoding
#: occurs in valid UTF-8 only as that character, so replacing bytes is replacing characters).
_BYTE_ESCAPES = tuple((ch.encode("utf-8"), esc.encode("ascii")) for ch, esc in _ESCAPES.items())


def _embed_bytes(obj: Any) -> bytes:
    """``embed_json(obj).encode("utf-8")`` without decoding orjson's output to a str and encoding it again (a
    page's ~96 MB of cases): the same escapes, made on the bytes."""
    data = orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY)
    for ch, esc in _BYTE_ESCAPES:
        if ch in data:
            data = data.replace(ch, esc)
    return data


def _asset(name: str) -> str:
    return resources.files("goldeval.report").joinpath("templates", name).read_text(encoding="utf-8")


def _csp(script: str) -> str:
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    return ("default-src 'none'; " f"script-src 'sha256-{digest}'; " "style-src 'unsafe-inline'; img-src data:; "
            "base-uri 'none'; form-action 'none'")


def _render(template_name: str, script_name: str, **context: Any) -> str:
    import jinja2  # start-up: loaded only when a report or CI file is written
    from markupsafe import Markup  # start-up: jinja2's own dependency, loaded with it

    def shown(value: Any) -> Any:  # control characters of the user's data escaped, as on the console; markup is ours
        return value if isinstance(value, Markup) or not isinstance(value, str) else printable(value)

    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                             finalize=shown)
    template = env.from_string(_asset(template_name))
    script = _asset(script_name)
    return template.render(css=Markup(_asset("report.css")), script=Markup(script), csp=_csp(script), **context)


def _charts(items: Any) -> list[dict[str, Any]]:
    from markupsafe import Markup  # start-up: jinja2's own dependency, loaded with it

    return [{"title": c["title"], "svg": Markup(c["svg"]), "note": c.get("note"), "id": c.get("id")} for c in items or []]


def render_html(model: Mapping[str, Any]) -> str:
    """The page for *model*, as one string (UTF-8 text, every script, style and chart inline).

    Args:
        model: What :func:`goldeval.report.model.build_model` returns; ``charts`` hold SVG strings from
            :mod:`goldeval.report.charts` (the only markup placed unescaped).

    Returns:
        The HTML document: the bytes :func:`write_html` writes, decoded.
    """
    head, data, tail = _page_around_data(model)
    return head + embed_json(_whole(data)) + tail


@runtime_checkable
class Chunked(Protocol):
    """A list of the model given a chunk of items at a time (:class:`goldeval.report.model.EmbeddedCases`: the
    cases, whose texts are read as each chunk is written)."""

    def __len__(self) -> int: ...

    def chunks(self, size: int) -> Iterator[list[Any]]: ...


def _whole(data: Mapping[str, Any]) -> dict[str, Any]:
    """*data* with each :class:`Chunked` value read into one list (the page rendered as one string)."""
    return {k: [item for chunk in v.chunks(CHUNK_ITEMS) for item in chunk] if isinstance(v, Chunked) else v
            for k, v in data.items()}


#: Cases (items of a top-level list of the model) serialized at a time by :func:`write_html`.
CHUNK_ITEMS = 1_000


def write_html(model: Mapping[str, Any], fh: IO[bytes]) -> None:
    """Write the page for *model* to the binary file *fh*, its embedded JSON a chunk of cases at a time.

    The same bytes as ``render_html(model).encode("utf-8")``, without the page ever being one string: a 20,000-case
    page is ~96 MB, and rendering it whole held it four times over (the JSON as bytes, as text, escaped, and inside
    the rendered template), 908 MB at the peak for a 100,000-case run. Here the template is rendered around a
    placeholder and the model's data is serialized a top-level key at a time, lists of more than
    ``CHUNK_ITEMS`` items (the cases) ``CHUNK_ITEMS`` items at a time: orjson's compact output of a list is its
    items' output joined by commas, and the escapes of :func:`embed_json` are one character each.

    Args:
        model: As :func:`render_html`.
        fh: A writable binary file (e.g. what :func:`goldeval.io.outputs.open_output` yields).
    """
    head, data, tail = _page_around_data(model)
    fh.write(head.encode("utf-8"))
    if not all(isinstance(k, str) for k in data):
        fh.write(embed_json(_whole(data)).encode("utf-8"))  # keys orjson would convert: one piece, as render_html does
    else:
        fh.write(b"{")
        for i, (key, value) in enumerate(data.items()):
            fh.write((b"," if i else b"") + embed_json(key).encode("utf-8") + b":")
            if isinstance(value, Chunked):  # cases whose texts are read a chunk at a time, as they are written
                fh.write(b"[")
                for i_chunk, chunk in enumerate(value.chunks(CHUNK_ITEMS)):
                    if chunk:
                        if i_chunk:
                            fh.write(b",")
                        fh.write(_embed_bytes(chunk)[1:-1])
                fh.write(b"]")
            elif isinstance(value, list) and len(value) > CHUNK_ITEMS:
                fh.write(b"[")
                for start in range(0, len(value), CHUNK_ITEMS):
                    if start:
                        fh.write(b",")
                    fh.write(_embed_bytes(value[start : start + CHUNK_ITEMS])[1:-1])
                fh.write(b"]")
            else:
                fh.write(_embed_bytes(value))
        fh.write(b"}")
    fh.write(tail.encode("utf-8"))


#: Where the data goes in the rendered template (split out again before anything is written).
_DATA_SLOT = "\x00goldeval-report-data\x00"


def _page_around_data(model: Mapping[str, Any]) -> tuple[str, dict[str, Any], str]:
    """The page's text before and after its embedded data, and the data (the model without its charts)."""
    from markupsafe import Markup  # start-up: jinja2's own dependency, loaded with it

    data = {k: v for k, v in model.items() if k != "charts"}
    page = _render("report.html.j2", "report.js", m=model, charts=_charts(model.get("charts")), data_json=Markup(_DATA_SLOT))
    head, slot, tail = page.partition(_DATA_SLOT)
    if not slot or _DATA_SLOT in tail:
        raise RuntimeError("report template: the data must be placed exactly once ({{ data_json }})")
    return head, data, tail


def render_runs_html(model: Mapping[str, Any]) -> str:
    """The page across runs for *model* (:func:`goldeval.report.runs_page.runs_model`), one self-contained
    string under the same Content-Security-Policy as a run's report: the runs table is written by the template
    (every value escaped), each arm's chart is inline SVG, and the one inline script only sorts the table.

    Args:
        model: ``runs_model``'s dict; each arm's ``chart`` an SVG string from :func:`goldeval.report.charts.timeline`.

    Returns:
        The HTML document.
    """
    from markupsafe import Markup  # start-up: jinja2's own dependency, loaded with it

    arms = [{**a, "chart": None if a.get("chart") is None else Markup(a["chart"])} for a in model.get("arms") or []]
    return _render("runs.html.j2", "runs.js", m=model, arms=arms)
