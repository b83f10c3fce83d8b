"""One colour per model across the whole report, whatever order a section lists the models in.

A chart that colours its series by position gives a model another colour wherever the ranking differs
(the compass ranks the models otherwise than the profile); every chart asks here instead. The colour
follows the model's place among all the session's models in alphabetical order.
"""

from __future__ import annotations

from collections.abc import Iterable

# Okabe & Ito's colour-blind-safe palette, without its black and yellow (too dark or too faint for a line),
# then four of Paul Tol's muted scheme (indigo, wine, olive, teal): ten models, ten colours.
MODEL_COLOURS = (
    "#0072B2",
    "#D55E00",
    "#009E73",
    "#CC79A7",
    "#56B4E9",
    "#E69F00",
    "#332288",
    "#882255",
    "#999933",
    "#44AA99",
)
_KNOWN: list[str] = []


def register_models(models: Iterable[str]) -> None:
    """Fix the colours of a session's models (called once, with all of them, before any chart)."""
    _KNOWN[:] = sorted(set(models))


def model_colour(model: str) -> str:
    """The model's colour: its alphabetical place among the registered models, or a stable fallback."""
    if model not in _KNOWN:
        _KNOWN.append(model)
        _KNOWN.sort()
    return MODEL_COLOURS[_KNOWN.index(model) % len(MODEL_COLOURS)]
