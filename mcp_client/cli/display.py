"""What the CLI shows: rich progress lines for calls, errors, tool results, tool tables and plain JSON.

Every string that came from a server is shown through :mod:`mcp_client.cli.safe_text`: as text, never as rich
markup, with its control characters made visible. rich is imported inside the functions, so the CLI can say it is
missing instead of failing at import.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import mcp_types

from mcp_client import (
    ConnectError,
    MCPClientError,
    Progress,
    TransportError,
)
from mcp_client.cli.interrupts import EventLog
from mcp_client.cli.safe_text import json_text, plain, visible

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress as RichProgress, TaskID
    from rich.table import Table


__all__ = [
    "ProgressView",
    "describe",
    "dump_json",
    "new_progress",
    "print_error",
    "print_result",
    "progress_line",
    "tool_hints",
    "tools_table",
]


def new_progress(console: Console, *, transient: bool) -> RichProgress:
    """A rich progress display: spinner, description, bar, details (done/total, rate, ETA, message), time."""
    from rich.progress import BarColumn, Progress as RichProgress, SpinnerColumn, Task, TextColumn, TimeElapsedColumn
    from rich.progress_bar import ProgressBar
    from rich.text import Text

    class Spinner(SpinnerColumn):
        """A spinner while the call runs; the task's ``mark`` field once it ended."""

        def render(self, task: Task) -> Text:
            if task.stop_time is not None:
                return Text.from_markup(str(task.fields.get("mark", "-")))
            rendered = super().render(task)
            return rendered if isinstance(rendered, Text) else Text(" ")

    class Bar(BarColumn):
        """The bar, red once its call failed (however far it got)."""

        def render(self, task: Task) -> ProgressBar:
            bar = super().render(task)
            if task.fields.get("failed"):
                bar.complete_style = bar.finished_style = "red"
            return bar

    return RichProgress(
        Spinner(),
        TextColumn("{task.description}", markup=False),
        Bar(bar_width=30),
        TextColumn("{task.fields[detail]}", markup=False),
        TimeElapsedColumn(),
        console=console,
        transient=transient,
    )


class ProgressView:
    """One call's line in a rich progress display, fed with the call's :class:`~mcp_client.Progress` updates."""

    def __init__(self, progress: RichProgress, description: str) -> None:
        self._progress = progress
        self._task: TaskID = progress.add_task(visible(description), total=None, detail="waiting for progress")
        self._started = time.monotonic()
        self.updates = 0
        self.last: Progress | None = None

    def update(self, update: Progress) -> None:
        self.updates += 1
        self.last = update
        self._progress.update(
            self._task,
            completed=update.progress,
            total=update.total,
            detail=describe(update, time.monotonic() - self._started),
        )

    def finish(self, description: str, *, ok: bool) -> None:
        """Stop the spinner and show how the call ended: a full green bar for a success; for a failure, a red
        bar as far as the progress got (empty when the total was unknown: nothing says how far it was)."""
        total = self.last.total if self.last is not None else None
        completed = self.last.progress if self.last is not None else 0
        changes: dict[str, Any] = {"mark": "[green]✔[/]" if ok else "[red]✘[/]", "failed": not ok}
        if self.last is None:
            changes["detail"] = "no progress received"
        if ok:
            changes.update(total=total or completed or 1, completed=total or completed or 1)
        elif total:
            changes.update(total=total, completed=min(completed, total))
        else:
            changes.update(total=1, completed=0)
        self._progress.update(self._task, description=visible(description), **changes)
        self._progress.stop_task(self._task)


def describe(update: Progress, elapsed: float) -> str:
    """``3/8 2.1/s ETA 2s indexed 3/8``, or just the message (or value) when the total is unknown."""
    message = visible(update.message or "")
    if update.total is None or update.total <= 0:
        return message or f"{update.progress:g}"
    parts = [f"{update.progress:g}/{update.total:g}"]
    if elapsed > 0 and update.progress > 0:
        rate = update.progress / elapsed
        parts.append(f"{rate:.1f}/s")
        parts.append(f"ETA {max(0.0, update.total - update.progress) / rate:.0f}s")
    if message:
        parts.append(message)
    return "  ".join(parts)


@contextlib.contextmanager
def progress_line(console: Console, description: str, *, transient: bool) -> Iterator[ProgressView]:
    """A progress display with one line, shown while the block runs."""
    with new_progress(console, transient=transient) as progress:
        yield ProgressView(progress, description)


# -- printing ------------------------------------------------------------------------------------------------


def print_error(console: Console, error: BaseException, log: EventLog | None = None) -> None:
    """An error the way a person wants to read it: kind, message, then the call's context."""
    from rich.text import Text

    console.print(Text.assemble((type(error).__name__, "bold red"), ": ", plain(str(error))), highlight=False)
    if isinstance(error, MCPClientError):
        context = []
        if error.method:
            context.append(f"method {error.method}")
        if error.request_ids:
            context.append("request id " + ", ".join(str(request_id) for request_id in error.request_ids))
        if error.elapsed is not None:
            context.append(f"after {error.elapsed:.2f} s")
        if error.last_progress is not None:
            context.append(f"last progress {error.last_progress:g}")
        if context:
            console.print("  " + ", ".join(context), style="dim", highlight=False)
    if log is not None and log.not_json and isinstance(error, ConnectError | TransportError):
        lines = "line" if log.not_json_count == 1 else "lines"
        console.print(
            f"  hint: the server wrote {log.not_json_count} {lines} to stdout that {'is' if lines == 'line' else 'are'}"
            " not JSON-RPC, such as:",
            style="yellow",
            highlight=False,
        )
        for line in log.not_json:
            console.print(plain("  | " + line), style="yellow", highlight=False)
        console.print(
            "  an MCP server over stdio may write only JSON-RPC messages to stdout (logs belong on stderr); "
            "a server that serves HTTP is reached with --url",
            style="yellow",
            highlight=False,
        )
    if log is not None and log.stderr and isinstance(error, ConnectError | TransportError):
        console.print("  the server's last stderr lines:", style="dim")
        for line in log.stderr:
            console.print(plain("  | " + line), style="dim", highlight=False)


def print_result(console: Console, result: mcp_types.CallToolResult) -> None:
    """Text blocks as text; other blocks summarised; structured content as JSON, unless a text block has it already.

    ``console.out`` parses no markup; :func:`visible` defuses the escapes."""
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            console.out(visible(block.text), highlight=False)
        elif isinstance(block, mcp_types.ImageContent | mcp_types.AudioContent):
            size = len(block.data) * 3 // 4
            console.out(visible(f"[{block.type}: {block.mime_type}, {size} bytes]"), highlight=False)
        elif isinstance(block, mcp_types.ResourceLink):
            mime = f" ({block.mime_type})" if block.mime_type else ""
            console.out(visible(f"[resource link: {block.uri}{mime}]"), highlight=False)
        else:
            resource = block.resource
            mime = f" ({resource.mime_type})" if resource.mime_type else ""
            console.out(visible(f"[resource: {resource.uri}{mime}]"), highlight=False)
            if isinstance(resource, mcp_types.TextResourceContents):
                console.out(visible(resource.text), highlight=False)
    if result.structured_content is not None and not _text_repeats(result):
        console.out(visible(json.dumps(result.structured_content, indent=2, ensure_ascii=False)), highlight=False)


def _text_repeats(result: mcp_types.CallToolResult) -> bool:
    """Whether a text block already holds the structured content as JSON (as the spec asks servers to send it)."""
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            try:
                if json.loads(block.text) == result.structured_content:
                    return True
            except ValueError:
                continue
    return False


def dump_json(value: Any) -> None:
    """Plain JSON on stdout (no colour, no wrapping), for other programs."""
    sys.stdout.write(json_text(json.dumps(value, indent=2, ensure_ascii=False)) + "\n")
    sys.stdout.flush()


def tools_table(title: str, tools: Sequence[tuple[str, mcp_types.Tool]]) -> Table:
    """A table of tools (each under the name to show): name, hints, first line of the description; ``title`` and
    every cell are text, never markup."""
    from rich.table import Table

    table = Table(title=plain(title), title_justify="left")
    table.add_column("name", style="bold cyan", no_wrap=True)
    table.add_column("hints")
    table.add_column("description")
    for name, tool in tools:
        description = (tool.description or "").strip().splitlines()
        table.add_row(plain(name), ", ".join(tool_hints(tool)), plain(description[0] if description else ""))
    return table


def tool_hints(tool: mcp_types.Tool) -> list[str]:
    """The annotations of a tool that are set to true, as short words."""
    annotations = tool.annotations
    if annotations is None:
        return []
    flags = (
        (annotations.read_only_hint, "read-only"),
        (annotations.idempotent_hint, "idempotent"),
        (annotations.destructive_hint, "destructive"),
        (annotations.open_world_hint, "open-world"),
    )
    return [word for flag, word in flags if flag]
