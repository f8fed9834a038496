"""The promise matrix: every public way to make a call x every transport x the faults (:mod:`tests.promises.matrix`),
each cell judged on every promise it can be.

Each cell asserts: a typed error (an :class:`~mcp_client.MCPClientError`, or the caller's own cancellation); "may
have run" whenever the peer's own count says the request arrived; done by the maximum plus a margin (the fake clock
where the cell allows: in memory and HTTP+SSE, but for the facade, the CLI and the adapters, whose own loops and
threads need a real one); nothing left behind (tasks, fds, processes, in-flight slots); no secret of the configured
endpoint, and no raw control character, in any error text, ``for_model``, log record, text for a model or CLI output.

The small size runs by default; ``MCP_CLIENT_PROMISES=full`` runs every cell (docs/reliability.md records both).
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest
from temporalio.exceptions import ApplicationError

from mcp_client import ConnectError, MCPClientError, RequestCancelled, TransportError
from mcp_client.cli.outcome import EXIT_CODES, EXIT_OK
from mcp_client.outcomes import Ran, may_have_run
from tests.conftest import ASYNCIO, TRIO_FAKE_CLOCK
from tests.promises import cells as run
from tests.promises.matrix import ADAPTERS, cells, excluded, full_size, small_size, xfailed

pytestmark = pytest.mark.anyio

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""Raw control characters (C0 but tab and newline, DEL, C1): what must never reach a terminal from a server."""
_FAKE_CLOCK_TRANSPORTS = ("memory", "sse")
_REAL_CLOCK_ENTRIES = ("sync", "cli", "temporal", *ADAPTERS)


def _subclasses(cls: type) -> set[type]:
    found = {cls}
    subclasses: list[type] = cls.__subclasses__()
    for sub in subclasses:
        found |= _subclasses(sub)
    return found


_TYPED_NAMES = {cls.__name__ for cls in _subclasses(MCPClientError)} | {"InvalidTaskReference"}
"""The type names of a Temporal activity's typed failures (every MCPClientError, and a reference that cannot be
resumed here)."""


def _backend(entry: str, transport: str) -> str:
    fake = transport in _FAKE_CLOCK_TRANSPORTS and entry not in _REAL_CLOCK_ENTRIES
    return TRIO_FAKE_CLOCK if fake else ASYNCIO


def _params() -> list[object]:
    params: list[object] = []
    for entry, transport, fault in cells():
        if excluded(entry, transport, fault) is not None:
            continue
        if not full_size() and not small_size(entry, transport, fault):
            continue
        marks = []
        waiting = xfailed(entry, transport, fault)
        if waiting is not None:
            marks.append(pytest.mark.xfail(strict=True, reason=waiting.reason))
        backend = _backend(entry, transport)
        params.append(pytest.param(entry, transport, fault, backend, marks=marks, id=f"{entry}-{transport}-{fault}"))
    return params


@pytest.mark.parametrize(("entry", "transport", "fault", "anyio_backend"), _params(), indirect=["anyio_backend"])
async def test_cell(
    entry: str, transport: str, fault: str, anyio_backend: object, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    fake_clock = _backend(entry, transport) == TRIO_FAKE_CLOCK
    tasks, fds, children = run.running_tasks(), run.open_fds(), run.child_processes()

    seen = await run.run_cell(entry, transport, fault, tmp_path, fake_clock=fake_clock)

    # Typed: an MCPClientError, or the caller's own cancellation.
    spec = run.FAULT_SPECS[fault]
    if spec.drops_before_write:
        _check_never_sent_or_sent_once(entry, seen)
    if spec.drops_before_write and _succeeded(entry, seen):
        pass  # (a re-send the retry policy allows: checked above)
    elif entry == "cli":
        assert seen.exit_code in {code for _, code in EXIT_CODES} | {1}, seen.texts
        assert not any("Traceback" in text for text in seen.texts), seen.texts
    elif entry == "temporal":  # the failure Temporal records: typed by its type's name
        assert isinstance(seen.error, ApplicationError), f"untyped: {seen.error!r}"
        assert seen.error.type in _TYPED_NAMES, seen.error.type
        (detail,) = seen.error.details
        if seen.arrived and not spec.refused:
            assert detail["may_have_run"] != "no", f"arrived {seen.arrived}x, yet: {seen.error.message}"
    elif spec.cancel_on_arrival:
        assert seen.cancelled_by_caller or isinstance(seen.error, RequestCancelled), repr(seen.error)
    else:
        assert isinstance(seen.error, MCPClientError), f"untyped: {seen.error!r}"
    # Truthful: the peer counted the request, so it may have run (unless the server refused it unprocessed).
    if isinstance(seen.error, MCPClientError) and seen.arrived and not spec.refused:
        assert may_have_run(seen.error) is not Ran.NO, f"arrived {seen.arrived}x, yet: {seen.error.for_model}"
    # Bounded: done by the maximum plus a margin.
    assert seen.elapsed <= run.bound(fault, fake_clock=fake_clock), seen.elapsed
    # Nothing left: tasks, fds, processes, slots.
    assert seen.slots_in_flight == 0
    assert run.child_processes() == children
    assert run.running_tasks() <= tasks
    after = run.open_fds()
    if fds is not None and after is not None and entry not in ("sync", "cli"):  # (their threads' loops keep theirs)
        assert after <= fds
    # Secrets stay put, and the terminal is the host's.
    if entry != "cli":  # (the CLI's client is its own: it takes no tracer of the test's)
        assert seen.spans.get_finished_spans(), "no span to read"
    texts = [*_error_texts(seen.error), *seen.texts, *_log_texts(caplog), *_span_texts(seen)]
    for text in texts:
        assert not any(secret in text for secret in run.SECRETS), text
        assert not _CONTROL.search(text), repr(text)


def _succeeded(entry: str, seen: run.Seen) -> bool:
    if entry == "cli":
        return seen.exit_code == EXIT_OK
    return seen.error is None and not seen.cancelled_by_caller


def _check_never_sent_or_sent_once(entry: str, seen: run.Seen) -> None:
    """A drop before the write: the call fails as never sent ("no", and no execution on the server), or a re-send
    the retry policy allowed (a request that surely never left, with a fresh id) ran it exactly once."""
    if _succeeded(entry, seen):
        assert seen.arrived == 1, f"the call succeeded, and ran {seen.arrived}x"
        return
    assert seen.arrived == 0, f"dropped before the write, yet it ran {seen.arrived}x: {seen.error!r}"
    if entry == "cli":
        assert seen.exit_code in (EXIT_CONNECT, EXIT_TRANSPORT), (seen.exit_code, seen.texts)
    elif entry == "temporal":
        assert isinstance(seen.error, ApplicationError), f"untyped: {seen.error!r}"
        (detail,) = seen.error.details
        assert detail["may_have_run"] == "no", seen.error.message
    else:
        assert isinstance(seen.error, MCPClientError), f"untyped: {seen.error!r}"
        assert may_have_run(seen.error) is Ran.NO, seen.error.for_model


EXIT_CONNECT, EXIT_TRANSPORT = dict(EXIT_CODES)[ConnectError], dict(EXIT_CODES)[TransportError]


def _error_texts(error: BaseException | None) -> list[str]:
    texts: list[str] = []
    while error is not None and len(texts) < 20:
        texts += [str(error), repr(error)]
        if isinstance(error, MCPClientError):
            texts.append(error.for_model)
        error = error.__cause__ or error.__context__
    return texts


def _span_texts(seen: run.Seen) -> list[str]:
    """Every text of the entry's spans: names, status descriptions, attributes, events and their attributes."""
    texts: list[str] = []
    for span in seen.spans.get_finished_spans():
        texts += [span.name, span.status.description or ""]
        texts += [str(value) for value in (span.attributes or {}).values()]
        for event in span.events:
            texts += [event.name, *(str(value) for value in (event.attributes or {}).values())]
    return texts


def _log_texts(caplog: pytest.LogCaptureFixture) -> list[str]:
    """What the package logged (the scripted peer's own records are the server's, not the client's)."""
    return [
        record.getMessage() + (record.exc_text or "")
        for record in caplog.records
        if record.name.startswith("mcp_client") and not record.name.startswith("mcp_client.testing")
    ]
