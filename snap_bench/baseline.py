"""Gate a model upgrade: is NEW non-inferior to the BASELINE on each stability metric?

With the baseline's recordings in the session (``--baseline=OLD``, replayed like any model) the
comparison is *paired*: both models' metrics are computed on the same conditions, and the interval
of the difference comes from resampling those shared cells together. With a saved analysis.json
(``--baseline=path/analysis.json``) only the baseline's point values are known: the new model's own
interval is compared with them (unpaired, more conservative).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from snap_bench.observation import Observation

if TYPE_CHECKING:
    from snap_bench.analysis import AnalysisSettings, FloatArray
    from snap_bench.instruments import Instrument
    from snap_bench.metric_specs import Pairing

# Compared on the conditions both models were asked, for every instrument.
UNSCORED_RATE = "unscored_rate"


@dataclass(frozen=True)
class BaselineSpec:
    """What the new model is compared with.

    ``model`` names the baseline's observations in the session; ``saved`` holds a saved analysis.json's
    entry per instrument (point values only); ``observations`` are a baseline file's per-condition results, which the
    session analyses like a model's and pairs with the new model's on the shared conditions.
    """

    model: str
    saved: dict[str, Any] | None = None
    observations: tuple[Observation, ...] = ()
    source: str = ""


@dataclass(frozen=True)
class Comparison:
    model: str
    baseline: str
    instrument: str
    metric: str
    new_value: float | None
    baseline_value: float | None
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    margin: float
    better: str
    paired: bool
    n: int
    regressed: bool
    message: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def parse_baseline(value: str, known_models: list[str]) -> BaselineSpec:
    """A model name, or the path of a saved analysis.json (whose single judged model is the baseline)."""
    path = Path(value)
    if value.endswith(".json") or path.is_file():
        if not path.is_file():
            raise ValueError(
                f"--baseline {value}: no such file. Fix: write one with --snap-save-baseline={value}, or name a "
                f"model with recordings ({', '.join(known_models)})"
            )
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as error:
            raise ValueError(
                f"--baseline {value}: not JSON ({error}); write it again with --snap-save-baseline"
            ) from None
        if isinstance(document, dict) and document.get("format") == BASELINE_FORMAT:
            return read_baseline_file(path, document)
        try:
            saved = _judged_entries(document)
        except (ValueError, KeyError, AttributeError, TypeError) as error:
            raise ValueError(f"--baseline {value}: not an analysis.json written by snap-bench ({error})") from None
        models = sorted({model for model, _ in saved})
        if len(models) != 1:
            raise ValueError(
                f"--baseline {value}: holds {len(models)} judged models; write one model's baseline file with "
                "--snap-save-baseline=baselines/{model}.json and pass that"
            )
        return BaselineSpec(models[0], {instrument: entry for (_, instrument), entry in saved.items()})
    if value not in known_models:
        raise ValueError(f"--baseline {value!r} is neither a known model ({', '.join(known_models)}) nor a file")
    return BaselineSpec(value)


def _judged_entries(document: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    from snap_bench.instruments import FORMER_TOP_LEVEL

    """(model, instrument) -> analysis.json entry of every judged model. Before every instrument sat under
    ``instruments``, one instrument's models were the document's top level; such a file still reads."""
    sections: dict[str, Any] = {name: entry["models"] for name, entry in document.get("instruments", {}).items()}
    if "models" in document:
        sections.setdefault(FORMER_TOP_LEVEL, document["models"])
    if not sections:
        raise KeyError("instruments")
    return {
        (model, instrument): entry
        for instrument, models in sections.items()
        for model, entry in models.items()
        if entry.get("verdict")
    }


BASELINE_FORMAT = "snap-bench-baseline"
BASELINE_VERSION = 1
BASELINE_SUFFIX = "@baseline"
# What a baseline keeps of each observation: the condition and how it scored (not the prompt or answer).
_KEPT_FIELDS = (
    "instrument",
    "condition_id",
    "cell",
    "item",
    "construct",
    "factors",
    "temperature",
    "run",
    "score",
    "keyed_score",
    "code",
    "extra",
)


def baseline_document(model: str, observations: list[Observation], versions: dict[str, str]) -> dict[str, Any]:
    """One model's per-condition results for every instrument, as --snap-save-baseline writes them."""
    own = sorted((o for o in observations if o.model == model), key=lambda o: (o.instrument, o.condition_id))
    return {
        "format": BASELINE_FORMAT,
        "version": BASELINE_VERSION,
        "model": model,
        "instruments": {name: versions.get(name, "unknown") for name in sorted({o.instrument for o in own})},
        "observations": [{name: getattr(o, name) for name in _KEPT_FIELDS} for o in own],
    }


def baseline_path(template: str, model: str) -> Path:
    return Path(template.replace("{model}", model))


def write_baseline(path: Path, document: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # One observation per line: a committed baseline diffs line by line when a result moves.
    lines = ",\n".join(json.dumps(row, sort_keys=True, allow_nan=False) for row in document["observations"])
    head = {key: value for key, value in document.items() if key != "observations"}
    text = json.dumps(head, indent=1, sort_keys=True)[:-2] + ',\n "observations": [\n' + lines + "\n ]\n}\n"
    path.write_text(text, encoding="utf-8")


def read_baseline_file(path: Path, document: dict[str, Any]) -> BaselineSpec:
    from snap_bench.instruments import RENAMED

    try:
        if document["version"] != BASELINE_VERSION:
            raise ValueError(f"version {document['version']}, this snap-bench reads {BASELINE_VERSION}")
        model = str(document["model"])
        label = f"{model}{BASELINE_SUFFIX}"
        observations = tuple(
            Observation(
                model=label,
                messages=[],
                raw_answer=None,
                reason="",
                **{name: row.get(name) for name in _KEPT_FIELDS if name not in ("extra", "construct", "instrument")},
                # a file written before an instrument's rename names it by its old name
                instrument=RENAMED.get(row["instrument"], row["instrument"]),
                construct=row.get("construct"),
                extra=row.get("extra") or {},
            )
            for row in document["observations"]
        )
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(
            f"--baseline {path}: not a baseline file this snap-bench can read ({type(error).__name__}: {error}). "
            "Fix: write it again with --snap-save-baseline"
        ) from None
    return BaselineSpec(label, None, observations, str(path))


@dataclass(frozen=True)
class Question:
    """One comparison to make: is ``model`` non-inferior to ``baseline`` on ``metric``?"""

    model: str
    baseline: str
    instrument: str
    metric: str
    margin: float
    better: str


def compare_with_baseline(
    observations: list[Observation],
    baseline: BaselineSpec,
    instruments: Mapping[str, Instrument],
    settings: AnalysisSettings,
    thresholds: Any,
) -> list[Comparison]:
    """Each metric with a non-inferiority margin: paired where the metric's spec says how two models pair
    (and the baseline's per-condition results are here), unpaired against a saved value otherwise."""
    from snap_bench.metric_specs import spec_in

    by_model: dict[tuple[str, str], list[Observation]] = {}
    for observation in observations:
        by_model.setdefault((observation.model, observation.instrument), []).append(observation)
    comparisons: list[Comparison] = []
    for (model, instrument), rows in sorted(by_model.items()):
        if model == baseline.model:
            continue
        config = thresholds(instrument)
        kind = instruments[instrument]
        old_rows = by_model.get((baseline.model, instrument))
        for metric, margin in config.non_inferiority.items():
            better = config.metrics[metric].better if metric in config.metrics else "higher"
            question = Question(model, baseline.model, instrument, metric, margin, better)
            spec = spec_in(kind.metrics, metric)
            paired = baseline.saved is None and old_rows is not None
            if paired and old_rows is not None and spec is not None and spec.pairing is not None:
                comparisons.append(_paired(question, spec.pairing, rows, old_rows, settings))
            elif paired and old_rows is not None and metric == UNSCORED_RATE:
                comparisons.append(_paired_unscored(question, rows, old_rows, settings))
            else:
                saved = (baseline.saved or {}).get(instrument, {})
                comparisons.append(_unpaired(question, kind, saved, rows, settings))
    return comparisons


def _paired(
    question: Question,
    pairing: Pairing,
    new_rows: list[Observation],
    old_rows: list[Observation],
    settings: AnalysisSettings,
) -> Comparison:
    import numpy as np

    from snap_bench.analysis import complete_rows, observation_table, wide
    from snap_bench.stats import UndefinedStatistic

    index, columns, values = list(pairing.rows), pairing.columns, pairing.values
    batch = pairing.statistic()
    new_wide = wide(observation_table(new_rows), index, columns, values)
    old_wide = wide(observation_table(old_rows), index, columns, values)
    joined = new_wide.add_suffix("_new").join(old_wide.add_suffix("_old"), how="inner")
    matrix, _ = complete_rows(joined)
    k = new_wide.shape[1]
    n = int(matrix.shape[0])

    def difference(data: FloatArray, counts: FloatArray) -> FloatArray:
        result: FloatArray = batch(data[:, :k], counts) - batch(data[:, k:], counts)
        return result

    ones = np.ones((1, n))
    try:
        new_value = float(batch(matrix[:, :k], ones)[0])
        old_value = float(batch(matrix[:, k:], ones)[0])
        interval = settings.interval(difference, matrix)
    except (UndefinedStatistic, ValueError) as error:
        return _undecided(question, paired=True, n=n, why=str(error))
    return _decide(question, new_value, old_value, (interval.estimate, interval.low, interval.high), True, n)


def _paired_unscored(
    question: Question, new_rows: list[Observation], old_rows: list[Observation], settings: AnalysisSettings
) -> Comparison:
    """The unscored rate on the conditions both models were asked, the difference bootstrapped over them."""
    import numpy as np

    old = {o.condition_id: o.code is not None for o in old_rows}
    shared = [(float(o.code is not None), float(old[o.condition_id])) for o in new_rows if o.condition_id in old]
    if not shared:
        return _undecided(question, paired=True, n=0, why="no condition asked of both models")
    matrix = np.asarray(shared, dtype=float)

    def difference(data: FloatArray, counts: FloatArray) -> FloatArray:
        result: FloatArray = counts @ (data[:, 0] - data[:, 1]) / counts.sum(axis=1)
        return result

    new_value, old_value = float(matrix[:, 0].mean()), float(matrix[:, 1].mean())
    estimate = new_value - old_value
    if not np.any(matrix[:, 0] != matrix[:, 1]):
        # The same conditions went unscored on both sides: the paired difference is 0 in every resample.
        return _decide(question, new_value, old_value, (estimate, 0.0, 0.0), True, len(shared))
    interval = settings.interval(difference, matrix)
    return _decide(question, new_value, old_value, (estimate, interval.low, interval.high), True, len(shared))


def _unpaired(
    question: Question,
    instrument: Instrument,
    saved: dict[str, Any],
    new_rows: list[Observation],
    settings: AnalysisSettings,
) -> Comparison:
    new_metric = instrument.analyse(question.model, new_rows, settings).metrics.get(question.metric)
    old_value = saved.get("metrics", {}).get(question.metric, {}).get("value")
    if (
        new_metric is None
        or new_metric.value is None
        or old_value is None
        or new_metric.ci_low is None
        or new_metric.ci_high is None
    ):
        return _undecided(
            question,
            paired=False,
            n=0 if new_metric is None else new_metric.n,
            why="metric undefined or missing on one side",
        )
    old = float(old_value)
    difference = (new_metric.value - old, new_metric.ci_low - old, new_metric.ci_high - old)
    return _decide(question, new_metric.value, old, difference, False, new_metric.n)


def _decide(
    question: Question, new_value: float, old_value: float, difference: tuple[float, float, float], paired: bool, n: int
) -> Comparison:
    estimate, low, high = difference
    margin = question.margin
    # Non-inferiority must be shown: the whole interval of (new - old) has to stay above -margin
    # (below +margin where lower is better). An interval reaching past the margin fails the gate:
    # "inconclusive" when it also reaches the safe side, "REGRESSION" when it lies wholly past it.
    if question.better == "higher":
        regressed, clearly = low <= -margin, high < -margin
    else:
        regressed, clearly = high >= margin, low > margin
    verdict = "REGRESSION" if clearly else "inconclusive: non-inferiority not shown" if regressed else "non-inferior"
    message = (
        f"{question.model} vs {question.baseline} {question.metric}: {new_value:.3f} vs {old_value:.3f}, "
        f"difference {estimate:+.3f} [{low:+.3f}, {high:+.3f}] ({'paired' if paired else 'unpaired'}, n={n}); "
        f"margin {margin:g}: {verdict}"
    )
    return Comparison(
        question.model,
        question.baseline,
        question.instrument,
        question.metric,
        new_value,
        old_value,
        estimate,
        low,
        high,
        margin,
        question.better,
        paired,
        n,
        regressed,
        message,
    )


def _undecided(question: Question, *, paired: bool, n: int, why: str) -> Comparison:
    message = f"{question.model} vs {question.baseline} {question.metric}: not compared ({why}); not judged"
    return Comparison(
        question.model,
        question.baseline,
        question.instrument,
        question.metric,
        None,
        None,
        None,
        None,
        None,
        question.margin,
        question.better,
        paired,
        n,
        False,
        message,
    )
