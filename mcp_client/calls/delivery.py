"""How a call's progress reaches its consumers: one choice, made when the call starts.

A call may have an iterator (the handle's ``call.progress()``, a :class:`~mcp_client.calls.progress.ProgressStream`) and
a callback. The reader hands every accepted update to one sink; this module builds it:

* a plain (sync) callback on asyncio, without a minimum interval, runs once per batch of incoming messages with no
  task behind it (:class:`~mcp_client.calls.progress.SoonCallback`);
* any other callback (async, paced, or on trio) gets a mailbox of its own and a :class:`CallbackPump` that the
  runner runs in a task for as long as the call lives, and lets drain, after a success, until the call's hard
  deadline at the latest;
* the iterator, when there is one, is offered every update too (:class:`~mcp_client.calls.progress.FanOut`).

May touch the progress sinks and the batch hook of the session; nothing else.
"""

from __future__ import annotations

from mcp_client.calls.progress import CallbackPump, FanOut, ProgressCallback, ProgressSink, ProgressStream, SoonCallback
from mcp_client.session.batch import AfterBatch

__all__ = ["progress_delivery"]


def progress_delivery(
    on_progress: ProgressCallback,
    iterator: ProgressSink | None,
    min_interval: float | None,
    after_batch: AfterBatch,
) -> tuple[ProgressSink, CallbackPump | None]:
    """The sink for a call with the callback ``on_progress`` (and ``iterator``, if any), and the pump to run for
    the callback, or ``None`` when it needs none."""
    soon = SoonCallback.for_callback(on_progress, min_interval, after_batch)
    if soon is not None:
        return (soon if iterator is None else FanOut(iterator, soon)), None
    mailbox = ProgressStream(min_interval)
    pump = CallbackPump(mailbox, on_progress)
    return (mailbox if iterator is None else FanOut(iterator, mailbox)), pump
