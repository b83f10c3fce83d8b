"""The ``snap-bench`` console command: look at the results store, print the glossary, set up a repository.

snap-bench history [--store reports/history.sqlite] [--model NAME] [--instrument NAME] [--chart trend.svg]
snap-bench glossary
snap-bench init [DIR]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from snap_bench.design.config import PACKAGED
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


INIT_DESCRIPTION = """\
Set DIR up to run snap-bench's instruments in its own repository: one test file per instrument in
benchmarks/, a commented config/models.yaml whose entries extend the packaged model list, .env.example,
a .gitignore (reports/, .env) and .github/workflows/snap-bench.yml (records on a schedule, gates pull
requests against committed baselines). Nothing is written if any of these files exists.

The items, prompts, data, experiment.yaml and thresholds.yaml stay in the package:
  {defaults}
A file of the same relative path under DIR/config/ replaces the packaged one (copy it there to change it).
"""


def init_project(folder: Path) -> int:
    """``snap-bench init``: every file written, or none when one of them exists (status 1, naming them)."""
    from snap_bench.scaffold import existing, write_project

    taken = existing(folder)
    if taken:
        print(f"snap-bench init: {folder} already has these files; nothing was written:", file=sys.stderr)
        print("\n".join(f"  {relative}" for relative in taken), file=sys.stderr)
        print("Move them aside (and merge by hand afterwards), or choose another folder.", file=sys.stderr)
        return 1
    written = write_project(folder)
    print(f"snap-bench init: wrote {len(written)} files in {folder.resolve()}:")
    print("\n".join(f"  {relative}" for relative in written))
    print(NEXT_STEPS)
    return 0


NEXT_STEPS = """
Next (config/models.yaml lists your models beside the packaged ones):
  pytest benchmarks --snap-dry-run --model=gpt-5.2    what a run would ask, and its estimated cost
  export OPENROUTER_API_KEY=...                       or put it in .env (see .env.example)
  pytest benchmarks --model=gpt-5.2 -n 8              ask, record into cassettes/, judge; reports/report.html
  pytest benchmarks --model=gpt-5.2 --snap-save-baseline=baselines/{model}.json
Commit cassettes/ and baselines/: pull requests then replay offline and gate against the baseline
(.github/workflows/snap-bench.yml)."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="snap-bench", description="Look at snap-bench's stored results, or set a repository up to run it."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="{history,glossary,init}")
    history = commands.add_parser("history", help="each model's headline figures per instrument, session by session")
    history.add_argument("--store", type=Path, default=DEFAULT_STORE, help="Default: %(default)s")
    history.add_argument("--model", action="append", default=[], help="only this model (repeatable)")
    history.add_argument("--instrument", action="append", default=[], help="only this instrument (repeatable)")
    history.add_argument("--chart", type=Path, metavar="PATH", help="also write a trend chart (.svg or .png)")
    commands.add_parser("glossary", help="what each figure means (docs/glossary.md)")
    init = commands.add_parser(
        "init",
        help="write benchmarks/, config/models.yaml, .env.example, .gitignore and a CI workflow",
        description=INIT_DESCRIPTION.format(defaults=PACKAGED),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    init.add_argument("folder", nargs="?", type=Path, default=Path(), metavar="DIR", help="Default: this folder")
    options = parser.parse_args(argv)
    if options.command == "init":
        return init_project(options.folder)
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
