"""What the upgrade gate compares with: a replayed model, a baseline file, or a saved analysis.json.

A baseline file (``--snap-save-baseline``) holds one model's per-condition results for every instrument,
so the gate pairs it with the new model exactly as a replayed model (``--baseline=OLD``); a saved
analysis.json holds point values and intervals only, and is compared unpaired and conservatively. The
comparison itself is :mod:`snap_bench.judging.comparison`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from snap_bench.observations.observation import Observation
from snap_bench.wire.atomic import write_atomically

if TYPE_CHECKING:
    pass

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


def parse_baseline(
    value: str, known_models: list[str], recorded: list[str] | None = None, root: Path = Path()
) -> BaselineSpec:
    """A model name, a baseline file, or the path of a saved analysis.json: its one judged model, or the
    model named after a ``#`` (``reports/analysis.json#qwen2.5-coder-1.5b``) when it holds several. A relative
    path is read below ``root`` (the project root, as --snap-save-baseline writes it), wherever pytest started.

    ``recorded``: the models with recordings, the ones a message offers (a model of models.yaml without any,
    retired ones included, is no baseline to replay); None offers ``known_models``."""
    offered = ", ".join(known_models if recorded is None else [m for m in recorded if m in known_models]) or "none"
    path, chosen = root / value, None
    if not path.is_file() and "#" in value:
        head, _, chosen = value.rpartition("#")
        path = root / head
        value = head
    if value.endswith(".json") or path.is_file():
        if not path.is_file():
            looked = "" if Path(value).is_absolute() else f" (looked for {path})"
            raise ValueError(
                f"--baseline {value}: no such file{looked}. Fix: write one with --snap-save-baseline={value}, or "
                f"name a model with recordings ({offered})"
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
        if chosen is not None:
            if chosen not in models:
                raise ValueError(
                    f"--baseline {value}#{chosen}: the file has no judged model {chosen!r}; it holds "
                    f"{', '.join(models) or 'none'}"
                )
            models = [chosen]
        elif len(models) != 1:
            raise ValueError(
                f"--baseline {value}: holds {len(models)} judged models ({', '.join(models) or 'none'}); pick one "
                f"with --baseline={value}#MODEL, or write one model's baseline file with "
                "--snap-save-baseline=baselines/{model}.json and pass that"
            )
        model = models[0]
        return BaselineSpec(model, {instrument: entry for (name, instrument), entry in saved.items() if name == model})
    if value not in known_models:
        raise ValueError(
            f"--baseline {value!r} is neither a known model nor a file. Fix: name a model with recordings "
            f"({offered}), a baseline file (--snap-save-baseline) or a saved analysis.json"
        )
    return BaselineSpec(value)


def _judged_entries(document: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """(model, instrument) -> analysis.json entry of every judged model. Before every instrument sat under
    ``instruments``."""
    sections: dict[str, Any] = {name: entry["models"] for name, entry in document.get("instruments", {}).items()}
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
    # One observation per line: a committed baseline diffs line by line when a result moves.
    lines = ",\n".join(json.dumps(row, sort_keys=True, allow_nan=False) for row in document["observations"])
    head = {key: value for key, value in document.items() if key != "observations"}
    text = json.dumps(head, indent=1, sort_keys=True)[:-2] + ',\n "observations": [\n' + lines + "\n ]\n}\n"
    write_atomically(path, text.encode("utf-8"))


def read_baseline_file(path: Path, document: dict[str, Any]) -> BaselineSpec:
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
                instrument=row["instrument"],
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
