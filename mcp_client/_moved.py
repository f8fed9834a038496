"""The old import paths of modules that moved into a folder: each still imports, as its new module, with a warning.

The layout of one folder per layer (docs/design.md, "Layers") moved modules such as ``mcp_client.registry`` into
their layer's folder (``mcp_client.policy.registry``). A program written against the old path goes on working:
``import mcp_client`` puts one finder on :data:`sys.meta_path` that answers only for the paths of :data:`MOVED`,
with the new module itself (the same object, so its names, classes and state are the ones the package uses) and
a :class:`DeprecationWarning` that names the new path. Every other import passes it by with one dictionary miss.

The folders that replaced a module of the same name (``mcp_client.client``, ``mcp_client.session``,
``mcp_client.cache``, ``mcp_client.config``, ``mcp_client.sync``, ``mcp_client.transports.stdio``) are faces of
their own and need nothing here.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType
from typing import Any

__all__ = ["MOVED", "install"]

MOVED: dict[str, str] = {
    "mcp_client.cache_partition": "mcp_client.cache.partition",
    "mcp_client.cache_store": "mcp_client.cache.store",
    "mcp_client.cached_requests": "mcp_client.cache.requests",
    "mcp_client.call": "mcp_client.client.call",
    "mcp_client.calls.slots": "mcp_client.calls.in_flight_limit",
    "mcp_client.completion": "mcp_client.protocol.completion",
    "mcp_client.config_env": "mcp_client.config.env",
    "mcp_client.config_transports": "mcp_client.config.transports",
    "mcp_client.features": "mcp_client.client.features",
    "mcp_client.handlers": "mcp_client.session.handlers",
    "mcp_client.inflight": "mcp_client.session.inflight",
    "mcp_client.logs": "mcp_client.protocol.logs",
    "mcp_client.output_schema": "mcp_client.client.output_schema",
    "mcp_client.pinning": "mcp_client.client.pins",
    "mcp_client.progress": "mcp_client.calls.progress",
    "mcp_client.registry": "mcp_client.policy.registry",
    "mcp_client.server_requests": "mcp_client.session.server_requests",
    "mcp_client.subscriptions.listening": "mcp_client.client.listen",
    "mcp_client.subscriptions.policy": "mcp_client.policy.listen",
    "mcp_client.supervisor": "mcp_client.client.supervisor",
    "mcp_client.tasks": "mcp_client.protocol.tasks",
    "mcp_client.tasks.client_side": "mcp_client.client.tasks",
    "mcp_client.tasks.model": "mcp_client.protocol.tasks",
    "mcp_client.tasks.reference": "mcp_client.client.task_reference",
    "mcp_client.tool_pins": "mcp_client.client.tool_pins",
}
"""Old module path -> the module it is now (the public paths of the release before the layout)."""

_OLD_PACKAGES = frozenset({"mcp_client.tasks"})
"""Old paths that were packages: their old submodules are found through them, so each is a small package of its
own whose names are the new module's."""


class _MovedLoader:
    """Loads an old path as the module it moved to (an import loader; not an ``importlib.abc.Loader`` subclass,
    whose module imports ``importlib.resources`` and with it ``tempfile`` and ``shutil``: 13 ms of every import)."""

    def __init__(self, new: str) -> None:
        self._new = new

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        warnings.warn(f"{spec.name} moved to {self._new}; import it from there", DeprecationWarning, stacklevel=2)
        new = importlib.import_module(self._new)
        if spec.name not in _OLD_PACKAGES:
            return new
        package = ModuleType(spec.name, new.__doc__)
        package.__path__ = []  # (its old submodules come through this finder)
        package.__getattr__ = lambda name: getattr(new, name)  # type: ignore[method-assign]
        return package

    def exec_module(self, module: ModuleType) -> None:
        """(The module is the new one, already run.)"""


class _MovedFinder:
    """Finds the paths of :data:`MOVED`, and nothing else."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        new = MOVED.get(fullname)
        if new is None:
            return None
        loader: Any = _MovedLoader(new)  # (a loader by its methods, see _MovedLoader)
        return importlib.machinery.ModuleSpec(fullname, loader, is_package=fullname in _OLD_PACKAGES)


def install() -> None:
    """Put the finder on :data:`sys.meta_path`, once (after the ordinary finders: a real module always wins)."""
    if not any(isinstance(finder, _MovedFinder) for finder in sys.meta_path):
        sys.meta_path.append(_MovedFinder())
