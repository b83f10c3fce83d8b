"""A whole benchmark session in one call, with no test runner: plan, ask, judge, decide, write.

``run_session(["--model=m", "--snap-items=M01"], root=project)`` reads the same options as ``pytest benchmarks``
(snap_bench.session.command_line), asks each planned condition through the same asker (replay, recording, the
pace, the budget, the stops, the batch step), judges and writes the same files, and returns what the session
decided as one immutable :class:`SessionResult`. The plugin is this, with a pytest test per condition; the
project's session tests call it in-process (inspect_ai's ``eval()`` is the model: one function that its command
line and its tests both call).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from snap_bench.asking.asker import BatchPending, RecordingUnavailable
from snap_bench.asking.attempts import BudgetReached
from snap_bench.asking.batch.ledger import PENDING_IN_A_BATCH
from snap_bench.asking.interruption import Interrupted
from snap_bench.asking.pacing import pace_summary
from snap_bench.asking.state_folder import state_folder
from snap_bench.instruments import Instrument
from snap_bench.judging.judgement import Judgement
from snap_bench.observations.case import Case
from snap_bench.observations.observation import Condition, Observation
from snap_bench.report.terminal import summary_lines, verdict_block
from snap_bench.session.command_line import CommandLine
from snap_bench.session.outcome import CheckOutcome, check_outcomes
from snap_bench.session.scope import RunPaths
from snap_bench.session.settings import SessionSettings, UsageProblem, check_out_dir
from snap_bench.session.stage import BenchmarkSession

# pytest's status for an interrupted session, which the exit decision keeps (snap_bench.judging.exit_status).
INTERRUPTED = 2


@dataclass(frozen=True)
class SessionResult:
    """What a session decided and left: its exit status and why, the judgement (None: nothing judged), each
    check's outcome, the observations, what it said once, and its terminal summary's lines."""

    exit_status: int
    reason: str
    judgement: Judgement | None
    checks: tuple[CheckOutcome, ...]
    observations: tuple[Observation, ...]
    notices: tuple[str, ...]
    summary: tuple[str, ...]
    out_dir: Path
    planned: int  # the conditions the session set out to ask
    # Condition id -> why it has no answer although it was asked for (a recording missing or damaged, the budget
    # spent, a batch pending): what pytest shows as the test's failure or skip message.
    not_measured: Mapping[str, str]
    # Condition id -> what asking it took beyond one attempt (pytest prints each as "snap-bench: retried ...").
    retried: Mapping[str, str]

    def check(self, name: str) -> CheckOutcome:
        """The check named ``name`` (``model-metric``, as its report is named); KeyError naming the others."""
        found = {check.name: check for check in self.checks}
        if name not in found:
            raise KeyError(f"no check {name!r}; the session's: {', '.join(found)}")
        return found[name]


def run_session(argv: Sequence[str] = (), *, root: Path, ini: Mapping[str, str] | None = None) -> SessionResult:
    """Run the session that ``pytest <paths> <argv>`` would run in the project at ``root`` (the paths among
    ``argv``; the benchmarks folder when none is given). A usage problem raises UsageProblem before anything is
    asked."""
    root = root.resolve()  # as pytest's invocation folder is: the recordings' lookups compare resolved paths
    command_line = CommandLine(argv, root=root, ini=ini)
    settings = SessionSettings.from_config(command_line)
    if settings.dry_run:
        # The dry run prices what pytest collects (-k, paths) and asks nothing; asked here it would be a paid run.
        raise UsageProblem(
            "--snap-dry-run is pytest's: it prices the tests pytest collects. Fix: pytest benchmarks --snap-dry-run "
            "(with the same options), or leave the option out to run the session"
        )
    check_out_dir(settings.out_dir)  # as the plugin does at configure: a usage problem, not an OSError mid-start
    paths = RunPaths(tuple(command_line.args) or (settings.benchmarks_dir,), root, ("__pycache__", ".*"))
    session = BenchmarkSession(settings)
    session.activate(paths)
    planned = [
        (f"{name}::test_{name}[{case.id}]", case)
        for name in session.in_run
        if name not in session.not_asked
        for case in session.cases(name)
    ]
    session.ledger.expect(nodeid for nodeid, _ in planned)
    lines: list[str] = []
    session.start_asking(controller=True)
    session.prepare_outputs(lambda line: lines.append(f"snap-bench batch: {line}"))
    asked = _ask_each(session, planned)
    interrupted = asked.interrupted
    session.close_asking(interrupted=interrupted)
    judged = None if interrupted else session.judge()
    checks = tuple(check_outcomes(judged, settings.gate)) if judged is not None else ()
    decision = session.finish(INTERRUPTED if interrupted else 0)
    # The terminal's summary as the plugin's reporter writes it: the answer statistics, the retries, each model's
    # pace, then the verdicts and the exit line.
    shown = [*lines, *(line for line, _ in summary_lines(session))]
    if asked.retried:
        shown.append(f"retries: {len(asked.retried)} condition(s) asked more than once")
    models = [model.name for model in session.models]
    shown += [f"pace: {line}" for line in pace_summary(state_folder(settings.out_dir), models)]
    shown += [line for line, _ in verdict_block(session)]
    return SessionResult(
        exit_status=decision.code,
        reason=decision.reason,
        judgement=judged,
        checks=checks,
        observations=tuple(session.observations),
        notices=tuple(session.notices()),
        summary=tuple(shown),
        out_dir=settings.out_dir,
        planned=len(planned),
        not_measured=asked.not_measured,
        retried=asked.retried,
    )


@dataclass
class _Asked:
    interrupted: bool = False
    not_measured: dict[str, str] = field(default_factory=dict)
    retried: dict[str, str] = field(default_factory=dict)


def _ask_each(session: BenchmarkSession, planned: list[tuple[str, Case]]) -> _Asked:
    """Ask every planned condition in order (with --snap-concurrency, the next ones ahead)."""
    asker = session.asker()
    asked = _Asked()

    def upcoming(start: int) -> Iterator[tuple[str, Instrument, Condition]]:
        for _, case in planned[start:]:
            yield case.model, session.instrument(case.instrument), case.condition

    for index, (nodeid, case) in enumerate(planned):
        asker.look_ahead(partial(upcoming, index + 1))
        retried = partial(asked.retried.__setitem__, case.id)
        try:
            observation = asker.ask(case.model, session.instrument(case.instrument), case.condition, retried)
        except (RecordingUnavailable, BudgetReached, BatchPending) as error:
            # as the `ask` fixture's test fails (no recording) or is skipped (budget spent, pending in a batch)
            missing = isinstance(error, RecordingUnavailable)
            reason = (
                "no recording"
                if missing
                else "budget spent"
                if isinstance(error, BudgetReached)
                else PENDING_IN_A_BATCH
            )
            session.record(nodeid, failed=isinstance(error, RecordingUnavailable), not_measured=reason)
            asked.not_measured[case.id] = str(error)
            continue
        except Interrupted:
            asked.interrupted = True
            break
        session.record(nodeid, failed=False, values=observation.to_dict())
    return asked
