"""The extra of one benchmark test's row in the HTML report: what was asked, what came back, how it scored.

pytest-html inserts a row's extras with ``insertAdjacentHTML``, so an unescaped answer such as
``<img src=x onerror=...>`` would run in the reader's browser: every field is escaped here. The
markup is kept small because a full run has one such extra per test (21,600 for ten models): the
styles live once in the summary's style sheet (class ``snap-observation``), and without the summary
the extra still reads as a line of facts and preformatted text.
"""

from __future__ import annotations

from snap_bench.observation import Observation
from snap_bench.report.formatting import ANSWER_CODES, text


def observation_html(observation: Observation, *, with_messages: bool = True) -> str:
    """The condition's messages, the raw answer, the scores, the code and reason, the latency, replayed or live.

    ``with_messages=False`` shows only the last message (the question itself) and leaves out the
    system prompt and any context before it (the bulk of the extra; the condition id names them, and
    observations.csv has them in full), e.g. for the rows of valid answers in a very large run.
    """
    if observation.code is None:
        outcome = "scored"
    else:
        outcome = f"{observation.code} ({ANSWER_CODES.get(observation.code, 'unknown code')})"
    latency = "unknown" if observation.latency_s is None else f"{observation.latency_s:.3f} s"
    if observation.attempts > 1:
        latency += f" after {observation.attempts} attempts"
    # The row's test id already names the model and the condition; a line of facts instead of a table
    # keeps the extra small once pytest-html has JSON- and HTML-escaped it into its data blob.
    facts = (
        ("item", f"{observation.item} ({observation.construct})" if observation.construct else observation.item),
        ("score", "none" if observation.score is None else observation.score),
        ("keyed", "none" if observation.keyed_score is None else f"{observation.keyed_score:g}"),
        ("code", outcome),
        ("reason", observation.reason or "none"),
        ("latency", latency),
        ("replayed", "yes" if observation.replayed else "no, asked live"),
    )
    # ASCII only: pytest-html's JSON blob spells every other character as a six-character escape
    line = "; ".join(f"<b>{label}</b> {text(value)}" for label, value in facts)
    parts = [f'<div class="snap-observation"><p>{line}</p>']
    shown = observation.messages if with_messages else observation.messages[-1:]
    parts += [
        f"<b>{text(message.get('role', '?'))}</b><pre>{text(message.get('content', ''))}</pre>" for message in shown
    ]
    answer = "(no answer)" if observation.raw_answer is None else observation.raw_answer
    parts.append(f"<b>answer</b><pre>{text(answer)}</pre></div>")
    return "".join(parts)
