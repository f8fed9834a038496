"""The payload codecs of the kill tests, and where they SIGKILL their own worker.

* ``AwaitingCodec``: what a production codec that calls a key service looks like to the SDK: every encode and
  decode awaits (50 ms) before it returns. Payloads are wrapped (base64 of the serialised payload), so nothing of
  them is readable without it.
* ``InstantCodec``: the same wrapping with no await: a codec that returns at once (the SDK's own beats then leave
  without delay, as with no codec at all).

Both can kill the worker they run in at a point of a call the test names in the tool's ``tag``: a tag that starts
with ``before-`` kills the worker while the ``written`` checkpoint is encoded (before the request could leave),
``after-`` while the activity's result is encoded (the tool ran; Temporal does not know yet). The decode of the
activity's input arms the kill (a worker of the kill tests runs one activity at a time); a marker file per tag makes
it happen once, so the next attempt, on another worker, runs on.
"""

from __future__ import annotations

import base64
import json
import os
import re
import signal
from collections.abc import Sequence
from pathlib import Path

import anyio
from temporalio.api.common.v1 import Payload
from temporalio.converter import PayloadCodec

KILL_DIR_ENV = "MCP_TEST_KILL_DIR"
_ENCODING = b"binary/mcp-test-codec"
_TAG = re.compile(rb'"tag": ?"((?:before|after)-[0-9a-f]+)"')


class InstantCodec(PayloadCodec):
    """Wraps every payload; returns at once."""

    delay = 0.0

    def __init__(self) -> None:
        self._armed: tuple[str, str] | None = None
        kill_dir = os.environ.get(KILL_DIR_ENV)
        self._kill_dir = Path(kill_dir) if kill_dir else None

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        if self.delay:
            await anyio.sleep(self.delay)
        encoded = []
        for payload in payloads:
            self._maybe_die(payload.data)
            data = base64.b64encode(payload.SerializeToString())
            encoded.append(Payload(metadata={"encoding": _ENCODING}, data=data))
        return encoded

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        if self.delay:
            await anyio.sleep(self.delay)
        decoded = []
        for payload in payloads:
            if payload.metadata.get("encoding") != _ENCODING:
                decoded.append(payload)
                continue
            inner = Payload()
            inner.ParseFromString(base64.b64decode(payload.data))
            self._maybe_arm(inner.data)
            decoded.append(inner)
        return decoded

    def _maybe_arm(self, data: bytes) -> None:
        """An activity's input (``ToolCallInput`` has ``name``; the workflow's own input has ``tool``) arms the kill."""
        found = _TAG.search(data)
        if found is not None and b'"name"' in data and self._kill_dir is not None:
            tag = found.group(1).decode()
            self._armed = (tag.split("-", 1)[0], tag)

    def _maybe_die(self, data: bytes) -> None:
        if self._armed is None or self._kill_dir is None:
            return
        point, tag = self._armed
        try:
            value = json.loads(data)
        except ValueError:
            return
        due = (point == "before" and value == {"phase": "written"}) or (
            point == "after" and isinstance(value, dict) and f"{tag} done" in json.dumps(value)
        )
        marker = self._kill_dir / tag
        if due and not marker.exists():
            marker.touch()
            os.kill(os.getpid(), signal.SIGKILL)


class AwaitingCodec(InstantCodec):
    """Wraps every payload, awaiting 50 ms first, as a codec with a key service does."""

    delay = 0.05


CODECS: dict[str, type[InstantCodec]] = {"instant": InstantCodec, "awaiting": AwaitingCodec}
