"""Turning raw worker results into metrics, ratios and tables (plain text for stdout, Markdown for the docs)."""

from __future__ import annotations

import statistics
from typing import Any, Literal, TypedDict

from benchmarks.clients import ClientName, TransportName
from benchmarks.plan import Job, Metric, metrics_for

__all__ = ["Row", "derive", "markdown_table", "text_table"]

Raw = dict[str, dict[ClientName, list[dict[str, Any]]]]
"""Results of one transport: job name -> client -> one measurement per repetition."""


class Row(TypedDict):
    """One metric of one transport, as written to the JSON file."""

    label: str
    unit: str
    ours: float | None
    reference: float | None
    floor: float | None
    ours_over_reference: float | None
    ours_over_floor: float | None
    target: str | None
    target_ratio: float | None
    met: bool | None
    verdicts: list[str]
    """One "<target>: met|MISSED (<ratio>)" per target of the metric."""
    repetitions: dict[str, int]


def _median(values: list[Any]) -> float | None:
    numbers = [float(value) for value in values if isinstance(value, int | float)]
    return statistics.median(numbers) if numbers else None


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    if numerator is None or denominator is None or denominator == 0:
        return None
    return numerator / denominator


VARIANTS: tuple[tuple[str, ClientName, ClientName], ...] = (
    ("", "ours", "raw"),
    ("@httpx", "ours_httpx", "raw_httpx"),
)
"""Rows per metric: mcp_client and the floor on httpx2 (the targets), then, where measured, both on httpx 0.28."""
_VARIANT_LABEL = {"@httpx": " [httpx 0.28: a caller's client, bare httpx floor]"}


def derive(
    transport: TransportName | Literal["process"], raw: Raw, jobs: list[Job], metrics: list[Metric] | None = None
) -> dict[str, Row]:
    """The report rows of one transport (or of ``metrics``): the median over repetitions per client, ratios, and
    the target verdicts."""
    params = {job.name: job.params for job in jobs}
    rows: dict[str, Row] = {}
    if metrics is None:
        assert transport != "process"
        metrics = metrics_for(transport)
    for metric in metrics:
        by_client = raw.get(metric.job, {})

        reference = _median_of(by_client, "reference", metric.field)
        for suffix, ours_name, floor_name in VARIANTS:
            if suffix and ours_name not in metric.clients:
                continue
            # A floor only where the metric names one: a job may run the raw client for another of its rows.
            ours, floor = (
                _median_of(by_client, ours_name, metric.field),
                _median_of(by_client, floor_name, metric.field) if floor_name in metric.clients else None,
            )
            row = Row(
                label=_label(metric, params.get(metric.job, {})) + _VARIANT_LABEL.get(suffix, ""),
                unit=metric.unit,
                ours=ours,
                reference=reference,
                floor=floor,
                ours_over_reference=_ratio(ours, reference),
                ours_over_floor=_ratio(ours, floor),
                target=None,
                target_ratio=None,
                met=None,
                verdicts=[],
                repetitions={client: len(runs) for client, runs in by_client.items()},
            )
            if not suffix:
                _judge(row, metric, rows)
            rows[metric.key + suffix] = row
    return rows


def _median_of(by_client: dict[ClientName, list[dict[str, Any]]], client: ClientName, field: str) -> float | None:
    return _median([run.get(field) for run in by_client.get(client, [])])


def _judge(row: Row, metric: Metric, rows: dict[str, Row]) -> None:
    """Fill the row's target columns: every target of the metric, met only if all are."""
    verdicts: list[str] = []
    described: list[str] = []
    outcomes: list[bool | None] = []
    for target in metric.targets:
        if target.against == "reference":
            ratio, description = row["ours_over_reference"], target.describe()
        elif target.against == "floor":
            ratio, description = row["ours_over_floor"], target.describe()
        elif target.against == "absolute":
            ratio, description = row["ours"], target.describe(row["unit"])
        else:
            assert metric.baseline is not None
            base = rows.get(metric.baseline)
            ratio = _ratio(row["ours"], base["ours"] if base else None)
            description = (
                f"{'>=' if target.at_least else '<='} {target.limit:g}x ({base['label'] if base else metric.baseline})"
            )
        met = None if ratio is None else target.met_by(ratio)
        if row["target_ratio"] is None:
            row["target_ratio"] = ratio
        described.append(description)
        outcomes.append(met)
        if met is None:
            verdicts.append(f"{description}: n/a")
        else:
            shown = _number(ratio, row["unit"]) if target.against == "absolute" else f"{ratio:.2f}x"
            verdicts.append(f"{description}: {'met' if met else 'MISSED'} ({shown})")
    if described:
        row["target"] = "; ".join(described)
        row["met"] = None if None in outcomes else all(outcomes)
    row["verdicts"] = verdicts


def _label(metric: Metric, params: dict[str, Any]) -> str:
    try:
        return metric.label.format(**params)
    except (KeyError, ValueError):
        return metric.label


def _number(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "B":
        return f"{value:,.0f} B"
    if abs(value) >= 100:
        return f"{value:,.0f} {unit}"
    if abs(value) >= 10:
        return f"{value:.1f} {unit}"
    return f"{value:.2f} {unit}"


def _times(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def _verdict(row: Row) -> str:
    return "; ".join(row["verdicts"])


HEADER = ("metric", "ours", "reference", "floor", "ours/reference", "ours/floor", "target")


def _cells(results: dict[str, dict[str, Row]]) -> list[tuple[str, ...]]:
    lines: list[tuple[str, ...]] = []
    for transport, rows in results.items():
        for row in rows.values():
            lines.append(
                (
                    f"{transport}: {row['label']}",
                    _number(row["ours"], row["unit"]),
                    _number(row["reference"], row["unit"]),
                    _number(row["floor"], row["unit"]),
                    _times(row["ours_over_reference"]),
                    _times(row["ours_over_floor"]),
                    _verdict(row),
                )
            )
    return lines


def text_table(results: dict[str, dict[str, Row]]) -> str:
    """A fixed-width table of every transport's rows."""
    lines = [HEADER, *_cells(results)]
    widths = [max(len(line[column]) for line in lines) for column in range(len(HEADER))]
    rendered = []
    for index, line in enumerate(lines):
        cells = [
            cell.ljust(widths[0]) if column == 0 else cell.rjust(widths[column]) for column, cell in enumerate(line)
        ]
        rendered.append("  ".join(cells[:-1]) + "  " + line[-1])
        if index == 0:
            rendered.append("-" * (sum(widths) + 2 * (len(widths) - 1)))
    return "\n".join(rendered)


def markdown_table(results: dict[str, dict[str, Row]]) -> str:
    """The same table in Markdown."""
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "|".join([":---"] + ["---:"] * 5 + [":---"]) + "|"]
    for cells in _cells(results):
        lines.append("| " + " | ".join(cell or " " for cell in cells) + " |")
    return "\n".join(lines)
