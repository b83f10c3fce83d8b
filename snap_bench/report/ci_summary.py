"""What a CI run shows where its users look: a Markdown summary (GitHub Actions' job summary, or
reports/summary.md for a pull-request comment) and one workflow command per failed or undecided check.

The summary: per model and instrument the verdict; then the gate's regressions and undecided comparisons
(with the runs that would decide them), the drifts (value, interval, margin) and the items that changed
beyond the run noise; then the conditions that changed most.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from snap_bench.judging.item_changes import reliable_items
from snap_bench.judging.judgement import Judgement
from snap_bench.judging.outcomes import REGRESSION, UNDECIDED

SUMMARY_FILE = "summary.md"
TOP_CHANGED = 10


def summary_markdown(judgement: Judgement, exit_line: str = "", changes_file: str = "changes.csv") -> str:
    """``changes_file``: where this run's changes.csv is, as the reader should find it."""
    lines = ["## snap-bench", ""]
    if exit_line:
        lines += [f"**{_cell(exit_line)}**", ""]
    if judgement.verdicts:
        lines += ["| model | instrument | verdict | composite | failed checks |", "|---|---|---|---|---|"]
        for (model, instrument), verdict in sorted(judgement.verdicts.items()):
            composite = "n/a" if verdict.composite is None else f"{verdict.composite:.3f}"
            failed = sum(not check.passed for check in verdict.checks)
            lines.append(f"| {_cell(model)} | {instrument} | **{verdict.verdict}** | {composite} | {failed} |")
        lines.append("")
    regressions = worst_first([c for c in judgement.baseline if c.outcome == REGRESSION])
    undecided = worst_first([c for c in judgement.baseline if c.outcome == UNDECIDED])
    for title, comparisons in (("Regressions", regressions), ("Undecided: never a pass", undecided)):
        if comparisons:
            lines += [f"### {title} ({len(comparisons)})", "", *_comparison_table(comparisons), ""]
    not_computed = [c for c in judgement.checks if c.decision in ("not judged", "not compared")]
    if not_computed:
        # Never a pass: each is named, so a green-looking table cannot hide what was not measured.
        lines += [f"### Not computed ({len(not_computed)}): never a pass", "", "| check | why |", "|---|---|"]
        lines += [f"| {_cell(record.name)} | {_cell(record.message)} |" for record in not_computed]
        lines.append("")
    moved = [d for d in judgement.drift if d.moved or d.undecided]
    if moved:
        lines += [
            f"### Drift ({sum(d.moved for d in moved)} moved, {sum(d.undecided for d in moved)} undecided)",
            "",
            "| model | instrument | construct | outcome | new - baseline | 90% interval | margin |",
        ]
        lines.append("|---|---|---|---|---|---|---|")
        for drift in moved:
            interval = _interval(drift.ci_low, drift.ci_high)
            margin = "none" if drift.margin is None else f"±{drift.margin:g}"
            lines.append(
                f"| {_cell(drift.model)} | {drift.instrument} | {_cell(drift.construct)} | {drift.outcome} | "
                f"{drift.difference:+.3f} | {interval} | {margin} |"
            )
        lines.append("")
    changed = [c for c in judgement.item_changes if c.reliable]
    if changed:
        lines += [
            f"### Items changed beyond the run noise ({len(changed)})",
            "",
            "| model | instrument | item | shift (keyed points) | q |",
            "|---|---|---|---|---|",
        ]
        lines += [
            f"| {_cell(c.model)} | {c.instrument} | {_cell(c.item)} | {c.shift or 0.0:+.2f} | {c.q or 0.0:.4f} |"
            for c in sorted(changed, key=lambda c: (c.q or 0.0, c.item))
        ]
        lines.append("")
    for summary in judgement.changes:
        lines += [
            f"### Changed conditions: {_cell(summary.model)} vs {_cell(summary.baseline)}",
            "",
            f"{len(summary.changes):,} of {summary.shared:,} shared conditions changed their answer "
            f"({_cell(changes_file)} lists each with both answers).",
            "",
        ]
        top = reliable_items(judgement.item_changes, summary.model)[:TOP_CHANGED]
        if top:
            lines += ["| instrument | item | changed conditions |", "|---|---|---|"]
            lines += [f"| {instrument} | {_cell(item)} | {count} |" for instrument, item, count in top]
            lines.append("")
        levels = summary.by_level()[:TOP_CHANGED]
        if levels:
            lines += ["| factor | level | changed conditions |", "|---|---|---|"]
            lines += [f"| {factor} | {_cell(level)} | {count} |" for factor, level, count in levels]
            lines.append("")
    return "\n".join(lines) + "\n"


def workflow_commands(judgement: Judgement) -> list[str]:
    """GitHub Actions annotations: ``::error`` per regression and per failed threshold check the exit status
    follows, ``::warning`` per undecided comparison, ungated failure, drift and changed item (an error where the
    gate follows drift or items)."""
    commands = []
    for record in judgement.checks:
        if record.kind == "threshold" and record.decision in ("fail", "ungated"):
            # a failed check the exit status does not follow (--snap-gate) is a warning, not an error
            level = "error" if record.decision == "fail" else "warning"
            commands.append(_command(level, f"{record.model} {record.instrument} {record.metric}", record.message))
    for comparison in worst_first(list(judgement.baseline)):
        if comparison.outcome == REGRESSION:
            commands.append(
                _command("error", f"regression: {comparison.model} {comparison.metric}", comparison.message)
            )
        elif comparison.outcome == UNDECIDED:
            commands.append(
                _command("warning", f"undecided: {comparison.model} {comparison.metric}", comparison.message)
            )
    for record in judgement.checks:
        if record.kind in ("drift", "items") and record.decision in ("fail", "ungated", "undecided"):
            level = "error" if record.decision == "fail" else "warning"
            commands.append(_command(level, f"{record.kind}: {record.model} {record.metric}", record.message))
    return commands


def _comparison_table(comparisons: Sequence[Any]) -> list[str]:
    rows = ["| model | instrument | metric | new - baseline | 95% interval | margin |", "|---|---|---|---|---|---|"]
    for c in comparisons:
        difference = "n/a" if c.difference is None else f"{c.difference:+.3f}"
        margin = "none" if c.margin is None else f"{c.margin:g}"
        interval = _interval(c.ci_low, c.ci_high)
        rows.append(f"| {_cell(c.model)} | {c.instrument} | {_cell(c.metric)} | {difference} | {interval} | {margin} |")
    return rows


def worst_first(comparisons: list[Any]) -> list[Any]:
    """Furthest past its margin first: the pessimistic end of the interval beyond -margin, in margins."""

    def shortfall(c: Any) -> float:
        if c.ci_low is None or c.ci_high is None or not c.margin:
            return 0.0
        worst = c.ci_low if c.better == "higher" else -c.ci_high
        return float(-(worst + c.margin) / c.margin)

    return sorted(comparisons, key=lambda c: (-shortfall(c), c.model, c.instrument, c.metric))


def _interval(low: float | None, high: float | None) -> str:
    return "none" if low is None or high is None else f"[{low:+.3f}, {high:+.3f}]"


def _cell(value: str) -> str:
    """Model names and items are the user's text: nothing in them may break the table or run as Markdown."""
    return value.replace("|", "\\|").replace("\n", " ").replace("<", "&lt;")


def _command(level: str, title: str, message: str) -> str:
    # Workflow command escaping (GitHub's toolkit): % first, then line breaks; properties also escape , and :.
    def data(text: str) -> str:
        return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")

    prop = data(title).replace(":", "%3A").replace(",", "%2C")
    return f"::{level} title={prop}::{data(message)}"
