"""Which scopes to request (MCP "Scope Selection Strategy", SEP-835/SEP-2350, SEP-2207 for ``offline_access``).

1. the ``scope`` of the server's challenge (``WWW-Authenticate``), if it has one; else
2. every scope of the protected resource metadata's ``scopes_supported``, if it lists any; else
3. the host's own default scopes, if it gave some; else
4. none: the ``scope`` parameter is omitted.

On re-authorization (step-up) the scopes asked before are kept and the challenged ones added (the union).
``offline_access`` is added, when the host wants refresh tokens, only if the authorization server lists it in its
``scopes_supported``, and never alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["OFFLINE_ACCESS", "select_scopes", "union"]

OFFLINE_ACCESS = "offline_access"


def union(*groups: Iterable[str] | None) -> tuple[str, ...]:
    """The scopes of every group, first occurrence order, without duplicates."""
    out: dict[str, None] = {}
    for group in groups:
        for scope in group or ():
            out.setdefault(scope, None)
    return tuple(out)


def select_scopes(
    *,
    challenged: Sequence[str] | None,
    resource_scopes: Sequence[str] | None,
    default: Sequence[str] | None = None,
    server_scopes: Sequence[str] | None = None,
    offline_access: bool = True,
    previous: Sequence[str] | None = None,
) -> tuple[str, ...] | None:
    """The scopes to request, or None to omit the ``scope`` parameter.

    Args:
        challenged: The challenge's ``scope`` (None when absent).
        resource_scopes: The protected resource metadata's ``scopes_supported``.
        default: The host's scopes, used when the server names none.
        server_scopes: The authorization server metadata's ``scopes_supported`` (for ``offline_access``).
        offline_access: Whether the host wants a refresh token.
        previous: The scopes requested for the token being replaced (step-up keeps them).
    """
    if challenged:
        chosen = union(challenged)
    elif resource_scopes:
        chosen = union(resource_scopes)
    else:
        chosen = union(default)
    chosen = union(previous, chosen)
    if not chosen:
        return None
    if offline_access and server_scopes and OFFLINE_ACCESS in server_scopes:
        chosen = union(chosen, [OFFLINE_ACCESS])
    return chosen
