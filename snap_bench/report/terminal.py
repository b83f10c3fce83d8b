"""Text for the terminal: the per-model summary and the verdicts at the end of a session (the dry run's plan:
snap_bench.report.dry_run)."""

from __future__ import annotations

from collections import Counter, defaultdict
from statistics import fmean
from typing import TYPE_CHECKING, Any, Protocol

from snap_bench.asking.batch.ledger import PENDING_IN_A_BATCH
from snap_bench.judging.drift import Drift
from snap_bench.judging.outcomes import MEASURED, NON_INFERIOR, NOT_COMPARED, REGRESSION, UNDECIDED, is_computed
from snap_bench.observations.logprobs import logprob_summaries
from snap_bench.observations.parsing import AnswerCode
from snap_bench.observations.spend import spend_by_model, with_batch_spend
from snap_bench.report.changes_file import CHANGES_FILE
from snap_bench.report.ci_outputs import shown_path
from snap_bench.report.ci_summary import TOP_CHANGED
from snap_bench.report.ci_summary import worst_first as _worst_first
from snap_bench.report.servings_section import serving_terminal_lines

if TYPE_CHECKING:
    from pathlib import Path

    from snap_bench.analysis.coverage import Coverage
    from snap_bench.analysis.metric_tables import ModelAnalysis
    from snap_bench.asking.batch.step import BatchOutcome
    from snap_bench.design.models import ModelSpec
    from snap_bench.judging.exit_status import ExitDecision
    from snap_bench.judging.gate import Gate
    from snap_bench.judging.judgement import Judgement
    from snap_bench.judging.verdicts import ThresholdConfig
    from snap_bench.observations.observation import Observation


class Narrated(Protocol):
    """What the terminal text asks of an instrument: its own lines under a model's verdict."""

    def terminal_lines(self, analysis: ModelAnalysis) -> list[str]: ...


class ShownSettings(Protocol):
    """What the terminal text reads of the session's settings."""

    @property
    def out_dir(self) -> Path: ...

    @property
    def show_unscored(self) -> bool: ...

    @property
    def analyse(self) -> bool: ...

    @property
    def gate(self) -> Gate: ...


class SavedFiles(Protocol):
    """What the terminal text reads of the files the session wrote: the baselines it saved."""

    @property
    def saved_baselines(self) -> list[Path]: ...


class SessionView(Protocol):
    """What the terminal text reads of a session (the plugin's session provides it)."""

    @property
    def options(self) -> ShownSettings: ...

    @property
    def artefacts(self) -> SavedFiles: ...

    models: list[ModelSpec]
    judgement: Judgement | None
    exit_decision: ExitDecision | None

    # What the batch step did (snap_bench.asking.batch.session_step): its batches' spend, per model.
    batch: BatchOutcome

    @property
    def observations(self) -> list[Observation]: ...

    def active_instruments(self) -> list[str]: ...

    def instrument(self, name: str) -> Narrated: ...

    def thresholds(self, instrument: str) -> ThresholdConfig: ...

    def missing_reports(self) -> set[str]: ...

    def at_provider_default(self, model: str) -> bool: ...

    def price_source(self, model: str) -> str: ...

    def notices(self) -> list[str]: ...

    def verbosity(self) -> int: ...

    def coverage(self) -> dict[str, Coverage]: ...


def session_spend(session: SessionView) -> dict[str, dict[str, Any]]:
    return with_batch_spend(spend_by_model(session.observations), session.batch.report.spend)


def summary_lines(session: SessionView) -> list[tuple[str, dict[str, Any]]]:
    lines: list[tuple[str, dict[str, Any]]] = [("", {}), ("snap-bench summary", {"bold": True})]
    by_model: dict[str, list[Any]] = defaultdict(list)
    for observation in session.observations:
        by_model[observation.model].append(observation)
    for model in session.models:
        observations = by_model.get(model.name, [])
        if not observations:
            lines.append((f"{model.name}: no observations", {"yellow": True}))
            continue
        codes = Counter(observation.code for observation in observations)
        valid = codes[None]
        per_construct: dict[str, list[float]] = defaultdict(list)
        for observation in observations:
            if observation.keyed_score is not None:
                per_construct[observation.construct or observation.item].append(observation.keyed_score)
        means = ", ".join(f"{construct} {fmean(scores):.2f}" for construct, scores in sorted(per_construct.items()))
        replayed = sum(observation.replayed for observation in observations)
        lines.append(
            (
                f"{model.name}: n={len(observations)} valid={100 * valid / len(observations):.1f}% "
                f"refusals={codes[int(AnswerCode.REFUSAL)]} invalid={codes[int(AnswerCode.INVALID)]} "
                f"api_errors={codes[int(AnswerCode.API_ERROR)]} "
                + (f"cut_by_limit={codes[int(AnswerCode.TRUNCATED)]} " if codes[int(AnswerCode.TRUNCATED)] else "")
                + (f"moderated={codes[int(AnswerCode.MODERATED)]} " if codes[int(AnswerCode.MODERATED)] else "")
                + f"replayed={replayed}",
                {"green": valid == len(observations), "yellow": valid != len(observations)},
            )
        )
        if means:
            lines.append((f"  mean keyed score per construct: {means}", {}))
        for (_model, instrument), sure in sorted(logprob_summaries(observations).items()):
            lines.append(
                (
                    f"  {instrument}: mean probability of the chosen point {sure['mean_chosen_probability']:.3f} "
                    f"(mean expected score {sure['mean_expected_score']:.2f}) over {sure['n']} answers "
                    "with log-probabilities",
                    {},
                )
            )
    for name, spent in session_spend(session).items():
        lines.append(
            (
                f"{name}: spent ${spent['cost_usd']:.6f} on {spent['requests']} request(s) "
                f"({spent['prompt_tokens']:,} prompt, {spent['completion_tokens']:,} completion, "
                f"{spent['reasoning_tokens']:,} reasoning tokens)",
                {},
            )
        )
    lines.extend((f"notice: {line}", {"yellow": True}) for line in session.notices())
    if session.options.show_unscored:
        lines.extend(unscored_listing(session))
    if session.options.out_dir.exists():
        lines.append((f"observations: {session.options.out_dir / 'observations.jsonl'} and .csv", {}))
    if session.judgement is not None and session.judgement.json_path is not None:
        lines.append((f"analysis: {session.judgement.json_path}", {}))
    return lines


def unscored_listing(session: SessionView) -> list[tuple[str, dict[str, Any]]]:
    """--snap-show-unscored: every answer without a score, with its code and reason."""
    unscored = [o for o in session.observations if not o.is_scored]
    lines: list[tuple[str, dict[str, Any]]] = [(f"unscored answers ({len(unscored)}):", {"bold": True})]
    for observation in sorted(unscored, key=lambda o: (o.model, o.instrument, o.condition_id)):
        answer = (observation.raw_answer or "").replace("\n", " ")
        lines.append(
            (
                f"  {observation.model} {observation.condition_id}: code {observation.code} "
                f"({observation.reason}) answer {answer[:80]!r}",
                {},
            )
        )
    return lines


def verdict_block(session: SessionView) -> list[tuple[str, dict[str, Any]]]:
    """The last screen of a run: the verdicts, what was not measured, and why the exit status is what it is."""
    lines: list[tuple[str, dict[str, Any]]] = [("", {}), ("snap-bench result", {"bold": True})]
    lines.extend(verdict_lines(session))
    for coverage in session.coverage().values():
        if not coverage.complete:
            # Said even when nothing was judged (--snap-no-analysis, no answer at all): the run is partial.
            # A model whose missing conditions all wait in a batch is not short of its design: it is not done.
            state = "batch pending" if set(coverage.missing) == {PENDING_IN_A_BATCH} else "INCOMPLETE"
            lines.append((f"{coverage.model}: {state}: {coverage.describe()}", {"yellow": True}))
    missing = session.missing_reports()
    if missing:
        shown = ", ".join(sorted(missing)[:5])
        lines.append(
            (
                f"{len(missing)} condition(s) never produced a report (interrupted or crashed): {shown}"
                + (" ..." if len(missing) > 5 else ""),
                {"red": True},
            )
        )
    for path in session.artefacts.saved_baselines:
        lines.append((f"baseline written: {path}", {}))
    decision = session.exit_decision
    if decision is not None:
        follows = session.options.gate.describe()
        rule = f" (the exit status follows {follows}; --snap-gate)" if session.options.analyse else ""
        lines.append(
            (
                f"exit status {decision.code}: {decision.reason}{rule}",
                {"green": decision.code == 0, "red": decision.code != 0, "bold": True},
            )
        )
    return lines


VERDICT_COLOURS = {
    "PASS": {"green": True},
    "BORDERLINE": {"yellow": True},
    "FAIL": {"red": True},
    "INCOMPLETE": {"yellow": True},
}


def verdict_lines(session: SessionView) -> list[tuple[str, dict[str, Any]]]:
    gate = session.judgement
    if gate is None or not gate.verdicts:
        return []
    lines: list[tuple[str, dict[str, Any]]] = []
    for instrument in sorted({instrument for _, instrument in gate.verdicts}):
        rule = "point estimates" if session.thresholds(instrument).judge == "point" else "pessimistic CI bounds"
        lines.append((f"verdicts for {instrument} (thresholds.yaml, judged on {rule}):", {"bold": True}))
        verdicts = [v for (_, name), v in gate.verdicts.items() if name == instrument]
        for verdict in sorted(verdicts, key=lambda v: v.rank):
            composite = "n/a" if verdict.composite is None else f"{verdict.composite:.3f}"
            lines.append(
                (
                    f"  #{verdict.rank} {verdict.model}: {verdict.verdict} (composite {composite})",
                    VERDICT_COLOURS[verdict.verdict],
                )
            )
            if verdict.tied_with and verdict.composite_ci is not None:
                low, high = verdict.composite_ci
                ties = ", ".join(verdict.tied_with)
                lines.append((f"     composite interval [{low:.3f}, {high:.3f}]: a tie with {ties}", {}))
            for check in verdict.checks:
                if not is_computed(check, verdict):
                    lines.append((f"     not judged (never a pass): {check.message}", {"yellow": True}))
                elif not check.passed:
                    lines.append((f"     failed: {check.message}", {"red": True}))
            analysis = gate.analyses.get((verdict.model, instrument))
            if analysis is not None:
                lines.extend((f"     {line}", {}) for line in session.instrument(instrument).terminal_lines(analysis))
    if gate.servings:
        head, *rest = serving_terminal_lines({"servings": [study.to_dict() for study in gate.servings]})
        lines.append((head, {"bold": True}))
        for line, study in zip(rest, gate.servings, strict=True):
            passed = all(check.outcome == "pass" for check in study.checks)
            lines.append((line, {} if passed else {"yellow": True}))
    for note in gate.notes:
        lines.append((f"warning: {note}", {"yellow": True}))
    if gate.baseline:
        changes_file = shown_path(session.options.out_dir / CHANGES_FILE)
        lines.extend(comparison_lines(gate, session.verbosity(), changes_file))
    return lines


def comparison_lines(gate: Judgement, verbosity: int, changes_file: str) -> list[tuple[str, dict[str, Any]]]:
    """The baseline gate, to fit on a screen: one line per instrument with the counts, then the regressions
    (worst first), the undecided comparisons and the drifts; non-inferior and not-compared lines with -v;
    then the items whose answers changed beyond the run noise."""
    comparisons = gate.baseline
    lines: list[tuple[str, dict[str, Any]]] = [
        ("baseline comparison (new - baseline, 95% paired interval, margin; -v lists every check):", {"bold": True})
    ]
    for instrument in sorted({c.instrument for c in comparisons}):
        own = [c for c in comparisons if c.instrument == instrument]
        counts = Counter(c.outcome for c in own)
        drifts = [d for d in gate.drift if d.instrument == instrument]
        state = ", ".join(
            f"{counts[o]} {name}"
            for o, name in (
                (REGRESSION, "regression(s)"),
                (UNDECIDED, "undecided"),
                (NON_INFERIOR, "non-inferior"),
                (NOT_COMPARED, "not compared"),
            )
        )
        moved, undecided = sum(d.moved for d in drifts), sum(d.undecided for d in drifts)
        position = (
            f"drift: {moved} construct(s) moved, {undecided} undecided, "
            f"{len(drifts) - moved - undecided} shown unchanged"
        )
        lines.append((f" {instrument}: {state}; {position}", {"bold": True}))
    shown = [REGRESSION, UNDECIDED, *([NON_INFERIOR, NOT_COMPARED] if verbosity > 0 else [])]
    colours = {REGRESSION: "red", UNDECIDED: "yellow", NON_INFERIOR: "green", NOT_COMPARED: "yellow"}
    for gap in (c for c in comparisons if c.metric == MEASURED):
        # What the baseline holds and the run did not measure (or the reverse) is named whatever -v says.
        lines.append((f"  not compared {gap.model} {gap.instrument}: {gap.reason}", {"yellow": True}))
    for outcome in shown:
        for c in _worst_first([c for c in comparisons if c.outcome == outcome and c.metric != MEASURED]):
            lines.append((f"  {_short_comparison(c)}", {colours[outcome]: True}))
    for drift in gate.drift:
        # The constructs that moved always; the undecided ones are counted in the instrument's line, each listed
        # with -v (and on the last screen's exit line where the gate follows drift).
        if drift.moved or verbosity > 0:
            lines.append((f"  {_short_drift(drift)}", {"yellow": True} if drift.moved or drift.undecided else {}))
    for summary in gate.changes:
        changed = sorted(
            (c for c in gate.item_changes if c.model == summary.model and c.reliable), key=lambda c: (c.q, c.item)
        )
        top = ", ".join(f"{c.item} {c.shift or 0.0:+.2f} (q {c.q or 0.0:.4f})" for c in changed[:TOP_CHANGED])
        more = f" and {len(changed) - TOP_CHANGED} more" if len(changed) > TOP_CHANGED else ""
        lines.append(
            (
                f" {summary.model}: {len(summary.changes):,} of {summary.shared:,} conditions changed their answer "
                f"({changes_file}); items changed beyond the run noise: {top or 'none'}{more}",
                {"yellow": True} if changed else {},
            )
        )
    return lines


def _short_drift(d: Drift) -> str:
    interval = "no interval" if d.ci_low is None or d.ci_high is None else f"[{d.ci_low:+.3f}, {d.ci_high:+.3f}]"
    margin = "no margin" if d.margin is None else f"margin +-{d.margin:g}"
    return (
        f"{d.outcome} {d.model} {d.instrument} {d.construct}: {d.new_mean:.2f} vs {d.baseline_mean:.2f}, "
        f"{d.difference:+.3f} {interval}, {margin}"
    )


def _deciding(c: Any) -> str:
    """An undecided check's advice in a few words (its message has it in full)."""
    if c.decided_by == "runs":
        return f"decided at about {c.runs_to_decide} runs"
    if c.decided_by == "items":
        return "more items decide it"
    return "more runs cannot pass it"


def _short_comparison(c: Any) -> str:
    if c.difference is None or c.ci_low is None or c.ci_high is None:
        return f"{c.outcome} {c.model} {c.instrument} {c.metric}: {c.reason or c.message}"
    margin = "no margin" if c.margin is None else f"margin {c.margin:g}"
    values = "" if c.new_value is None else f"{c.new_value:.3f} vs {c.baseline_value:.3f}, "
    advice = f"; {_deciding(c)}" if c.outcome == UNDECIDED else ""
    return (
        f"{c.outcome} {c.model} {c.instrument} {c.metric}: {values}{c.difference:+.3f} "
        f"[{c.ci_low:+.3f}, {c.ci_high:+.3f}], {margin}, {c.coverage()}{advice}"
    )
