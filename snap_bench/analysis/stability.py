"""The judged stability figures: a generalizability study per level of a factor (each temperature apart).

An instrument names its design (object of measurement, facets, nesting, interactions, replicate) and the
factor that is never pooled (temperature); this module fits the G study at each of its levels on the
raw answers and turns it into metrics: the dependability (Phi) and generalizability (E rho^2) of a single
answer, the run-to-run SD in scale points, each with its interval and its coverage (answers used /
answers designed), plus the components, the raw-answer item signal and a repetitions planner as details.
pandas is imported by the caller; this module is imported on the controller at session end only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from snap_bench.analysis.metric_tables import Metric
from snap_bench.stats import UndefinedStatistic
from snap_bench.stats.d_study import decision_study, smallest_count
from snap_bench.stats.degenerate import follows_questions, raw_item_signal
from snap_bench.stats.g_study import GStudy, g_study
from snap_bench.stats.g_study_design import GStudyDesign

# The column naming who served each answer (snap_bench.analysis.metric_tables.observation_table).
PROVIDER = "provider"
# The coefficients the planner looks for, and the largest count it proposes.
PLANNER_TARGETS = (0.70, 0.80, 0.90)
PLANNER_MAX_COUNT = 50
# A count large enough to stand for "averaged away" in the planner's ceiling.
CEILING_COUNT = 1e6


@dataclass(frozen=True)
class StabilityDesign:
    """A G study design, and what a single answer is for the coefficients that are judged."""

    design: GStudyDesign
    # The factor whose levels are analysed apart (never pooled into a judged figure).
    by: str
    # Facets (or the replicate) the planner varies: "how many runs / paraphrases reach the target".
    planned: tuple[str, ...] = ("run", "paraphrase")

    def fitted(self, table: Any) -> GStudyDesign:
        """The design restricted to what varies in ``table``: a facet with one level (one system prompt
        selected) has no component to estimate, and neither has any interaction naming it; without two
        replications in some cell there is no run-to-run component."""
        varying = tuple(f for f in self.design.facets if table[f].nunique() > 1)
        if PROVIDER in table.columns and PROVIDER not in varying and table[PROVIDER].nunique() > 1:
            # Answers from several providers: the provider is a facet of its own, its variance apart from the
            # run-to-run component (OpenRouter load-balances a model over providers that differ).
            varying = (*varying, PROVIDER)
        nested = {f: nest for f, nest in self.design.nested.items() if f in varying}
        item = self.design.object_of_measurement
        # An interaction that does not vary within some item (a personality item asked in one context
        # only) would be that item's own effect there and absorb the item component: left out, its
        # variance stays in the cell component.
        interactions = tuple(
            term
            for term in self.design.interactions
            if all(name == item or name in varying for name in term)
            and table.groupby(item)[[name for name in term if name != item]].nunique().min().min() > 1
        )
        replicate = self.design.replicate
        if replicate is not None:
            cells = [self.design.object_of_measurement, *varying]
            if table.dropna(subset=["score"]).groupby(cells)[replicate].nunique().max() < 2:
                replicate = None
        return GStudyDesign(self.design.object_of_measurement, varying, nested, interactions, replicate)


def single_answer(design: GStudyDesign) -> dict[str, float]:
    """The D study counts of one answer: one condition of every facet, one run."""
    counts = dict.fromkeys(design.facets, 1.0)
    if design.replicate:
        counts[design.replicate] = 1.0
    return counts


def level_metrics(table: Any, spec: StabilityDesign, values: str = "score") -> tuple[dict[str, Metric], dict[str, Any]]:
    """Per level of ``spec.by``: ``dependability[level]``, ``generalizability[level]``, ``run_sd[level]``.

    ``table`` holds one row per designed answer (unscored ones with NaN in ``values``), so the coverage
    of every figure is the share of the level's designed answers that were scored.
    """
    metrics: dict[str, Metric] = {}
    details: dict[str, Any] = {}
    for level, rows in table.groupby(spec.by, sort=True):
        label = str(level)
        figures, detail, _ = fit_level(rows, spec, values)
        for name, metric in figures.items():
            metrics[f"{name}[{label}]"] = metric
        details[label] = detail
    return metrics, details


def fit_level(
    rows: Any, spec: StabilityDesign, values: str = "score", *, test_signal: bool = True
) -> tuple[dict[str, Metric], dict[str, Any], GStudy | None]:
    """One level's figures (named without the level), its details, and the G study when one was fitted.

    ``test_signal``: add the likelihood-ratio test of the raw answers' item component to the note of
    ``dependability`` (one more fit; the validity bench, which does not read the note, leaves it out)."""
    designed = len(rows)
    scores = rows[values].to_numpy(float)
    used = int(np.sum(~np.isnan(scores)))
    left_out = designed - used
    names = ("dependability", "generalizability", "run_sd")

    def undefined(reason: str) -> tuple[dict[str, Metric], dict[str, Any], None]:
        metrics = {name: Metric(None, n=used, n_left_out=left_out, undefined=reason) for name in names}
        return metrics, {"designed": designed, "used": used, "undefined": reason}, None

    try:
        study = _study(rows, spec, scores)
    except _TooFewItems:
        return undefined("fewer than two items answered")
    except UndefinedStatistic:
        # Every answer the same: the answers carry no item signal, so a single answer tells nothing
        # about the item (Phi = E rho^2 = 0), and no answer varies from run to run (SD 0).
        zero = {
            name: Metric(0.0, 0.0, 0.0, n=used, n_left_out=left_out, note="every answer the same: no item signal")
            for name in names
        }
        return zero, {"designed": designed, "used": used, "constant": True}, None
    except ValueError as error:
        return undefined(str(error))
    design = study.design
    labels = {name: rows[name].tolist() for name in design.columns()}
    # Conditional on the shipped items: the verdict is about these questions, not a universe of them.
    single = decision_study(study, single_answer(design), object_levels="shipped")
    note = _signal_note(scores, labels, study) if test_signal else ""
    metrics = {
        # An interval the information matrix cannot give (a component on its boundary with a singular
        # information) is None, "no interval", never NaN.
        "dependability": Metric(
            single.phi.value,
            _finite(single.phi.ci_low),
            _finite(single.phi.ci_high),
            n=used,
            n_left_out=left_out,
            note=note,
        ),
        "generalizability": Metric(
            single.g.value, _finite(single.g.ci_low), _finite(single.g.ci_high), n=used, n_left_out=left_out
        ),
    }
    if design.replicate:
        sd = study.run_to_run_sd
        metrics["run_sd"] = Metric(sd.value, sd.ci_low, _finite(sd.ci_high), n=used, n_left_out=left_out)
    else:
        metrics["run_sd"] = Metric(None, n=used, n_left_out=left_out, undefined="no cell has two scored runs")
    return metrics, {"designed": designed, "used": used, **study_details(study, spec)}, study


class _TooFewItems(ValueError):
    """Fewer than two items have a scored answer: no item variance to estimate."""


def _study(
    rows: Any, spec: StabilityDesign, scores: Any, *, intervals: bool = True, start: Sequence[float] | None = None
) -> GStudy:
    """The G study of one level's raw answers (``scores``, NaN where unscored), on the design restricted
    to what varies among the scored answers. Raises _TooFewItems, UndefinedStatistic (every answer the
    same) or ValueError (the design cannot be fitted)."""
    scored = rows[~np.isnan(scores)]
    if len(scored) < 2 or scored[spec.design.object_of_measurement].nunique() < 2:
        raise _TooFewItems("fewer than two items answered")
    design = spec.fitted(scored)
    labels = {name: rows[name].tolist() for name in design.columns()}
    return g_study(scores, labels, design, intervals=intervals, start=start)


def single_answer_phi(
    rows: Any, spec: StabilityDesign, start: Sequence[float] | None = None, values: str = "score"
) -> tuple[float, list[float] | None]:
    """The point dependability of one answer on ``rows`` (one level), as ``dependability[level]`` reports
    it (0 when every answer is the same, NaN when undefined), and the components' shares, which start
    the next refit of similar data (``start``): what the upgrade gate's jackknife refits."""
    try:
        study = _study(rows, spec, rows[values].to_numpy(float), intervals=False, start=start)
    except UndefinedStatistic:
        return 0.0, None
    except ValueError:
        return math.nan, None
    shares = [component.share for component in study.components]
    return decision_study(study, single_answer(study.design)).phi.value, shares


def dependability_refit(instrument: Any, rows: Any, start: Sequence[float] | None) -> tuple[float, list[float] | None]:
    """:func:`single_answer_phi` under the instrument's own stability design: the refit of the gate's
    ``dependability`` pairing (``instrument`` is Any: its type would close an import cycle here)."""
    return single_answer_phi(rows, instrument.stability, start)


def run_sd_estimate(instrument: Any, rows: Any) -> tuple[float, float, float]:
    """The run-to-run SD of one level's scored answers, pooled within their design cells, with its chi-square
    interval (``stats.within_cell.pooled_sd``): the upgrade gate's ``run_sd`` on the answers both models
    gave; NaN when no cell holds two scored answers."""
    from snap_bench.stats.within_cell import pooled_sd

    scored = rows.dropna(subset=["score"])
    if scored.empty:
        return math.nan, math.nan, math.nan
    cells = scored["cell"].factorize()[0]
    try:
        return pooled_sd(scored["score"].to_numpy(float), cells)
    except ValueError:
        return math.nan, math.nan, math.nan


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _signal_note(scores: Any, labels: dict[str, list[Any]], study: GStudy) -> str:
    """The restricted likelihood-ratio test of the raw answers' item component, for the reader."""
    try:
        check = follows_questions(raw_item_signal(scores, labels, study.design, fitted=study))
    except ValueError as error:
        return f"item signal not tested: {error}"
    return "raw answers follow the questions" if check.passed else "; ".join(check.reasons)


def study_details(study: GStudy, spec: StabilityDesign) -> dict[str, Any]:
    """The components (with intervals and shares) and the repetitions planner, JSON-ready."""
    components = [
        {
            "effect": c.effect,
            "variance": c.variance,
            "ci_low": c.ci_low,
            "ci_high": _finite(c.ci_high),
            "share": c.share,
            "levels": c.n_levels,
        }
        for c in study.components
    ]
    return {
        "components": components,
        "sample_sizes": study.sample_sizes,
        "mean": study.mean,
        "planner": plan(study, spec),
    }


def plan(study: GStudy, spec: StabilityDesign) -> list[dict[str, Any]]:
    """The decision study: for each planned facet, the fewest conditions that reach each target, and the
    ceiling (the coefficient with that facet averaged away entirely).

    The other facets keep one condition each (a verdict judges a single answer), so the count says how
    many runs (or paraphrases) a single reading would have to average to reach the coefficient."""
    base = single_answer(study.design)
    rows = []
    for facet in spec.planned:
        if facet not in study.sample_sizes:
            continue
        entry: dict[str, Any] = {"facet": facet}
        for coefficient in ("phi", "g"):
            entry[coefficient] = {
                f"{target:.2f}": smallest_count(
                    study, facet, target, coefficient=coefficient, counts=base, max_count=PLANNER_MAX_COUNT
                )
                for target in PLANNER_TARGETS
            }
            limit = decision_study(study, {**base, facet: CEILING_COUNT})
            entry[f"{coefficient}_ceiling"] = (limit.phi if coefficient == "phi" else limit.g).value
        rows.append(entry)
    return rows
