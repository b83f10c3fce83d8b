"""What the report shows before any scrolling: every model's verdict per instrument and the reason, and one chart.

The matrix (models x instruments) gives each verdict, its composite and the one check that decided it; the
chart shows what most often separates a stable model from an unstable one here: whether its runs agree
at each temperature. Both are built from what the session judged (the check records) and observed.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from snap_bench.analysis.coverage import THIN_COVERAGE
from snap_bench.analysis.metric_specs import MetricCatalogue
from snap_bench.judging.checks import DECISIONS, CheckRecord
from snap_bench.observations.observation import Observation
from snap_bench.report.formatting import metric_label, number, text
from snap_bench.report.palette import model_colour
from snap_bench.report.servings_section import servings_headline
from snap_bench.report.tables import mapping, verdict_badge

# Above this many models the matrix's reasons show one line each, so that its rows fit the first screen.
MANY_MODELS = 6


def report_title(models: Sequence[str], when: dt.date) -> str:
    """The page's title: the product, the models and the date."""
    return f"snap-bench consistency report: {', '.join(models) or 'no models'} · {when.isoformat()}"


def deciding_check(verdict: str, checks: Sequence[CheckRecord]) -> CheckRecord | None:
    """The one check that decided the verdict.

    FAIL: the failed check furthest short of its minimum relative to the minimum's size, except that an
    unscored rate over its maximum comes first (the other figures rest on the answers that were left).
    BORDERLINE: of the checks short of their target, the one closest to its minimum. PASS: none.
    """
    failed = [c for c in checks if c.decision in ("fail", "ungated") and c.kind == "threshold"]
    if verdict == "FAIL" and failed:
        unscored = [c for c in failed if c.metric == "unscored_rate"]
        if unscored:
            return unscored[0]
        return min(failed, key=lambda c: (c.margin or 0.0) / max(abs(_minimum(c)), 1e-9))
    judged = [c for c in checks if c.margin is not None and c.kind == "threshold" and c.status == "acceptable"]
    if verdict == "BORDERLINE" and judged:
        return min(judged, key=lambda c: (c.margin or 0.0) / max(abs(_minimum(c)), 1e-9))
    return None


def _minimum(check: CheckRecord) -> float:
    """The minimum (or maximum) the margin is measured from: the value minus (or plus) the margin."""
    if check.value is None or check.margin is None:
        return 1.0
    return check.value - check.margin if "minimum" in check.threshold else check.value + check.margin


def reason_text(verdict: str, check: CheckRecord | None, catalogue: MetricCatalogue) -> str:
    if check is None:
        return "every judged figure reaches its target" if verdict == "PASS" else "nothing could be judged"
    value = "undefined" if check.value is None else f"{check.value:.3f}"
    interval = "" if check.ci_low is None or check.ci_high is None else f" [{check.ci_low:.2f}, {check.ci_high:.2f}]"
    rule = check.threshold if check.status == "acceptable" else check.threshold.split(",")[0]
    used = f"; on {check.n:,} of {check.n_designed:,}" if check.n_designed and check.n < check.n_designed else ""
    return f"{metric_label(check.metric, catalogue)} {value}{interval} ({rule}){used}"


def verdict_matrix(document: Mapping[str, Any], checks: Sequence[CheckRecord], catalogue: MetricCatalogue) -> str:
    """Models as rows, instruments as columns: verdict, composite and the deciding reason in each cell."""
    entries: dict[str, dict[str, Mapping[str, Any]]] = {}
    titles: dict[str, str] = {}
    for instrument, section in mapping(document.get("instruments")).items():
        titles[str(instrument)] = str(mapping(section).get("title") or instrument)
        for model, entry in mapping(mapping(section).get("models")).items():
            entries.setdefault(str(instrument), {})[str(model)] = mapping(entry)
    instruments = list(entries)
    models = sorted({model for per_model in entries.values() for model in per_model})
    if not models:
        return "<p>No model was judged in this session.</p>"
    by_key: dict[tuple[str, str], list[CheckRecord]] = defaultdict(list)
    for check in checks:
        by_key[(check.model, check.instrument)].append(check)
    header = "".join(f'<th title="{text(titles[name])}">{text(name)}</th>' for name in instruments)
    rows = []
    for model in models:
        cells = []
        for instrument in instruments:
            entry = entries[instrument].get(model)
            if entry is None:
                cells.append("<td>not run</td>")
                continue
            verdict = str(entry.get("verdict") or "")
            composite = number(entry.get("composite"))
            figure = "" if composite is None else f"{composite:.2f}"
            interval = entry.get("composite_ci")
            if composite is not None and isinstance(interval, list) and len(interval) == 2:
                low, high = number(interval[0]), number(interval[1])
                if low is not None and high is not None:
                    figure += f" [{low:.2f}, {high:.2f}]"
            if entry.get("tied_with"):
                figure += " (tied)"
            reason = text(reason_text(verdict, deciding_check(verdict, by_key[(model, instrument)]), catalogue))
            # The figure stays on one line (beside the badge, or below it where it does not fit); the reason
            # wraps within the cell and shows two lines, the whole of it on hovering (and in the checks' table).
            shown = f' <span class="snap-num" title="composite {figure}">{figure}</span>' if figure else ""
            cells.append(
                f'<td class="snap-matrix-cell">{verdict_badge(entry)}{shown}'
                f'<small class="snap-matrix-reason" title="{reason}">{reason}</small></td>'
            )
        swatch = f'<span class="snap-model-dot" style="background:{model_colour(model)}"></span>'
        rows.append(f'<tr><th scope="row">{swatch}{text(model)}</th>{"".join(cells)}</tr>')
    # Over six models, each reason shows one line (ten rows then fit the first screen beside the chart).
    many = " snap-matrix-many" if len(models) > MANY_MODELS else ""
    return (
        f'<table class="snap-table snap-matrix{many}" id="snap-matrix">'
        "<caption>Verdict, composite (0-1, higher is better) with its interval, and the check that decided it"
        "<small title=\"Each judged figure's interval is mapped the same way as the composite; models whose "
        'intervals overlap are tied."> (overlapping intervals: tied)</small>'
        f"</caption><thead><tr><th>model</th>{header}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


@dataclass(frozen=True)
class AgreementPoint:
    """At one temperature, the share of a model's cells whose runs all gave the same score."""

    model: str
    instrument: str
    temperature: float
    agree: float | None
    ci_low: float | None
    ci_high: float | None
    used: int  # cells with at least two runs, every one scored
    designed: int  # cells of the design at this temperature

    @property
    def thin(self) -> bool:
        return self.designed == 0 or self.used / self.designed < THIN_COVERAGE


def temperature_agreement(observations: Sequence[Observation]) -> list[AgreementPoint]:
    """Run-to-run agreement per model, instrument and temperature, with Wilson intervals over cells.

    Only cells with two or more runs count; a cell with an unscored run is not used (and shows as the gap
    between ``used`` and ``designed``), since a refusal agreeing with a refusal is no stable answer.
    """
    from snap_bench.analysis.metric_tables import proportion  # scipy: the controller only

    cells: dict[tuple[str, str, float, str], list[Observation]] = defaultdict(list)
    for o in observations:
        # Drawn against the temperature sent: a model asked at its provider's default has no point here.
        if "temperature" in o.factors and o.temperature is not None:
            cells[(o.model, o.instrument, o.temperature, o.cell)].append(o)
    counts: dict[tuple[str, str, float], list[int]] = defaultdict(lambda: [0, 0, 0])
    for (model, instrument, temperature, _), runs in cells.items():
        if len(runs) < 2:
            continue
        tally = counts[(model, instrument, temperature)]
        tally[2] += 1
        if all(o.code is None for o in runs):
            tally[1] += 1
            tally[0] += len({o.score for o in runs}) == 1
    points = []
    for (model, instrument, temperature), (agree, used, designed) in sorted(counts.items()):
        share = proportion(agree, used, 0.95)
        points.append(
            AgreementPoint(model, instrument, temperature, share.value, share.ci_low, share.ci_high, used, designed)
        )
    return points


def agreement_chart(points: Sequence[AgreementPoint]) -> str:
    """One panel per instrument: agreement against temperature, a line per model with 95% intervals.

    Hand-drawn SVG (a few KB, no matplotlib on the first screen); a point on less than half of its
    design is hollow, grey-hatched and labelled with its coverage.
    """
    instruments = sorted({p.instrument for p in points})
    if not instruments:
        return "<p>No instrument varied the temperature with repeated runs: no stability chart.</p>"
    width, height, left, top, bottom = 270, 250, 52, 26, 40
    plot_w, plot_h = width - left - 14, height - top - bottom
    # Side by side up to two; more instruments wrap into rows of two, so that the chart keeps a legible size
    # beside the matrix on the first screen (ten models x four instruments at 1440x900).
    across = min(len(instruments), 2)
    panels = []
    for index, instrument in enumerate(instruments):
        own = [p for p in points if p.instrument == instrument]
        temperatures = sorted({p.temperature for p in own})
        low_t, high_t = temperatures[0], temperatures[-1]

        def x(t: float, low: float = low_t, high: float = high_t) -> float:
            return left + (0.5 if high == low else (t - low) / (high - low)) * plot_w

        def y(v: float) -> float:
            return top + (1 - v) * plot_h

        parts = [
            f'<g transform="translate({index % across * width},{index // across * height})">',
            f'<text x="{left}" y="14" font-size="12" font-weight="600">{text(instrument)}</text>',
        ]
        for tick in (0, 0.25, 0.5, 0.75, 1):
            parts.append(
                f'<line x1="{left}" x2="{left + plot_w}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" stroke="#eaeef2"/>'
                f'<text x="{left - 4}" y="{y(tick) + 3:.1f}" font-size="9" text-anchor="end">{tick:g}</text>'
            )
        for t in temperatures:
            parts.append(
                f'<text x="{x(t):.1f}" y="{top + plot_h + 14}" font-size="9" text-anchor="middle">{t:g}</text>'
            )
        parts.append(
            f'<text x="{left + plot_w / 2}" y="{height - 8}" font-size="10" text-anchor="middle">temperature</text>'
        )
        for model in sorted({p.model for p in own}):
            series = sorted((p for p in own if p.model == model), key=lambda p: p.temperature)
            colour = model_colour(model)
            drawn = [p for p in series if p.agree is not None]
            path = " ".join(f"{x(p.temperature):.1f},{y(p.agree or 0):.1f}" for p in drawn)
            if len(drawn) > 1:
                parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="1.6"/>')
            for p in drawn:
                cx, cy = x(p.temperature), y(p.agree or 0)
                interval = None if p.ci_low is None or p.ci_high is None else (y(p.ci_low), y(p.ci_high))
                parts.append(_point_mark(p, colour, cx, cy, interval))
        parts.append(
            f'<text transform="translate(11,{top + plot_h / 2}) rotate(-90)" font-size="10" text-anchor="middle">'
            "cells whose runs agree</text></g>"
        )
        panels.append("".join(parts))
    legend = " ".join(
        f'<span><span class="snap-model-dot" style="background:{model_colour(m)}"></span>{text(m)}</span>'
        for m in sorted({p.model for p in points})
    )
    hatch = (
        '<defs><pattern id="snap-hatch" width="4" height="4" patternUnits="userSpaceOnUse" '
        'patternTransform="rotate(45)"><rect width="4" height="4" fill="#eaeef2"/>'
        '<line x1="0" y1="0" x2="0" y2="4" stroke="#8c959f" stroke-width="1.5"/></pattern></defs>'
    )
    total, tall = width * across, height * -(-len(instruments) // across)
    return (
        '<figure class="snap-chart" id="snap-headline">'
        f'<svg id="snap-headline-chart" xmlns="http://www.w3.org/2000/svg" width="{total}" '
        f'height="{tall}" viewBox="0 0 {total} {tall}" role="img" '
        'aria-label="run-to-run agreement per temperature">'
        f"{hatch}{''.join(panels)}</svg><figcaption>{legend}<br>Stability against temperature: the share of cells "
        "(item x paraphrase x prompt [x context or choice]) whose runs all gave the same score, with its 95% Wilson "
        "interval. Cells with an unscored run are not used; a hollow hatched point rests on under half of its "
        "design (used/designed beside it).</figcaption></figure>"
    )


def _point_mark(p: AgreementPoint, colour: str, cx: float, cy: float, interval: tuple[float, float] | None) -> str:
    """One model's point at one temperature: its interval, and a full dot, or a hollow hatched one with its
    coverage when it rests on under half of its design."""
    mark = ""
    if interval is not None:
        mark += (
            f'<line x1="{cx:.1f}" x2="{cx:.1f}" y1="{interval[0]:.1f}" y2="{interval[1]:.1f}" '
            f'stroke="{colour}" stroke-width="1.2"/>'
        )
    title = (
        f"{p.model}, {p.instrument}, temperature {p.temperature:g}: "
        f"{p.agree:.2f} [{p.ci_low or 0:.2f}, {p.ci_high or 0:.2f}] on {p.used} of {p.designed} cells"
    )
    if p.thin:
        return mark + (
            f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="5" fill="url(#snap-hatch)" stroke="#8c959f" '
            f'class="snap-thin-point"><title>{text(title)} (under half the design)</title></circle>'
            f'<text x="{cx + 7:.1f}" y="{cy + 3:.1f}" font-size="8" fill="#6e7781">'
            f"{p.used}/{p.designed}</text>"
        )
    return mark + f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="4" fill="{colour}"><title>{text(title)}</title></circle>'


STYLE = """<style>
.snap-first{display:flex;flex-wrap:wrap;gap:8px 24px;align-items:flex-start}
.snap-first>.snap-matrix{flex:0 1 auto;margin:0}
.snap-matrix th,.snap-matrix td{overflow-wrap:anywhere}
.snap-matrix th[scope=row]{max-width:200px;font-size:12px}
.snap-matrix td.snap-matrix-cell{width:185px;max-width:185px;padding:3px 6px}
.snap-matrix .snap-badge{font-size:11px;padding:1px 7px}
.snap-matrix .snap-num{display:inline-block;font-size:12px}
.snap-matrix small.snap-matrix-reason{display:-webkit-box;-webkit-box-orient:vertical;-webkit-line-clamp:2;
line-clamp:2;overflow:hidden;font-size:11px;line-height:1.25;color:#57606a}
.snap-matrix-many small.snap-matrix-reason{-webkit-line-clamp:1;line-clamp:1}
.snap-matrix caption small{font-weight:400;color:#57606a}
.snap-model-dot{display:inline-block;width:10px;height:10px;border-radius:50%;margin-right:5px}
#snap-headline{flex:1 1 380px;max-width:560px;margin:0}
#snap-headline figcaption{font-size:11px}#snap-headline figcaption>span{margin-right:10px;white-space:nowrap}
.summary .filters span.unscored{color:#9a6700}
.snap-exit{font-size:14px;margin:.2em 0 .5em}.snap-exit .snap-badge{margin-right:6px}
#snap-checks tr.snap-check-fail td{background:#fff0ef}#snap-checks tr.snap-check-ungated td{background:#fff8e5}
#snap-checks tr.snap-check-not-compared td{background:#e8e8e8;color:#555}
.snap-thin{background:repeating-linear-gradient(45deg,#f0f0f0 0 4px,#dcdcdc 4px 8px)!important;color:#555!important}
body{display:flex;flex-direction:column}
#environment-header,#environment{order:1}
footer{order:2}
</style>"""


@dataclass(frozen=True)
class ExitLine:
    """What the session's exit status said and why (snap_bench.judging.exit_status.ExitDecision), and what it
    follows (``--snap-gate`` in words): the first line of the report, as it is the last line of the terminal."""

    code: int
    reason: str
    follows: str = ""

    def html(self) -> str:
        # The colour follows the status, not a verdict: a red FAIL badge in the matrix may sit outside the gate.
        badge = EXIT_BADGES.get(self.code, "none")
        rule = f" (the exit status follows {self.follows}; --snap-gate)" if self.follows else ""
        return (
            f'<p class="snap-exit" id="snap-exit"><span class="snap-badge snap-badge-{badge}">exit status '
            f"{self.code}</span> {text(self.reason)}{text(rule)}</p>"
        )


# 0 passed, 1 a gated check failed, 6 not measured or the gate incomplete, 7 undecided (never a pass, not a
# shown change); pytest's own statuses are grey.
EXIT_BADGES = {0: "pass", 1: "fail", 6: "incomplete", 7: "incomplete"}


def checks_line(checks: Sequence[CheckRecord]) -> str:
    """The counts of the checks by what was decided, those that failed outside the gate apart."""
    counts = {decision: sum(c.decision == decision for c in checks) for decision in DECISIONS}
    parts = [f"{counts['fail']} failed"]
    if counts["ungated"]:
        parts.append(f"{counts['ungated']} failed outside the gate (ungated)")
    if counts["undecided"]:
        parts.append(f"{counts['undecided']} undecided (never a pass)")
    not_computed = counts["not judged"] + counts["not compared"]
    if not_computed:
        parts.append(f"{not_computed} not computed")
    return f"{len(checks)} checks: {', '.join(parts)}"


def first_screen(
    document: Mapping[str, Any],
    observations: Sequence[Observation],
    checks: Sequence[CheckRecord],
    catalogue: MetricCatalogue,
    exit_line: ExitLine | None = None,
) -> str:
    """What the exit status said and why, the matrix and the headline chart side by side, and a line with the
    counts of the checks."""
    line = (
        f'<p>{text(checks_line(checks))}: <a href="#snap-checks">the table of checks</a> · '
        '<a href="#snap-conditions-title">every condition</a> · <a href="#snap-glossary">what the metrics mean</a></p>'
        if checks
        else ""
    )
    chart = agreement_chart(temperature_agreement(observations))
    status = exit_line.html() if exit_line is not None else ""
    servings = servings_headline(document)
    matrix = verdict_matrix(document, checks, catalogue)
    return f'{STYLE}{status}<div class="snap-first">{matrix}{chart}</div>{servings}{line}'
