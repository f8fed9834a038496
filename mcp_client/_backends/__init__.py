"""The one place that tells asyncio from trio, chosen once per connection (httpcore's ``_backends/``, anyio's
``get_async_backend``).

:mod:`.base` holds what a backend offers (:class:`~.base.Backend`, the :class:`~.base.Waiter` protocol);
:mod:`.asyncio` and :mod:`.trio` are one module per backend, each with its waiter and its
:class:`~.base.Backend`; :mod:`.auto` is the one chooser, :func:`~.auto.current_backend`. Nothing else in the
package sniffs the backend.
"""
