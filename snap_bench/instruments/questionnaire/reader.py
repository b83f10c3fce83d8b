"""Read a questionnaire written in YAML (top-level key ``questionnaire``) into a design: a team's own, the
BFI-25, and the packaged psychometric profile (profile.yaml) and political compass (compass.yaml) alike.

Only ``questionnaire``, ``scale`` and ``items`` are required; everything else has a documented default
(docs/instruments.md): the shipped four system prompts, temperatures 0 and 1, 3 runs, no context, and an
answer instruction built from the scale's labels. ``choices`` (an answer instruction per level) instead of
``instruction`` and ``contexts`` makes the instruction itself the factor (``choice``); ``kind`` names the
kind of questionnaire the registry builds from the design (``likert`` unless given). A mistake is a
ConfigError naming the file, key and fix.
"""

from __future__ import annotations

from pathlib import Path

from snap_bench.design.config import ConfigFiles, Node, known_keys, load_yaml
from snap_bench.design.temperatures import temperatures
from snap_bench.instruments.design import file_beside, instrument_name, item_id, paraphrases
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
    "kind",
    "choices",
)
ITEM_KEYS = ("id", "bank", "construct", "text", "paraphrases", "reverse", "contexts")
# A questionnaire file's `kind` unless it names one: Likert statements.
LIKERT = "likert"
# The factor of a questionnaire that asks through `choices`: which answer instruction the item is put in.
CHOICE_FACTOR = "choice"
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
    kind = instrument_name(root.get("kind", LIKERT))
    files = [path]
    scale, labels = _scale(root.get("scale"))
    if root.has("choices"):
        for key in ("instruction", "contexts"):
            if root.has(key):
                raise root.get(key).error(
                    f"`{key}` beside `choices`", "give each answer instruction under `choices`, or drop `choices`"
                )
        instruction = "{statement}"  # each choice level is an instruction of its own
    else:
        instruction = _instruction(root.get("instruction", None), scale, labels)
    system_prompts = (
        _texts(root.get("system_prompts"), path, config, files)
        if root.has("system_prompts")
        else _texts(Node(DEFAULT_SYSTEM_PROMPTS, path, "system_prompts"), path, config, files, as_files=True)
    )
    contexts: dict[str, str | None] = {"C0": None}
    if root.has("contexts"):
        contexts = _texts(root.get("contexts"), path, config, files)
    if root.has("choices"):
        contexts = dict(_choices(root.get("choices"), scale))
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
        kind=kind,
        context_factor=CHOICE_FACTOR if root.has("choices") else "context",
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
    """The scale and each point's first name. A label is a name or a list of names of the same point
    ([Neutral, Neither agree nor disagree]); the points count from ``low`` (1 unless given: the compass's
    signed scale starts at -2)."""
    known_keys(node, ("points", "labels", "low"))
    points = node.get("points").integer(2, 11)
    low = node.get("low", 1).integer(-100, 100)
    labels_node = node.get("labels")
    names: dict[str, int] = {}
    first_names: list[str] = []
    for point, label_node in enumerate(labels_node.elements(), low):
        synonyms = label_node.unique_texts() if isinstance(label_node.value, list) else [label_node.text()]
        for synonym in synonyms:
            if synonym.lower() in names:
                raise label_node.error(f"label {synonym!r} names two points", "give every point its own labels")
            names[synonym.lower()] = point
        first_names.append(synonyms[0])
    if len(first_names) != points:
        raise labels_node.error(
            f"{len(first_names)} labels for {points} points",
            f"give one label per point (a name, or a list of its names), {points} in all, lowest first",
        )
    return LikertScale(labels=names, low=low, high=low + points - 1), first_names


def default_instruction(labels: list[str], low: int = 1) -> str:
    """The question built from the scale, worded as the profile's: every point named before the statement,
    the answer format after it."""
    high = low + len(labels) - 1
    anchors = ", ".join(f"{point} = {_literal(label)}" for point, label in enumerate(labels, low))
    return (
        f"On a scale from {low} to {high} ({anchors}), please respond to the following statement:\n\n"
        "{statement}\n\n"
        f"Respond with ONLY a number from {low}-{high}."
    )


def _literal(text: str) -> str:
    """``text`` as it reads after str.format (a brace in a label is not a placeholder)."""
    return text.replace("{", "{{").replace("}", "}}")


def _instruction(node: Node, scale: LikertScale, labels: list[str]) -> str:
    if node.value is None:
        return default_instruction(labels, scale.low)
    return _question(node, scale)


def _question(node: Node, scale: LikertScale) -> str:
    """An answer instruction: text with {statement} where the item's text goes (and {points} for the top)."""
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


def _choices(node: Node, scale: LikertScale) -> dict[str, str]:
    """The answer instructions by level (a compass's forced and unforced): each is the question itself."""
    choices = {level: _question(text, scale) for level, text in node.items()}
    if not choices:
        raise node.error("no choice levels", "give at least one answer instruction, e.g. forced")
    return choices


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
            bank=item_node.get("bank", "").text() if item_node.has("bank") else "",
            construct=item_node.get("construct").text(),
            reverse_scored=item_node.get("reverse", False).boolean(),
            paraphrases=texts,
            contexts=item_contexts,
        )
    if not items:
        raise node.error("no items", "list at least one item")
    return items


def read_norms(path: Path) -> Norms:
    """Human norms (docs/instruments.md): ``source: {respondents: N, ...}``, per trait ``{mean, sd, n}`` of the
    respondents' trait scores (the mean of the keyed items) and, where the source reports them, the trait's
    ``alpha`` and per item ``{mean, sd, n}`` of the raw answers (published instruments often give the trait
    figures alone)."""
    root = load_yaml(path)
    items_node = root.get("items", None)
    items = {
        item: ItemNorm(
            mean=node.get("mean").number(-1e6, 1e6, "mean"),
            sd=node.get("sd").number(0, 1e6, "standard deviation"),
            n=node.get("n").integer(1, 10**9),
        )
        for item, node in (items_node.items() if items_node.value is not None else ())
    }
    traits = {
        trait: TraitNorm(
            mean=node.get("mean").number(-1e6, 1e6, "mean"),
            sd=node.get("sd").number(1e-12, 1e6, "positive standard deviation"),
            alpha=_alpha(node.get("alpha", None)),
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


def _alpha(node: Node) -> float | None:
    """A trait's alpha among the respondents: absent or null where the source reports none."""
    return None if node.value is None else node.number(-1e6, 1, "Cronbach's alpha")


def _check_norms(norms: Norms, items: dict[str, LikertItem], node: Node) -> None:
    """Norms are compared trait by trait: every construct of the questionnaire needs its human figures."""
    missing = sorted({item.construct for item in items.values()} - set(norms.traits))
    if missing:
        raise node.error(f"no norms for {', '.join(missing)}", "add them under `traits:` in the norms file")
