"""The ``snap-bench`` console command: look at the results store, print the glossary.

snap-bench history [--store reports/history.sqlite] [--model NAME] [--instrument NAME] [--chart trend.svg]
snap-bench glossary
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from snap_bench.history.store import Headline, read_headlines

DEFAULT_STORE = Path("reports") / "history.sqlite"


def history_tables(rows: Sequence[Headline]) -> str:
    """One table per model and instrument: a line per stored session, a column per judged figure."""
    blocks = []
    for key in sorted({(r.model, r.instrument) for r in rows}):
        own = [r for r in rows if (r.model, r.instrument) == key]
        metrics = sorted({r.metric for r in own})
        sessions = sorted({(r.recorded_at, r.result_digest) for r in own})
        header = ["recorded", "code", "config", "verdict", "composite", *metrics]
        lines = []
        for recorded_at, digest in sessions:
            figures = {r.metric: r for r in own if (r.recorded_at, r.result_digest) == (recorded_at, digest)}
            first = next(iter(figures.values()))
            composite = "" if first.composite is None else f"{first.composite:.3f}"
            values = [_figure(figures.get(metric)) for metric in metrics]
            lines.append([recorded_at, first.code_version, first.config_digest, first.verdict, composite, *values])
        widths = [max(len(str(cell)) for cell in column) for column in zip(header, *lines, strict=True)]
        render = [
            "  ".join(str(cell).ljust(width) for cell, width in zip(line, widths, strict=True))
            for line in [header, *lines]
        ]
        blocks.append("\n".join([f"{key[0]} · {key[1]} ({len(sessions)} session(s))", *render]))
    return "\n\n".join(blocks)


def _figure(row: Headline | None) -> str:
    if row is None or row.value is None:
        return "-"
    thin = "*" if row.n_designed and row.n / row.n_designed < 0.5 else ""
    return f"{row.value:.3f}{thin}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="snap-bench", description="Look at snap-bench's stored results.")
    commands = parser.add_subparsers(dest="command", required=True)
    history = commands.add_parser("history", help="each model's headline figures per instrument, session by session")
    history.add_argument("--store", type=Path, default=DEFAULT_STORE, help="Default: %(default)s")
    history.add_argument("--model", action="append", default=[], help="only this model (repeatable)")
    history.add_argument("--instrument", action="append", default=[], help="only this instrument (repeatable)")
    history.add_argument("--chart", type=Path, metavar="PATH", help="also write a trend chart (.svg or .png)")
    commands.add_parser("glossary", help="what each figure means (docs/glossary.md)")
    options = parser.parse_args(argv)
    if options.command == "glossary":
        from snap_bench.instruments import registered
        from snap_bench.report.glossary import glossary_markdown

        print(glossary_markdown(registered()))
        return 0
    if not options.store.is_file():
        print(
            f"snap-bench history: no results store at {options.store}; run the benchmarks first "
            "(pytest benchmarks) or give --store PATH",
            file=sys.stderr,
        )
        return 2
    rows = read_headlines(options.store, options.model, options.instrument)
    if not rows:
        print(f"snap-bench history: no headline figures in {options.store} for that selection", file=sys.stderr)
        return 1
    print(history_tables(rows))
    print("\n* rests on under half of its design")
    if options.chart is not None:
        from snap_bench.report.trend import write_trend_chart  # matplotlib: only when a chart is asked for

        write_trend_chart(rows, options.chart)
        print(f"trend chart: {options.chart}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
