"""Where a CI user looks: reports/summary.md always (ready for a pull-request comment), and under GitHub
Actions (``GITHUB_ACTIONS=true``) the same Markdown appended to ``$GITHUB_STEP_SUMMARY`` and one workflow
command per failed or inconclusive check in the job's log."""

from __future__ import annotations

import os
from pathlib import Path

from snap_bench.judging.exit_status import ExitDecision
from snap_bench.judging.judgement import Judgement
from snap_bench.report.changes_file import CHANGES_FILE
from snap_bench.report.ci_summary import SUMMARY_FILE, summary_markdown, workflow_commands
from snap_bench.wire.atomic import write_atomically


def in_github_actions() -> bool:
    return os.environ.get("GITHUB_ACTIONS") == "true"


def write_ci_summary(out_dir: Path, judgement: Judgement, decision: ExitDecision | None) -> None:
    exit_line = "" if decision is None else f"exit status {decision.code}: {decision.reason}"
    text = summary_markdown(judgement, exit_line, shown_path(out_dir / CHANGES_FILE))
    write_atomically(out_dir / SUMMARY_FILE, text.encode("utf-8"))
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if in_github_actions() and step_summary:
        with Path(step_summary).open("a", encoding="utf-8") as handle:  # appended: other steps write there too
            handle.write(text)


def ci_annotations(judgement: Judgement | None) -> list[str]:
    """The workflow commands to print, under GitHub Actions only (elsewhere they would be noise)."""
    return workflow_commands(judgement) if judgement is not None and in_github_actions() else []


def shown_path(path: Path) -> str:
    """A path as the user would type it: relative to where pytest runs when it lies below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
