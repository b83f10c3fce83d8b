"""The design of a G study: which facets it generalizes over, how they nest, and which random terms it fits."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["GStudyDesign"]


@dataclass(frozen=True)
class GStudyDesign:
    """Which facets a G study estimates, which are nested in which, and which interactions it fits.

    Parameters
    ----------
    object_of_measurement : str
        The label column whose levels are measured (the universe score varies over them), e.g. ``"item"``.
    facets : sequence of str
        The random facets of generalization, e.g. ``("paraphrase", "system_prompt", "temperature")``.
        Every facet's main effect is estimated (for a nested facet: its effect within its nest).
    nested : mapping of str to sequence of str
        Facet -> the facets (or object) it is nested in: ``{"paraphrase": ("item",)}`` says that
        paraphrase P1 of one item is not the same condition as P1 of another. Every term that names a
        nested facet includes its nest.
    interactions : sequence of sequence of str
        Further terms to estimate, e.g. ``(("item", "system_prompt"), ("item", "temperature"))``.
    replicate : str, optional
        The label column of replications within a cell (e.g. ``"run"``). When given, a ``"cell"``
        component (every interaction not listed above) is estimated and the residual is pure
        replication noise; without it the residual is confounded with the highest-order interaction.
    """

    object_of_measurement: str
    facets: tuple[str, ...]
    nested: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    interactions: tuple[tuple[str, ...], ...] = ()
    replicate: str | None = None

    def columns(self) -> tuple[str, ...]:
        """The label columns the design reads, object first, replicate last."""
        tail = (self.replicate,) if self.replicate else ()
        return (self.object_of_measurement, *self.facets, *tail)

    def cell_columns(self) -> tuple[str, ...]:
        """The label columns that define a cell: the object and every facet (not the replicate)."""
        return (self.object_of_measurement, *self.facets)

    def nest_closure(self, name: str) -> frozenset[str]:
        """``name`` and every facet it is nested in, transitively."""
        members = {name}
        pending = [name]
        while pending:
            for outer in self.nested.get(pending.pop(), ()):
                if outer not in members:
                    members.add(outer)
                    pending.append(outer)
        return frozenset(members)

    def terms(self) -> list[frozenset[str]]:
        """The random terms in order: object, facets, interactions (duplicates removed)."""
        known = {self.object_of_measurement, *self.facets}
        if len(known) != 1 + len(self.facets):
            raise ValueError("the object of measurement and the facets must be distinct names")
        if self.replicate in known:
            raise ValueError(f"the replicate {self.replicate!r} cannot also be a facet")
        for facet, nest in self.nested.items():
            unknown = {facet, *nest} - known
            if unknown:
                raise ValueError(f"nesting names unknown facet(s) {sorted(unknown)}; declare them in facets")
            if facet in self.nest_closure(facet) - {facet} or facet in nest:
                raise ValueError(f"facet {facet!r} is nested in itself")
        terms: list[frozenset[str]] = []
        for group in [(self.object_of_measurement,), *((f,) for f in self.facets), *self.interactions]:
            unknown = set(group) - known
            if unknown:
                raise ValueError(f"interaction names unknown facet(s) {sorted(unknown)}")
            term = frozenset().union(*(self.nest_closure(name) for name in group))
            if term not in terms:
                terms.append(term)
        return terms

    def name(self, term: frozenset[str]) -> str:
        """Brennan's notation: crossed members joined by `` x ``, then ``:`` and the nest, e.g. ``p x r:t``."""
        order = self.columns()
        nesting = {outer for member in term for outer in self.nest_closure(member) - {member}}
        primary = [name for name in order if name in term and name not in nesting]
        inner = [name for name in order if name in nesting]
        label = " x ".join(primary)
        return f"{label}:{' x '.join(inner)}" if inner else label
