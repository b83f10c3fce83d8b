"""Read a classification task (a YAML file whose top-level key is ``task``; benchmarks/perturbation.yaml, the
sentiment study, is one) into a design.

A task names its label set (``labels``: a list, or label -> weight for the weighted accuracy), its labelled
inputs (``data``: a CSV or JSONL file of texts with gold labels), a prompt ``template`` and its rewording
``dimensions`` (each fills a placeholder of the template; two or more levels each, crossed factorially),
and optionally few-shot examples for phase 2. Everything else has a documented default (docs/instruments.md).
A mistake is a ConfigError naming the file, key and fix.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from snap_bench.design.config import ConfigFiles, Node, known_keys, load_yaml
from snap_bench.design.temperatures import temperatures
from snap_bench.instruments.design import file_beside, instrument_name
from snap_bench.instruments.task.label_set import LabelSet
from snap_bench.instruments.task.labelled_data import DataSpec, Sample, load_samples
from snap_bench.instruments.task.labels import normalise
from snap_bench.instruments.task.prompt_variants import PromptDesign

KIND_KEY = "task"
DESIGN_KEYS = (
    "labels",
    "data",
    "template",
    "dimensions",
    "pieces",
    "temperatures",
    "runs",
    "max_tokens",
    "phase2",
)
KEYS = (KIND_KEY, "title", "description", *DESIGN_KEYS, "thresholds")
DATA_KEYS = ("test", "examples", "format", "text_column", "label_column", "id_column", "gold", "limit", "label_map")
PHASE2_KEYS = ("best_variant_by", "examples_per_label", "examples_header", "example_format", "example_order_seed")
BEST_VARIANT_RULES = ("weighted_index", "custom_accuracy")
# One answer per input and rewording: at temperature 0 a second run mostly repeats the first.
DEFAULT_TEMPERATURES = [0.0]
DEFAULT_RUNS = 1
DEFAULT_MAX_TOKENS = 16
DEFAULT_PHASE2 = {
    "best_variant_by": "weighted_index",
    "examples_per_label": 3,
    "examples_header": "Here are some labelled examples:",
    "example_format": "Text: {text}\nAnswer: {label}",
    "example_order_seed": 0,
}


@dataclass(frozen=True)
class FewShot:
    """Phase 2: how the best variant is chosen and how the labelled examples are picked and shown."""

    best_variant_by: str
    examples_per_label: int
    examples_header: str
    example_format: str
    example_order_seed: int


@dataclass(frozen=True)
class TaskDesign:
    """Everything a task's instrument asks and analyses, read from its file."""

    name: str
    title: str
    files: list[Path]
    label_set: LabelSet
    data_spec: DataSpec
    samples: dict[str, Sample]
    example_pool: list[Sample]
    runs: int
    max_tokens: int
    temperatures: list[float]
    prompts: PromptDesign
    few_shot: FewShot
    thresholds: Node | None = None
    description: str = ""


def read_task(path: Path, config: ConfigFiles) -> TaskDesign:
    """The task written in ``path``; files it names are looked up beside it, then in ``config``."""
    root = load_yaml(path)
    known_keys(root, KEYS)
    name = instrument_name(root.get(KIND_KEY))
    return _design(
        root,
        name=name,
        title=root.get("title", name).text(),
        description=root.get("description", "").value or "",
        label_set=_label_set(root.get("labels")),
        files=[path],
        resolve=lambda node: file_beside(node, path, config),
        thresholds=root.get("thresholds") if root.has("thresholds") else None,
    )


def _design(
    root: Node,
    *,
    name: str,
    title: str,
    description: str,
    label_set: LabelSet,
    files: list[Path],
    resolve: Callable[[Node], Path],
    thresholds: Node | None,
) -> TaskDesign:
    data = root.get("data")
    known_keys(data, DATA_KEYS)
    spec = DataSpec.from_node(data, label_set)
    test_path = resolve(data.get("test"))
    files.append(test_path)
    samples = load_samples(test_path, spec, "S")
    limit = data.get("limit", None)
    if limit.value is not None:
        samples = samples[: limit.integer(1, len(samples))]
    pool: list[Sample] = []
    examples = data.get("examples", None)
    if examples.value is not None:
        pool_path = resolve(examples)
        files.append(pool_path)
        pool = load_samples(pool_path, spec, "E")
        _check_disjoint(samples, pool, examples)
    prompts = PromptDesign(
        root.get("dimensions"), root.get("template"), root.get("pieces", {}), {"labels": ", ".join(label_set.labels)}
    )
    return TaskDesign(
        name=name,
        title=title,
        description=description,
        files=files,
        label_set=label_set,
        data_spec=spec,
        samples={s.id: s for s in samples},
        example_pool=pool,
        runs=root.get("runs", DEFAULT_RUNS).integer(1, 100),
        max_tokens=root.get("max_tokens", DEFAULT_MAX_TOKENS).integer(1, 4096),
        temperatures=temperatures(root.get("temperatures", DEFAULT_TEMPERATURES)),
        prompts=prompts,
        few_shot=_few_shot(root.get("phase2", {})),
        thresholds=thresholds,
    )


def _label_set(node: Node) -> LabelSet:
    """``[a, b, c]`` (nominal) or ``{a: -1, b: 0, c: 1}`` (weighted); written as the parser reads them."""
    if isinstance(node.value, dict):
        entries = list(node.items())
        weights: dict[str, int] | None = {}
        for label, weight in entries:
            if isinstance(weight.value, bool) or not isinstance(weight.value, int):
                raise weight.error(f"weight {weight.value!r} is not a whole number", "give every label one, e.g. -2")
            weights[label] = weight.value  # type: ignore[index]
        labels = [label for label, _ in entries]
    else:
        labels = node.unique_texts()
        weights = None
    if len(labels) < 2:
        raise node.error(f"{len(labels)} label(s)", "list at least two labels")
    for label in labels:
        read = normalise(label).strip()
        if read != label:
            raise node.error(
                f"label {label!r} is read from answers as {read!r}", f"write it as {read!r} (lower case, no quotes)"
            )
    return LabelSet(tuple(labels), weights)


def _few_shot(node: Node) -> FewShot:
    known_keys(node, PHASE2_KEYS)
    settings = {**DEFAULT_PHASE2, **node.mapping()}
    resolved = Node(settings, node.path, node.key)
    example_format = resolved.get("example_format")
    for placeholder in ("{text}", "{label}"):
        if placeholder not in example_format.text():
            raise example_format.error(f"no {placeholder}", f"put {placeholder} in the format")
    return FewShot(
        best_variant_by=resolved.get("best_variant_by").choice(BEST_VARIANT_RULES),
        examples_per_label=resolved.get("examples_per_label").integer(1, 20),
        examples_header=resolved.get("examples_header").text(),
        example_format=example_format.text(),
        example_order_seed=resolved.get("example_order_seed").integer(0, 2**32 - 1),
    )


def _check_disjoint(samples: list[Sample], pool: list[Sample], node: Node) -> None:
    texts = {sample.text: sample.id for sample in samples}
    for example in pool:
        if example.text in texts:
            raise node.error(
                f"example {example.id} repeats test sample {texts[example.text]}",
                "draw the few-shot examples from a split disjoint from the test samples",
            )
