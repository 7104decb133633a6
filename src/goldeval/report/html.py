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
from collections.abc import Mapping
from importlib import resources
from typing import Any

import orjson

from goldeval.io.printable import printable

__all__ = ["render_html", "render_runs_html", "embed_json"]

_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def embed_json(obj: Any) -> str:
    """*obj* as compact JSON that is safe inside an HTML ``<script type="application/json">`` block: ``<``, ``>``,
    ``&``, U+2028 and U+2029 are written as JSON escapes (``JSON.parse`` reads them back unchanged)."""
    text = orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY).decode("utf-8")
    for ch, esc in _ESCAPES.items():  # str.replace per character: much faster than str.translate on megabytes
        if ch in text:
            text = text.replace(ch, esc)
    return text


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
        The HTML document.
    """
    from markupsafe import Markup  # start-up: jinja2's own dependency, loaded with it

    data = {k: v for k, v in model.items() if k != "charts"}
    return _render("report.html.j2", "report.js", m=model, charts=_charts(model.get("charts")),
                   data_json=Markup(embed_json(data)))


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
