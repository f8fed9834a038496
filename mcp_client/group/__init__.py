"""Many servers at once: :class:`ClientGroup` (:mod:`.group`), each server's life (:mod:`.server`, :mod:`.life`),
lazy start (:mod:`.lazy`), the lazy servers' tool snapshots on disk (:mod:`.snapshot`) and the checks of what a
group is given (:mod:`.arguments`)."""

from mcp_client.group.group import ClientGroup, GroupEventHook, StartMode, split_tool_name
from mcp_client.group.server import ServerStatus

__all__ = ["ClientGroup", "GroupEventHook", "ServerStatus", "StartMode", "split_tool_name"]
