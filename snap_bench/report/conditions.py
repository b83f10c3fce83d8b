"""The per-condition table of the report: one row per observation, searchable and filterable, in a few KB of code.

pytest-html renders every test row into the page when it opens (7,912 rows: 7-9 s, 600,000 px, and 5 s per
filter toggle), so the benchmark's condition rows leave its table (:mod:`snap_bench.plugin.row_hooks`) and
are drawn here instead: the observations as compact JSON (each distinct text stored once and referred to by
number) and a small vanilla-JS table that renders only the rows in view. Search and filters run over the
JSON in memory. A row opens the full prompt and the answer.

Model text never becomes markup: the JSON is written with ``<``, ``>`` and ``&`` escaped (so no answer can
close the script element), and the script puts every text on the page through ``textContent``.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from typing import Any

from snap_bench.observations.observation import Observation
from snap_bench.report.formatting import ANSWER_CODES

DATA_ID = "snap-conditions-data"
FIXED_COLUMNS = ("model", "instrument", "item")
TAIL_COLUMNS = ("run", "score", "code", "reason", "outcome")
# What the filters offer as a drop-down (the rest, such as the reason, is reached through the search).
FILTERED = ("model", "instrument", "item", "code", "outcome")


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
    """The table's data: column names, the string table and one row of numbers per observation.

    A row holds string indexes for its text columns, the score as a number (``null`` when unscored), and
    the indexes of its answer and of each message as ``[role, content]`` pairs.
    """
    strings = _Strings()
    factors = factor_names(observations)
    # Who served each answer, where an endpoint said (a filter: one provider's answers at a time).
    served = ["provider"] if any(o.provider for o in observations) else []
    # Against a baseline: whether a condition's answer differs from the baseline's (a filter: "changed").
    compared = ["changed"] if changed is not None else []
    columns = [*FIXED_COLUMNS, *factors, *served, *compared, *TAIL_COLUMNS]
    rows: list[list[Any]] = []
    for o in observations:
        code = "" if o.code is None else f"{o.code} {ANSWER_CODES.get(o.code, 'unknown code')}"
        texts = [o.model, o.instrument, o.item, *(o.factors.get(name, "") for name in factors)]
        texts += [o.provider or "" for _ in served]
        texts += [_changed(o, changed) for _ in compared]
        row: list[Any] = [strings(value) for value in texts]
        row += [o.run, o.score if o.code is None else None, strings(code), strings(o.reason or "")]
        row.append(strings("passed" if o.code is None else "unscored"))
        row.append(strings(o.condition_id))
        row.append(strings("(no answer)" if o.raw_answer is None else o.raw_answer))
        row.append([[strings(str(m.get("role", "?"))), strings(str(m.get("content", "")))] for m in o.messages])
        rows.append(row)
    filtered = [c for c in columns if c in FILTERED or c in factors or c in served or c in compared]
    return {"columns": columns, "filtered": filtered, "strings": strings.values, "rows": rows}


def script_json(value: object) -> str:
    """JSON safe inside a ``<script>`` element: no ``</script>``, comment or entity can be formed."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


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

# The table's code. It reads the JSON once, keeps the indexes of the rows that pass the filters, and draws
# only the rows in view (plus a few) whenever the list scrolls or the filters change. Texts go in through
# textContent only.
SCRIPT = """<script id="snap-conditions-script">
(function () {
  const source = document.getElementById("%(data_id)s");
  if (!source) { return; }
  const data = JSON.parse(source.textContent);
  const S = data.strings, rows = data.rows, columns = data.columns, N = columns.length;
  const ROW = 22, EXTRA = 10, numeric = {run: true, score: true};
  const widths = {model: 150, instrument: 95, item: 60, run: 40, score: 48, code: 120, reason: 230, outcome: 75};
  const root = document.getElementById("snap-conditions");
  const scroll = root.querySelector(".snap-cond-scroll");
  const table = scroll.querySelector("table");
  const spacer = scroll.querySelector(".snap-cond-spacer");
  const tbody = table.querySelector("tbody");
  const count = root.querySelector(".snap-cond-count");
  const search = root.querySelector("input[type=search]");
  const detail = root.querySelector(".snap-cond-detail");
  const cell = (row, c) => (numeric[columns[c]] ? row[c] : S[row[c]]);
  // one lower-case text per row for the search: every column, the condition id and the answer
  const haystack = rows.map((row) => {
    const parts = [];
    for (let c = 0; c < N; c++) { parts.push(cell(row, c)); }
    parts.push(S[row[N + 1]], S[row[N + 2]]);
    return parts.join(" \\u0001 ").toLowerCase();
  });
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
    const values = [...new Set(rows.map((row) => S[row[c]]))].filter((v) => v !== "").sort();
    const label = document.createElement("label");
    label.textContent = name + " ";
    const select = document.createElement("select");
    select.dataset.column = name;
    const any = document.createElement("option"); any.value = ""; any.textContent = "all"; select.appendChild(any);
    values.forEach((v) => {
      const o = document.createElement("option"); o.value = v; o.textContent = v; select.appendChild(o);
    });
    select.addEventListener("change", () => { filters[c] = select.value; apply(); });
    label.appendChild(select); controls.appendChild(label);
  });
  let shown = rows.map((_, i) => i), sortColumn = -1, sortDown = false;
  function apply() {
    const query = search.value.trim().toLowerCase();
    const active = Object.entries(filters).filter(([, v]) => v !== "");
    shown = [];
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i];
      let keep = true;
      for (const [c, v] of active) { if (S[row[c]] !== v) { keep = false; break; } }
      if (keep && query && haystack[i].indexOf(query) < 0) { keep = false; }
      if (keep) { shown.push(i); }
    }
    if (sortColumn >= 0) { order(); }
    count.textContent = shown.length.toLocaleString("en") + " of " + rows.length.toLocaleString("en") + " conditions";
    spacer.style.height = (shown.length + 1) * ROW + "px";
    scroll.scrollTop = 0;
    draw();
  }
  function order() {
    const c = sortColumn, sign = sortDown ? -1 : 1;
    shown.sort((a, b) => {
      const x = cell(rows[a], c), y = cell(rows[b], c);
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
      const i = shown[k], row = rows[i];
      const tr = document.createElement("tr");
      tr.dataset.index = i;
      if (S[row[N - 1]] === "unscored") { tr.className = "snap-cond-unscored"; }
      for (let c = 0; c < N; c++) {
        const td = document.createElement("td");
        const value = cell(row, c);
        td.textContent = value === null ? "" : String(value);
        td.title = td.textContent;
        tr.appendChild(td);
      }
      fragment.appendChild(tr);
    }
    tbody.replaceChildren(fragment);
  }
  function open(i) {
    const row = rows[i];
    detail.replaceChildren();
    const title = document.createElement("h4");
    title.textContent = S[row[0]] + " \\u00b7 " + S[row[1]] + " \\u00b7 " + S[row[N]];
    detail.appendChild(title);
    const facts = document.createElement("p");
    facts.textContent = columns.map((name, c) => [name, cell(row, c)]).filter(([, v]) => v !== "")
      .map(([name, v]) => name + ": " + (v === null ? "none" : v)).join("; ");
    detail.appendChild(facts);
    const add = (label, text) => {
      const b = document.createElement("b"); b.textContent = label; detail.appendChild(b);
      const pre = document.createElement("pre"); pre.textContent = text; detail.appendChild(pre);
    };
    row[N + 2].forEach(([role, content]) => add(S[role], S[content]));
    add("answer", S[row[N + 1]]);
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
  search.addEventListener("input", apply);
  let pending = false;
  scroll.addEventListener("scroll", () => {
    if (!pending) { pending = true; requestAnimationFrame(() => { pending = false; draw(); }); }
  });
  apply();
  root.dataset.ready = "true";
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
        "filter by a column, sort by a header; a row opens its full prompt and the answer. The same data in full: "
        "observations.csv under Downloads.</p>"
        '<div id="snap-conditions">'
        '<div class="snap-cond-controls"><input type="search" placeholder="search conditions, reasons, answers" '
        'aria-label="search the conditions"><span class="snap-cond-filters"></span>'
        '<span class="snap-cond-count"></span></div>'
        '<div class="snap-cond-scroll"><div class="snap-cond-spacer"></div>'
        "<table><thead><tr></tr></thead><tbody></tbody></table></div>"
        '<div class="snap-cond-detail" hidden></div></div>'
    )
    data = (
        f'<script type="application/json" id="{DATA_ID}">{script_json(conditions_data(observations, changed))}</script>'
    )
    return STYLE + markup, data + SCRIPT % {"data_id": DATA_ID}


def conditions_only(observations: Sequence[Observation]) -> str:
    """The table alone, for a session that judged nothing (no summary to put it in)."""
    markup, script = conditions_section(observations)
    return f'<section class="snap-report" id="snap-report">{markup}</section>{script}' if markup else ""
