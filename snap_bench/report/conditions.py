"""The per-condition table of the report: one row per observation, searchable and filterable, in a few KB of code.

pytest-html renders every test row into the page when it opens (7,912 rows: 7-9 s, 600,000 px, and 5 s per
filter toggle), so the benchmark's condition rows leave its table (:mod:`snap_bench.plugin.reporting`) and
are drawn here instead, by a small vanilla-JS table that renders only the rows in view. Search and filters
run over the data in memory. A row opens the full prompt and the answer.

The data are embedded once, compactly, and unpacked on demand. They are columnar JSON (one array per
column; each distinct text stored once and referred to by number, each distinct list of messages once),
gzip-compressed and base64-encoded inside the page: ten models over every shipped instrument (52,040
conditions) take 5 bytes per condition instead of 117 as rows of JSON, so the report stays one file
of a few MB. The page unpacks them with the browser's own ``DecompressionStream`` only when the section
comes near the screen (or its search box is used), so opening the report draws its first screen without
them. A side file (``report-conditions.js``) would have made report.html smaller still, but a report
copied or mailed alone would lose its table; the one file stays the whole record.

Model text never becomes markup: the embedded data are base64 (no ``<`` can occur), and the script puts
every text on the page through ``textContent``.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
from collections.abc import Collection, Sequence
from typing import Any

from snap_bench.observations.observation import Observation
from snap_bench.report.formatting import ANSWER_CODES

DATA_ID = "snap-conditions-data"
# The data element's type: no browser runs it, and it says how the text is encoded.
DATA_TYPE = "application/gzip+base64"
FIXED_COLUMNS = ("model", "instrument", "item")
TAIL_COLUMNS = ("run", "score", "code", "reason", "outcome")
# What the filters offer as a drop-down (the rest, such as the reason, is reached through the search).
FILTERED = ("model", "instrument", "item", "code", "outcome")
# Columns whose values are numbers rather than string indexes.
NUMERIC = ("run", "score")


class _Strings:
    """Each distinct text once; a row refers to it by its index."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.values: list[str] = []

    def __call__(self, value: str) -> int:
        found = self.index.get(value)
        if found is None:
            found = self.index[value] = len(self.values)
            self.values.append(value)
        return found


class _Prompts:
    """Each distinct list of messages once (the same prompt is sent to every model and every run)."""

    def __init__(self) -> None:
        self.index: dict[tuple[int, ...], int] = {}
        self.values: list[tuple[int, ...]] = []

    def __call__(self, value: tuple[int, ...]) -> int:
        found = self.index.get(value)
        if found is None:
            found = self.index[value] = len(self.values)
            self.values.append(value)
        return found


def factor_names(observations: Sequence[Observation]) -> list[str]:
    """Every factor of the observations, in the order the instruments first name them."""
    names: dict[str, None] = {}
    for observation in observations:
        for name in observation.factors:
            names.setdefault(name, None)
    return list(names)


def conditions_data(
    observations: Sequence[Observation], changed: Collection[tuple[str, str, str]] | None = None
) -> dict[str, Any]:
    """The table's data, by column: the column names, the string table and one array of numbers per column.

    ``values[c][i]`` is row ``i``'s string index in column ``c``, except the run and the score, which are
    numbers (the score ``null`` when unscored). ``ids`` and ``answers`` hold each row's condition id and
    answer as string indexes, ``prompt`` the index of its list of messages in ``prompts``, each a flat list
    ``[role, content, role, content, ...]`` of string indexes. By column, a long run of the same model or
    level compresses to almost nothing.
    """
    strings = _Strings()
    prompts = _Prompts()
    factors = factor_names(observations)
    # Who served each answer, where an endpoint said (a filter: one provider's answers at a time).
    served = ["provider"] if any(o.provider for o in observations) else []
    # Against a baseline: whether a condition's answer differs from the baseline's (a filter: "changed").
    compared = ["changed"] if changed is not None else []
    columns = [*FIXED_COLUMNS, *factors, *served, *compared, *TAIL_COLUMNS]
    values: list[list[Any]] = [[] for _ in columns]
    ids: list[int] = []
    answers: list[int] = []
    prompt: list[int] = []
    for o in observations:
        code = "" if o.code is None else f"{o.code} {ANSWER_CODES.get(o.code, 'unknown code')}"
        texts = [o.model, o.instrument, o.item, *(o.factors.get(name, "") for name in factors)]
        texts += [o.provider or "" for _ in served]
        texts += [_changed(o, changed) for _ in compared]
        row: list[Any] = [strings(value) for value in texts]
        row += [o.run, o.score if o.code is None else None, strings(code), strings(o.reason or "")]
        row.append(strings("passed" if o.code is None else "unscored"))
        for column, value in zip(values, row, strict=True):
            column.append(value)
        ids.append(strings(o.condition_id))
        answers.append(strings("(no answer)" if o.raw_answer is None else o.raw_answer))
        flat = [strings(str(part)) for m in o.messages for part in (m.get("role", "?"), m.get("content", ""))]
        prompt.append(prompts(tuple(flat)))
    filtered = [c for c in columns if c in FILTERED or c in factors or c in served or c in compared]
    return {
        "columns": columns,
        "filtered": filtered,
        "strings": strings.values,
        "prompts": [list(flat) for flat in prompts.values],
        "values": values,
        "ids": ids,
        "answers": answers,
        "prompt": prompt,
    }


def pack(data: dict[str, Any]) -> str:
    """The data as the page embeds them: compact JSON, gzip-compressed (the same data give the same bytes),
    in base64: text with no ``<``, ``&`` or quote, safe inside a ``<script>`` element."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return base64.b64encode(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)).decode("ascii")


def unpack(packed: str) -> dict[str, Any]:
    """The data :func:`pack` embedded."""
    value: dict[str, Any] = json.loads(gzip.decompress(base64.b64decode(packed)).decode("utf-8"))
    return value


def embedded_conditions(page: str) -> dict[str, Any] | None:
    """The conditions' data embedded in a report page (None when it has no conditions table)."""
    found = re.search(rf'<script type="{re.escape(DATA_TYPE)}" id="{DATA_ID}">([^<]*)</script>', page)
    return None if found is None else unpack(found.group(1))


def rows_of(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Each row of the data as the table shows it: every column's value, the condition id, the answer and the
    messages as ``(role, content)`` pairs (for a reader of the data in Python, such as a test)."""
    strings, columns = data["strings"], data["columns"]
    rows = []
    for i, condition_id in enumerate(data["ids"]):
        row: dict[str, Any] = {
            name: value[i] if name in NUMERIC else strings[value[i]]
            for name, value in zip(columns, data["values"], strict=True)
        }
        flat = data["prompts"][data["prompt"][i]]
        row["condition_id"] = strings[condition_id]
        row["answer"] = strings[data["answers"][i]]
        row["messages"] = [(strings[flat[k]], strings[flat[k + 1]]) for k in range(0, len(flat), 2)]
        rows.append(row)
    return rows


STYLE = """<style>
#snap-conditions .snap-cond-controls{display:flex;flex-wrap:wrap;gap:6px 10px;align-items:center;margin:.4em 0}
#snap-conditions input[type=search]{width:22em;padding:3px 6px}
#snap-conditions select{max-width:11em}
#snap-conditions label{font-size:12px;color:#57606a}
.snap-cond-scroll{height:440px;overflow:auto;position:relative;border:1px solid #d0d7de}
.snap-cond-scroll table{table-layout:fixed;border-collapse:collapse;position:absolute;top:0;left:0;min-width:100%;
font-size:12px}
.snap-cond-scroll thead th{position:sticky;top:0;background:#f6f8fa;cursor:pointer;z-index:1}
.snap-cond-scroll th,.snap-cond-scroll td{border-bottom:1px solid #eaeef2;padding:0 5px;height:22px;white-space:nowrap;
overflow:hidden;text-overflow:ellipsis;text-align:left}
.snap-cond-scroll tbody tr{cursor:pointer}.snap-cond-scroll tbody tr:hover{background:#f0f6ff}
.snap-cond-scroll tr.snap-cond-unscored td{color:#9a6700}
.snap-cond-detail{border:1px solid #d0d7de;padding:.4em .8em;margin:.4em 0;max-height:420px;overflow:auto}
.snap-cond-detail pre{white-space:pre-wrap;background:#f6f8fa;border:1px solid #d0d7de;padding:4px 6px;margin:2px 0 6px}
</style>"""

# The table's code. Nothing runs on opening but a watch on the section: when it comes near the screen (or its
# search box is used) the data are unpacked (base64, then the browser's gzip), the filters are built, and the
# indexes of the rows that pass the filters are kept; only the rows in view (plus a few) are drawn, whenever the
# list scrolls or the filters change. The search's lower-case texts are built at the first search. Texts go in
# through textContent only.
SCRIPT = """<script id="snap-conditions-script">
(function () {
  const source = document.getElementById("%(data_id)s");
  const root = document.getElementById("snap-conditions");
  if (!source || !root) { return; }
  const count = root.querySelector(".snap-cond-count");
  const search = root.querySelector("input[type=search]");
  let started = false, apply = () => {};
  async function unpack() {
    const bytes = Uint8Array.from(atob(source.textContent.trim()), (c) => c.charCodeAt(0));
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return JSON.parse(await new Response(stream).text());
  }
  function start() {
    if (started) { return; }
    started = true;
    if (typeof DecompressionStream === "undefined") {
      count.textContent = "This browser cannot unpack the table (it needs DecompressionStream: Chrome 80, " +
        "Firefox 113, Safari 16.4 or later); observations.csv under Downloads holds the same data.";
      return;
    }
    count.textContent = "unpacking the conditions\\u2026";
    unpack().then(build).catch((error) => { count.textContent = "the conditions could not be unpacked: " + error; });
  }
  function build(data) {
    const S = data.strings, columns = data.columns, values = data.values, N = columns.length;
    const ids = data.ids, answers = data.answers, prompts = data.prompts, prompt = data.prompt, size = ids.length;
    const ROW = 22, EXTRA = 10, numeric = {run: true, score: true};
    const widths = {model: 150, instrument: 95, item: 60, run: 40, score: 48, code: 120, reason: 230, outcome: 75};
    const scroll = root.querySelector(".snap-cond-scroll");
    const table = scroll.querySelector("table");
    const spacer = scroll.querySelector(".snap-cond-spacer");
    const tbody = table.querySelector("tbody");
    const detail = root.querySelector(".snap-cond-detail");
    const outcome = columns.indexOf("outcome");
    const cell = (i, c) => (numeric[columns[c]] ? values[c][i] : S[values[c][i]]);
    // one lower-case text per row for the search (every column, the condition id and the answer), built once
    let haystack = null;
    function texts() {
      if (haystack === null) {
        haystack = new Array(size);
        for (let i = 0; i < size; i++) {
          const parts = [];
          for (let c = 0; c < N; c++) { parts.push(cell(i, c)); }
          parts.push(S[ids[i]], S[answers[i]]);
          haystack[i] = parts.join(" \\u0001 ").toLowerCase();
        }
      }
      return haystack;
    }
    const head = table.querySelector("thead tr");
    columns.forEach((name, c) => {
      const th = document.createElement("th");
      th.textContent = name; th.title = name; th.dataset.column = c; th.style.width = (widths[name] || 78) + "px";
      head.appendChild(th);
    });
    const filters = {};
    const controls = root.querySelector(".snap-cond-filters");
    data.filtered.forEach((name) => {
      const c = columns.indexOf(name);
      const values_ = [...new Set(values[c])].map((v) => S[v]).filter((v) => v !== "").sort();
      const label = document.createElement("label");
      label.textContent = name + " ";
      const select = document.createElement("select");
      select.dataset.column = name;
      const any = document.createElement("option"); any.value = ""; any.textContent = "all"; select.appendChild(any);
      values_.forEach((v) => {
        const o = document.createElement("option"); o.value = v; o.textContent = v; select.appendChild(o);
      });
      select.addEventListener("change", () => { filters[c] = select.value; apply(); });
      label.appendChild(select); controls.appendChild(label);
    });
    let shown = [], sortColumn = -1, sortDown = false;
    apply = function () {
      const query = search.value.trim().toLowerCase();
      const active = Object.entries(filters).filter(([, v]) => v !== "").map(([c, v]) => [values[c], S.indexOf(v)]);
      const words = query ? texts() : null;
      shown = [];
      for (let i = 0; i < size; i++) {
        let keep = true;
        for (const [column, v] of active) { if (column[i] !== v) { keep = false; break; } }
        if (keep && words !== null && words[i].indexOf(query) < 0) { keep = false; }
        if (keep) { shown.push(i); }
      }
      if (sortColumn >= 0) { order(); }
      count.textContent = shown.length.toLocaleString("en") + " of " + size.toLocaleString("en") + " conditions";
      spacer.style.height = (shown.length + 1) * ROW + "px";
      scroll.scrollTop = 0;
      draw();
    };
    function order() {
      const c = sortColumn, sign = sortDown ? -1 : 1;
      shown.sort((a, b) => {
        const x = cell(a, c), y = cell(b, c);
        if (x === y) { return a - b; }
        if (x === null || x === "") { return 1; }
        if (y === null || y === "") { return -1; }
        return (x < y ? -1 : 1) * sign;
      });
    }
    function draw() {
      const first = Math.max(0, Math.floor(scroll.scrollTop / ROW) - EXTRA);
      const last = Math.min(shown.length, first + Math.ceil(scroll.clientHeight / ROW) + 2 * EXTRA);
      table.style.top = first * ROW + "px";
      const fragment = document.createDocumentFragment();
      for (let k = first; k < last; k++) {
        const i = shown[k];
        const tr = document.createElement("tr");
        tr.dataset.index = i;
        if (S[values[outcome][i]] === "unscored") { tr.className = "snap-cond-unscored"; }
        for (let c = 0; c < N; c++) {
          const td = document.createElement("td");
          const value = cell(i, c);
          td.textContent = value === null ? "" : String(value);
          td.title = td.textContent;
          tr.appendChild(td);
        }
        fragment.appendChild(tr);
      }
      tbody.replaceChildren(fragment);
    }
    function open(i) {
      detail.replaceChildren();
      const title = document.createElement("h4");
      title.textContent = cell(i, 0) + " \\u00b7 " + cell(i, 1) + " \\u00b7 " + S[ids[i]];
      detail.appendChild(title);
      const facts = document.createElement("p");
      facts.textContent = columns.map((name, c) => [name, cell(i, c)]).filter(([, v]) => v !== "")
        .map(([name, v]) => name + ": " + (v === null ? "none" : v)).join("; ");
      detail.appendChild(facts);
      const add = (label, text) => {
        const b = document.createElement("b"); b.textContent = label; detail.appendChild(b);
        const pre = document.createElement("pre"); pre.textContent = text; detail.appendChild(pre);
      };
      const messages = prompts[prompt[i]];
      for (let k = 0; k + 1 < messages.length; k += 2) { add(S[messages[k]], S[messages[k + 1]]); }
      add("answer", S[answers[i]]);
      detail.hidden = false;
    }
    tbody.addEventListener("click", (event) => {
      const tr = event.target.closest("tr");
      if (tr) { open(Number(tr.dataset.index)); }
    });
    head.addEventListener("click", (event) => {
      const th = event.target.closest("th");
      if (!th) { return; }
      const c = Number(th.dataset.column);
      sortDown = sortColumn === c ? !sortDown : false;
      sortColumn = c;
      apply();
    });
    let pending = false;
    scroll.addEventListener("scroll", () => {
      if (!pending) { pending = true; requestAnimationFrame(() => { pending = false; draw(); }); }
    });
    apply();
    root.dataset.ready = "true";
  }
  search.addEventListener("input", () => apply());
  search.addEventListener("focus", start);
  if ("IntersectionObserver" in window) {
    const watch = new IntersectionObserver((seen) => {
      if (seen.some((entry) => entry.isIntersecting)) { watch.disconnect(); start(); }
    }, {rootMargin: "600px 0px"});
    watch.observe(root);
  } else {
    start();
  }
})();
</script>"""


def _changed(observation: Observation, changed: Collection[tuple[str, str, str]] | None) -> str:
    key = (observation.model, observation.instrument, observation.condition_id)
    return "changed" if changed is not None and key in changed else "same"


def conditions_section(
    observations: Sequence[Observation], changed: Collection[tuple[str, str, str]] | None = None
) -> tuple[str, str]:
    """The section's markup (inside the report's section) and its data and script (outside it)."""
    if not observations:
        return "", ""
    markup = (
        '<h3 id="snap-conditions-title">Every condition</h3>'
        f"<p>{len(observations):,} conditions, one row each: search any text (item, reason, condition id, answer), "
        "filter by a column, sort by a header; a row opens its full prompt and the answer (the table is unpacked "
        "when it comes into view). The same data in full: the observations under Downloads.</p>"
        '<div id="snap-conditions">'
        '<div class="snap-cond-controls"><input type="search" placeholder="search conditions, reasons, answers" '
        'aria-label="search the conditions"><span class="snap-cond-filters"></span>'
        '<span class="snap-cond-count"></span></div>'
        '<div class="snap-cond-scroll"><div class="snap-cond-spacer"></div>'
        "<table><thead><tr></tr></thead><tbody></tbody></table></div>"
        '<div class="snap-cond-detail" hidden></div></div>'
    )
    packed = pack(conditions_data(observations, changed))
    data = f'<script type="{DATA_TYPE}" id="{DATA_ID}">{packed}</script>'
    return STYLE + markup, data + SCRIPT % {"data_id": DATA_ID}


def conditions_only(observations: Sequence[Observation]) -> str:
    """The table alone, for a session that judged nothing (no summary to put it in)."""
    markup, script = conditions_section(observations)
    return f'<section class="snap-report" id="snap-report">{markup}</section>{script}' if markup else ""
