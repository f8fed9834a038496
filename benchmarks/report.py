"""Turning raw worker results into metrics, ratios and tables (plain text for stdout, Markdown for the docs)."""

from __future__ import annotations

import statistics
from typing import Any, TypedDict

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
    repetitions: dict[str, int]


def _median(values: list[Any]) -> float | None:
    numbers = [float(value) for value in values if isinstance(value, int | float)]
    return statistics.median(numbers) if numbers else None


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    if numerator is None or denominator is None or denominator == 0:
        return None
    return numerator / denominator


def derive(transport: TransportName, raw: Raw, jobs: list[Job]) -> dict[str, Row]:
    """The report rows of one transport: the median over repetitions per client, ratios, and the target verdict."""
    params = {job.name: job.params for job in jobs}
    rows: dict[str, Row] = {}
    for metric in metrics_for(transport):
        by_client = raw.get(metric.job, {})
        values = {
            client: _median([run.get(metric.field) for run in by_client.get(client, [])])
            for client in ("ours", "reference", "raw")
        }
        ours, reference, floor = values["ours"], values["reference"], values["raw"]
        row = Row(
            label=_label(metric, params.get(metric.job, {})),
            unit=metric.unit,
            ours=ours,
            reference=reference,
            floor=floor,
            ours_over_reference=_ratio(ours, reference),
            ours_over_floor=_ratio(ours, floor),
            target=None,
            target_ratio=None,
            met=None,
            repetitions={client: len(runs) for client, runs in by_client.items()},
        )
        if metric.target is not None:
            against = metric.target.against
            if against == "reference":
                ratio = row["ours_over_reference"]
            elif against == "floor":
                ratio = row["ours_over_floor"]
            else:
                assert metric.baseline is not None
                base = rows.get(metric.baseline)
                ratio = _ratio(ours, base["ours"] if base else None)
                against_label = base["label"] if base else metric.baseline
                row["target"] = f"<= {metric.target.limit:g}x ({against_label})"
            if row["target"] is None:
                row["target"] = metric.target.describe()
            row["target_ratio"] = ratio
            row["met"] = None if ratio is None else ratio <= metric.target.limit
        rows[metric.key] = row
    return rows


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
    if row["target"] is None:
        return ""
    if row["met"] is None:
        return f"{row['target']}: n/a"
    mark = "met" if row["met"] else "MISSED"
    return f"{row['target']}: {mark} ({row['target_ratio']:.2f}x)"


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
