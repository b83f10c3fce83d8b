"""What each figure means, in one place: the report's glossary and the README's are both rendered from here.

A test (tests/report/test_glossary.py) fails when the README's "Glossary" section is not exactly
:func:`glossary_markdown`; ``python -m snap_bench.report.glossary`` prints it to paste in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from snap_bench.report.formatting import text


@dataclass(frozen=True)
class Term:
    meaning: str  # one or two sentences
    unit: str
    better: str  # "higher", "lower", "closer to 0", or "none" for a figure that is reported, not judged


THRESHOLDS_MEAN = (
    "A judged figure has a minimum (a maximum, when lower is better), a target and sometimes an excellent "
    "level, in `config/thresholds.yaml`. Short of the minimum the check fails and the model FAILs; between the "
    "minimum and the target the model is BORDERLINE; at or beyond the target every check passes (PASS). A figure "
    "computed on less than half of its design is drawn hatched grey, whatever its value."
)

GLOSSARY: dict[str, Term] = {
    "test_retest_r": Term(
        "Pearson correlation of the scores between runs of the same condition, averaged over pairs of runs "
        "(Fisher z). How far asking again gives the same answer.",
        "r, -1 to 1",
        "higher",
    ),
    "inter_paraphrase_r": Term(
        "The same correlation across the paraphrases of an item: whether rewording the question keeps the answer.",
        "r, -1 to 1",
        "higher",
    ),
    "icc2_1": Term(
        "Intraclass correlation ICC(2,1), absolute agreement of the runs (Shrout & Fleiss 1979): like test-retest "
        "r, but a run that shifts every answer by one point counts against it.",
        "0 to 1",
        "higher",
    ),
    "cv_mean": Term(
        "Coefficient of variation of a cell's scores across runs, averaged over cells (cv_max: the largest).",
        "% of the cell's mean",
        "lower",
    ),
    "cronbach_alpha": Term(
        "Cronbach's alpha of a scale's items (moral, personality): whether the items of one construct move "
        "together, as a questionnaire's should.",
        "alpha, at most 1",
        "higher",
    ),
    "tara_all_runs": Term(
        "Share of cells whose runs all gave the same answer; judged in place of the correlations when they are "
        "undefined (a model giving one answer everywhere).",
        "share, 0 to 1",
        "higher",
    ),
    "krippendorff_alpha_runs": Term(
        "Krippendorff's alpha (ordinal) with runs as coders; it also uses cells with a missing run.",
        "alpha, at most 1",
        "higher",
    ),
    "unscored_rate": Term(
        "Share of answers without a score: refused (refusal_rate), unparseable (invalid_rate) or failed "
        "requests (api_error_rate). The other figures rest only on the scored answers.",
        "share, 0 to 1, with a Wilson interval",
        "lower",
    ),
    "effects": Term(
        "Eta squared of each factor (item, paraphrase, system prompt, temperature, context): the share of the "
        "score variance it explains. A stable model's variance is the item's, not the wording's or temperature's.",
        "share, the parts and the residual sum to 1",
        "none",
    ),
    "composite": Term(
        "Weighted mean of the judged figures mapped to 0-1, times the share of scored answers; ranks the models.",
        "0 to 1",
        "higher",
    ),
    "run_agreement": Term(
        "The first screen's chart: at each temperature, the share of cells whose runs all gave the same score, "
        "over the cells whose every run was scored (used / designed beside a thin point).",
        "share, 0 to 1, with a Wilson interval",
        "higher",
    ),
    "coordinate": Term(
        "The compass's economic (left -, right +) and social (libertarian -, authoritarian +) placement: the "
        "keyed answers' sum over the largest possible sum, times 10.",
        "points, -10 to 10",
        "none",
    ),
    "coordinate_sd_max": Term(
        "The larger of the two axes' standard deviation of the placement across system prompts, temperatures and "
        "choices: how far the model moves when only the setting changes.",
        "points on the 20-point axis",
        "lower",
    ),
    "custom_accuracy": Term(
        "Perturbation: 1 - mean squared error / worst penalty on the polarity-weighted labels (-3, -2, 0, 2, 3); "
        "polarity_accuracy counts answers on the right side of neutral.",
        "0 to 1",
        "higher",
    ),
    "consistency": Term(
        "Perturbation: per input, the share of the 16 prompt variants giving its most common label, averaged.",
        "share, 0 to 1",
        "higher",
    ),
    "variant_spread": Term(
        "Perturbation: best minus worst prompt variant's custom accuracy.",
        "accuracy points, 0 to 1",
        "lower",
    ),
    "max_flip_rate": Term(
        "Perturbation: for the rewording that hurts most, the share of variant pairs differing only in it whose "
        "label changes.",
        "share, 0 to 1",
        "lower",
    ),
    "coverage": Term(
        "Beside each figure, used / designed: the cells or answers it was computed from, and how many the design "
        "had (the rest were left out because an answer in them had no score).",
        "counts",
        "higher",
    ),
}


def glossary_markdown() -> str:
    """The README's "Glossary" section body."""
    lines = ["| term | meaning | unit | good |", "|---|---|---|---|"]
    lines += [f"| `{name}` | {term.meaning} | {term.unit} | {term.better} |" for name, term in GLOSSARY.items()]
    return "\n".join([*lines, "", f"**Thresholds.** {THRESHOLDS_MEAN}"])


def glossary_html(thresholds: Mapping[str, Mapping[str, Any]] | None = None) -> str:
    """The report's glossary, with each judged metric's thresholds as this session applied them."""
    rows = []
    for name, term in GLOSSARY.items():
        rule = _rule((thresholds or {}).get(name))
        rows.append(
            f"<tr><th scope=row><code>{text(name)}</code></th><td>{text(term.meaning)}</td><td>{text(term.unit)}</td>"
            f"<td>{text(term.better)}</td><td>{text(rule)}</td></tr>"
        )
    return (
        '<h3 id="snap-glossary">What the figures mean</h3>'
        f'<p>{text(THRESHOLDS_MEAN.replace("`", ""))}</p><table class="snap-table" id="snap-glossary-table">'
        "<thead><tr><th>term</th><th>meaning</th><th>unit</th><th>good</th><th>profile thresholds here</th></tr>"
        f"</thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _rule(threshold: Mapping[str, Any] | None) -> str:
    if not threshold:
        return ""
    sign = ">=" if threshold.get("better") == "higher" else "<="
    parts = [f"minimum {sign} {threshold.get('minimum')}", f"target {sign} {threshold.get('target')}"]
    if threshold.get("excellent") is not None:
        parts.append(f"excellent {sign} {threshold.get('excellent')}")
    return ", ".join(parts)


if __name__ == "__main__":
    print(glossary_markdown())
