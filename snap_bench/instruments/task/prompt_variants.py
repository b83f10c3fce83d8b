"""The prompt variants of a factorial design, rendered from template pieces set by each factor level.

Every level of every factor sets named pieces (``formal`` sets ``what: "What is"``, ``syn2`` sets
``sentiment: "emotion"``); a variant is one level per factor, and its prompt is the template with
``{piece}`` placeholders filled in, recursively (a piece may use other pieces). ``{text}`` is filled
last and only once, so braces inside a review never act as placeholders. A level may be one text
instead: it sets the piece named after its factor (a task's dimension ``tone`` fills ``{tone}``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import product

from snap_bench.design.config import ConfigError, Node

PLACEHOLDER = re.compile(r"\{(\w+)\}")
TEXT = "text"
MAX_DEPTH = 8


@dataclass(frozen=True)
class Variant:
    """One prompt variant: a level per factor, in design order, e.g. formal-imp-task-syn1."""

    levels: tuple[tuple[str, str], ...]

    @property
    def id(self) -> str:
        return "-".join(level for _, level in self.levels)


class PromptDesign:
    """Factors with their levels' pieces, shared pieces, and the template that joins them."""

    def __init__(self, factors: Node, template: Node, shared: Node, fixed: dict[str, str]) -> None:
        self.factors: dict[str, dict[str, dict[str, str]]] = {}
        owner: dict[str, str] = {}
        self.shared = {name: _piece(piece) for name, piece in shared.items()}
        self.shared.update(fixed)
        for factor, levels_node in factors.items():
            levels: dict[str, dict[str, str]] = {}
            names: set[str] | None = None
            for level, pieces_node in levels_node.items():
                if not re.fullmatch(r"[a-z0-9]+", level):
                    raise pieces_node.error(f"level {level!r} is not short lower-case letters and digits", "rename it")
                # A level written as one text sets the piece named after its dimension ({tone} for tone).
                pieces = (
                    {factor: _piece(pieces_node)}
                    if isinstance(pieces_node.value, str)
                    else {name: _piece(piece) for name, piece in pieces_node.items()}
                )
                if names is not None and set(pieces) != names:
                    raise pieces_node.error(
                        f"sets pieces {sorted(pieces)}, the other levels set {sorted(names)}",
                        "give every level of a factor the same pieces",
                    )
                names = set(pieces)
                levels[level] = pieces
            if len(levels) < 2:
                raise levels_node.error(f"factor {factor!r} has {len(levels)} level(s)", "give it at least two")
            for name in names or set():
                if name in owner or name in self.shared or name == TEXT:
                    raise levels_node.error(
                        f"piece {name!r} is also set by {owner.get(name, 'the shared pieces')}",
                        "let exactly one factor (or the shared pieces) set each piece",
                    )
                owner[name] = factor
            self.factors[factor] = levels
        if len(self.factors) < 1:
            raise factors.error("no factors", "list the factors and their levels")
        self.template = template.text()
        self._template_node = template
        if "{" + TEXT + "}" not in self._expand(self.template, self.variants()[0]):
            raise template.error("the rendered prompt has no {text}", "put {text} where the input text goes")
        for variant in self.variants():  # an unknown placeholder is a config error now, not at ask time
            self.render(variant, "probe")
        self._check_each_factor_rewords(factors)

    def _check_each_factor_rewords(self, factors: Node) -> None:
        """A factor whose levels give one prompt would show a perfect flip rate for nothing."""
        first = {factor: next(iter(levels)) for factor, levels in self.factors.items()}
        for factor, levels in self.factors.items():
            prompts = {self.render(Variant(tuple({**first, factor: level}.items())), "probe") for level in levels}
            if len(prompts) < 2:
                raise factors.get(factor).error(
                    "its levels give the same prompt",
                    f"use the placeholder {{{factor}}} (or a piece its levels set) in the template",
                )

    def variants(self) -> list[Variant]:
        """Every combination of levels, first factor slowest, in the order the config lists them."""
        names = list(self.factors)
        return [
            Variant(tuple(zip(names, combination, strict=True)))
            for combination in product(*(list(levels) for levels in self.factors.values()))
        ]

    def levels(self) -> dict[str, list[str]]:
        return {factor: list(levels) for factor, levels in self.factors.items()}

    def render(self, variant: Variant, text: str) -> str:
        """The prompt of ``variant`` around ``text``."""
        return self._expand(self.template, variant).replace("{" + TEXT + "}", text)

    def _expand(self, template: str, variant: Variant) -> str:
        pieces = dict(self.shared)
        for factor, level in variant.levels:
            pieces.update(self.factors[factor][level])

        def fill(match: re.Match[str]) -> str:
            name = match.group(1)
            if name == TEXT:
                return match.group(0)
            if name not in pieces:
                raise self._node_error(f"unknown placeholder {{{name}}} in variant {variant.id}", name)
            return pieces[name]

        result = template
        for _ in range(MAX_DEPTH):
            expanded = PLACEHOLDER.sub(fill, result)
            if expanded == result:
                return result
            result = expanded
        raise self._node_error(f"pieces refer to each other in a loop (variant {variant.id})", "")

    def _node_error(self, problem: str, name: str) -> ConfigError:
        fix = f"define the piece {name!r} in a factor level or the shared pieces" if name else "break the loop"
        return self._template_node.error(problem, fix)


def _piece(node: Node) -> str:
    """A piece may be empty ("" for a formal level that adds no greeting), but must be text."""
    if not isinstance(node.value, str):
        raise node.error(
            f"expected text, found {type(node.value).__name__} {node.value!r}", 'give a quoted string ("" for none)'
        )
    return node.value
