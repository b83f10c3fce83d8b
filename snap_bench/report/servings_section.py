"""The serving factors in the report: does the model answer the same through another provider, or at another
reasoning effort?

Read off analysis.json's ``servings`` (snap_bench.judging.serving_levels, one study per base model, instrument and
factor): the first screen gets one line per study (the level that differs, the items it moved, the factor's
variance share, its checks), the summary a section with each pair's check, the items moved, the variance share per
temperature and the construct positions per level; the terminal the same lines as the first screen. A design
without servings shows nothing here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from snap_bench.report.formatting import number, text
from snap_bench.report.tables import mapping

# What each outcome of a pair's check is called, and its badge (the classes of the verdict badges).
OUTCOME_BADGES = {"pass": "pass", "fail": "fail", "undecided": "borderline", "not judged": "borderline"}


def studies_of(document: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [mapping(study) for study in document.get("servings") or [] if isinstance(study, Mapping)]


def study_line(study: Mapping[str, Any]) -> str:
    """One study in a sentence: the finding, the items moved, the factor's largest variance share, the checks."""
    head = f"{study.get('base')} · {study.get('instrument')} · {study.get('factor')}"
    if study.get("held"):
        head += f" (at {study.get('held')})"
    pairs = [mapping(pair) for pair in study.get("pairs") or []]
    moved = sorted({str(item) for pair in pairs for item in pair.get("moved_items") or []})
    parts = [str(study.get("finding", ""))]
    if moved:
        parts.append(f"items moved (FDR 5 %): {', '.join(moved)}")
    share = _largest_share(study)
    if share is not None:
        parts.append(f"{study.get('factor')}'s variance share {share[1]:.0%} at {share[0]}")
    outcomes = [str(mapping(pair.get("check")).get("outcome")) for pair in pairs]
    counted = ", ".join(
        f"{outcomes.count(o)} {o}" for o in ("fail", "undecided", "not judged", "pass") if o in outcomes
    )
    metric = f"{study.get('factor')}_flip_rate"
    parts.append(f"{metric}: {counted}")
    return f"{head}: {'; '.join(parts)}"


def _largest_share(study: Mapping[str, Any]) -> tuple[str, float] | None:
    shares = [
        (str(share.get("temperature")), value)
        for share in (mapping(s) for s in study.get("shares") or [])
        if (value := number(share.get("share"))) is not None
    ]
    return max(shares, key=lambda pair: pair[1]) if shares else None


def servings_headline(document: Mapping[str, Any]) -> str:
    """The first screen's lines on the serving factors ('' without servings)."""
    studies = studies_of(document)
    if not studies:
        return ""
    items = "".join(f"<li>{text(study_line(study))}</li>" for study in studies)
    return (
        '<div class="snap-servings-headline"><p><strong>Providers and reasoning efforts</strong> '
        f'(<a href="#snap-servings">each pair of levels</a>):</p><ul>{items}</ul></div>'
    )


def servings_section(document: Mapping[str, Any]) -> str:
    """The summary's section on the serving factors ('' without servings)."""
    studies = studies_of(document)
    if not studies:
        return ""
    parts = [
        '<h3 id="snap-servings">Providers and reasoning efforts: does the model answer the same?</h3>',
        "<p>Each level (a provider pinned, a reasoning effort asked) was asked as a serving of its own, under every "
        "other factor of the design. A pair of levels passes when its excess flip rate (answers that differ between "
        "the levels, beyond those that differ when one level is asked again) is shown within the threshold, no item "
        "moved beyond the run noise (exact within-cell test, false discovery rate 5 %) and no construct's position "
        "moved past its drift margin; it fails when any of these is shown past its bound; anything else is undecided "
        "(never a pass).</p>",
    ]
    for study in studies:
        parts.append(_study_html(study))
    return "".join(parts)


def _study_html(study: Mapping[str, Any]) -> str:
    title = f"{study.get('base')} · {study.get('instrument')} · {study.get('factor')}"
    if study.get("held"):
        title += f" at {study.get('held')}"
    pairs = [mapping(pair) for pair in study.get("pairs") or []]
    return (
        f'<h4 class="snap-serving-title">{text(title)}</h4><p>{text(study.get("finding", ""))}.</p>'
        f"{_pairs_table(study, pairs)}{_shares_table(study)}{_positions_table(study)}{_items_table(study)}"
    )


def _pairs_table(study: Mapping[str, Any], pairs: Sequence[Mapping[str, Any]]) -> str:
    rows = []
    for pair in pairs:
        check = mapping(pair.get("check"))
        flips = mapping(check.get("flips"))
        outcome = str(check.get("outcome", ""))
        badge = OUTCOME_BADGES.get(outcome, "borderline")
        low, high, value = number(flips.get("ci_low")), number(flips.get("ci_high")), _judged(flips)
        interval = "—" if low is None or high is None else f"[{low:+.3f}, {high:+.3f}]"
        figure = "—" if value is None else f"{value:+.3f}"
        threshold = number(check.get("threshold"))
        moved = ", ".join(str(item) for item in pair.get("moved_items") or []) or "none"
        rows.append(
            f'<tr><th scope="row">{text(check.get("level_a"))} vs {text(check.get("level_b"))}</th>'
            f'<td class="snap-num">{figure}</td><td class="snap-num">{interval}</td>'
            f'<td class="snap-num">{"—" if threshold is None else f"{threshold:g}"}</td><td>{text(moved)}</td>'
            f'<td><span class="snap-badge snap-{badge}">{text(outcome)}</span></td>'
            f"<td>{text(check.get('message', ''))}</td></tr>"
        )
    return (
        f'<table class="snap-table snap-serving-pairs"><caption>Each pair of {text(study.get("factor"))} levels: '
        "the excess flip rate (or, with one run, the between-level rate that bounds it) with its 95 % interval, the "
        "threshold, the items moved, and the check.</caption><thead><tr><th>levels</th><th>flip rate</th>"
        "<th>95 % interval</th><th>threshold</th><th>items moved</th><th>check</th><th>why</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _judged(flips: Mapping[str, Any]) -> float | None:
    return number(flips.get("excess") if flips.get("bounded") == "excess" else flips.get("between"))


def _shares_table(study: Mapping[str, Any]) -> str:
    shares = [mapping(s) for s in study.get("shares") or []]
    if not shares:
        return ""
    rows = "".join(
        f'<tr><th scope="row">{text(s.get("temperature"))}</th><td class="snap-num">'
        f"{'—' if (v := number(s.get('share'))) is None else f'{v:.1%}'}</td>"
        f'<td class="snap-num">{_variance(s.get("factor_variance"))}</td>'
        f'<td class="snap-num">{_variance(s.get("interaction_variance"))}</td>'
        f'<td class="snap-num">{_variance(s.get("total_variance"))}</td><td>{text(s.get("note", ""))}</td></tr>'
        for s in shares
    )
    return (
        f'<table class="snap-table snap-serving-shares"><caption>The {text(study.get("factor"))} factor\'s share of '
        "the answers' variance per temperature (G study by REML: its main effect plus its interaction with the item, "
        "over every component).</caption><thead><tr><th>temperature</th><th>share</th><th>factor</th>"
        f"<th>item x factor</th><th>total</th><th>note</th></tr></thead><tbody>{rows}</tbody></table>"
    )


def _variance(value: object) -> str:
    figure = number(value)
    return "—" if figure is None else f"{figure:.3f}"


def _positions_table(study: Mapping[str, Any]) -> str:
    positions = [mapping(p) for p in study.get("positions") or []]
    if not positions:
        return ""
    levels = [str(level) for level in study.get("levels") or []]
    constructs = sorted({str(p.get("construct")) for p in positions})
    means = {(str(p.get("level")), str(p.get("construct"))): number(p.get("mean")) for p in positions}
    shifts = _shift_intervals(study)
    cells = []
    for construct in constructs:
        row = [f'<th scope="row">{text(construct)}</th>']
        for level in levels:
            mean = means.get((level, construct))
            shown = "—" if mean is None else f"{mean:.2f}"
            interval = shifts.get((level, construct))
            if interval is not None:
                shown += f" ({interval})"
            row.append(f'<td class="snap-num">{text(shown)}</td>')
        cells.append(f"<tr>{''.join(row)}</tr>")
    head = "".join(f"<th>{text(level)}</th>" for level in levels)
    return (
        '<table class="snap-table snap-serving-positions"><caption>Each construct\'s mean keyed answer per level; in '
        f"brackets, its shift from {text(levels[0] if levels else '')} with the 90 % interval and what drift "
        f"says of it.</caption><thead><tr><th>construct</th>{head}</tr></thead><tbody>{''.join(cells)}</tbody></table>"
    )


def _shift_intervals(study: Mapping[str, Any]) -> dict[tuple[str, str], str]:
    """(level, construct) -> its shift from the first level, with the interval and outcome."""
    levels = [str(level) for level in study.get("levels") or []]
    found: dict[tuple[str, str], str] = {}
    for pair in (mapping(p) for p in study.get("pairs") or []):
        first, second = [*(pair.get("levels") or []), "", ""][:2]
        if not levels or first != levels[0]:
            continue
        for shift in (mapping(s) for s in pair.get("shifts") or []):
            low, high = number(shift.get("ci_low")), number(shift.get("ci_high"))
            difference = number(shift.get("difference"))
            if difference is None:
                continue
            interval = "" if low is None or high is None else f" [{low:+.2f}, {high:+.2f}]"
            found[(str(second), str(shift.get("construct")))] = f"{difference:+.2f}{interval}, {shift.get('outcome')}"
    return found


def _items_table(study: Mapping[str, Any]) -> str:
    items = [mapping(i) for i in study.get("items") or []]
    if not items:
        return ""
    moved = {str(item) for pair in study.get("pairs") or [] for item in mapping(pair).get("moved_items") or []}
    rows = "".join(
        f'<tr{" class=snap-moved" if str(i.get("item")) in moved else ""}><th scope="row">{text(i.get("item"))}</th>'
        f'<td class="snap-num">{_share(i.get("agreement"))}</td><td class="snap-num">{_share(i.get("flip_rate"))}</td>'
        f'<td class="snap-num">{text(i.get("conditions"))}</td><td>{"moved" if str(i.get("item")) in moved else ""}'
        "</td></tr>"
        for i in items
    )
    return (
        '<details class="snap-serving-items"><summary>Per item: agreement and flip rate across the levels</summary>'
        '<table class="snap-table"><caption>Of the conditions every level scored, the share all answered alike; of '
        "each pair's, the share answered differently (run noise included).</caption><thead><tr><th>item</th>"
        "<th>agreement</th><th>flip rate</th><th>conditions</th><th>moved (FDR 5 %)</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></details>"
    )


def _share(value: object) -> str:
    figure = number(value)
    return "—" if figure is None else f"{figure:.0%}"


def serving_terminal_lines(document: Mapping[str, Any]) -> list[str]:
    """The terminal's lines on the serving factors: a head line, then one line per study ([] without servings)."""
    studies = studies_of(document)
    if not studies:
        return []
    return [
        "providers and reasoning efforts (every pair of levels: the report's section and table of checks):",
        *(f"  {study_line(study)}" for study in studies),
    ]
