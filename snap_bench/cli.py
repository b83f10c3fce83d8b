"""The ``snap-bench`` console command: look at the results store, copy it, print the glossary, set up a
repository.

snap-bench history [--store PATH_OR_URL] [--model NAME] [--instrument NAME] [--chart trend.svg]
snap-bench history --copy FROM TO
snap-bench glossary
snap-bench init [DIR] [--instruments=all|none|NAME,...] [--questionnaire NAME]
snap-bench --version

A store is a SQLite file's path or a PostgreSQL URL (``postgresql://USER@HOST:PORT/DATABASE``, its password
from the environment: :mod:`snap_bench.history.address`).
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

from snap_bench.design.config import PACKAGED
from snap_bench.history.address import StoreAddress, StoreAddressError, store_address
from snap_bench.history.database import Store, StoreError
from snap_bench.history.session_coverage import StoredCoverage
from snap_bench.history.session_subset import StoredSubset
from snap_bench.history.store import Headline, read_headlines

DEFAULT_STORE = Path("reports") / "history.sqlite"


def history_tables(rows: Sequence[Headline]) -> str:
    """One table per model and instrument: a line per stored session, a column per judged figure; the column
    ``conditions`` marks a session that did not measure the model's whole design, the column ``design`` one that
    set out to ask only a subset of it."""
    blocks = []
    for key in sorted({(r.model, r.instrument) for r in rows}):
        own = [r for r in rows if (r.model, r.instrument) == key]
        metrics = sorted({r.metric for r in own})
        sessions = sorted({(r.recorded_at, r.session, r.result_digest) for r in own})
        header = ["recorded", "code", "config", "conditions", "design", "verdict", "composite", *metrics]
        lines = []
        for session in sessions:
            recorded_at = session[0]
            figures = {r.metric: r for r in own if (r.recorded_at, r.session, r.result_digest) == session}
            first = next(iter(figures.values()))
            composite = "" if first.composite is None else f"{first.composite:.3f}"
            values = [_figure(figures.get(metric)) for metric in metrics]
            lines.append(
                [
                    recorded_at,
                    first.code_version,
                    first.config_digest,
                    _conditions(first.coverage),
                    _design(first.design),
                    first.verdict,
                    composite,
                    *values,
                ]
            )
        widths = [max(len(str(cell)) for cell in column) for column in zip(header, *lines, strict=True)]
        render = [
            "  ".join(str(cell).ljust(width) for cell, width in zip(line, widths, strict=True))
            for line in [header, *lines]
        ]
        blocks.append("\n".join([f"{key[0]} · {key[1]} ({len(sessions)} session(s))", *render]))
    return "\n\n".join(blocks)


def _conditions(coverage: StoredCoverage) -> str:
    """``INCOMPLETE 648/1620`` for a session that did not measure its design, ``1620/1620`` for one that did,
    ``?`` where the store does not know (rows kept before it stored coverage)."""
    counted = "" if coverage.answered is None else f"{coverage.answered}/{coverage.designed}"
    if coverage.incomplete:
        return f"INCOMPLETE {counted}".rstrip()
    return counted or "?"


def _design(design: StoredSubset) -> str:
    """``SUBSET items M01,M02 of 25; 120 of 1620 conditions`` for a session that left part of the design out,
    ``whole`` for one that asked it all, ``?`` where the store does not know (rows kept before it stored it)."""
    if design.subset is not None:
        return f"SUBSET {design.subset.label()}"
    return "whole" if design.known else "?"


def _figure(row: Headline | None) -> str:
    if row is None or row.value is None:
        return "-"
    thin = "*" if row.n_designed and row.n / row.n_designed < 0.5 else ""
    return f"{row.value:.3f}{thin}"


INIT_DESCRIPTION = """\
Set DIR up to run snap-bench in its own repository: the shipped instruments it takes in benchmarks/ (one test
file or YAML file each; --instruments), optionally a questionnaire of its own (--questionnaire), snap-bench.toml
(marks the root, so the benchmarks' config/, cassettes/ and reports/ are found wherever pytest is started), a
commented config/models.yaml whose entries extend the packaged model list, .env.example, .gitignore lines
(reports/, .env) and .github/workflows/snap-bench.yml (records on a schedule, gates pull requests against
committed baselines). A file that exists is kept as it is; lines the .gitignore lacks are added to it.

The packaged questionnaires, prompts, data and thresholds.yaml stay in the package:
  {defaults}
A file of the same relative path under DIR/config/ replaces the packaged one (copy it there to change it).
"""


def init_project(folder: Path, instruments: str, questionnaire: str | None) -> int:
    """``snap-bench init``: what ``folder`` lacks is written, the .gitignore merged, nothing overwritten."""
    from snap_bench.scaffold import WORKFLOW, InitError, Workflow, chosen_instruments, project_files, write_project

    try:
        workflow = Workflow.of(folder)
        files = project_files(chosen_instruments(instruments), questionnaire, workflow)
    except InitError as error:
        print(f"snap-bench init: {error}", file=sys.stderr)
        return 2
    written_workflow = not (folder / WORKFLOW).exists()
    done = write_project(folder, files, workflow.install)
    print(f"snap-bench init in {folder.resolve()}:")
    if done.written:
        print(f"wrote {len(done.written)} file(s):")
        print("\n".join(f"  {relative}" for relative in done.written))
    if done.added:
        print("added to .gitignore (its own lines kept):")
        print("\n".join(f"  {line}" for line in done.added))
    if done.kept:
        print("kept as they are (they exist; compare with `snap-bench init` in an empty folder to merge by hand):")
        print("\n".join(f"  {relative}" for relative in done.kept))
    print(NEXT_STEPS)
    if written_workflow:
        keys = ", ".join(workflow.keys) or "none"
        said = (
            f"CI ({WORKFLOW}) installs {workflow.install.how}. Its recording job takes {keys} from the "
            "repository's secrets: add those of the providers you ask (Settings > Secrets and variables > Actions)."
        )
        print(textwrap.fill(said, 110, break_on_hyphens=False, break_long_words=False))
    return 0


NEXT_STEPS = """
Next (config/models.yaml lists your models beside the packaged ones):
  pytest benchmarks --snap-dry-run --model=gpt-5.2    what a run would ask, and its cost (worst case, expected)
  export OPENROUTER_API_KEY=...                       or put it in .env (see .env.example)
  pytest benchmarks --model=gpt-5.2 -n 8              ask, record into cassettes/, judge; reports/report.html
  pytest benchmarks --model=gpt-5.2 --snap-save-baseline=baselines/{model}.json
Offline, an instrument with no recording of a model is named and left out, not failed.
Commit snap-bench.toml, cassettes/ and baselines/: pull requests then replay offline and gate against the
baseline (.github/workflows/snap-bench.yml)."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="snap-bench", description="Look at snap-bench's stored results, or set a repository up to run it."
    )
    parser.add_argument("--version", action="version", version=f"snap-bench {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="{history,glossary,init}")
    history = commands.add_parser("history", help="each model's headline figures per instrument, session by session")
    history.add_argument(
        "--store",
        default=str(DEFAULT_STORE),
        metavar="PATH_OR_URL",
        help="a SQLite file or postgresql://USER@HOST:PORT/DATABASE. Default: %(default)s",
    )
    history.add_argument("--model", action="append", default=[], help="only this model (repeatable)")
    history.add_argument("--instrument", action="append", default=[], help="only this instrument (repeatable)")
    history.add_argument("--chart", type=Path, metavar="PATH", help="also write a trend chart (.svg or .png)")
    history.add_argument(
        "--copy",
        nargs=2,
        metavar=("FROM", "TO"),
        help="copy every row of one store into another (a SQLite file into PostgreSQL, or back); "
        "rows the target holds already are not copied again",
    )
    commands.add_parser("glossary", help="what each figure means (docs/glossary.md)")
    init = commands.add_parser(
        "init",
        help="set a repository up: benchmarks/, snap-bench.toml, config/models.yaml, .gitignore lines, a CI workflow",
        description=INIT_DESCRIPTION.format(defaults=PACKAGED),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    init.add_argument("folder", nargs="?", type=Path, default=Path(), metavar="DIR", help="Default: this folder")
    init.add_argument(
        "--instruments",
        default="all",
        metavar="all|none|NAME,...",
        help="the shipped instruments to take into benchmarks/: all, none, or a comma list of their names (a wrong "
        "name is refused, listing them). Default: %(default)s",
    )
    init.add_argument(
        "--questionnaire", metavar="NAME", help="also write benchmarks/NAME.yaml, a questionnaire of your own to edit"
    )
    options = parser.parse_args(argv)
    if options.command == "init":
        return init_project(options.folder, options.instruments, options.questionnaire)
    if options.command == "glossary":
        from snap_bench.instruments import instrument_kinds
        from snap_bench.report.glossary import glossary_markdown

        print(glossary_markdown(instrument_kinds()))
        return 0
    try:
        if options.copy:
            return _copy(*(store_address(value, source="--copy") for value in options.copy))
        address = store_address(options.store, source="--store")
        return _history(address, options.model, options.instrument, options.chart)
    except (StoreAddressError, StoreError) as error:  # (no message holds a password)
        print(f"snap-bench history: {error}", file=sys.stderr)
        return 2


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("snap-bench")
    except PackageNotFoundError:  # a checkout on sys.path, not installed
        return "(not installed)"


def _copy(source: StoreAddress, target: StoreAddress) -> int:
    from snap_bench.history.copy import copy_store

    copied = copy_store(source, target)
    print(f"copied {source} into {target}:")
    for table in copied:
        print(f"  {table.table}: {table.added} row(s) added, {table.present} already there")
    return 0


def _history(address: StoreAddress, models: list[str], instruments: list[str], chart: Path | None) -> int:
    with Store(address) as store:
        if not store.exists():
            print(
                f"snap-bench history: no results store at {address}; run the benchmarks first "
                "(pytest benchmarks) or give --store PATH_OR_URL",
                file=sys.stderr,
            )
            return 2
        rows = read_headlines(store, models, instruments)
    if not rows:
        print(f"snap-bench history: no headline figures in {address} for that selection", file=sys.stderr)
        return 1
    print(history_tables(rows))
    print("\n* rests on under half of its design")
    if any(row.coverage.incomplete for row in rows):
        print(
            "INCOMPLETE: the session did not measure every designed condition of the model (conditions measured / "
            "designed); its figures are no step of the trend"
        )
    if any(row.design.is_subset for row in rows):
        print(
            "SUBSET: the session set out to ask only part of the model's design (--snap-items, --snap-temperatures, "
            "--snap-prompts, fewer --snap-runs, --snap-shard, -k/-m): what it left out, and the design's conditions "
            "asked of those designed; its figures are no step of the whole design's trend"
        )
    if chart is not None:
        from snap_bench.instruments import metric_catalogue
        from snap_bench.report.trend import write_trend_chart  # matplotlib: only when a chart is asked for

        write_trend_chart(rows, chart, metric_catalogue())
        print(f"trend chart: {chart}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
