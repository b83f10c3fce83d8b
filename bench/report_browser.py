"""How fast the HTML report opens, searches and filters in Chromium, and how large it is.

Reads a report written by the benchmark (``make benchmark`` writes reports/report.html: 7,912 conditions)
and drives Debian's Chromium through playwright (never ``playwright install``). Each figure is the median
of ``--repeat`` tries:

- open: from navigation to the page's load (the first screen drawn; the conditions table is unpacked on demand);
- table: from scrolling to the conditions table to its rows being drawn (its ``data-ready``: the embedded data
  unpacked and the filters built);
- search / filter: from setting the search box or a filter to the table's rows being drawn again;
- baseline, in the same browser and run: drawing every condition as a plain DOM table (as pytest-html
  does with its rows) and filtering it by hiding rows, on the same data.

Targets: open < 2 s, table < 2 s, search and filter < 0.5 s, file < 5 MB.

    .venv/bin/python -m bench.report_browser [--report reports/report.html] [--repeat 5]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]

# Time one change of the search box or a filter, to the next frame after the table is redrawn.
TIME_CHANGE = """async ([selector, value, event]) => {
  const element = document.querySelector(selector);
  const start = performance.now();
  element.value = value;
  element.dispatchEvent(new Event(event));
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  return performance.now() - start;
}"""
# The baseline: every condition as a row of a plain table, then a filter that hides the rows not matching.
NAIVE_TABLE = """async (query) => {
  const packed = document.getElementById("snap-conditions-data").textContent.trim();
  const bytes = Uint8Array.from(atob(packed), (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  const data = JSON.parse(await new Response(stream).text());
  const S = data.strings, N = data.columns.length, values = data.values;
  const start = performance.now();
  const table = document.createElement("table");
  const body = document.createElement("tbody");
  for (let i = 0; i < data.ids.length; i++) {
    const tr = document.createElement("tr");
    for (let c = 0; c < N; c++) {
      const td = document.createElement("td");
      const value = values[c][i];
      td.textContent = data.columns[c] === "run" || data.columns[c] === "score" ? String(value) : S[value];
      tr.appendChild(td);
    }
    body.appendChild(tr);
  }
  table.appendChild(body);
  document.body.appendChild(table);
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  const drawn = performance.now() - start;
  const filterStart = performance.now();
  for (const tr of body.rows) { tr.style.display = tr.textContent.toLowerCase().includes(query) ? "" : "none"; }
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  const filtered = performance.now() - filterStart;
  table.remove();
  return [drawn, filtered];
}"""


def measure(report: Path, repeat: int) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    timings: dict[str, list[float]] = {
        "open": [],
        "table": [],
        "search": [],
        "filter": [],
        "naive_draw": [],
        "naive_filter": [],
    }
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            for _ in range(repeat):
                page: Any = browser.new_page(viewport={"width": 1440, "height": 900})
                start = time.perf_counter()
                page.goto(report.as_uri(), wait_until="load")
                timings["open"].append(time.perf_counter() - start)
                start = time.perf_counter()
                page.locator("#snap-conditions").scroll_into_view_if_needed()
                page.wait_for_selector("#snap-conditions[data-ready]", state="attached")
                timings["table"].append(time.perf_counter() - start)
                search = page.evaluate(TIME_CHANGE, ["#snap-conditions input[type=search]", "refus", "input"])
                timings["search"].append(search / 1000)
                page.evaluate(TIME_CHANGE, ["#snap-conditions input[type=search]", "", "input"])
                model = page.eval_on_selector("select[data-column=model]", "s => s.options[s.options.length - 1].value")
                timings["filter"].append(
                    page.evaluate(TIME_CHANGE, ["select[data-column=model]", model, "change"]) / 1000
                )
                drawn, filtered = page.evaluate(NAIVE_TABLE, "refus")
                timings["naive_draw"].append(drawn / 1000)
                timings["naive_filter"].append(filtered / 1000)
                page.close()
        finally:
            browser.close()
    return {name: statistics.median(values) for name, values in timings.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--report", type=Path, default=Path("reports/report.html"), help="Default: %(default)s")
    parser.add_argument("--repeat", type=int, default=5, help="Default: %(default)s")
    options = parser.parse_args()
    if not options.report.is_file():
        print(f"no report at {options.report}: run `make benchmark` first (or give --report)", file=sys.stderr)
        return 2
    figures = measure(options.report.resolve(), options.repeat)
    size = options.report.stat().st_size / 1e6
    print(f"report: {options.report} ({size:.1f} MB; target < 5 MB)")
    print(f"open (load, first screen drawn): {figures['open']:.2f} s (target < 2 s)")
    print(f"conditions table (scrolled to: unpacked and drawn): {figures['table']:.2f} s (target < 2 s)")
    print(f"search: {figures['search'] * 1000:.0f} ms, filter: {figures['filter'] * 1000:.0f} ms (target < 500 ms)")
    print(
        f"baseline, every condition as a DOM row: draw {figures['naive_draw']:.2f} s, "
        f"filter {figures['naive_filter'] * 1000:.0f} ms"
    )
    print(
        f"ratio to the baseline: drawing {figures['naive_draw'] / max(figures['table'], 1e-9):.1f}x unpacking and "
        f"drawing the table, filtering {figures['naive_filter'] / max(figures['filter'], 1e-9):.1f}x slower"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
