"""What one benchmark test's row in the HTML report shows: what was asked, what came back, how it scored.

It goes into the row's log area, which pytest-html sets as ``innerHTML``, so an unescaped answer such
as ``<img src=x onerror=...>`` would run in the reader's browser: the text is escaped here. It is
plain text, not markup, because a full run has one per test (21,600 for ten models) and every tag
and quote costs several characters once pytest-html has encoded it into its data blob. The same
economy drops the links column, which benchmark rows never fill.

The pytest-html hooks that put this text in place are in :mod:`snap_bench.plugin.reporting`.
"""

from __future__ import annotations

import html

from snap_bench.observations.observation import Observation
from snap_bench.report.formatting import ANSWER_CODES

# The report attributes that carry a benchmark test's observation and its question from the worker.
OBSERVATION_ATTRIBUTE = "snap_observation"
QUESTION_ATTRIBUTE = "snap_question"


def observation_log(observation: Observation, *, question: str | None = None) -> str:
    """The row's text: item, score (or code and reason), latency, replayed or live, what was asked, the answer.

    Returned HTML-escaped, ready for pytest-html's log area (which it sets as innerHTML). A valid
    answer with a ``question`` (the item's text as the instrument words it) shows only that: the
    condition id in the row names the system prompt, context and choice, whose texts the report's
    summary lists once, and observations.csv has every message in full. An unscored answer, or one
    without a ``question``, shows every message, where a reader needs the whole prompt.
    """
    item = f"{observation.item} ({observation.construct})" if observation.construct else observation.item
    facts = [f"item {item}"]
    if observation.code is None:
        keyed = "none" if observation.keyed_score is None else f"{observation.keyed_score:g}"
        facts.append(f"score {observation.score}, keyed {keyed}")
    else:
        label = ANSWER_CODES.get(observation.code, "unknown code")
        facts.append(f"code {observation.code} ({label}): {observation.reason or 'no reason'}")
    latency = "latency unknown" if observation.latency_s is None else f"{observation.latency_s:.3f} s"
    if observation.attempts > 1:
        latency += f" after {observation.attempts} attempts"
    facts += [latency, "replayed" if observation.replayed else "asked live"]
    lines = ["; ".join(facts)]
    if question is not None and observation.is_scored:
        lines.append(f"asked: {question}")
    else:
        lines += [
            f"{message.get('role', '?')}:\n{_indented(message.get('content', ''))}" for message in observation.messages
        ]
    answer = "(no answer)" if observation.raw_answer is None else observation.raw_answer
    lines.append(f"answer:\n{_indented(answer)}" if "\n" in answer else f"answer: {answer}")
    return html.escape("\n".join(lines), quote=True)


def _indented(content: object) -> str:
    # Indented, so that no line of a model's text starts with "E", which pytest-html paints as an error.
    return "\n".join(f"  {line}" for line in str(content).splitlines()) or "  (empty)"


def row_log(report: object, log: list[str]) -> None:
    """pytest-html's log of a benchmark row becomes the observation's text (see :func:`observation_log`).

    The log area is part of the row's expandable extras. Plain escaped text there costs a fraction of
    an HTML extra once pytest-html has JSON-encoded it and HTML-escaped it into its data attribute,
    which is what keeps a report of 21,600 rows under 20 MB; a failed row's own message is replaced
    too, since the text carries the code, the reason, the whole prompt and the raw answer.
    """
    values = getattr(report, OBSERVATION_ATTRIBUTE, None)
    if not isinstance(values, dict):
        return
    question = getattr(report, QUESTION_ATTRIBUTE, None)
    log[:] = [observation_log(Observation.from_dict(values), question=question if isinstance(question, str) else None)]


def drop_links_column(cells: list[str]) -> None:
    """Remove pytest-html's links column (header or row): benchmark rows have no links, and an empty
    cell in every one of 21,600 rows still costs their markup."""
    cells[:] = [cell for cell in cells if 'class="col-links"' not in cell and cell != "<th>Links</th>"]


def label_unscored(cells: list[str]) -> None:
    """An answer without a score reads "Unscored" in the result column, as the terminal counts it.

    pytest-html knows only pytest's outcomes, so the row still files under "Passed" in its filters;
    the label and the row's text (code and reason) say what it is.
    """
    cells[:] = [
        cell.replace('<td class="col-result">Passed</td>', '<td class="col-result">Unscored</td>') for cell in cells
    ]
