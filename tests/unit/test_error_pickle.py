"""Every error of the package survives pickling and copying with its type, text and facts (red team of the faces,
which moved the errors' modules): an error crosses processes (``multiprocessing``, a process pool, a task queue)
and is copied by frameworks. Most subclasses take keyword-only arguments (``written=``, ``code=``, ``task_id=``)
that an exception's ``args`` do not hold, so the default ``cls(*args)`` failed with a TypeError at unpickling."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable

import pytest

from mcp_client.errors import MCPClientError, ServerError, TransportError
from tests.unit.test_error_tree import _every_module, _subclasses

_every_module()
ERRORS = sorted(_subclasses(MCPClientError) | {MCPClientError}, key=lambda cls: (cls.__module__, cls.__qualname__))


def _made(cls: type[MCPClientError]) -> MCPClientError:
    """An instance as its own __init__ leaves it, whatever that takes: the base's facts, then each class's own."""
    error = cls.__new__(cls, "boom")
    MCPClientError.__init__(error, "boom", method="tools/call", request_ids=(1, 2), elapsed=0.5)
    error.may_have_run = True
    error.tool = "reindex"
    facts = {"written": True, "code": -32000, "task_id": "t-1", "data": {"k": [1]}}
    vars(error).update({k: v for k, v in facts.items() if not isinstance(getattr(cls, k, None), property)})
    return error


COPIES: dict[str, Callable[[MCPClientError], MCPClientError]] = {
    "pickle": lambda error: pickle.loads(pickle.dumps(error)),
    "copy": copy.copy,
    "deepcopy": copy.deepcopy,
}


@pytest.mark.parametrize("how", sorted(COPIES))
@pytest.mark.parametrize("cls", ERRORS, ids=lambda cls: cls.__qualname__)
def test_an_error_survives_pickle_and_copy(cls: type[MCPClientError], how: str) -> None:
    error = _made(cls)
    again = COPIES[how](error)
    assert type(again) is cls
    assert str(again) == str(error)
    assert again.args == error.args
    assert vars(again) == vars(error)
    assert again.for_model == error.for_model


def test_a_real_server_error_and_transport_error_round_trip() -> None:
    server = pickle.loads(
        pickle.dumps(ServerError.from_error({"code": -32602, "message": "bad", "data": {"field": "q"}}))
    )
    assert (type(server).__name__, server.code, server.data) == ("InvalidParams", -32602, {"field": "q"})
    transport = pickle.loads(pickle.dumps(TransportError("dropped", written=False, status_code=503)))
    assert (transport.written, transport.status_code, transport.may_have_run) == (False, 503, None)
