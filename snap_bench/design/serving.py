"""The serving factors: the provider that serves a model and the reasoning effort it is asked at.

Each level of them is asked as a model of its own, a *serving* of the base model: ``gpt-oss-120b@groq`` is
gpt-oss-120b pinned to Groq, ``o4-mini@effort-high`` o4-mini at effort high, ``m@groq@effort-low`` both. A serving
is crossed with every other factor of every instrument (it is one more model to them), has its own cassettes
(its name is its folder) and its own price line in the dry run; the analysis compares the servings of one base
model level by level (snap_bench.judging.serving_levels).

The name is the serving's whole identity, so a replay without the options still knows what it recorded: a base
model's name never holds ``@`` (models.yaml names are letters, digits, '-', '.' and '_'), and a provider's ``/``
(OpenRouter's variants, ``deepinfra/turbo``) is written ``--`` as ad-hoc model ids are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PROVIDER, EFFORT = "provider", "effort"
# The serving factors, in the order a serving's name spells them.
FACTORS = (PROVIDER, EFFORT)
SEPARATOR = "@"
EFFORT_PREFIX = "effort-"
# What a provider level may be called: OpenRouter's provider slugs and display names ("deepinfra/turbo", "Groq").
_PROVIDER_LEVEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9._-]+)?")


@dataclass(frozen=True)
class Serving:
    """One serving of a base model: the provider pinned (None: the endpoint routes as it likes) and the
    reasoning effort asked (None: the entry's own)."""

    base: str
    provider: str | None = None
    effort: str | None = None

    @property
    def name(self) -> str:
        """The model name the serving is asked, recorded and reported under."""
        parts = [self.base]
        if self.provider is not None:
            parts.append(self.provider.replace("/", "--"))
        if self.effort is not None:
            parts.append(EFFORT_PREFIX + self.effort)
        return SEPARATOR.join(parts)

    @property
    def levels(self) -> dict[str, str]:
        """The factor -> level this serving stands at (only the factors it sets)."""
        found = {PROVIDER: self.provider, EFFORT: self.effort}
        return {factor: level for factor, level in found.items() if level is not None}

    def level(self, factor: str) -> str | None:
        return self.levels.get(factor)


def serving_of(name: str) -> Serving | None:
    """The serving a model name stands for, or None for a plain model (no ``@``) or a name no serving has."""
    base, *rest = name.split(SEPARATOR)
    if not rest or not base or len(rest) > len(FACTORS):
        return None
    provider = effort = None
    for part in rest:
        if part.startswith(EFFORT_PREFIX) and effort is None:
            effort = part.removeprefix(EFFORT_PREFIX)
            if not effort:
                return None
        elif provider is None and effort is None and part:
            provider = part.replace("--", "/")
        else:
            return None
    return Serving(base, provider, effort)


def is_provider_level(text: str) -> bool:
    """Whether ``text`` can name a provider level (what OpenRouter's provider slugs and names look like)."""
    return _PROVIDER_LEVEL.fullmatch(text) is not None
