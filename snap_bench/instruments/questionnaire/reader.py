"""Read a questionnaire written in YAML (top-level key ``questionnaire``) into a design.

Only ``questionnaire``, ``scale`` and ``items`` are required; everything else has a documented default
(docs/instruments.md): the shipped four system prompts, temperatures 0 and 1, 3 runs, no context, and an
answer instruction built from the scale's labels. A mistake is a ConfigError naming the file, key and fix.
"""

from __future__ import annotations

from pathlib import Path

from snap_bench.design.config import ConfigFiles, Node, load_yaml
from snap_bench.design.temperatures import temperatures
from snap_bench.instruments.design import file_beside, instrument_name, item_id, known_keys, paraphrases
from snap_bench.instruments.questionnaire.design import ItemNorm, LikertItem, Norms, QuestionnaireDesign, TraitNorm
from snap_bench.observations.parsing import LikertScale

KIND_KEY = "questionnaire"
KEYS = (
    KIND_KEY,
    "title",
    "description",
    "scale",
    "items",
    "instruction",
    "system_prompts",
    "contexts",
    "temperatures",
    "runs",
    "max_tokens",
    "thresholds",
    "norms",
)
ITEM_KEYS = ("id", "construct", "text", "paraphrases", "reverse", "contexts")
# The shipped system prompts every questionnaire is asked under unless it lists its own.
DEFAULT_SYSTEM_PROMPTS = {level: f"prompts/system/{level}.txt" for level in ("NEU", "DIR", "PER", "ABS")}
DEFAULT_TEMPERATURES = [0.0, 1.0]
DEFAULT_RUNS = 3
DEFAULT_MAX_TOKENS = 24


def read_questionnaire(path: Path, config: ConfigFiles) -> QuestionnaireDesign:
    """The design written in ``path``; files it names are looked up beside it, then in ``config``."""
    root = load_yaml(path)
    known_keys(root, KEYS)
    name = instrument_name(root.get(KIND_KEY))
    files = [path]
    scale, labels = _scale(root.get("scale"))
    instruction = _instruction(root.get("instruction", None), scale, labels)
    system_prompts = (
        _texts(root.get("system_prompts"), path, config, files)
        if root.has("system_prompts")
        else _texts(Node(DEFAULT_SYSTEM_PROMPTS, path, "system_prompts"), path, config, files, as_files=True)
    )
    contexts: dict[str, str | None] = {"C0": None}
    if root.has("contexts"):
        contexts = _texts(root.get("contexts"), path, config, files)
    norms_node = root.get("norms", None)
    norms = None
    if norms_node.value is not None:
        norms_path = file_beside(norms_node, path, config)
        files.append(norms_path)
        norms = read_norms(norms_path)
    items = _items(root.get("items"), contexts)
    if norms is not None:
        _check_norms(norms, items, norms_node)
    return QuestionnaireDesign(
        name=name,
        title=root.get("title", name).text(),
        description=root.get("description", "").value or "",
        scale=scale,
        instruction=instruction,
        items=items,
        system_prompts=system_prompts,
        contexts=contexts,
        temperatures=temperatures(root.get("temperatures", DEFAULT_TEMPERATURES)),
        runs=root.get("runs", DEFAULT_RUNS).integer(1, 100),
        max_tokens=root.get("max_tokens", DEFAULT_MAX_TOKENS).integer(1, 4096),
        files=files,
        thresholds=root.get("thresholds") if root.has("thresholds") else None,
        norms=norms,
    )


def _scale(node: Node) -> tuple[LikertScale, list[str]]:
    points = node.get("points").integer(2, 11)
    labels_node = node.get("labels")
    labels = labels_node.unique_texts()
    if len(labels) != points:
        raise labels_node.error(
            f"{len(labels)} labels for {points} points", f"give one label per point, {points} in all, lowest first"
        )
    return LikertScale(
        labels={label.lower(): point for point, label in enumerate(labels, 1)}, low=1, high=points
    ), labels


def default_instruction(labels: list[str]) -> str:
    """The question built from the scale, worded as the profile's: every point named before the statement,
    the answer format after it."""
    anchors = ", ".join(f"{point} = {_literal(label)}" for point, label in enumerate(labels, 1))
    return (
        f"On a scale from 1 to {len(labels)} ({anchors}), please respond to the following statement:\n\n"
        "{statement}\n\n"
        f"Respond with ONLY a number from 1-{len(labels)}."
    )


def _literal(text: str) -> str:
    """``text`` as it reads after str.format (a brace in a label is not a placeholder)."""
    return text.replace("{", "{{").replace("}", "}}")


def _instruction(node: Node, scale: LikertScale, labels: list[str]) -> str:
    if node.value is None:
        return default_instruction(labels)
    text = node.text()
    if "{statement}" not in text:
        raise node.error("no {statement} placeholder", "put {statement} where the item's text goes")
    try:
        text.format(statement="", points=scale.high)
    except (KeyError, IndexError, ValueError) as error:
        raise node.error(
            f"a placeholder other than {{statement}} and {{points}} ({error})",
            "double a literal brace: {{ and }}",
        ) from None
    return text


def _texts(
    node: Node, questionnaire: Path, config: ConfigFiles, files: list[Path], as_files: bool = False
) -> dict[str, str | None]:
    """level -> text: written out, read from ``{file: PATH}`` (or every value, ``as_files``), or null for none."""
    texts: dict[str, str | None] = {}
    for level, value in node.items():
        if not level.isalnum():
            raise value.error(f"level {level!r} is not alphanumeric", "name levels like NEU or C1")
        if value.value is None:
            texts[level] = None
        elif as_files or isinstance(value.value, dict):
            file_node = value if as_files else value.get("file")
            if not as_files:
                known_keys(value, ("file",))
            path = file_beside(file_node, questionnaire, config)
            files.append(path)
            texts[level] = path.read_text(encoding="utf-8").strip()
        else:
            texts[level] = value.text().strip()
    if not texts:
        raise node.error("no levels", "list at least one level")
    return texts


def _items(node: Node, contexts: dict[str, str | None]) -> dict[str, LikertItem]:
    items: dict[str, LikertItem] = {}
    levels: list[str] | None = None
    for item_node in node.elements():
        known_keys(item_node, ITEM_KEYS)
        item = item_id(item_node.get("id"), items, "C1")
        if item_node.has("text") == item_node.has("paraphrases"):
            raise item_node.error("needs either `text` or `paraphrases`", "give the item's text, or its paraphrases")
        texts = (
            {"P1": item_node.get("text").text()}
            if item_node.has("text")
            else paraphrases(item_node.get("paraphrases"), levels)
        )
        if levels is not None and list(texts) != levels:
            raise item_node.error(
                f"paraphrase levels {list(texts)} differ from the other items' {levels}",
                "give every item the same paraphrases (or every item one `text`)",
            )
        levels = list(texts)
        listed = item_node.get("contexts", None)
        item_contexts = tuple(listed.unique_texts()) if listed.value is not None else tuple(contexts)
        for level, element in zip(item_contexts, listed.elements() if listed.value is not None else [], strict=False):
            if level not in contexts:
                raise element.error(f"unknown context {level!r}", f"use one of: {', '.join(contexts)}")
        items[item] = LikertItem(
            id=item,
            construct=item_node.get("construct").text(),
            reverse_scored=item_node.get("reverse", False).boolean(),
            paraphrases=texts,
            contexts=item_contexts,
        )
    if not items:
        raise node.error("no items", "list at least one item")
    return items


def read_norms(path: Path) -> Norms:
    """Human norms (docs/instruments.md): ``source: {respondents: N, ...}``, per item ``{mean, sd, n}`` of the raw
    answers, per trait ``{mean, sd, alpha, n}`` of the respondents' trait scores (the mean of the keyed items)."""
    root = load_yaml(path)
    items = {
        item: ItemNorm(
            mean=node.get("mean").number(-1e6, 1e6, "mean"),
            sd=node.get("sd").number(0, 1e6, "standard deviation"),
            n=node.get("n").integer(1, 10**9),
        )
        for item, node in root.get("items").items()
    }
    traits = {
        trait: TraitNorm(
            mean=node.get("mean").number(-1e6, 1e6, "mean"),
            sd=node.get("sd").number(1e-12, 1e6, "positive standard deviation"),
            alpha=node.get("alpha").number(-1e6, 1, "Cronbach's alpha"),
            n=node.get("n").integer(1, 10**9),
        )
        for trait, node in root.get("traits").items()
    }
    source = root.get("source")
    respondents = source.get("respondents").integer(1, 10**9)
    return Norms(
        # What the report names the data by: the source's entries other than the count ("psychTools 2.2.9 bfi").
        source=" ".join(str(value.value) for key, value in source.items() if key != "respondents") or path.name,
        respondents=respondents,
        items=items,
        traits=traits,
    )


def _check_norms(norms: Norms, items: dict[str, LikertItem], node: Node) -> None:
    """Norms are compared trait by trait: every construct of the questionnaire needs its human figures."""
    missing = sorted({item.construct for item in items.values()} - set(norms.traits))
    if missing:
        raise node.error(f"no norms for {', '.join(missing)}", "add them under `traits:` in the norms file")
