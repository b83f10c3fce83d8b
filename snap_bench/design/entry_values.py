"""How one value of a models.yaml entry is read: its reasoning effort, log-probabilities, pace and local weights
(snap_bench.design.models reads the entries)."""

from __future__ import annotations

from snap_bench.design.config import Node, known_keys
from snap_bench.design.local_weights import LocalWeights
from snap_bench.design.serving import is_provider_level
from snap_bench.providers.base import REASONING_OFF as REASONING_OFF  # models.yaml `reasoning: off`

LOCAL_KEYS = ("requirement", "sha256", "module", "file", "parts")

# OpenRouter's `reasoning.effort` values; `off` (or YAML's false) sends effort "none", which turns
# reasoning off on the models that allow it.
REASONING_EFFORTS = ("xhigh", "high", "medium", "low", "minimal", "none")
# How many alternatives per answer token an entry's `logprobs: true` asks for.
DEFAULT_TOP_LOGPROBS = 5
MAX_TOP_LOGPROBS = 20


def reasoning_setting(node: Node) -> str:
    """models.yaml `reasoning`: an effort level, or off."""
    if node.value is False:  # YAML reads a bare `off` as false
        return REASONING_OFF
    return node.choice((*REASONING_EFFORTS, REASONING_OFF))


def provider_levels_setting(node: Node, dialect: str, routed: str) -> tuple[str, ...]:
    """models.yaml `providers:`, the providers the entry is compared across: each one pinned in turn through
    OpenRouter's provider routing, so only an entry of dialect ``routed`` (OpenRouter's) can have them."""
    levels = node.unique_texts()
    for element, level in zip(node.elements(), levels, strict=True):
        if not is_provider_level(level):
            raise element.error(
                f"{level!r} is not a provider's name",
                "name a provider as OpenRouter does: its slug (deepinfra, deepinfra/turbo) or its name (DeepInfra)",
            )
    if dialect != routed:
        raise node.error(
            f"pinning a provider is OpenRouter's provider routing, and this entry's dialect is {dialect!r}",
            f"give the entry dialect: {routed} (an OpenRouter base_url), or remove providers:",
        )
    return tuple(levels)


def effort_levels_setting(node: Node) -> tuple[str, ...]:
    """models.yaml `reasoning_efforts:`, the reasoning efforts the entry is compared across."""
    levels = node.unique_texts()
    for element in node.elements():
        element.choice(REASONING_EFFORTS)
    return tuple(levels)


def top_logprobs_setting(node: Node) -> int | None:
    """models.yaml `logprobs`: true (5 alternatives per token), a count from 1 to 20, or false."""
    if node.value is True:
        return DEFAULT_TOP_LOGPROBS
    if node.value is False or node.value is None:
        return None
    return node.integer(1, MAX_TOP_LOGPROBS)


def rate_setting(node: Node) -> float | None:
    return None if node.value is None else node.number(0.001, 1_000_000, "rate limit (requests per minute)")


def concurrency_setting(node: Node) -> int | None:
    if node.value is None:
        return None
    value = node.number(1, 10_000, "concurrency (requests in flight at once)")
    if value != int(value):
        raise node.error(f"concurrency {value!r} is not a whole number", "give a whole number of requests, e.g. 8")
    return int(value)


def weights_setting(node: Node) -> LocalWeights:
    known_keys(node, LOCAL_KEYS)
    sha256 = node.get("sha256").text().lower()
    if len(sha256) != 64 or any(char not in "0123456789abcdef" for char in sha256):
        raise node.get("sha256").error("not a sha256 digest", "give the 64 hex digits of the weights file")
    try:
        return _local_weights(node, sha256)
    except ValueError as error:
        raise node.error(str(error), "give either module + file, or parts + file (see the shipped entries)") from None


def _local_weights(node: Node, sha256: str) -> LocalWeights:
    if node.has("parts"):
        return LocalWeights(
            requirement=node.get("requirement").text(),
            sha256=sha256,
            part_modules=tuple(node.get("parts").unique_texts()),
            joined_name=node.get("file").text(),
        )
    return LocalWeights(
        requirement=node.get("requirement").text(),
        sha256=sha256,
        module=node.get("module").text(),
        file=node.get("file").text(),
    )
