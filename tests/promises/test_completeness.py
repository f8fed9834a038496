"""The matrix lists every way in: a public entry point or a transport that the package has and the matrix does not
name fails here, so a new room cannot land without joining the matrix (tests/promises/matrix.py).

The lists are derived from the package itself: the public methods of ``Client`` and ``ClientGroup`` that make a tool
call (they return a ``CallToolResult``, or a handle on one), the transport factories the package exports, the
engines ``http()`` may send through, the integration modules, the blocking facade's classes and the CLI's commands.
"""

from __future__ import annotations

import inspect
import pkgutil
from typing import Any, get_args

import pytest

import mcp_client
import mcp_client.integrations
import mcp_client.sync.client
from mcp_client import Client, ClientGroup, Transport
from mcp_client.cli.parser import build_parser
from mcp_client.transports.http._transport import EngineKind
from tests.promises.matrix import (
    CLI_COMMANDS,
    CLIENT_METHODS,
    ENTRIES,
    EXCLUDED,
    FAULTS,
    GROUP_METHODS,
    HTTP_ENGINES,
    TRANSPORT_FACTORIES,
    TRANSPORTS,
    XFAILS,
    cells,
    excluded,
    small_size,
)


def _tool_call_methods(cls: type) -> set[str]:
    """Public methods of ``cls`` whose result is a tool's (``CallToolResult``, or ``Call[CallToolResult]``)."""
    found = set()
    for name, member in inspect.getmembers(cls, callable):
        if name.startswith("_"):
            continue
        returns = inspect.signature(inspect.unwrap(member)).return_annotation
        if "CallToolResult" in str(returns):
            found.add(name)
    return found


def test_every_client_method_that_calls_a_tool_has_its_entry() -> None:
    assert _tool_call_methods(Client) == set(CLIENT_METHODS)
    assert set(CLIENT_METHODS.values()) <= set(ENTRIES)


def test_every_group_method_that_calls_a_tool_has_its_entry() -> None:
    assert _tool_call_methods(ClientGroup) == set(GROUP_METHODS)
    assert set(GROUP_METHODS.values()) <= set(ENTRIES)


def test_the_blocking_facade_has_its_entry() -> None:
    facade = {name for name, value in vars(mcp_client.sync.client).items() if inspect.isclass(value)}
    assert {"Client", "ClientGroup"} <= facade
    # (generated from the async classes: the same methods, each one blocking call through the same portal)
    assert _tool_call_methods(mcp_client.sync.client.Client) == set(CLIENT_METHODS)
    assert _tool_call_methods(mcp_client.sync.client.ClientGroup) == set(GROUP_METHODS)
    assert "sync" in ENTRIES


def test_every_transport_factory_has_its_columns() -> None:
    factories = set()
    exported: list[str] = getattr(mcp_client, "__all__")  # noqa: B009 (a lazy face: the type checker sees no __all__)
    for name in exported:
        value = getattr(mcp_client, name)
        if inspect.isfunction(value):
            annotation = inspect.signature(value).return_annotation  # (a name: the module's annotations are lazy)
            returns = value.__globals__.get(annotation) if isinstance(annotation, str) else annotation
            if inspect.isclass(returns) and issubclass(returns, Transport):
                factories.add(name)
    assert factories == set(TRANSPORT_FACTORIES)
    assert {column for columns in TRANSPORT_FACTORIES.values() for column in columns} == set(TRANSPORTS)


def test_every_http_engine_has_its_column() -> None:
    assert set(get_args(EngineKind)) == set(HTTP_ENGINES)
    assert set(HTTP_ENGINES.values()) <= set(TRANSPORTS)


def test_every_integration_is_an_entry() -> None:
    modules = {
        module.name
        for module in pkgutil.iter_modules(mcp_client.integrations.__path__)
        if not module.name.startswith("_")
    }
    assert modules <= set(ENTRIES), modules - set(ENTRIES)


def test_every_cli_command_is_listed() -> None:
    parser = build_parser(with_command=True)
    subparsers: Any = next(action for action in parser._actions if action.dest == "subcommand")
    assert set(subparsers.choices) == set(CLI_COMMANDS)
    assert {entry for entry in CLI_COMMANDS.values() if entry is not None} <= set(ENTRIES)


def test_every_rule_names_real_cells_and_says_why() -> None:
    for rule in (*EXCLUDED, *XFAILS):
        assert rule.reason, rule
        assert set(rule.entries) <= set(ENTRIES), rule
        assert set(rule.transports) <= set(TRANSPORTS), rule
        assert set(rule.faults) <= set(FAULTS), rule
    for rule in XFAILS:
        assert rule.reason.startswith("issue 29 item "), rule


@pytest.mark.parametrize("entry", ENTRIES)
def test_every_entry_runs_somewhere_or_says_why_not(entry: str) -> None:
    applicable = [cell for cell in cells() if cell[0] == entry and excluded(*cell) is None]
    if not applicable:
        reasons = {excluded(*cell).reason for cell in cells() if cell[0] == entry}  # type: ignore[union-attr]
        assert all(reasons), entry
        return
    assert any(small_size(*cell) for cell in applicable), f"{entry} has cells, and none in the small size"
