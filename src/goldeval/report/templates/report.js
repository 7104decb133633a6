"use strict";
// goldeval report: builds the case table from the embedded JSON. Every case text goes into the page through
// textContent (never innerHTML), so markup in an answer is shown as text and never runs.
(function () {
  var D = JSON.parse(document.getElementById("goldeval-data").textContent);
  var PAGE = 100;
  var cases = D.cases || [];
  var compare = !!D.compare;
  var state = { filter: "all", q: "", sort: null, dir: 1, page: 0, open: {} };

  // Control characters of the user's data shown escaped, as goldeval.io.printable does on the console: an ESC,
  // a carriage return, a C1 control or a bidirectional override (U+202E shows what follows reversed) could hide or
  // fake what a cell says. Line feeds and tabs are layout and stay.
  var CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
  function shown(v) {
    if (typeof v !== "string") return v;
    return v.replace(CONTROLS, function (ch) {
      var code = ch.charCodeAt(0);
      if (ch === "\r") return "\\r";
      return code < 0x100 ? "\\x" + ("0" + code.toString(16)).slice(-2) : "\\u" + ("000" + code.toString(16)).slice(-4);
    });
  }
  function el(tag, attrs, children) {
    var e = document.createElement(tag);
    if (attrs) for (var k in attrs) {
      if (k === "text") e.textContent = shown(attrs[k]);
      else if (k === "cls") e.className = attrs[k];
      else e.setAttribute(k, attrs[k]);
    }
    (children || []).forEach(function (c) { if (c != null) e.appendChild(typeof c === "string" ? document.createTextNode(shown(c)) : c); });
    return e;
  }
  function num(v, d) { return (v === null || v === undefined) ? "—" : (typeof v === "number" ? (Number.isInteger(v) ? String(v) : v.toFixed(d || 3)) : String(v)); }
  // a fraction (F1, precision, recall) always with its decimals: JSON gives 1.0 as 1, which read "1" beside "0.500"
  function frac(v, d) { return typeof v === "number" ? v.toFixed(d || 3) : num(v, d); }
  var FRACTIONS = { f1: 1, precision: 1, recall: 1, a_f1: 1 };
  function str(v) { return (v === null || v === undefined) ? "" : (typeof v === "string" ? v : JSON.stringify(v)); }

  var COLS = {
    freetext: [["id", "id", "s"], ["bucket", "result", "s"], ["f1", "F1", "n"], ["precision", "precision", "n"], ["recall", "recall", "n"],
               ["tokens_pred", "pred tokens", "n"], ["tokens_ref", "ref tokens", "n"]],
    labels: [["id", "id", "s"], ["bucket", "result", "s"], ["outcome", "outcome", "s"], ["gold", "gold", "s"], ["pred", "pred", "s"]],
    answers: [["id", "id", "s"], ["verdict", "verdict", "s"], ["confidence", "conf", "n"], ["gold_status", "gold_status", "s"],
              ["decided_by", "decided by", "s"], ["why", "why", "s"]],
    generic: [["id", "id", "s"], ["bucket", "result", "s"]]
  };
  var cols = (COLS[D.kind] || COLS.generic).slice();
  if (compare) {
    if (D.kind === "freetext") { cols.push(["a_f1", "A F1", "n"]); cols.push(["delta_f1", "ΔF1", "n"]); }
    else cols.splice(2, 0, ["a_bucket", "A result", "s"]);
  }
  function val(c, key) {
    if (key === "a_f1") return c.a ? c.a.f1 : null;
    if (key === "a_bucket") return c.a ? (c.a.verdict || c.a.outcome || c.a.bucket) : "(new)";
    if (key === "verdict" && c.bucket === "unscored") return "unscored";
    if (key === "why" && c.bucket === "unscored") return c.reason;
    return c[key];
  }

  // one chip per outcome this scorer can produce (goldeval.report.model.case_filters), "changed" only in a comparison
  var FILTERS = D.filters || [["all", "all"]];
  // free text without a threshold: an F1 is a number, not a pass or a fail (give --min-f1 X for those)
  var noThreshold = D.kind === "freetext" && (D.min_f1 === null || D.min_f1 === undefined);
  function matches(c, f) {
    if (f === "all") return true;
    if (f === "changed") return !!c.changed;
    if (f === "needs_human") return c.bucket === "needs_human" || !!c.needs_human_flag;
    return c.bucket === f;
  }
  var SEARCHED = ["id", "prediction", "reference", "question", "why", "final_query", "text", "gold", "pred", "reason", "mismatch"];
  function hay(c) {
    if (c._hay === undefined) {
      var parts = SEARCHED.map(function (k) { return str(c[k]); });
      (c.section_texts || []).forEach(function (sec) { parts.push(str(sec.prediction), str(sec.reference)); });
      if (c.key) {
        (c.key.rubric || []).forEach(function (k) { parts.push(k.marker + ": " + k.text); });
        (c.key.must_not_use || []).forEach(function (k) { parts.push(k.entry); });
      }
      c._hay = parts.join("\n").toLowerCase();
    }
    return c._hay;
  }

  // filters
  var fbox = document.getElementById("filters");
  FILTERS.forEach(function (f) {
    var n = cases.filter(function (c) { return matches(c, f[0]); }).length;
    var b = el("button", { type: "button", "data-filter": f[0], "aria-pressed": f[0] === "all" ? "true" : "false", text: f[1] + " (" + n + ")" });
    b.addEventListener("click", function () {
      state.filter = f[0]; state.page = 0;
      Array.prototype.forEach.call(fbox.children, function (x) { x.setAttribute("aria-pressed", x === b ? "true" : "false"); });
      draw();
    });
    fbox.appendChild(b);
  });
  if (noThreshold) fbox.appendChild(el("span", { cls: "muted", id: "no-threshold",
    text: "no pass or fail: an F1 is a number, not a verdict (make the report with --min-f1 X for those)" }));
  var search = document.getElementById("search");
  var timer = null;
  search.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(function () { state.q = search.value.trim().toLowerCase(); state.page = 0; draw(); }, 120);
  });

  // header
  var table = document.getElementById("case-table");
  var thead = table.tHead, tbody = table.tBodies[0];
  var hr = el("tr");
  cols.forEach(function (col) {
    var th = el("th", { "data-key": col[0], text: col[1], scope: "col" });
    th.addEventListener("click", function () {
      if (state.sort === col[0]) state.dir = -state.dir; else { state.sort = col[0]; state.dir = 1; }
      Array.prototype.forEach.call(hr.children, function (x) { x.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", state.dir > 0 ? "ascending" : "descending");
      draw();
    });
    hr.appendChild(th);
  });
  thead.appendChild(hr);

  function visible() {
    var out = cases.filter(function (c) { return matches(c, state.filter) && (!state.q || hay(c).indexOf(state.q) >= 0); });
    if (state.sort) {
      var key = state.sort, dir = state.dir, numeric = cols.filter(function (c) { return c[0] === key; })[0][2] === "n";
      out.sort(function (a, b) {
        var x = val(a, key), y = val(b, key);
        if (x === null || x === undefined) return 1;
        if (y === null || y === undefined) return -1;
        if (numeric) return dir * (x - y);
        return dir * String(x).localeCompare(String(y), undefined, { numeric: true });
      });
    }
    return out;
  }

  function cell(c, col) {
    var v = val(c, col[0]);
    var td = el("td", { text: col[2] === "n" ? (col[0] === "delta_f1" && typeof v === "number" ? (v >= 0 ? "+" : "") + v.toFixed(4) : FRACTIONS[col[0]] ? frac(v) : num(v)) : str(v) });
    if (col[0] === "bucket" || col[0] === "verdict" || col[0] === "a_bucket") {
      var b = col[0] === "a_bucket" ? (c.a ? c.a.bucket : "") : c.bucket;
      td.className = "b-" + b;
    }
    if (col[0] === "why") { td.className = "why"; td.title = shown(str(v)); }
    if (col[0] === "id") td.className = "id";  // a long id wraps (report.css), never widens the page
    return td;
  }

  function draw() {
    var rows = visible();
    var pages = Math.max(1, Math.ceil(rows.length / PAGE));
    if (state.page >= pages) state.page = pages - 1;
    var slice = rows.slice(state.page * PAGE, (state.page + 1) * PAGE);
    tbody.textContent = "";
    slice.forEach(function (c) {
      var tr = el("tr", { cls: "case", "data-id": c.id, tabindex: "0" });
      if (compare && c.a && c.a.bucket === "pass" && c.bucket === "fail") tr.classList.add("flip-pf");
      if (compare && c.a && c.a.bucket === "fail" && c.bucket === "pass") tr.classList.add("flip-fp");
      cols.forEach(function (col) { tr.appendChild(cell(c, col)); });
      tr.addEventListener("click", function () { toggle(c, tr); });
      tr.addEventListener("keydown", function (ev) { if (ev.key === "Enter") toggle(c, tr); });
      tbody.appendChild(tr);
      if (state.open[c.id]) tbody.appendChild(detailRow(c));
    });
    document.getElementById("count").textContent = rows.length + " of " + cases.length + " case(s) shown" + (pages > 1 ? " · page " + (state.page + 1) + " of " + pages : "");
    var pager = document.getElementById("pager");
    pager.textContent = "";
    if (pages > 1) {
      [["« first", 0], ["‹ previous", state.page - 1], ["next ›", state.page + 1], ["last »", pages - 1]].forEach(function (p) {
        var b = el("button", { type: "button", text: p[0] });
        b.disabled = p[1] < 0 || p[1] >= pages || p[1] === state.page;
        b.addEventListener("click", function () { state.page = p[1]; draw(); });
        pager.appendChild(b);
      });
    }
  }

  function toggle(c, tr) {
    if (state.open[c.id]) { delete state.open[c.id]; if (tr.nextSibling && tr.nextSibling.classList.contains("detail")) tr.nextSibling.remove(); }
    else { state.open[c.id] = true; tr.parentNode.insertBefore(detailRow(c), tr.nextSibling); }
  }

  function marked(text, spans) {
    var box = el("div", { cls: "text" });
    if (typeof text !== "string") { box.textContent = text == null ? "(not available)" : shown(JSON.stringify(text, null, 2)); return box; }
    var pos = 0;  // spans are [gap, length, gap, length, ...], each gap from the end of the previous mark
    for (var i = 0; spans && i < spans.length; i += 2) {
      var start = pos + spans[i], end = start + spans[i + 1];
      if (start > pos) box.appendChild(document.createTextNode(shown(text.slice(pos, start))));
      box.appendChild(el("mark", { text: text.slice(start, end) }));
      pos = end;
    }
    box.appendChild(document.createTextNode(shown(text.slice(pos))));
    return box;
  }
  function kv(pairs) {
    var t = el("table", { cls: "kv" });
    pairs.forEach(function (p) { if (p[1] !== undefined && p[1] !== null && p[1] !== "") t.appendChild(el("tr", null, [el("th", { text: p[0] }), el("td", { text: str(p[1]) })])); });
    return t;
  }
  function rowsTable(tab, title) {
    var wrap = el("div", null, [el("h4", { text: title })]);
    if (!tab) { wrap.appendChild(el("p", { cls: "muted", text: "(not available)" })); return wrap; }
    if (tab.error) { wrap.appendChild(el("p", { cls: "warn", text: tab.error })); return wrap; }
    if (tab.value !== undefined && !tab.rows) { wrap.appendChild(el("div", { cls: "text", text: str(tab.value) })); return wrap; }
    var t = el("table", { cls: "rows" });
    if (tab.columns) t.appendChild(el("tr", null, tab.columns.map(function (c) { return el("th", { text: str(c) }); })));
    (tab.rows || []).forEach(function (r) { t.appendChild(el("tr", null, (Array.isArray(r) ? r : [r]).map(function (v) { return el("td", { text: v === null ? "NULL" : str(v) }); }))); });
    wrap.appendChild(t);
    var shown = (tab.rows || []).length;
    if (tab.row_count != null && tab.row_count > shown) wrap.appendChild(el("p", { cls: "muted", text: "first " + shown + " of " + tab.row_count + " rows" }));
    if (tab.source) wrap.appendChild(el("p", { cls: "muted", text: "rows: " + tab.source }));
    return wrap;
  }

  // one LLM call: the model asked (and the one that answered), the system prompt by version and sha256, the
  // prompt sent, the raw answer as received and the verdict parsed from it
  function llmCall(call, i, n, caseWhy) {
    var L = D.llm || {};
    var v = call.verdict || {};
    var box = el("div", { cls: "llm-call", "data-call": String(i + 1) });
    box.appendChild(el("h4", { text: "LLM call " + (i + 1) + " of " + n + (call.cached ? " (answered from the cache)" : "") }));
    var model = L.model || null;
    if (call.response_model && call.response_model !== L.model) model = (L.model ? L.model + " (answered as " + call.response_model + ")" : call.response_model);
    box.appendChild(kv([["model", model], ["endpoint", L.base_url],
      ["system prompt", L.judge_version ? L.judge_version + (L.system_prompt_sha256 ? " · sha256 " + L.system_prompt_sha256 : "") : null],
      ["sample", n > 1 ? call.sample : null], ["status", call.status], ["finish reason", call.finish_reason],
      ["latency s", call.latency_s == null ? null : num(call.latency_s, 2)], ["attempts", call.attempts],
      ["tokens in / out", call.prompt_tokens != null ? call.prompt_tokens + " / " + call.completion_tokens : null],
      ["cost USD", call.cost_usd], ["error", call.error]]));
    if (!D.redacted) {
      var p = el("details", { cls: "llm-prompt" }, [el("summary", { text: "prompt sent (user message" + (call.nonce ? "; the answer fenced with nonce " + call.nonce : "") + ")" })]);
      p.appendChild(el("div", { cls: "text", text: call.user_prompt == null ? "(not recorded)" : str(call.user_prompt) }));
      box.appendChild(p);
      box.appendChild(el("h5", { text: "raw answer" }));
      box.appendChild(el("div", { cls: "text llm-raw", text: call.raw == null ? "(no answer)" : str(call.raw) }));
    }
    box.appendChild(el("h5", { text: "parsed verdict" }));
    box.appendChild(kv([["verdict", v.verdict], ["confidence", v.confidence], ["needs a human", v.needs_human ? "yes" : null],
      ["why", sameAsWhy(v.why, caseWhy)], ["could not parse", v.parse_error], ["contradicts itself", v.self_contradicting ? "yes" : null],
      ["truncated", v.truncated ? "yes" : null], ["injection noticed", v.injection ? "yes" : null]]));
    return box;
  }

  // no line repeats the case's why word for word: a why given again (the LLM call that decided, the golden that
  // decided) points back to it
  function sameAsWhy(v, why) { return (v != null && v !== "" && v === why) ? "(the case's why, above)" : v; }
  // a line the why already says word for word (a mismatch or gold note it quotes) is left out
  function notInWhy(v, why) { return (typeof v === "string" && typeof why === "string" && v !== "" && why.indexOf(v) >= 0) ? null : v; }

  // the rubric: each clause with its marker, what the marker does, and the part it played in this verdict
  // (goldeval.answers.rubric.clause_roles)
  var ROLE_WORDS = { decided: "▶ decided the verdict", overridden: "cited by the judge and overridden", cited: "cited by the judge",
                     held_open: "kept the rule verdict from being final" };
  function rubricList(clauses) {
    var ol = el("ol", { cls: "rubric" });
    clauses.forEach(function (k) {
      var li = el("li", { cls: "clause m-" + String(k.marker).toLowerCase() + (k.role ? " r-" + k.role : ""), "data-marker": k.marker }, [
        el("span", { cls: "marker", text: k.marker }), el("span", { cls: "clause-text", text: k.text }),
        el("span", { cls: "effect", text: "→ " + k.effect })]);
      if (k.role) { li.setAttribute("data-role", k.role); li.appendChild(el("span", { cls: "role", text: ROLE_WORDS[k.role] || k.role })); }
      ol.appendChild(li);
    });
    return ol;
  }
  // the rest of the key: the rubric of a value golden, must_not_use, coverage
  function keyBlock(c, criteria) {
    var K = c.key || {};
    var box = el("div", { cls: "key" });
    if (K.rubric && K.rubric.length && !criteria) {
      box.appendChild(el("h4", { text: "rubric (" + K.rubric.length + " clause" + (K.rubric.length === 1 ? "" : "s") + ")" }));
      box.appendChild(rubricList(K.rubric));
    }
    if (K.rubric_from) box.appendChild(el("p", { cls: "muted", text: "the clauses as the judged record keeps them: the case file is not available" }));
    if (K.must_not_use && K.must_not_use.length) {
      box.appendChild(el("h4", { text: "must_not_use" }));
      var ul = el("ul", { cls: "mnu" });
      K.must_not_use.forEach(function (m) {
        var li = el("li", { "data-kind": m.kind }, [el("code", { text: m.entry }),
          el("span", { cls: "effect", text: m.kind === "field" ? "a field: a hard veto, checked by rule on the parsed final query" : "prose: the LLM judge reads it" })]);
        if (m.used) {  // the veto the rules found: it decided the verdict (decided_by must_not_use)
          li.classList.add("used");
          li.appendChild(el("span", { cls: "role", text: (c.decided_by === "must_not_use" ? "▶ decided the verdict: used as " : "used as ") + m.used }));
        }
        ul.appendChild(li);
      });
      box.appendChild(ul);
    }
    if (K.coverage) {
      box.appendChild(el("h4", { text: "coverage" }));
      box.appendChild(kv([["coverage", K.coverage.value], ["meaning", K.coverage.meaning]]));
    }
    return box.childNodes.length ? box : null;
  }
  function goldenBox(c, title) {
    if (c.golden_kind === "criteria") {
      var K = c.key || {};
      var wrap = el("div", { cls: "criteria" }, [el("h4", { text: title + ": the rubric clauses are the whole key" })]);
      wrap.appendChild(K.rubric && K.rubric.length ? rubricList(K.rubric) : el("p", { cls: "warn", text: "(no rubric clauses given)" }));
      return wrap;
    }
    if (c.golden_kind === "unanswerable") {
      return el("div", null, [el("h4", { text: title }), el("div", { cls: "text", text: "unanswerable: the data cannot answer this question; only an answer that declines passes" })]);
    }
    return rowsTable(c.golden, title);
  }

  // a case with alternative goldens: what each golden gave, the one that decided marked
  function goldensTable(c) {
    var wrap = el("div", { cls: "goldens" }, [el("h4", { text: "goldens judged (" + (c.golden_verdicts.length - 1) + " alternative" + (c.golden_verdicts.length === 2 ? "" : "s") + "; the one that decided marked)" })]);
    var t = el("table", { cls: "rows" });
    t.appendChild(el("tr", null, ["golden", "verdict", "conf", "gold_status", "why"].map(function (h) { return el("th", { text: h }); })));
    c.golden_verdicts.forEach(function (g) {
      var mine = g.golden === c.golden_used;
      t.appendChild(el("tr", mine ? { cls: "decided", "data-golden": g.golden } : { "data-golden": g.golden }, [el("td", { text: (mine ? "▶ " : "") + g.golden }), el("td", { text: str(g.verdict) }),
        el("td", { text: num(g.confidence) }), el("td", { text: str(g.gold_status) }), el("td", { text: str(sameAsWhy(g.why, c.why)) })]));
    });
    wrap.appendChild(t);
    return wrap;
  }

  function detailRow(c) {
    var td = el("td", { colspan: String(cols.length) });
    var tr = el("tr", { cls: "detail", "data-detail": c.id }, [td]);
    td.appendChild(kv([["case", c.id], ["line", c.line], ["result", c.bucket], ["unscored because", c.reason]]));
    if (compare && c.a) {
      td.appendChild(el("h4", { text: "A (before) beside B (after)" }));
      td.appendChild(el("div", { cls: "side" }, [
        el("div", null, [kv([["A", c.a.verdict || c.a.outcome || c.a.bucket], ["A confidence", c.a.confidence], ["A F1", c.a.f1 == null ? null : frac(c.a.f1, 4)],
          ["A golden used", c.a.golden_used], ["A why", c.a.why]])]),
        el("div", null, [kv([["B", c.verdict || c.outcome || c.bucket], ["B confidence", c.confidence], ["B F1", c.f1 == null ? null : frac(c.f1, 4)],
          ["B golden used", c.golden_used], ["B why", c.why]])])
      ]));
    } else if (compare) td.appendChild(el("p", { cls: "muted", text: "not in run A (added in B)" }));
    if (D.kind === "freetext") {
      td.appendChild(kv([["F1", frac(c.f1, 4)], ["precision", frac(c.precision, 4)], ["recall", frac(c.recall, 4)],
        ["tokens", c.tokens_pred == null ? null : c.tokens_pred + " predicted · " + c.tokens_ref + " reference · " + c.overlap + " shared"]]));
      if (c.sections) td.appendChild(kv(Object.keys(c.sections).map(function (k) { return ["section " + k + " F1", frac(c.sections[k], 4)]; })));
      if (D.redacted) td.appendChild(el("p", { cls: "muted", text: "texts redacted" }));
      else if (c.section_texts) c.section_texts.forEach(function (sec) {  // a sectioned note: section beside section
        var f1 = c.sections && c.sections[sec.name] != null ? " · F1 " + frac(c.sections[sec.name], 4) : "";
        td.appendChild(el("h4", { cls: "section-name", text: "section " + sec.name + f1 }));
        td.appendChild(el("div", { cls: "side" }, [
          el("div", null, [el("h4", { text: "prediction" + (sec.spans_pred ? " (shared tokens marked)" : "") }), marked(sec.prediction, sec.spans_pred)]),
          el("div", null, [el("h4", { text: "reference" + (sec.spans_ref ? " (shared tokens marked)" : "") }), marked(sec.reference, sec.spans_ref)])
        ]));
      });
      else td.appendChild(el("div", { cls: "side" }, [
        el("div", null, [el("h4", { text: "prediction" + (c.spans_pred ? " (shared tokens marked)" : "") }), marked(c.prediction, c.spans_pred)]),
        el("div", null, [el("h4", { text: "reference" + (c.spans_ref ? " (shared tokens marked)" : "") }), marked(c.reference, c.spans_ref)])
      ]));
    } else if (D.kind === "labels") {
      td.appendChild(el("div", { cls: "side" }, [
        el("div", null, [el("h4", { text: "gold" }), el("div", { cls: "text", text: str(c.gold) })]),
        el("div", null, [el("h4", { text: "pred" }), el("div", { cls: "text", text: c.pred === null ? "(no prediction)" : str(c.pred) })])
      ]));
      td.appendChild(kv([["outcome", c.outcome], ["second annotator", c.second_gold]]));
    } else if (D.kind === "answers") {
      td.appendChild(kv([["verdict", c.verdict], ["confidence", c.confidence], ["needs a human", c.needs_human_flag ? "yes" : null],
        ["decided by", c.decided_by], ["golden used", c.golden_used], ["gold_status", c.gold_status], ["gold_note", notInWhy(c.gold_note, c.why)],
        ["why", compare && c.a ? null : c.why],  // beside A's, as "B why", in a comparison
        ["mismatch", notInWhy(c.mismatch, c.why)], ["agreement (rule vs LLM)", c.agreement]]));
      if (c.golden_verdicts && c.golden_verdicts.length) td.appendChild(goldensTable(c));
      if (D.redacted) td.appendChild(el("p", { cls: "muted", text: "question, answer, query, rows and judge text redacted" }));
      else {
        td.appendChild(el("h4", { text: "question" }));
        td.appendChild(el("div", { cls: "text", text: c.question == null ? "(not available)" : str(c.question) }));
        var primaryTitle = "golden" + (c.golden_kind ? " (" + c.golden_kind + ")" : "") + (c.golden_verdicts ? ": primary" + (c.golden_used === "primary" ? " (decided)" : "") : "");
        td.appendChild(el("div", { cls: "side" }, [goldenBox(c, primaryTitle),
                                                      (c.prediction == null && c.text != null && c.final_query == null)
                                                        ? el("div", null, [el("h4", { text: "predicted" }), el("p", { cls: "muted", text: "(no rows: the answer is prose, shown below)" })])
                                                        : rowsTable(c.prediction, "predicted")]));
        var key = keyBlock(c, c.golden_kind === "criteria");
        if (key) td.appendChild(key);
        if (c.text != null) { td.appendChild(el("h4", { text: "answer text" })); td.appendChild(el("div", { cls: "text", text: str(c.text) })); }
        if (c.final_query != null) { td.appendChild(el("h4", { text: "final query" })); td.appendChild(el("div", { cls: "text", text: str(c.final_query) })); }
        if (c.canonical_query != null) { td.appendChild(el("h4", { text: "golden's canonical query" })); td.appendChild(el("div", { cls: "text", text: str(c.canonical_query) })); }
        (c.alternatives || []).forEach(function (alt) {  // the case's other right answers, the one that decided marked
          var box = el("div", { cls: "alternative" + (alt.golden === c.golden_used ? " decided" : ""), "data-golden": alt.golden });
          box.appendChild(rowsTable(alt.table, "golden." + alt.golden + (alt.golden === c.golden_used ? " (decided)" : "")));
          if (alt.canonical_query != null) box.appendChild(el("div", { cls: "text", text: str(alt.canonical_query) }));
          td.appendChild(box);
        });
        if (c.column_pairing && Object.keys(c.column_pairing).length) {
          td.appendChild(el("h4", { text: "column pairing (golden → predicted)" }));
          td.appendChild(kv(Object.keys(c.column_pairing).map(function (k) { return [k, c.column_pairing[k] === null ? "(unpaired)" : c.column_pairing[k]]; })));
        }
        if (c.rule && c.decided_by !== "rule") {  // the rules' own outcome, kept beside the verdict that decided
          td.appendChild(el("h4", { text: "rule-based outcome" }));
          td.appendChild(kv([["rule verdict", c.rule.verdict], ["rule confidence", c.rule.confidence], ["rule why", sameAsWhy(c.rule.why, c.why)]]));
        }
      }
      if (c.located) {
        var L = c.located;
        td.appendChild(el("h4", { text: "located rows" }));
        td.appendChild(kv([["golden rows", L.golden_rows], ["located", L.found], ["extra predicted rows", L.extra],
          ["missing", Array.isArray(L.missing) ? L.missing.length : L.missing]]));
        if (Array.isArray(L.missing) && L.missing.length) {
          var t = el("table", { cls: "rows" });
          L.missing.slice(0, 200).forEach(function (r) { t.appendChild(el("tr", null, [el("td", { text: str(r) })])); });
          td.appendChild(el("div", null, [el("h4", { text: "missing golden rows" }), t]));
        }
      }
      (c.llm_calls || []).forEach(function (call, i) { td.appendChild(llmCall(call, i, c.llm_calls.length, c.why)); });
    }
    return tr;
  }

  // compare: flips with both whys, near_match stable / flickering, movers
  if (compare) {
    var box = document.getElementById("compare-flips");
    var C = D.compare;
    function flipTable(title, list, cls) {
      var wrap = el("div", { cls: "flips" }, [el("h3", { text: title + ": " + list.length })]);
      if (!list.length) return wrap;
      var t = el("table", { cls: cls });
      var lab = D.kind === "labels";  // two label runs: what was predicted, for what gold (not verdicts)
      t.appendChild(el("tr", null, [el("th", { text: "case" }), el("th", { text: lab ? "A: gold · predicted (outcome)" : "A: verdict · why" }),
        el("th", { text: lab ? "B: gold · predicted (outcome)" : "B: verdict · why" })]));
      function side(s) {
        if (!s) return "";
        return lab ? str(s.gold) + " · " + str(s.pred) + " (" + str(s.outcome) + ")" : str(s.verdict) + " · " + str(s.why);
      }
      list.forEach(function (f) {
        var row = el("tr", { cls: cls }, [el("td", { text: f.id }), el("td", { text: side(f.a) }), el("td", { text: side(f.b) })]);
        t.appendChild(row);
      });
      wrap.appendChild(t);
      return wrap;
    }
    if (D.kind === "labels") {
      box.appendChild(flipTable("right → wrong label (new misses, new false positives)", C.flips.pass_to_fail, "flip-pf"));
      box.appendChild(flipTable("wrong → right label (fixed misses, fixed false positives)", C.flips.fail_to_pass, "flip-fp"));
    } else if (D.kind !== "freetext") {
      box.appendChild(flipTable("pass → fail", C.flips.pass_to_fail, "flip-pf"));
      box.appendChild(flipTable("fail → pass", C.flips.fail_to_pass, "flip-fp"));
      box.appendChild(el("p", { text: "near_match stable in both runs (a coverage finding): " + (C.stable.length ? C.stable.join(", ") : "none") }));
      box.appendChild(flipTable("near_match flickering (in one run only)", C.flickering, "flicker"));
    }
    if (C.movers && C.movers.length) {
      var t = el("table", { cls: "movers" });
      t.appendChild(el("tr", null, ["case", "A F1", "B F1", "Δ"].map(function (h) { return el("th", { text: h }); })));
      C.movers.forEach(function (m) { t.appendChild(el("tr", null, [el("td", { text: m.id }), el("td", { text: frac(m.a, 4) }), el("td", { text: frac(m.b, 4) }), el("td", { text: (m.delta >= 0 ? "+" : "") + m.delta.toFixed(4) })])); });
      box.appendChild(el("div", null, [el("h3", { text: "biggest F1 movers" }), t]));
    }
  }
  draw();
  document.documentElement.setAttribute("data-ready", "1");
})();
